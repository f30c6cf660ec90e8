"""Invariants of every trace policy in the registry (tieringlab.policies.registry.run), on random traces.

For each system registered with kind "trace" (LRU, ARC, CAR, vFRM, G1-vFRM, G2-vFRM, and any added later):

- the contract's counts: ``requests`` = the trace's requests, ``0 <= hits <= requests``, ``hit_ratio =
  hits / requests`` in [0, 1], non-negative operation counts;
- **the fast tier never holds more than its capacity** (in the policy's units: 4 KB pages, 1 MB bins):
  * demand caches (a ``request_hit`` per request): in any window of consecutive requests, the units whose
    first access in the window is part of a hit were resident when the window began (a demand cache admits
    a unit only when it is accessed), so there are at most ``capacity`` of them;
  * epoch placement (vFRM family: ``move_ins`` / ``move_outs``, no flush at the end of the trace): the units
    resident at the end of every prefix of whole epochs, ``move_ins - move_outs`` of that prefix, are
    between 0 and ``capacity``;
  * sub-LUN tiering (OTF-AST family: a request goes to the tier of its first byte's sub-LUN): the sub-LUNs
    resident on the SSD, at every minute and every monitoring interval (``resident_per_minute``,
    ``interval_resident``) or for the whole replay (``placed``), number between 0 and ``capacity``; run with
    1 MiB sub-LUNs on a 32 MiB LUN (``SUBLUN_KNOBS``) so the random capacities hold some;
  * no fast tier ("HDD only"): no request hits and none is served by the SSD;
  * a request spanning more units than the fast tier holds never hits (not for sub-LUN routing by the first
    byte, where a request is not split at sub-LUN boundaries);
- **LRU inclusion across sizes** (Mattson et al. 1970, LRU is a stack algorithm): a request that hits at
  one size hits at every larger size.
"""

from __future__ import annotations

import dataclasses

import jax
import numpy as np
import pytest
import xarray as xr
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tieringlab.policies import registry
from tieringlab.traces import make_dataset
from tieringlab.units import PAGE_BYTES, MiB

TRACE_POLICIES = registry.names("trace")


#: 1 MiB sub-LUNs on a 32 MiB LUN for the sub-LUN systems (paper: 1 GiB of 300 GiB), so that the random
#: capacities below (4 KiB .. 16 MiB) hold 0 to 16 sub-LUNs and the trace's offsets (< 16 MiB) fit the LUN.
SUBLUN_KNOBS = {"sublun_bytes": MiB, "lun_subluns": 32}


def is_sublun_system(name: str) -> bool:
    return "sublun_bytes" in {f.name for f in dataclasses.fields(registry.get(name).params_type)}


def routes_by_first_byte(name: str) -> bool:
    """OTF-AST, its variants, static tiering and HDD only route a request by its first byte's sub-LUN;
    FlashCache (same measurement params) is a 4 KiB block cache."""
    return is_sublun_system(name) and not name.startswith("FlashCache")


def unit_bytes(res: xr.Dataset) -> int:
    for k in ("page_bytes", "bin_bytes", "block_bytes", "sublun_bytes"):
        if k in res.attrs:
            return int(res.attrs[k])
    raise AssertionError(f"{res.attrs.get('policy')}: the result names no unit (page_bytes or bin_bytes)")


def run(name, ds, caps):
    spec = registry.get(name)
    knobs = SUBLUN_KNOBS if is_sublun_system(name) else None
    return registry.run(name, ds, caps, knobs=knobs, key=jax.random.key(0) if spec.random else None)


def replayed(ds: xr.Dataset, res: xr.Dataset) -> int:
    """Requests the policy replayed: the whole trace, or the window [replay_start_s, + replay_length_s)."""
    t = ds["time"].values
    if "replay_start_s" not in res.attrs:
        return t.size
    start = float(res.attrs["replay_start_s"])
    lo, hi = np.searchsorted(t, [start, start + float(res.attrs["replay_length_s"])], side="left")
    return int(hi - lo)


