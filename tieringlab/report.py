"""The claims ledger: gather every notebook's metrics into ``results/REPORT.md`` and ``results/report.csv``.

One row per claim defined in :mod:`tieringlab.claims`, with paper, table or figure, claim, paper
value, reproduced value, tolerance and a computed verdict. Run as ``python -m tieringlab.report``
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

from tieringlab import fileio, paths
from tieringlab.claims import DIFFERS, HOLDS, MISSING, registry
from tieringlab.results import complete_installs

COLUMNS = ["paper", "where", "claim", "paper_value", "reproduced", "tolerance", "verdict", "kind", "note", "source",
           "id"]


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
            found[cid] = {**entry, "file": path.name}
    return found


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


def build(results: str | Path | None = "results") -> pd.DataFrame:
    """The ledger as a DataFrame (one row per defined claim, in registry order). ``results`` must exist;
    a missing ``metrics/`` folder in it means no stage has reported yet (every claim not reproduced)."""
    root = _results_root(results)
    found = _read_metrics(root / "metrics") if (root / "metrics").is_dir() else {}
    rows = []
    for cid, claim in registry().items():
        entry = found.get(cid, {})
        value = entry.get("value")
        notes = [n for n in (claim.note, entry.get("note")) if n]
        rows.append({
            "paper": claim.paper, "where": claim.where, "claim": claim.text,
            "paper_value": claim.paper_value, "reproduced": _fmt(value, claim.unit),
            "tolerance": claim.check.describe(claim.unit), "verdict": claim.verdict(value), "kind": claim.kind,
            "note": " ".join(notes), "source": f"notebooks/{claim.source}.ipynb", "id": cid,
        })
    return pd.DataFrame(rows, columns=COLUMNS)


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def summary(ledger: pd.DataFrame) -> str:
    """``"N claims: a hold, b differ, c not reproduced yet"`` over the rows of kind "claim", then the
    calibration and sanity rows, which are not counted as evidence about the papers."""
    claims = ledger[ledger["kind"] == "claim"]
    counts = Counter(claims["verdict"])
    text = (f"{len(claims)} claims: {counts.get(HOLDS, 0)} hold, {counts.get(DIFFERS, 0)} differ, "
            f"{counts.get(MISSING, 0)} not reproduced yet")
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
    ]
    for paper, group in ledger.groupby("paper", sort=False):
        lines += [f"## {paper}", "",
                  "| where | claim | paper | reproduced | tolerance | verdict | kind | note |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for _, r in group.iterrows():
            lines.append("| " + " | ".join(_md_cell(r[c]) for c in
                                         ("where", "claim", "paper_value", "reproduced", "tolerance",
                                          "verdict", "kind", "note")) + " |")
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tieringlab.report", description=__doc__.splitlines()[0])
    ap.add_argument("--results", default="results", help="results directory (default: results/ at the repo root)")
    args = ap.parse_args(argv)
    try:
        ledger = write(args.results)
    except ReportError as exc:
        print(f"python -m tieringlab.report: error: {exc}", file=sys.stderr)
        return 2
    print(f"{summary(ledger)} -> {paths.results_dir(args.results) / 'REPORT.md'}")
    from tieringlab import site  # noqa: PLC0415  (site builds on this module)

    try:
        print(f"results site -> {site.write(args.results)}")
    except (ValueError, OSError) as exc:  # a caption manifest edited by hand (the site names the file)
        print(f"python -m tieringlab.report: error: the results site was not written: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
