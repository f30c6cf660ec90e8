"""notebooks/01_trace_characterization.ipynb: vFRM Table 1, Fig. 1, Fig. 2/3 and Obs. 1-3 on the twins
and the real CloudPhysics trace; plus the shared ``traces`` section every trace-reading notebook uses.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

from tieringlab.claims import traces as C
from tieringlab.params import MAX_GIB, param, section
from tieringlab.traces import stats, twins
from tieringlab.traces.source import effective_scale, load
from tieringlab.units import BIN_BYTES, PAGE_BYTES, GiB

__all__ = ["TracesParams", "TraceCharacterizationParams", "table1", "fig1", "fig1_summary", "popularity",
           "observations", "claim_values", "paper_table1", "TABLE1_TRACES", "FIG1_TRACES"]

#: The eight traces of vFRM Table 1 and the two extra of thesis Table 9, MSR file names.
TABLE1_TRACES = ("mds_0", "src1_2", "stg_0", "usr_0", "stg_1", "usr_2", "web_2", "src2_1", "web_0", "prn_0")
#: Fig. 1 shows "two representative workloads from each category" without naming them (vFRM Sec. 3.2):
#: a documented choice of two friendly (a, b) and two unfriendly (c, d) traces.
FIG1_TRACES = ("mds_0", "usr_0", "usr_2", "src2_1")


@section("traces")
@dataclass(frozen=True)
class TracesParams:
    """Which traces the experiments read (shared by every notebook that declares ``uses = ("traces",)``)."""

    source: str = param("twin", "twin: synthetic twins calibrated to the papers' statistics (the embedded "
                        "default, the real traces cannot be downloaded here); msr: the real SNIA files",
                        choices=("twin", "msr"))
    scale: float = param(1.0, "twin scale: bytes and request counts x scale, ratios kept (1 = paper scale)",
                         bounds=(1e-4, 1.0))
    max_wss_gb: float = param(0.0, "cap a twin's working set at this many GB by lowering its scale (0 = no "
                              "cap); bounds memory for usr_2's 382.7 GB", bounds=(0.0, None))
    msr_dir: str = param("data/msr", "where the real MSR files <host>_<disk>.csv.gz live (source: msr)")
    msr_base_url: str = param("http://iotta.snia.org/traces/block-io/388",
                              "SNIA IOTTA trace set 388, where the MSR files are published")
    msr_md5: str = param("", "md5 pins of real MSR files, '<trace>:<md5>,...' from SNIA's MD5 list; a file "
                         "without a pin (or with a different md5) is never used")


@section("trace_characterization")
@dataclass(frozen=True)
class TraceCharacterizationParams:
    uses = ("traces",)

    table1_traces: tuple[str, ...] = param(TABLE1_TRACES, "vFRM Table 1 (8 traces) + thesis Table 9 (web_0, prn_0)",
                                           choices=tuple(twins.TWINS))
    fig1_traces: tuple[str, ...] = param(FIG1_TRACES, "Fig. 1 (a)-(d): two friendly, two unfriendly traces "
                                         "(the paper does not name them: documented choice)",
                                         choices=tuple(twins.TWINS))
    cache_gb: float = param(1.0, "vFRM Table 1: LRU cache of 1 GB (GiB; at most 2^33 - 1: int64 bytes)",
                            bounds=(1e-3, MAX_GIB), unit="GiB")
    line_bytes: int = param(PAGE_BYTES, "vFRM Table 1: 4 KB cache lines", choices=(512, 4096, 8192, 65536),
                            unit="bytes")
    reaccess_window_s: float = param(300.0, "vFRM Table 1: re-access within 5 minutes", bounds=(1.0, None),
                                     unit="s")
    reaccess_definition: str = param("among_reaccesses", "reading of Table 1's re-access ratio: share among "
                                     "IOs that re-access data (forced by src21's 2.82 % hit vs 96.04 %)",
                                     choices=stats.REACCESS_DEFINITIONS)
    bin_bytes: int = param(BIN_BYTES, "vFRM Sec. 3.2: 1 MB bins", bounds=(4096, None), unit="bytes")
    epoch_s: float = param(300.0, "vFRM Fig. 1: accessed bins per 5 minutes", bounds=(1.0, None), unit="s")
    period_s: float = param(3600.0, "vFRM Fig. 2: IO popularity per bin per hour", bounds=(1.0, None),
                            unit="s")
    heatmap_rows: int = param(400, "bins summed into at most this many rows in the Fig. 2 heatmap (plot size)",
                              bounds=(10, 100000))


def paper_table1() -> pd.DataFrame:
    """vFRM Table 1 + thesis Table 9 as printed (GB, %)."""
    rows = [{"name": n, "paper_name": {v: k for k, v in twins.PAPER_NAMES.items()}[n], "category": c,
             "server": s, "volume_size_gb": v, "working_set_gb": w, "lru_hit_ratio_pct": h,
             "reaccess_ratio_pct": r} for n, (c, s, v, w, h, r) in twins.PAPER_TABLE1.items()]
    return pd.DataFrame(rows)


def _row(ds, p: TraceCharacterizationParams, scale: float) -> dict:
    r = stats.table1_row(ds, cache_bytes=int(round(p.cache_gb * GiB * scale)), line_bytes=p.line_bytes,
                         window_s=p.reaccess_window_s, reaccess_definition=p.reaccess_definition)
    return {"name": r["name"], "scale": scale, "n_requests": r["n_requests"],
            "volume_size_gb": r["volume_size"] / GiB / scale, "working_set_gb": r["working_set_size"] / GiB / scale,
            "lru_hit_ratio_pct": 100 * r["lru_hit_ratio"], "reaccess_ratio_pct": 100 * r["reaccess_ratio"],
            "read_ratio_pct": 100 * r["read_ratio"]}


def table1(p: TraceCharacterizationParams, traces: dict, seed: int = 0, *, include_cloudphysics: bool = True):
    """vFRM Table 1 for every trace in ``p.table1_traces`` beside the paper's numbers.

    Sizes are reported at paper scale (a twin at scale ``s`` is measured with a ``s x 1 GB`` cache and its
    sizes divided by ``s``); the LRU hit ratio and re-access ratio are measured as defined in
    :mod:`tieringlab.traces.stats`. Returns ``(xr.Dataset with dim trace, list of the trace Datasets)``.
    """
    rows, datasets = [], []
    for name in p.table1_traces:
        scale = effective_scale(name, traces) if traces.get("source", "twin") == "twin" else 1.0
        ds = load(name, traces, seed)
        rows.append(_row(ds, p, scale))
        datasets.append(ds)
    if include_cloudphysics:
        ds = load("cloudphysics")
        rows.append(_row(ds, p, 1.0))
        datasets.append(ds)
    ours = pd.DataFrame(rows).set_index("name")
    paper = paper_table1().set_index("name")
    out = xr.Dataset(
        {col: ("trace", ours[col].to_numpy()) for col in ours.columns},
        coords={"trace": ours.index.to_numpy()})
    for col in ("volume_size_gb", "working_set_gb", "lru_hit_ratio_pct", "reaccess_ratio_pct"):
        vals = paper.reindex(ours.index)[col].astype(float).to_numpy()
        out[f"paper_{col}"] = ("trace", vals)
    out["source"] = ("trace", np.array([d.attrs.get("source", "") for d in datasets]))
    out.attrs.update(cache_gb=p.cache_gb, line_bytes=p.line_bytes, reaccess_window_s=p.reaccess_window_s,
                     reaccess_definition=p.reaccess_definition)
    return out, datasets


def fig1(p: TraceCharacterizationParams, datasets) -> xr.DataArray:
    """Accessed 1 MB bins per 5-minute epoch (vFRM Fig. 1), dims (trace, epoch); counts at trace scale."""
    arrays = [stats.bins_per_epoch(ds, p.bin_bytes, p.epoch_s,
                                   duration_s=float(ds.attrs.get("duration_s", 0.0)) or None).assign_coords(
                  trace=ds.attrs["name"]) for ds in datasets]
    return xr.concat(arrays, dim="trace", join="outer", fill_value=0)


def popularity(p: TraceCharacterizationParams, ds) -> xr.DataArray:
    """Bin x hour IO counts (vFRM Fig. 2/3), bins grouped into at most ``p.heatmap_rows`` rows."""
    return stats.popularity_matrix(ds, p.bin_bytes, p.period_s, max_bins=p.heatmap_rows,
                                   duration_s=float(ds.attrs.get("duration_s", 0.0)) or None)


def observations(p: TraceCharacterizationParams, ds) -> dict:
    """Numbers behind vFRM Obs. 1-2 for one trace.

    - Obs. 1 (bimodal): share of accessed bins accessed < 10 times a day (``rare_share``) and share
      accessed > 1,000 times a day (``hot_share``), and the share of IOs that go to those hot bins.
    - Obs. 2 (stable): ``next_day_capture``, the share of a day's IOs that land in the busiest bins that
      took 80 % of the previous day's IOs (0.8 if the popularity is exactly stable, the share of bins
      if it is reshuffled), averaged over consecutive days (needs >= 2 days).
    - Obs. 3 (varies across workloads) is a comparison across traces: ``bins_for_80pct_io`` (the number of
      busiest bins that take 80 % of the IOs, as a share of accessed bins) is what the notebook compares.
    """
    daily = stats.bin_daily_counts(ds, p.bin_bytes)
    pop = stats.popularity_matrix(ds, p.bin_bytes, 86400.0,
                                  duration_s=float(ds.attrs.get("duration_s", 0.0)) or None).values
    per_bin = pop.sum(axis=1)
    accessed = per_bin > 0
    hot = daily > 1000
    srt = np.sort(per_bin[accessed])[::-1]
    k80 = int(np.searchsorted(np.cumsum(srt), 0.8 * srt.sum()) + 1)
    capture = np.nan
    full_days = int(float(ds.attrs.get("duration_s", 0.0) or ds["time"].values.max()) // 86400)
    if full_days >= 2:
        shares = []
        for d in range(full_days - 1):  # <= 6 pairs of days
            today, tomorrow = pop[:, d].astype(np.float64), pop[:, d + 1].astype(np.float64)
            order = np.argsort(today)[::-1]
            k = int(np.searchsorted(np.cumsum(today[order]), 0.8 * today.sum()) + 1)
            shares.append(tomorrow[order[:k]].sum() / max(1.0, tomorrow.sum()))
        capture = float(np.mean(shares))
    return {"name": ds.attrs["name"], "rare_share": float((daily < 10).mean()), "hot_share": float(hot.mean()),
            "hot_io_share": float(srt[: int(hot.sum())].sum() / srt.sum()) if hot.any() else 0.0,
            "bins_for_80pct_io": k80 / max(1, int(accessed.sum())), "next_day_capture": capture,
            "max_daily_count": float(daily.max())}


def fig1_summary(f1: xr.DataArray, scales) -> tuple[dict, dict]:
    """Per Fig. 1 trace: the peak of accessed bins per epoch at paper scale (MB per 5 minutes: bins are
    1 MB; counts divided by the twin ``scales``), and the peak over the median (spikiness)."""
    peak = {n: float(f1.sel(trace=n).max() / s) for n, s in zip(f1["trace"].values, np.asarray(scales))}
    spikiness = {n: float(f1.sel(trace=n).max() / max(1.0, float(np.median(f1.sel(trace=n).values))))
                 for n in f1["trace"].values}
    return peak, spikiness


def claim_values(tab: xr.Dataset, obs: pd.DataFrame, peak: dict, spikiness: dict,
                 seed: int = 0) -> dict[str, tuple[float | bool, str | None]]:
    """The reproduced value of each row of :mod:`tieringlab.claims.traces` this run can decide:
    ``{claim_id: (value, note)}``. ``tab``: :func:`table1`; ``obs``: :func:`observations` of every trace,
    indexed by name; ``peak``, ``spikiness``: :func:`fig1_summary`. Rows whose traces are not in the run
    are left out (the ledger shows them as not reproduced yet)."""
    out: dict[str, tuple[float | bool, str | None]] = {}
    cols = ("volume_size_gb", "working_set_gb", "lru_hit_ratio_pct", "reaccess_ratio_pct")
    for t in tab["trace"].values:
        t = str(t)
        r = tab.sel(trace=t)
        for c in cols:
            if t in twins.PAPER_TABLE1 and np.isfinite(float(r[f"paper_{c}"])):
                out[C.table1_claim_id(t, c)] = (float(r[c]), f"{str(r['source'].values)} at scale "
                                                              f"{float(r['scale']):.4g}, seed {seed}")
    friendly = [n for n in peak if twins.TWINS[n].category == "friendly"]
    unfriendly = [n for n in peak if twins.TWINS[n].category == "unfriendly"]
    if unfriendly:
        out[C.FIG1_SPIKE_PEAK] = (max(peak[n] for n in unfriendly), None)
    if friendly and unfriendly:
        out[C.FIG1_SPIKIER] = (min(spikiness[n] for n in unfriendly) > max(spikiness[n] for n in friendly), None)
    msr = [n for n in obs.index if n in twins.PAPER_TABLE1 and twins.PAPER_TABLE1[n][0] != "Table 9"]
    for cat in ("friendly", "unfriendly"):
        names = [n for n in msr if twins.TWINS[n].category == cat]
        if not names:
            continue
        out[C.RARE_BINS_SHARE.format(cat)] = (100 * obs.loc[names, "rare_share"].min(), None)
        out[C.HOT_BINS_PER_DAY.format(cat)] = (obs.loc[names, "max_daily_count"].min(), None)
        capture = obs.loc[names, "next_day_capture"].dropna()
        if len(capture):
            out[C.NEXT_DAY_CAPTURE.format(cat)] = (capture.min(), None)
    if msr:
        reaccess = tab["reaccess_ratio_pct"].to_series()
        out[C.REACCESS_WITHIN_5MIN] = (reaccess.loc[msr].min(), None)
        share = obs.loc[msr, "bins_for_80pct_io"]
        out[C.POPULARITY_VARIES] = (share.max() / share.min(), None)
    if "cloudphysics" in obs.index:
        out[C.RARE_BINS_CLOUDPHYSICS] = (100 * obs.loc["cloudphysics", "rare_share"], None)
    return out
