"""`tieringlab sweep` on Dask distributed: validation first, one run per grid point, metrics in sweep.nc.

The runs use a small stand-in notebook named like the quickstart (so its parameters are the
``quickstart`` section's and are validated as such) whose metrics are known functions of its
parameters: ``pages_per_mib = 2**20 // line_bytes`` and ``seed_plus_one = seed + 1``. It fails on
purpose at one point, to check that the failure is reported with that point's parameters and that the
other points are kept. Clusters: a LocalCluster of 2 workers started here and passed by its address
(the path an existing cluster takes), and ``--scheduler local:2`` through the command line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest
import xarray as xr

from tieringlab import cli, params, sweep
from tieringlab.params import ParamsError

REPO = Path(__file__).resolve().parent.parent
FAIL_AT = {"line_bytes": 16384, "seed": 1}


def stand_in_notebook(folder: Path) -> Path:
    """A notebook ``00_quickstart.ipynb`` with a parameters cell and one cell that saves two metrics
    (and raises at FAIL_AT)."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cell = nbformat.v4.new_code_cell("line_bytes = 4096\nseed = 0\nresults_dir = None\n")
    cell.metadata["tags"] = ["parameters"]
    # The metrics file as tieringlab.results.Outputs writes it, written plainly (a kernel that imports
    # only the standard library starts in a fraction of the time).
    body = nbformat.v4.new_code_cell(
        "import json, pathlib\n"
        f"if line_bytes == {FAIL_AT['line_bytes']} and seed == {FAIL_AT['seed']}:\n"
        "    raise RuntimeError('planted failure')\n"
        "path = pathlib.Path(results_dir) / 'metrics' / '00_quickstart.json'\n"
        "path.parent.mkdir(parents=True)\n"
        "values = {'pages_per_mib': 2**20 // line_bytes, 'seed_plus_one': seed + 1}\n"
        "sizes = [1.0, 4.0] if seed == 0 else [4.0, 16.0]\n"
        "curve = {'dims': ['cache_mb'], 'coords': {'cache_mb': sizes}, 'units': '1',\n"
        "         'data': [c * 1000 + line_bytes for c in sizes]}\n"
        "path.write_text(json.dumps({'notebook': '00_quickstart', 'values': values, 'claims': {},\n"
        "                            'units': {'pages_per_mib': 'pages/MiB'}, 'arrays': {'curve': curve}}))\n")
    nb.cells = [cell, body]
    path = folder / "00_quickstart.ipynb"
    nbformat.write(nb, path)
    return path


@pytest.fixture()
def notebook(tmp_path) -> Path:
    (tmp_path / "nb").mkdir()
    return stand_in_notebook(tmp_path / "nb")


def test_every_value_is_validated_before_anything_runs(notebook, tmp_path):
    out = tmp_path / "out"
    with pytest.raises(ParamsError, match=r"line_bytes=1000.*quickstart\.line_bytes: expected one of 512"):
        sweep.sweep(notebook, {"line_bytes": [4096, 1000]}, out=out, scheduler="tcp://127.0.0.1:1")
    with pytest.raises(ParamsError, match=r"-p line_byte: not a parameter of section 'quickstart'; allowed: seed"):
        sweep.sweep(notebook, {"line_byte": [4096]}, out=out)
    with pytest.raises(ParamsError, match=r"seed: expected an integer"):
        sweep.plan(notebook, {"seed": [0, -1]})
    with pytest.raises(sweep.SweepError, match="given twice"):
        sweep.plan(notebook, {"reaccess_window_s": [300, 300.0]})  # equal once validated as floats
    with pytest.raises(sweep.SweepError, match="local:N"):
        sweep.sweep(notebook, {"line_bytes": [4096]}, out=out, scheduler="local:0")
    assert not out.exists(), "a sweep that cannot start writes nothing"


def test_an_unreachable_scheduler_is_a_clear_error(notebook, tmp_path):
    import dask
    import distributed  # noqa: F401  (its config defaults first: leaving the set() below must not drop them)

    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        with pytest.raises(sweep.SweepError, match=r"cannot reach the Dask scheduler tcp://127\.0\.0\.1:9"):
            sweep.sweep(notebook, {"line_bytes": [4096]}, out=tmp_path / "out", scheduler="tcp://127.0.0.1:9",
                        base="notebook")
    assert not (tmp_path / "out").exists()


def test_plan_takes_the_rest_from_params_yaml_or_the_notebook(notebook):
    repo = params.load(REPO / "params.yaml")["quickstart"]
    points = sweep.plan(notebook, {"quickstart.line_bytes": [8192], "seed": [3], "cache_sizes_mb": [[1, 4]]})
    (p,) = points
    assert p.values == (("line_bytes", 8192), ("seed", 3), ("cache_sizes_mb", (1.0, 4.0)))
    assert p.label == "line_bytes=8192,seed=3,cache_sizes_mb=1.0+4.0"
    assert p.parameters["reaccess_window_s"] == repo.reaccess_window_s  # from params.yaml
    assert p.parameters["max_requests"] == repo.max_requests
    assert "results_dir" not in p.parameters  # each run gets its own, on its worker
    (q,) = sweep.plan(notebook, {"line_bytes": [8192]}, base="notebook")
    assert dict(q.parameters) == {"line_bytes": 8192}  # only the swept value: the rest are the notebook's


