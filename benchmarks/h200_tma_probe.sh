#!/usr/bin/env bash
# The stage copies alone (tools/tma_probe.cu, Note [TMA probe]): is the dense kernel's ~40 bytes per
# SM cycle a per-SM limit or an aggregate one, and do multicast pairs (each CTA loading half of A
# into both, or the first loading all of it) deliver more per SM?  Every line prints bytes per SM
# cycle, the consumer's and the producer's waits, and TB/s into the SMs and out of L2.
# Usage (GPU machine, repo root): bash benchmarks/h200_tma_probe.sh [PROBE]  (default build/trace/tma_probe;
# benchmarks/h200_trace.sh builds it and calls this first).  About a minute.
set -uo pipefail
probe=${1:-build/trace/tma_probe}
"$probe" --selftest || exit 1
# Every mode delivers its tiles' bytes and no others (row-weighted sums against the host's replay).
"$probe" 4096 4096 7168 --check --launches 1 --tile 256x128,128x192 --mode single,half,lead || exit 1
"$probe" 1000 2112 2000 --check --launches 1 --tile 256x128,128x176 --mode single,half,lead --swizzle 3 || exit 1
# The kernel's pattern at 4096x4096x7168 and the short-K shape: consumers releasing at once (the
# copies' ceiling) and holding each stage for the tensor cores' ideal time; the grid at 132, 66 and
# 33 CTAs (if the per-SM rate rises as fewer SMs load, the bound is L2's, which pairs relieve).
"$probe" 4096 4096 7168 --tile 256x128 --mode single,half,lead --ctas 132,66,33 --hold 0,ideal
"$probe" 4096 32768 512 --tile 128x192,256x128 --mode single,half,lead --hold 0,ideal
"$probe" 4096 2112 7168 --tile 128x176 --mode single,half,lead --hold 0,ideal
# With the epilogue's stores (a bf16 tile per tile, through a buffer as the kernel's), at the ideal
# rate and at the kernel's measured K-loop rate (about 1.2 x the ideal): the whole kernel's memory
# traffic with the arithmetic left out.  At k = 512 the output (268 MB) outweighs the operands.
"$probe" 4096 32768 512 --tile 128x192,256x128 --mode single,lead --hold ideal,ideal*1.2 --store 1
"$probe" 4096 24576 1536 --tile 128x192,256x128 --mode single,lead --hold ideal,ideal*1.2 --store 1
"$probe" 4096 4096 7168 --tile 256x128 --mode single,half,lead --hold ideal,ideal*1.2 --store 1
# The decode shapes (m = 64 and 128 at k = 7168, 0.89-0.91 of upstream in-run on the H200): the heuristic's
# 64-row tiles, A's 64 rows read by every CTA; if pairs or fewer CTAs raise the per-SM rate here,
# sharing A in pairs is the lever for those shapes too.
"$probe" 64 4096 7168 --tile 64x32 --mode single,half,lead --ctas 132,66 --hold 0
"$probe" 128 4096 7168 --tile 64x64 --mode single,half,lead --ctas 132,66 --hold 0
# Smaller boxes (more copies in flight per stage) and the stage count, at the ideal hold.
"$probe" 4096 4096 7168 --tile 256x128 --mode single,lead --box 64,128,256 --hold ideal
"$probe" 4096 4096 7168 --tile 256x128 --mode single,lead --stages 2,3,4 --hold ideal
