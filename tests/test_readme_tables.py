"""The README's Timings and Benchmarks tables are written from records (``python -m benchmarks.readme``):
stage logs as ``tieringlab run`` writes them, benchmark records as ``python -m benchmarks`` writes them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import readme

REPO = Path(__file__).resolve().parent.parent

README = """# x

## Timings

<!-- BEGIN generated: timings -->
old row
<!-- END generated: timings -->

## Benchmarks

<!-- BEGIN generated: benchmarks -->
<!-- END generated: benchmarks -->

## After
kept
"""


def stage_log(folder: Path, stem: str, seconds: float, **extra) -> None:
    log = {"notebook": stem, "provenance": {"commit": "0123456789abcdef", "dirty": False, "scale": "paper",
                                            "run_date": "2026-11-26T15:46:22+00:00"},
           "stage": {"stage_seconds": seconds, "cells": [], **extra}}
    (folder / f"{stem}.json").write_text(json.dumps(log))


def test_tables_come_from_the_records(tmp_path):
    logs, out = tmp_path / "logs", tmp_path / "out"
    logs.mkdir()
    out.mkdir()
    stage_log(logs, "00_quickstart", 26.4)
    stage_log(logs, "05_lmst", 480.2, cpu_user_s=859.0, cpu_system_s=21.4, kernel_peak_rss_bytes=4.5 * 2**30,
              load_average_at_start=1.25,
              profile={"process_cpu_s": 800.0, "sampled_cpu_s": 790.0, "interval_s": 0.05,
                       "top": [["tieringlab.policies.lmst.engine.advance", 560.0, 0.7],
                               ["import tieringlab.experiments", 80.0, 0.1], ["<__main__>", 40.0, 0.05],
                               ["tieringlab.results.Outputs.table", 8.0, 0.01]]})
    (out / "fcfs.json").write_text(json.dumps({"benchmark": "fcfs", "quick": False, "wall_s": 25.0,
                                               "commit": "abcdef0123", "date": "2026-11-26T17:00:00+00:00",
                                               "load_average_1min": 0.5, "ratio": 226.04, "sim_s": 23.5}))
    path = tmp_path / "README.md"
    path.write_text(README)
    assert readme.main(["--logs", str(logs), "--bench", str(out), "--readme", str(path)]) == 0
    text = path.read_text()
    assert "old row" not in text and text.endswith("## After\nkept\n")
    assert "| `00_quickstart` | paper | 26.4 s | — | — | — | — | 0123456 | 2026-11-26 |" in text
    assert ("| `05_lmst` | paper | 8 min 00 s | 859 + 21 s | 4.5 GiB | 1.2 | `policies.lmst.engine.advance` 70 %, "
            "`import tieringlab.experiments` 10 %, `<__main__>` 5 % | 0123456 | 2026-11-26 |") in text
    assert "| **all stages** |  | **8 min 27 s** |" in text
    row = next(line for line in text.splitlines() if line.startswith("| `fcfs`"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[0] == "`fcfs`" and cells[1].startswith("FCFS single-server response times")
    assert cells[2:] == ["`ratio` 226", readme.importlib.import_module("benchmarks.bench_fcfs").GOAL, "25.0 s",
                         "0.5", "abcdef0", "2026-11-26"]
    again = text
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    stage_log(mixed, "00_quickstart", 26.4)
    (mixed / "01_x.json").write_text(json.dumps({"notebook": "01_x", "provenance": {"commit": "fedcba9876"},
                                                 "stage": {"stage_seconds": 10.0, "cells": []}}))
    rows = readme.stage_rows(mixed)
    assert rows[-1][0] == "**sum of the rows** (separate runs)" and rows[-1][2] == "**36.4 s**"
    assert readme.main(["--logs", str(logs), "--bench", str(out), "--readme", str(path)]) == 0
    assert path.read_text() == again  # idempotent


def test_a_partial_remeasure_keeps_the_other_stages_rows(tmp_path):
    """--keep-stages: the stages with a log get new rows, the others keep theirs (each names its commit and date);
    the sum covers every row; without the flag the table holds the logged stages only."""
    logs, out = tmp_path / "logs", tmp_path / "out"
    logs.mkdir()
    out.mkdir()
    stage_log(logs, "00_quickstart", 26.4)
    stage_log(logs, "05_lmst", 480.2)
    path = tmp_path / "README.md"
    path.write_text(README)
    assert readme.main(["--logs", str(logs), "--bench", str(out), "--readme", str(path)]) == 0
    for p in logs.glob("*.json"):
        p.unlink()
    log = {"notebook": "05_lmst", "provenance": {"commit": "fedcba9876", "scale": "paper",
                                                  "run_date": "2026-11-27T10:00:00+00:00"},
           "stage": {"stage_seconds": 62.0, "cells": [], "profile": {"top": [["tieringlab.a|b", 1.0, 1.0]]}}}
    (logs / "05_lmst.json").write_text(json.dumps(log))
    assert readme.main(["--logs", str(logs), "--bench", str(out), "--readme", str(path), "--keep-stages"]) == 0
    text = path.read_text()
    assert "| `00_quickstart` | paper | 26.4 s | — | — | — | — | 0123456 | 2026-11-26 |" in text
    assert "| `05_lmst` | paper | 1 min 02 s | — | — | — | `a\\|b` 100 % | fedcba9 | 2026-11-27 |" in text
    assert "8 min 00 s" not in text and "| **sum of the rows** (separate runs) |  | **1 min 28 s** |" in text
    assert "and the rows of other stages kept from the previous table" in text
    assert readme.main(["--logs", str(logs), "--bench", str(out), "--readme", str(path), "--keep-stages"]) == 0
    assert path.read_text() == text  # a kept row is read back as written (escaped bars included)
    assert readme.main(["--logs", str(logs), "--bench", str(out), "--readme", str(path)]) == 0
    assert "`00_quickstart`" not in path.read_text()


def test_bad_records_are_named_and_the_readme_untouched(tmp_path, capsys):
    logs, out = tmp_path / "logs", tmp_path / "out"
    logs.mkdir()
    out.mkdir()
    (logs / "00_quickstart.json").write_text('{"notebook": "00_quickstart",\n "stage": [}')
    path = tmp_path / "README.md"
    path.write_text(README)
    assert readme.main(["--logs", str(logs), "--bench", str(out), "--readme", str(path)]) == 2
    assert f"{logs / '00_quickstart.json'}: line 2: not JSON" in capsys.readouterr().err
    assert path.read_text() == README
    (logs / "00_quickstart.json").unlink()
    (out / "x.json").write_text(json.dumps({"benchmark": "x", "wall_s": 1.0}))
    assert readme.main(["--logs", str(logs), "--bench", str(out), "--readme", str(path)]) == 2
    assert "no 'ratio_*' entry" in capsys.readouterr().err
    path.write_text(README.replace("<!-- END generated: timings -->\n", ""))
    stage_log(logs, "00_quickstart", 1.0)
    (out / "x.json").unlink()
    assert readme.main(["--logs", str(logs), "--bench", str(out), "--readme", str(path)]) == 2
    assert "expected one '<!-- BEGIN generated: timings -->'" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["timings", "benchmarks"])
def test_the_readme_has_each_generated_block_once(name):
    text = (REPO / "README.md").read_text()
    assert text.count(f"<!-- BEGIN generated: {name} -->") == 1 and text.count(f"<!-- END generated: {name} -->") == 1


def test_a_partial_rerun_keeps_the_other_benchmarks_rows(tmp_path):
    """--keep-benchmarks: the benchmarks with a record get new rows, the others keep theirs (sorted by name); without
    the flag the table holds the recorded benchmarks only."""
    logs, out = tmp_path / "logs", tmp_path / "out"
    logs.mkdir()
    out.mkdir()

    def record(name, ratio, commit):
        (out / f"{name}.json").write_text(json.dumps({"benchmark": name, "quick": False, "wall_s": 25.0,
                                                      "commit": commit, "date": "2026-11-26T17:00:00+00:00",
                                                      "load_average_1min": 0.5, "ratio": ratio}))

    record("fcfs", 226.04, "abcdef0123")
    record("traces", 0.5, "abcdef0123")
    path = tmp_path / "README.md"
    path.write_text(README)
    assert readme.main(["--logs", str(logs), "--bench", str(out), "--readme", str(path)]) == 0
    for p in out.glob("*.json"):
        p.unlink()
    record("traces", 0.25, "fedcba9876")
    assert readme.main(["--logs", str(logs), "--bench", str(out), "--readme", str(path), "--keep-benchmarks"]) == 0
    text = path.read_text()
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert [r.split(" | ")[0] for r in rows] == ["| `fcfs`", "| `traces`"]
    assert "`ratio` 226" in rows[0] and "abcdef0" in rows[0]
    assert "`ratio` 0.25" in rows[1] and "fedcba9" in rows[1] and "`ratio` 0.5 " not in text
    assert "and the rows of other benchmarks kept from the previous table" in text
    assert readme.main(["--logs", str(logs), "--bench", str(out), "--readme", str(path), "--keep-benchmarks"]) == 0
    assert path.read_text() == text  # a kept row is read back as written
    assert readme.main(["--logs", str(logs), "--bench", str(out), "--readme", str(path)]) == 0
    assert "`fcfs`" not in path.read_text()
