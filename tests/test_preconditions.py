"""Preconditions (issue 28 item 1): a claim whose mechanism the run cannot exercise is ``untestable``, naming the
failing precondition, and is counted apart from holds and differs."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tieringlab import claims, report
from tieringlab.claims import DIFFERS, HOLDS, MISSING, UNTESTABLE, Claim, at_least, at_most

PRE = Claim(id="x.pre.footprint", paper="X", where="Sec. 4", text="replay footprint / cache size",
            paper_value="> 1 (the cache cannot hold the replay)", check=at_least(1.0), source="08_otf_ast",
            kind="precondition")
PRE2 = Claim(id="x.pre.moves", paper="X", where="Sec. 3", text="hot-set moves per hour", paper_value=">= 2",
             check=at_least(2.0), source="08_otf_ast", kind="precondition")
CLAIM = Claim(id="x.c1", paper="X", where="Table 4", text="cache hit ratio at most 40 %", paper_value="37 %",
              check=at_most(40.0), unit="%", source="08_otf_ast", requires=(PRE.id, PRE2.id))


def test_a_failing_precondition_makes_the_claim_untestable_naming_it():
    v, why = claims.verdict_given(CLAIM, 95.0, {PRE.id: (PRE, 0.66), PRE2.id: (PRE2, 3.0)})
    assert v == UNTESTABLE
    assert why.startswith("precondition fails: x.pre.footprint (replay footprint / cache size: 0.66, needs ≥ 1)")
    assert "x.pre.moves" not in why


def test_passing_or_unmeasured_preconditions_leave_the_verdict_to_the_check():
    ok = {PRE.id: (PRE, 1.5), PRE2.id: (PRE2, 3.0)}
    assert claims.verdict_given(CLAIM, 95.0, ok) == (DIFFERS, "")
    assert claims.verdict_given(CLAIM, 30.0, ok) == (HOLDS, "")
    v, why = claims.verdict_given(CLAIM, 30.0, {PRE.id: (PRE, None), PRE2.id: (PRE2, 3.0)})
    assert v == HOLDS and why == "precondition not measured: x.pre.footprint"
    # nothing reproduced: not reproduced yet, whatever the preconditions say
    assert claims.verdict_given(CLAIM, None, {PRE.id: (PRE, 0.1), PRE2.id: (PRE2, 0.1)})[0] == MISSING
    # recorded by the run without a value (the quantity does not exist there): untestable when a precondition
    # fails, naming it; with every precondition passing it stays without a verdict
    v, why = claims.verdict_given(CLAIM, None, {PRE.id: (PRE, 0.1), PRE2.id: (PRE2, 3.0)}, recorded=True)
    assert v == UNTESTABLE and why.startswith("precondition fails: x.pre.footprint")
    assert claims.verdict_given(CLAIM, None, ok, recorded=True)[0] == MISSING


def test_requires_must_name_precondition_rows():
    with pytest.raises(ValueError, match="a precondition requires nothing"):
        Claim(id="p", paper="X", where="-", text="t", paper_value="-", check=at_least(1), source="s",
              kind="precondition", requires=("q",))
    with pytest.raises(ValueError, match="requires must be a tuple"):
        Claim(id="c", paper="X", where="-", text="t", paper_value="-", check=at_least(1), source="s",
              requires="x.pre.footprint")
    with pytest.raises(KeyError, match="not a defined precondition row"):
        claims.verdict_given(CLAIM, 1.0, {PRE.id: (PRE, 2.0)})


def test_every_defined_requires_names_a_precondition_row():
    defined = claims.registry()
    for c in defined.values():
        for pid in c.requires:
            assert defined[pid].kind == "precondition", (c.id, pid)


def test_the_ledger_counts_untestable_claims_apart(tmp_path, monkeypatch):
    """End to end through report.build: a planted precondition failure turns a claim untestable, the summary
    counts it apart and REPORT.md's first table gives the per-paper counts."""
    defined = {c.id: c for c in (PRE, PRE2, CLAIM)}
    monkeypatch.setattr(report, "registry", lambda: defined)
    (tmp_path / "metrics").mkdir()
    metrics = {"values": {}, "claims": {PRE.id: {"value": 0.66}, PRE2.id: {"value": 3.0}, CLAIM.id: {"value": 95.0}}}
    (tmp_path / "metrics" / "08_otf_ast.json").write_text(json.dumps({**metrics, **_provenance()}))
    ledger = report.build(tmp_path)
    row = ledger.set_index("id").loc[CLAIM.id]
    assert row["verdict"] == UNTESTABLE
    text = report.summary(ledger)
    assert text.startswith("1 claims: 0 hold, 0 differ, 1 untestable, 0 not reproduced yet")
    assert "2 preconditions" in text and "1 fails" in text
    md = report.render_markdown(ledger)
    first_table = md.split("| paper |", 1)[1].split("\n\n", 1)[0]
    assert "| X | 1 | 0 | 0 | 0 | 1 | 0 |" in first_table
    assert row["diagnosis"].startswith("precondition fails: x.pre.footprint")


def _provenance() -> dict:
    """A provenance block as a run writes one (the ledger gives no verdict to metrics without one)."""
    return {"provenance": {"commit": None, "dirty": None, "params_hash": None, "scale": "unknown",
                           "commit_date": None}}


def test_counts_table_is_computed_from_the_rows():
    ledger = pd.DataFrame([
        {"paper": "A", "kind": "claim", "diagnosis": "holds"},
        {"paper": "A", "kind": "claim", "diagnosis": "differs under every reading tried (2)"},
        {"paper": "A", "kind": "claim", "diagnosis": "reading-dependent: holds under e_0; differs under default"},
        {"paper": "A", "kind": "calibration", "diagnosis": "holds"},
        {"paper": "B", "kind": "claim", "diagnosis": MISSING},
        {"paper": "B", "kind": "claim", "diagnosis": "precondition fails: b.pre.x (...)"}])
    t = report.counts_by_paper(ledger)
    assert list(t.columns) == ["claims", "hold", "differ", "reading-dependent", "untestable", "not reproduced yet"]
    assert t.loc["A"].tolist() == [3, 1, 1, 1, 0, 0] and t.loc["B"].tolist() == [2, 0, 0, 0, 1, 1]
