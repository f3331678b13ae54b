#!/usr/bin/env bash
# The whole test suite on the H200 in one device call: build with the native kernels (the
# nvidia-cutlass wheel in .whl/, with libclang and mypy for the toolchain tests), then pytest.
# Usage (GPU machine, repo root): bash benchmarks/h200_suite.sh [pytest args...]
set -uo pipefail
source "$(dirname "$0")/h200_env.sh"
start=$(date +%s)
python3 setup.py -q build_ext --inplace > "$OUT/build.log" 2>&1
echo "build rc=$? in $(( $(date +%s) - start )) s"
export PYTHONPATH=.${PYTHONPATH:+:$PYTHONPATH}
start=$(date +%s)
# -v: every test's outcome by name as it ends ("[gw3] [ 95%] FAILED tests/..." with -n), so a run
# that the time limit stops before pytest's summary still names its failures in the log.
timeout ${DG_SUITE_TIMEOUT:-400} python3 -m pytest -v -p no:cacheprovider "$@" > "$OUT/pytest.log" 2>&1
echo "pytest rc=$? in $(( $(date +%s) - start )) s"
grep -E "(^|\] )(FAILED|ERROR) |::[^ ]+ (FAILED|ERROR)" "$OUT/pytest.log" | head -40
tail -3 "$OUT/pytest.log"
