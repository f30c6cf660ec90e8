"""Content-addressed on-disk cache of generated arrays (synthetic twins and workloads), under ``build/cache``.

A generator whose output is a few arrays and some plain metadata, and which costs seconds at paper scale
(:func:`tieringlab.traces.twins.msr_twin`: 2-10 s per twin at scale 1), calls :func:`cached` with its name,
every parameter that affects the output and the modules its code lives in. The first call generates and
writes; later calls, in any process, read the file back instead: bit-identical arrays (tests compare them
exactly), in a fraction of the time.

**Key**: SHA-256 of the generator's name, its parameters (canonical JSON: sorted keys, floats by ``repr``),
numpy's version (the random streams are numpy's) and a **code version derived from the source**: the bytes of
every module named and of every ``tieringlab`` module they reach through their globals (transitively; a
function-level import is named explicitly by the caller). Editing any of those files changes the key, so a
stale entry is never read (it is left behind; ``make clean-cache`` removes everything). Nothing is bumped by
hand.

**File** (one per entry, ``<cache dir>/<name>/<key>.npc``): 8 magic bytes, the header length, a JSON header
(the key, the parameters, the metadata, each array's dtype, shape and offset, the payload's length and
SHA-256), then the arrays, each at a 64-byte aligned offset. Large arrays are returned memory-mapped
copy-on-write (``mode="c"``: the pages come from the OS's file cache, shared by processes, and a caller that
writes into an array changes only its own copy); small ones are read into memory.

**Safety**: an entry is written to a temporary file in the same folder and moved into place with
``os.replace`` (atomic on one file system), so concurrent stages or two notebooks generating the same entry
never see a partial file (the last writer wins; both wrote the same bytes). On reading, the header, the file's
size and the payload's SHA-256 are checked; a file that fails (truncated, corrupted, another format) is
reported with a :class:`CacheWarning`, deleted, and the entry regenerated; it is never used.

**Size cap**: the entries (``*.npc`` under the cache dir, every generator) are kept under
``$TIERINGLAB_CACHE_MAX_GB`` (GiB; default :data:`DEFAULT_MAX_GB` = 20, room for every paper-scale twin the
notebooks use, about 7 GB, three times over; ``0`` or ``none``: no cap). After each write the least recently
used entries go first (an entry's modification time is its last use: a read touches it), except the entries
this process has read or written (it may hold them memory-mapped; on Linux a deleted file that another process
has mapped stays readable by it until unmapped) and the temporary files of writers (only finished ``.npc``
files are candidates). Each eviction is logged (logger ``tieringlab.cache``, INFO) and appended to
``<cache dir>/evictions.log``. An evicted entry only costs its next use the generation time.

**Where**: :func:`tieringlab.paths.cache_dir` (``$TIERINGLAB_CACHE``, else the checkout's ``build/cache``,
ignored by git). ``TIERINGLAB_CACHE=off`` turns the cache off (every call generates). The tests point it at a
temporary folder.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import tempfile
import time
import types
import warnings
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import numpy as np

from tieringlab import paths

__all__ = ["CacheWarning", "cached", "cached_dataset", "entry_path", "key_of", "code_digest", "max_bytes", "evict"]

MAGIC = b"TLCACHE1"
ALIGN = 64
#: Arrays of at least this many bytes come back memory-mapped (copy-on-write); smaller ones are read.
MMAP_BYTES = 1 << 20
#: The cap on the entries' total size when ``$TIERINGLAB_CACHE_MAX_GB`` is not set (GiB; module docstring).
DEFAULT_MAX_GB = 20.0
MAX_GB_ENV = "TIERINGLAB_CACHE_MAX_GB"
_log = logging.getLogger(__name__)
#: The entries this process has read or written (never evicted by it: it may hold them memory-mapped).
_IN_USE: set[Path] = set()


class CacheWarning(UserWarning):
    """A cache file that could not be used (corrupt, truncated, unreadable) and was regenerated."""


# --------------------------------------------------------------------------------------------- keys

def _reached_modules(modules: Iterable[types.ModuleType]) -> list[types.ModuleType]:
    """``modules`` and every ``tieringlab`` module reachable through their globals, transitively."""
    seen: dict[str, types.ModuleType] = {}
    todo = list(modules)
    while todo:
        m = todo.pop()
        if m.__name__ in seen:
            continue
        seen[m.__name__] = m
        for v in list(vars(m).values()):
            mod = v.__name__ if isinstance(v, types.ModuleType) else getattr(v, "__module__", None)
            if isinstance(mod, str) and (mod == "tieringlab" or mod.startswith("tieringlab.")) \
                    and mod not in seen and mod in sys.modules:
                todo.append(sys.modules[mod])
    return [seen[k] for k in sorted(seen)]


def code_digest(modules: Iterable[types.ModuleType]) -> str:
    """SHA-256 (hex) of the source files of ``modules`` and every ``tieringlab`` module they reach."""
    h = hashlib.sha256()
    for m in _reached_modules(modules):
        f = getattr(m, "__file__", None)
        h.update(m.__name__.encode() + b"\n")
        if f:
            h.update(Path(f).read_bytes())
    return h.hexdigest()


def _canonical(obj) -> str:
    def default(o):
        if isinstance(o, np.generic):
            return {"__np__": o.dtype.str, "v": o.item()}
        if isinstance(o, np.ndarray):
            return {"__nd__": o.dtype.str, "shape": list(o.shape),
                    "sha256": hashlib.sha256(np.ascontiguousarray(o).tobytes()).hexdigest()}
        if isinstance(o, (set, frozenset)):
            return sorted(o)
        raise TypeError(f"cache key: cannot encode a parameter of type {type(o).__name__} ({o!r})")

    return json.dumps(obj, sort_keys=True, default=default, separators=(",", ":"), allow_nan=True)


def key_of(name: str, params: Mapping, code: str) -> str:
    """The entry's key: SHA-256 (hex) of the name, the parameters, numpy's version and the code digest."""
    blob = _canonical({"name": name, "params": dict(params), "numpy": np.__version__, "code": code})
    return hashlib.sha256(blob.encode()).hexdigest()


def entry_path(name: str, key: str, root: Path | None = None) -> Path | None:
    """``<cache dir>/<name>/<key>.npc``, or ``None`` when the cache is off."""
    root = paths.cache_dir() if root is None else root
    return None if root is None else root / name / f"{key}.npc"


# --------------------------------------------------------------------------------------------- metadata

_SCALARS = {bool: "bool", int: "int", float: "float", str: "str", type(None): "none"}


class _Unencodable(Exception):
    pass


def _enc(v):
    tag = _SCALARS.get(type(v))
    if tag is not None:
        return [tag, v]
    if isinstance(v, np.generic) and v.dtype.kind in "biuf":
        return ["np:" + v.dtype.str, v.item()]
    if type(v) in (list, tuple):
        return [type(v).__name__, [_enc(x) for x in v]]
    raise _Unencodable(type(v).__name__)


def _dec(tag, v):
    if tag.startswith("np:"):
        return np.dtype(tag[3:]).type(v)
    if tag in ("list", "tuple"):
        items = [_dec(*x) for x in v]
        return items if tag == "list" else tuple(items)
    return {"float": float, "int": int}.get(tag, lambda x: x)(v)


def _encode_meta(meta: Mapping) -> dict | None:
    """Metadata as JSON with a type tag per value (plain scalars, numpy numbers, lists and tuples of them),
    or ``None`` if a value is of another type (then the entry is not cached rather than read back changed)."""
    try:
        return {k: _enc(v) for k, v in meta.items()} if all(isinstance(k, str) for k in meta) else None
    except _Unencodable:
        return None


def _decode_meta(enc: Mapping) -> dict:
    return {k: _dec(tag, v) for k, (tag, v) in enc.items()}


# --------------------------------------------------------------------------------------------- files

def _bytes(a: np.ndarray) -> np.ndarray:
    """The array's bytes as a flat uint8 view (bool and empty arrays included)."""
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8)


