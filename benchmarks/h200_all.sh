#!/usr/bin/env bash
# Every GPU test file and every GPU benchmark on the H200 in one device call: build with the
# native sm90a kernels, then each test file under its own time limit (a hung kernel costs one
# file, not the run), then the tuning sweeps (DG_SWEEPS=1) and the benchmarks at their defaults.
# Logs and markdown tables land in $OUT.
# Usage (GPU machine, repo root): [DG_SWEEPS=1] bash benchmarks/h200_all.sh
set -uo pipefail
source "$(dirname "$0")/h200_env.sh"
start=$(date +%s)
python3 setup.py -q build_ext --inplace > "$OUT/build.log" 2>&1
echo "build rc=$? in $(( $(date +%s) - start )) s"
grep -E "error|warning: .*C75" "$OUT/build.log" | head -20
export PYTHONPATH=.${PYTHONPATH:+:$PYTHONPATH}
for f in tests/ops/test_gpu_*.py tests/ops/test_attention.py tests/ops/test_hyperconnection.py tests/ops/test_einsum.py; do
  start=$(date +%s)
  timeout ${DG_FILE_TIMEOUT:-90} python3 -m pytest -q -p no:cacheprovider "$f" > "$OUT/$(basename "$f" .py).log" 2>&1
  echo "$f rc=$? in $(( $(date +%s) - start )) s: $(tail -1 "$OUT/$(basename "$f" .py).log" | cut -c1-120)"
done
run() {  # name, then arguments
  local name=$1 tag=$1; shift
  [ $# -gt 0 ] && tag="${name}_sweep"
  start=$(date +%s)
  timeout ${DG_BENCH_TIMEOUT:-150} python3 "benchmarks/$name.py" --markdown "$OUT/$tag.md" "$@" > "$OUT/$tag.log" 2>&1
  echo "$tag rc=$? in $(( $(date +%s) - start )) s"
}
if [ "${DG_SWEEPS:-0}" = 1 ]; then
  run gpu_gemm --variant-sweep
  run gpu_grouped_gemm --variant-sweep
  run gpu_mqa_logits --sweep
fi
for name in gpu_gemm gpu_grouped_gemm gpu_mqa_logits gpu_paged_mqa_logits gpu_hc_prenorm; do run $name; done
