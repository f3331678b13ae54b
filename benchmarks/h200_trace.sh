#!/usr/bin/env bash
# Where FP8 time goes, tile by tile: tools/gemm_trace.cu built for the tiles the heuristic picks at
# m = 4096 (256x128, 128x192, 128x176) and 128x128, traced (Note [tile trace]) and untraced, and
# run on the six m = 4096 dense benchmark shapes (issue 13's gap), 256x128 at k = 512 and 1536
# (where the heuristic's model charges 256-row tiles a fixed cost per tile; also without slab
# waits, DG_GEMM_SLAB_WAIT=0, Note [slab waits]: the dense kernel's default is on), 128x192 at
# k = 7168, a few with the second math warpgroup started late (DG_GEMM_STAGGER_CYCLES, Note
# [staggered warpgroups]),
# and the masked problem furthest behind upstream (32 groups of about 192 rows, n 4096, k 2048:
# the pick 256x128 and 128x128, on the general kernel and on the masked one).  No torch, no
# extension build: nvcc and the nvidia-cutlass wheel (in .whl/) only.  First, the stage copies in
# isolation (tools/tma_probe.cu, Note [TMA probe]), then the consumers' K loop in isolation
# (tools/wgmma_probe.cu, Note [wgmma probe]).
# Usage (GPU machine, repo root): bash benchmarks/h200_trace.sh
set -uo pipefail
source "$(dirname "$0")/h200_env.sh"
CUTLASS=$(cutlass_include)
start=$(date +%s)
start_trace_builds 256x128 128x192 128x176 128x128
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -Icsrc -I"$CUTLASS" \
  tools/wgmma_probe.cu -o build/trace/wgmma_probe > build/trace/wgmma_probe.log 2>&1 &
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -DDG_WITH_CUDA \
  -DDG_WITH_SM90_KERNELS -Icsrc -I"$CUTLASS" tools/tma_probe.cu -o build/trace/tma_probe > build/trace/tma_probe.log 2>&1 &
wait
echo "trace harness and probes built in $(( $(date +%s) - start )) s"
bash "$(dirname "$0")/h200_tma_probe.sh" build/trace/tma_probe 2>&1 | tee "$OUT/tma_probe.log"
# The consumers' K loop alone (tools/wgmma_probe.cu): each structure checked against a float64
# tile first, then timed with as many stages as fit, with three (the 256x128 kernel's count), and
# with the second warpgroup started 300 cycles late.
{
  build/trace/wgmma_probe --check && build/trace/wgmma_probe && build/trace/wgmma_probe --stages 3 &&
    build/trace/wgmma_probe --only 256x128,128x192 --stagger 300
} 2>&1 | tee "$OUT/wgmma_probe.log"
run() {  # run TILE M N K
  local tile=$1; shift
  build/trace/gemm_time_$tile "$@" 20 | head -1
  build/trace/gemm_trace_$tile "$@" 20
  echo
}
{
  run 256x128 4096 7168 16384
  run 256x128 4096 4096 7168
  run 256x128 4096 7168 2048
  run 128x192 4096 24576 1536
  run 128x192 4096 32768 512
  run 128x176 4096 2112 7168
  run 256x128 4096 32768 512
  run 256x128 4096 24576 1536
  run 128x192 4096 4096 7168
  DG_GEMM_SLAB_WAIT=0 run 256x128 4096 32768 512
  DG_GEMM_SLAB_WAIT=0 run 256x128 4096 24576 1536
  DG_GEMM_SLAB_WAIT=0 run 256x128 4096 4096 7168
  DG_GEMM_STAGGER_CYCLES=1000 run 128x192 4096 32768 512
  DG_GEMM_STAGGER_CYCLES=2000 run 128x192 4096 32768 512
  DG_GEMM_STAGGER_CYCLES=2000 run 256x128 4096 32768 512
  DG_GEMM_STAGGER_CYCLES=2000 run 256x128 4096 4096 7168
  run 256x128 masked 32 4096 192 4096 2048
  run 128x128 masked 32 4096 192 4096 2048
  DG_GEMM_MASKED_SCHEDULE=1 run 256x128 masked 32 4096 192 4096 2048
  DG_GEMM_MASKED_SCHEDULE=1 run 128x128 masked 32 4096 192 4096 2048
} 2>&1 | tee "$OUT/trace.log"
