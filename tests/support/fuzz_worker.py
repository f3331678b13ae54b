"""The child process of tests/ops/test_fuzz.py: runs fuzz cases one after another.

Protocol: the parent writes ``<op> <index>`` lines on stdin; for each, the
worker builds the case (tests/support/fuzz_cases.py), runs it and answers one JSON
line.  The first line it writes is ``{"ready": true}``.  Answers go to a
private copy of the original stdout; fd 1 is pointed at stderr so that
anything the extension prints cannot corrupt the protocol.

Before the first case the worker caps its address space (RLIMIT_AS) a few GiB
above what importing torch took, so a case that asks for a huge allocation
fails with an exception instead of taking the machine; it also disables core
files.  A crash (signal) or a hang is the parent's to detect.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
import time
import traceback
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

import deep_gemm  # noqa: E402
from tests.support.fuzz_cases import Case, make_case  # noqa: E402
from tests.support.manifest import OPS  # noqa: E402
from tests.support.pt2_support import runtime_state_restored  # noqa: E402
from tests.support.samples import Sample, clone_args, load_all  # noqa: E402

HEADROOM = 3 << 30  # bytes of address space allowed beyond what the imports took

# Pseudo-ops that let tests/ops/test_fuzz.py check the harness itself: a crash, a hang, and an
# allocation (8 GiB, never touched) that only the address-space cap makes fail.
SELF_TESTS = {
    "__crash__": lambda: os.kill(os.getpid(), signal.SIGSEGV),
    "__hang__": lambda: time.sleep(3600),
    "__huge__": lambda: torch.empty(8 << 30, dtype=torch.uint8),
}


def _address_space() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return 0


def _cap_memory() -> None:
    limit = _address_space() + HEADROOM
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _snapshot(values: list[Any]) -> list[tuple[torch.Tensor, torch.Tensor]]:
    out = []
    for v in values:
        if isinstance(v, torch.Tensor) and v.layout == torch.strided and v.device.type != "meta":
            out.append((v, v.detach().clone()))
    return out


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.detach().view({1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])


def _unchanged(snap: list[tuple[torch.Tensor, torch.Tensor]]) -> bool:
    return all(torch.equal(_bits(t), _bits(before)) for t, before in snap)


def _close(got: torch.Tensor, want: torch.Tensor) -> str | None:
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"shape/dtype {tuple(got.shape)} {got.dtype} != {tuple(want.shape)} {want.dtype}"
    if not (got.dtype.is_floating_point or got.dtype.is_complex):
        return None if torch.equal(got, want) else "integer values differ"
    g, w = got.detach().to(torch.float64), want.detach().to(torch.float64)
    if not torch.equal(torch.isnan(g), torch.isnan(w)):
        return "NaN positions differ"
    g, w = torch.nan_to_num(g, posinf=1e300, neginf=-1e300), torch.nan_to_num(w, posinf=1e300, neginf=-1e300)
    scale = float(w.abs().max()) if w.numel() else 0.0
    err = float((g - w).abs().max()) if w.numel() else 0.0
    return None if err <= 1e-2 * scale + 1e-6 else f"max error {err:.3g} (scale {scale:.3g})"


def _call(op: str, entry: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    fn = getattr(torch.ops.deep_gemm, op).default if entry == "schema" else getattr(deep_gemm._C, op)
    return fn(*args, **kwargs)


def _reference(case: Case) -> tuple[Any, list[Any]]:
    """The seed sample's result (and its written tensors), for layout-only cases."""
    seed: Sample = clone_args(case.seed)
    out = getattr(torch.ops.deep_gemm, case.op).default(*seed.args, **seed.kwargs)
    names = OPS[case.op].schema.arg_names
    values = dict(zip(names, seed.args)) | seed.kwargs
    return out, [values.get(a.name) for a in OPS[case.op].schema.args if a.is_write]


def _flat(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _flat(v)]
    return [value]


def run_case(case: Case) -> dict[str, Any]:
    snap = _snapshot(case.written)
    try:
        out = _call(case.op, case.entry, case.args, case.kwargs)
    except Exception as exc:
        message = str(exc)
        return {
            "outcome": "exception",
            "type": type(exc).__name__,
            "message": message[:400],
            "named": case.op in message,
            "partial": not _unchanged(snap),
        }
    result: dict[str, Any] = {"outcome": "ok"}
    if case.layout_only:
        want_out, want_written = _reference(case)
        pairs = list(zip(_flat(out), _flat(want_out))) + list(zip(case.written, want_written))
        for got, want in pairs:
            if isinstance(want, torch.Tensor) and isinstance(got, torch.Tensor):
                problem = _close(got, want)
            else:
                problem = None if got == want else f"{got!r} != {want!r}"
            if problem:
                result["wrong"] = problem
                break
    return result


def main() -> None:
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    warnings.simplefilter("ignore")
    registry = load_all()
    seeds: dict[str, list[Sample]] = {}
    _cap_memory()
    protocol.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        op, index = line.split()
        if op in SELF_TESTS:
            try:
                SELF_TESTS[op]()
                result = {"outcome": "ok", "case": op}
            except Exception as exc:
                message = str(exc)[:400]
                result = {"outcome": "exception", "type": type(exc).__name__, "message": message}
                result |= {"named": True, "partial": False}  # not an op: nothing to name
            protocol.write(json.dumps(result) + "\n")
            continue
        try:
            if op not in seeds:
                seeds[op] = registry[op](torch.device("cpu")) if op in registry else []
            if not seeds[op]:
                raise LookupError(f"{op} has no samples to seed the fuzzer (tests/support/samples/<family>.py)")
            case = make_case(op, int(index), seeds[op])
            with runtime_state_restored():  # a fuzzed setter must not invalidate the next op's seeds
                result = run_case(case)
            result["case"] = case.describe()
        except Exception:
            result = {"outcome": "harness-error", "message": traceback.format_exc()[-2000:]}
        protocol.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
