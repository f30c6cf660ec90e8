#!/usr/bin/env bash
# One prepared GPU check: the JAX code of tieringlab on a GPU machine whose Python already has a CUDA jax/jaxlib,
# numpy, scipy, xarray, numba, pandas, hypothesis and pytest-xdist (not the lock's versions). The test oracles
# missing there travel as wheels in .whl/ (git-ignored; fetched with `pip download --no-deps --only-binary=:all:
# --python-version 3.12 ... -d .whl libcachesim==0.3.5 simpy==4.1.2`). Writes backend.txt and gpu_tests.log to
# $OUT (default: /tmp/gpu_check). Run from the repository root: `bash benchmarks/gpu_check.sh`.
set -u
OUT="${OUT:-/tmp/gpu_check}"; mkdir -p "$OUT"
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 3
export PYTHONPATH=/tmp/site:$PWD TIERINGLAB_PROGRESS=0 MPLBACKEND=Agg PYTHONHASHSEED=0 XLA_PYTHON_CLIENT_PREALLOCATE=false
export JAX_PLATFORMS=cuda,cpu
nvidia-smi -L
python3 - <<'PY' 2>&1 | tee $OUT/backend.txt
import jax, tieringlab, numpy as np
print("jax", jax.__version__, "backend", jax.default_backend(), jax.devices())
from tieringlab.policies import caching
print("caching engine auto ->", caching._engine("auto"))
import time
from tieringlab.models import stackdist
rng = np.random.default_rng(0); keys = rng.zipf(1.2, 2_000_000) % 200_000
for dev in ("cuda", "cpu"):
    with jax.default_device(jax.devices(dev)[0]):
        t = time.perf_counter(); h, w = caching.replay("lru", keys, np.array([1000, 10000, 100000]), engine="jax"); jax.block_until_ready(h)
        t1 = time.perf_counter(); h2, w2 = caching.replay("lru", keys, np.array([1000, 10000, 100000]), engine="jax"); jax.block_until_ready(h2)
        print(dev, "LRU replay jax engine, 2e6 accesses x 3 sizes: first", round(t1 - t, 2), "s, second", round(time.perf_counter() - t1, 2), "s; hits", np.asarray(h2).sum(axis=-1) if np.ndim(h2) > 1 else np.asarray(h2))
PY
SKIP="test_dvc_experiments.py test_dvc_pipeline.py test_notebooks_clean.py test_pipeline_atomic.py test_site.py test_sweep.py test_lab.py test_hostile_pipeline.py test_hostile_sweep.py test_traces_data.py"
FILES=$(ls tests/test_*.py | grep -v -F "$(printf '%s\n' $SKIP)")
timeout 420 python3 -m pytest -p no:cacheprovider -q -n 8 --continue-on-collection-errors -o addopts="" $FILES 2>&1 | tee $OUT/gpu_tests.log | tail -60
