"""Pinned real data without internet: a loopback HTTP server serves a copy, fetched the way a real download is."""

from __future__ import annotations

import functools
import http.server
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tieringlab import data, paths
from tieringlab.traces import read_cloudphysics, read_msr


@pytest.fixture()
def served(tmp_path, cloudphysics_path):
    """(base URL, served dir): http.server on 127.0.0.1 at a random port, in a thread."""
    root = tmp_path / "www"
    root.mkdir()
    shutil.copyfile(cloudphysics_path, root / "cloudPhysicsIO.csv")
    bad = (root / "cloudPhysicsIO.csv").read_bytes()
    (root / "corrupt.csv").write_bytes(bad[:-10] + b"9,9,9,9\n")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a, **k: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", root
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture()
def fake_root(tmp_path, monkeypatch):
    """Point the project root (where data/ lives) at a temp dir with no shared mirror."""
    root = tmp_path / "proj"
    root.mkdir()
    monkeypatch.setattr(paths, "repo_root", lambda: root)
    monkeypatch.setattr(paths, "shared_dir", lambda: None)
    return root


def test_download_verifies_and_reads(served, tmp_path):
    base, _ = served
    dest = tmp_path / "dl" / "cp.csv"
    got = data.download(f"{base}/cloudPhysicsIO.csv", dest, data.CLOUDPHYSICS.md5)
    assert got == dest and data.md5sum(dest) == data.CLOUDPHYSICS.md5
    assert read_cloudphysics(dest).sizes["request"] == 113_872


def test_corrupt_download_rejected_and_leaves_nothing(served, tmp_path):
    base, _ = served
    dest = tmp_path / "dl" / "cp.csv"
    with pytest.raises(data.ChecksumError, match="does not match"):
        data.download(f"{base}/corrupt.csv", dest, data.CLOUDPHYSICS.md5)
    assert not dest.exists()
    assert not any(p.is_file() for p in dest.parent.rglob("*")) if dest.parent.exists() else True


def test_fetch_through_url_override(served, fake_root):
    base, _ = served
    path = data.fetch("cloudphysics", url=f"{base}/cloudPhysicsIO.csv")
    assert path == fake_root / data.CLOUDPHYSICS.path and data.md5sum(path) == data.CLOUDPHYSICS.md5
    # a corrupted local copy is replaced by a verified download, a corrupted download is refused
    path.write_bytes(b"garbage")
    data.fetch("cloudphysics", url=f"{base}/cloudPhysicsIO.csv")
    assert data.md5sum(path) == data.CLOUDPHYSICS.md5
    path.unlink()
    with pytest.raises(data.ChecksumError):
        data.fetch("cloudphysics", url=f"{base}/corrupt.csv")
    assert not path.exists()


def test_msr_file_without_pinned_md5_is_refused(served, fake_root, tmp_path):
    base, root = served
    # an MSR-format file served under an MSR name: no md5 is pinned, so nothing is downloaded or used
    line = "128166372003061629,hm,1,Read,7014609920,24576,41286\n"
    (root / "mds_0.csv.gz").write_bytes(__import__("gzip").compress(line.encode() * 10))
    with pytest.raises(data.UnverifiedError, match="no md5 is pinned"):
        data.fetch("msr_mds_0", url=f"{base}/mds_0.csv.gz")
    assert not (fake_root / "data/msr/mds_0.csv.gz").exists()
    # pinning the md5 the user obtained makes the same path work; a wrong pin is rejected
    md5 = data.md5sum(root / "mds_0.csv.gz")
    with pytest.raises(data.ChecksumError):
        data.fetch("msr_mds_0", url=f"{base}/mds_0.csv.gz", md5="0" * 32)
    path = data.fetch("msr_mds_0", url=f"{base}/mds_0.csv.gz", md5=md5)
    assert read_msr(path).sizes["request"] == 10
    with pytest.raises(data.UnverifiedError):
        data.locate("msr_mds_0")
    assert data.locate("msr_mds_0", md5=md5) == path


def test_msr_pins_are_parsed_and_checked():
    assert data.parse_md5_pins("mds_0:" + "a" * 32 + ", web_0:" + "B" * 32) == {"mds_0": "a" * 32, "web_0": "b" * 32}
    with pytest.raises(ValueError, match="32 hex"):
        data.parse_md5_pins("mds_0:1234")
    with pytest.raises(KeyError):
        data.parse_md5_pins("nope_0:" + "a" * 32)
    assert all(pf.md5 is None for pf in data.MSR_REGISTRY.values())  # never invented
    assert set(data.REGISTRY) == {"cloudphysics"}                    # `make data` fetches only verified files


def test_trace_source_msr_requires_pin(tmp_path):
    from tieringlab.traces import load

    line = "128166372003061629,hm,1,Read,7014609920,24576,41286\n"
    (tmp_path / "web_0.csv.gz").write_bytes(__import__("gzip").compress(line.encode() * 3))
    cfg = {"source": "msr", "msr_dir": str(tmp_path), "msr_md5": ""}
    with pytest.raises(data.UnverifiedError):
        load("web0", cfg)
    cfg["msr_md5"] = "web_0:" + data.md5sum(tmp_path / "web_0.csv.gz")
    assert load("web0", cfg).sizes["request"] == 3
    cfg["msr_md5"] = "web_0:" + "f" * 32
    with pytest.raises(data.ChecksumError):
        load("web0", cfg)


def _dvc() -> list[str] | None:
    exe = Path(sys.executable).with_name("dvc")
    return [str(exe)] if exe.is_file() else (["dvc"] if shutil.which("dvc") else None)


def test_dvc_import_url_then_verify(served, tmp_path):
    dvc = _dvc()
    if dvc is None:
        pytest.skip("dvc is not installed")
    base, _ = served
    repo = tmp_path / "repo"
    repo.mkdir()
    env_run = functools.partial(subprocess.run, cwd=repo, capture_output=True, text=True, timeout=120)
    assert env_run(["git", "init", "-q"]).returncode == 0
    r = env_run([*dvc, "init", "-q"])
    assert r.returncode == 0, r.stderr
    r = env_run([*dvc, "import-url", f"{base}/cloudPhysicsIO.csv", "cloudPhysicsIO.csv"])
    assert r.returncode == 0, r.stderr
    got = repo / "cloudPhysicsIO.csv"
    assert data.verify(got, data.CLOUDPHYSICS.md5) == got
    assert data.CLOUDPHYSICS.md5 in (repo / "cloudPhysicsIO.csv.dvc").read_text()
    # the corrupted copy comes through DVC too, and our verification rejects it
    r = env_run([*dvc, "import-url", f"{base}/corrupt.csv", "corrupt.csv"])
    assert r.returncode == 0, r.stderr
    with pytest.raises(data.ChecksumError):
        data.verify(repo / "corrupt.csv", data.CLOUDPHYSICS.md5)
