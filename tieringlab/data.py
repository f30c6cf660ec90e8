"""Pinned data: every file the project reads comes from a URL pinned with its checksum.

``fetch(name)`` makes ``data/<...>`` hold a verified copy: an existing verified copy is kept; else a
verified local mirror (the ``shared/`` folder beside a checkout) is copied; else the pinned URL is
downloaded. A file is verified by its md5 and, where one is pinned, its SHA-256 (both must match;
md5 alone is kept for the files whose publishers list only md5, such as SNIA's MSR set). A checksum
mismatch is rejected with :class:`ChecksumError` and the bad bytes are never left where a reader would
take them (download to a temporary file, verify, then rename). A local copy that fails its checksum is
kept (every reader still rejects it) until a verified replacement is renamed onto it; if none can be had
the error says both what was wrong with the copy and why the replacement failed.

Downloads accept only ``http://`` and ``https://`` URLs (redirects included: no ``file:``, ``ftp:`` or
``data:``), and stop at a size cap (:data:`MAX_DOWNLOAD_BYTES`, or the pinned size when one is known)
before the disk fills: :class:`DownloadError`. Nothing here runs at import time.

MSR Cambridge traces (SNIA IOTTA trace set 388, ``<host>_<disk>.csv.gz``): every file the papers use is
registered (``msr_mds_0``, ...) with its URL but **no checksum**: the project could not download them to
record one, and a checksum is never invented. Such a file is *unverified*: :func:`fetch` and
:func:`locate` refuse it (:class:`UnverifiedError`) unless the caller passes the md5 the user obtained
(SNIA publishes an MD5 list with the set), e.g. from ``params.yaml``'s ``traces.msr_md5``
(``"mds_0:<md5>,web_0:<md5>"``). A file whose md5 then differs is rejected like any other.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from tieringlab import fileio, paths
from tieringlab.progress import progress


class ChecksumError(ValueError):
    """A file's checksum differs from the pinned one."""


class UnverifiedError(ChecksumError):
    """No checksum is pinned for a file yet, so it cannot be verified and is not used."""


class DownloadError(ValueError):
    """A download was refused: a URL scheme other than http(s), or more bytes than the cap."""


class FetchError(OSError):
    """A dataset could not be had: no local or shared copy, and its download failed (no network, a server
    error); the message names the URL and where a copy would have been found."""


#: The largest download accepted when no size is pinned (the largest MSR Cambridge file of SNIA set 388,
#: prxy_1, is about 2 GB compressed; a documented cap with room to spare, not a paper number).
MAX_DOWNLOAD_BYTES = 8 << 30
#: URL schemes a download may use (the pinned URLs are https; SNIA serves http).
ALLOWED_SCHEMES = ("http", "https")


@dataclasses.dataclass(frozen=True)
class PinnedFile:
    name: str
    url: str
    md5: str | None           # None: unknown until a user pins the md5 of their first download
    path: str                 # where it lives, relative to the repo root
    mirror: str | None = None  # relative path inside shared/ beside the checkout, if any
    size: int | None = None    # bytes, where known: the download cap of this file
    description: str = ""
    sha256: str | None = None  # checked beside md5 where the publisher (or the project's copy) gives one


CLOUDPHYSICS = PinnedFile(
    name="cloudphysics",
    url=("https://raw.githubusercontent.com/1a1a11a/libCacheSim/"
         "aa0fc40914b2b786f4b9f4dafb099f8f332b216a/data/cloudPhysicsIO.csv"),
    md5="e1101c6c26923201c2161ccddad5626f",
    sha256="987ff2213050e47d24e8ba6e010d4b3127e51aafef6a76a8a6d43d13b9156fa1",
    size=3_116_791,
    path="data/cloudphysics/cloudPhysicsIO.csv",
    mirror="data/cloudphysics/cloudPhysicsIO.csv",
    description="CloudPhysics VM block trace sample (113,872 requests, libCacheSim CSV)",
)

