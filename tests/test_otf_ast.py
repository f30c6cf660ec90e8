"""OTF-AST, static tiering, FlashCache and HDD only (tieringlab.policies.otf_ast) against plain references
written here: brute-force hot sets, top-k placement, an OrderedDict LRU with write-back; move invariants; bad
input. (The closed-loop engine's decisions, moves and responses: tests/test_otf_engine.py, against SimPy.)"""

from __future__ import annotations

from collections import OrderedDict

import jax
import numpy as np
import pytest

from tieringlab.policies import otf_ast as oa
from tieringlab.policies import registry
from tieringlab.policies.otf_ast.flashcache import flashcache_passes
from tieringlab.traces.readers import make_dataset
from tieringlab.units import GiB, KiB, MiB

# A small system with the paper's structure: 12 sub-LUNs of 1 MiB, 10-s intervals, 12 intervals.
S, SUB, T, K = 12, 1 * MiB, 10, 12
SMALL = dict(lun_subluns=S, sublun_bytes=SUB, t_s=T, m_window=T, n_top=3, i_pct=50.0, c_intervals=2, o_intervals=3,
             copy_up=2.5, copy_down=6.5, copy_share_floor=1.0)
CAP = 4
SYSTEMS = ("OTF-AST", "OTF-AST without write-back", "static tiering", "FlashCache", "FlashCache pass 2", "HDD only")


