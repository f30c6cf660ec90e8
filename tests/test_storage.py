"""The OTF-AST testbed models (tieringlab.models.storage) against hand computations, closed forms,
plain reference implementations written here, the project's jitted FCFS and SimPy."""

from __future__ import annotations

from collections import OrderedDict

import jax
import numpy as np
import pytest
import simpy
from hypothesis import given, settings
from hypothesis import strategies as st

from tieringlab.models import queueing, storage
from tieringlab.units import MB, SUBLUN_BYTES, GiB, KiB, MiB

HDD = storage.Raid0Hdd()
TB = storage.Testbed()


# ----------------------------------------------------------------------------- striping

def _pieces_plain(hdd, offset, size):
    """Byte-walk reference: every stripe unit of every request, merged per (request, disk)."""
    out = {}
    for j, (o, s) in enumerate(zip(offset, size)):
        x = o
        while x < o + max(s, 1):
            k = x // hdd.stripe_bytes
            end = min(o + max(s, 1), (k + 1) * hdd.stripe_bytes)
            d = k % hdd.n_disks
            doff = (k // hdd.n_disks) * hdd.stripe_bytes + x - k * hdd.stripe_bytes
            lo, nb = out.get((j, d), (doff, 0))
            out[(j, d)] = (min(lo, doff), nb + end - x)
            x = end
    keys = sorted(out)
    return ([k[0] for k in keys], [k[1] for k in keys], [out[k][0] for k in keys], [out[k][1] for k in keys])


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2000), st.integers(1, 600)), min_size=1, max_size=12))
def test_raid0_pieces_match_byte_walk(reqs):
    hdd = storage.Raid0Hdd(stripe_bytes=4 * KiB)
    off = np.array([a * 512 for a, _ in reqs], np.int64)
    size = np.array([b * 512 for _, b in reqs], np.int64)
    got = storage.raid0_pieces(hdd, off, size)
    ref = _pieces_plain(hdd, off.tolist(), size.tolist())
    for g, r in zip(got, ref):
        assert g.tolist() == r
    # bytes are conserved
    assert int(got[3].sum()) == int(size.sum())


# ----------------------------------------------------------------------------- FIFO queues

def test_fifo_departures_equal_the_jitted_lindley_per_site():
    """Per server, the same departures as the project's jitted single-server FCFS (queueing module)."""
    rng = np.random.default_rng(3)
    n = 4000
    a = np.sort(rng.uniform(0, 100, n))
    a[100:110] = a[100]                                     # ties keep input order
    s = rng.exponential(0.08, n)
    site = rng.integers(0, 4, n)
    ours = storage.fifo_departures(a, s, site, 4)
    for k in range(4):
        m = site == k
        ref = np.asarray(queueing.fcfs_departure_times(a[m], s[m]))
        np.testing.assert_allclose(ours[m], ref, rtol=1e-12, atol=1e-12)


def test_fifo_departures_match_simpy():
    rng = np.random.default_rng(5)
    n = 600
    a = np.sort(rng.uniform(0, 50, n))
    s = rng.exponential(0.15, n)
    site = rng.integers(0, 3, n)
    env = simpy.Environment()
    servers = [simpy.Resource(env, capacity=1) for _ in range(3)]
    dep = np.empty(n)

    def job(i):
        with servers[site[i]].request() as req:
            yield req
            yield env.timeout(s[i])
        dep[i] = env.now

    def source():
        for i in range(n):
            yield env.timeout(a[i] - env.now)
            env.process(job(i))

    env.process(source())
    env.run()
    np.testing.assert_allclose(storage.fifo_departures(a, s, site, 3), dep, rtol=1e-9)


def test_fifo_md1_matches_pollaczek_khinchine():
    """Poisson arrivals, deterministic service: the mean response of M/D/1 (P-K)."""
    rng = np.random.default_rng(11)
    lam, svc, n = 0.7, 1.0, 400_000
    a = np.cumsum(rng.exponential(1 / lam, n))
    d = storage.fifo_departures(a, np.full(n, svc), np.zeros(n, np.int64), 1)
    ref = float(queueing.md1_mean_response(lam, svc))
    assert (d - a).mean() == pytest.approx(ref, rel=0.03)


# ----------------------------------------------------------------------------- HDD service and cache

