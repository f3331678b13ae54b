"""Helpers shared by the tests (imported as ``tests.support.<module>``); none of them is a test.

build          what this build has: DEVICES, present()
manifest       the parsed ops.yaml (OPS, MANIFEST, legacy_call)
samples/       valid inputs for every op, one module per family
reference      float64 decoders of the quantized operands
operands       quantized operand builders
opcheck_util   torch.library.opcheck with this package's checks
pt2_support    walking the manifest for opcheck, torch.compile, fakes, immutability and the fuzzer
fuzz_cases     hostile calls derived from each op's schema; fuzz_worker runs them in a child process
mega_support   the Mega MoE problem builders and the multi-rank harness
legacy_cases   inputs and references for deep_gemm.legacy
dist_worker    one rank of tests/ops/test_dist_utils.py
"""
