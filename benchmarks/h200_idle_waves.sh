#!/usr/bin/env bash
# Note [idle waves] and the 256x128 local-memory fix on the H200 in one device call (both were
# written and compiled without a GPU): build, the GPU GEMM suites (they compare idle waves kept
# and skipped bit for bit), then the masked families with idle waves kept and skipped
# (DG_GEMM_SKIP_IDLE_WAVES), the masked FP8 tiles forced, and the contiguous families with 256x128
# forced, kept and skipped.  Logs land in $OUT; the nvidia-cutlass wheel travels in .whl/.
# Usage (GPU machine, repo root): bash benchmarks/h200_idle_waves.sh
set -uo pipefail
source "$(dirname "$0")/h200_env.sh"
start=$(date +%s)
python3 setup.py -q build_ext --inplace > "$OUT/build.log" 2>&1
echo "build rc=$? in $(( $(date +%s) - start )) s"
grep -E " error|C75" "$OUT/build.log" | head -10
export PYTHONPATH=.${PYTHONPATH:+:$PYTHONPATH}
start=$(date +%s)
timeout "${DG_TEST_TIMEOUT:-240}" python3 -m pytest -q -p no:cacheprovider tests/ops/test_gpu_grouped_gemm.py \
  tests/ops/test_gpu_fp8_gemm.py tests/ops/test_kernel_shapes.py 2>&1 | tee "$OUT/pytest.log" | tail -8
echo "pytest done in $(( $(date +%s) - start )) s"
bench() {  # bench LOG [ENV=VALUE ...] -- ARGS...
  local log=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  env "${envs[@]}" timeout "${DG_BENCH_TIMEOUT:-120}" python3 benchmarks/gpu_grouped_gemm.py --repeats 8 "$@" 2>&1 \
    | tee "$OUT/$log.log" | grep -v "^|" | cut -c1-260
}
bench masked_kept DG_GEMM_SKIP_IDLE_WAVES=0 -- --only masked,bf16_masked
bench masked_skipped DG_GEMM_SKIP_IDLE_WAVES=1 -- --only masked,bf16_masked
bench masked_tiles_skipped DG_GEMM_SKIP_IDLE_WAVES=1 -- --only masked --tiles 128x128,128x192,256x128
bench contiguous_kept DG_GEMM_SKIP_IDLE_WAVES=0 -- --only contiguous,contiguous_psum --tiles 256x128
bench contiguous_skipped DG_GEMM_SKIP_IDLE_WAVES=1 -- --only contiguous,contiguous_psum --tiles 256x128
