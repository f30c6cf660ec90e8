"""The on-disk cache of generated arrays (tieringlab.cache): bit-identical round trips, corrupt files regenerated,
keys that follow the parameters and the source code, atomic writes. Every test writes under ``tmp_path``."""

from __future__ import annotations

import importlib
import logging
import os
import sys
import threading
import time

import numpy as np
import pytest

from tieringlab import cache, paths
from tieringlab.traces import twins


@pytest.fixture()
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("TIERINGLAB_CACHE", str(d))
    return d


def _entries(d):
    return sorted(p for p in d.rglob("*") if p.is_file())


def _assert_same_twin(a, b):
    assert a.identical(b)                                  # values, dims, variable and dataset attributes
    assert list(a.data_vars) == list(b.data_vars) and list(a.attrs) == list(b.attrs)
    for v in a.data_vars:
        assert a[v].dtype == b[v].dtype and a[v].dims == b[v].dims
        np.testing.assert_array_equal(a[v].values, b[v].values)
    for k in a.attrs:
        assert type(a.attrs[k]) is type(b.attrs[k]), k


@pytest.mark.parametrize("name", ["mds_0", "src1_1"])      # a Table 1 twin and an OTF-AST twin (list attrs)
def test_twin_round_trip_is_bit_identical_to_generation(name, cache_dir, monkeypatch):
    monkeypatch.setattr(cache, "MMAP_BYTES", 1 << 12)       # the large-array path (memory-mapped) on a small twin
    monkeypatch.setenv("TIERINGLAB_CACHE", "off")
    ref = twins.msr_twin(name, 0.003, seed=2)
    assert not cache_dir.exists()                           # off: nothing written
    monkeypatch.setenv("TIERINGLAB_CACHE", str(cache_dir))
    first = twins.msr_twin(name, 0.003, seed=2)             # generated and written
    (entry,) = _entries(cache_dir)
    second = twins.msr_twin(name, 0.003, seed=2)            # read back
    assert isinstance(second["time"].data, np.memmap)
    _assert_same_twin(ref, first)
    _assert_same_twin(ref, second)
    second["time"].data[0] = -1.0                           # copy-on-write: the caller's copy only
    _assert_same_twin(ref, twins.msr_twin(name, 0.003, seed=2))
    assert _entries(cache_dir) == [entry]
    twins.msr_twin(name, 0.003, seed=3)                     # another seed: another entry
    twins.msr_twin(name if name == "mds_0" else "mds_0", 0.003, seed=2, read_ratio=0.9)  # overrides: another
    assert len(_entries(cache_dir)) == 3


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage"])
def test_a_corrupt_entry_is_regenerated_with_a_warning_never_used(damage, cache_dir):
    calls = []

    def gen():
        calls.append(1)
        return {"a": np.arange(1000, dtype=np.int64), "b": np.ones((3, 2)), "w": np.zeros(5, bool)}, {"x": 1.5}

    mod = sys.modules[__name__]
    arrays, meta = cache.cached("unit", {"n": 1000}, gen, modules=[mod])
    (entry,) = _entries(cache_dir)
    raw = bytearray(entry.read_bytes())
    if damage == "flip":
        raw[-100] ^= 0xFF                                   # one byte of the payload
    elif damage == "truncate":
        raw = raw[:-8]
    else:
        raw = bytearray(b"not a cache file at all")
    entry.write_bytes(bytes(raw))
    with pytest.warns(cache.CacheWarning, match="unusable"):
        again, meta2 = cache.cached("unit", {"n": 1000}, gen, modules=[mod])
    assert len(calls) == 2                                  # regenerated
    for k in arrays:
        np.testing.assert_array_equal(again[k], arrays[k])
    assert meta2 == {"x": 1.5}
    cache.cached("unit", {"n": 1000}, gen, modules=[mod])    # the rewritten entry is good: read, not generated
    assert len(calls) == 2


