"""Issue 32's hostile inputs to ``tieringlab sweep``, one test per row: each gets a clear error naming
``--scheduler``, ``--out``, the notebook or the parameter before anything runs, or is handled as
documented (tieringlab.sweep's module docstring); a sweep that stops (Ctrl-C, an error) keeps every
completed point.

Most runs here go through the scheduler-address path (as in test_sweep.py) on a cluster whose worker
is a thread of this process, with :func:`tieringlab.sweep.execute` replaced by ``fake_execute``: it
records the parameters it gets and saves one metric that is a known function of them, so a sweep costs
a fraction of a second. Ctrl-C is sent to a real ``tieringlab sweep --scheduler local:1`` run of a
stand-in notebook, in a subprocess.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import numpy as np
import pytest
import xarray as xr

import tieringlab
from tieringlab import cli, params, sweep
from tieringlab.params import ParamsError

REPO = Path(__file__).resolve().parent.parent
#: what fake_execute was called with, in this process (the cluster's worker is a thread here)
CALLS: list[dict] = []


def fake_execute(notebook_text, notebook_name, parameters, cwd=None):
    """A point's run as :func:`tieringlab.sweep.execute` returns it, without running the notebook: a metric
    ``lb_plus_seed = line_bytes + seed`` (0 where not passed); ``seed`` 13 raises, as a failing cell would."""
    CALLS.append(dict(parameters))
    if parameters.get("seed") == 13:
        return {"error": "RuntimeError: planted failure", "notebook": b"{}", "files": {}}
    stem = Path(notebook_name).stem
    value = parameters.get("line_bytes", 0) + parameters.get("seed", 0)
    metrics = {"notebook": stem, "values": {"lb_plus_seed": value}, "claims": {}}
    return {"error": None, "notebook": b"{}", "files": {f"metrics/{stem}.json": json.dumps(metrics).encode()}}


def notebook_file(folder: Path, body: str = "", *, tagged: bool = True, name: str = "00_quickstart.ipynb") -> Path:
    """A notebook ``name`` whose parameters cell (tagged unless ``tagged`` is false) sets line_bytes, seed and
    results_dir, then a cell ``body``."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cell = nbformat.v4.new_code_cell("line_bytes = 4096\nseed = 0\nresults_dir = None\n")
    if tagged:
        cell.metadata["tags"] = ["parameters"]
    nb.cells = [cell] + ([nbformat.v4.new_code_cell(body)] if body else [])
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / name)
    return folder / name


@pytest.fixture()
def notebook(tmp_path) -> Path:
    return notebook_file(tmp_path / "nb")


