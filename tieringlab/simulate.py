"""One-line cache simulations: any trace policy of the registry on any readable trace, at several cache sizes.

``tieringlab simulate TRACE --policy LRU,ARC,vFRM --sizes 64MiB,1GiB [--format F] [--plot FILE]`` (the
command line, :mod:`tieringlab.cli`) calls :func:`simulate` and prints :func:`miss_table`:

- the trace is read by :func:`tieringlab.traces.formats.read_trace` (the format from ``--format``, else
  from the name or first bytes);
- each policy is a **trace** system of :mod:`tieringlab.policies.registry` (names matched as the registry
  matches them: case, ``-`` and ``_`` ignored), run at its paper defaults over every size in one call;
- the miss ratio is ``1 - hit_ratio`` of the trace contract (:mod:`tieringlab.policies.contract`): the share of
  requests not all of whose units were in the fast tier (for the page caches, vFRM Sec. 5.1's "IO hit ratio").

Sizes are bytes, written with a unit of :mod:`tieringlab.units`: binary ``KiB MiB GiB TiB`` (powers of 1024)
or decimal ``KB MB GB TB`` (powers of 1000), case ignored, or a bare number of bytes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from tieringlab import units
from tieringlab.progress import progress

__all__ = ["parse_size", "parse_sizes", "trace_policies", "resolve_policies", "simulate", "miss_table",
           "plot_hit_ratio", "SIZE_UNITS"]

#: The size units :func:`parse_size` accepts (lower-cased) -> bytes.
SIZE_UNITS = {"b": 1, "kib": units.KiB, "mib": units.MiB, "gib": units.GiB, "tib": units.TiB,
              "kb": units.KB, "mb": units.MB, "gb": units.GB, "tb": units.TB}
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*$")


def parse_size(text: str) -> int:
    """``"64MiB"`` -> 67108864. A whole number of bytes >= 1; a unit of :data:`SIZE_UNITS` (case ignored) or
    none (bytes). Anything else is a ``ValueError`` naming the text and the allowed units."""
    allowed = "KiB, MiB, GiB, TiB (powers of 1024), KB, MB, GB, TB (powers of 1000) or B"
    m = _SIZE.match(str(text))
    unit = m.group(2).lower() if m else None
    if not m or unit not in SIZE_UNITS | {"": 1}:
        raise ValueError(f"cache size {text!r}: expected a number and a unit, e.g. 64MiB or 1GiB; units: {allowed}")
    value = float(m.group(1)) * SIZE_UNITS.get(unit, 1)
    if value < 1 or value != int(value):
        raise ValueError(f"cache size {text!r}: must be a whole number of bytes >= 1 (got {value:g} bytes)")
    return int(value)


def parse_sizes(text: str) -> list[int]:
    """A comma-separated list of sizes (:func:`parse_size`), in the order given; a repeated size is an error."""
    sizes = [parse_size(s) for s in str(text).split(",") if s.strip()]
    if not sizes:
        raise ValueError(f"--sizes {text!r}: give at least one cache size, e.g. 64MiB,1GiB")
    if len(set(sizes)) != len(sizes):
        raise ValueError(f"--sizes {text!r}: a size is given twice")
    return sizes


def trace_policies() -> list[str]:
    """The registry's trace systems: the names :func:`simulate` runs."""
    from tieringlab.policies import registry  # noqa: PLC0415  (imports every policy module: only when simulating)

    return registry.names("trace")


def resolve_policies(names: str | Sequence[str]) -> list[str]:
    """The registry names of ``names`` (a comma-separated string or a list): ``KeyError``/``ValueError`` naming
    an unknown or non-trace policy and the trace policies there are."""
    from tieringlab.policies import registry  # noqa: PLC0415

    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    if not names:
        raise ValueError(f"--policy: give at least one policy; trace policies: {', '.join(trace_policies())}")
    out = []
    for n in names:
        try:
            spec = registry.get(n)
        except KeyError:
            raise KeyError(f"unknown policy {n!r}; trace policies: {', '.join(trace_policies())}") from None
        if spec.kind != "trace":
            raise ValueError(f"policy {spec.name!r} is a {spec.kind} system, not one that replays a trace; trace "
                             f"policies: {', '.join(trace_policies())}")
        if spec.name in out:
            raise ValueError(f"--policy: {spec.name!r} is given twice")
        out.append(spec.name)
    return out


