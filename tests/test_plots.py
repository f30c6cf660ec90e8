"""tieringlab.plots: one style per policy name, and figures whose artists say what the inputs said.

Truth: the policy registry's own names (every system has its own explicit style), hand-computed bar positions
and empirical CDFs of small samples, and matplotlib's artists read back (bar rectangles, line data, tick
locations, legend texts).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.colors import to_rgba
from matplotlib.container import BarContainer

from tieringlab import plots
from tieringlab.policies import registry
from tieringlab.units import MiB

NAMES = registry.names()


def bars_of(ax) -> list[BarContainer]:
    """The axes' bar containers in drawing order (error bars add containers of their own)."""
    return [c for c in ax.containers if isinstance(c, BarContainer)]


@pytest.fixture
def fig_ax():
    fig, ax = plt.subplots()
    yield fig, ax
    plt.close(fig)


def test_every_registered_policy_has_its_own_style():
    assert len(NAMES) >= 20  # the registry really listed its systems
    missing = [n for n in NAMES if n not in plots.STYLES]
    assert not missing, f"registered policies without an explicit style: {missing}"
    colors = [plots.style(n)["color"] for n in NAMES]
    assert len({to_rgba(c) for c in colors}) == len(NAMES), "two registered policies share a colour"
    assert to_rgba(plots.style(plots.PAPER)["color"]) not in {to_rgba(c) for c in colors}
    for n in NAMES:
        assert set(plots.style(n)) >= {"color", "marker", "linestyle"}
    # an alias of the registry (describe() lists "GLB-vFRM" for G1-vFRM) draws as its system
    assert plots.style("GLB-vFRM") == plots.style("G1-vFRM")


def test_style_is_deterministic_fresh_and_falls_back_by_name():
    assert plots.style("OTF-AST") == plots.style("OTF-AST")
    s = plots.style("OTF-AST")
    s["color"] = "red"
    assert plots.style("OTF-AST")["color"] != "red"  # a caller's change leaks into no other figure
    assert plots.style("LRU", linestyle="--")["linestyle"] == "--"
    # unknown names: a CRC-32 of the text (pinned: Python's salted hash() would change with PYTHONHASHSEED)
    a, b = plots.style("my new policy"), plots.style("another one")
    assert a == plots.style("my new policy")
    assert (a["color"], a["marker"]) == ("#7b4173", "*")
    assert (b["color"], b["marker"]) == ("#3182bd", "s")
    registered = {to_rgba(plots.style(n)["color"]) for n in NAMES}
    assert not registered & {to_rgba(c) for c in plots.FALLBACK_COLORS}
    with pytest.raises(TypeError, match="name"):
        plots.style(3)


def test_a_policy_keeps_its_colour_across_calls_and_figures():
    want = to_rgba(plots.STYLES["OTF-AST"]["color"])
    fig, (a1, a2, a3) = plt.subplots(1, 3)
    fig_b, a2b = plt.subplots()
    try:
        plots.curve(a1, [0, 1, 2], [1, 2, 3], name="OTF-AST", halfwidth=[0.1] * 3, xlabel="t (s)", ylabel="y (s)")
        plots.grouped_bars(a2, ["a", "b"], {"FlashCache": [1, 2], "OTF-AST": [3, 4]}, xlabel="trace",
                           ylabel="ratio (%)")
        plots.cdf(a3, [1.0, 2.0, 3.0], name="OTF-AST", xlabel="response time (s)")
        assert to_rgba(a1.lines[0].get_color()) == want
        assert to_rgba(a3.lines[0].get_color()) == want
        assert all(to_rgba(p.get_facecolor()) == want for p in bars_of(a2)[1].patches)
        assert all(to_rgba(p.get_facecolor()) != want for p in bars_of(a2)[0].patches)
        # another figure, the series in the other order: the policy's colour does not move
        plots.grouped_bars(a2b, ["a", "b"], {"OTF-AST": [3, 4], "FlashCache": [1, 2]}, xlabel="trace",
                           ylabel="ratio (%)")
        assert all(to_rgba(p.get_facecolor()) == want for p in bars_of(a2b)[0].patches)
    finally:
        plt.close(fig)
        plt.close(fig_b)