@pytest.fixture(scope="module")
def address():
    """A running scheduler's address, its one worker a thread of this process (``fake_execute`` runs there)."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp://",
                      dashboard_address=None) as cluster:
        yield cluster.scheduler_address


@pytest.fixture()
def fake(monkeypatch):
    CALLS.clear()
    monkeypatch.setattr(sweep, "execute", fake_execute)
    return CALLS


@pytest.fixture()
def nothing_runs(monkeypatch):
    """Fail the test at once if the sweep gets as far as its cluster (on the old code a local:100000 or a
    malformed address would start workers or wait minutes there)."""
    def refuse(*args, **kwargs):
        raise AssertionError("the sweep went on to start or reach a cluster")

    monkeypatch.setattr(sweep, "_client", refuse)


# ------------------------------------------------------------------------------------ Ctrl-C

SLOW_NOTEBOOK = (
    "import json, pathlib, time\n"
    "if line_bytes != 512:\n"
    "    time.sleep(40)\n"
    "path = pathlib.Path(results_dir) / 'metrics' / '00_quickstart.json'\n"
    "path.parent.mkdir(parents=True)\n"
    "path.write_text(json.dumps({'notebook': '00_quickstart', 'values': {'kib': line_bytes // 1024 + 0.5}, "
    "'claims': {}}))\n")


def test_ctrl_c_stops_the_sweep_and_keeps_the_completed_points(tmp_path):
    # Started as a shell starts a background job (SIGINT ignored), as the issue ran it: the old code then
    # ran every point and exited 0. Ctrl-C goes to the whole process group, as a terminal sends it.
    nb = notebook_file(tmp_path / "nb", SLOW_NOTEBOOK)
    out = tmp_path / "out"
    env = {**os.environ, "TIERINGLAB_PROGRESS": "0", "PYTHONPATH": str(Path(tieringlab.__file__).parents[1])}
    # the shell sets SIGINT to ignored and execs the sweep, which inherits it (no preexec_fn: running Python
    # between fork and exec in this multithreaded JAX process could deadlock)
    proc = subprocess.Popen(
        ["/bin/sh", "-c", 'trap "" INT; exec "$0" "$@"', sys.executable, "-m", "tieringlab.cli", "sweep", str(nb),
         "-p", "line_bytes", "512", "1024", "2048", "--scheduler", "local:1", "--base", "notebook", "--out", str(out)],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not list((out / "notebooks").glob("*.ipynb")) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert proc.poll() is None, proc.communicate()
        os.killpg(proc.pid, signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=90)  # a safety net: the points left would sleep 40 s each
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 130, (stdout, stderr[-2000:])
    assert "tieringlab: sweep: interrupted; " in stderr and f"kept in {out / sweep.SWEEP_FILE}" in stderr
    ds = xr.load_dataset(out / sweep.SWEEP_FILE)
    assert ds.attrs["status"] == "interrupted"
    written = sorted(p.stem for p in (out / "notebooks").glob("*.ipynb"))
    ran = sorted(f"line_bytes={lb}" for lb in ds["line_bytes"].values[ds["ran"].values].tolist())
    assert ran == written and 1 <= len(ran) < 3, (ran, written)
    assert json.loads(ds.attrs["not_run_points"]) == [f"line_bytes={lb}" for lb in (512, 1024, 2048)
                                                      if f"line_bytes={lb}" not in ran]
    for lb in (512, 1024, 2048):
        at = ds.sel(line_bytes=lb)
        if f"line_bytes={lb}" in ran:
            assert bool(at["ok"]) and float(at["kib"]) == lb // 1024 + 0.5
        else:
            assert not at["ok"] and str(at["error"].values) == "not run" and np.isnan(float(at["kib"]))


# ------------------------------------------------------------------------------------ --scheduler

@pytest.mark.parametrize("spec, message", [
    ("local:100000", r"--scheduler local:100000: local:N needs N from 1 to \d+ workers"),
    ("local:" + "9" * 5000, r"--scheduler 'local:9999.*: expected local:N with N a number of workers from 1 to"),
])
def test_local_n_is_bounded(notebook, tmp_path, nothing_runs, spec, message):
    with pytest.raises(sweep.SweepError, match=message):
        sweep.sweep(notebook, {"line_bytes": [4096]}, out=tmp_path / "out", scheduler=spec)
    assert not (tmp_path / "out").exists()
    assert sweep.scheduler_spec("local:2", 1) == "local:1"  # no more workers than points


@pytest.mark.parametrize("spec, why", [
    ("tcp://localhost", "not an address"),              # no port: a raw ValueError from Dask
    ("tcp:/127.0.0.1:8786", "not an address"),          # one slash: minutes resolving the host '/127.0.0.1'
    ("127.0.0.1:99999", "port 99999 is not from 1 to 65535"),  # 30 s of connect attempts
    ("foo:bar", "not an address"),                      # ValueError: invalid literal for int()
    ("http://127.0.0.1:8786", "unknown scheme 'http'"),
    ("tcp://127.0.0.1:8786/", "not an address"),
])
def test_a_malformed_scheduler_address_is_refused_before_anything_runs(notebook, tmp_path, nothing_runs, spec, why):
    with pytest.raises(sweep.SweepError) as exc:
        sweep.sweep(notebook, {"line_bytes": [4096]}, out=tmp_path / "out", scheduler=spec)
    msg = str(exc.value)
    assert msg.startswith("sweep: --scheduler ") and why in msg and "tcp://HOST:PORT" in msg and "local:N" in msg, msg
    assert not (tmp_path / "out").exists()


def test_the_connect_timeout_is_bounded(notebook, tmp_path, monkeypatch, capsys):
    import dask
    import distributed

    asked = []

    def no_scheduler(self, address=None, *args, timeout=None, **kwargs):
        asked.append(timeout)
        raise OSError(f"Timed out trying to connect to {address}")

    # Dask's own connect timeout (30 s by default; 60 s here) no longer bounds the wait: the old code waited that
    with monkeypatch.context() as m, dask.config.set({"distributed.comm.timeouts.connect": "60s"}):
        m.setattr(distributed.Client, "__init__", no_scheduler)
        with pytest.raises(sweep.SweepError, match=r"--scheduler tcp://127\.0\.0\.1:9: cannot reach the Dask scheduler "
                                                   r"tcp://127\.0\.0\.1:9 within 10 s"):
            sweep.sweep(notebook, {"line_bytes": [4096]}, out=tmp_path / "out", scheduler="tcp://127.0.0.1:9")
    assert asked == [sweep.CONNECT_TIMEOUT_S] == [10]
    for bad in (0, -1, float("nan"), float("inf"), "5", True):
        with pytest.raises(sweep.SweepError, match=r"--connect-timeout .*: expected a number of seconds > 0"):
            sweep.sweep(notebook, {"line_bytes": [4096]}, out=tmp_path / "out", scheduler="tcp://127.0.0.1:9",
                        connect_timeout=bad)
    # --connect-timeout, on a port nobody listens at
    code = cli.main(["sweep", str(notebook), "-p", "line_bytes", "4096", "--base", "notebook", "--connect-timeout",
                     "1", "--scheduler", "tcp://127.0.0.1:9", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "--scheduler tcp://127.0.0.1:9: cannot reach the Dask scheduler tcp://127.0.0.1:9 within 1 s" \
        in err and "Traceback" not in err, err
    assert not (tmp_path / "out").exists()


def test_a_server_that_is_not_a_dask_scheduler_is_a_clear_error(notebook, tmp_path):
    # an HTTP server at the address: Dask reads its reply as a frame length (the old code: a MemoryError
    # "Unable to allocate 3.07 EiB")
    import dask
    import distributed  # noqa: F401  (its config defaults first)

    server = socket.create_server(("127.0.0.1", 0))

    def answer():
        with server:
            conn, _ = server.accept()
            with conn:
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n" * 4)
                time.sleep(2)

    threading.Thread(target=answer, daemon=True).start()
    spec = f"tcp://127.0.0.1:{server.getsockname()[1]}"
    with dask.config.set({"distributed.comm.timeouts.connect": "2s"}):
        with pytest.raises(sweep.SweepError, match=f"--scheduler {spec}: cannot reach the Dask scheduler {spec}"):
            sweep.sweep(notebook, {"line_bytes": [4096]}, out=tmp_path / "out", scheduler=spec)
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------------------------ --out

def _unwritable(tmp_path: Path) -> Path:
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        (ro / "probe").touch()
    except PermissionError:
        return ro / "out"
    (ro / "probe").unlink()  # root ignores the mode: /sys is read-only in a container, and for root
    if os.access("/sys", os.W_OK) and not os.path.ismount("/sys"):
        pytest.skip("no folder this process cannot write in")
    return Path("/sys/tieringlab-sweep-out")


@pytest.mark.parametrize("case", ["file", "under a file", "unwritable", "other files", "previous sweep"])
def test_an_unusable_out_is_refused_before_anything_runs(notebook, tmp_path, nothing_runs, case):
    if case == "file":
        out = tmp_path / "out.txt"
        out.write_text("keep me")
        message = r"--out .*out\.txt: a file, not a folder"
    elif case == "under a file":
        (tmp_path / "f").write_text("keep me")
        out = tmp_path / "f" / "sweep"
        message = r"--out .*f/sweep: .*/f is a file, not a folder"
    elif case == "unwritable":
        out = _unwritable(tmp_path)
        message = r"--out .*: cannot write in .*\((Permission denied|Read-only file system)"
    elif case == "other files":
        out = tmp_path / "out"
        out.mkdir()
        (out / "thesis.tex").write_text("keep me")
        message = r"--out .*out: a folder that holds other files \(thesis\.tex\) and no sweep\.nc"
    else:
        out = tmp_path / "out"
        (out / "notebooks").mkdir(parents=True)
        (out / sweep.SWEEP_FILE).write_bytes(b"old")
        message = r"--out .*out holds a previous sweep .*--overwrite to replace it"
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    with pytest.raises(sweep.SweepError, match=message):
        sweep.sweep(notebook, {"line_bytes": [4096]}, out=out, scheduler="local:1")
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_overwrite_replaces_a_previous_sweep_and_never_mixes_two_grids(notebook, tmp_path, address, fake, capsys):
    out = tmp_path / "out"
    sweep.sweep(notebook, {"line_bytes": [4096, 8192]}, out=out, scheduler=address, base="notebook")
    (out / "notes.txt").write_text("mine")
    code = cli.main(["sweep", str(notebook), "-p", "seed", "1", "2", "--base", "notebook", "--scheduler", address,
                     "--out", str(out)])
    assert code == 2 and "--overwrite" in capsys.readouterr().err
    assert sorted(p.name for p in (out / "notebooks").iterdir()) == ["line_bytes=4096.ipynb", "line_bytes=8192.ipynb"]
    code = cli.main(["sweep", str(notebook), "-p", "seed", "1", "2", "--base", "notebook", "--scheduler", address,
                     "--out", str(out), "--overwrite"])
    assert code == 0
    assert sorted(p.name for p in (out / "notebooks").iterdir()) == ["seed=1.ipynb", "seed=2.ipynb"]
    assert sorted(p.name for p in (out / "results").iterdir()) == ["seed=1", "seed=2"]
    assert (out / "notes.txt").read_text() == "mine"  # not the sweep's: left alone
    ds = xr.load_dataset(out / sweep.SWEEP_FILE)
    assert list(ds.sizes) == ["seed"] and ds["lb_plus_seed"].values.tolist() == [1, 2]


def test_a_write_that_fails_mid_sweep_keeps_the_completed_points(notebook, tmp_path, address, monkeypatch):
    # the second point saved a file whose name is longer than a file system allows: the old code raised
    # OSError naming neither --out nor the point
    def execute(notebook_text, notebook_name, parameters, cwd=None):
        done = fake_execute(notebook_text, notebook_name, parameters, cwd)
        if parameters["line_bytes"] == 8192:
            done["files"]["x" * 300 + ".csv"] = b"1\n"
        return done

    monkeypatch.setattr(sweep, "execute", execute)
    out = tmp_path / "out"
    with pytest.raises(sweep.SweepError) as exc:
        sweep.sweep(notebook, {"line_bytes": [4096, 8192, 16384]}, out=out, scheduler=address, base="notebook")
    msg = str(exc.value)
    assert msg.startswith(f"sweep: --out {out}: cannot write the files of point line_bytes=8192 "), msg
    assert f"points completed, kept in {out / sweep.SWEEP_FILE}" in msg
    ds = xr.load_dataset(out / sweep.SWEEP_FILE)
    assert ds.attrs["status"].startswith("stopped: sweep: --out")
    assert ds.sel(line_bytes=4096)["ok"] and float(ds.sel(line_bytes=4096)["lb_plus_seed"]) == 4096
    assert not ds.sel(line_bytes=8192)["ran"] and str(ds.sel(line_bytes=8192)["error"].values) == "not run"
    assert "line_bytes=8192" in json.loads(ds.attrs["not_run_points"])


def test_a_second_sweep_into_the_same_out_while_one_runs_is_refused(notebook, tmp_path, address, fake):
    import fcntl

    out = tmp_path / "out"
    out.mkdir()
    fd = os.open(out / ".sweep.lock", os.O_RDWR | os.O_CREAT)  # what a running sweep holds (sweep.LOCK_FILE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(sweep.SweepError, match=r"--out .*out: another sweep is writing there"):
            sweep.sweep(notebook, {"line_bytes": [4096]}, out=out, scheduler=address, base="notebook")
    finally:
        os.close(fd)
    assert fake == [] and os.listdir(out) == [".sweep.lock"]


# ------------------------------------------------------------------------------------ --base notebook

def parameters_cell(notebook: Path) -> dict:
    """The values the notebook's parameters cell sets, by running that cell (it only assigns literals)."""
    nb = nbformat.read(notebook, as_version=4)
    (cell,) = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    namespace: dict = {}
    exec(cell.source, namespace)
    return {k: v for k, v in namespace.items() if not k.startswith("__")}


