"""The pybind11 baseline of benchmarks/overhead.py, generated from ops.yaml.

Every op of the manifest is bound with pybind11 straight onto its C++
implementation (the function ``impl`` names, from ``csrc/apis/*.hpp``), taking
the implementation's natural types: the same ``std::pair`` / ``std::tuple`` /
``std::optional`` / ``std::vector`` the generated TORCH_LIBRARY wrappers hand it
(``codegen.conversions``), converted by pybind11's stl casters instead.  The
Python parameters are the legacy shim's (``codegen.spelling.python.params``):
same names, same packs, same defaults, so the two are called with the same
arguments.  Unlike the old pybind11 module every parameter has a name, so the
baseline can also be called with keyword arguments.

The module is built with ``torch.utils.cpp_extension.load`` into
``build/bench`` (pybind11 comes from torch's own headers) and is never part of
the product.  ``python benchmarks/baseline.py`` only generates and builds it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import ModuleType

import jinja2

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from codegen.conversions import PACK_NATURAL, conversion  # noqa: E402
from codegen.model import Manifest, Op  # noqa: E402
from codegen.outputs import HEADER  # noqa: E402
from codegen.pipeline import load_manifest  # noqa: E402
from codegen.spelling.cpp import cpp_string, guard_lines  # noqa: E402
from codegen.spelling.python import PyParam, params  # noqa: E402

NAME = "deep_gemm_pybind_baseline"
BUILD_DIR = ROOT / "build" / "bench"
TEMPLATES = Path(__file__).resolve().parent / "templates"
# Dispatch keys whose implementation the baseline binds, most preferred first.
IMPL_PREFERENCE = ("CPU", "CompositeExplicitAutograd", "CUDA", "Meta")
_CPP_KEYWORDS = frozenset({"default", "delete", "new", "operator", "register", "template", "this", "class", "union"})


def _cpp_name(name: str) -> str:
    return name + "_" if name in _CPP_KEYWORDS else name


def natural_type(op: Op, p: PyParam) -> str:
    """The C++ type the implementation receives for legacy parameter ``p``."""
    if p.is_pack:
        return PACK_NATURAL[p.members[1].type.optional]
    return conversion(p.members[0].type).natural


def impl_function(op: Op) -> str:
    key = next((k for k in IMPL_PREFERENCE if k in op.impl), next(iter(op.impl)))
    fn = op.impl[key]
    return fn if fn.startswith("::") else "::" + fn


def py_arg(p: PyParam) -> str:
    text = f"py::arg({cpp_string(p.name)})"
    if p.default is None:
        return text
    if p.default == "None":
        return f"{text} = py::none()"
    return f"{text} = py_default({cpp_string(p.default)})"


def op_lines(manifest: Manifest, op: Op) -> list[str]:
    """``m.def`` of one op (and its aliases), wrapped in the op's guard."""
    ps = params(op)
    decls = ", ".join(f"const {natural_type(op, p)}& {_cpp_name(p.name)}" for p in ps)
    call = f"{impl_function(op)}(" + ", ".join(_cpp_name(p.name) for p in ps) + ")"
    extras: list[str] = []
    for i, p in enumerate(ps):
        if p.kind == "kwonly" and (i == 0 or ps[i - 1].kind != "kwonly"):
            extras.append("py::kw_only()")
        extras.append(py_arg(p))
    body = [
        f"  m.def({cpp_string(op.name)},",
        f"        []({decls}) {{",
        f"          const deep_gemm::OpScope scope({cpp_string(op.name)});",
        f"          return {call};",
        "        }" + "".join(f",\n        {e}" for e in extras) + ");",
    ]
    body += [f"  m.attr({cpp_string(a)}) = m.attr({cpp_string(op.name)});" for a in op.aliases]
    return guard_lines(manifest, op.guard, body)


def render(manifest: Manifest) -> str:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    headers = list(dict.fromkeys(h.removeprefix("csrc/") for fam in manifest.families for h in fam.headers))
    blocks = [op_lines(manifest, op) for op in manifest.ops]
    return env.get_template("pybind_baseline.cpp.j2").render(
        header_comment=HEADER.replace("ops.yaml by python -m codegen", "ops.yaml by benchmarks/baseline.py"),
        headers=headers,
        blocks=blocks,
    )


def _with_cuda() -> bool:
    import torch
    from torch.utils.cpp_extension import CUDA_HOME

    return os.environ.get("DG_FORCE_CPU") != "1" and torch.version.cuda is not None and CUDA_HOME is not None


def build(manifest: Manifest | None = None, verbose: bool = False) -> ModuleType:
    """Generate ``build/bench/pybind_baseline.cpp`` and load (building if needed) the module."""
    import torch.utils.cpp_extension as ext

    manifest = manifest or load_manifest(ROOT / "ops.yaml", cache_root=ROOT)
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    source = BUILD_DIR / "pybind_baseline.cpp"
    text = render(manifest)
    if not source.exists() or source.read_text(encoding="utf-8") != text:
        source.write_text(text, encoding="utf-8")
    sources = [str(source)]
    cflags = ["-O2"]
    kwargs: dict[str, object] = {}
    if _with_cuda():
        # Same guard macro and kernels as setup.py's CUDA build.
        cflags.append("-DDG_WITH_CUDA")
        sources += sorted(str(p) for p in (ROOT / "csrc" / "kernels").glob("*.cu"))
        kwargs["extra_cuda_cflags"] = ["-O3", "-DDG_WITH_CUDA", "-gencode=arch=compute_90a,code=sm_90a"]
        kwargs["extra_ldflags"] = ["-lcublasLt", "-lcublas"]
    return ext.load(
        name=NAME,
        sources=sources,
        extra_include_paths=[str(ROOT / "csrc")],
        extra_cflags=cflags,
        build_directory=str(BUILD_DIR),
        verbose=verbose,
        **kwargs,
    )


if __name__ == "__main__":
    module = build(verbose="-v" in sys.argv)
    print(f"built {module.__file__}")
