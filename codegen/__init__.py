"""The binding generator: TORCH_LIBRARY registration, legacy shim and stub from one ops.yaml.

See ``python -m codegen --help`` and ``codegen/__main__.py``.
"""