def _trace(seed: int, n: int, write_share: float = 0.3, hot_share: float = 0.7):
    """Random small traces with a drifting hot pair of sub-LUNs (so that promotions and timeouts happen)."""
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(0, K * T, n))
    hot = (t // 25).astype(int) % (S - 1)
    sub = np.where(rng.random(n) < hot_share, hot + rng.integers(0, 2, n), rng.integers(0, S, n))
    off = sub * SUB + rng.integers(0, SUB // 4096 - 2, n) * 4096
    size = rng.choice([4096, 8192], n)
    w = rng.random(n) < write_share
    return make_dataset(t, off, size, w, name="small", source="test", replay_start_s=0.0, replay_end_s=float(K * T))


def _hot_plain(cnt_row, n, i_pct):
    order = sorted(range(len(cnt_row)), key=lambda s: (-cnt_row[s], s))
    top = [s for s in order[:n] if cnt_row[s] > 0]
    total = sum(cnt_row)
    conc = total > 0 and sum(cnt_row[s] for s in top) >= i_pct / 100 * total
    return {s for s in top} if conc else set()


def _run(ds, p, cap=CAP, key=0):
    return oa.otf_ast(ds, [cap * p.sublun_bytes], p, key=jax.random.key(key))


def _log_of(r):
    m = r["move_sub"].values[0] >= 0
    g = lambda v: r[v].values[0][m]
    return (g("move_sub"), g("move_up"), g("move_queued_s"), g("move_start_s"), g("move_copy_end_s"),
            g("move_sync_end_s"))


# ----------------------------------------------------------------------------- invariants

def _check_invariants(ds, p, cap=CAP):
    r = _run(ds, p, cap)
    sub, up, tq, ts, tc, te = _log_of(r)
    # moves start in queue order (FIFO), each after it was queued, copy before sync
    started = np.isfinite(ts)
    assert np.all(np.diff(ts[started]) >= 0) and np.all(started[:started.sum()])
    assert np.all(ts[started] >= tq[started]) and np.all(tc[started] >= ts[started])
    assert np.all(te[started] >= tc[started])
    # one move at a time: copy/sync windows do not overlap
    assert np.all(ts[started][1:] >= te[started][:-1] - 1e-9)
    # the SSD never holds more than its sub-LUNs: promoted-and-arrived plus arriving, at every event
    events = np.unique(np.r_[ts[started], te[np.isfinite(te)]])
    for x in events:
        arrived = np.sum(up & (te <= x)) - np.sum(~up & (te <= x))
        arriving = np.sum(up & (ts <= x) & (te > x))
        assert arrived + arriving <= cap
    # a sub-LUN is demoted only after it was promoted, and moves of one sub-LUN alternate up/down
    for s in np.unique(sub):
        seq = up[sub == s]
        assert seq[0] and np.all(seq[1:] != seq[:-1])
    # buffer: writes to a sub-LUN while it copies are served by the buffer
    rt = r["route"].values[0]
    tt, w, rs = ds["time"].values, ds["is_write"].values, ds["offset"].values // SUB
    for m in np.flatnonzero(started & np.isfinite(tc)):
        inside = (rs == sub[m]) & (tt >= ts[m]) & (tt < tc[m]) & w
        assert np.all(rt[inside] == 2)
    # SSD hits are requests served by the SSD; the counts add up
    assert int(r["hits"][0]) == int((rt == 1).sum())
    assert 0 <= float(r["hit_ratio"][0]) + float(r["buffer_ratio"][0]) <= 1
    return sub, up


@pytest.mark.parametrize("seed,n,cap", [(0, 400, 1), (1, 250, 2), (2, 400, 4), (3, 150, 4)])
def test_invariants(seed, n, cap):
    """FIFO moves, one at a time, never more sub-LUNs on the SSD than it holds, alternating moves, writes to
    a moving sub-LUN in the buffer, for a few loads and SSD sizes (the decisions and timings themselves are
    checked request by request against a SimPy model in tests/test_otf_engine.py)."""
    _check_invariants(_trace(seed, n), oa.OtfAstParams(**SMALL), cap)


def test_invariants_eviction_and_history_readings():
    """f2 (evict the resident with the largest timeout count) and c2 (c hot intervals among the last m):
    the same invariants, and f2 does evict when candidates wait."""
    evicted = 0
    p = oa.OtfAstParams(**{**SMALL, "m_window": 4, "copy_share_floor": 0.5}, full_policy="evict_max_timeout",
                        c_reading="within_m")
    for seed in range(4):
        sub, up = _check_invariants(_trace(seed, 400, hot_share=0.9), p, cap=2)
        evicted += int((~up).sum())
    assert evicted > 0


def test_fig6_resident_count_follows_the_move_log():
    ds = _trace(5, 400)
    r = _run(ds, oa.OtfAstParams(**SMALL))
    sub, up, tq, ts, tc, te = _log_of(r)
    res = r["resident_per_minute"].values[0]
    for m, x in enumerate(np.arange(res.size) * 60.0):
        assert res[m] == np.sum(up & (te <= x)) - np.sum(~up & (te <= x))


# ----------------------------------------------------------------------------- monitoring readings

def _cnt_matrix(seed):
    rng = np.random.default_rng(seed)
    return rng.poisson(rng.gamma(0.3, 20, (6, S)))


@pytest.mark.parametrize("seed", range(4))
def test_hot_matrix_readings_match_brute_force(seed):
    cnt = _cnt_matrix(seed)
    base = dict(lun_subluns=S, n_top=3, i_pct=50.0)
    hot, conc = oa.hot_matrix(cnt, oa.OtfAstParams(**base))
    for k in range(cnt.shape[0]):
        assert set(np.flatnonzero(hot[k])) == _hot_plain(cnt[k].tolist(), 3, 50.0)
    # n2: the smallest prefix reaching i %, concentrated when it has at most n members
    hot2, _ = oa.hot_matrix(cnt, oa.OtfAstParams(**base, hot_rule="prefix_to_i"))
    for k in range(cnt.shape[0]):
        order = sorted(range(S), key=lambda s: (-cnt[k, s], s))
        tot, acc, pre = cnt[k].sum(), 0, []
        for s in order:
            if acc >= 0.5 * tot:
                break
            pre.append(s)
            acc += cnt[k, s]
        exp = set(pre) if tot > 0 and len(pre) <= 3 else set()
        assert set(np.flatnonzero(hot2[k])) == {s for s in exp if cnt[k, s] > 0}
    # n3: n as a percentage of the sub-LUNs (25 % of 12 = 3) equals n1 with n = 3
    hot3, _ = oa.hot_matrix(cnt, oa.OtfAstParams(**{**base, "n_top": 25}, hot_rule="pct_of_subluns"))
    np.testing.assert_array_equal(hot3, hot)
    # m3: a hot sub-LUN needs at least m IOs; m2: the interval needs at least m IOs
    hot_m3, _ = oa.hot_matrix(cnt, oa.OtfAstParams(**base, m_reading="sublun_floor", m_window=5))
    np.testing.assert_array_equal(hot_m3, hot & (cnt >= 5))
    hot_m2, _ = oa.hot_matrix(cnt, oa.OtfAstParams(**base, m_reading="total_floor", m_window=40))
    np.testing.assert_array_equal(hot_m2, hot & (cnt.sum(axis=1) >= 40)[:, None])
    # i2: a top-n sub-LUN with at least i IOs
    hot_i2, _ = oa.hot_matrix(cnt, oa.OtfAstParams(**{**base, "i_pct": 7.0}, i_reading="absolute"))
    for k in range(cnt.shape[0]):
        order = sorted(range(S), key=lambda s: (-cnt[k, s], s))[:3]
        assert set(np.flatnonzero(hot_i2[k])) == {s for s in order if cnt[k, s] >= 7}


def test_interval_counts_window():
    t = np.array([0.5, 9.9, 10.0, 15.0, 19.99, 25.0])
    sub = np.array([0, 1, 1, 2, 2, 0])
    c = oa.interval_counts(sub, t, 3, 10, 10, 3)
    np.testing.assert_array_equal(c, [[1, 1, 0], [0, 1, 2], [1, 0, 0]])
    c2 = oa.interval_counts(sub, t, 3, 10, 20, 3)            # m = 2 t: the last 20 s
    np.testing.assert_array_equal(c2, [[1, 1, 0], [1, 2, 2], [1, 1, 2]])


# ----------------------------------------------------------------------------- baselines

def test_static_tiering_places_the_previous_windows_top_k():
    rng = np.random.default_rng(8)
    n = 3000
    t = np.sort(rng.uniform(0, 240, n))
    sub = np.where(t < 120, rng.choice(S, n, p=np.arange(1, S + 1) / np.arange(1, S + 1).sum()), rng.integers(0, S, n))
    off = sub * SUB + rng.integers(0, 200, n) * 4096
    ds = make_dataset(t, off, np.full(n, 4096), rng.random(n) < 0.5, name="s", source="test",
                      replay_start_s=120.0, replay_end_s=240.0)
    p = oa.StaticTieringParams(lun_subluns=S, sublun_bytes=SUB)
    r = oa.static_tiering(ds, [3 * SUB, 5 * SUB], p, key=jax.random.key(0))
    train = np.bincount(sub[t < 120], minlength=S)
    for j, k in enumerate((3, 5)):
        top = sorted(range(S), key=lambda s: (-train[s], s))[:k]
        assert set(np.flatnonzero(r["placed"].values[j])) == set(top)
        rep = sub[t >= 120]
        assert float(r["hit_ratio"][j]) == pytest.approx(np.isin(rep, top).mean())
    with pytest.raises(ValueError, match="replay_start_s"):
        oa.static_tiering(_trace(0, 50), [SUB], p)


def _lru_writeback_plain(keys, writes, cap, dcap):
    """OrderedDict LRU with write-back; the dirty set is the dcap most recently written cached blocks."""
    cache, dirty = OrderedDict(), OrderedDict()
    hit, dhit = [], []
    for k, w in zip(keys, writes):
        h = k in cache
        hit.append(h)
        dhit.append(bool(w and h and k in dirty))
        cache[k] = True
        cache.move_to_end(k)
        if len(cache) > cap:
            old, _ = cache.popitem(last=False)
            dirty.pop(old, None)
        if w:
            dirty[k] = True
            dirty.move_to_end(k)
            if len(dirty) > dcap:
                dirty.popitem(last=False)
    return np.array(hit), np.array(dhit)


@pytest.mark.parametrize("passes", [1, 2])
def test_flashcache_hits_and_dirty_write_hits_match_a_plain_lru(passes):
    rng = np.random.default_rng(12 + passes)
    n = 2500
    t = np.sort(rng.uniform(0, 100, n))
    blocks = rng.zipf(1.3, n) % 400
    off = blocks * 4096
    off[::50] += 512                                  # unaligned: FlashCache's uncached path
    w = rng.random(n) < 0.6
    ds = make_dataset(t, off, np.full(n, 4096), w, name="f", source="test")
    cap_blocks = 100
    p = oa.FlashCacheParams(lun_subluns=S, sublun_bytes=SUB, pass_number=passes, dirty_thresh_pct=20.0)
    r = oa.flashcache(ds, [cap_blocks * 4096], p, key=jax.random.key(0))
    ok = off % 4096 == 0
    keys = np.tile(blocks[ok], passes)
    ws = np.tile(w[ok], passes)
    hit, dhit = _lru_writeback_plain(keys.tolist(), ws.tolist(), cap_blocks, 20)
    m = ok.sum()
    assert int(r["hits"][0]) == int(hit[-m:].sum())
    # the dirty set here is the 20 most recently written blocks (FlashCache cleans beyond 20 %)
    assert int(r["dirty_write_hits"][0]) == int(dhit[-m:].sum())
    assert int(r["uncacheable"][0]) == int((~ok).sum())


def test_flashcache_dense_ids_are_first_appearance_ids_and_the_reused_table_is_left_clean():
    """FlashCache relabels block keys through one table per thread, kept between calls: each call's ids must be
    the first-appearance numbering (brute force), whatever an earlier call left, and the table all -1 after."""
    import importlib

    fc = importlib.import_module("tieringlab.policies.otf_ast.flashcache")  # the module, not the function

    rng = np.random.default_rng(5)
    for top in (300, 5000, 40):          # the second call grows the table, the third reuses the larger one
        keys = rng.integers(0, top, 3000)
        first: dict[int, int] = {}
        want = np.array([first.setdefault(int(k), len(first)) for k in keys], np.int32)
        ids, n = fc._dense_ids(keys)
        np.testing.assert_array_equal(ids, want)
        assert n == len(first)
        assert fc._TABLES.table.size >= 5000 or top < 5000
        assert (fc._TABLES.table == -1).all()


def test_flashcache_stamp_lru_makes_the_list_lrus_decisions():
    """FlashCache's block LRU (access stamps and a sweep pointer) against the project's linked-list LRU
    (lru.native_loop) over three back-to-back replays: the same hit and dirty-eviction flags on every access, for
    caches from one block to more than the distinct blocks."""
    import importlib

    from tieringlab.policies import lru
    from tieringlab.policies._arraylist import native_state

    fc = importlib.import_module("tieringlab.policies.otf_ast.flashcache")
    rng = np.random.default_rng(7)
    for n, n_ids, cap, write_share in ((1, 1, 1, 1.0), (500, 40, 1, 0.5), (2000, 300, 37, 0.3), (2000, 300, 299, 0.9),
                                       (1500, 120, 400, 0.6)):
        ids = (rng.zipf(1.3, n) % n_ids).astype(np.int32)
        w = rng.random(n) < write_share
        got = fc._lru_passes(ids, n_ids, w, cap, (1, 2, 3))
        state = native_state(n_ids)
        for q in (1, 2, 3):
            hit, wb = np.zeros(n, bool), np.zeros(n, bool)
            lru.native_loop(ids, w, cap, *state, hit, wb)
            np.testing.assert_array_equal(got[q][0], hit)
            np.testing.assert_array_equal(got[q][1], wb)


def test_flashcache_cleaning_writes_merge_contiguous_blocks_by_hand():
    """The cleaning writes' kernel: evictions whose victim precedes the stream are skipped; a cleaned block right
    after the one cleaned before joins its write, at most ``merge`` blocks per write, the write timed at its first
    block's eviction."""
    import importlib

    fc = importlib.import_module("tieringlab.policies.otf_ast.flashcache")
    B = 4096
    keys = np.array([5, 6, 7, 8, 20, 9, 10], np.int64)        # block of each (cacheable) access
    wpos = np.arange(7, dtype=np.int64)                       # every access a write
    ridx = np.arange(7, dtype=np.int64)
    ci = np.arange(7, dtype=np.int64)
    t = np.arange(7, dtype=np.float64) * 10.0
    # evictions at writes 2..6 of the second pass (nw = 7) cleaning the writes 3 earlier, and one with no victim
    ev = np.array([1, 9, 10, 11, 12, 13], np.int64)
    victim = ev - 3
    out = [np.empty(6, np.float64), np.empty(6, np.int64), np.empty(6, np.int64)]
    m = fc._cleaning_writes(ev, victim, 7, wpos, ridx, ci, t, keys, B, 2, *out)
    # victims 6, 7, 8, 9, 10 -> blocks 10, 5, 6, 7, 8: runs [10], [5, 6, 7, 8] cut at 2 blocks
    assert m == 3
    np.testing.assert_array_equal(out[1][:m], np.array([10, 5, 7]) * B)
    np.testing.assert_array_equal(out[2][:m], np.array([1, 2, 2]) * B)
    np.testing.assert_array_equal(out[0][:m], [20.0, 30.0, 50.0])     # the first block's eviction (ev % 7) x 10 s


def test_flashcache_pass2_is_the_second_replay_of_the_same_window():
    ds = _trace(3, 2000)
    base = dict(lun_subluns=S, sublun_bytes=SUB)
    one = registry.run("FlashCache", ds, [2 * SUB], knobs=base, key=jax.random.key(0))
    two = registry.run("FlashCache pass 2", ds, [2 * SUB], knobs=base, key=jax.random.key(0))
    assert int(two["hits"][0]) >= int(one["hits"][0])
    assert two.attrs["policy"] == "FlashCache pass 2" and one.attrs["policy"] == "FlashCache"
    # both passes from one replay of the block LRU (the experiment's sharing): each identical to its own call
    both = flashcache_passes(ds, [2 * SUB], oa.FlashCacheParams(**base), key=jax.random.key(0), passes=(1, 2))
    assert both[1].identical(one) and both[2].identical(two)


def test_copy_share_floor_does_not_reach_the_closed_loop_engine():
    """copy_share_floor stays a field only for the replaced fluid engine (.engine, the benchmarks' "before"):
    OTF-AST's result (routes, responses, moves) is the same at its two ends."""
    ds = _trace(5, 800)
    lo, hi = (registry.run("OTF-AST", ds, [CAP * SUB], params=oa.OtfAstParams(**{**SMALL, "copy_share_floor": f}),
                           key=jax.random.key(0)) for f in (0.01, 1.0))
    assert int(lo["promotions"][0]) >= 1
    for v in ("route", "response_s", "move_start_s", "move_sync_end_s"):
        np.testing.assert_array_equal(lo[v].values, hi[v].values)


def test_hdd_only_and_registry():
    ds = _trace(4, 300)
    r = registry.run("HDD only", ds, [0, CAP * SUB], knobs=dict(lun_subluns=S, sublun_bytes=SUB), key=jax.random.key(0))
    assert np.all(r["hits"].values == 0) and np.all(r["route"].values == 0)
    for name in SYSTEMS:
        assert registry.get(name).kind == "trace"
    with pytest.raises(ValueError, match="skip_demotion_copy"):
        registry.run("OTF-AST", ds, [SUB], params=oa.OtfAstParams(**SMALL, skip_demotion_copy=True),
                     key=jax.random.key(0))


def test_paper_defaults():
    p = oa.OtfAstParams()
    assert (p.t_s, p.i_pct, p.n_top, p.m_window, p.c_intervals, p.o_intervals) == (60, 50.0, 20, 60, 3, 10)
    assert (p.lun_subluns, p.sublun_bytes) == (300, GiB) and p.copy_s == (2.5, 6.5)
    assert oa.OtfAstParams(copy_unit="minutes").copy_s == (150.0, 390.0)
    f = oa.FlashCacheParams()
    assert f.block_bytes == 4 * KiB


# ----------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("kw,match", [
    (dict(n_top=301), r"n_top \(n\) must be an integer in \[1, 300\]"),
    (dict(n_top=0), r"n_top"),
    (dict(c_intervals=0), r"OtfAstParams\.c_intervals: expected an integer >= 1"),
    (dict(i_pct=0.0), r"i_pct \(i\) must be in \(0, 100\]"),
    (dict(i_pct=100.5), r"i_pct \(i\) must be in \(0, 100\]"),
    (dict(o_intervals=0), r"o_intervals"),
    (dict(t_s=0), r"t_s"),
    (dict(hot_rule="top"), r"OtfAstParams\.hot_rule: expected one of 'top_n', 'prefix_to_i', 'pct_of_subluns'"),
    (dict(m_reading="x"), r"OtfAstParams\.m_reading: expected one of 'window', 'total_floor'"),
    (dict(copy_unit="hours"), r"copy_unit"),
    (dict(move_concurrency=0), r"move_concurrency"),
])
def test_bad_parameters_name_the_parameter(kw, match):
    with pytest.raises(ValueError, match=match):
        oa.OtfAstParams(**kw)


