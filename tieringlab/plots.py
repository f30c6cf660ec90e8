"""Plots: one style per policy name, and the few kinds of figure the notebooks draw.

Every notebook draws its policies through :func:`style`, so a system has the same colour, marker and line
style in every panel of every figure (OTF-AST is the same purple in Fig. 7, 8 and 9; LRU the same blue in the
vFRM and GLB-vFRM figures). The mapping :data:`STYLES` names every system of the policy registry (and its
aliases) and the paper's own printed values (``"paper"``); any other name gets a deterministic fallback (a
CRC-32 of the name picks from :data:`FALLBACK_COLORS`, so it is the same in every process and run, unlike
Python's salted ``hash``).

The figure kinds, each drawing on a given ``Axes``, labelling both axes (the caller names the quantity and its
unit) and returning the ``Axes``:

- :func:`grouped_bars`: one group per category, one bar per series, optional error bars (95 % half-widths) and
  the paper's printed values as black dashes on the bars;
- :func:`curve`: a mean line and an interval band (a 95 % half-width, or lower and upper bounds);
- :func:`cdf`: an empirical CDF from samples (:func:`ecdf`), or a CDF given at points;
- :func:`hit_ratio_curves`: hit ratio against cache size in bytes, converted to a named unit of
  :mod:`tieringlab.units` on the axis;

and two helpers: :func:`shared_legend` (one legend above a multi-panel figure, per-panel legends removed) and
:func:`integer_ticks` (ticks only at integers, for axes such as ARA's K).

Layer: foundations (it imports only :mod:`tieringlab.units` and matplotlib); experiments and notebooks import it.
The plotting layer converts units at the edge (DESIGN.md); the data stay in seconds and bytes.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence

import numpy as np

from tieringlab import units

__all__ = ["STYLES", "PAPER", "FALLBACK_COLORS", "style", "grouped_bars", "bar_offsets", "curve", "ecdf", "cdf",
           "hit_ratio_curves", "shared_legend", "integer_ticks", "SIZE_UNITS"]

#: The printed values of a paper (thesis), drawn beside ours: black dashes, never a policy's colour.
PAPER = "paper"

# Colours chosen so that the systems one figure compares are far apart (the vFRM caches; ARA and its
# baselines; LMST, NMST, SMST; AutoTiering, IDT, EDT; EAFC and its baselines; OTF-AST and its baselines),
# and every registered name has its own colour. A variant of a system (a second pass, a mode switched off)
# keeps its family's hue, lighter, and a dashed line.
_S = {
    # vFRM paper, thesis Ch. 4.2-4.3: the 4 KB page caches and vFRM
    "vFRM": ("#d62728", "o", "-"),
    "G1-vFRM": ("#e377c2", "P", "-"),
    "G2-vFRM": ("#8c564b", "X", "-"),
    "LRU": ("#1f77b4", "s", "-"),
    "ARC": ("#2ca02c", "^", "-"),
    "CAR": ("#9467bd", "v", "-"),
    # thesis Ch. 3: ARA and its baselines
    "ARA": ("#ff7f0e", "o", "-"),
    "ARA_PRED": ("#17becf", "s", "-"),
    "ARA_OPT": ("#7570b3", "D", "--"),
    "Qlen": ("#1b3b6f", "^", "--"),
    "Rand": ("#a6761d", "v", ":"),
    # thesis Ch. 4.1: LMST
    "LMST": ("#e7298a", "o", "-"),
    "LMST-lookahead": ("#f4a6cd", "o", "--"),   # LMST's look-ahead timing reading (experiments.lmst.label)
    "NMST": ("#1b9e77", "s", "--"),
    "SMST": ("#e6ab02", "^", "-."),
    # AutoTiering paper
    "AutoTiering": ("#e41a1c", "o", "-"),
    "IDT": ("#377eb8", "s", "--"),
    "EDT": ("#4daf4a", "^", "-."),
    # EAFC paper
    "EAFC": ("#d95f02", "o", "-"),
    "vanilla": ("#7f7f7f", "s", ":"),
    "EAFC-master": ("#984ea3", "D", "-"),
    "EAFC-proportional": ("#66a61e", "v", "--"),
    "static-partition": ("#bcbd22", "P", "-."),
    # OTF-AST paper
    "OTF-AST": ("#6a3d9a", "o", "-"),
    "OTF-AST without write-back": ("#b294c7", "o", "--"),
    "static tiering": ("#ff7f00", "s", "-"),
    "FlashCache": ("#33a02c", "^", "-"),
    "FlashCache pass 2": ("#9fd67c", "^", "--"),
    "HDD only": ("#525252", "v", ":"),
    # the paper's printed values
    PAPER: ("#000000", "_", "none"),
}
# the registry's aliases (registry.describe()) and the papers' own spellings: the same style as the name
_ALIASES = {"GLB-vFRM": "G1-vFRM", "AT": "AutoTiering", "naive": "vanilla", "LMsT": "LMST", "NMsT": "NMST",
            "SMsT": "SMST", "FlashCache pass 1": "FlashCache", "FlashCache warm": "FlashCache pass 2",
            "OTF-AST no write-back": "OTF-AST without write-back", "HDD": "HDD only", "thesis": PAPER}

#: name -> {"color", "marker", "linestyle"}: every registered system, its aliases and :data:`PAPER`.
STYLES: dict[str, dict[str, str]] = {n: {"color": c, "marker": m, "linestyle": ls} for n, (c, m, ls) in _S.items()}
STYLES.update({a: STYLES[n] for a, n in _ALIASES.items()})

#: Colours for names :data:`STYLES` does not know, picked by a CRC-32 of the name (none is a registered colour).
FALLBACK_COLORS = ("#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#31a354", "#756bb1",
                   "#636363", "#e6550d", "#969696", "#ad494a")
_FALLBACK_MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*")

#: The units :func:`hit_ratio_curves` can put on its size axis (names of :mod:`tieringlab.units`).
SIZE_UNITS = ("KiB", "MiB", "GiB", "TiB", "KB", "MB", "GB", "TB")


def style(name: str, **overrides) -> dict:
    """The matplotlib keyword arguments (``color``, ``marker``, ``linestyle``) of the series ``name``.

    A name of :data:`STYLES` (every registered system, its aliases, :data:`PAPER`) has its fixed style; any
    other name a deterministic one from a CRC-32 of its text (the same in every process). ``overrides`` replace
    or add keywords (``linestyle="--"`` for a reading drawn beside the default, ``lw=1``, ...). A new dict each
    call: changing it changes no other figure.
    """
    if not isinstance(name, str):
        raise TypeError(f"style: name must be a str (a policy or series name), got {type(name).__name__}")
    if name in STYLES:
        out = dict(STYLES[name])
    else:
        h = zlib.crc32(name.encode("utf-8"))
        out = {"color": FALLBACK_COLORS[h % len(FALLBACK_COLORS)],
               "marker": _FALLBACK_MARKERS[(h // len(FALLBACK_COLORS)) % len(_FALLBACK_MARKERS)],
               "linestyle": "-"}
    out.update(overrides)
    return out


def _label(ax, xlabel, ylabel):
    for what, text in (("xlabel", xlabel), ("ylabel", ylabel)):
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"{what} must be a non-empty string naming the quantity and its unit, got {text!r}")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)


def bar_offsets(n_series: int, width: float = 0.8) -> np.ndarray:
    """The x offsets of ``n_series`` bars of one group from the group's centre, and their common width
    ``width / n_series`` is ``width`` divided evenly: ``(k - (n - 1) / 2) * width / n`` for bar ``k``."""
    if int(n_series) < 1:
        raise ValueError(f"n_series must be >= 1, got {n_series!r}")
    if not 0 < width <= 1:
        raise ValueError(f"width must be in (0, 1] (the share of a group's slot the bars fill), got {width!r}")
    n = int(n_series)
    return (np.arange(n) - (n - 1) / 2) * (width / n)


def grouped_bars(ax, categories: Sequence, values: Mapping[str, Sequence[float]], *, xlabel: str, ylabel: str,
                 errors: Mapping[str, Sequence[float]] | None = None,
                 reference: Mapping[str, Sequence[float]] | None = None, reference_label: str = "paper",
                 width: float = 0.8, log: bool = False, capsize: float = 2.0, legend: bool = True, **bar_kw):
    """Grouped bars: one group per category (x = 0, 1, ..., labelled with the categories), one bar per series
    of ``values`` (``{series name: one value per category}``, drawn in the series' :func:`style` colour, in the
    mapping's order, at :func:`bar_offsets`). ``errors``: ``{series: half-widths}`` drawn as grey error bars (a
    series missing there gets none); ``reference``: ``{series: the paper's values}`` drawn as black dashes on
    that series' bars (NaN: no dash), labelled ``reference_label`` once. ``log``: a log value axis. Returns ``ax``.
    """
    cats = [str(c) for c in categories]
    if not values:
        raise ValueError("values must hold at least one series ({name: one value per category})")
    for what, m in (("values", values), ("errors", errors or {}), ("reference", reference or {})):
        for name, v in m.items():
            if np.shape(v) != (len(cats),):
                raise ValueError(f"{what}[{name!r}] must hold one value per category ({len(cats)}), "
                                 f"got shape {np.shape(v)}")
        if what != "values" and set(m) - set(values):
            raise ValueError(f"{what} names series that values does not: {sorted(set(m) - set(values))}")
    x = np.arange(len(cats), dtype=float)
    offs = bar_offsets(len(values), width)
    w = width / len(values)
    handles, dash = [], None
    for off, (name, v) in zip(offs, values.items()):
        st = style(str(name))
        err = None if errors is None or name not in errors else np.asarray(errors[name], float)
        kw = {"error_kw": {"ecolor": "0.45", "elinewidth": 1.0}} | bar_kw   # grey: the paper's dashes are black
        bars = ax.bar(x + off, np.asarray(v, float), w, yerr=err, label=str(name), color=st["color"],
                      capsize=capsize if err is not None else 0.0, **kw)
        handles.append(bars)
        if reference is not None and name in reference:
            (line,) = ax.plot(x + off, np.asarray(reference[name], float), linestyle="none", marker="_",
                              color=style(PAPER)["color"], ms=max(4.0, 40.0 * w), mew=2,
                              label="_nolegend_" if dash is not None else reference_label)
            dash = line if dash is None else dash
    ax.set_xticks(x, cats)
    if log:
        ax.set_yscale("log")
    _label(ax, xlabel, ylabel)
    if legend:  # the series in their order, then the paper's dashes
        ax.legend(handles + ([dash] if dash is not None else []),
                  [str(n) for n in values] + ([reference_label] if dash is not None else []), fontsize=7)
    return ax


def curve(ax, x, y, *, name: str, xlabel: str, ylabel: str, halfwidth=None, lower=None, upper=None,
          label: str | None = None, band_alpha: float = 0.15, **overrides):
    """A mean line of the series ``name`` (its :func:`style`, ``overrides`` on top) and its interval band:
    ``y ± halfwidth`` (a 95 % half-width), or ``[lower, upper]`` (e.g. min-max over replications); neither: the
    line alone. ``label``: the legend entry (default ``name``). NaNs leave gaps. Returns ``ax``."""
    if halfwidth is not None and (lower is not None or upper is not None):
        raise ValueError("give either halfwidth or lower/upper, not both")
    if (lower is None) != (upper is None):
        raise ValueError("lower and upper go together (the band's two edges)")
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x and y must be 1-d of one length, got shapes {x.shape} and {y.shape}")
    st = style(name, **overrides)
    st.setdefault("markersize", 3)
    ax.plot(x, y, label=name if label is None else label, **st)
    if halfwidth is not None:
        h = np.asarray(halfwidth, float)
        lower, upper = y - h, y + h
    if lower is not None:
        lo, hi = np.asarray(lower, float), np.asarray(upper, float)
        if lo.shape != x.shape or hi.shape != x.shape:
            raise ValueError(f"the band must have x's shape {x.shape}, got {lo.shape} and {hi.shape}")
        ax.fill_between(x, lo, hi, color=st["color"], alpha=band_alpha, lw=0)
    _label(ax, xlabel, ylabel)
    return ax


def ecdf(values, weights=None) -> tuple[np.ndarray, np.ndarray]:
    """The empirical CDF of ``values``: ``(x, p)``, the distinct values ascending and the share of the weight
    (default: of the values) at or below each; ``p`` is non-decreasing and ends at exactly 1. NaNs are an error."""
    v = np.asarray(values, float).ravel()
    if v.size == 0:
        raise ValueError("values must not be empty")
    if np.isnan(v).any():
        raise ValueError("values must not hold NaN")
    w = np.ones_like(v) if weights is None else np.asarray(weights, float).ravel()
    if w.shape != v.shape or (w < 0).any() or not w.sum() > 0:
        raise ValueError("weights must be one non-negative weight per value, with a positive sum")
    order = np.argsort(v, kind="stable")
    v, w = v[order], w[order]
    x = np.unique(v)
    cum = np.cumsum(w)
    ends = np.searchsorted(v, x, side="right") - 1   # the last sorted sample of each distinct value
    p = cum[ends] / cum[-1]
    p[-1] = 1.0
    return x, p


def cdf(ax, values=None, *, name: str, xlabel: str, ylabel: str = "cumulative share (%)", x=None, p=None,
        weights=None, percent: bool = True, log: bool = False, label: str | None = None, **overrides):
    """A CDF of the series ``name``: the empirical CDF of ``values`` (:func:`ecdf`, ``weights`` optional) as
    a step function, or a CDF already computed at points ``x`` with shares ``p`` (fractions, e.g. a quantile
    table: ``x`` the quantiles, ``p`` their levels). ``percent``: the share axis in % (0-100), else a fraction.
    ``log``: a log value axis. Returns ``ax``."""
    if (values is None) == (x is None):
        raise ValueError("give either values (samples) or x and p (a CDF at points)")
    st = style(name, **overrides)
    if "marker" not in overrides:
        st["marker"] = None  # a CDF is a line; a marker only when asked for
    scale = 100.0 if percent else 1.0
    if values is not None:
        xs, ps = ecdf(values, weights)
        ax.step(xs, scale * ps, where="post", label=name if label is None else label, **st)
    else:
        if p is None:
            raise ValueError("p (the CDF's shares at x) must come with x")
        xs, ps = np.asarray(x, float), np.asarray(p, float)
        if xs.shape != ps.shape:
            raise ValueError(f"x and p must have one shape, got {xs.shape} and {ps.shape}")
        ax.plot(xs, scale * ps, label=name if label is None else label, **st)
    ax.set_ylim(0, 1.02 * scale)
    if log:
        ax.set_xscale("log")
    _label(ax, xlabel, ylabel)
    return ax


def hit_ratio_curves(ax, sizes_bytes, ratios: Mapping[str, Sequence[float]], *, unit: str = "MiB",
                     what: str = "cache size", ylabel: str = "hit ratio (%)", percent: bool = True,
                     log_base: float | None = 2, errors: Mapping[str, Sequence[float]] | None = None,
                     size_note: str = ""):
    """Hit ratio (fractions in ``ratios``: ``{series: one per size}``) against cache size: ``sizes_bytes`` in
    bytes, shown in ``unit`` (one of :data:`SIZE_UNITS`; the axis says which, e.g. "cache size (MiB)",
    ``size_note`` appended inside the brackets, e.g. ", paper scale"), ticks at the sizes given. ``percent``:
    the ratio axis in % (0-100). ``log_base``: a log size axis of that base (None: linear). ``errors``:
    ``{series: half-widths}`` as bands. Returns ``ax``."""
    if unit not in SIZE_UNITS:
        raise ValueError(f"unit must be one of {SIZE_UNITS}, got {unit!r}")
    s = np.asarray(sizes_bytes, float) / getattr(units, unit)
    scale = 100.0 if percent else 1.0
    for name, r in ratios.items():
        r = np.asarray(r, float)
        if r.shape != s.shape:
            raise ValueError(f"ratios[{name!r}] must hold one value per size ({s.size}), got shape {r.shape}")
        hw = None if errors is None or name not in errors else scale * np.asarray(errors[name], float)
        curve(ax, s, scale * r, name=str(name), halfwidth=hw, xlabel=f"{what} ({unit}{size_note})", ylabel=ylabel)
    if log_base is not None:
        ax.set_xscale("log", base=log_base)
        ax.set_xticks(s, [f"{v:g}" for v in s])
        ax.xaxis.set_minor_locator(_null_locator())
    ax.set_ylim(0, scale)
    ax.grid(alpha=0.3)
    return ax


def _null_locator():
    from matplotlib.ticker import NullLocator  # noqa: PLC0415

    return NullLocator()


def integer_ticks(ax, axis: str = "x"):
    """Ticks only at integers on ``axis`` ("x", "y" or "both"), for counts such as ARA's K. Returns ``ax``."""
    from matplotlib.ticker import MaxNLocator  # noqa: PLC0415

    if axis not in ("x", "y", "both"):
        raise ValueError(f"axis must be one of ('x', 'y', 'both'), got {axis!r}")
    if axis in ("x", "both"):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if axis in ("y", "both"):
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    return ax


def shared_legend(fig, axes=None, *, ncol: int | None = None, fontsize: float = 8, title: str | None = None):
    """One legend above the whole figure for the series of ``axes`` (default: all of the figure's axes), each
    label once in first-seen order; the panels' own legends are removed and the panels laid out below it
    (``tight_layout`` in the rest of the figure). Call it after drawing, instead of ``fig.tight_layout()``.
    Returns the legend (None when no panel has a labelled series)."""
    axes = list(np.ravel(fig.axes if axes is None else axes))
    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels and not lab.startswith("_"):
                handles.append(h)
                labels.append(lab)
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    if not labels:
        fig.tight_layout()
        return None
    ncol = min(len(labels), 6) if ncol is None else int(ncol)
    leg = fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 1.0), ncol=ncol,
                     fontsize=fontsize, title=title, frameon=False)
    renderer = fig.canvas.get_renderer()
    height = leg.get_window_extent(renderer).height / fig.bbox.height
    fig.tight_layout(rect=(0.0, 0.0, 1.0, max(0.5, 1.0 - height - 0.01)))
    return leg
