#!/usr/bin/env bash
# A/B in one device call: this tree against another tree of the project (e.g. an earlier commit
# or a branch), both built with the native sm90a kernels in parallel, then each named benchmark
# run for both, alternating, DG_AB_ROUNDS times (default 2). Machine-to-machine variation is
# large (the m = 4096 GEMMs move by up to 10% between calls), so compare within one call only.
# Logs land in $OUT as <benchmark>_{a,b}_<round>.log; the geomean lines are printed. Both builds
# run this tree's benchmark script (the same measurement; the other tree need not have it), each
# importing its own package. benchmarks/gemm_ab_cases.py --compare "$OUT" reads its rounds.
#
# The device copy has no .git, so prepare the other tree first, on the host, in an ignored folder
# (and carry it):
#     git archive <ref> | (mkdir -p .ab/b && tar -x -C .ab/b)
# Usage (GPU machine, repo root): bash benchmarks/h200_ab.sh .ab/b gpu_gemm gpu_grouped_gemm
set -uo pipefail
other=$1
shift
source "$(dirname "$0")/h200_env.sh"
root=$(pwd)
start=$(date +%s)
export MAX_JOBS=$(( $(nproc) / 2 ))
python3 setup.py -q build_ext --inplace > "$OUT/build_a.log" 2>&1 &
(cd "$other" && python3 setup.py -q build_ext --inplace > "$OUT/build_b.log" 2>&1) &
wait
echo "builds done in $(( $(date +%s) - start )) s"
grep -E " error" "$OUT/build_a.log" "$OUT/build_b.log" | head
for round in $(seq 1 "${DG_AB_ROUNDS:-2}"); do
  for name in "$@"; do
    for side in a b; do
      dir=$root
      [ "$side" = b ] && dir=$(cd "$other" && pwd)
      log="$OUT/${name}_${side}_${round}.log"
      (cd "$dir" && PYTHONPATH=$dir${PYTHONPATH:+:$PYTHONPATH} timeout "${DG_BENCH_TIMEOUT:-150}" \
        python3 "$root/benchmarks/$name.py" > "$log" 2>&1)
      echo "$name $side round $round rc=$?: $(grep -i geomean "$log" | head -3 | cut -c1-100 | tr '\n' ' ')"
    done
  done
done
