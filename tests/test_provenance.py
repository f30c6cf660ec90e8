"""Provenance of the metrics (issue 28 item 5): each metrics file records the commit, whether the tree was dirty,
the parameters' hash, the scale and the commit's date; the ledger and the site show it per notebook, marking
reduced-scale and stale runs, and a metrics file without provenance (committed to git, or older) gives no verdict.

Independent truth: the commit and the dirty state are asked of git here with plain commands on a repository
made in the test; "paper scale" is the parameters exactly as ``params.yaml`` gives them (read here with yaml,
not through tieringlab), "reduced" one field changed; the hash's canonical form is written out in the test.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tieringlab import params, pipeline, report, results, site
from tieringlab.claims import HOLDS, MISSING, registry
from tieringlab.results import Outputs

REPO = Path(__file__).resolve().parent.parent
STEM = "00_quickstart"
CLAIM = "vfrm.obs2.reaccess_within_5min.cloudphysics"  # a claim of notebook 00_quickstart: holds at 95 %
HAS_GIT = shutil.which("git") is not None
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, env={**os.environ, **GIT_ENV}, capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.fixture()
def checkout(tmp_path, monkeypatch) -> Path:
    """A repository root of our own (dvc.yaml and params.yaml copied; no git) as the current folder, so that
    the package's repository root, and the params.yaml runs are compared with, are this one's."""
    root = tmp_path / "checkout"
    root.mkdir()
    for name in ("dvc.yaml", "params.yaml"):
        shutil.copy(REPO / name, root / name)
    monkeypatch.chdir(root)
    return root


def paper_section(root: Path) -> tuple[object, int]:
    """Notebook 00's section and seed exactly as params.yaml at ``root`` sets them (read with yaml here)."""
    raw = yaml.safe_load((root / "params.yaml").read_text())
    return params.validate_section("quickstart", raw.get("quickstart") or {}), raw["seed"]


def run_quickstart(results_dir: Path, section, seed, value: float = 95.0) -> Path:
    out = Outputs(STEM, results_dir, params=section, seed=seed)
    out.metric("n_requests", 3000)
    out.claim(CLAIM, value)
    return out.metrics_path


def row(results_dir: Path):
    return report.build(results_dir).set_index("id").loc[CLAIM]


def test_params_hash_is_the_sha256_of_the_canonical_json():
    values = {"b": [1, 2.5, 3.0], "a": {"y": 160000000.0, "x": (True, None)}, "seed": 0}
    canonical = '{"a":{"x":[true,null],"y":160000000},"b":[1,2.5,3],"seed":0}'
    assert results.params_hash(values) == hashlib.sha256(canonical.encode()).hexdigest()
    assert results.params_hash({**values, "seed": 1}) != results.params_hash(values)


def test_provenance_is_recorded_and_deterministic(checkout, tmp_path):
    section, seed = paper_section(checkout)
    small = dataclasses.replace(section, max_requests=3000)
    first = run_quickstart(tmp_path / "a", small, seed)
    again = run_quickstart(tmp_path / "b", small, seed)
    assert first.read_bytes() == again.read_bytes()  # same parameters and seed: the same bytes
    prov = json.loads(first.read_text())["provenance"]
    assert prov == {"commit": None, "dirty": None, "commit_date": None, "scale": "reduced",
                    "params_hash": results.params_hash(results.notebook_values(small, seed=seed))}
    assert len(prov["params_hash"]) == 64
    # another seed is another parameter set: another hash, other bytes
    other = run_quickstart(tmp_path / "c", small, seed + 1)
    assert json.loads(other.read_text())["provenance"]["params_hash"] != prov["params_hash"]
    # the run's wall-clock date is in the log, beside the same provenance, never in the metrics
    log = json.loads(results.log_path(tmp_path / "a", STEM).read_text())["provenance"]
    assert log.pop("run_date")[:2] == "20" and log == prov
    assert "run_date" not in first.read_text()


def test_a_reduced_scale_metrics_file_is_marked(checkout, tmp_path):
    section, seed = paper_section(checkout)
    run_quickstart(tmp_path / "r", dataclasses.replace(section, max_requests=3000), seed)
    got = row(tmp_path / "r")
    assert got["verdict"] == HOLDS  # a verdict, marked as the reduced run's
    assert got["provenance"] == "reduced scale, no git commit"
    assert report.notebook_provenance(tmp_path / "r")[STEM]["status"] == "reduced scale, no git commit"
    assert '<span class="provenance reduced-scale">reduced scale, no git commit</span>' in site.build(tmp_path / "r")


