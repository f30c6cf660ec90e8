"""JAX's persistent compilation cache as the package sets it up (``tieringlab._jax_compilation_cache``): where
it goes, that a second process loads what the first compiled instead of compiling it again, that the loaded
executable gives bit-identical results, and the switches that turn it off."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

CHILD = r"""
import json, logging, sys
import jax, jax.numpy as jnp
import tieringlab  # configures the cache
hits = []
class Grab(logging.Handler):
    def emit(self, record):
        msg = record.getMessage()
        if "cache hit" in msg.lower():
            hits.append(msg)
log = logging.getLogger("jax._src.compiler")
log.addHandler(Grab()); log.setLevel(logging.DEBUG)
cfg = {k: getattr(jax.config, k) for k in ("jax_compilation_cache_dir", "jax_persistent_cache_min_compile_time_secs",
                                           "jax_compilation_cache_max_size")}
if len(sys.argv) > 1:  # store every compile, however short, so the test needs no slow-to-compile function
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    f = jax.jit(lambda x: jnp.cumsum(jnp.sin(x) * jnp.exp(-x / 7.0)) / (1.0 + jnp.arange(x.size)))
    out = f(jnp.linspace(0.0, 50.0, 1001)).tobytes().hex()
else:
    out = None
print(json.dumps({"cfg": cfg, "hits": len(hits), "out": out}))
"""


def child(env_updates: dict, *args) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("TIERINGLAB_CACHE", "TIERINGLAB_JAX_CACHE", "JAX_COMPILATION_CACHE_DIR")}
    env.update(JAX_PLATFORMS="cpu", **env_updates)
    proc = subprocess.run([sys.executable, "-c", CHILD, *args], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def cache_files(folder):
    return sorted(p.name for p in folder.glob("*-cache")) if folder.is_dir() else []


def test_a_second_process_loads_the_compiled_code_and_gets_the_same_bits(tmp_path):
    first = child({"TIERINGLAB_CACHE": str(tmp_path)}, "run")
    assert first["cfg"]["jax_compilation_cache_dir"] == str(tmp_path / "jax")
    assert first["hits"] == 0
    written = cache_files(tmp_path / "jax")
    assert written, "the first process wrote nothing to the cache"
    second = child({"TIERINGLAB_CACHE": str(tmp_path)}, "run")
    assert second["hits"] >= 1, "the second process compiled again instead of loading the cached executable"
    assert cache_files(tmp_path / "jax") == written
    assert second["out"] == first["out"]
    off = child({"TIERINGLAB_CACHE": str(tmp_path), "TIERINGLAB_JAX_CACHE": "off"}, "run")
    assert off["hits"] == 0 and off["out"] == first["out"]   # compiled afresh: the same bits


@pytest.mark.parametrize("env, expect", [
    ({"TIERINGLAB_CACHE": "off"}, None),                                # every cache off
    ({"TIERINGLAB_JAX_CACHE": "off"}, None),                            # this one alone
    ({"JAX_COMPILATION_CACHE_DIR": "{tmp}/mine"}, "{tmp}/mine"),        # the user's own setting is left alone
    ({"TIERINGLAB_JAX_CACHE": "{tmp}/elsewhere"}, "{tmp}/elsewhere"),   # the tests' hand-over to subprocesses
])
def test_where_the_cache_goes(tmp_path, env, expect):
    env = {k: v.format(tmp=tmp_path) for k, v in env.items()}
    env.setdefault("TIERINGLAB_CACHE", str(tmp_path / "root"))
    cfg = child(env)["cfg"]
    assert cfg["jax_compilation_cache_dir"] == (expect.format(tmp=tmp_path) if expect else None)
    if "JAX_COMPILATION_CACHE_DIR" not in env and expect:
        from tieringlab import JAX_CACHE_MAX_BYTES, JAX_CACHE_MIN_COMPILE_S
        assert cfg["jax_persistent_cache_min_compile_time_secs"] == JAX_CACHE_MIN_COMPILE_S
        assert cfg["jax_compilation_cache_max_size"] == JAX_CACHE_MAX_BYTES
