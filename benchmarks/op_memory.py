"""Free device memory around every deep_gemm call of one test function.

Meant for runs under compute-sanitizer, where upstream DeepGEMM's GEMM tests stop with the device
out of memory (docs/gpu.md, the upstream test table): each public callable of `deep_gemm` and
`deep_gemm.legacy` is wrapped so that every call prints the op, its tensor arguments' shapes, and
the free memory before and after it (synchronised), so a log shows whether memory goes with the
ops or with the test's own code.

Usage (GPU machine, repo root; TESTS a folder of test files, FUNC module.function):
    PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool=memcheck --force-blocking-launches \\
        python benchmarks/op_memory.py --tests TESTS test_bf16.test_m_grouped_gemm_masked
"""

from __future__ import annotations

import argparse
import functools
import importlib
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

import torch


def free_gib() -> float:
    torch.cuda.synchronize()
    return torch.cuda.mem_get_info()[0] / 2**30


def describe(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return "x".join(str(s) for s in value.shape) or "scalar"
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(describe(v) for v in value) + ")"
    return type(value).__name__


def traced(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        before = free_gib()
        out = fn(*args, **kwargs)
        after = free_gib()
        shapes = ", ".join(describe(a) for a in args)
        print(f"[op_memory] {name}({shapes}) free {before:.1f} -> {after:.1f} GiB", flush=True)
        return out

    return run


def own_module_names(module: ModuleType) -> set[str]:
    """The names the package's own functions give as `__module__`: the package and its loaded
    submodules, and for a compiled submodule also its last component (a pybind11 module built as
    `_C` names its functions' module `_C`)."""
    root = module.__name__.split(".")[0]
    subs = [m for n, m in list(sys.modules.items()) if n == root or n.startswith(root + ".")]
    compiled = [m for m in subs if str(getattr(m, "__file__", "") or "").endswith(".so")]
    return {m.__name__ for m in subs} | {m.__name__.rsplit(".", 1)[-1] for m in compiled}


def wrap_module(module: ModuleType, prefix: str) -> int:
    """Wraps the package's own public functions in `module` in place (not re-exported ones); returns how many."""
    own = own_module_names(module)
    count = 0
    for name in dir(module):
        value = getattr(module, name)
        if name.startswith("_") or not callable(value) or isinstance(value, type):
            continue
        if getattr(value, "__module__", None) not in own:
            continue
        setattr(module, name, traced(prefix + name, value))
        count += 1
    return count


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tests", required=True, help="the folder of the test files (and their generators)")
    parser.add_argument("func", help="module.function, e.g. test_bf16.test_gemm")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("op_memory: needs a CUDA device")
    import deep_gemm
    import deep_gemm.legacy

    wrapped = wrap_module(deep_gemm, "deep_gemm.") + wrap_module(deep_gemm.legacy, "deep_gemm.legacy.")
    print(f"[op_memory] {wrapped} callables wrapped; free {free_gib():.1f} GiB", flush=True)
    sys.path.insert(0, args.tests)
    module_name, func_name = args.func.split(".")
    torch.manual_seed(0)
    getattr(importlib.import_module(module_name), func_name)()
    print(f"[op_memory] done; free {free_gib():.1f} GiB", flush=True)


if __name__ == "__main__":
    main()
