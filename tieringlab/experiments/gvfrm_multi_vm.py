"""notebooks/03_gvfrm_multi_vm.ipynb: GLB-vFRM (G1-vFRM) and G2-vFRM against LRU, ARC and CAR on the
multi-VM workloads cf4, cuf4 and all8 (vFRM paper Sec. 5.3, Fig. 8-9; thesis Sec. 4.3.3, Fig. 24-25).

The workloads (vFRM paper Sec. 5.3; thesis Sec. 4.3.3): "cf4" mixes the 4 cache-friendly traces, "cuf4"
the 4 cache-unfriendly ones and "all8" all 8, with the classification of vFRM Sec. 3.2 / Table 1
(= thesis Table 12): friendly mids0, src12, stg0, usr0; unfriendly stg1, usr2, web2, src21. One trace
is one VM; :func:`tieringlab.traces.mix_traces` aligns them to one start and gives each its own
address space.

For each (mix, policy), **one** call covers all flash sizes, by the policy's name through
:func:`tieringlab.policies.registry.run` (G1-vFRM and G2-vFRM of one mix share one binning of the trace,
:func:`tieringlab.policies.vfrm.binned`). The IO cost is vFRM Eq. 4 (:mod:`tieringlab.policies.iocost`:
128 KB Table 3 rows for the vFRM family, 4 KB for the page caches), normalized to LRU's at the same mix
and flash size for Fig. 9.

**Documented choices** (the papers are silent):

1. *Flash sizes*: Sec. 5.3 says "ranging from 1G to 32G"; the points are read as the powers of two
   1, 2, 4, 8, 16, 32 GB (six points, the sweep size of issue 5).
2. *One scale per mix*: a twin at scale ``s`` has ``s`` times the bytes and requests of the paper's
   trace (:mod:`tieringlab.traces.twins`), so the flash must shrink by the same ``s``. The members of
   a mix are therefore generated at one common scale, the smallest :func:`tieringlab.traces.effective_scale`
   of its members (``traces.scale`` capped by ``traces.max_wss_gb``), and every flash size of that
   mix is ``flash_gb x GB x s`` bytes. The VMs keep the paper's proportions to each other and to the
   flash. With ``traces.source: msr`` the scale is 1.
3. *λ per VM* (Eq. 2): one value for every VM, 1 by default (vFRM Sec. 5.2.1 sets λ = 1; Sec. 5.3
   names no per-VM value).
4. Epochs start at the mix's common start ``t = 0`` (vFRM paper Sec. 5.3: "a unified simulation
   start time").

Known limit: the vFRM family works on 1 MB bins whatever the twin scale, so at a small scale
(``traces.scale`` ~ 0.01, the notebook's fast defaults) a VM's hot set spans few bins and the flash
few bins; the curves at paper scale (``params.yaml``) are the reproduction.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from tieringlab.claims import gvfrm as C
from tieringlab.params import param, section
from tieringlab.policies import registry
from tieringlab.progress import progress
from tieringlab.traces.mix import mix_traces
from tieringlab.traces.source import effective_scale, load, section_dict
from tieringlab.traces.twins import TWINS
from tieringlab.units import BIN_BYTES, GiB

__all__ = ["GvfrmMultiVmParams", "CF4", "CUF4", "ALL8", "MIXES", "POLICIES", "FLASH_GB", "members", "mix_scale",
           "build_mix", "knobs", "sweep", "aging_sensitivity", "table", "cost_reduction", "g2_threshold_gb",
           "claim_values"]

#: vFRM Sec. 3.2 / Table 1 "Friendly" (thesis Table 12): mids0, src12, stg0, usr0 (MSR file names).
CF4 = ("mds_0", "src1_2", "stg_0", "usr_0")
#: vFRM Sec. 3.2 / Table 1 "Unfriendly": stg1, usr2, web2, src21.
CUF4 = ("stg_1", "usr_2", "web_2", "src2_1")
#: vFRM Sec. 5.3: "all 8 traces".
ALL8 = CF4 + CUF4
MIXES = ("cf4", "cuf4", "all8")
#: Fig. 8/9 (vFRM paper: GLB-vFRM = G1-vFRM) and thesis Fig. 24/25 (G1, G2), against LRU, ARC, CAR.
POLICIES = ("G1-vFRM", "G2-vFRM", "LRU", "ARC", "CAR")
CONVENTIONAL = ("LRU", "ARC", "CAR")
#: Sec. 5.3: "various Flash sizes ranging from 1G to 32G" (powers of two: documented choice 1).
FLASH_GB = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0)


@section("gvfrm_multi_vm")
@dataclass(frozen=True)
class GvfrmMultiVmParams:
    """Fig. 8/9 (vFRM paper) and Fig. 24/25 (thesis): mixes x policies x flash sizes."""

    uses = ("traces",)

    mixes: tuple[str, ...] = param(MIXES, "vFRM Sec. 5.3 / thesis Sec. 4.3.3: the workloads cf4, cuf4, all8",
                                   choices=MIXES)
    cf4: tuple[str, ...] = param(CF4, "vFRM Sec. 3.2, Table 1 'Friendly': mids0, src12, stg0, usr0 (one VM each)",
                                 choices=tuple(TWINS))
    cuf4: tuple[str, ...] = param(CUF4, "vFRM Sec. 3.2, Table 1 'Unfriendly': stg1, usr2, web2, src21",
                                  choices=tuple(TWINS))
    all8: tuple[str, ...] = param(ALL8, "vFRM Sec. 5.3: all 8 traces of Table 1", choices=tuple(TWINS))
    policies: tuple[str, ...] = param(POLICIES, "Fig. 8/9 (GLB-vFRM = G1-vFRM), thesis Fig. 24/25 (+ G2-vFRM); "
                                      "LRU is required (Fig. 9 normalizes to it)", choices=POLICIES)
    flash_gb: tuple[float, ...] = param(FLASH_GB, "Sec. 5.3: 1 to 32 GB; powers of two (documented choice), "
                                        "paper GB, multiplied by the mix's twin scale", bounds=(1e-3, 1e4))
    private_fraction: float = param(0.5, "vFRM Sec. 5.3: '50% of Flash space is assigned to each of these two "
                                    "zones'", bounds=(0.0, 1.0))
    aging_period: int = param(1, "G2-vFRM counter aging period in epochs (thesis Sec. 4.3.2 ages 'periodically' "
                              "without a period: one epoch, documented choice)", bounds=(1, 10000))
    lam: float = param(1.0, "λ of Eq. 2 for every VM (vFRM Sec. 5.2.1 sets λ = 1)", bounds=(1e-6, 1e6))
    epoch_s: float = param(300.0, "vFRM Sec. 4.4.2 / 5.1: 5-minute epochs", bounds=(1.0, 86400.0))
    n_epochs: int = param(8, "N of Eq. 1: 'the previous 8 epochs' (vFRM Sec. 4.3)", bounds=(6, 64))
    aging_periods: tuple[int, ...] = param((1, 12, 288), "extra, not a paper figure: G2-vFRM rerun with these "
                                           "aging periods (epochs: 5 min, 1 h, 1 day), since the thesis gives "
                                           "none", bounds=(1, 100000))

    def __post_init__(self):
        if "LRU" not in self.policies:
            raise ValueError(f"policies must include 'LRU' (Fig. 9 normalizes IO cost to LRU), got {self.policies}")
        for field in ("mixes", "policies", "flash_gb", "aging_periods"):
            vals = getattr(self, field)
            if len(set(vals)) != len(vals):
                raise ValueError(f"{field} must not repeat a value, got {vals}")
        for m in MIXES:
            vals = getattr(self, m)
            if len(set(vals)) != len(vals):
                raise ValueError(f"{m} must list distinct traces (one VM each), got {vals}")
        registry.make_params("G1-vFRM", knobs(self))  # N even >= 6, etc.: GvfrmParams raises naming the field


def knobs(p: GvfrmMultiVmParams, **overrides) -> dict:
    """The policy parameters this experiment sets (each registered policy takes the ones it has: G1/G2
    all of them, the page caches none, so they keep the paper's 4 KB lines)."""
    return {"epoch_s": p.epoch_s, "n_epochs": p.n_epochs, "lam": p.lam, "private_fraction": p.private_fraction,
            "aging_period": p.aging_period, **overrides}


def members(p: GvfrmMultiVmParams, mix: str) -> tuple[str, ...]:
    """The member traces (one VM each) of ``mix``."""
    if mix not in MIXES:
        raise ValueError(f"mix must be one of {list(MIXES)}, got {mix!r}")
    return getattr(p, mix)


def mix_scale(names, traces: Any = None) -> float:
    """The common twin scale of a mix (documented choice 2): the smallest effective scale of its members;
    1 for real traces (``traces.source: msr``)."""
    t = section_dict(traces)
    if t.get("source", "twin") != "twin":
        return 1.0
    return float(min(effective_scale(n, t) for n in names))


def build_mix(p: GvfrmMultiVmParams, mix: str, traces: Any = None, seed: int = 0) -> xr.Dataset:
    """The multi-VM trace of ``mix`` (vFRM Sec. 5.3): members at the mix's common scale, merged by
    :func:`tieringlab.traces.mix_traces`. ``attrs['scale']`` is that scale."""
    names = members(p, mix)
    t = section_dict(traces)
    s = mix_scale(names, t)
    tt = {**t, "scale": s, "max_wss_gb": 0.0} if t.get("source", "twin") == "twin" else t
    out = mix_traces([load(n, tt, seed) for n in names], name=mix, names=names)
    out.attrs["scale"] = s
    return out


def flash_bytes(p: GvfrmMultiVmParams, scale: float) -> np.ndarray:
    """Flash sizes in bytes at a mix's scale: ``flash_gb x GB x scale``."""
    return np.array([int(round(g * GiB * scale)) for g in p.flash_gb], dtype=np.int64)


def sweep(p: GvfrmMultiVmParams, traces: Any = None, seed: int = 0) -> xr.Dataset:
    """Fig. 8/9 (thesis Fig. 24/25): every (mix, policy, flash size) of ``p``.

    A progress bar runs over (mix, policy); each step is one registry call over all flash sizes. G1 and
    G2 of a mix share one binning (:func:`tieringlab.policies.vfrm.binned`). Returns a Dataset with dims
    ``(mix, policy, flash_gb)``: ``hit_ratio``, ``hits``, ``requests``, ``io_cost`` (s, Eq. 4),
    ``update_cost`` (its Flash-update part, s), ``io_cost_norm`` (``io_cost`` / LRU's at the same mix and
    flash size, Fig. 9); coords ``flash_bytes`` (mix, flash_gb) and ``scale`` (mix); and ``seconds``
    (mix, policy), the wall time of each engine call.
    """
    if not isinstance(p, GvfrmMultiVmParams):
        raise TypeError(f"p must be GvfrmMultiVmParams, got {type(p).__name__}")
    M, Pn, F = len(p.mixes), len(p.policies), len(p.flash_gb)
    names = ("hits", "requests", "hit_ratio", "io_cost", "update_cost")
    arr = {k: np.zeros((M, Pn, F), dtype=np.int64 if k in ("hits", "requests") else np.float64) for k in names}
    secs = np.zeros((M, Pn))
    fbs = np.zeros((M, F), dtype=np.int64)
    scales = np.zeros(M)
    n_req = np.zeros(M, dtype=np.int64)
    cur: dict = {}
    steps = [(i, j) for i in range(M) for j in range(Pn)]
    bar = progress(steps, total=len(steps), desc="mix x policy", unit="call")
    for i, j in bar:
        mix, pol = p.mixes[i], p.policies[j]
        if cur.get("mix") != mix:
            mixed = build_mix(p, mix, traces, seed)
            cur = {"mix": mix, "ds": mixed}
            scales[i] = mixed.attrs["scale"]
            fbs[i] = flash_bytes(p, scales[i])
            n_req[i] = mixed.sizes["request"]
        if hasattr(bar, "set_postfix_str"):
            bar.set_postfix_str(f"{mix} {pol}")
        t0 = time.perf_counter()
        r = registry.run(pol, cur["ds"], fbs[i], knobs=knobs(p))
        secs[i, j] = time.perf_counter() - t0
        for k in names:
            arr[k][i, j] = r[k].values
    dims = ("mix", "policy", "flash_gb")
    out = xr.Dataset(
        {k: (dims, v) for k, v in arr.items()},
        coords={"mix": list(p.mixes), "policy": list(p.policies), "flash_gb": np.asarray(p.flash_gb, float),
                "flash_bytes": (("mix", "flash_gb"), fbs), "scale": ("mix", scales),
                "n_requests": ("mix", n_req)},
        attrs={"private_fraction": p.private_fraction, "aging_period": p.aging_period, "lam": p.lam,
               "epoch_s": p.epoch_s, "n_epochs": p.n_epochs, "bin_bytes": BIN_BYTES, "seed": int(seed),
               "source": "vFRM paper Sec. 5.3 Fig. 8-9; thesis Sec. 4.3.3 Fig. 24-25",
               **{f"members_{m}": list(members(p, m)) for m in p.mixes}},
    )
    out["seconds"] = (("mix", "policy"), secs)
    out["io_cost_norm"] = out["io_cost"] / out["io_cost"].sel(policy="LRU")
    out["flash_gb"].attrs["units"] = "GB (paper scale; bytes = flash_gb x 2^30 x scale)"
    out["io_cost"].attrs["units"] = "s"
    out["update_cost"].attrs["units"] = "s"
    out["io_cost_norm"].attrs["long_name"] = "IO cost / LRU's IO cost (Fig. 9)"
    out["seconds"].attrs["units"] = "s (wall time of the engine call)"
    return out


def aging_sensitivity(p: GvfrmMultiVmParams, traces: Any = None, seed: int = 0) -> xr.Dataset:
    """G2-vFRM's hit ratio and IO cost for each aging period in ``p.aging_periods`` (dims
    ``aging_period, mix, flash_gb``), the same mixes and flash sizes as :func:`sweep`.

    Not a paper figure: the thesis (Sec. 4.3.2) ages the counters "periodically" to avoid overflow
    and gives no period, so this shows how much Fig. 24/25's G2 curves depend on that choice. One
    G2-vFRM call per (period, mix), all flash sizes in it (one binning of each mix for all periods).
    """
    A, M, F = len(p.aging_periods), len(p.mixes), len(p.flash_gb)
    hr = np.zeros((A, M, F))
    cost = np.zeros((A, M, F))
    steps = [(j, a) for j in range(M) for a in range(A)]
    cur: dict = {}
    for j, a in progress(steps, total=len(steps), desc="G2 aging x mix", unit="call"):
        mix = p.mixes[j]
        if cur.get("mix") != mix:
            mixed = build_mix(p, mix, traces, seed)
            cur = {"mix": mix, "fb": flash_bytes(p, mixed.attrs["scale"]), "ds": mixed}
        r = registry.run("G2-vFRM", cur["ds"], cur["fb"], knobs=knobs(p, aging_period=int(p.aging_periods[a])))
        hr[a, j], cost[a, j] = r["hit_ratio"].values, r["io_cost"].values
    dims = ("aging_period", "mix", "flash_gb")
    out = xr.Dataset({"hit_ratio": (dims, hr), "io_cost": (dims, cost)},
                     coords={"aging_period": list(p.aging_periods), "mix": list(p.mixes),
                             "flash_gb": np.asarray(p.flash_gb, float)},
                     attrs={"policy": "G2-vFRM", "epoch_s": p.epoch_s})
    out["aging_period"].attrs["units"] = f"epochs of {p.epoch_s:g} s"
    out["io_cost"].attrs["units"] = "s"
    return out


def table(res: xr.Dataset) -> pd.DataFrame:
    """Long table of a sweep: one row per (mix, policy, flash size), hit ratio in %, costs in s."""
    df = res[["hit_ratio", "io_cost", "update_cost", "io_cost_norm"]].to_dataframe().reset_index()
    df["hit_ratio_pct"] = 100.0 * df.pop("hit_ratio")
    keep = ["mix", "policy", "flash_gb", "flash_bytes", "scale", "hit_ratio_pct", "io_cost", "update_cost",
            "io_cost_norm"]
    return df[keep]


def cost_reduction(res: xr.Dataset, policy: str = "G1-vFRM") -> xr.DataArray:
    """``100 x (1 - cost / cost_LRU)`` in % over (mix, flash_gb): how far ``policy``'s IO cost falls below
    LRU's (vFRM Sec. 5.3: "decreased up to 65.29%")."""
    return 100.0 * (1.0 - res["io_cost_norm"].sel(policy=policy))


def g2_threshold_gb(res: xr.Dataset, mix: str, policy: str = "G2-vFRM") -> float:
    """The smallest flash size (paper GB) from which ``policy``'s hit ratio beats every conventional cache
    in the sweep at that size and at every larger size (thesis Sec. 4.3.3: "as long as the Flash size is
    larger than a threshold"); NaN when there is none."""
    conv = [c for c in CONVENTIONAL if c in res["policy"].values]
    if not conv:
        raise ValueError("the sweep has no conventional cache (LRU, ARC, CAR) to compare with")
    h = res["hit_ratio"].sel(mix=mix)
    beats = (h.sel(policy=policy) > h.sel(policy=conv).max("policy")).values
    tail = np.logical_and.accumulate(beats[::-1])[::-1]  # beats here and at every larger size
    idx = np.flatnonzero(tail)
    return float(res["flash_gb"].values[idx[0]]) if idx.size else float("nan")


def claim_values(res: xr.Dataset) -> dict[str, tuple[float | bool, str]]:
    """The reproduced value of each ledger row of :mod:`tieringlab.claims.gvfrm` that this sweep can
    decide, with a note: ``{claim_id: (value, note)}``. Rows whose mix or policy is not in the sweep
    are left out (they stay "not reproduced yet")."""
    pols = set(res["policy"].values.tolist())
    mixes = set(res["mix"].values.tolist())
    conv = [c for c in CONVENTIONAL if c in pols]
    fg = res["flash_gb"].values
    out: dict[str, tuple[float | bool, str]] = {}

    def scale_note(mix):
        return f"{mix} at twin scale {float(res['scale'].sel(mix=mix)):.4g}, seed {res.attrs.get('seed', 0)}"

    if "cf4" in mixes and "G1-vFRM" in pols:
        g1 = 100 * res["hit_ratio"].sel(mix="cf4", policy="G1-vFRM").values
        out[C.CF4_G1_TOP] = (float(g1[-1]), f"G1-vFRM at {fg[-1]:g} GB; {scale_note('cf4')}")
        steps = np.diff(g1)
        out[C.CF4_G1_RISING] = (bool(np.all(steps >= -C.RISING_TOL_PTS)),
                                f"smallest step {steps.min() if steps.size else 0:.3g} points; {scale_note('cf4')}")
        if conv:
            big = fg > 4.0
            if big.any():
                cv = 100 * res["hit_ratio"].sel(mix="cf4", policy=conv).values[:, big]
                out[C.CF4_CONV_PLATEAU] = (float(cv.max()), f"best of {', '.join(conv)} over flash > 4 GB "
                                           f"(range {cv.min():.2f}-{cv.max():.2f} %); {scale_note('cf4')}")
            best = 100 * res["hit_ratio"].sel(mix="cf4", policy=conv).max("policy").values
            out[C.CF4_G1_ABOVE_CONV] = (float(g1[-1] - best[-1]), f"at {fg[-1]:g} GB; {scale_note('cf4')}")
    if "cuf4" in mixes and "G1-vFRM" in pols:
        red = cost_reduction(res).sel(mix="cuf4").values
        k = int(np.argmax(red))
        out[C.CUF4_G1_MAX_REDUCTION] = (float(red[k]), f"largest at {fg[k]:g} GB; reductions "
                                        + ", ".join(f"{g:g} GB {r:.1f} %" for g, r in zip(fg, red))
                                        + f"; {scale_note('cuf4')}")
        out[C.CUF4_G1_REDUCTION_GROWS] = (bool(np.all(np.diff(red) >= -C.RISING_TOL_PTS)),
                                          f"reductions {np.round(red, 2).tolist()} %; {scale_note('cuf4')}")
    for mix in sorted(mixes):
        if "G1-vFRM" in pols:
            n = res["io_cost_norm"].sel(mix=mix, policy="G1-vFRM").values
            out[C.g1_cost_below_lru(mix)] = (float(n.max()), f"max over flash sizes; {scale_note(mix)}")
        if "G2-vFRM" in pols and conv:
            thr = g2_threshold_gb(res, mix)
            h = 100 * res["hit_ratio"].sel(mix=mix)
            gap = (h.sel(policy="G2-vFRM") - h.sel(policy=conv).max("policy")).values
            out[C.g2_threshold(mix)] = (bool(np.isfinite(thr)), (f"threshold {thr:g} GB" if np.isfinite(thr)
                                                                  else "no threshold up to the largest size")
                                        + "; G2 minus best conventional per size (points): "
                                        + ", ".join(f"{g:g} GB {d:+.2f}" for g, d in zip(fg, gap))
                                        + f"; {scale_note(mix)}")
        if "G2-vFRM" in pols and "G1-vFRM" in pols:
            ratio = (res["io_cost"].sel(mix=mix, policy="G2-vFRM") / res["io_cost"].sel(mix=mix, policy="G1-vFRM")).values
            out[C.g2_cost_below_g1(mix)] = (float(ratio.max()), "G2/G1 IO cost per size: "
                                            + ", ".join(f"{g:g} GB {r:.3f}" for g, r in zip(fg, ratio))
                                            + f"; {scale_note(mix)}")
    return out
