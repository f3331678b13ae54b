#!/usr/bin/env bash
# Build, test and benchmark on the H200 in one go (one device call).
# Usage (on the GPU machine, repo root):  bash benchmarks/h200_run.sh [pytest args...]
# Logs land in $OUT (or ./h200-out when OUT is unset).
set -uo pipefail
source "$(dirname "$0")/h200_env.sh"
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv
  python3 -c "import torch, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'python', sys.version.split()[0])"
  nvcc --version | tail -2
} 2>&1 | tee "$OUT/env.txt"
start=$(date +%s)
python3 setup.py -q build_ext --inplace > "$OUT/build.log" 2>&1
echo "build rc=$? in $(( $(date +%s) - start )) s" | tee -a "$OUT/env.txt"
tail -20 "$OUT/build.log"
readelf -d deep_gemm/_C_extension*.so | grep NEEDED | tee -a "$OUT/env.txt"
start=$(date +%s)
timeout 480 python3 -m pytest -q -p no:cacheprovider "$@" 2>&1 | tee "$OUT/pytest.log" | tail -40
echo "pytest done in $(( $(date +%s) - start )) s" | tee -a "$OUT/env.txt"
PYTHONPATH=. python3 benchmarks/gemm.py --markdown "$OUT/gemm.md" 2>&1 | tee "$OUT/gemm.log" | tail -25
