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
from conftest import skip_or_fail

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
        skip_or_fail("dvc is not installed (it is in requirements.lock: run `make venv`)")
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


# ---- download hardening: SHA-256 beside md5, http(s) only, a size cap (issue 18) ---------------------------

class _Handler(http.server.BaseHTTPRequestHandler):
    """/blob: BLOB with Content-Length; /stream: BLOB without it (chunks until close); /to-file and /to-ftp:
    redirects to other schemes; /big: announces 10 GB."""

    BLOB = b"0123456789" * 1000

    def log_message(self, *a, **k):
        pass

    def do_GET(self):
        if self.path == "/blob":
            self.send_response(200)
            self.send_header("Content-Length", str(len(self.BLOB)))
            self.end_headers()
            self.wfile.write(self.BLOB)
        elif self.path == "/stream":
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            for i in range(0, len(self.BLOB), 1000):
                self.wfile.write(self.BLOB[i:i + 1000])
            self.close_connection = True
        elif self.path in ("/to-file", "/to-ftp"):
            self.send_response(302)
            self.send_header("Location", "file:///etc/passwd" if self.path == "/to-file" else "ftp://127.0.0.1/x")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/big":
            self.send_response(200)
            self.send_header("Content-Length", str(10 << 30))
            self.end_headers()
            self.wfile.write(b"x" * 1000)
        else:
            self.send_error(404)


@pytest.fixture()
def server():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


def _pins(blob: bytes) -> tuple[str, str]:
    import hashlib

    return hashlib.md5(blob).hexdigest(), hashlib.sha256(blob).hexdigest()


def test_download_checks_sha256_beside_md5(server, tmp_path):
    md5, sha = _pins(_Handler.BLOB)
    dest = tmp_path / "d" / "blob.bin"
    assert data.download(f"{server}/blob", dest, md5, sha256=sha) == dest
    assert dest.read_bytes() == _Handler.BLOB
    dest.unlink()
    with pytest.raises(data.ChecksumError, match="sha256 .* does not match the pinned 0{64}"):
        data.download(f"{server}/blob", dest, md5, sha256="0" * 64)  # md5 right, sha256 wrong: refused
    assert not dest.exists() and not list(dest.parent.iterdir())
    # the project's pins: both digests of the real file, and its size as its download cap
    assert data.CLOUDPHYSICS.sha256 == "987ff2213050e47d24e8ba6e010d4b3127e51aafef6a76a8a6d43d13b9156fa1"
    assert data.CLOUDPHYSICS.size == 3_116_791


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://127.0.0.1/x", "data:text/plain,hello",
                                 "/etc/passwd", "gopher://x/"])
def test_download_refuses_schemes_other_than_http_and_https(tmp_path, url):
    with pytest.raises(data.DownloadError, match="only http and https URLs"):
        data.download(url, tmp_path / "x", "0" * 32)
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("path", ["/to-file", "/to-ftp"])
def test_download_refuses_redirects_to_other_schemes(server, tmp_path, path):
    with pytest.raises(data.DownloadError, match="only http and https URLs"):
        data.download(f"{server}{path}", tmp_path / "x", "0" * 32)
    assert not [p for p in tmp_path.iterdir()]


def test_download_size_cap(server, tmp_path):
    md5, sha = _pins(_Handler.BLOB)
    with pytest.raises(data.DownloadError, match=r"announces 10737418240 bytes, over the cap"):
        data.download(f"{server}/big", tmp_path / "big", md5)  # the default cap, before any byte is read
    with pytest.raises(data.DownloadError, match="announces 10000 bytes, over the cap of 9999"):
        data.download(f"{server}/blob", tmp_path / "b", md5, max_bytes=9999)
    with pytest.raises(data.DownloadError, match="more than the cap of 4096 bytes received"):
        data.download(f"{server}/stream", tmp_path / "s", md5, max_bytes=4096)  # no Content-Length: counted
    assert not list(tmp_path.iterdir())
    assert data.download(f"{server}/stream", tmp_path / "s", md5, max_bytes=10_000).read_bytes() == _Handler.BLOB


def test_fetch_without_network_or_copy_names_the_url_and_the_copies_looked_for(fake_root):
    """No copy in data/, no shared folder, and the URL cannot be reached (a loopback port nothing listens on):
    FetchError (an OSError, so the CLI prints it) names the dataset, the URL and where a copy was looked for,
    and nothing is left behind."""
    import socket
    with socket.socket() as sock:                          # a free port, closed again: connections are refused
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/cloudPhysicsIO.csv"
    with pytest.raises(data.FetchError, match=r"cloudphysics: downloading http://127\.0\.0\.1:\d+/cloudPhysicsIO\.csv "
                       r"failed \(.*refused.*\), and there is no copy at .*data/cloudphysics") as info:
        data.fetch("cloudphysics", url=url)
    assert isinstance(info.value, OSError) and data.CLOUDPHYSICS.md5 in str(info.value)
    assert not (fake_root / data.CLOUDPHYSICS.path).exists()
