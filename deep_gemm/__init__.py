"""deep_gemm: DeepGEMM's op surface as TORCH_LIBRARY ops (``torch.ops.deep_gemm.*``).

``import deep_gemm`` loads the compiled extension (without initialising CUDA)
and re-exports every op this build contains with its legacy signature; the
ops are grouped by family in ``deep_gemm._C.FAMILIES``.
"""

from __future__ import annotations

import os
import shutil

import torch  # noqa: F401  (the extension links against torch's libraries: load them first)

from . import _C, legacy, mega, testing, utils  # noqa: F401  (submodules are part of the public package)
from ._C import *  # noqa: F403  (exactly the ops in _C.__all__, i.e. those this build has)
from .mega import (  # noqa: F401  (Mega MoE's Python surface, named as upstream DeepGEMM's deep_gemm/__init__.py names it)
    SymmBuffer,
    bf16_mega_moe,
    fp8_fp4_mega_moe,
    get_symm_buffer_for_mega_moe,
    transform_weights_for_mega_moe,
)
from .utils import *  # noqa: F403

__version__ = "2.6.1"


def _cuda_home() -> str:
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            return os.environ[var]
    nvcc = shutil.which("nvcc")
    if nvcc:
        return os.path.dirname(os.path.dirname(nvcc))
    return "/usr/local/cuda"


_C.init(os.path.dirname(os.path.abspath(__file__)), _cuda_home())
