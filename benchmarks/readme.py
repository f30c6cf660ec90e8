"""Write the README's Timings and Benchmarks tables from measurement records, not by hand.

``python -m benchmarks.readme [--logs results/logs] [--bench benchmarks/out] [--readme README.md] [--keep-stages]
[--keep-benchmarks]``

- **Timings**: one row per pipeline stage from ``results/logs/<stage>.json`` (what ``tieringlab run`` records:
  wall time, the kernel's CPU time and peak resident memory, the load average when it started, the commit,
  scale and date of the run).
- **Benchmarks**: one row per ``benchmarks/out/<name>.json`` (what ``python -m benchmarks`` records: every
  ``ratio_*`` against the peer timed in the same run, the wall time, the commit, date and load average), with
  the benchmark's one-line description (its module docstring's first paragraph, cut at a word) and its goal (``GOAL``).

Each table replaces the text between its ``<!-- BEGIN generated: NAME -->`` and ``<!-- END generated: NAME -->``
markers, written atomically; nothing else in the README changes. A record that cannot be read is an error naming
the file. Rerun after ``make reproduce`` or ``make bench`` and commit the README with the records' commit.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

from tieringlab import fileio

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


class RecordError(ValueError):
    """A measurement record (JSON) or the README's markers cannot be used."""