def simulate(ds: xr.Dataset, policies: str | Sequence[str], sizes: Sequence[int], *, key_seed: int = 0) -> xr.Dataset:
    """Run each policy (registry trace systems, paper defaults) on ``ds`` at each of ``sizes`` (bytes).

    Returns ``hit_ratio`` and ``miss_ratio`` over ``policy`` x ``capacity_bytes`` (in the order given) and the
    trace's name in attrs. A randomised system gets ``jax.random.key(key_seed)`` (same seed, same result)."""
    names = resolve_policies(policies)
    sizes = [int(s) for s in sizes]
    from tieringlab.policies import registry  # noqa: PLC0415

    rows = []
    for name in progress(names, desc="simulate", unit="policy"):
        spec = registry.get(name)
        kw = {}
        if spec.random:
            import jax  # noqa: PLC0415  (only randomised systems need a key)

            kw["key"] = jax.random.key(key_seed)
        out = registry.run(name, ds, sizes, **kw)
        if "hits" in out and "requests" in out:  # from the counts: both ratios correctly rounded
            hits, n = (np.asarray(out[v].values, dtype=np.float64) for v in ("hits", "requests"))
            rows.append((hits / n, (n - hits) / n))
        else:
            hit = np.asarray(out["hit_ratio"].values, dtype=np.float64)
            rows.append((hit, 1.0 - hit))
    hit, miss = (np.stack([r[i] for r in rows]) for i in (0, 1))
    coords = {"policy": names, "capacity_bytes": ("capacity_bytes", np.asarray(sizes, np.int64), {"units": "bytes"})}
    return xr.Dataset({"hit_ratio": (("policy", "capacity_bytes"), hit),
                       "miss_ratio": (("policy", "capacity_bytes"), miss)}, coords=coords,
                      attrs={"trace": ds.attrs.get("name", ""), "requests": int(ds.sizes["request"])})


def size_label(n: int) -> str:
    """The shortest exact label of ``n`` bytes: ``64MiB``, ``1GB``, ``4097B``."""
    for unit in ("TiB", "GiB", "MiB", "KiB", "TB", "GB", "MB", "KB"):
        b = SIZE_UNITS[unit.lower()]
        if n >= b and n % b == 0:
            return f"{n // b}{unit}"
    return f"{n}B"


def miss_table(result: xr.Dataset, digits: int = 4) -> str:
    """The miss ratios as a text table: one row per policy, one column per cache size."""
    df = pd.DataFrame(result["miss_ratio"].values, index=pd.Index(result["policy"].values, name="policy"),
                      columns=[size_label(int(c)) for c in result["capacity_bytes"].values])
    head = f"miss ratio of {result.attrs.get('trace', '')!s} ({result.attrs.get('requests', '?')} requests)"
    return head + "\n" + df.to_string(float_format=lambda v: f"{v:.{digits}f}")


def plot_hit_ratio(result: xr.Dataset, path: str | Path) -> Path:
    """Hit-ratio curves (one per policy) against the cache size, written to ``path`` (format from the suffix)."""
    import matplotlib  # noqa: PLC0415  (plotting only when asked)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    fig, ax = plt.subplots(figsize=(6, 4))
    mib = result["capacity_bytes"].values / units.MiB
    order = np.argsort(mib)
    for p in result["policy"].values:
        ax.plot(mib[order], 100 * result["hit_ratio"].sel(policy=p).values[order], marker="o", label=str(p))
    ax.set_xscale("log")
    ax.set_xlabel("cache size (MiB, log scale)")
    ax.set_ylabel("request hit ratio (%)")
    ax.set_ylim(0, 100)
    ax.set_title(f"{result.attrs.get('trace', '')} ({result.attrs.get('requests', '?')} requests)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path)
    plt.close(fig)
    return path
