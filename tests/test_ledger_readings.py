"""Readings and the audit in the ledger (issue 28 items 2 and 4).

Every claim is evaluated under every reading its notebook recorded; the row keeps the default reading's verdict,
lists the others (``readings``) and gets a computed ``diagnosis``; REPORT.md's first table counts a paper's claims
by diagnosis. The audit flags two claim rows computing the same quantity and a claim row no seed or reading moves.

Independent truth: the verdict of each value is worked out here from the check's definition (a value >= 10 holds);
the planted rows' relations (equal, ``y = x - 1``) are written out in the test.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from tieringlab import audit, report
from tieringlab.claims import DIFFERS, HOLDS, UNTESTABLE, Claim, at_least
from tieringlab.results import Outputs

SRC = "00_quickstart"
PRE = Claim(id="x.pre.footprint", paper="X", where="Sec. 4", text="footprint / cache", paper_value="> 1",
            check=at_least(1.0), source=SRC, kind="precondition")
GAIN = Claim(id="x.gain", paper="X", where="Fig. 1", text="gain at least 10 %", paper_value="12 %",
             check=at_least(10.0), unit="%", source=SRC, requires=(PRE.id,))
PLAIN = Claim(id="x.plain", paper="X", where="Fig. 2", text="other gain at least 10 %", paper_value="15 %",
              check=at_least(10.0), unit="%", source=SRC)
TWIN = Claim(id="x.twin", paper="X", where="Fig. 3", text="the same gain, written again", paper_value="15 %",
             check=at_least(10.0), unit="%", source=SRC)
DEFINED = {c.id: c for c in (PRE, GAIN, PLAIN, TWIN)}
PROV = {"commit": None, "dirty": None, "params_hash": None, "scale": "unknown", "commit_date": None}


def ledger_of(tmp_path, monkeypatch, claims: dict) -> report.pd.DataFrame:
    monkeypatch.setattr(report, "registry", lambda: DEFINED)
    (tmp_path / "metrics").mkdir(exist_ok=True)
    (tmp_path / "metrics" / f"{SRC}.json").write_text(json.dumps({"values": {}, "claims": claims, "provenance": PROV}))
    return report.build(tmp_path).set_index("id")


def test_each_reading_gets_a_verdict_and_the_row_a_diagnosis(tmp_path, monkeypatch):
    led = ledger_of(tmp_path, monkeypatch, {
        PRE.id: {"value": 2.0},
        GAIN.id: {"value": 12.0, "readings": {"e_0": 4.0, "rho_0.8": 11.0}},   # holds, differs, holds
        PLAIN.id: {"value": 3.0, "readings": {"e_0": 5.0}},                   # differs under both
        TWIN.id: {"value": 20.0}})                                            # holds, one reading run
    gain = led.loc[GAIN.id]
    assert gain["verdict"] == HOLDS  # the default reading's
    assert gain["readings"] == "holds under: default, rho_0.8; differs under: e_0"
    assert gain["diagnosis"] == "reading-dependent: holds under default, rho_0.8; differs under e_0"
    assert led.loc[PLAIN.id, "diagnosis"] == "differs under every reading tried (2)"
    assert (led.loc[TWIN.id, "diagnosis"], led.loc[TWIN.id, "readings"]) == ("holds", "")
    counts = report.counts_by_paper(led.reset_index())
    assert counts.loc["X"].tolist() == [3, 1, 1, 1, 0, 0]
    assert "1 of them reading-dependent" in report.summary(led.reset_index())


def test_preconditions_are_taken_under_each_reading(tmp_path, monkeypatch):
    # fails by default (footprint 0.5 of the cache), holds under the reading that changes the workload
    led = ledger_of(tmp_path, monkeypatch, {
        PRE.id: {"value": 0.5, "readings": {"big_twin": 1.4}},
        GAIN.id: {"value": 12.0, "readings": {"big_twin": 3.0, "e_0": 30.0}}})
    row = led.loc[GAIN.id]
    assert row["verdict"] == UNTESTABLE
    # e_0 does not record the precondition: it keeps its default value there (0.5, failing)
    assert row["readings"] == "differs under: big_twin; untestable under: default, e_0"
    assert row["diagnosis"].startswith("precondition fails: x.pre.footprint (footprint / cache: 0.5, needs ≥ 1)")
    assert row["diagnosis"].endswith("; testable under big_twin: differs under big_twin")
    assert report.counts_by_paper(led.reset_index()).loc["X", "untestable"] == 1


def test_outputs_records_readings_and_samples(tmp_path):
    from tieringlab.claims import registry

    cid = next(c.id for c in registry().values() if c.source == "00_quickstart")
    out = Outputs("00_quickstart", tmp_path)
    out.claim(cid, 12.0, readings={"e_0": np.float32(4.0), "flag": np.bool_(True)}, samples=np.array([[1.0, 2.0]]))
    entry = json.loads(out.metrics_path.read_text())["claims"][cid]
    assert entry == {"value": 12.0, "note": None, "readings": {"e_0": 4.0, "flag": True}, "samples": [1.0, 2.0]}
    with pytest.raises(ValueError, match="non-default readings' names"):
        out.claim(cid, 1.0, readings={"default": 2.0})
    with pytest.raises(TypeError, match="under e_0: expected a number"):
        out.claim(cid, 1.0, readings={"e_0": "high"})
    out.claims_by_reading({"default": {cid: (5.0, "n")}, "e_0": {cid: (6.0, "m")}})
    entry = json.loads(out.metrics_path.read_text())["claims"][cid]
    assert entry == {"value": 5.0, "note": "n", "readings": {"e_0": 6.0}}
    with pytest.raises(KeyError, match="default reading"):
        out.claims_by_reading({"e_0": {cid: 1.0}})


def test_a_planted_duplicate_row_is_flagged(tmp_path, monkeypatch):
    samples = [11.0, 13.5, 12.25, 14.0]
    led = ledger_of(tmp_path, monkeypatch, {
        PLAIN.id: {"value": 12.7, "samples": samples},
        TWIN.id: {"value": 12.7, "samples": samples}})
    assert "audit: same quantity as x.twin" in led.loc[PLAIN.id, "note"]
    assert "audit: same quantity as x.plain" in led.loc[TWIN.id, "note"]
    md = report.render_markdown(led.reset_index())
    assert "same quantity: x.plain, x.twin (equal at all 4 recorded points)" in md


def test_affine_duplicates_need_three_distinct_values():
    src = {"a": SRC, "b": SRC}
    x = [1.5, 2.0, 3.25]
    # b = a - 1 at three distinct points: the same quantity (a ratio and the ratio minus one)
    got = audit.same_quantity({"a": {"value": 1.0, "samples": x}, "b": {"value": 0.0, "samples": [v - 1 for v in x]}},
                              src)
    assert [f.ids for f in got] == [("a", "b")] and "= 1 x a + -1" in got[0].why
    # two seeds and their mean: the mean lies on the line through the two, so it is not a point of its own
    two_seeds = {"a": {"value": 2.0, "samples": [1.0, 3.0]}, "b": {"value": 6.5, "samples": [5.0, 8.0]}}
    assert audit.same_quantity(two_seeds, src) == []
    # two distinct values fit any line: not evidence
    two = {"a": {"value": 1.0, "samples": [2.0]}, "b": {"value": 7.0, "samples": [3.0]}}
    assert audit.same_quantity(two, src) == []
    # not affine: a curve through three points
    assert audit.same_quantity({"a": {"value": 1.0, "samples": [2.0, 3.0]},
                                "b": {"value": 1.0, "samples": [4.0, 9.0]}}, src) == []
    # two constants that agree are a coincidence; rows of different notebooks or points are not compared
    assert audit.same_quantity({"a": {"value": 0.0, "samples": [0.0, 0.0]},
                                "b": {"value": 0.0, "samples": [0.0, 0.0]}}, src) == []
    assert audit.same_quantity({"a": {"value": 1.0, "samples": x}, "b": {"value": 1.0, "samples": x}},
                               {"a": SRC, "b": "07_eafc"}) == []
    assert audit.same_quantity({"a": {"value": 1.0, "samples": x}, "b": {"value": 1.0, "readings": {"r": 1.5},
                                                                         "samples": x[:2]}}, src) == []
    # booleans are not quantities the audit compares
    assert audit.same_quantity({"a": {"value": True}, "b": {"value": True}}, src) == []
    # a row constant at every point is not an affine copy of a varying row, in either order (least squares gives
    # it a float-noise slope, not 0: the paper-scale audit at 920fcf0 flagged AutoTiering's constant C13 so)
    noisy = [0.1 * v + 0.2 for v in (3.7, -1.3, 2.9, 11.0, 0.4)]
    const = {"a": {"value": 0.0, "samples": noisy}, "b": {"value": 1.0, "samples": [1.0] * 5}}
    assert audit.same_quantity(const, src) == []
    assert audit.same_quantity({"a": const["b"], "b": const["a"]}, src) == []


def test_a_row_no_seed_or_reading_moves_is_flagged():
    kinds = {"busy": "claim", "gain": "claim", "det": "claim", "pre": "precondition"}
    entries = {"busy": {"value": 1.0, "samples": [1.0, 1.0, 1.0], "readings": {"e_0": 1.0}},
               "gain": {"value": 1.0, "samples": [1.0, 1.2, 0.9]},
               "det": {"value": 4.0, "readings": {"a": 4.0, "b": 4.0}},   # deterministic: not judged
               "pre": {"value": 1.0, "samples": [1.0, 1.0]}}               # not a claim row
    got = audit.cannot_move(entries, kinds)
    assert [(f.kind, f.ids) for f in got] == [(audit.CANNOT_MOVE, ("busy",))]
    assert "at all 4 recorded points" in got[0].why
    # and through the registry's kinds: precondition rows are left out of the audit
    assert audit.audit({"x.pre.footprint": {"value": 1.0, "samples": [1.0, 1.0]}}, DEFINED) == []


def test_differs_and_holds_are_the_checks_own():
    # the verdicts the ledger gives per reading are the check's: >= 10 holds, below differs
    assert GAIN.verdict(10.0) == HOLDS and GAIN.verdict(9.99) == DIFFERS


def test_a_strict_check_refuses_its_bound():
    from tieringlab.claims import above

    c = above(0.0)
    assert not c.passes(0.0) and c.passes(1e-300) and not c.passes(float("nan"))
    assert c.describe("%") == "> 0 %"


def test_reading_names_follow_the_readings_rule(tmp_path):
    from tieringlab.claims import registry

    cid = next(c.id for c in registry().values() if c.source == "00_quickstart")
    out = Outputs("00_quickstart", tmp_path)
    for bad in ("a..b", ".a", "a b", ""):
        with pytest.raises(ValueError, match="non-default readings' names"):
            out.claim(cid, 1.0, readings={bad: 2.0})
    out.claim(cid, 1.0, readings={"idle_recency.sequential_runs": 2.0, "t_util_0.85": 3.0})
