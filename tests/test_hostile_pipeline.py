"""Issue 32: the pipeline's outputs under hostile conditions, one test per row: a stage's install killed at
every step, the executed notebook of two clones at different paths, ``data fetch`` of a corrupt copy
offline, two runs of one stage at once, results paths that are files or the repository itself, and
hand-edited files the report and the install read.

Most rows run :func:`tieringlab.pipeline.run` with papermill replaced by :func:`fake_execute`, which writes
a stage's outputs the way a notebook does (through ``results_dir``) in milliseconds; the row about the
executed notebook runs the real quickstart notebook at small parameters.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import gzip
import hashlib
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from repo_copy import copy_repo, sh

from tieringlab import data, fileio, paths, pipeline, report
from tieringlab.cli import main as cli

REPO = Path(__file__).resolve().parent.parent
STAGE = "00_quickstart"
NOTEBOOK = REPO / "notebooks" / f"{STAGE}.ipynb"


# ------------------------------------------------------------------------------------ a stage in milliseconds

def fake_execute(input_path, output_path, parameters=None, **_):
    """Stand-in for ``papermill.execute_notebook``: the "new" outputs of :func:`old_results`' stage, written
    under ``parameters["results_dir"]`` as the notebook's ``Outputs`` would, and an executed notebook."""
    root = paths.results_dir(parameters["results_dir"])
    for rel, body in (("figures/{s}/a.png", b"new a"), ("figures/{s}/c.png", b"new c"),
                      ("metrics/{s}.json", json.dumps({"notebook": STAGE, "values": {"run": "new"}, "claims": {}}))):
        p = root / rel.format(s=STAGE)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(body if isinstance(body, bytes) else body.encode())
    cell = {"cell_type": "code", "execution_count": 1, "id": "c1", "source": "print('new')",
            "metadata": {"papermill": {"duration": 0.5, "start_time": "t0", "end_time": "t1"}},
            "outputs": [{"output_type": "stream", "name": "stdout", "text": "new\n"}]}
    nb = {"cells": [cell], "nbformat": 4, "nbformat_minor": 5,
          "metadata": {"papermill": {"duration": 1.0, "start_time": "t0", "end_time": "t1", "parameters": parameters,
                                     "input_path": str(input_path), "output_path": str(output_path)}}}
    Path(output_path).write_text(json.dumps(nb))
    hook = getattr(fake_execute, "after", None)
    if hook:
        hook()


def old_results(results: Path) -> dict[str, bytes]:
    """A complete earlier run of the stage under ``results`` (with a table, which the new run no longer
    makes); returns its snapshot."""
    for rel, body in (("notebooks/{s}.ipynb", "old notebook"), ("figures/{s}/a.png", "old a"),
                      ("figures/{s}/b.png", "old b"), ("tables/{s}/t.csv", "x\n1\n"), ("logs/{s}.json", "{}"),
                      ("metrics/{s}.json", json.dumps({"notebook": STAGE, "values": {"run": "old"}, "claims": {}}))):
        p = results / rel.format(s=STAGE)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(body)
    return snapshot(results)


def snapshot(results: Path) -> dict[str, bytes]:
    """Every file a reader sees under ``results`` (hidden names, such as ``.staging``, left out)."""
    return {p.relative_to(results).as_posix(): p.read_bytes() for p in sorted(results.rglob("*"))
            if p.is_file() and not any(part.startswith(".") for part in p.relative_to(results).parts)}


def is_new(snap: dict[str, bytes]) -> bool:
    return (sorted(snap) == [f"figures/{STAGE}/a.png", f"figures/{STAGE}/c.png", f"logs/{STAGE}.json",
                             f"metrics/{STAGE}.json", f"notebooks/{STAGE}.ipynb"]
            and snap[f"figures/{STAGE}/a.png"] == b"new a" and b'"new"' in snap[f"metrics/{STAGE}.json"])


