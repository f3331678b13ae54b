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
