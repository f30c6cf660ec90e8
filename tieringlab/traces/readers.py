"""Readers for real block-IO traces: MSR Cambridge (SNIA IOTTA set 388) and the CloudPhysics CSV.

Both return the one trace schema every other module reads (DESIGN.md, "Data flow"): an
:class:`xarray.Dataset` with dimension ``request`` and

- ``time``      float64, seconds since the first request of the file (file order),
- ``offset``    int64, byte offset of the first byte touched,
- ``size``      int64, bytes (> 0),
- ``is_write``  bool,

and attrs ``name``, ``source`` (``"msr"``, ``"cloudphysics"`` or ``"twin"``), ``sha256`` (of the file
as stored, compressed or not), ``n_skipped`` (lines dropped under ``errors="skip"``).

Parsing is pandas' C tokenizer, chunk by chunk (``chunksize`` rows at a time), so a file larger than
memory streams through; validation is vectorized per chunk. A malformed line raises
:class:`TraceFormatError` naming the file, the 1-based line number (the header, if any, is line 1)
and the field. Gzip input is detected by its magic bytes; a truncated gzip stream is an error.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import warnings
import zlib
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import xarray as xr

__all__ = ["TraceFormatError", "read_msr", "read_cloudphysics", "make_dataset",
           "MSR_COLUMNS", "CLOUDPHYSICS_COLUMNS", "READ_OPS", "WRITE_OPS"]

#: MSR Cambridge CSV columns (no header line in the SNIA files; one is accepted if present).
MSR_COLUMNS = ("Timestamp", "Hostname", "DiskNumber", "Type", "Offset", "Size", "ResponseTime")
#: Windows FILETIME ticks per second (100 ns ticks).
FILETIME_TICKS_PER_S = 10_000_000
#: libCacheSim's CloudPhysics CSV columns (header line present).
CLOUDPHYSICS_COLUMNS = ("version", "time", "op", "size", "lbn")
#: SCSI opcodes (hex) of the CloudPhysics ``op`` column: READ(10/16/12) and WRITE(10/16/12).
READ_OPS = ("28", "88", "a8")
WRITE_OPS = ("2a", "8a", "aa")
SECTOR_BYTES = 512
DEFAULT_CHUNK_ROWS = 1 << 21


class TraceFormatError(ValueError):
    """A trace file is malformed: the message names the file, the 1-based line number and the field."""


class _HashingReader(io.RawIOBase):
    """A read-only file wrapper that feeds every byte it returns into a sha256."""

    def __init__(self, fh):
        self._fh = fh
        self.sha256 = hashlib.sha256()

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        n = self._fh.readinto(buf)
        if n:
            self.sha256.update(memoryview(buf)[:n])
        return n

    def drain(self) -> str:
        """Hash whatever the parser did not read (it may stop early on trailing bytes) and return the digest."""
        while block := self._fh.read(1 << 20):
            self.sha256.update(block)
        return self.sha256.hexdigest()


def _open_text(path: Path):
    """(binary stream for the parser, hashing reader). Gzip is detected by magic bytes, not the suffix."""
    raw = open(path, "rb")  # noqa: SIM115  (closed by the caller)
    hashing = _HashingReader(raw)
    head = raw.read(2)
    raw.seek(0)
    buffered = io.BufferedReader(hashing, buffer_size=1 << 20)
    if head == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=buffered, mode="rb"), hashing, raw
    return buffered, hashing, raw


def _check_errors_arg(errors: str) -> None:
    if errors not in ("raise", "skip"):
        raise ValueError(f"errors must be 'raise' or 'skip', got {errors!r}")


def _chunks(path: Path, *, names, usecols, dtype, header_probe: Callable[[str], bool], chunksize: int,
            errors: str):
    """Yield (chunk DataFrame, first 1-based line number of its rows, bad-line line numbers) and the digest.

    Rows keep a ``_line`` column with their 1-based line number in the file. ``skip_blank_lines`` is off
    so that every physical line is a row (a blank line is then a malformed row, not a silent gap).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such trace file")
    if path.stat().st_size == 0:
        raise TraceFormatError(f"{path}: empty file (no requests)")
    stream, hashing, raw = _open_text(path)
    try:
        yield from _chunks_body(path, stream, hashing, names=names, dtype=dtype, header_probe=header_probe,
                                chunksize=chunksize, errors=errors)
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise TraceFormatError(f"{path}: corrupt or truncated gzip stream ({exc}); "
                               f"refusing to return a short trace") from None
    finally:
        stream.close()
        raw.close()