def test_base_notebook_keeps_the_notebooks_own_values(tmp_path, address, fake):
    nb = REPO / "notebooks" / "01_trace_characterization.ipynb"
    own = parameters_cell(nb)
    assert own["traces"]["max_wss_gb"] == 0.3  # the example
    ds = sweep.sweep(nb, {"traces.scale": [0.01, 0.05], "line_bytes": [4096]}, out=tmp_path / "out",
                     scheduler=address, base="notebook")
    assert sorted(c["traces"]["scale"] for c in fake) == [0.01, 0.05]
    for passed in fake:  # the notebook's own dict, the swept field replaced: max_wss_gb stays 0.3
        assert passed["traces"] == {**own["traces"], "scale": passed["traces"]["scale"]}
        assert passed["line_bytes"] == 4096 and "cache_gb" not in passed  # only what is swept
    fixed = json.loads(ds.attrs["fixed_parameters"])
    assert fixed["traces"] == {k: v for k, v in own["traces"].items() if k != "scale"}
    assert "line_bytes" not in fixed and fixed["cache_gb"] == own["cache_gb"] and fixed["seed"] == own["seed"]
    # base "params": the swept field of the shared section is not listed as fixed either
    points = sweep.plan(nb, {"traces.scale": [0.01]})
    assert "scale" not in sweep._fixed(points, "params", {})["traces"]
    assert sweep._fixed(points, "params", {})["traces"]["max_wss_gb"] == \
        params.load(REPO / "params.yaml")["traces"].max_wss_gb


