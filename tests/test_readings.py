"""tieringlab.readings: one way to state a reading, apply it, name its claim rows and compare its verdicts."""

from __future__ import annotations

import dataclasses

import pytest

from tieringlab import readings as R
from tieringlab.claims import DIFFERS, HOLDS, Claim, at_least


@dataclasses.dataclass(frozen=True)
class Policy:
    e: float = 0.0
    timing: str = "causal"


@dataclasses.dataclass(frozen=True)
class Section:
    n_reps: int = 3
    policy: Policy = Policy()


def test_apply_sets_nested_fields_and_leaves_the_rest():
    p = Section()
    q = R.Reading("e_minus5", {"policy.e": -0.05, "n_reps": 5}, "thesis example").apply(p)
    assert q == Section(n_reps=5, policy=Policy(e=-0.05))
    assert p == Section()  # frozen: the original is untouched
    assert R.DEFAULT.apply(p) is p


@pytest.mark.parametrize("path", ["policy.ee", "n_rep", "nope.e"])
def test_a_misspelled_override_is_an_error_naming_the_fields(path):
    with pytest.raises(KeyError, match="fields: "):
        R.apply(Section(), {path: 1})


def test_axis_marks_the_documented_default_and_names_the_others():
    ax = R.axis("policy.timing", ("causal", "lookahead"), "A5 T2", default="causal")
    assert [r.name for r in ax] == ["timing_causal", "timing_lookahead"]
    assert ax[0].is_default and not ax[1].is_default
    assert ax[1].apply(Section()).policy.timing == "lookahead"
    with pytest.raises(ValueError, match="default"):
        R.axis("policy.e", (0.05,), "x", default=0.0)


def test_grid_crosses_axes_and_claim_ids_keep_the_bare_default():
    idle = R.axis("idle", ("keep", "recency"), "choice 3", default="keep", name=lambda v: f"idle_{v}")
    pricing = R.axis("pricing", ("random", "seq"), "Eq. 4", default="random", name=lambda v: f"pricing_{v}")
    g = R.grid(idle, pricing)
    assert [r.name for r in g] == ["default", "pricing_seq", "idle_recency", "idle_recency.pricing_seq"]
    assert dict(g[3].overrides) == {"idle": "recency", "pricing": "seq"}
    assert [R.claim_id("vfrm.fig7.cost", r) for r in g] == [
        "vfrm.fig7.cost", "vfrm.fig7.cost.pricing_seq", "vfrm.fig7.cost.idle_recency",
        "vfrm.fig7.cost.idle_recency.pricing_seq"]
    with pytest.raises(ValueError, match="twice"):
        R.grid([R.Reading("a", {"x": 1})], [R.Reading("b", {"x": 2})])


def test_run_each_and_verdicts_per_reading():
    rs = (R.DEFAULT, R.Reading("e_minus5", {"policy.e": -0.05}, "thesis example"))
    values = R.run_each(rs, Section(), lambda p: 10.0 + 100 * p.policy.e)   # 10 under default, 5 under e=-5 %
    assert values == {"default": 10.0, "e_minus5": 5.0}
    claim = Claim(id="x.y", paper="p", where="Table 1", text="at least 8", paper_value="8", check=at_least(8.0),
                  source="05_lmst")
    v = R.verdicts(claim, values)
    assert v == {"default": HOLDS, "e_minus5": DIFFERS}
    assert R.flips(v) == ["e_minus5"]
    assert R.flips({"default": HOLDS, "a": HOLDS}) == []
    with pytest.raises(KeyError, match="default"):
        R.flips({"a": HOLDS})
    with pytest.raises(ValueError, match="twice"):
        R.run_each((R.DEFAULT, R.DEFAULT), Section(), lambda p: 0)


@pytest.mark.parametrize("bad", ["", "a b", "x/y"])
def test_reading_names_are_claim_id_safe(bad):
    with pytest.raises(ValueError, match="name"):
        R.Reading(bad, {})
