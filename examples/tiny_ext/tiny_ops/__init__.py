"""tiny_ops: a second extension built by the deep_gemm toolchain (``torch.ops.tiny_ops.*``)."""

import torch  # noqa: F401  (the extension links against torch's libraries: load them first)

from . import _C  # noqa: F401
from ._C import *  # noqa: F403