def test_base_notebook_cross_checks_see_the_notebooks_values(tmp_path, address, fake):
    # 00_quickstart's parameters cell sets line_bytes = 4096; sweeping only seed passes only seed, and the
    # fixed values reported are the notebook's, not the schema's defaults
    nb = notebook_file(tmp_path / "nb")
    ds = sweep.sweep(nb, {"seed": [5]}, out=tmp_path / "out", scheduler=address, base="notebook")
    assert fake == [{"seed": 5}]
    assert json.loads(ds.attrs["fixed_parameters"]) == {"line_bytes": 4096}


# ------------------------------------------------------------------------------------ further hostile inputs

def test_a_grid_of_a_million_points_is_refused_before_it_is_expanded(notebook, monkeypatch):
    def no_validation(*args, **kwargs):
        raise AssertionError("a point was validated: the grid was expanded")

    monkeypatch.setattr(params, "validate_section", no_validation)
    with pytest.raises(sweep.SweepError, match=r"the grid has 1000000 points \(1000 x 1000\); at most 10000"):
        sweep.plan(notebook, {"seed": list(range(1000)), "reaccess_window_s": list(range(1, 1001))})


def test_a_value_longer_than_a_file_name_gets_a_short_unique_label(notebook, tmp_path, address, fake):
    long_a, long_b = list(range(1, 300)), [*range(1, 299), 1000]  # equal in their first 1,100 characters
    ds = sweep.sweep(notebook, {"cache_sizes_mb": [long_a, long_b]}, out=tmp_path / "out", scheduler=address,
                     base="notebook")
    names = sorted(p.name for p in (tmp_path / "out" / "notebooks").iterdir())
    assert len(names) == 2 and all(len(n) <= sweep.MAX_LABEL + len(".ipynb") for n in names), names
    assert bool(ds["ok"].all()) and json.loads(ds.attrs["not_run_points"]) == []