def check_sweep(ds: xr.Dataset, out: Path, line_bytes: list[int], seeds: list[int]) -> None:
    assert list(ds.sizes) == ["line_bytes", "seed", "cache_mb"]
    assert ds["line_bytes"].values.tolist() == line_bytes and ds["seed"].values.tolist() == seeds
    # the array metric is kept along its own dim, over the union of the points' coordinates, with its units
    assert ds["curve"].dims == ("line_bytes", "seed", "cache_mb") and ds["curve"].attrs["units"] == "1"
    assert ds["cache_mb"].values.tolist() == ([1.0, 4.0, 16.0] if 0 in seeds else [4.0, 16.0])
    assert ds["pages_per_mib"].attrs["units"] == "pages/MiB" and "units" not in ds["seed_plus_one"].attrs
    for lb in line_bytes:
        for s in seeds:
            at = ds.sel(line_bytes=lb, seed=s)
            label = f"line_bytes={lb},seed={s}"
            assert (out / "notebooks" / f"{label}.ipynb").is_file()  # written also when the run failed
            if {"line_bytes": lb, "seed": s} == FAIL_AT:
                assert not at["ok"] and "RuntimeError: planted failure" in str(at["error"].values)
                assert np.isnan(at["pages_per_mib"]) and np.isnan(at["seed_plus_one"])
            else:
                assert at["ok"] and str(at["error"].values) == ""
                assert float(at["pages_per_mib"]) == 2**20 // lb
                assert float(at["seed_plus_one"]) == s + 1
                sizes = [1.0, 4.0] if s == 0 else [4.0, 16.0]
                curve = at["curve"].to_series().dropna()
                assert curve.index.tolist() == sizes and curve.tolist() == [c * 1000 + lb for c in sizes]
                saved = json.loads((out / "results" / label / "metrics/00_quickstart.json").read_text())
                assert saved["values"] == {"pages_per_mib": 2**20 // lb, "seed_plus_one": s + 1}


def test_sweep_on_a_running_cluster_by_its_address(notebook, tmp_path, capsys):
    from distributed import LocalCluster

    out = tmp_path / "sweep"
    failures = []
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        ds = sweep.sweep(notebook, {"line_bytes": [4096, 16384], "seed": [0, 1]}, out=out,
                         scheduler=cluster.scheduler_address, base="notebook",
                         report=lambda point, err: failures.append((point.values, err)))
        assert ds.attrs["scheduler"] == cluster.scheduler_address
        assert f"Dask dashboard at {cluster.dashboard_link}\n" in capsys.readouterr().err  # the cluster's own
    assert failures == [((("line_bytes", 16384), ("seed", 1)), "RuntimeError: planted failure")]
    check_sweep(ds, out, [4096, 16384], [0, 1])
    assert json.loads(ds.attrs["failed_points"]) == ["line_bytes=16384,seed=1"]
    on_disk = xr.load_dataset(out / sweep.SWEEP_FILE)
    xr.testing.assert_identical(on_disk.drop_vars("error"), ds.drop_vars("error"))
    assert on_disk["error"].values.tolist() == ds["error"].values.tolist()


def test_cli_sweep_on_a_local_cluster(notebook, tmp_path, capsys):
    out = tmp_path / "sweep"
    code = cli.main(["sweep", str(notebook), "-p", "line_bytes", "8192", "16384", "-p", "seed", "1",
                     "--scheduler", "local:2", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 1, "a failed point makes the exit status 1"
    assert re.search(r"Dask dashboard at http://[\w.]+:\d+/status", err), err  # the local cluster serves one
    assert "point line_bytes=16384, seed=1 failed: RuntimeError: planted failure" in err
    ds = xr.load_dataset(out / sweep.SWEEP_FILE)
    assert ds.attrs["scheduler"] == "local:2"
    check_sweep(ds, out, [8192, 16384], [1])
    fixed = json.loads(ds.attrs["fixed_parameters"])  # base "params": the rest of the section from params.yaml
    assert "line_bytes" not in fixed and "seed" not in fixed
    assert fixed["max_requests"] == params.load(REPO / "params.yaml")["quickstart"].max_requests


def test_cli_sweep_reports_a_bad_value(notebook, tmp_path, capsys):
    code = cli.main(["sweep", str(notebook), "-p", "line_bytes", "4000", "--out", str(tmp_path / "x")])
    assert code == 2
    assert "quickstart.line_bytes: expected one of 512" in capsys.readouterr().err
    assert cli.main(["sweep", str(notebook), "-p", "line_bytes", "--out", str(tmp_path / "x")]) == 2
