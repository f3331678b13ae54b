#!/usr/bin/env bash
# Build with the native sm90a kernels, run the GPU tests named in DG_TESTS (if any), then each
# benchmark named on the command line (benchmarks/<name>.py, each under DG_BENCH_TIMEOUT seconds,
# its markdown table in $OUT/<name>.md), all in one device call.
# Usage (GPU machine, repo root): DG_TESTS="tests/ops/test_gpu_x.py ..." bash benchmarks/h200_bench.sh gpu_x gpu_y
set -uo pipefail
source "$(dirname "$0")/h200_env.sh"
start=$(date +%s)
python3 setup.py -q build_ext --inplace > "$OUT/build.log" 2>&1
echo "build rc=$? in $(( $(date +%s) - start )) s"
grep -E "error|warning: .*C75" "$OUT/build.log" | head -20
export PYTHONPATH=.${PYTHONPATH:+:$PYTHONPATH}
if [ -n "${DG_TESTS:-}" ]; then
  start=$(date +%s)
  # shellcheck disable=SC2086
  timeout ${DG_TEST_TIMEOUT:-300} python3 -m pytest -q -p no:cacheprovider ${DG_TESTS} 2>&1 | tee "$OUT/pytest.log" | tail -30
  echo "pytest done in $(( $(date +%s) - start )) s"
fi
for name in "$@"; do
  start=$(date +%s)
  timeout ${DG_BENCH_TIMEOUT:-150} python3 "benchmarks/$name.py" --markdown "$OUT/$name.md" 2>&1 | tee "$OUT/$name.log" | tail -30
  echo "$name done in $(( $(date +%s) - start )) s"
done