def test_grouped_bars_put_each_bar_where_the_input_says(fig_ax):
    _, ax = fig_ax
    values = {"LRU": [10.0, 20.0, 30.0], "vFRM": [15.0, 5.0, 25.0]}
    errors = {"vFRM": [1.0, 2.0, 3.0]}
    out = plots.grouped_bars(ax, ["mds_0", "usr_0", "web_2"], values, errors=errors,
                             reference={"vFRM": [14.0, np.nan, 26.0]}, xlabel="trace", ylabel="hit ratio (%)")
    assert out is ax
    # 2 series in 0.8 of each slot: width 0.4, centres at i - 0.2 and i + 0.2 (hand-computed)
    bars = bars_of(ax)
    assert len(bars) == 2
    for k, v in enumerate(values.values()):
        rects = bars[k].patches
        assert len(rects) == 3
        for i, (r, h) in enumerate(zip(rects, v)):
            assert r.get_width() == pytest.approx(0.4)
            assert r.get_x() + r.get_width() / 2 == pytest.approx(i + (-0.2 if k == 0 else 0.2))
            assert r.get_y() == 0 and r.get_height() == pytest.approx(h)
    # vFRM's error bars span value +- half-width at its bar centres; LRU has none
    assert bars[0].errorbar is None
    seg = bars[1].errorbar.lines[2][0].get_segments()
    for i, s in enumerate(seg):
        np.testing.assert_allclose(s[:, 0], i + 0.2)
        np.testing.assert_allclose(sorted(s[:, 1]), [values["vFRM"][i] - errors["vFRM"][i],
                                                     values["vFRM"][i] + errors["vFRM"][i]])
    dash = [ln for ln in ax.lines if ln.get_label() == "paper"]
    assert len(dash) == 1
    np.testing.assert_allclose(dash[0].get_xdata(), [0.2, 1.2, 2.2])
    np.testing.assert_allclose(dash[0].get_ydata(), [14.0, np.nan, 26.0])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["mds_0", "usr_0", "web_2"]
    assert list(ax.get_xticks()) == [0, 1, 2]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("trace", "hit ratio (%)")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["LRU", "vFRM", "paper"]
    np.testing.assert_allclose(plots.bar_offsets(3, 0.6), [-0.2, 0.0, 0.2])


def test_grouped_bars_reject_bad_input(fig_ax):
    _, ax = fig_ax
    with pytest.raises(ValueError, match=r"values\['LRU'\].*one value per category \(2\)"):
        plots.grouped_bars(ax, ["a", "b"], {"LRU": [1, 2, 3]}, xlabel="x", ylabel="y (s)")
    with pytest.raises(ValueError, match="errors names series"):
        plots.grouped_bars(ax, ["a"], {"LRU": [1]}, errors={"ARC": [1]}, xlabel="x", ylabel="y (s)")
    with pytest.raises(ValueError, match="ylabel must be a non-empty string"):
        plots.grouped_bars(ax, ["a"], {"LRU": [1]}, xlabel="x", ylabel="")
    with pytest.raises(ValueError, match=r"width must be in \(0, 1\]"):
        plots.bar_offsets(2, 1.5)


def test_ecdf_is_monotone_ends_at_one_and_matches_a_hand_count():
    x, p = plots.ecdf([3.0, 1.0, 2.0, 2.0])
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])
    np.testing.assert_allclose(p, [0.25, 0.75, 1.0])
    x, p = plots.ecdf([5.0, 1.0], weights=[3.0, 1.0])
    np.testing.assert_allclose(p, [0.25, 1.0])
    rng = np.random.default_rng(0)
    v = rng.lognormal(size=500)
    x, p = plots.ecdf(v)
    assert np.all(np.diff(x) > 0) and np.all(np.diff(p) >= 0) and p[-1] == 1.0
    # brute force: the share of samples at or below each point
    np.testing.assert_allclose(p, [(v <= xi).mean() for xi in x])
    with pytest.raises(ValueError, match="NaN"):
        plots.ecdf([1.0, np.nan])