@pytest.mark.parametrize("case", ["no parameters tag", "not json", "a folder"])
def test_a_file_that_is_not_a_usable_notebook_is_refused_before_anything_runs(tmp_path, address, fake, case):
    if case == "no parameters tag":  # papermill would put the values first; the cell would replace them
        nb = notebook_file(tmp_path / "nb", tagged=False)
        message = r"00_quickstart\.ipynb: no cell tagged 'parameters'"
    elif case == "not json":
        nb = tmp_path / "00_quickstart.ipynb"
        nb.write_text("line_bytes = 4096\n")
        message = r"00_quickstart\.ipynb: line 1: not a Jupyter notebook \(not valid JSON"
    else:
        nb = tmp_path / "00_quickstart.ipynb"
        nb.mkdir()
        message = r"00_quickstart\.ipynb: not a notebook file"
    with pytest.raises((sweep.SweepError, FileNotFoundError), match=message):
        sweep.sweep(nb, {"line_bytes": [8192]}, out=tmp_path / "out", scheduler=address, base="notebook")
    assert fake == [] and not (tmp_path / "out").exists()


def test_a_non_finite_value_is_named_as_given(notebook):
    with pytest.raises(ParamsError, match=r"sweep point \(reaccess_window_s=nan\): quickstart\.reaccess_window_s"):
        sweep.plan(notebook, {"reaccess_window_s": [float("nan")]})
