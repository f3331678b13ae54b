"""Check the generated stubs against the built extension with mypy's stubtest.

Usage: python tools/stubtest.py [extra stubtest options]      (what `make stubtest` runs)

It runs ``python -m mypy.stubtest deep_gemm`` from the repository root, which checks the
package and every submodule (less EXCLUDED below), ``deep_gemm._C`` included.  (Naming ``deep_gemm._C`` as well
would hand mypy the same file twice, and it stops with "Duplicate module named".)

Guards: ops under a guard exist only in builds where it holds, and both the shim and the
stub put them under ``if _GUARD_<NAME>:`` (Note [Guards in the stub], codegen/outputs.py).
This script reads each flag's value from the built ``deep_gemm._C`` and passes mypy a
config with ``always_true`` / ``always_false`` for them, so stubtest sees the stub this
build should have.  Known differences go in stubtest_allowlist.txt, one reason per entry.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ALLOWLIST = ROOT / "stubtest_allowlist.txt"


def guard_flags() -> dict[str, bool]:
    """The ``_GUARD_*`` flags of the built shim, by name."""
    sys.path.insert(0, str(ROOT))
    import deep_gemm._C as shim  # imported here: it needs ROOT on sys.path first

    return {name: bool(value) for name, value in vars(shim).items() if name.startswith("_GUARD_")}


# Modules stubtest leaves out: deep_gemm.legacy's Triton kernels import triton, which CPU-only
# environments lack (the package loads them by name on the first CUDA call, so nothing else imports them).
EXCLUDED = [r"deep_gemm/legacy/_kernels\.py$"]


def mypy_config(flags: dict[str, bool]) -> str:
    lines = ["[mypy]", f"exclude = {'|'.join(EXCLUDED)}"]
    for key, value in (("always_true", True), ("always_false", False)):
        names = sorted(name for name, on in flags.items() if on is value)
        if names:
            lines.append(f"{key} = {', '.join(names)}")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    flags = guard_flags()
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "stubtest.ini"
        config.write_text(mypy_config(flags))
        cmd = [sys.executable, "-m", "mypy.stubtest", "deep_gemm", "--mypy-config-file", str(config)]
        cmd += ["--allowlist", str(ALLOWLIST.relative_to(ROOT)), *argv]
        shown = ", ".join(f"{name}={on}" for name, on in sorted(flags.items())) or "none"
        print(f"stubtest (guards in this build: {shown}): {' '.join(cmd[1:])}", flush=True)
        return subprocess.run(cmd, cwd=ROOT, check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