def test_cdf_curve_is_monotone_ends_at_100_percent_and_labels_its_axes(fig_ax):
    _, ax = fig_ax
    out = plots.cdf(ax, [0.2, 0.1, 0.4, 0.3], name="LRU", xlabel="response time (s)", log=True)
    assert out is ax
    y = ax.lines[0].get_ydata()
    assert np.all(np.diff(y) >= 0) and y[-1] == pytest.approx(100.0)
    assert ax.get_xlabel() == "response time (s)" and ax.get_ylabel() == "cumulative share (%)"
    assert ax.get_xscale() == "log"
    plots.cdf(ax, name="ARC", x=[1.0, 2.0], p=[0.5, 1.0], percent=False, xlabel="IOPS (1/s)",
              ylabel="CDF (fraction)")
    np.testing.assert_allclose(ax.lines[1].get_ydata(), [0.5, 1.0])
    with pytest.raises(ValueError, match="either values"):
        plots.cdf(ax, [1.0], x=[1.0], p=[1.0], name="LRU", xlabel="x (s)")


def test_curve_draws_the_band_around_the_mean(fig_ax):
    _, ax = fig_ax
    plots.curve(ax, [0, 1, 2], [1.0, 2.0, 4.0], name="AutoTiering", halfwidth=[0.5, 0.5, 1.0],
                xlabel="monitor epoch", ylabel="IOPS (1/s)")
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [1.0, 2.0, 4.0])
    band = ax.collections[0].get_paths()[0].vertices
    assert band[:, 1].min() == pytest.approx(0.5) and band[:, 1].max() == pytest.approx(5.0)
    assert ax.get_xlabel() == "monitor epoch" and ax.get_ylabel() == "IOPS (1/s)"
    with pytest.raises(ValueError, match="lower and upper go together"):
        plots.curve(ax, [0], [1], name="x", lower=[0], xlabel="x (s)", ylabel="y (s)")


def test_hit_ratio_curves_convert_bytes_to_the_named_unit(fig_ax):
    _, ax = fig_ax
    sizes = np.array([1, 4, 16]) * MiB
    plots.hit_ratio_curves(ax, sizes, {"LRU": [0.1, 0.3, 0.5], "ARC": [0.2, 0.35, 0.55]}, unit="MiB")
    np.testing.assert_allclose(ax.lines[0].get_xdata(), [1, 4, 16])
    np.testing.assert_allclose(ax.lines[1].get_ydata(), [20, 35, 55])
    assert ax.get_xlabel() == "cache size (MiB)" and ax.get_ylabel() == "hit ratio (%)"
    assert ax.get_xscale() == "log" and list(ax.get_xticks()) == [1, 4, 16]
    with pytest.raises(ValueError, match="unit must be one of"):
        plots.hit_ratio_curves(ax, sizes, {"LRU": [0.1, 0.3, 0.5]}, unit="megs")


def test_integer_ticks_and_the_shared_legend():
    fig, axes = plt.subplots(1, 2)
    try:
        axes[0].plot([1, 4, 16], [3, 2, 1], label="ARA")
        axes[0].legend()
        axes[1].plot([1, 2], [1, 2], label="ARA")
        axes[1].plot([1, 2], [2, 1], label="Qlen")
        axes[0].set_xlim(1, 8)
        plots.integer_ticks(axes[0])
        ticks = axes[0].get_xticks()
        assert len(ticks) >= 3 and np.all(ticks == np.round(ticks))
        leg = plots.shared_legend(fig)
        assert [t.get_text() for t in leg.get_texts()] == ["ARA", "Qlen"]
        assert axes[0].get_legend() is None
        with pytest.raises(ValueError, match="axis must be one of"):
            plots.integer_ticks(axes[0], "z")
    finally:
        plt.close(fig)