def test_hdd_service_hand_computed():
    """Three pieces on disk 0: a random read, a sequential read after it, a random write far away."""
    h = storage.Raid0Hdd(cache_bytes=64 * KiB, cache_segment_bytes=64 * KiB)
    off = np.array([10 * MiB, 10 * MiB + 64 * KiB, 200 * MB], np.int64)
    nb = np.array([64 * KiB, 64 * KiB, 8 * KiB], np.int64)
    w = np.array([False, False, True])
    u = np.array([0.5, 0.9, 0.25])
    svc, hit = storage.hdd_service_times(h, np.array([0.0, 0.01, 0.02]), np.zeros(3, np.int64), off, nb, w, u)
    seek = lambda d: h.seek_min_s + (h.seek_max_s - h.seek_min_s) * np.sqrt(d / h.disk_bytes)
    rev = 60.0 / 10_000
    exp0 = seek(10 * MiB) + 0.5 * rev + 64 * KiB / h.media_bytes_per_s
    exp1 = 64 * KiB / h.seq_read_bytes_per_s                       # continues at the head: streaming
    exp2 = seek(200 * MB - (10 * MiB + 128 * KiB)) + 0.25 * rev + 8 * KiB / h.media_bytes_per_s + h.write_settle_s
    np.testing.assert_allclose(svc, [exp0, exp1, exp2], rtol=1e-12)
    assert not hit.any()


def test_hdd_read_cache_is_a_per_disk_lru_of_segments():
    """Cache hits against a plain per-disk LRU (OrderedDict) of segments fed by the reads in FIFO order."""
    h = storage.Raid0Hdd(cache_bytes=4 * 64 * KiB, cache_segment_bytes=64 * KiB)
    rng = np.random.default_rng(2)
    n = 3000
    t = np.sort(rng.uniform(0, 10, n))
    disk = rng.integers(0, 4, n)
    seg = rng.integers(0, 12, n)
    off = seg * 64 * KiB + rng.integers(0, 8, n) * 4 * KiB
    nb = np.full(n, 4 * KiB)
    w = rng.random(n) < 0.3
    _, hit = storage.hdd_service_times(h, t, disk, off, nb, w, rng.random(n))
    caches = [OrderedDict() for _ in range(4)]
    ref = np.zeros(n, bool)
    for i in np.lexsort((np.arange(n), t)):
        if w[i]:
            continue
        c, k = caches[disk[i]], seg[i]
        ref[i] = k in c
        c[k] = True
        c.move_to_end(k)
        if len(c) > 4:
            c.popitem(last=False)
    np.testing.assert_array_equal(hit, ref)


def test_no_load_copies_take_table1_times():
    """Table 1 (C13): a 1 GB sub-LUN copy with no user IO, through the queues, takes 2.5 s up and 6.5 s down
    (the closed form) plus at most the first chunk's seek and rotation."""
    assert storage.no_load_copy_s(TB, "up") == pytest.approx(2.5)
    assert storage.no_load_copy_s(TB, "down") == pytest.approx(6.5)
    for up, T in ((True, 2.5), (False, 6.5)):
        mv, t, off, nb, w = storage.copy_jobs(TB, [7], [100.0], [100.0 + T], [up])
        assert np.all(w == (not up)) and int(nb.sum()) == SUBLUN_BYTES
        r = storage.serve(TB, jax.random.key(0), time=np.zeros(0), offset=np.zeros(0, np.int64),
                          size=np.zeros(0, np.int64), is_write=np.zeros(0, bool), route=np.zeros(0, np.int64),
                          bg_hdd=dict(time=t, offset=off, size=nb, is_write=w))
        end = r["bg_hdd_departure"].max() - 100.0
        assert T <= end <= T + HDD.seek_max_s + 60.0 / HDD.rpm
    with pytest.raises(ValueError, match="direction"):
        storage.no_load_copy_s(TB, "sideways")


def test_from_table1_calibrates_streaming_rates():
    h = storage.Raid0Hdd.from_table1(copy_up_s=2.0, copy_down_s=7.0)
    assert h.seq_read_bytes_per_s * 4 * 2.0 == pytest.approx(GiB)
    assert h.seq_write_bytes_per_s * 4 * 7.0 == pytest.approx(GiB)
    with pytest.raises(ValueError, match="copy_up_s"):
        storage.Raid0Hdd.from_table1(copy_up_s=0.0)


# ----------------------------------------------------------------------------- SSD, buffer, serve

def test_ssd_4k_latency_and_bandwidth():
    ssd = storage.MlcSsd()
    s = storage.ssd_service_times(ssd, [4 * KiB, 4 * KiB, 512 * KiB], [False, True, False])
    assert s[0] == pytest.approx(100e-6) and s[1] == pytest.approx(80e-6)
    # channels jobs of 512 KiB in flight together stream at the device rate
    assert s[2] - ssd.fixed_s("read") == pytest.approx(512 * KiB * ssd.channels / ssd.read_bytes_per_s)
    with pytest.raises(ValueError, match="read_4k_s"):
        storage.MlcSsd(read_4k_s=1e-6)


