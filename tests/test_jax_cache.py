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
import json, logging
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
cfg = {"jax_compilation_cache_dir": jax.config.jax_compilation_cache_dir}
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)  # store every compile, however short
f = jax.jit(lambda x: jnp.cumsum(jnp.sin(x) * jnp.exp(-x / 7.0)) / (1.0 + jnp.arange(x.size)))
out = f(jnp.linspace(0.0, 50.0, 1001)).tobytes().hex()
print(json.dumps({"cfg": cfg, "hits": len(hits), "out": out}))
"""


def child(env_updates: dict) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("TIERINGLAB_CACHE", "TIERINGLAB_JAX_CACHE", "JAX_COMPILATION_CACHE_DIR")}
    env.update(JAX_PLATFORMS="cpu", **env_updates)
    proc = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def cache_files(folder):
    return sorted(p.name for p in folder.glob("*-cache")) if folder.is_dir() else []


def test_a_second_process_loads_the_compiled_code_and_gets_the_same_bits(tmp_path):
    first = child({"TIERINGLAB_CACHE": str(tmp_path)})
    assert first["cfg"]["jax_compilation_cache_dir"] == str(tmp_path / "jax")
    assert first["hits"] == 0
    written = cache_files(tmp_path / "jax")
    assert written, "the first process wrote nothing to the cache"
    second = child({"TIERINGLAB_CACHE": str(tmp_path)})
    assert second["hits"] >= 1, "the second process compiled again instead of loading the cached executable"
    assert cache_files(tmp_path / "jax") == written
    assert second["out"] == first["out"]


KEYS = ("jax_compilation_cache_dir", "jax_persistent_cache_min_compile_time_secs", "jax_compilation_cache_max_size")


@pytest.mark.parametrize("env, expect", [
    ({"TIERINGLAB_CACHE": "off"}, None),                                # every cache off
    ({"TIERINGLAB_JAX_CACHE": "off"}, None),                            # this one alone
    ({"JAX_COMPILATION_CACHE_DIR": "{tmp}/mine"}, None),                # the user's own setting: we set nothing
    ({"TIERINGLAB_JAX_CACHE": "{tmp}/elsewhere"}, "{tmp}/elsewhere"),   # the tests' hand-over to subprocesses
    ({}, "{tmp}/root/jax"),                                             # the default: <cache dir>/jax
])
def test_where_the_cache_goes(tmp_path, monkeypatch, env, expect):
    """The set-up function itself, in this process, under each environment (JAX's settings restored after)."""
    import jax

    import tieringlab

    saved = {k: getattr(jax.config, k) for k in KEYS}
    for k in ("TIERINGLAB_JAX_CACHE", "JAX_COMPILATION_CACHE_DIR"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("TIERINGLAB_CACHE", str(tmp_path / "root"))
    for k, v in env.items():
        monkeypatch.setenv(k, v.format(tmp=tmp_path))
    try:
        jax.config.update("jax_compilation_cache_dir", None)
        tieringlab._jax_compilation_cache()
        got = {k: getattr(jax.config, k) for k in KEYS}
    finally:
        for k, v in saved.items():
            jax.config.update(k, v)
    assert got["jax_compilation_cache_dir"] == (expect.format(tmp=tmp_path) if expect else None)
    if expect:
        assert got["jax_persistent_cache_min_compile_time_secs"] == tieringlab.JAX_CACHE_MIN_COMPILE_S
        assert got["jax_compilation_cache_max_size"] == tieringlab.JAX_CACHE_MAX_BYTES
