# Sourced by the h200_*.sh scripts: the output folder, the build environment, and the Python
# packages the GPU image lacks (nvidia-cutlass for the kernels' headers, libclang, mypy), which
# travel as wheels in .whl/ when present.
OUT=${OUT:-h200-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 CC=gcc CXX=g++ MAX_JOBS=$(nproc)
if compgen -G ".whl/*.whl" > /dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi

# The nvidia-cutlass wheel's include folder (cute/ and cutlass/), for the standalone nvcc builds.
cutlass_include() {
  python3 -c "import cutlass_library, os; print(os.path.join(os.path.dirname(cutlass_library.__file__), 'source', 'include'))"
}

# tools/gemm_trace.cu built in the background for each TILE (BMxBN) given, traced
# (build/trace/gemm_trace_TILE, -DDG_GEMM_TRACE) and untraced (build/trace/gemm_time_TILE), each with
# its log beside it; the caller waits.
start_trace_builds() {
  local tile traced bm bn name cutlass
  cutlass=$(cutlass_include)
  mkdir -p build/trace
  for tile in "$@"; do
    bm=${tile%x*} bn=${tile#*x}
    for traced in 1 0; do
      local flags=(-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -DDG_WITH_CUDA
                   -DDG_WITH_SM90_KERNELS -DTRACE_BM="$bm" -DTRACE_BN="$bn" -Icsrc -I"$cutlass")
      [ "$traced" = 1 ] && flags+=(-DDG_GEMM_TRACE)
      name=build/trace/gemm_$([ "$traced" = 1 ] && echo trace || echo time)_$tile
      nvcc "${flags[@]}" tools/gemm_trace.cu -o "$name" > "$name.log" 2>&1 &
    done
  done
}
