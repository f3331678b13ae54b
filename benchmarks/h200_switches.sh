#!/usr/bin/env bash
# The kernel switches (csrc/cuda/gemm_switches.h) timed on the H200 as in-process variants
# (benchmarks/variants.py): every variant of a call is timed in the same round as the call itself
# and checked against the float64 reference first, and each family ends with one line per variant
# giving the paired geomean and whether it meets the rule for turning a switch on (no shape slower,
# geomean above 1).  Upstream (the dg_upstream module, when it imports) is timed in the same rounds.
#
# Build, the GPU GEMM suites (they compare the switches bit for bit), then, each family with an
# identity variant as the A/A control and against the defaults of csrc/cuda/gemm_switches.h:
#   dense        slab waits off (on by default there), staggered warpgroups, 256x128 forced (as is and
#                without slab waits)
#   masked       the general kernel, idle waves kept, tiles forced
#   bf16_masked  idle waves skipped
#   k_grouped    the general K-grouped kernel, 128x128 forced (the default takes 128x160)
#   contiguous   idle waves skipped, 256x128 forced
# Logs land in $OUT; the nvidia-cutlass wheel travels in .whl/.  DG_SKIP_BUILD=1 and
# DG_SKIP_TESTS=1 let a second call on the still-warm machine run the benchmarks alone, and
# DG_BENCHES="dense masked ..." (the first word of each bench line below) picks some of them.
# Usage (GPU machine, repo root): bash benchmarks/h200_switches.sh
set -uo pipefail
source "$(dirname "$0")/h200_env.sh"
# (A machine that went back between calls comes fresh, without the build: build then too.)
if [ "${DG_SKIP_BUILD:-0}" != 1 ] || ! compgen -G "deep_gemm/_C_extension*.so" > /dev/null; then
  start=$(date +%s)
  python3 setup.py -q build_ext --inplace > "$OUT/build.log" 2>&1
  echo "build rc=$? in $(( $(date +%s) - start )) s"
  grep -E " error|C75" "$OUT/build.log" | head -10
fi
export PYTHONPATH=.${PYTHONPATH:+:$PYTHONPATH}
if [ "${DG_SKIP_TESTS:-0}" != 1 ]; then
  start=$(date +%s)
  timeout "${DG_TEST_TIMEOUT:-240}" python3 -m pytest -q -p no:cacheprovider tests/ops/test_gpu_grouped_gemm.py \
    tests/ops/test_gpu_k_grouped_einsum.py tests/ops/test_gpu_fp8_gemm.py tests/ops/test_kernel_shapes.py 2>&1 | tee "$OUT/pytest.log" | tail -8
  echo "pytest done in $(( $(date +%s) - start )) s"
fi
other=()
python3 -c "import torch, dg_upstream" 2>/dev/null && other=(--other dg_upstream)
bench() {  # bench LOG SCRIPT ARGS...
  local log=$1 script=$2; shift 2
  if [ -n "${DG_BENCHES:-}" ] && [[ " $DG_BENCHES " != *" $log "* ]]; then return; fi
  local start=$(date +%s)
  timeout "${DG_BENCH_TIMEOUT:-150}" python3 "benchmarks/$script.py" "${other[@]}" "$@" 2>&1 \
    | tee "$OUT/$log.log" | grep -v "^|" | cut -c1-400
  echo "[$log: $(( $(date +%s) - start )) s]"
}
# aa: an identity variant, the A/A control of the method (docs/performance.md, twenty-first session):
# no stagger, the default of every kernel.
aa=aa:DG_GEMM_STAGGER_CYCLES=0
bench dense gpu_gemm --forward-only --repeats 16 --variant $aa --variant noslab:DG_GEMM_SLAB_WAIT=0 \
  --variant st2000:DG_GEMM_STAGGER_CYCLES=2000 --tiles 256x128 \
  --variant 256noslab:DG_SM90_GEMM_CONFIG=256x128,DG_GEMM_SLAB_WAIT=0
bench masked gpu_grouped_gemm --only masked --repeats 9 --variant $aa --variant general:DG_GEMM_MASKED_SCHEDULE=0 \
  --variant keep:DG_GEMM_SKIP_IDLE_WAVES=0 --tiles 128x128,128x192,256x128,64x128
bench bf16_masked gpu_grouped_gemm --only bf16_masked --repeats 9 --variant $aa --variant skip:DG_GEMM_SKIP_IDLE_WAVES=1
bench k_grouped gpu_grouped_gemm --only k_grouped_fp8_nt --repeats 9 --variant $aa \
  --variant general:DG_GEMM_K_GROUPED_SCHEDULE=0 --tiles 128x128
bench contiguous gpu_grouped_gemm --only contiguous,contiguous_psum --repeats 9 --variant $aa \
  --variant skip:DG_GEMM_SKIP_IDLE_WAVES=1 --tiles 256x128
