#!/usr/bin/env bash
# Profile GEMM kernels on the H200 in one device call: build with the native kernels, then for
# each KIND:SHAPE[:TILE] argument one cold-L2 call under Nsight Compute (full set, after two
# warm-up calls), its details page (throughputs, warp-state reasons), its hottest SASS lines and
# its local-memory accesses that ran (benchmarks/sass_hotspots.py --local), in one log per
# argument.  Also a K sweep of the dense kernel when DG_PROFILE_KSWEEP is set (the tiles' fixed
# cost per tile against their cost per K block).
# Usage (GPU machine, repo root; KIND as benchmarks/profile_gemm.py takes it, TILE its --config):
#   bash benchmarks/h200_profile.sh dense:128x4096x7168 dense:4096x2112x7168:128x192 contiguous:8x33024x6144x7168
#   bash benchmarks/h200_profile.sh contiguous:4x33024x6144x7168 psum:4x33024x6144x7168   # the same group sizes
#   bash benchmarks/h200_profile.sh mqa:2048x65536x32x128 hc:8192x24x7168x0:m64c2w:p0
#   DG_PROFILE_ARGS=--sfa-mn-major bash benchmarks/h200_profile.sh contiguous:4x33024x6144x7168   # more driver flags
set -uo pipefail
source "$(dirname "$0")/h200_env.sh"
start=$(date +%s)
python3 setup.py -q build_ext --inplace > "$OUT/build.log" 2>&1
echo "build rc=$? in $(( $(date +%s) - start )) s"
export PYTHONPATH=$(pwd)${PYTHONPATH:+:$PYTHONPATH}
if [ -n "${DG_PROFILE_KSWEEP:-}" ]; then
  timeout 120 python3 benchmarks/gpu_gemm.py --forward-only --tiles 128x192,256x128,128x128 \
    --shapes 4096x32768x128,4096x32768x256,4096x32768x512,4096x32768x1024,4096x32768x2048 > "$OUT/ksweep.log" 2>&1
  echo "k sweep rc=$?"; grep "^fwd" "$OUT/ksweep.log" | sed 's/| other.*host/| host/'
fi
i=0
for spec in "$@"; do
  IFS=: read -r kind shape tile <<< "$spec"
  i=$((i + 1))
  log="$OUT/profile_$i.log"
  rep="/tmp/profile_$i"
  echo "== $spec" > "$log"
  case "$kind" in
    mqa) kernels=mqa_logits_kernel ;;
    hc) kernels=tf32_hc_prenorm_gemm_kernel ;;
    *) kernels=gemm ;;
  esac
  timeout 240 ncu --clock-control none --set full -k "regex:$kernels" --launch-skip 2 --launch-count 1 -f -o "$rep" \
    python3 benchmarks/profile_gemm.py "$kind" "$shape" ${tile:+--config "$tile"} ${DG_PROFILE_ARGS:-} >> "$log" 2>&1
  echo "ncu $spec rc=$?"
  ncu -i "$rep.ncu-rep" --page details >> "$log" 2>&1
  ncu -i "$rep.ncu-rep" --page source --csv --print-source sass > "$rep.csv" 2>> "$log" \
    && python3 benchmarks/sass_hotspots.py "$rep.csv" --top 40 --columns --local >> "$log" 2>&1
  grep -E "Duration|SM Active Cycles|Compute \(SM\) Throughput|L2 Cache Throughput|DRAM Throughput" "$log" | head -6
done
echo "done in $(( $(date +%s) - start )) s"