def _write(path: Path, key: str, name: str, params: Mapping, arrays: Mapping[str, np.ndarray],
           meta_enc: Mapping) -> None:
    specs, offset = [], 0
    arrs = {k: np.ascontiguousarray(v) for k, v in arrays.items()}
    for k, a in arrs.items():
        offset = -(-offset // ALIGN) * ALIGN
        specs.append({"name": k, "dtype": a.dtype.str, "shape": list(a.shape), "offset": offset, "nbytes": a.nbytes})
        offset += a.nbytes
    payload_bytes = offset
    h = hashlib.sha256()
    pos = 0
    for s in specs:                       # the digest covers the padding too: the payload exactly as written
        h.update(b"\0" * (s["offset"] - pos))
        h.update(_bytes(arrs[s["name"]]))
        pos = s["offset"] + s["nbytes"]
    header = json.dumps({"key": key, "name": name, "params": json.loads(_canonical(dict(params))),
                         "meta": meta_enc, "arrays": specs, "payload_bytes": payload_bytes,
                         "sha256": h.hexdigest()}).encode()
    data_start = -(-(len(MAGIC) + 8 + len(header)) // ALIGN) * ALIGN
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem[:16]}-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC + len(header).to_bytes(8, "little") + header)
            f.write(b"\0" * (data_start - f.tell()))
            for s in specs:
                f.write(b"\0" * (data_start + s["offset"] - f.tell()))
                f.write(_bytes(arrs[s["name"]]))
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)              # mkstemp's 0600 would keep the entry from other users of the folder
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _read(path: Path, key: str) -> tuple[dict[str, np.ndarray], dict]:
    """The arrays and metadata of the entry at ``path``; ``ValueError`` naming what is wrong otherwise."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(len(MAGIC) + 8)
        if len(head) < len(MAGIC) + 8 or head[:len(MAGIC)] != MAGIC:
            raise ValueError("not a tieringlab cache file (bad magic)")
        n = int.from_bytes(head[len(MAGIC):], "little")
        if n > size:
            raise ValueError(f"header length {n} exceeds the file's {size} bytes")
        try:
            header = json.loads(f.read(n))
        except ValueError as exc:
            raise ValueError(f"unreadable header ({exc})") from None
    if header.get("key") != key:
        raise ValueError(f"key mismatch ({str(header.get('key'))[:16]}... for {key[:16]}...)")
    data_start = -(-(len(MAGIC) + 8 + n) // ALIGN) * ALIGN
    expected = data_start + int(header["payload_bytes"])
    if size != expected:
        raise ValueError(f"size {size} bytes, expected {expected} (truncated or extended)")
    h = hashlib.sha256()
    with open(path, "rb") as f:
        f.seek(data_start)
        while chunk := f.read(1 << 24):
            h.update(chunk)
    if h.hexdigest() != header["sha256"]:
        raise ValueError("payload SHA-256 differs from the header's (corrupted)")
    arrays = {}
    for s in header["arrays"]:
        dt, shape, off = np.dtype(s["dtype"]), tuple(s["shape"]), data_start + s["offset"]
        if s["nbytes"] >= MMAP_BYTES:
            arrays[s["name"]] = np.memmap(path, dtype=dt, mode="c", offset=off, shape=shape)
        else:
            with open(path, "rb") as f:
                f.seek(off)
                arrays[s["name"]] = np.frombuffer(f.read(s["nbytes"]), dtype=dt).reshape(shape).copy()
    return arrays, _decode_meta(header["meta"])


# --------------------------------------------------------------------------------------------- the size cap

def max_bytes() -> int | None:
    """The cap on the cache's entries in bytes from ``$TIERINGLAB_CACHE_MAX_GB`` (GiB, default
    :data:`DEFAULT_MAX_GB`); None for no cap (``0`` or ``none``). Any other value is a ``ValueError`` naming
    the variable and its allowed values."""
    raw = os.environ.get(MAX_GB_ENV, "").strip()
    if not raw:
        return int(DEFAULT_MAX_GB * 2**30)
    if raw.lower() == "none":
        return None
    try:
        gb = float(raw)
    except ValueError:
        gb = float("nan")
    if not (gb >= 0 and gb != float("inf")):
        raise ValueError(f"{MAX_GB_ENV} must be a size in GiB >= 0, or 0 / none for no cap; got {raw!r}")
    return None if gb == 0 else int(gb * 2**30)


def _touch(path: Path) -> None:
    """Mark ``path`` used now (its modification time is its last use) and in use by this process."""
    _IN_USE.add(path)
    try:
        os.utime(path)
    except OSError:                       # another user's entry: its age stays the write's
        pass


def evict(root: Path | None = None, cap: int | None = -1) -> list[Path]:
    """Delete the least recently used entries under ``root`` (default the cache dir) until their total size is
    at most ``cap`` bytes (default :func:`max_bytes`; None: no cap), never an entry this process uses nor a
    writer's temporary file. Returns the deleted paths, oldest first; each is logged."""
    root = paths.cache_dir() if root is None else root
    cap = max_bytes() if cap == -1 else cap
    if root is None or cap is None or not root.is_dir():
        return []
    entries = []
    for p in root.glob("*/*.npc"):
        try:
            st = p.stat()
        except OSError:                   # removed meanwhile by another process
            continue
        entries.append((st.st_mtime_ns, str(p), st.st_size, p))
    total = sum(e[2] for e in entries)
    gone: list[Path] = []
    for mtime, _, size, p in sorted(entries):
        if total <= cap:
            break
        if p in _IN_USE:
            continue
        try:
            p.unlink()
        except FileNotFoundError:         # evicted by another process: its bytes are gone all the same
            total -= size
            continue
        except OSError as exc:
            _log.warning("could not evict cache entry %s (%s)", p, exc)
            continue
        total -= size
        gone.append(p)
        used = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(mtime / 1e9))
        line = (f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} evicted {p.relative_to(root)} "
                f"({size} bytes, last used {used}; cap {cap} bytes)")
        _log.info("cache: %s", line)
        try:
            with open(root / "evictions.log", "a", encoding="utf-8") as f:
                f.write(line + "\n")
        except OSError:
            pass
    if total > cap:
        _log.info("cache: %d bytes after eviction, over the cap of %d bytes: the rest is in use by this process",
                  total, cap)
    return gone


