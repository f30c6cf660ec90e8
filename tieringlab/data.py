"""Pinned data: every file the project reads comes from a URL pinned with its checksum.

``fetch(name)`` makes ``data/<...>`` hold a verified copy: an existing verified copy is kept; else a
verified local mirror (the ``shared/`` folder beside a checkout) is copied; else the pinned URL is
downloaded. A checksum mismatch is rejected with :class:`ChecksumError` and the bad bytes are never
left where a reader would take them (download to a temporary file, verify, then rename).
Nothing here runs at import time.
"""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
import urllib.request
from pathlib import Path

from tieringlab import fileio, paths
from tieringlab.progress import progress


class ChecksumError(ValueError):
    """A file's checksum differs from the pinned one."""


@dataclasses.dataclass(frozen=True)
class PinnedFile:
    name: str
    url: str
    md5: str
    path: str                 # where it lives, relative to the repo root
    mirror: str | None = None  # relative path inside shared/ beside the checkout, if any
    size: int | None = None
    description: str = ""


CLOUDPHYSICS = PinnedFile(
    name="cloudphysics",
    url=("https://raw.githubusercontent.com/1a1a11a/libCacheSim/"
         "aa0fc40914b2b786f4b9f4dafb099f8f332b216a/data/cloudPhysicsIO.csv"),
    md5="e1101c6c26923201c2161ccddad5626f",
    path="data/cloudphysics/cloudPhysicsIO.csv",
    mirror="data/cloudphysics/cloudPhysicsIO.csv",
    description="CloudPhysics VM block trace sample (113,872 requests, libCacheSim CSV)",
)

REGISTRY: dict[str, PinnedFile] = {CLOUDPHYSICS.name: CLOUDPHYSICS}


def md5sum(path: str | Path, chunk: int = 1 << 20) -> str:
    h = hashlib.md5()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def verify(path: str | Path, md5: str, *, origin: str | None = None) -> Path:
    """Raise :class:`ChecksumError` unless ``path`` has md5 ``md5``."""
    got = md5sum(path)
    if got != md5:
        raise ChecksumError(f"{origin or path}: md5 {got} does not match the pinned {md5}; refusing to use it")
    return Path(path)


def _get(name: str) -> PinnedFile:
    if name not in REGISTRY:
        raise KeyError(f"unknown dataset {name!r}; known: {', '.join(sorted(REGISTRY))}")
    return REGISTRY[name]


def download(url: str, dest: str | Path, md5: str, *, timeout: float = 60.0) -> Path:
    """Download ``url`` to ``dest`` through a temporary file, verifying ``md5`` before the rename."""
    dest = Path(dest)
    with fileio.atomic_path(dest) as tmp:
        with urllib.request.urlopen(url, timeout=timeout) as resp, open(tmp, "wb") as fh:  # noqa: S310
            total = int(resp.headers.get("Content-Length") or 0) or None
            with progress(total=total, desc=f"download {dest.name}", unit="B") as bar:
                while block := resp.read(1 << 20):
                    fh.write(block)
                    bar.update(len(block))
        verify(tmp, md5, origin=url)
    return dest


def locate(name: str) -> Path:
    """A verified local copy of dataset ``name`` (project ``data/`` first, then the shared mirror).

    Never downloads; raises FileNotFoundError with the command that fetches it.
    """
    pf = _get(name)
    candidates = [paths.repo_root() / pf.path]
    shared = paths.shared_dir()
    if pf.mirror and shared is not None:
        candidates.append(shared / pf.mirror)
    for cand in candidates:
        if cand.is_file():
            return verify(cand, pf.md5)
    raise FileNotFoundError(f"dataset {name!r} not found at {', '.join(map(str, candidates))}; "
                            f"run `make data` (or `tieringlab data fetch {name}`) to fetch {pf.url}")


def fetch(name: str, *, url: str | None = None) -> Path:
    """Ensure ``data/`` holds a verified copy of ``name``; return its path. ``url`` overrides the pinned URL."""
    pf = _get(name)
    dest = paths.repo_root() / pf.path
    if dest.is_file():
        try:
            return verify(dest, pf.md5)
        except ChecksumError:
            dest.unlink()  # a stale or corrupted copy: replace it below
    shared = paths.shared_dir()
    if url is None and pf.mirror and shared is not None and (shared / pf.mirror).is_file():
        src = verify(shared / pf.mirror, pf.md5)
        fileio.write_with(dest, lambda tmp: shutil.copyfile(src, tmp))
        return dest
    return download(url or pf.url, dest, pf.md5)
