#!/usr/bin/env bash
# Build with the native sm90a kernels, then a short smoke test, the GPU GEMM tests and the
# dense and grouped FP8 benchmarks on the H200 in one device call.  The nvidia-cutlass wheel
# (headers of CuTe/CUTLASS) travels in .whl/.
# Usage (GPU machine, repo root): [DG_TESTS=...] bash benchmarks/h200_gemm.sh [dense benchmark args...]
set -uo pipefail
source "$(dirname "$0")/h200_env.sh"
start=$(date +%s)
python3 setup.py -q build_ext --inplace > "$OUT/build.log" 2>&1
echo "build rc=$? in $(( $(date +%s) - start )) s"
grep -E "error|warning: .*C75" "$OUT/build.log" | head -20
export PYTHONPATH=.${PYTHONPATH:+:$PYTHONPATH}
timeout 90 python3 -m pytest -q -x -p no:cacheprovider tests/ops/test_gpu_fp8_gemm.py -k "layouts_and_m" 2>&1 | tail -3
start=$(date +%s)
timeout ${DG_TEST_TIMEOUT:-300} python3 -m pytest -q -p no:cacheprovider ${DG_TESTS:-tests/ops/test_gpu_fp8_gemm.py tests/ops/test_gpu_grouped_gemm.py} 2>&1 \
  | tee "$OUT/pytest.log" | tail -25
echo "pytest done in $(( $(date +%s) - start )) s"
timeout ${DG_BENCH_TIMEOUT:-240} python3 benchmarks/gpu_gemm.py --markdown "$OUT/gpu_gemm.md" "$@" 2>&1 \
  | tee "$OUT/gpu_gemm.log" | grep -v "^|" | cut -c1-150
timeout ${DG_GROUPED_TIMEOUT:-240} python3 benchmarks/gpu_grouped_gemm.py --markdown "$OUT/gpu_grouped.md" 2>&1 \
  | tee "$OUT/gpu_grouped.log" | grep -v "^|" | cut -c1-190
