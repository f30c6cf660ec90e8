"""The README's way to open the notebooks works: JupyterLab is in the lock, every notebook names a kernel
that the checkout's Jupyter knows and that runs the checkout's Python, and ``jupyter lab`` serves the
notebooks (started on a loopback port, asked for one notebook, stopped)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
JUPYTER = Path(sys.executable).with_name("jupyter")


def test_jupyterlab_is_pinned_in_the_lock():
    pins = {line.split("==")[0].lower() for line in (REPO / "requirements.lock").read_text().splitlines()
            if "==" in line and not line.startswith("#")}
    assert {"jupyterlab", "nbconvert", "ipykernel"} <= pins


def test_every_notebook_names_one_kernel_that_runs_this_python():
    from jupyter_client.kernelspec import KernelSpecManager

    names = {json.loads(nb.read_text())["metadata"]["kernelspec"]["name"] for nb in NOTEBOOKS}
    assert names == {"python3"}, f"one kernel name everywhere, got {names}"
    spec = KernelSpecManager().get_kernel_spec("python3")
    exe = spec.argv[0]
    # the native kernel of an ipykernel install runs the Python that Jupyter runs in (this checkout's .venv)
    resolved = sys.executable if exe in ("python", "python3", "{python}") else exe
    assert Path(resolved).resolve() == Path(sys.executable).resolve(), spec.argv


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_jupyter_lab_serves_the_notebooks(tmp_path):
    if not JUPYTER.exists():
        pytest.fail(f"{JUPYTER}: not found; JupyterLab must come with the lock (make venv)")
    port = _free_port()
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt"),
           "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"), "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "ws")}
    cmd = [str(JUPYTER), "lab", "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
           "--ServerApp.port_retries=0", "--IdentityProvider.token=", "--ServerApp.password=",
           f"--ServerApp.root_dir={REPO}"] + (["--allow-root"] if os.geteuid() == 0 else [])  # as make lab does
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}/api/contents/notebooks/00_quickstart.ipynb?content=0"
        body, deadline = None, time.monotonic() + 120  # a start-up bound, not a speed assertion
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(url, timeout=5) as r:
                    body = json.loads(r.read())
                break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.5)
        assert body is not None, proc.communicate(timeout=30)[0].decode(errors="replace")[-2000:] \
            if proc.poll() is not None else "jupyter lab did not answer"
        assert body["type"] == "notebook" and body["name"] == "00_quickstart.ipynb"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/lab", timeout=10) as r:
            assert r.status == 200 and b"JupyterLab" in r.read()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