#: Runs the fake stage in a child process (fork) once per k, failing at the k-th filesystem change made after
#: the notebook finished (rename, unlink, rmdir, mkdir): "kill" ends the child there (os._exit, as kill -9
#: would), "error" raises ENOSPC from it (a full or failing disk), "interrupt" raises KeyboardInterrupt (Ctrl-C).
#: Prints one JSON line per k; stops after the first k that the install completes without reaching.
HARNESS = r"""
import errno, json, os, sys
from pathlib import Path
sys.path.insert(0, sys.argv[3])
import papermill
import test_hostile_pipeline as t
from tieringlab import pipeline

mode, top = sys.argv[1], Path(sys.argv[2])
papermill.execute_notebook = t.fake_execute
params = top / "params.yaml"
params.write_text("seed: 0\nquickstart: {}\n")  # the defaults: quick to read
t.old_results(top / "warm-up" / "results")  # imports and caches warmed once, not in every child
pipeline.run(t.NOTEBOOK, params_path=params, results=top / "warm-up" / "results")
for k in range(500):
    results = top / f"{mode}-{k}" / "results"
    t.old_results(results)
    pid = os.fork()
    if pid == 0:
        state = {"armed": False, "count": 0, "failed": False}
        def fail():
            state["failed"] = True
            if mode == "kill":
                os._exit(9)
            if mode == "error":
                raise OSError(errno.ENOSPC, "No space left on device (injected)")
            raise KeyboardInterrupt
        def wrap(fn):
            def step(*a, **kw):
                if state["armed"] and not state["failed"]:
                    if state["count"] == k:
                        fail()
                    state["count"] += 1
                return fn(*a, **kw)
            return step
        for name in ("replace", "rename", "unlink", "remove", "rmdir", "mkdir"):
            setattr(os, name, wrap(getattr(os, name)))
        t.fake_execute.after = lambda: state.update(armed=True)
        try:
            pipeline.run(t.NOTEBOOK, params_path=params, results=results)
        except BaseException:
            os._exit(3 if state["failed"] else 5)
        os._exit(4 if state["failed"] else 0)
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    print(json.dumps({"k": k, "code": code, "results": str(results)}), flush=True)
    if code not in (3, 4, 9):
        break
"""


