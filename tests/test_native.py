"""The numba idiom of :mod:`tieringlab.native`: lazy import and compilation, helpers rebound, options passed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import NamedTuple

import numpy as np
import pytest

from tieringlab import native


@native.jit(inline="always")
def _twice(x):
    return 2 * x


@native.jit(_nrt=False)
def _plus_one_twice(x):
    return _twice(x) + 1


@native.jit(nogil=True, cache=False)
def _kernel(a, out):
    for i in range(a.size):
        out[i] = _plus_one_twice(a[i])
    return out


class _Pair(NamedTuple):
    a: np.ndarray
    b: np.ndarray


@native.jit(nogil=True, cache=False)
def _sum_pair(state):
    a, b = state
    s = 0.0
    for i in range(a.size):
        s += a[i] * b[i]
    state.b[0] = s
    return s


_HELPER_SRC = """
from tieringlab import native


@native.jit(inline="always")
def helper(x):
    return x + {inc}
"""
_KERNEL_SRC = """
from tieringlab import native
from {helper_mod} import helper


@native.jit(nogil=True, cache=False)
def kern(x):
    return helper(x) * 10
"""
# The fresh process: importing modules of kernels neither imports numba nor compiles; then the kernel compiled by
# the test's own process is LOADED from the disk cache (a hit, no compilation); then the helper's source (in
# another file, inlined into the kernel) changes and the reloaded kernel must compile afresh (a miss) and give the
# new result: numba's own key (the kernel's bytecode and file) would not see that change and would serve 20.
_FRESH_PROCESS = """
import importlib, json, pathlib, sys
from tieringlab import native
@native.jit(nogil=True)
def f(x):
    return x + 1