def _chunks_body(path, stream, hashing, *, names, dtype, header_probe, chunksize, errors):
    if True:
        try:
            first = stream.peek(4096) if hasattr(stream, "peek") else b""
        except (EOFError, OSError, zlib.error) as exc:
            raise TraceFormatError(f"{path}: corrupt or truncated gzip stream ({exc})") from None
        first_line = first.split(b"\n", 1)[0].decode("utf-8", "replace").strip()
        has_header = header_probe(first_line)
        if not first_line and len(first) == 0:
            raise TraceFormatError(f"{path}: empty trace (no lines)")
        bad_lines: list[int] = []

        def on_warning(message: str) -> None:
            # pandas' C parser: "Skipping line 17: expected 7 fields, saw 8"
            for part in str(message).split("\n"):
                part = part.strip()
                if part.startswith("Skipping line"):
                    bad_lines.append(int(part.split()[2].rstrip(":")))

        reader = pd.read_csv(
            stream, header=None, names=list(names), dtype=dtype,
            skiprows=1 if has_header else 0, chunksize=chunksize, engine="c", skip_blank_lines=False,
            on_bad_lines="error" if errors == "raise" else "warn", na_filter=True, low_memory=True,
        )
        row0 = 1 + int(has_header)  # 1-based line number of the first data row
        seen_bad = 0
        while True:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", pd.errors.ParserWarning)
                try:
                    chunk = next(reader)
                except StopIteration:
                    break
                except pd.errors.ParserError as exc:
                    # "Error tokenizing data. C error: Expected 7 fields in line 5, saw 8"
                    msg = str(exc)
                    line = None
                    if " in line " in msg:
                        line = int(msg.split(" in line ")[1].split(",")[0])  # pandas counts skipped header rows
                    where = f"line {line}" if line is not None else "a line"
                    raise TraceFormatError(f"{path}: {where}: wrong number of fields "
                                           f"(expected {len(names)}: {', '.join(names)}); {msg}") from None
                except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
                    raise TraceFormatError(f"{path}: corrupt or truncated gzip stream ({exc}); "
                                           f"refusing to return a short trace") from None
                except UnicodeDecodeError as exc:
                    raise TraceFormatError(f"{path}: not a text CSV ({exc})") from None
            for w in caught:
                if issubclass(w.category, pd.errors.ParserWarning):
                    on_warning(str(w.message))
            # Line numbers: rows are consecutive lines except for lines the parser skipped as bad.
            n = len(chunk)
            new_bad = sorted(bad_lines[seen_bad:])
            seen_bad = len(bad_lines)
            lines = row0 + np.arange(n, dtype=np.int64)
            if new_bad:
                # each skipped line before a row shifts that row's line number by one
                bad = np.asarray(new_bad, dtype=np.int64)
                shift = np.zeros(n, dtype=np.int64)
                for b in bad:  # a handful of bad lines per chunk; not a loop over requests
                    shift[lines + shift >= b] += 1
                lines = lines + shift
            chunk["_line"] = lines
            row0 = int(lines[-1]) + 1 if n else row0 + len(new_bad)
            yield chunk, len(new_bad)
        digest = hashing.drain()
        yield None, digest


def _fail_or_mask(path: Path, bad: np.ndarray, lines: np.ndarray, field: str, why: str, errors: str,
                  keep: np.ndarray) -> None:
    """Raise for the first bad row (errors="raise") or drop the bad rows from ``keep`` (errors="skip")."""
    if not bad.any():
        return
    if errors == "raise":
        line = int(lines[np.argmax(bad)])
        raise TraceFormatError(f"{path}: line {line}: field {field!r}: {why}")
    keep &= ~bad