def test_key_follows_parameters_and_the_generators_source(tmp_path, cache_dir, monkeypatch):
    src = tmp_path / "_cache_gen_mod.py"
    src.write_text("K = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("_cache_gen_mod")
    calls = []

    def gen():
        calls.append(1)
        return {"a": np.full(4, len(calls))}, {}

    try:
        a1, _ = cache.cached("g", {"p": 1}, gen, modules=[mod])
        a2, _ = cache.cached("g", {"p": 1}, gen, modules=[mod])
        assert len(calls) == 1 and np.array_equal(a1["a"], a2["a"])
        cache.cached("g", {"p": 2}, gen, modules=[mod])                 # another parameter value
        cache.cached("g", {"p": 1.0}, gen, modules=[mod])               # 1.0 is not 1 (the type may matter)
        assert len(calls) == 3
        src.write_text("K = 2\n")                                       # the generator's code changed
        a3, _ = cache.cached("g", {"p": 1}, gen, modules=[mod])
        assert len(calls) == 4 and a3["a"][0] == 4
    finally:
        sys.modules.pop("_cache_gen_mod", None)


def test_concurrent_writers_leave_one_complete_entry(cache_dir):
    big = np.arange(300_000, dtype=np.int64)
    out, errors = [], []

    def worker():
        try:
            out.append(cache.cached("conc", {}, lambda: ({"a": big}, {}), modules=[sys.modules[__name__]])[0]["a"])
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all(np.array_equal(a, big) for a in out)
    (entry,) = _entries(cache_dir)                           # no temporary file left behind
    assert entry.suffix == ".npc"
    np.testing.assert_array_equal(cache.cached("conc", {}, lambda: 1 / 0, modules=[sys.modules[__name__]])[0]["a"],
                                  big)


def test_cache_location(monkeypatch, tmp_path):
    monkeypatch.delenv("TIERINGLAB_CACHE")
    assert paths.cache_dir() == paths.repo_root() / "build" / "cache"
    monkeypatch.setenv("TIERINGLAB_CACHE", "off")
    assert paths.cache_dir() is None and cache.entry_path("x", "k") is None
    monkeypatch.setenv("TIERINGLAB_CACHE", str(tmp_path))
    assert cache.entry_path("x", "k") == tmp_path.resolve() / "x" / "k.npc"


def test_size_cap_evicts_the_least_recently_used_entry_first(cache_dir, monkeypatch, caplog):
    """Issue 35: over the cap, the entry used longest ago goes first; entries this process uses and writers'
    temporary files are never evicted; each eviction is logged; a corrupt entry still regenerates."""
    mod = sys.modules[__name__]
    calls = []

    def gen(i):
        def g():
            calls.append(i)
            return {"a": np.full(1 << 17, ord(i), dtype=np.int64)}, {}   # 1 MiB each
        return g

    monkeypatch.setattr(cache, "_IN_USE", set())
    monkeypatch.setenv(cache.MAX_GB_ENV, "none")
    paths_ = {}
    for i in "ABC":                                                # three entries, no cap yet
        cache.cached("cap", {"i": i}, gen(i), modules=[mod])
        paths_[i] = cache.entry_path("cap", cache.key_of("cap", {"i": i}, cache.code_digest([mod])))
    size = paths_["A"].stat().st_size
    now = time.time_ns()
    for k, i in enumerate("ABC"):                                  # last used: A oldest, then B, then C
        os.utime(paths_[i], ns=(now - (10 - k) * 10**9,) * 2)
    monkeypatch.setattr(cache, "_IN_USE", set())                   # as a new process: nothing in use
    cache.cached("cap", {"i": "A"}, gen("A"), modules=[mod])       # a read: A becomes the most recent
    assert calls == list("ABC")
    (cache_dir / "cap" / ".pending-x.tmp").write_bytes(b"\0" * 3 * size)   # another process writing
    monkeypatch.setenv(cache.MAX_GB_ENV, str(3.5 * size / 2**30))  # room for three entries
    with caplog.at_level(logging.INFO, logger="tieringlab.cache"):
        cache.cached("cap", {"i": "D"}, gen("D"), modules=[mod])   # a fourth: the least recently used, B, goes
    assert [i for i in "ABC" if paths_[i].exists()] == ["A", "C"]
    assert (cache_dir / "cap" / ".pending-x.tmp").exists()
    assert "evicted cap/" + paths_["B"].name in caplog.text
    assert (cache_dir / "evictions.log").read_text().count("evicted") == 1
    monkeypatch.setenv(cache.MAX_GB_ENV, str(0.5 * size / 2**30))  # below one entry: only the unused C can go
    cache.cached("cap", {"i": "E"}, gen("E"), modules=[mod])
    assert [i for i in "ABC" if paths_[i].exists()] == ["A"]       # A, D, E are this process's
    assert len(list((cache_dir / "cap").glob("*.npc"))) == 3
    raw = bytearray(paths_["A"].read_bytes())                      # a corrupt entry still regenerates
    raw[-8] ^= 0xFF
    paths_["A"].write_bytes(bytes(raw))
    with pytest.warns(cache.CacheWarning, match="unusable"):
        again, _ = cache.cached("cap", {"i": "A"}, gen("A"), modules=[mod])
    assert calls == list("ABCDEA") and np.all(again["a"] == ord("A"))
    assert cache.cached("cap", {"i": "B"}, gen("B"), modules=[mod])[0]["a"][0] == ord("B")   # B: generated again
    assert calls == list("ABCDEAB")


@pytest.mark.parametrize(("value", "cap"), [("", int(cache.DEFAULT_MAX_GB * 2**30)), ("none", None), ("0", None),
                                            ("1.5", int(1.5 * 2**30))])
def test_size_cap_setting(value, cap, monkeypatch):
    monkeypatch.setenv(cache.MAX_GB_ENV, value)
    assert cache.max_bytes() == cap


@pytest.mark.parametrize("value", ["big", "-1", "inf", "nan"])
def test_a_bad_size_cap_names_the_variable(value, monkeypatch):
    monkeypatch.setenv(cache.MAX_GB_ENV, value)
    with pytest.raises(ValueError, match="TIERINGLAB_CACHE_MAX_GB must be a size in GiB >= 0, or 0 / none"):
        cache.max_bytes()