@st.composite
def traces(draw):
    """A small two-VM trace over a 12 MB volume: requests of 512 B to 3 MB, times non-decreasing over a few
    300 s epochs (vFRM's default), 40 % writes. Offsets on 4 KB pages or 512 B sectors."""
    n = draw(st.integers(1, 50))
    unit = draw(st.sampled_from([PAGE_BYTES, 512]))
    off = np.asarray(draw(st.lists(st.integers(0, 12 * MiB // unit), min_size=n, max_size=n))) * unit
    size = np.asarray(draw(st.lists(st.sampled_from([512, 4096, 8192, 3 * 4096, MiB + 512, 3 * MiB]),
                                    min_size=n, max_size=n)))
    gaps = np.asarray(draw(st.lists(st.sampled_from([0.0, 1.0, 40.0, 299.0, 700.0]), min_size=n, max_size=n)))
    writes = np.asarray(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    ds = make_dataset(np.cumsum(gaps) - gaps[0], off, size, writes, name="prop", source="twin")
    ds["vm"] = ("request", np.asarray(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))))
    return ds


CAPS = st.lists(st.sampled_from([4096, 3 * 4096, 64 * 4096, MiB, 2 * MiB, 5 * MiB, 16 * MiB]),
                min_size=1, max_size=3, unique=True).map(sorted)


def resident_at_window_start_bound(request_hit, ds, unit) -> int:
    """Max over windows [a, n) of the number of units whose first access in the window is by a hit request
    (each was resident when the window began: the demand-cache argument of the module docstring)."""
    off, size = ds["offset"].values, ds["size"].values
    per_req = [np.arange(o // unit, (o + s - 1) // unit + 1) for o, s in zip(off.tolist(), size.tolist())]
    units = np.concatenate(per_req)
    req = np.repeat(np.arange(len(per_req)), [len(u) for u in per_req])
    worst = 0
    for a in range(len(per_req)):
        s = int(np.searchsorted(req, a))
        _, first = np.unique(units[s:], return_index=True)   # each unit's first access in the window
        worst = max(worst, int(request_hit[req[s:][first]].sum()))
    return worst


@pytest.mark.parametrize("name", TRACE_POLICIES)
@settings(max_examples=15, deadline=None)
@given(ds=traces(), caps=CAPS)
def test_trace_policy_invariants(name, ds, caps):
    if name == "static tiering":   # it places the top sub-LUNs of the window before the replay: replay the second half
        t = ds["time"].values
        start = float(t[t.size // 2])
        assume(t.size >= 2 and np.any((t >= 2 * start - (t[-1] + 1e-9)) & (t < start)))
        ds = ds.assign_attrs(replay_start_s=start)
    res = run(name, ds, caps)
    n = replayed(ds, res)
    unit = unit_bytes(res)
    assert res["requests"].values.tolist() == [n] * len(caps)
    hits = res["hits"].values
    assert np.all((0 <= hits) & (hits <= n))
    np.testing.assert_array_equal(res["hit_ratio"].values, hits / n)
    for k in ("ssd_reads", "ssd_writes", "md_reads", "md_writes"):
        assert np.all(res[k].values >= 0), k
    cap_units = np.asarray(caps) // unit
    span = (ds["offset"].values + ds["size"].values - 1) // unit - ds["offset"].values // unit + 1
    if routes_by_first_byte(name):
        span = np.ones_like(span)   # routed by the first byte's sub-LUN
    for i, c in enumerate(cap_units):
        if np.all(span > c):  # no request fits: nothing can hit
            assert hits[i] == 0
    if name == "HDD only":   # no fast tier
        assert np.all(hits == 0) and not np.any(res["route"].values == 1)
    elif "resident_per_minute" in res or "placed" in res:   # sub-LUN tiering: SSD residency at every step
        resident = [res["placed"].sum("sublun")] if "placed" in res else [
            res["resident_per_minute"], res["interval_resident"]]
        resident = [r.sum("sublun") if "sublun" in r.dims else r for r in resident]
        for r in resident:
            r = r.values.reshape(len(caps), -1)
            assert np.all(r >= 0) and np.all(r <= cap_units[:, None]), (r.max(axis=1), cap_units)
    elif "request_hit" in res:  # a demand cache
        for i, c in enumerate(cap_units):
            rh = res["request_hit"].values[i]
            assert rh.sum() == hits[i]
            assert not np.any(rh & (span > c)), "a request larger than the cache hit"
            assert resident_at_window_start_bound(rh, ds, unit) <= c
    else:  # epoch placement: residency after every prefix of whole epochs
        assert "move_ins" in res and "move_outs" in res, f"{name}: no way to check its capacity"
        epoch_s = float(res.attrs.get("epoch_s", 300.0))
        t = ds["time"].values
        ends = np.flatnonzero(np.diff(np.floor((t - t[0]) / epoch_s)) > 0) + 1   # first request of each new epoch
        for end in [*ends.tolist()[-3:], n]:  # the last few epoch boundaries and the whole trace
            r = run(name, ds.isel(request=slice(0, end)), caps)
            resident = r["move_ins"].values - r["move_outs"].values
            assert np.all(resident >= 0) and np.all(resident <= cap_units), (end, resident, cap_units)


@settings(max_examples=40, deadline=None)
@given(ds=traces(), caps=st.lists(st.integers(1, 40), min_size=2, max_size=5, unique=True).map(sorted))
def test_lru_inclusion_across_sizes(ds, caps):
    res = run("LRU", ds, [c * PAGE_BYTES for c in caps])
    rh = res["request_hit"].values
    assert np.all(rh[:-1] <= rh[1:]), "LRU: a hit at a smaller size must be a hit at every larger size"
    assert np.all(np.diff(res["hits"].values) >= 0)


@pytest.mark.parametrize("name", [n for n in TRACE_POLICIES if not routes_by_first_byte(n)])
def test_requests_larger_than_the_fast_tier_never_hit(name):
    """Every request spans 3 units, repeated many times: a 2-unit fast tier can hold none of them whole."""
    n = 600
    unit = PAGE_BYTES if "vfrm" not in name.lower() else MiB
    off = np.tile([0, 8 * unit], n // 2)
    ds = make_dataset(np.arange(n) * 10.0, off, np.full(n, 3 * unit), np.zeros(n, bool), name="big",
                      source="twin")
    ds["vm"] = ("request", np.zeros(n, dtype=np.int64))
    res = run(name, ds, [2 * unit, 6 * unit])
    assert unit_bytes(res) == unit
    assert res["hits"].values[0] == 0                  # 2 units: never
    assert res["hits"].values[1] > 0                   # 6 units: both requests fit (the check can pass)


@pytest.mark.parametrize("name", ["OTF-AST", "OTF-AST without write-back"])
def test_sublun_tiering_residency_on_a_promoting_trace(name):
    """The random traces above are too sparse for OTF-AST to promote (c = 3 hot intervals of t = 60 s):
    a dense trace on two sub-LUNs (2 s apart, 2:1) does promote, and residency stays within the SSD."""
    n = 600
    t = np.arange(n) * 2.0
    ds = make_dataset(t, np.tile([0, 0, MiB], n)[:n], np.full(n, PAGE_BYTES), np.zeros(n, bool), name="dense",
                      source="twin")
    res = run(name, ds, [MiB, 4 * MiB])
    resident = res["resident_per_minute"].values
    assert resident.max() > 0, "nothing promoted: the residency check would not bite"
    assert np.all(resident >= 0) and np.all(resident.max(axis=1) <= [1, 4])
    assert np.all(res["interval_resident"].values.max(axis=1) <= [1, 4])
    assert np.all(res["hits"].values > 0)