import tieringlab.policies._arraylist, tieringlab.policies.lru, tieringlab.policies.arc
import tieringlab.policies.car, tieringlab.policies._vfrm_kernels, tieringlab.policies._lmst_native
import tieringlab.models.workloads._lmst_native
assert 'numba' not in sys.modules, 'imported at import time'
assert not f.compiled
h = importlib.import_module(sys.argv[1])
k = importlib.import_module(sys.argv[2])
assert not k.kern.compiled
out = {{"first": k.kern(1)}}
assert 'numba' in sys.modules and k.kern.compiled
st = k.kern.dispatcher().stats
out["hits"], out["misses"] = sum(st.cache_hits.values()), sum(st.cache_misses.values())
out["path"] = st.cache_path
pathlib.Path(h.__file__).write_text({helper_src!r}.format(inc=2))
importlib.reload(h)
importlib.reload(k)
out["edited"] = k.kern(1)
st = k.kern.dispatcher().stats
out["edited_hits"], out["edited_misses"] = sum(st.cache_hits.values()), sum(st.cache_misses.values())
out["edited_path"] = st.cache_path
print(json.dumps(out))
"""


def test_kernels_are_cached_on_disk_hit_in_a_fresh_process_and_invalidated_by_a_helper_edit(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    tag = tmp_path.name.replace("-", "_")
    helper_mod, kernel_mod = f"_native_cache_helper_{tag}", f"_native_cache_kernel_{tag}"
    (tmp_path / f"{helper_mod}.py").write_text(_HELPER_SRC.format(inc=1))
    (tmp_path / f"{kernel_mod}.py").write_text(_KERNEL_SRC.format(helper_mod=helper_mod))
    # this process compiles the kernel into the cache of ``cache`` (a miss), as the first process of a run does
    monkeypatch.setattr(native, "_NUMBA_DIR", cache / "numba")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        mod = __import__(kernel_mod)
        assert mod.kern(1) == 20
        st = mod.kern.dispatcher().stats
        assert sum(st.cache_misses.values()) == 1 and sum(st.cache_hits.values()) == 0
        assert st.cache_path.startswith(str(cache / "numba"))
    finally:
        sys.modules.pop(kernel_mod, None)
        sys.modules.pop(helper_mod, None)
    env = {**os.environ, "TIERINGLAB_CACHE": str(cache),
           "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    env.pop("TIERINGLAB_NUMBA_CACHE", None)             # the conftest's: this process must use <cache>/numba
    code = _FRESH_PROCESS.format(helper_src=_HELPER_SRC)
    res = subprocess.run([sys.executable, "-c", code, helper_mod, kernel_mod], check=True, env=env,
                         capture_output=True, text=True)
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert (out["first"], out["hits"], out["misses"]) == (20, 1, 0), out      # loaded, not compiled
    assert out["path"] == st.cache_path
    assert (out["edited"], out["edited_hits"], out["edited_misses"]) == (30, 0, 1), out   # compiled afresh
    assert out["edited_path"] != out["path"]       # in its own folder, named by the new sources' hash


def test_cache_off_compiles_without_a_disk_cache(monkeypatch):
    monkeypatch.setattr(native, "_NUMBA_DIR", None)      # what TIERINGLAB_CACHE=off resolves to

    @native.jit
    def g(x):
        return x - 1

    assert g(3) == 2
    assert type(g.dispatcher()._cache).__name__ == "NullCache"


def test_source_key_changes_with_a_helper_constant_and_options():
    def build(c, opts):
        glob = {"np": np, "native": native, "C": c}
        exec("def h(x):\n    return x + C\n", glob)
        helper = native.jit(inline="always")(glob["h"])
        glob2 = {"h": helper}
        exec("def k(x):\n    return h(x)\n", glob2)
        return native.jit(**opts)(glob2["k"])

    base = build(1, {}).source_key()
    assert build(1, {}).source_key() == base
    assert build(2, {}).source_key() != base               # a global value the helper reads
    assert build(1, {"nogil": True}).source_key() != base


def test_kernel_calls_its_helpers_compiled_with_their_options():
    out = _kernel(np.arange(4, dtype=np.int64), np.zeros(4, np.int64))
    np.testing.assert_array_equal(out, [1, 3, 5, 7])
    for k, opts in ((_twice, {"inline": "always"}), (_plus_one_twice, {"_nrt": False}),
                    (_kernel, {"nogil": True, "cache": False})):
        assert k.compiled and k.options == opts
        d = k.dispatcher()
        for key, value in opts.items():
            if key == "cache":                                 # ignored: the package caches every kernel on disk
                assert "cache" not in d.targetoptions
                assert (type(d._cache).__name__ == "KernelCache") == (native.numba_cache_dir() is not None)
            else:
                assert d.targetoptions[key] == value, (k, key)
        assert d.py_func.__code__ is k.py_func.__code__   # the same code, only the globals rebound
    # the helpers were built first and the kernel's globals name their dispatchers, not the Kernel objects
    globs = _kernel.dispatcher().py_func.__globals__
    assert globs["_plus_one_twice"] is _plus_one_twice.dispatcher()
    assert _plus_one_twice.dispatcher().py_func.__globals__["_twice"] is _twice.dispatcher()
    assert isinstance(globals()["_twice"], native.Kernel)       # the module itself is left as written


def test_kernel_is_a_plain_function_in_python_terms():
    assert _kernel.__name__ == "_kernel" and _kernel.__module__ == __name__
    assert _kernel.__wrapped__ is _kernel.py_func
    assert _kernel.py_func(np.arange(3), np.zeros(3, np.int64)).tolist() == [1, 3, 5]   # runs uncompiled too
    assert "native.Kernel" in repr(_kernel)


def test_a_namedtuple_of_arrays_is_one_argument():
    st = _Pair(np.arange(3.0), np.ones(3))
    assert _sum_pair(st) == 3.0 and st.b[0] == 3.0


def test_closure_helpers_are_rebound_too():
    def make():
        helper = _twice

        @native.jit
        def k(x):
            return helper(x) + 10
        return k

    k = make()
    assert k.options == {}
    assert k(5) == 20


def test_mutual_recursion_is_refused():
    @native.jit
    def ping(x):
        return pong(x)

    @native.jit
    def pong(x):
        return ping(x)

    with pytest.raises(RecursionError, match="reaches itself"):
        ping(1)


def test_numba_cache_dir_resolution(monkeypatch, tmp_path):
    for env, numba_env, expected in ((str(tmp_path), None, tmp_path.resolve() / "numba"),
                                     (str(tmp_path), str(tmp_path / "elsewhere"), (tmp_path / "elsewhere").resolve()),
                                     (str(tmp_path), "off", None),
                                     ("off", str(tmp_path / "elsewhere"), None)):
        monkeypatch.setattr(native, "_NUMBA_DIR", native._UNSET)
        monkeypatch.setenv("TIERINGLAB_CACHE", env)
        if numba_env is None:
            monkeypatch.delenv("TIERINGLAB_NUMBA_CACHE", raising=False)
        else:
            monkeypatch.setenv("TIERINGLAB_NUMBA_CACHE", numba_env)
        assert native.numba_cache_dir() == expected, (env, numba_env)
        monkeypatch.setenv("TIERINGLAB_CACHE", str(tmp_path / "changed"))      # fixed once resolved
        assert native.numba_cache_dir() == expected