def test_a_paper_scale_run_becomes_stale_when_params_yaml_changes(checkout, tmp_path):
    section, seed = paper_section(checkout)
    run_quickstart(tmp_path / "p", section, seed)
    assert json.loads((tmp_path / "p/metrics" / f"{STEM}.json").read_text())["provenance"]["scale"] == "paper"
    assert row(tmp_path / "p")["provenance"] == "paper scale, no git commit"
    raw = yaml.safe_load((checkout / "params.yaml").read_text())
    raw["quickstart"] = {**(raw.get("quickstart") or {}), "line_bytes": 2 * section.line_bytes}
    (checkout / "params.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    got = row(tmp_path / "p")
    assert got["provenance"] == "stale (params.yaml changed since the run), no git commit"
    assert got["verdict"] == HOLDS  # marked, not hidden
    assert "stale (params.yaml changed since the run)" in site.build(tmp_path / "p")
    # a params.yaml without the notebook's section: nothing to compare with, stale too
    del raw["quickstart"]
    (checkout / "params.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    assert results.current_params_hash(STEM) is None
    assert row(tmp_path / "p")["provenance"].startswith("stale")


def test_a_metrics_file_without_provenance_yields_no_verdict(tmp_path):
    """As a metrics file committed to git (or written before provenance) reads in a fresh clone."""
    (tmp_path / "metrics").mkdir()
    (tmp_path / "metrics" / f"{STEM}.json").write_text(json.dumps(
        {"notebook": STEM, "values": {"n_requests": 3000}, "claims": {CLAIM: {"value": 95.0, "note": None}}}))
    ledger = report.build(tmp_path).set_index("id")
    got = ledger.loc[CLAIM]
    assert (got["verdict"], got["reproduced"], got["provenance"]) == (MISSING, "—", "no run here")
    assert got["note"].endswith(report.NO_PROVENANCE)
    assert (ledger["verdict"] == MISSING).all()
    others = ledger[[registry()[c].source != STEM for c in ledger.index]]
    assert (others["provenance"] == "").all()  # notebooks with no metrics file at all
    assert report.notebook_provenance(tmp_path) == {STEM: {"status": "no run here"}}
    # the same file with provenance: the verdict comes back
    run_quickstart(tmp_path, *paper_section(REPO))
    assert row(tmp_path)["verdict"] == HOLDS


def test_every_notebook_run_by_the_pipeline_is_paper_scale():
    """Each notebook's parameters as ``tieringlab run`` injects them and the notebook validates them (its section
    through params.check, the shared traces section through validate_section, as the notebooks' TR) hash to what
    params.yaml gives it: the notebooks' Outputs calls record paper scale for a paper-scale run."""
    loaded = params.load(REPO / "params.yaml")
    for nb in sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        injected = {**pipeline.parameters_from(loaded, nb, None), "results_dir": "x"}
        section = params.check(pipeline.section_of(nb), injected)
        shared = {k: dataclasses.asdict(params.validate_section(k, injected[k]))
                  for k in getattr(type(section), "uses", ())}
        prov = results.provenance(nb.stem, section, shared=shared, seed=injected["seed"], root=REPO)
        assert prov["scale"] == "paper", nb.name
        assert prov["params_hash"] == results.current_params_hash(nb.stem, REPO)
        source = "".join(line for cell in json.loads(nb.read_text())["cells"] for line in cell["source"])
        call = f'Outputs("{nb.stem}", results_dir, params=P, seed=seed' + (', shared={"traces": TR}' if shared else "")
        assert call + ")\n" in source, nb.name


def test_a_section_that_uses_traces_needs_them(tmp_path):
    section = params.validate_section("vfrm_single_vm", {})
    with pytest.raises(ValueError, match=r"uses the shared sections \['traces'\]"):
        Outputs("02_vfrm_single_vm", tmp_path, params=section, seed=0)
    with pytest.raises(ValueError, match=r"not used \['traces'\]"):
        Outputs(STEM, tmp_path, params=params.validate_section("quickstart", {}), seed=0, shared={"traces": {}})


def test_status_labels():
    prov = {"commit": "0123456789abcdef", "dirty": True, "params_hash": "h", "scale": "paper",
            "commit_date": "2026-11-24T10:00:00+00:00"}
    assert results.provenance_status(prov, "h") == "paper scale, commit 0123456 of 2026-11-24 (dirty tree)"
    assert results.provenance_status({**prov, "dirty": False}, "other") == (
        "stale (params.yaml changed since the run), commit 0123456 of 2026-11-24")
    assert results.provenance_status({**prov, "scale": "reduced"}, "h").startswith("reduced scale, ")
    assert results.provenance_status({**prov, "scale": "unknown", "params_hash": None}, None).startswith(
        "unknown scale, ")
    assert results.provenance_status(None, "h") == "no run here"


@pytest.mark.skipif(not HAS_GIT, reason="git is not installed")
def test_commit_and_dirty_tree_from_git(checkout, tmp_path):
    (checkout / "a.txt").write_text("a\n")
    (checkout / "results").mkdir()
    (checkout / "results" / "committed.json").write_text("{}\n")  # as results/metrics/05_lmst.json was
    (checkout / "dvc.lock").write_text("schema: '2.0'\n")
    assert results.git_state(checkout) == {"commit": None, "dirty": None, "commit_date": None}  # not a checkout
    git(checkout, "init", "-q")
    assert results.git_state(checkout)["commit"] is None  # no commit yet
    git(checkout, "add", "-A")
    git(checkout, "commit", "-qm", "first")
    head, date = git(checkout, "rev-parse", "HEAD"), git(checkout, "show", "-s", "--format=%cI", "HEAD")
    assert results.git_state(checkout) == {"commit": head, "dirty": False, "commit_date": date}
    # what runs write is no change of the tree: results/ (tracked or not), build/, dvc.lock, untracked files
    (checkout / "results" / "committed.json").write_text('{"claims": {}}\n')
    (checkout / "build").mkdir()
    (checkout / "build" / "x").write_text("x\n")
    (checkout / "dvc.lock").write_text("schema: '2.0'\nstages: {}\n")
    (checkout / "new.txt").write_text("untracked\n")
    assert results.git_state(checkout)["dirty"] is False
    index = (checkout / ".git" / "index").read_bytes()
    (checkout / "a.txt").write_text("b\n")
    assert results.git_state(checkout) == {"commit": head, "dirty": True, "commit_date": date}
    assert (checkout / ".git" / "index").read_bytes() == index  # asked without writing git's index
    section, seed = paper_section(checkout)
    run_quickstart(tmp_path / "g", section, seed)
    prov = json.loads((tmp_path / "g/metrics" / f"{STEM}.json").read_text())["provenance"]
    assert prov == {"commit": head, "dirty": True, "commit_date": date, "scale": "paper",
                    "params_hash": results.current_params_hash(STEM)}
    assert row(tmp_path / "g")["provenance"] == f"paper scale, commit {head[:7]} of {date[:10]} (dirty tree)"


def test_the_main_branch_commits_no_results():
    """A fresh clone has no metrics, so its ledger gives no verdict for a notebook that has not run there
    (metrics are committed only by DVC experiments, on their own commits)."""
    import subprocess

    from tieringlab import paths

    root = paths.repo_root()
    try:
        tracked = subprocess.run(["git", "-C", str(root), "ls-files", "results"], capture_output=True, text=True,
                                 check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    assert tracked == [], f"results files committed: {tracked}"


@pytest.mark.parametrize("stem, section, speed", [
    ("03_gvfrm_multi_vm", "gvfrm_multi_vm", {"caches": {"threads": 1}}),
    ("02_vfrm_single_vm", "vfrm_single_vm", {"caches": {"threads": 1, "engine": "numba"}}),
    ("08_otf_ast", "otf_ast", {"threads": 1}),
])
def test_a_speed_only_setting_keeps_paper_scale_and_a_scale_setting_does_not(checkout, stem, section, speed):
    """Issue 35: a notebook at params.yaml's settings but another thread count or page-cache engine (speed only: the
    results are identical for any, tests/test_caching.py, tests/test_otf_ast_experiment.py) is a paper-scale run,
    not stale; a changed twin scale is reduced. Independent truth: the sections are read from params.yaml with
    yaml here."""
    raw = yaml.safe_load((checkout / "params.yaml").read_text())
    current = results.current_params_hash(stem, checkout)

    def prov(section_changes=None, traces_changes=None):
        sec = {**raw[section], **(section_changes or {})}
        traces = {**raw["traces"], **(traces_changes or {})}
        p = params.validate_section(section, sec)
        return results.provenance(stem, p, shared={"traces": traces}, seed=raw["seed"], root=checkout)

    paper = prov()
    assert paper["scale"] == "paper" and paper["params_hash"] == current
    other = prov({k: {**raw[section].get(k, {}), **v} if isinstance(v, dict) else v for k, v in speed.items()})
    assert (other["scale"], other["params_hash"]) == ("paper", current)
    assert results.provenance_status(other, current) == "paper scale, no git commit"  # not "stale"
    changed = prov(traces_changes={"scale": 0.5})  # the twins at half the paper's size: reduced
    assert changed["scale"] == "reduced" and changed["params_hash"] != current