def _numeric(col: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(int64 values, bad mask) of a column parsed as integers; non-numeric or missing entries are bad."""
    if pd.api.types.is_integer_dtype(col.dtype) and not col.hasnans:
        return col.to_numpy(np.int64), np.zeros(len(col), bool)
    num = pd.to_numeric(col, errors="coerce")
    arr = num.to_numpy(np.float64, na_value=np.nan)
    bad = ~np.isfinite(arr) | (arr != np.round(arr))
    out = np.where(bad, 0, arr).astype(np.int64)
    if pd.api.types.is_integer_dtype(num.dtype):  # keep exact int64 (no float round trip) where possible
        out = np.where(bad, 0, num.fillna(0).to_numpy(np.int64))
    return out, bad


def make_dataset(time_s, offset, size, is_write, *, name: str, source: str, sha256: str = "",
                 **attrs) -> xr.Dataset:
    """Build a trace Dataset in the common schema (arrays are converted to float64/int64/bool)."""
    ds = xr.Dataset(
        {
            "time": ("request", np.asarray(time_s, dtype=np.float64), {"units": "s"}),
            "offset": ("request", np.asarray(offset, dtype=np.int64), {"units": "bytes"}),
            "size": ("request", np.asarray(size, dtype=np.int64), {"units": "bytes"}),
            "is_write": ("request", np.asarray(is_write, dtype=bool)),
        },
        attrs={"name": name, "source": source, "sha256": sha256, **attrs},
    )
    return ds


def _default_name(path: Path) -> str:
    name = path.name
    for suffix in (".gz", ".csv", ".txt"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name


def _category_codes(col: pd.Series, table: dict[str, int]) -> np.ndarray:
    """Map a categorical column through ``table`` (categories stripped and lower-cased); -1 if unknown or missing."""
    cats = [str(c).strip().lower() for c in col.cat.categories]
    lut = np.array([table.get(c, -1) for c in cats] + [-1], dtype=np.int8)
    return lut[col.cat.codes.to_numpy()]  # code -1 (missing) maps to the trailing -1


def _read_chunked(path: str | Path, *, columns: tuple[str, ...] | list[str], dtype: dict,
                  header_probe: Callable[[str], bool], parse, ticks_per_s: int, source: str, name: str | None,
                  errors: str, chunksize: int) -> xr.Dataset:
    """The readers' shared loop: chunks of the C parser, the short-line check, per-format ``parse``, skip counts.

    ``parse(chunk, fail)`` returns ``(ticks, offset_bytes, size_bytes, is_write)`` arrays for the chunk and
    reports each bad field with ``fail(bad_mask, field, why)`` (raises, or masks the line with ``errors="skip"``).
    """
    _check_errors_arg(errors)
    path = Path(path)
    parts: tuple[list, list, list, list] = ([], [], [], [])
    n_skipped = 0
    digest = ""
    gen = _chunks(path, names=columns, usecols=columns, dtype=dtype, header_probe=header_probe,
                  chunksize=chunksize, errors=errors)
    for chunk, extra in gen:
        if chunk is None:
            digest = extra
            break
        n_skipped += extra
        lines = chunk["_line"].to_numpy()
        keep = np.ones(len(chunk), bool)

        def fail(bad, field, why, lines=lines, keep=keep):
            _fail_or_mask(path, bad, lines, field, why, errors, keep)

        # A short line leaves trailing fields missing: check the last field first.
        last = columns[-1]
        fail(chunk[last].isna().to_numpy(), last, f"missing (a line needs {len(columns)} fields: {','.join(columns)})")
        fields = parse(chunk, fail)
        n_skipped += int((~keep).sum())
        for acc, arr in zip(parts, fields):
            acc.append(arr[keep])
    return _finish(path, *parts, ticks_per_s, name=name, source=source, sha256=digest, n_skipped=n_skipped)


def _parse_msr(chunk: pd.DataFrame, fail) -> tuple[np.ndarray, ...]:
    ts, bad = _numeric(chunk["Timestamp"])
    fail(bad, "Timestamp", "expected an integer Windows FILETIME")
    off, bad = _numeric(chunk["Offset"])
    fail(bad | (off < 0), "Offset", "expected a non-negative integer byte offset")
    sz, bad = _numeric(chunk["Size"])
    fail(bad | (sz <= 0), "Size", "expected a positive integer size in bytes")
    code = _category_codes(chunk["Type"], {"read": 0, "write": 1})
    fail(code < 0, "Type", "expected 'Read' or 'Write'")
    return ts, off, sz, code == 1


def _parse_cloudphysics(chunk: pd.DataFrame, fail) -> tuple[np.ndarray, ...]:
    t, bad = _numeric(chunk["time"])
    fail(bad, "time", "expected an integer number of seconds")
    sz, bad = _numeric(chunk["size"])
    fail(bad | (sz <= 0), "size", "expected a positive integer size in bytes")
    lbn, bad = _numeric(chunk["lbn"])
    fail(bad | (lbn < 0), "lbn", "expected a non-negative integer sector number")
    code = _category_codes(chunk["op"], {**{o: 0 for o in READ_OPS}, **{o: 1 for o in WRITE_OPS}})
    fail(code < 0, "op", f"expected a SCSI read ({'/'.join(READ_OPS)}) or write ({'/'.join(WRITE_OPS)}) opcode")
    return t, lbn * SECTOR_BYTES, sz, code == 1


def read_msr(path: str | Path, *, errors: str = "raise", name: str | None = None,
             chunksize: int = DEFAULT_CHUNK_ROWS) -> xr.Dataset:
    """Read an MSR Cambridge trace (``<host>_<disk>.csv`` or ``.csv.gz``; SNIA IOTTA set 388).

    Columns ``Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime``; ``Timestamp`` is a Windows
    FILETIME (100 ns ticks), ``Type`` is ``Read`` or ``Write``, ``Offset`` and ``Size`` are bytes.
    ``time`` is ``(Timestamp - Timestamp[0]) / 1e7`` seconds (first request in file order).

    Malformed lines (wrong number of fields, non-numeric Timestamp/Offset/Size, negative offset, size
    <= 0, a Type other than Read/Write) raise :class:`TraceFormatError` (file, line, field), or are
    dropped with ``errors="skip"`` (their count in ``attrs["n_skipped"]``).
    """
    return _read_chunked(path, columns=MSR_COLUMNS, dtype={"Hostname": "category", "Type": "category"},
                         header_probe=lambda line: line.lower().startswith("timestamp"), parse=_parse_msr,
                         ticks_per_s=FILETIME_TICKS_PER_S, source="msr", name=name, errors=errors,
                         chunksize=chunksize)


def read_cloudphysics(path: str | Path, *, errors: str = "raise", name: str | None = None,
                      chunksize: int = DEFAULT_CHUNK_ROWS) -> xr.Dataset:
    """Read the libCacheSim CloudPhysics CSV (``version,time,op,size,lbn``).

    ``time`` is whole seconds, ``op`` a SCSI opcode in hex (28/88/a8 reads, 2a/8a/aa writes), ``size``
    bytes, ``lbn`` the first 512-byte sector: ``offset = lbn * 512``. A header line is expected (and
    detected); malformed lines raise :class:`TraceFormatError` or are skipped as in :func:`read_msr`.
    """
    return _read_chunked(path, columns=CLOUDPHYSICS_COLUMNS, dtype={"op": "category"},
                         header_probe=lambda line: line.lower().startswith("version"), parse=_parse_cloudphysics,
                         ticks_per_s=1, source="cloudphysics", name=name, errors=errors, chunksize=chunksize)


def _finish(path: Path, ticks, offs, sizes, writes, ticks_per_s: int, *, name, source, sha256,
            n_skipped) -> xr.Dataset:
    t = np.concatenate(ticks) if ticks else np.zeros(0, np.int64)
    if t.size == 0:
        raise TraceFormatError(f"{path}: no valid requests"
                               + (f" ({n_skipped} malformed lines skipped)" if n_skipped else ""))
    time_s = (t - t[0]).astype(np.float64) / ticks_per_s
    return make_dataset(time_s, np.concatenate(offs), np.concatenate(sizes), np.concatenate(writes),
                        name=name or _default_name(path), source=source, sha256=sha256,
                        n_skipped=int(n_skipped), path=str(path))
