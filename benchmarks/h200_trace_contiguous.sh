#!/usr/bin/env bash
# The contiguous gap, tile by tile: the dense FP8 kernel runs the rows of an M-grouped contiguous
# problem 5-9% faster than the contiguous kernel does (docs/performance.md, fifty-fourth session),
# with the same K loop.  This traces both on the same rows (Note [tile trace], tools/gemm_trace.cu):
# the dense problem, the contiguous one with row ids and with psum ends, at the contiguous pick
# (128x192) and at 256x128, each untraced (its time) and traced (per item: the gap before it, its
# K loop and the waits in it, its epilogue; the producer's waits for free stages); the contiguous
# ones also with the lean kernel (DG_GEMM_LEAN=1) where the tile has one.  No torch, no extension
# build: nvcc and the nvidia-cutlass wheel (in .whl/) only.
# Usage (GPU machine, repo root): bash benchmarks/h200_trace_contiguous.sh [GROUPS ROWS N K ...]
#   default problems: 4 33024 6144 7168 and 8 35968 4096 2048
set -uo pipefail
source "$(dirname "$0")/h200_env.sh"
start=$(date +%s)
tiles="128x192 256x128"
start_trace_builds $tiles
wait
echo "trace harness built in $(( $(date +%s) - start )) s"
run() {  # run TILE ARGS...: the untraced time, then the trace
  local tile=$1; shift
  build/trace/gemm_time_$tile "$@" 10 | head -1
  build/trace/gemm_trace_$tile "$@" 10
  echo
}
[ $# -ge 4 ] || set -- 4 33024 6144 7168 8 35968 4096 2048
{
  while [ $# -ge 4 ]; do
    groups=$1 rows=$2 n=$3 k=$4; shift 4
    for tile in $tiles; do
      run "$tile" "$rows" "$n" "$k"
      run "$tile" contiguous "$groups" "$rows" "$n" "$k"
      run "$tile" psum "$groups" "$rows" "$n" "$k"
      DG_GEMM_LEAN=1 run "$tile" contiguous "$groups" "$rows" "$n" "$k"
    done
  done
} 2>&1 | tee "$OUT/trace_contiguous.log"
echo "done in $(( $(date +%s) - start )) s"