def _load(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordError(f"{path}: cannot read ({exc})") from None
    except json.JSONDecodeError as exc:
        raise RecordError(f"{path}: line {exc.lineno}: not JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise RecordError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data


def _minutes(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    m, s = divmod(round(float(seconds)), 60)
    return f"{m} min {s:02d} s" if m else f"{float(seconds):.1f} s"


def _gb(n_bytes: float | None) -> str:
    return "—" if n_bytes is None else f"{n_bytes / 2**30:.1f} GiB"


def _num(x: float | None, fmt: str = ".2f") -> str:
    return "—" if x is None else format(float(x), fmt)


def _day(iso: str | None) -> str:
    return iso[:10] if isinstance(iso, str) and len(iso) >= 10 else "—"


TOP_COSTS = 3  # functions shown per stage in the Timings table


def _costs(profile: dict | None) -> str:
    """A stage's largest costs from its log's ``profile`` (:mod:`tieringlab.profile`): the TOP_COSTS functions by
    CPU time with their share of the kernel's CPU, the package prefix dropped; a dash when not recorded."""
    if not isinstance(profile, dict) or not profile.get("top"):
        return "—"
    shown = []
    for name, _, share in profile["top"][:TOP_COSTS]:
        name = str(name).replace("tieringlab.", "", 1) if str(name).startswith("tieringlab.") else str(name)
        shown.append(f"`{name}`" + ("" if share is None else f" {100 * float(share):.0f} %"))
    return ", ".join(shown)


def _log_rows(logs: Path) -> list[tuple[list[str], float]]:
    """``(row, wall seconds)`` per ``<stage>.json`` in ``logs`` (sorted by stage name)."""
    rows = []
    for path in sorted(logs.glob("*.json")):
        log = _load(path)
        stage, prov = log.get("stage"), log.get("provenance") or {}
        if not isinstance(stage, dict) or "stage_seconds" not in stage:
            raise RecordError(f"{path}: no 'stage' timing (written by `tieringlab run`?)")
        cpu = [stage.get("cpu_user_s"), stage.get("cpu_system_s")]
        commit = str(prov.get("commit") or "")[:7] or "—"
        rows.append(([f"`{log.get('notebook', path.stem)}`", str(prov.get("scale", "—")),
                      _minutes(stage["stage_seconds"]),
                      "—" if None in cpu else f"{cpu[0]:.0f} + {cpu[1]:.0f} s",
                      _gb(stage.get("kernel_peak_rss_bytes")), _num(stage.get("load_average_at_start"), ".1f"),
                      _costs(stage.get("profile")),
                      commit + (" (dirty)" if prov.get("dirty") else ""), _day(prov.get("run_date"))],
                     float(stage["stage_seconds"])))
    return rows


def _with_total(rows: list[tuple[list[str], float]]) -> list[list[str]]:
    """The rows and, under them, their wall times' sum: "all stages" when every row names one commit (one run of
    the pipeline), else "sum of the rows" (separate runs, each naming its commit)."""
    if not rows:
        return []
    commits = {row[7].split(" ")[0] for row, _ in rows}
    label = "**all stages**" if len(commits) == 1 else "**sum of the rows** (separate runs)"
    total = sum(seconds for _, seconds in rows)
    return [row for row, _ in rows] + [[label, "", f"**{_minutes(total)}**", "", "", "", "", "", ""]]


def stage_rows(logs: Path) -> list[list[str]]:
    """The Timings rows, one per ``<stage>.json`` in ``logs`` (sorted by stage name), and their sum."""
    return _with_total(_log_rows(logs))


def _seconds(cell: str) -> float:
    """The seconds of a wall-time cell as :func:`_minutes` writes it ("8 min 27 s", "26.4 s")."""
    parts = cell.strip("* ").split()
    try:
        if len(parts) == 4 and parts[1] == "min" and parts[3] == "s":
            return 60 * int(parts[0]) + int(parts[2])
        if len(parts) == 2 and parts[1] == "s":
            return float(parts[0])
    except ValueError:
        pass
    raise RecordError(f"README: cannot read the wall time {cell!r} of a kept Timings row")


def _current_rows(text: str, block: str, n_cells: int, have: set[str]) -> list[list[str]]:
    """The rows of the README's generated ``block`` whose first cell is not in ``have`` (each as its cells, escaped
    bars read back)."""
    begin, end = _markers(block)
    body = text.split(begin, 1)[1].split(end, 1)[0] if begin in text and end in text else ""
    rows = []
    for line in body.splitlines():
        if line.startswith("| `"):
            cells = [c.strip().replace("\\|", "|") for c in line.strip().strip("|").split(" | ")]
            if len(cells) == n_cells and cells[0] not in have:
                rows.append(cells)
    return rows


def kept_stage_rows(text: str, logs: Path) -> list[list[str]]:
    """``--keep-stages``: the Timings rows of ``logs`` and, for every stage of the README's current table with no log
    there, its current row (a partial re-measure: each row names its commit and date), sorted by stage, with their
    sum; [] when ``logs`` holds no stage log (nothing to re-measure: the table stays as it is)."""
    fresh = _log_rows(logs)
    if not fresh:
        return []
    old = [(cells, _seconds(cells[2])) for cells in
           _current_rows(text, "timings", len(STAGE_HEADER), {row[0] for row, _ in fresh})]
    return _with_total(sorted(fresh + old, key=lambda r: r[0][0]))


def kept_bench_rows(text: str, out: Path) -> list[list[str]]:
    """``--keep-benchmarks``: the Benchmarks rows of the records in ``out`` and, for every benchmark of the README's
    current table with no record there, its current row (each names its commit and date), sorted by name; [] when
    ``out`` holds no record."""
    fresh = bench_rows(out)
    if not fresh:
        return []
    return sorted(fresh + _current_rows(text, "benchmarks", len(BENCH_HEADER), {r[0] for r in fresh}),
                  key=lambda r: r[0])


DESCRIPTION_CHARS = 160  # a benchmark's description: its docstring's first paragraph, cut at a word


def _description(name: str) -> tuple[str, str]:
    """A benchmark module's docstring's first paragraph (at most DESCRIPTION_CHARS) and its ``GOAL`` ('—' when it
    states none)."""
    try:
        module = importlib.import_module(f"benchmarks.bench_{name}")
    except ImportError:
        return f"(no module `benchmarks/bench_{name}.py`)", "—"
    paragraph = " ".join((module.__doc__ or "").strip().split("\n\n")[0].split()).replace("``", "`")
    if len(paragraph) > DESCRIPTION_CHARS:
        paragraph = paragraph[:DESCRIPTION_CHARS].rsplit(" ", 1)[0].rstrip(",;:") + " …"
    return paragraph.rstrip(":.") or "—", str(getattr(module, "GOAL", "—"))


def bench_rows(out: Path) -> list[list[str]]:
    """The Benchmarks rows, one per ``<name>.json`` in ``out``."""
    rows = []
    for path in sorted(out.glob("*.json")):
        rec = _load(path)
        name = rec.get("benchmark", path.stem)
        ratios = {k: v for k, v in rec.items() if k.startswith("ratio") and isinstance(v, (int, float))}
        if not ratios:
            raise RecordError(f"{path}: no 'ratio_*' entry (every benchmark reports one against its peer)")
        what, goal = _description(name)
        shown = ", ".join(f"`{k}` {v:.3g}" for k, v in ratios.items())
        rows.append([f"`{name}`" + (" (quick)" if rec.get("quick") else ""), what, shown, goal,
                     _minutes(rec.get("wall_s")), _num(rec.get("load_average_1min"), ".1f"),
                     str(rec.get("commit") or "—")[:7], _day(rec.get("date"))])
    return rows


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


STAGE_HEADER = ["stage", "scale", "wall", "kernel CPU (user + system)", "kernel peak memory", "load at start",
                "largest costs (share of the kernel's CPU)", "commit", "date"]
BENCH_HEADER = ["benchmark", "what", "ratios (peer / tieringlab, same run)", "goal", "wall", "load", "commit",
                "date"]


def _shown(path: Path) -> str:
    """``path`` relative to the repository when inside it (the README holds no path of one checkout)."""
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return f"{path.parent.name}/{path.name}" if path.parent.name else path.name


def _markers(name: str) -> tuple[str, str]:
    """The README comments that open and close generated block ``name``."""
    return f"<!-- BEGIN generated: {name} -->", f"<!-- END generated: {name} -->"


def replace_block(text: str, name: str, body: str, source: str) -> str:
    begin, end = _markers(name)
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        raise RecordError(f"README: expected one '{begin}' before one '{end}'")
    note = f"<!-- written by `python -m benchmarks.readme` from {source}; do not edit by hand -->"
    head, rest = text.split(begin)
    _, tail = rest.split(end)
    return f"{head}{begin}\n{note}\n\n{body}\n\n{end}{tail}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.readme", description=__doc__.splitlines()[0])
    ap.add_argument("--logs", type=Path, default=ROOT / "results" / "logs", help="stage logs (results/logs)")
    ap.add_argument("--bench", type=Path, default=HERE / "out", help="benchmark records (benchmarks/out)")
    ap.add_argument("--readme", type=Path, default=ROOT / "README.md")
    ap.add_argument("--keep-stages", action="store_true",
                    help="keep the current Timings rows of stages with no log in --logs (a partial re-measure)")
    ap.add_argument("--keep-benchmarks", action="store_true",
                    help="keep the current Benchmarks rows of benchmarks with no record in --bench (a partial re-run)")
    args = ap.parse_args(argv)
    try:
        text = args.readme.read_text(encoding="utf-8")
        stages = kept_stage_rows(text, args.logs) if args.keep_stages else stage_rows(args.logs)
        benches = kept_bench_rows(text, args.bench) if args.keep_benchmarks else bench_rows(args.bench)
        if stages:
            source = _shown(args.logs) + (" and the rows of other stages kept from the previous table"
                                          if args.keep_stages else "")
            text = replace_block(text, "timings", table(STAGE_HEADER, stages), source)
        if benches:
            text = replace_block(text, "benchmarks", table(BENCH_HEADER, benches), _shown(args.bench) + (
                " and the rows of other benchmarks kept from the previous table" if args.keep_benchmarks else ""))
    except (RecordError, OSError) as exc:
        print(f"benchmarks.readme: {exc}", file=sys.stderr)
        return 2
    fileio.write_text(args.readme, text)
    print(f"{args.readme}: {len(stages)} stage rows, {len(benches)} benchmark rows"
          + ("" if stages else f" (no logs in {args.logs}: Timings kept)")
          + ("" if benches else f" (no records in {args.bench}: Benchmarks kept)"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