def test_bad_capacity_and_trace():
    ds = _trace(0, 50)
    p = oa.OtfAstParams(**SMALL)
    with pytest.raises(ValueError, match="capacities: an SSD of .* is larger than the LUN"):
        oa.otf_ast(ds, [(S + 1) * SUB], p)
    with pytest.raises(ValueError, match="capacities"):
        oa.flashcache(ds, [(S + 1) * SUB], oa.FlashCacheParams(lun_subluns=S, sublun_bytes=SUB))
    big = make_dataset([0.0], [S * SUB], [4096], [False], name="b", source="test")
    with pytest.raises(ValueError, match="beyond the LUN"):
        oa.otf_ast(big, [SUB], p)


def test_flashcache_cleaning_merges_contiguous_dirty_blocks():
    """A sequential write stream: every write beyond the dirty threshold cleans the block written
    d_cap writes earlier; contiguous cleaned blocks merge into writes of at most 128 KiB (32 blocks)."""
    n = 1000
    ds = make_dataset(np.arange(n) * 0.01, np.arange(n) * 4096, np.full(n, 4096), np.ones(n, bool),
                      name="seq", source="test")
    p = oa.FlashCacheParams(lun_subluns=S, sublun_bytes=SUB, dirty_thresh_pct=20.0)
    r = oa.flashcache(ds, [100 * 4096], p, key=jax.random.key(0))
    assert int(r["md_writes"][0]) == n - 20                  # every block beyond the 20 dirty ones is cleaned
    assert int(r["cleaning_writes"][0]) == -(-(n - 20) // 32)
    assert int(r["hits"][0]) == 0 and int(r["dirty_write_hits"][0]) == 0


# ----------------------------------------------------------------------------- declared once; the trace contract

def test_every_field_is_declared_once_with_its_source():
    """Each system's parameters are the shared measurement and its own settings: every field a ``param`` with
    its source, none declared twice (a setting's class and the system's share the declaration)."""
    import dataclasses

    for cls in (oa.MeasureParams, oa.OtfAstSettings, oa.StaticTieringSettings, oa.FlashCacheSettings,
                oa.OtfAstParams, oa.StaticTieringParams, oa.FlashCacheParams, oa.HddOnlyParams):
        for f in dataclasses.fields(cls):
            assert f.metadata.get("doc"), (cls.__name__, f.name)
    own = {f.name for f in dataclasses.fields(oa.OtfAstParams)} - {f.name for f in dataclasses.fields(oa.MeasureParams)}
    assert own == {f.name for f in dataclasses.fields(oa.OtfAstSettings)} | {"skip_demotion_copy"}
    shared = oa.OtfAstSettings.__dataclass_fields__["t_s"].metadata
    assert oa.OtfAstParams.__dataclass_fields__["t_s"].metadata is shared


@pytest.mark.parametrize("kw,match", [
    (dict(t_s="60"), r"OtfAstParams\.t_s: expected an integer in \[1, 3600\] \(s\), got '60'"),
    (dict(le_cut_s=0.0), r"OtfAstParams\.le_cut_s: expected a number in \[0\.001, 10\.0\] \(s\)"),
    (dict(sublun_bytes=4096 + 512), r"sublun_bytes must be a positive multiple of 4096 bytes"),
    (dict(hist_lo_s=2.0), r"hist_lo_s must be < hist_hi_s"),
    (dict(copy_share_floor=0.0), r"OtfAstParams\.copy_share_floor: expected a number in \[0\.01, 1\.0\]"),
])
def test_declared_bounds_check_a_policy_built_in_python(kw, match):
    with pytest.raises(ValueError, match=match):
        oa.OtfAstParams(**kw)
    with pytest.raises(ValueError, match=r"FlashCacheParams\.dirty_thresh_pct: expected a number in \[1\.0, 100\.0\]"):
        oa.FlashCacheParams(dirty_thresh_pct=0.0)
    with pytest.raises(ValueError, match=r"block_bytes must be a positive multiple of 512"):
        oa.FlashCacheSettings(block_bytes=1000)
    with pytest.raises(ValueError, match=r"StaticTieringParams\.rank_by: expected one of 'requests', 'bytes'"):
        oa.StaticTieringParams(rank_by="iops")


@pytest.mark.parametrize("name", SYSTEMS)
def test_trace_contract(name):
    """Every system here is a trace system: it checks its trace with the contract's check_trace first, and its
    result carries attrs ``policy`` (the registry name) and ``source`` over the capacity dimension."""
    rng = np.random.default_rng(2)
    n = 400
    t = np.sort(rng.uniform(0, 240, n))
    ds = make_dataset(t, rng.integers(0, S, n) * SUB, np.full(n, 4096), rng.random(n) < 0.3, name="c",
                      source="test", replay_start_s=120.0, replay_end_s=240.0)
    knobs = dict(lun_subluns=S, sublun_bytes=SUB, **({"n_top": 3} if name.startswith("OTF") else {}))
    r = registry.run(name, ds, [SUB, 2 * SUB], knobs=knobs, key=jax.random.key(0))
    assert r.attrs["policy"] == name and r.attrs["source"].startswith("OTF-AST paper")
    assert r.sizes["capacity_bytes"] == 2 and r["requests"].values.tolist() == [int(((t >= 120) & (t < 240)).sum())] * 2
    empty = ds.isel(request=slice(0, 0))
    with pytest.raises(ValueError, match="has no requests"):
        registry.run(name, empty, [SUB], knobs=knobs, key=jax.random.key(0))
    bad = ds.assign(time=("request", ds["time"].values[::-1].copy()))
    with pytest.raises(ValueError, match="time"):
        registry.run(name, bad, [SUB], knobs=knobs, key=jax.random.key(0))


def test_per_set_cleaning_matches_a_per_set_lru_and_one_set_is_the_global_rule():
    """cleaning='per_set': each set's dirty blocks are an LRU of ways x dirty_thresh_pct blocks over its writes
    (brute force: an OrderedDict per set): the same dirty hits and the same cleaning events; with one set of all
    the cache's blocks, FlashCache's result equals the global rule's."""
    from tieringlab.policies.otf_ast.flashcache import _per_set_dirty

    rng = np.random.default_rng(3)
    keys = rng.integers(0, 64, 3000) + 1000 * rng.integers(0, 3, 3000)
    p = oa.FlashCacheParams(set_ways=16, dirty_thresh_pct=25.0, cleaning="per_set")
    cap_blocks = 64                                    # 4 sets of 16 ways, 4 dirty blocks per set
    whit, ev, victim = _per_set_dirty(keys, cap_blocks, p)
    lru = [OrderedDict() for _ in range(4)]
    want_hit, want_ev = [], []
    for i, k in enumerate(keys.tolist()):
        od = lru[(k // 16) % 4]
        if k in od:
            od.move_to_end(k)
            want_hit.append(True)
            continue
        want_hit.append(False)
        if len(od) >= 4:
            od.popitem(last=False)
            want_ev.append(i)
        od[k] = True
    assert whit.tolist() == want_hit
    assert ev.tolist() == want_ev and len(want_ev) > 100
    assert np.all((keys[victim] // 16) % 4 == (keys[ev] // 16) % 4) and np.all(victim < ev)
    ds = _trace(4, 400, write_share=0.6)
    cap = [8 * 4096 * 16]
    base = dict(lun_subluns=S, sublun_bytes=SUB, dirty_thresh_pct=20.0)
    g = oa.flashcache(ds, cap, oa.FlashCacheParams(**base), key=jax.random.key(0))
    one = oa.flashcache(ds, cap, oa.FlashCacheParams(**base, cleaning="per_set", set_ways=8 * 16),
                        key=jax.random.key(0))
    for v in ("response_s", "request_hit", "dirty_write_hits", "cleaning_writes"):
        np.testing.assert_array_equal(g[v].values, one[v].values)
    assert int(g["cleaning_writes"][0]) > 0