@pytest.mark.parametrize("mode", ["kill", "error", "interrupt"])
def test_an_install_stopped_at_any_step_leaves_results_all_old_or_completes_all_new(tmp_path, mode):
    """Killed (or failing, or interrupted) after any one of the install's renames and deletions, results/ is
    either exactly the old run's, or becomes exactly the new run's on the next touch (here the report, which
    reads it); an old output is never deleted before the new ones are in place."""
    script = tmp_path / "harness.py"
    script.write_text(HARNESS)
    env = {**os.environ, "TIERINGLAB_PROGRESS": "0", "JAX_PLATFORMS": "cpu"}
    proc = subprocess.run([sys.executable, str(script), mode, str(tmp_path), str(Path(__file__).parent)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    runs = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert runs and runs[-1]["code"] == 0, f"the uninterrupted run failed:\n{proc.stdout}\n{proc.stderr[-3000:]}"
    assert len(runs) > 10, runs  # the install has that many steps to stop at
    old = old_results(tmp_path / "reference")
    outcomes = []
    for r in runs:
        results = Path(r["results"])
        right_after = snapshot(results)
        report.build(results)                           # the next touch: completes a committed install
        after = snapshot(results)
        assert after == old or is_new(after), (f"stopped after step {r['k']} ({mode}): results/ is a mix of "
                                                f"two runs: {sorted(after)}")
        if after == old:
            assert right_after == old, f"step {r['k']}: results/ changed before the commit point"
        outcomes.append("old" if after == old else "new")
        if after != old:
            assert not (results / ".staging" / f"{STAGE}.install.json").exists()
            leftovers = [p for p in results.rglob("*") if ".old-" in p.name]
            assert not leftovers, leftovers                        # old copies deleted once the new are in
    # all old up to the commit point, all new from it on; a run that was not stopped ends all new (a failure
    # the code handles, such as mkdir's error on a folder that exists, is no stop: that run ends all new)
    stopped = [o for r, o in zip(runs, outcomes) if r["code"] in (3, 9)]
    assert stopped == sorted(stopped, key=lambda o: o == "new"), outcomes
    assert stopped[0] == "old" and "new" in stopped and outcomes[-1] == "new", outcomes
    assert all(o == "new" for r, o in zip(runs, outcomes) if r["code"] in (0, 4)), outcomes


# ------------------------------------------------------------------------------------ the executed notebook

@pytest.mark.slow
def test_the_executed_notebook_is_the_same_in_two_clones_at_different_paths(tmp_path, cloudphysics_path):
    """The quickstart stage run in two copies of the repository at different paths: the executed notebooks
    are byte-identical and hold neither path (results_dir, input_path, the trace's ``path`` attribute in
    its xarray repr, the paths of saved figures were absolute), and every other output is identical too."""
    clones = [copy_repo(tmp_path / "a" / "tieringlab", cloudphysics_path, max_requests=2000, cache_sizes_mb=[1, 4]),
              copy_repo(tmp_path / "b" / "elsewhere" / "clone", cloudphysics_path, max_requests=2000,
                        cache_sizes_mb=[1, 4])]
    for clone in clones:
        sh([str(Path(sys.executable).parent / "tieringlab"), "run", f"notebooks/{STAGE}.ipynb"], clone)
    nbs = [(c / "results" / "notebooks" / f"{STAGE}.ipynb").read_text(encoding="utf-8") for c in clones]
    for clone, nb in zip(clones, nbs):
        for path in {str(c) for c in clones} | {str(c.resolve()) for c in clones} | {str(tmp_path)}:
            assert path not in nb, f"{path} is in the executed notebook of {clone}"
        assert "/.staging" not in nb
    assert nbs[0] == nbs[1]
    assert '"results_dir": "results"' in nbs[0] and '"input_path": "notebooks/00_quickstart.ipynb"' in nbs[0]
    assert "path:            data/cloudphysics/cloudPhysicsIO.csv" in nbs[0]  # the trace's attribute
    snaps = [snapshot(c / "results") for c in clones]
    assert {k for k in snaps[0] if not k.startswith("logs/")} == {k for k in snaps[1] if not k.startswith("logs/")}
    assert all(snaps[0][k] == snaps[1][k] for k in snaps[0] if not k.startswith("logs/"))


def test_normalize_executed_makes_every_checkout_path_relative():
    root = Path("/home/u/src/tieringlab")
    text = f"{root}/results/figures/a.png {root} {root}2/x {root}.bak ../{root.name} {root.parent}/shared/d\n"
    nb = {"cells": [{"cell_type": "code", "id": "x", "metadata": {}, "source": "", "execution_count": 1,
                     "outputs": [{"output_type": "stream", "name": "stdout", "text": text}]}],
          "metadata": {"papermill": {"input_path": f"{root}/notebooks/00_quickstart.ipynb"}}}
    out, _ = pipeline.normalize_executed(nb, f"{root}/results/notebooks/00_quickstart.ipynb", root=root)
    assert out["cells"][0]["outputs"][0]["text"] == (f"results/figures/a.png . {root}2/x {root}.bak ../tieringlab "
                                                     f"../shared/d\n")
    assert out["metadata"]["papermill"]["input_path"] == "notebooks/00_quickstart.ipynb"
    assert out["metadata"]["papermill"]["output_path"] == "results/notebooks/00_quickstart.ipynb"


# ------------------------------------------------------------------------------------ data fetch

def _pin() -> tuple[bytes, str]:
    """An MSR-format file and its md5 (the md5 a user pins for an MSR trace)."""
    body = gzip.compress(b"128166372003061629,hm,1,Read,7014609920,24576,41286\n" * 10, mtime=0)
    return body, hashlib.md5(body).hexdigest()


@pytest.fixture()
def proj(tmp_path, monkeypatch):
    """A project root (where data/ lives) in a temp dir with no shared mirror."""
    root = tmp_path / "proj"
    root.mkdir()
    monkeypatch.setattr(paths, "repo_root", lambda *a: root)
    monkeypatch.setattr(paths, "shared_dir", lambda: None)
    return root


@pytest.fixture()
def loopback(tmp_path):
    """(base URL, served folder): http.server on 127.0.0.1 at a random port, in a thread."""
    www = tmp_path / "www"
    www.mkdir()
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(www)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", www
    finally:
        server.shutdown()
        server.server_close()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens there once closed


def test_fetch_keeps_a_corrupt_copy_until_a_verified_one_replaces_it(proj, loopback):
    base, www = loopback
    good, md5 = _pin()
    dest = proj / "data/msr/mds_0.csv.gz"
    dest.parent.mkdir(parents=True)
    dest.write_bytes(b"corrupt")
    bad_md5 = data.md5sum(dest)
    # offline (nothing listens): both failures are named, and the rejected copy is still there
    url = f"http://127.0.0.1:{closed_port()}/mds_0.csv.gz"
    with pytest.raises(data.ChecksumError) as exc:
        data.fetch("msr_mds_0", url=url, md5=md5)
    msg = str(exc.value)
    assert f"{dest}: md5 {bad_md5} does not match the pinned {md5}" in msg, msg
    assert url in msg and "refused" in msg.lower(), msg
    assert dest.read_bytes() == b"corrupt"
    # the server sends a corrupt file too: both md5 mismatches are named, the copy stays
    (www / "mds_0.csv.gz").write_bytes(good[:-1] + bytes([good[-1] ^ 1]))
    with pytest.raises(data.ChecksumError) as exc:
        data.fetch("msr_mds_0", url=f"{base}/mds_0.csv.gz", md5=md5)
    assert f"{dest}: md5 {bad_md5}" in str(exc.value) and f"{base}/mds_0.csv.gz: md5 " in str(exc.value)
    assert dest.read_bytes() == b"corrupt"
    assert [p.name for p in dest.parent.iterdir()] == ["mds_0.csv.gz"]  # no temporary left
    # a verified download replaces it
    (www / "mds_0.csv.gz").write_bytes(good)
    assert data.fetch("msr_mds_0", url=f"{base}/mds_0.csv.gz", md5=md5) == dest and dest.read_bytes() == good


def test_data_fetch_of_a_missing_file_offline_names_the_url(proj):
    """No local copy and nothing to download from: the download's own error, as before."""
    _, md5 = _pin()
    url = f"http://127.0.0.1:{closed_port()}/mds_0.csv.gz"
    with pytest.raises(OSError, match="refused"):
        data.fetch("msr_mds_0", url=url, md5=md5)
    assert not (proj / "data/msr/mds_0.csv.gz").exists()


# ------------------------------------------------------------------------------------ hostile runs

HOLDER = r"""
import sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[3])
import papermill
import test_hostile_pipeline as t
from tieringlab import pipeline

release = Path(sys.argv[2])
def wait():
    print("running", flush=True)
    while not release.exists():
        time.sleep(0.05)
t.fake_execute.after = wait
papermill.execute_notebook = t.fake_execute
pipeline.run(t.NOTEBOOK, params_path=t.REPO / "params.yaml", results=sys.argv[1])
print("done", flush=True)
"""


def test_a_second_run_of_a_running_stage_stops_and_leaves_the_first_alone(tmp_path, monkeypatch):
    """Two runs of one stage into one results folder: the second stops at once, naming the lock; before, it
    deleted the first one's staging folder (outputs included) and ran its notebook into the same place."""
    results = tmp_path / "results"
    old = old_results(results)
    script, release = tmp_path / "holder.py", tmp_path / "release"
    script.write_text(HOLDER)
    env = {**os.environ, "TIERINGLAB_PROGRESS": "0", "JAX_PLATFORMS": "cpu"}
    first = subprocess.Popen([sys.executable, str(script), str(results), str(release), str(Path(__file__).parent)],
                             cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert first.stdout.readline().strip() == "running", first.stderr.read()
        staged = sorted(p.relative_to(results).as_posix() for p in (results / ".staging").rglob("*") if p.is_file())
        assert f".staging/{STAGE}/figures/{STAGE}/a.png" in staged
        calls = []
        monkeypatch.setattr("papermill.execute_notebook", lambda *a, **k: calls.append(a))
        with pytest.raises(OSError, match=f"another `tieringlab run` of {STAGE} .* is running"):
            pipeline.run(NOTEBOOK, params_path=REPO / "params.yaml", results=results)
        assert calls == []
        assert sorted(p.relative_to(results).as_posix() for p in (results / ".staging").rglob("*")
                      if p.is_file()) == staged                     # the first run's outputs untouched
        assert snapshot(results) == old
    finally:
        release.touch()
        out, err = first.communicate(timeout=120)
    assert first.returncode == 0 and "done" in out, err
    assert is_new(snapshot(results)) and not (results / ".staging").exists()


def test_results_at_the_repository_root_does_not_overwrite_the_notebook(tmp_path, monkeypatch):
    """``--results .``: the executed notebook would land on the source notebook (results/notebooks/ is then
    the repository's notebooks/). Refused before the notebook runs; before, the source was overwritten."""
    root = tmp_path / "repo"
    (root / "notebooks").mkdir(parents=True)
    for rel in ("dvc.yaml", "params.yaml", f"notebooks/{STAGE}.ipynb"):
        shutil.copyfile(REPO / rel, root / rel)
    source = (root / f"notebooks/{STAGE}.ipynb").read_bytes()
    monkeypatch.chdir(root)
    monkeypatch.setattr("papermill.execute_notebook", fake_execute)
    with pytest.raises(ValueError, match="would overwrite its source notebook"):
        pipeline.run(f"notebooks/{STAGE}.ipynb", results=".")
    assert (root / f"notebooks/{STAGE}.ipynb").read_bytes() == source
    assert not (root / "figures").exists() and not (root / "metrics").exists()


@pytest.mark.parametrize("blocked", ["figures", "results"])
def test_an_output_folder_that_is_a_file_stops_the_stage_before_it_runs(tmp_path, monkeypatch, blocked):
    """results/figures (or results/ itself) is a file: the stage stops before its notebook runs, naming it.
    Before, the notebook ran to the end and the install then failed halfway: a new executed notebook beside
    the old figures and metrics."""
    results = tmp_path / "results"
    if blocked == "results":
        results.write_text("not a folder")
        old, where = None, results
    else:
        old_results(results)
        where = results / "figures"
        shutil.rmtree(where)
        where.write_text("a file")
        old = snapshot(results)
    calls = []
    monkeypatch.setattr("papermill.execute_notebook", lambda *a, **k: (calls.append(a), fake_execute(*a, **k)))
    with pytest.raises(NotADirectoryError, match=f"^{where}: exists and is not a folder"):
        pipeline.run(NOTEBOOK, params_path=REPO / "params.yaml", results=results)
    assert calls == []
    if old is not None:
        assert snapshot(results) == old


def test_a_hand_edited_install_journal_is_refused_and_deletes_nothing(tmp_path, capsys):
    """An install journal that is not one tieringlab wrote (invalid JSON, or naming a path outside the
    staging folder to delete) stops the report and the next run with its name; nothing is moved or deleted."""
    results = tmp_path / "results"
    old = old_results(results)
    victim = tmp_path / "precious"
    victim.mkdir()
    (victim / "f").write_text("keep")
    journal = results / ".staging" / f"{STAGE}.install.json"
    journal.parent.mkdir()
    for text, why in (('{"install": 1, "moves": [', "line 1: not valid JSON"),
                      (json.dumps({"install": 1, "moves": [], "remove": [str(victim)]}), "'remove' must name"),
                      (json.dumps({"install": 1, "moves": [{"staged": str(victim), "target": "figures/x",
                                                            "aside": "figures/.x.old-1"}]}), "'staged' must be"),
                      (json.dumps({"install": 1, "moves": [{"staged": None, "target": "figures/x",
                                                            "aside": str(victim)}]}), "'aside' must be")):
        journal.write_text(text)
        with pytest.raises(report.ReportError, match=f"{journal}: not an install journal of tieringlab .*{why}"):
            report.build(results)
        assert cli(["report", "--results", str(results)]) == 2
        assert str(journal) in capsys.readouterr().err
        assert (victim / "f").read_text() == "keep" and snapshot(results) == old


def test_report_on_a_results_path_that_is_a_file_or_with_a_metrics_file(tmp_path):
    """A results "folder" that is a file, or a metrics/ that is a file: an error naming it. Before, the first
    said "no such results directory" and the second gave a ledger of every claim "not reproduced yet"."""
    results = tmp_path / "results"
    results.write_text("x")
    with pytest.raises(report.ReportError, match=f"^{results}: not a directory"):
        report.build(results)
    results.unlink()
    (results / "tables").mkdir(parents=True)
    (results / "metrics").write_text("{}")
    with pytest.raises(report.ReportError, match=f"^{results / 'metrics'}: not a directory"):
        report.build(results)


def test_a_crashed_install_is_completed_by_the_next_run_of_any_stage_and_by_outputs(tmp_path, monkeypatch):
    """The journal left by a kill after the commit point is completed by whatever touches results/ next: here
    a notebook's Outputs, and a run of the stage itself (which then runs normally)."""
    from tieringlab.results import Outputs

    for toucher in ("outputs", "run"):
        results = tmp_path / toucher / "results"
        old_results(results)
        real_replace = os.replace
        state = {"n": 0}

        def replace(a, b, state=state, real_replace=real_replace):
            state["n"] += 1
            if Path(b).name == f".{STAGE}.ipynb.old-{os.getpid()}":  # the first old output set aside: "killed"
                real_replace(a, b)
                raise SystemExit("killed")
            return real_replace(a, b)

        monkeypatch.setattr("papermill.execute_notebook", fake_execute)
        monkeypatch.setattr(os, "replace", replace)
        with pytest.raises(SystemExit):
            pipeline.run(NOTEBOOK, params_path=REPO / "params.yaml", results=results)
        monkeypatch.setattr(os, "replace", real_replace)
        assert not (results / f"notebooks/{STAGE}.ipynb").exists()   # mid-install: the notebook is set aside
        if toucher == "outputs":
            Outputs("01_trace_characterization", results)
            assert is_new({k: v for k, v in snapshot(results).items() if "01_trace" not in k})
        else:
            pipeline.run(NOTEBOOK, params_path=REPO / "params.yaml", results=results)
            assert is_new(snapshot(results))
        assert not [p for p in results.rglob("*") if ".old-" in p.name or p.name.endswith(".install.json")]


def test_the_stage_lock_is_released_by_a_killed_holder(tmp_path):
    """A run killed with SIGKILL holds no lock afterwards: the next run is not told another one is running."""
    lock = tmp_path / ".staging" / f"{STAGE}.lock"
    child = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom tieringlab import fileio\n"
                              "with fileio.locked(sys.argv[1]):\n    print('held', flush=True)\n    time.sleep(60)\n",
                              str(lock)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "held"
        fd = os.open(lock, os.O_RDWR)
        with pytest.raises(BlockingIOError):
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.close(fd)
        assert fileio.lock_holder(lock) == str(child.pid)
    finally:
        child.kill()
        child.wait(timeout=30)
    assert lock.exists()                       # the file is still there, its lock died with its holder:
    with fileio.locked(lock, wait=False):      # taken at once (BlockingIOError otherwise)
        assert fileio.lock_holder(lock) == str(os.getpid())
    assert not lock.exists()


def test_an_injected_enospc_while_writing_the_journal_leaves_results_as_they_were(tmp_path, monkeypatch):
    """Disk full while the install journal is written (before the commit point): results/ as it was, the
    error raised, and the next run completes normally."""
    results = tmp_path / "results"
    old = old_results(results)
    real = Path.write_text

    def full(self, text, *a, **k):
        if fileio.is_temp_name(self.name) and ".install.json" in self.name:
            real(self, text[:10], *a, **k)
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, text, *a, **k)

    monkeypatch.setattr("papermill.execute_notebook", fake_execute)
    monkeypatch.setattr(Path, "write_text", full)
    with pytest.raises(OSError, match="No space left"):
        pipeline.run(NOTEBOOK, params_path=REPO / "params.yaml", results=results)
    assert snapshot(results) == old
    report.build(results)
    assert snapshot(results) == old
    monkeypatch.setattr(Path, "write_text", real)
    pipeline.run(NOTEBOOK, params_path=REPO / "params.yaml", results=results)
    assert is_new(snapshot(results)) and not (results / ".staging").exists()


def test_fetch_onto_a_folder_names_it_before_downloading(proj):
    _, md5 = _pin()
    dest = proj / "data/msr/mds_0.csv.gz"
    dest.mkdir(parents=True)
    with pytest.raises(OSError, match=f"^{dest}: exists and is not a file"):
        data.fetch("msr_mds_0", url=f"http://127.0.0.1:{closed_port()}/mds_0.csv.gz", md5=md5)
    assert dest.is_dir()


def test_an_executed_notebook_on_another_file_system_is_refused_before_the_run(tmp_path, monkeypatch):
    """``run(output=...)`` on another file system than results/: the outputs could not be renamed there (and
    a committed install could never complete). Refused before the notebook runs; before, after it."""
    shm = Path("/dev/shm")
    if not shm.is_dir() or shm.stat().st_dev == tmp_path.stat().st_dev:
        pytest.skip("needs /dev/shm on a file system of its own")
    calls = []
    monkeypatch.setattr("papermill.execute_notebook", lambda *a, **k: calls.append(a))
    with pytest.raises(ValueError, match="on another file system"):
        pipeline.run(NOTEBOOK, params_path=REPO / "params.yaml", results=tmp_path / "results",
                     output=shm / f"tieringlab-test-{os.getpid()}.ipynb")
    assert calls == []


def test_report_stops_on_a_hand_edited_caption_manifest_without_a_traceback(tmp_path, capsys):
    results = tmp_path / "results"
    old_results(results)
    (results / f"figures/{STAGE}/manifest.json").write_text('{"figures": [\n{"name": }]}')
    assert report.main(["--results", str(results)]) == 2
    err = capsys.readouterr().err
    assert f"{results / 'figures' / STAGE / 'manifest.json'}:2: not valid JSON" in err, err


def test_a_committed_install_that_cannot_be_completed_stops_the_report(tmp_path, monkeypatch):
    """A journal left by a kill after the commit point, in a results folder the report cannot change (read-only):
    the report says so instead of reading a mix of two runs."""
    results = tmp_path / "results"
    old_results(results)
    real_replace = os.replace

    def killed_after_first_move(a, b):
        real_replace(a, b)
        if Path(b).name.startswith(f".{STAGE}.ipynb.old-"):
            raise SystemExit("killed")

    monkeypatch.setattr("papermill.execute_notebook", fake_execute)
    monkeypatch.setattr(os, "replace", killed_after_first_move)
    with pytest.raises(SystemExit):
        pipeline.run(NOTEBOOK, params_path=REPO / "params.yaml", results=results)

    def read_only(a, b):
        raise PermissionError(errno.EROFS, "Read-only file system", str(a))

    monkeypatch.setattr(os, "replace", read_only)
    with pytest.raises(report.ReportError, match="interrupted and cannot be completed here.*Read-only file system"):
        report.build(results)
    monkeypatch.setattr(os, "replace", real_replace)
    report.build(results)
    assert is_new(snapshot(results))