# --------------------------------------------------------------------------------------------- the API

def cached(name: str, params: Mapping, generate: Callable[[], tuple[Mapping[str, np.ndarray], Mapping]], *,
           modules: Iterable[types.ModuleType]) -> tuple[dict[str, np.ndarray], dict]:
    """``generate()``'s ``(arrays, meta)``, read from the cache when present, else generated and written.

    ``name``: the generator (a folder of the cache); ``params``: every input that affects the output (JSON-able
    values, numpy scalars or arrays); ``modules``: the modules holding the generator's code (they and every
    ``tieringlab`` module they reach are hashed into the key). ``arrays`` map names to numpy arrays; ``meta``
    maps names to plain scalars (str, int, float, bool, None, numpy numbers) and comes back with the same
    types. Where the cache is off, or the folder cannot be written, or ``meta`` holds other types, this is
    just ``generate()``.
    """
    root = paths.cache_dir()
    if root is None:
        return generate()
    key = key_of(name, params, code_digest(modules))
    path = entry_path(name, key, root)
    if path.exists():
        try:
            got = _read(path, key)
            _touch(path)
            return got
        except (OSError, ValueError, KeyError, TypeError) as exc:
            warnings.warn(f"cache entry {path} is unusable ({exc}); regenerating it", CacheWarning, stacklevel=2)
            try:
                path.unlink()
            except OSError:
                pass
    arrays, meta = generate()
    meta_enc = _encode_meta(meta)
    if meta_enc is not None:
        try:
            _write(path, key, name, params, arrays, meta_enc)
            _IN_USE.add(path)
            evict(root)
        except OSError as exc:     # a read-only or full disk: the result is still right, only not kept
            warnings.warn(f"could not write cache entry {path} ({exc})", CacheWarning, stacklevel=2)
    return {k: np.asarray(v) for k, v in arrays.items()}, dict(meta)