def test_serve_lone_requests():
    """A lone IO costs driver + its device's service; a buffer IO costs buffer_s + driver."""
    t = np.array([0.0, 10.0, 20.0])
    off = np.array([0, 5 * GiB, 9 * GiB], np.int64)
    size = np.array([4 * KiB] * 3, np.int64)
    w = np.array([False, True, True])
    route = np.array([storage.SSD, storage.BUFFER, storage.HDD])
    r = storage.serve(TB, jax.random.key(1), time=t, offset=off, size=size, is_write=w, route=route)
    assert r["response_s"][0] == pytest.approx(TB.driver_s + 100e-6)
    assert r["response_s"][1] == pytest.approx(TB.driver_s + TB.buffer_s)
    lo = TB.driver_s + HDD.seek_min_s + 4 * KiB / HDD.media_bytes_per_s + HDD.write_settle_s
    assert lo <= r["response_s"][2] <= lo + HDD.seek_max_s + 60.0 / HDD.rpm


def test_serve_same_key_same_draws_across_routes():
    """Common random numbers: a request's rotational latency does not depend on what else is routed."""
    rng = np.random.default_rng(0)
    n = 50
    t = np.arange(n) * 1.0                       # 1 s apart: no queueing
    off = rng.integers(0, 200_000, n) * 4 * KiB
    size = np.full(n, 4 * KiB)
    w = np.zeros(n, bool)
    all_hdd = storage.serve(TB, jax.random.key(9), time=t, offset=off, size=size, is_write=w,
                            route=np.zeros(n, np.int64))
    route = np.where(np.arange(n) % 2 == 0, storage.HDD, storage.SSD)
    half = storage.serve(TB, jax.random.key(9), time=t, offset=off, size=size, is_write=w, route=route)
    # the rotational part is the same draw; only the seek (head position) may differ
    rot = lambda r: r["response_s"] - TB.driver_s
    diff = np.abs(rot(all_hdd) - rot(half))[route == storage.HDD]
    assert np.all(diff <= HDD.seek_max_s)


def test_busy_per_second_matches_discretisation():
    rng = np.random.default_rng(4)
    starts = np.sort(rng.uniform(0, 9, 40))
    dur = rng.uniform(0, 0.3, 40)
    ends = starts + dur
    ends[:-1] = np.minimum(ends[:-1], starts[1:])         # one server never overlaps itself
    got = storage.busy_per_second(starts, ends, np.zeros(40, np.int64), 1, 10)[0]
    grid = np.linspace(0, 10, 1_000_001)[:-1] + 5e-6
    busy = np.zeros(grid.size, bool)
    for a, b in zip(starts, ends):
        busy |= (grid >= a) & (grid < b)
    ref = busy.reshape(10, -1).mean(axis=1)
    np.testing.assert_allclose(got, ref, atol=2e-5)


def _buffer_plain(window, time, offset, size, is_write):
    written = {}
    out = np.zeros(len(window), bool)
    for i in np.lexsort((np.arange(len(window)), time)):
        if window[i] < 0:
            continue
        secs = set(range(offset[i] // 512, (offset[i] + size[i] - 1) // 512 + 1))
        have = written.setdefault(window[i], set())
        if is_write[i]:
            have |= secs
        else:
            out[i] = secs <= have
    return out


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(-1, 2), st.integers(0, 40), st.integers(1, 16), st.booleans()),
                min_size=1, max_size=40))
def test_buffer_read_hits_match_a_sector_set_reference(rows):
    """Sec. 3.3.2: a read is a buffer hit when every 512-B sector it reads was written in the same move."""
    window = np.array([r[0] for r in rows], np.int64)
    time = np.arange(len(rows), dtype=float)
    offset = np.array([r[1] * 512 for r in rows], np.int64)
    size = np.array([r[2] * 512 for r in rows], np.int64)
    w = np.array([r[3] for r in rows])
    np.testing.assert_array_equal(storage.buffer_read_hits(window, time, offset, size, w),
                                  _buffer_plain(window, time, offset, size, w))


def test_bad_device_parameters_name_the_field():
    with pytest.raises(ValueError, match="stripe_bytes"):
        storage.Raid0Hdd(stripe_bytes=0)
    with pytest.raises(ValueError, match="seek_max_s"):
        storage.Raid0Hdd(seek_max_s=1e-4)
    with pytest.raises(ValueError, match="sync_max_iops"):
        storage.Testbed(sync_max_iops=0)