#: SNIA IOTTA trace set 388 ("MSR Cambridge Traces"). The per-file download location: files are served
#: from the set's page after accepting SNIA's terms; set ``traces.msr_base_url`` in params.yaml to the
#: directory (or mirror) that serves ``<host>_<disk>.csv.gz``.
MSR_BASE_URL = "http://iotta.snia.org/traces/block-io/388"
#: The MSR files the papers use (vFRM Table 1, thesis Tables 9/12, OTF-AST).
MSR_FILES = ("mds_0", "src1_2", "stg_0", "usr_0", "stg_1", "usr_2", "web_2", "src2_1", "web_0", "prn_0",
             "src1_0", "src1_1")


def msr_pin(trace: str, *, md5: str | None = None, base_url: str = MSR_BASE_URL) -> PinnedFile:
    """The :class:`PinnedFile` of MSR trace ``trace`` (e.g. ``"mds_0"``), with ``md5`` if the user pinned one."""
    if trace not in MSR_FILES:
        raise KeyError(f"unknown MSR trace {trace!r}; known: {', '.join(MSR_FILES)}")
    if md5 is not None and (len(md5) != 32 or any(c not in "0123456789abcdef" for c in md5.lower())):
        raise ValueError(f"md5 for {trace!r} must be 32 hex digits, got {md5!r}")
    return PinnedFile(name=f"msr_{trace}", url=f"{base_url.rstrip('/')}/{trace}.csv.gz",
                      md5=md5.lower() if md5 else None, path=f"data/msr/{trace}.csv.gz",
                      description=f"MSR Cambridge block trace {trace} (SNIA IOTTA set 388); md5 unknown until pinned")


def parse_md5_pins(text: str) -> dict[str, str]:
    """``"mds_0:<md5>,web_0:<md5>"`` -> ``{"mds_0": md5, ...}`` (the ``traces.msr_md5`` format)."""
    out: dict[str, str] = {}
    for item in filter(None, (x.strip() for x in (text or "").split(","))):
        name, sep, md5 = item.partition(":")
        if not sep:
            raise ValueError(f"msr_md5 entry {item!r}: expected '<trace>:<md5>'")
        out[name.strip()] = msr_pin(name.strip(), md5=md5.strip()).md5  # validates name and digest
    return out


#: Files ``make data`` fetches (all verified by a pinned md5).
REGISTRY: dict[str, PinnedFile] = {CLOUDPHYSICS.name: CLOUDPHYSICS}
#: MSR files, known by name (``msr_mds_0``) but unverified until the user pins an md5; not in ``REGISTRY``
#: so that ``make data`` never tries them.
MSR_REGISTRY: dict[str, PinnedFile] = {f"msr_{t}": msr_pin(t) for t in MSR_FILES}


def _digests(path: str | Path, chunk: int = 1 << 20) -> tuple[str, str]:
    """(md5, sha256) of a file, in one read."""
    md5, sha = hashlib.md5(), hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            md5.update(block)
            sha.update(block)
    return md5.hexdigest(), sha.hexdigest()


def md5sum(path: str | Path, chunk: int = 1 << 20) -> str:
    return _digests(path, chunk)[0]


def sha256sum(path: str | Path, chunk: int = 1 << 20) -> str:
    return _digests(path, chunk)[1]


def verify(path: str | Path, md5: str | None, *, sha256: str | None = None, origin: str | None = None) -> Path:
    """Raise :class:`ChecksumError` unless ``path`` has md5 ``md5`` and, if given, SHA-256 ``sha256``
    (:class:`UnverifiedError` if ``md5`` is None)."""
    if not md5:
        raise UnverifiedError(
            f"{origin or path}: no md5 is pinned for this file, so it cannot be verified and is not used. "
            f"Check the file against the publisher's checksum list and pin that md5 (for MSR traces: "
            f"params.yaml traces.msr_md5 = '<trace>:<md5>,...', or fetch(name, md5=...)).")
    got_md5, got_sha = _digests(path)
    if got_md5 != md5:
        raise ChecksumError(f"{origin or path}: md5 {got_md5} does not match the pinned {md5}; refusing to use it")
    if sha256 and got_sha != sha256.lower():
        raise ChecksumError(f"{origin or path}: sha256 {got_sha} does not match the pinned {sha256} (its md5 "
                            f"matches: a collision or a wrong pin); refusing to use it")
    return Path(path)