def cached_dataset(name: str, params: Mapping, generate: Callable, *, modules: Iterable[types.ModuleType]):
    """:func:`cached` for a generator that returns an :class:`xarray.Dataset` of data variables (no coordinates)
    with plain-scalar attributes: the same Dataset comes back (values, dtypes, dimensions, variable and dataset
    attributes, in order). A Dataset outside that form is returned as generated and not cached."""
    import xarray as xr  # noqa: PLC0415

    made = []

    def gen():
        ds = generate()
        made.append(ds)
        layout = []
        for v, da in ds.data_vars.items():
            if not all(isinstance(x, str) for x in da.attrs.values()):
                return {}, {"__uncachable__": object()}
            layout.append([str(v), list(da.dims), dict(da.attrs)])
        if ds.coords or "__vars__" in ds.attrs:
            return {}, {"__uncachable__": object()}
        return ({f"var{i}": ds[v].values for i, v in enumerate(ds.data_vars)},
                {**ds.attrs, "__vars__": json.dumps(layout)})

    arrays, meta = cached(name, params, gen, modules=modules)
    if made:                                # generated in this call: the generator's own Dataset
        return made[0]
    layout = json.loads(meta.pop("__vars__"))
    return xr.Dataset({v: (tuple(dims), arrays[f"var{i}"], attrs) for i, (v, dims, attrs) in enumerate(layout)},
                      attrs=meta)
