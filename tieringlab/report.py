"""The claims ledger: gather every notebook's metrics into ``results/REPORT.md`` and ``results/report.csv``.

One row per claim defined in :mod:`tieringlab.claims`, with paper, table or figure, claim, paper
value, reproduced value, tolerance, a computed verdict and the provenance of the run it comes from
(:func:`notebook_provenance`: a metrics file without provenance, committed to git or written before
provenance existed, gives no verdict). Run as ``python -m tieringlab.report``
(the ``report`` stage of ``dvc.yaml``) or ``tieringlab report``, which also write the results site
``results/index.html`` (:mod:`tieringlab.site`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

import pandas as pd

from tieringlab import audit, fileio, paths
from tieringlab.claims import DIFFERS, HOLDS, MISSING, UNTESTABLE, registry, verdict_given
from tieringlab.results import complete_installs, current_params_hash, provenance_status

COLUMNS = ["paper", "where", "claim", "paper_value", "reproduced", "tolerance", "verdict", "diagnosis", "readings",
           "kind", "note", "source", "id", "provenance"]
#: The reading a row's ``value`` is recorded under (its other readings' values are in ``readings``).
DEFAULT_READING = "default"
#: A row's diagnosis category (``diagnose``): the claims of a paper are counted by these in REPORT.md's first table.
HOLDS_ALL, DIFFERS_ALL, READING_DEPENDENT = "holds", "differs", "reading-dependent"
CATEGORIES = (HOLDS_ALL, DIFFERS_ALL, READING_DEPENDENT, UNTESTABLE, MISSING)
#: The note of a claim whose metrics file has no provenance: its value is not taken (no verdict).
NO_PROVENANCE = "metrics without provenance (not run here)"


class ReportError(ValueError):
    """A metrics file is unreadable or names a claim the ledger does not define."""


def _read_metrics(metrics_dir: Path) -> dict[str, dict]:
    """``{claim_id: {"value": ..., "note": ..., "file": ...}}`` from every metrics JSON."""
    found: dict[str, dict] = {}
    known = registry()
    # hidden names are never metrics: temporaries of fileio (".x.json.tmp-*"), editor backups
    for path in sorted(p for p in metrics_dir.glob("*.json") if not p.name.startswith(".")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ReportError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
        except (UnicodeDecodeError, OSError) as exc:
            raise ReportError(f"{path}: cannot be read as UTF-8 JSON ({exc})") from None
        claims = data.get("claims") if isinstance(data, dict) else None
        if not isinstance(data, dict) or not isinstance(claims, (dict, type(None))):
            raise ReportError(f"{path}: expected a metrics object with a 'claims' mapping (tieringlab.results.Outputs "
                              f"writes one)")
        for cid, entry in (claims or {}).items():
            if not isinstance(entry, dict):
                raise ReportError(f"{path}: claim {cid!r}: expected {{'value': ..., 'note': ...}}, got {entry!r}")
            if cid not in known:
                raise ReportError(f"{path}: claim {cid!r} is not defined in tieringlab/claims/")
            if cid in found:
                raise ReportError(f"{path}: claim {cid!r} also reported by {found[cid]['file']}")
            found[cid] = {**entry, "file": path.name, "provenance": data.get("provenance")}
    return found


def _metrics_files(metrics_dir: Path) -> list[Path]:
    return sorted(p for p in metrics_dir.glob("*.json") if not p.name.startswith(".")) if metrics_dir.is_dir() else []


def notebook_provenance(results: str | Path | None = "results") -> dict[str, dict]:
    """``{stem: provenance}`` of every metrics file under ``results/metrics/``: its ``provenance`` entry (empty
    when it has none) plus ``status``, :func:`tieringlab.results.provenance_status` against the hash
    ``params.yaml`` gives the notebook now ("no run here", "reduced scale", "stale (...)", "paper scale", ...)."""
    out: dict[str, dict] = {}
    for path in _metrics_files(paths.results_dir(results) / "metrics"):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, OSError):
            data = None  # the ledger names an unreadable file (_read_metrics)
        prov = data.get("provenance") if isinstance(data, dict) else None
        prov = prov if isinstance(prov, dict) else None
        out[path.stem] = {**(prov or {}), "status": provenance_status(prov, current_params_hash(path.stem))}
    return out


def _fmt(value, unit: str) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{value:.4g}{(' ' + unit) if unit else ''}"


def _results_root(results: str | Path | None) -> Path:
    """The results folder, which must exist: a ledger of a folder that does not (a typo) would report every
    claim as not reproduced and look like a result. A stage install that a crash interrupted after its
    commit point is completed first (:func:`tieringlab.results.complete_installs`), so the ledger never
    mixes one run's metrics with another's figures."""
    root = paths.results_dir(results)
    if os.path.lexists(root) and not root.is_dir():
        raise ReportError(f"{root}: not a directory (--results must name the results folder)")
    if not root.is_dir():
        raise ReportError(f"{root}: no such results directory (run a stage first: `make reproduce` or "
                          f"`tieringlab run notebooks/NN_name.ipynb`), or pass --results with an existing one")
    if os.path.lexists(root / "metrics") and not (root / "metrics").is_dir():
        raise ReportError(f"{root / 'metrics'}: not a directory (the stages write their metrics JSON there)")
    try:
        complete_installs(root)
    except (OSError, fileio.JournalError) as exc:
        raise ReportError(f"{root}: a stage's install into it was interrupted and cannot be completed here, so "
                          f"its outputs are a mix of two runs: {exc}") from None
    return root


def _verdicts_by_reading(claim, entry: dict, value, pre_values: dict[str, dict],
                         defined: dict) -> dict[str, tuple[str, str]]:
    """``{reading: (verdict, why)}`` of ``claim`` under the default reading (its ``value``) and every other reading
    its metrics entry records. A precondition is taken under the same reading when its own entry records one,
    else at its default value (the reading does not change what it measures)."""
    values = {DEFAULT_READING: value, **((entry.get("readings") or {}) if value is not None else {})}
    out = {}
    for name, v in values.items():
        pre = {pid: (defined[pid], pre_values.get(pid, {}).get(name, pre_values.get(pid, {}).get(DEFAULT_READING)))
               for pid in claim.requires}
        # recorded without a value by a run of this checkout (the default reading's entry is there)
        out[name] = verdict_given(claim, v, pre, recorded=name == DEFAULT_READING and "value" in entry
                                  and isinstance(entry.get("provenance"), dict))
    return out


def _names(names: list[str]) -> str:
    return ", ".join(names)


def readings_text(by_reading: dict[str, tuple[str, str]]) -> str:
    """``"holds under: a, b; differs under: c; untestable under: d"`` over every reading of a row (empty when only
    the default reading was run)."""
    if len(by_reading) < 2:
        return ""
    parts = []
    for verdict in (HOLDS, DIFFERS, UNTESTABLE, MISSING):
        names = [n for n, (v, _) in by_reading.items() if v == verdict]
        if names:
            parts.append(f"{verdict} under: {_names(names)}")
    return "; ".join(parts)


def diagnose(by_reading: dict[str, tuple[str, str]]) -> tuple[str, str]:
    """``(category, text)`` of a row from its verdict under each reading (the default first):

    - ``not reproduced yet``: no value under the default reading;
    - ``untestable``: a precondition fails under the default reading: ``"precondition fails: X"`` (and what the
      readings under which it is testable give);
    - ``holds`` / ``differs``: every testable reading agrees (``"holds"``, ``"differs under every reading tried
      (n)"``);
    - ``reading-dependent``: the testable readings disagree: ``"reading-dependent: holds under Y; differs under
      Z"``.
    """
    default, why = by_reading[DEFAULT_READING]
    if default == MISSING:
        return MISSING, MISSING
    testable = {n: v for n, (v, _) in by_reading.items() if v in (HOLDS, DIFFERS)}
    holds = [n for n, v in testable.items() if v == HOLDS]
    differs = [n for n, v in testable.items() if v == DIFFERS]
    if default == UNTESTABLE:
        text = why  # "precondition fails: ..."
        if testable:
            text += ("; testable under " + _names(list(testable)) + ": "
                     + "; ".join(p for p in (f"holds under {_names(holds)}" if holds else "",
                                             f"differs under {_names(differs)}" if differs else "") if p))
        return UNTESTABLE, text
    if holds and differs:
        return READING_DEPENDENT, f"reading-dependent: holds under {_names(holds)}; differs under {_names(differs)}"
    if holds:
        return HOLDS_ALL, "holds" if len(holds) == 1 else f"holds under every reading tried ({len(holds)})"
    return DIFFERS_ALL, ("differs" if len(differs) == 1 and len(by_reading) == 1
                         else f"differs under every reading tried ({len(differs)})")


def build(results: str | Path | None = "results") -> pd.DataFrame:
    """The ledger as a DataFrame (one row per defined claim, in registry order). ``results`` must exist;
    a missing ``metrics/`` folder in it means no stage has reported yet (every claim not reproduced).
    ``attrs``: ``audit`` (the audit's findings) and ``provenance`` (:func:`notebook_provenance` of ``results``)."""
    root = _results_root(results)
    found = _read_metrics(root / "metrics") if (root / "metrics").is_dir() else {}
    provenance = notebook_provenance(root)
    status = {stem: prov["status"] for stem, prov in provenance.items()}
    defined = registry()

    def value_of(cid: str):
        entry = found.get(cid, {})
        # a metrics file without provenance is not a run of this checkout: no verdict from it
        return (None, True) if entry and not isinstance(entry.get("provenance"), dict) else (entry.get("value"), False)

    # the preconditions as measured on the run, per reading: a claim whose mechanism the run cannot exercise
    # is untestable
    pre_values = {}
    for cid, c in defined.items():
        if c.kind == "precondition":
            v = value_of(cid)[0]
            pre_values[cid] = {DEFAULT_READING: v, **((found.get(cid, {}).get("readings") or {}) if v is not None
                                                      else {})}
    # the honesty audit over the runs' recorded values (tieringlab.audit): flagged rows say so in their note
    findings = audit.audit({cid: e for cid, e in found.items() if not value_of(cid)[1]}, defined)
    flagged: dict[str, list[str]] = {}
    for f in findings:
        for cid in f.ids:
            others = [o for o in f.ids if o != cid]
            flagged.setdefault(cid, []).append(f"audit: {f.kind}" + (f" as {', '.join(others)}" if others else "")
                                               + f" ({f.why})")
    rows = []
    for cid, claim in defined.items():
        entry = found.get(cid, {})
        value, unrun = value_of(cid)
        notes = [n for n in (claim.note, entry.get("note")) if n]
        if unrun:
            notes.append(NO_PROVENANCE)
        notes += flagged.get(cid, [])
        by_reading = _verdicts_by_reading(claim, entry, value, pre_values, defined)
        verdict, why = by_reading[DEFAULT_READING]
        if why and verdict != UNTESTABLE:
            notes.append(why)
        diagnosis = diagnose(by_reading)[1]
        rows.append({
            "paper": claim.paper, "where": claim.where, "claim": claim.text,
            "paper_value": claim.paper_value, "reproduced": _fmt(value, claim.unit),
            "tolerance": claim.check.describe(claim.unit), "verdict": verdict, "diagnosis": diagnosis,
            "readings": readings_text(by_reading), "kind": claim.kind,
            "note": " ".join(notes), "source": f"notebooks/{claim.source}.ipynb", "id": cid,
            "provenance": status.get(claim.source, ""),
        })
    ledger = pd.DataFrame(rows, columns=COLUMNS)
    ledger.attrs["audit"] = [str(f) for f in findings]
    ledger.attrs["provenance"] = provenance  # notebook_provenance's, for the results site (one reading of params.yaml)
    return ledger


def category(ledger: pd.DataFrame) -> pd.Series:
    """Each row's diagnosis category (:data:`CATEGORIES`), from the ``diagnosis`` text :func:`diagnose` wrote."""
    def cat(text: str) -> str:
        if text == MISSING:
            return MISSING
        if text.startswith("precondition fails"):
            return UNTESTABLE
        if text.startswith("reading-dependent"):
            return READING_DEPENDENT
        return HOLDS_ALL if text.startswith("holds") else DIFFERS_ALL
    return ledger["diagnosis"].map(cat)


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


#: The first table's columns: a paper's claim rows counted by diagnosis (:func:`diagnose`), which partitions them.
COUNT_LABELS = {HOLDS_ALL: "hold", DIFFERS_ALL: "differ", READING_DEPENDENT: "reading-dependent",
                UNTESTABLE: "untestable", MISSING: "not reproduced yet"}


def counts_by_paper(ledger: pd.DataFrame) -> pd.DataFrame:
    """Per paper (rows, in ledger order), over its rows of kind ``claim``: ``claims`` and the count of each
    diagnosis category (:data:`COUNT_LABELS`): ``hold`` / ``differ`` under every reading tried, ``reading-dependent``
    (the readings disagree), ``untestable`` (a precondition of the claim's mechanism fails on our run under the
    default reading) and ``not reproduced yet``. The counts add up to ``claims``."""
    claims = ledger[ledger["kind"] == "claim"]
    cats = category(claims)
    papers = list(dict.fromkeys(ledger["paper"]))
    out = pd.DataFrame(0, index=pd.Index(papers, name="paper"), columns=["claims", *COUNT_LABELS.values()])
    for paper, group in cats.groupby(claims["paper"], sort=False):
        c = Counter(group)
        out.loc[paper] = [len(group), *(c.get(k, 0) for k in COUNT_LABELS)]
    return out[out["claims"] > 0]


def summary(ledger: pd.DataFrame) -> str:
    """``"N claims: a hold, b differ, u untestable, c not reproduced yet"`` over the rows of kind "claim", then the
    other kinds, which are not counted as evidence about the papers (preconditions: how many hold and fail)."""
    claims = ledger[ledger["kind"] == "claim"]
    counts = Counter(claims["verdict"])
    text = (f"{len(claims)} claims: {counts.get(HOLDS, 0)} hold, {counts.get(DIFFERS, 0)} differ, "
            + (f"{counts.get(UNTESTABLE, 0)} untestable, " if counts.get(UNTESTABLE, 0) else "")
            + f"{counts.get(MISSING, 0)} not reproduced yet")
    dependent = int((category(claims) == READING_DEPENDENT).sum())
    if dependent:
        text += f" ({dependent} of them reading-dependent)"
    pre = ledger[ledger["kind"] == "precondition"]
    if len(pre):
        c = Counter(pre["verdict"])
        text += (f"; {len(pre)} preconditions of our runs ({c.get(HOLDS, 0)} hold, {c.get(DIFFERS, 0)} fails, "
                 f"{c.get(MISSING, 0)} not measured yet)")
    for kind, label in (("calibration", "calibration checks"), ("sanity", "simulator sanity checks"),
                        ("extension", "statements of our own (no paper's)")):
        rows = ledger[ledger["kind"] == kind]
        if len(rows):
            c = Counter(rows["verdict"])
            text += (f"; plus {len(rows)} {label}, not counted ({c.get(HOLDS, 0)} hold, {c.get(DIFFERS, 0)} "
                     f"differ, {c.get(MISSING, 0)} not reproduced yet)")
    return text


def render_markdown(ledger: pd.DataFrame) -> str:
    lines = [
        "# tieringlab claims ledger",
        "",
        "Generated by `python -m tieringlab.report` from `results/metrics/*.json`; every verdict is "
        "computed from the reproduced value and the stated tolerance (definitions in `tieringlab/claims/`). "
        "Only rows of kind `claim` are evidence about the papers; `calibration` rows check numbers our "
        "synthetic inputs were fitted to, `sanity` rows check the simulator"
        + (", `extension` rows are statements of our own." if (ledger["kind"] == "extension").any() else "."),
        "",
        f"**{summary(ledger)}.**",
        "",
        "| paper | claims | " + " | ".join(COUNT_LABELS.values()) + " |",
        "| --- | --- | " + " | ".join("---" for _ in COUNT_LABELS) + " |",
        *(f"| {_md_cell(p)} | " + " | ".join(str(int(v)) for v in row) + " |"
          for p, row in counts_by_paper(ledger).iterrows()),
        "",
        "Claims are counted by their diagnosis. `hold` / `differ`: the verdict is the same under every reading of "
        "what the paper leaves open that the experiment ran; `reading-dependent`: it holds under some readings and "
        "differs under others (the row says which); `untestable`: a precondition of the claim's mechanism (a "
        "`precondition` row, measured on the run) fails under the default reading, so the run says nothing about "
        "the paper's system (the row names it). The `verdict` column is the default reading's.",
        "",
        "**Audit** (`tieringlab.audit`: two claim rows computing the same quantity; a claim row no reading or seed "
        "moves): " + ("; ".join(ledger.attrs.get("audit") or []) or "nothing flagged") + ".",
        "",
    ]
    for paper, group in ledger.groupby("paper", sort=False):
        lines += [f"## {paper}", "",
                  "| where | claim | paper | reproduced | tolerance | verdict | diagnosis | kind | note |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for _, r in group.iterrows():
            lines.append("| " + " | ".join(_md_cell(r[c]) for c in
                                         ("where", "claim", "paper_value", "reproduced", "tolerance",
                                          "verdict", "diagnosis", "kind", "note")) + " |")
        lines.append("")
    return "\n".join(lines)


def write(results: str | Path | None = "results") -> pd.DataFrame:
    """Build the ledger and write ``REPORT.md`` and ``report.csv`` atomically under ``results``."""
    root = _results_root(results)
    ledger = build(root)
    fileio.remove_stale_temps(root, names=("report.csv", "REPORT.md"))
    fileio.write_text(root / "report.csv", ledger.to_csv(index=False, lineterminator="\n"))
    fileio.write_text(root / "REPORT.md", render_markdown(ledger))
    return ledger


def announce(ledger: pd.DataFrame, results: str | Path | None) -> None:
    """Print the ledger's summary, where REPORT.md went and the audit's findings (one line each)."""
    print(f"{summary(ledger)} -> {paths.results_dir(results) / 'REPORT.md'}")
    for finding in ledger.attrs.get("audit") or []:
        print(f"audit: {finding}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tieringlab.report", description=__doc__.splitlines()[0])
    ap.add_argument("--results", default="results", help="results directory (default: results/ at the repo root)")
    args = ap.parse_args(argv)
    try:
        ledger = write(args.results)
    except ReportError as exc:
        print(f"python -m tieringlab.report: error: {exc}", file=sys.stderr)
        return 2
    announce(ledger, args.results)
    from tieringlab import site  # noqa: PLC0415  (site builds on this module)

    try:
        print(f"results site -> {site.write(args.results)}")
    except (ValueError, OSError) as exc:  # a caption manifest edited by hand (the site names the file)
        print(f"python -m tieringlab.report: error: the results site was not written: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