def pinned(name: str) -> PinnedFile:
    """The :class:`PinnedFile` registered as ``name``; ``KeyError`` naming the known data sets otherwise."""
    if name in REGISTRY:
        return REGISTRY[name]
    if name in MSR_REGISTRY:
        return MSR_REGISTRY[name]
    raise KeyError(f"unknown dataset {name!r}; known: {', '.join(sorted(REGISTRY) + sorted(MSR_REGISTRY))}")



def check_url(url: str) -> str:
    """``url`` if its scheme is http or https, else :class:`DownloadError` (no ``file:``, ``ftp:``, ...)."""
    scheme = urllib.parse.urlsplit(str(url)).scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        raise DownloadError(f"{url}: only {' and '.join(ALLOWED_SCHEMES)} URLs are downloaded, not "
                            f"{scheme + ':' if scheme else 'a URL without a scheme'}")
    return url


class _HttpOnlyRedirects(urllib.request.HTTPRedirectHandler):
    """Follow redirects to http(s) URLs only (urllib's own handler also follows ftp)."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        check_url(newurl)
        return super().redirect_request(req, fp, code, msg, headers, newurl)

    def http_error_302(self, req, fp, code, msg, headers):
        location = headers.get("location") or headers.get("uri")
        if location:  # before urllib's own check, which would answer with an HTTPError
            check_url(urllib.parse.urljoin(req.full_url, location))
        return super().http_error_302(req, fp, code, msg, headers)

    http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302


def _opener() -> urllib.request.OpenerDirector:
    """An opener with the HTTP and HTTPS handlers only: no file, ftp or data handler to reach."""
    opener = urllib.request.OpenerDirector()
    for handler in (urllib.request.ProxyHandler(), urllib.request.HTTPHandler(), urllib.request.HTTPSHandler(),
                    urllib.request.HTTPDefaultErrorHandler(), _HttpOnlyRedirects(),
                    urllib.request.HTTPErrorProcessor()):
        opener.add_handler(handler)
    return opener


def download(url: str, dest: str | Path, md5: str | None, *, sha256: str | None = None,
             max_bytes: int | None = None, timeout: float = 60.0) -> Path:
    """Download ``url`` (http or https only) to ``dest`` through a temporary file, verifying ``md5`` (and
    ``sha256`` if given) before the rename. More than ``max_bytes`` (default :data:`MAX_DOWNLOAD_BYTES`),
    announced or received, stops it with :class:`DownloadError` and leaves nothing behind."""
    dest = Path(dest)
    check_url(url)
    cap = MAX_DOWNLOAD_BYTES if max_bytes is None else int(max_bytes)
    if not md5:
        verify(dest, None, origin=url)  # raises UnverifiedError before any byte is fetched
    with fileio.atomic_path(dest) as tmp:
        with _opener().open(url, timeout=timeout) as resp, open(tmp, "wb") as fh:
            check_url(resp.geturl())
            announced = resp.headers.get("Content-Length")
            total = int(announced) if announced and announced.isdigit() else None
            if total is not None and total > cap:
                raise DownloadError(f"{url}: announces {total} bytes, over the cap of {cap} bytes; refusing it")
            got = 0
            with progress(total=total, desc=f"download {dest.name}", unit="B") as bar:
                while block := resp.read(1 << 20):
                    got += len(block)
                    if got > cap:
                        raise DownloadError(f"{url}: more than the cap of {cap} bytes received; stopped")
                    fh.write(block)
                    bar.update(len(block))
        verify(tmp, md5, sha256=sha256, origin=url)
    return dest


def locate(name: str, *, md5: str | None = None, root: str | Path | None = None) -> Path:
    """A verified local copy of dataset ``name`` (project ``data/`` first, then the shared mirror).

    Never downloads; raises FileNotFoundError with the command that fetches it. ``md5`` pins a file
    registered without a checksum (MSR traces). ``root``: the checkout to look in (default: the one
    around the working directory, :func:`tieringlab.paths.repo_root`); its shared mirror is
    ``root/../shared``.
    """
    pf = pinned(name)
    if md5 is not None:
        pf = dataclasses.replace(pf, md5=md5.lower(), sha256=None, size=None)  # another file's pin
    base = paths.repo_root() if root is None else Path(root)
    candidates = [base / pf.path]
    shared = paths.shared_dir() if root is None else (base.parent / "shared" if (base.parent / "shared").is_dir()
                                                       else None)
    if pf.mirror and shared is not None:
        candidates.append(shared / pf.mirror)
    for cand in candidates:
        if cand.is_file():
            return verify(cand, pf.md5, sha256=pf.sha256, origin=str(cand))
    raise FileNotFoundError(f"dataset {name!r} not found at {', '.join(map(str, candidates))}; "
                            f"run `make data` (or `tieringlab data fetch {name}`) to fetch {pf.url}")


def fetch(name: str, *, url: str | None = None, md5: str | None = None) -> Path:
    """Ensure ``data/`` holds a verified copy of ``name``; return its path. ``url`` overrides the pinned URL;
    ``md5`` pins a file registered without a checksum (MSR traces; :class:`UnverifiedError` without one).

    A copy in ``data/`` that fails its checksum stays where it is until a verified one (from the shared
    mirror or the download, both through a temporary file) is renamed onto it; when neither can be had,
    :class:`ChecksumError` says why the copy was rejected (its path, expected and actual md5) and why the
    replacement failed (the download's own error is its ``__cause__``)."""
    pf = pinned(name)
    if md5 is not None:
        pf = dataclasses.replace(pf, md5=md5.lower(), sha256=None, size=None)  # another file's pin
    if not pf.md5:
        verify(paths.repo_root() / pf.path, None, origin=f"{name} ({pf.url})")
    dest = paths.repo_root() / pf.path
    if os.path.lexists(dest) and not dest.is_file():
        raise IsADirectoryError(f"{dest}: exists and is not a file (a folder?), so {name} cannot be fetched there; "
                                f"move it away first")
    rejected: ChecksumError | None = None
    if dest.is_file():
        try:
            return verify(dest, pf.md5, sha256=pf.sha256)
        except ChecksumError as exc:
            rejected = exc  # a stale or corrupted copy: kept until a verified one replaces it below
    shared = paths.shared_dir()
    try:
        if url is None and pf.mirror and shared is not None and (shared / pf.mirror).is_file():
            src = verify(shared / pf.mirror, pf.md5, sha256=pf.sha256)
            fileio.write_with(dest, lambda tmp: shutil.copyfile(src, tmp))
            return dest
        return download(url or pf.url, dest, pf.md5, sha256=pf.sha256, max_bytes=pf.size)
    except Exception as exc:
        why = getattr(exc, "reason", None) or exc  # urllib's URLError: its reason, without "<urlopen error ...>"
        if rejected is None:
            if not isinstance(exc, (urllib.error.URLError, ConnectionError, TimeoutError)):
                raise
            where = [str(dest)]
            if url is None and pf.mirror:
                where.append(str(shared / pf.mirror) if shared is not None
                             else f"../shared/{pf.mirror} (no shared folder beside the checkout)")
            raise FetchError(f"{name}: downloading {url or pf.url} failed ({why}), and there is no copy at "
                             f"{' or '.join(where)}; put a copy with md5 {pf.md5} at {dest}") from exc
        raise ChecksumError(f"{rejected} (the copy is kept, unused); and no verified replacement could be had: "
                            f"fetching {url or pf.url} failed: {type(exc).__name__}: {why}") from exc


def portable_path(path: str | os.PathLike, root: str | os.PathLike | None = None) -> str:
    """``path`` as outputs record it (a trace's ``path`` attribute): relative to the checkout ``root``
    (default :func:`tieringlab.paths.repo_root`) when inside it (``data/cloudphysics/...``), or to the
    shared folder beside it (``../shared/data/...``), else as given. Outputs that record a data file's
    path are then the same in every clone (its checksum is recorded beside it)."""
    base = Path(paths.repo_root() if root is None else root)
    given = Path(os.path.abspath(path))
    bases = {base, base.resolve()}
    for p in (given, given.parent.resolve() / given.name):
        for b in bases:
            for anchor, prefix in ((b, ""), (b.parent / "shared", "../shared/")):
                try:
                    return prefix + p.relative_to(anchor).as_posix()
                except ValueError:
                    continue
    return str(path)
