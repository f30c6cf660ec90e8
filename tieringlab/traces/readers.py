"""Readers for real block-IO traces: MSR Cambridge (SNIA IOTTA set 388) and the CloudPhysics CSV.

Both return the one trace schema every other module reads (DESIGN.md, "Data flow"): an
:class:`xarray.Dataset` with dimension ``request`` and

- ``time``      float64, seconds since the first request of the file (file order),
- ``offset``    int64, byte offset of the first byte touched,
- ``size``      int64, bytes (> 0),
- ``is_write``  bool,

and attrs ``name``, ``source`` (``"msr"``, ``"cloudphysics"`` or ``"twin"``), ``sha256`` (of the file
as stored, compressed or not), ``n_skipped`` (lines dropped under ``errors="skip"``), ``n_time_clamped``
(requests whose small time inversion was set to the latest earlier time).

Parsing is pandas' C tokenizer, block by block (``chunksize`` lines at a time, cut at newlines found by
numpy), so a file larger than memory streams through; validation is vectorized per block. A block whose
numeric columns are not clean int64 (a missing field, junk, a decimal, a number beyond int64) is read
again with those columns as text and parsed exactly (:func:`_numeric`), so no value is ever rounded
through a float64. A malformed line raises :class:`TraceFormatError` naming the file, the 1-based line
number (the header, if any, is line 1) and the field; the rules are in :func:`read_msr`'s docstring.
Gzip input is detected by its magic bytes; a truncated gzip stream is an error. Lines are bounded
(:data:`MAX_LINE_BYTES`) and so are blocks (:data:`MAX_BLOCK_BYTES`): memory does not depend on what
the file holds, a file without newlines or a gzip bomb included. Any input gives a
correct trace or a :class:`TraceFormatError` (tests/test_hostile_inputs.py checks it on random files).
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import warnings
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from tieringlab.data import portable_path

__all__ = ["TraceFormatError", "read_msr", "read_cloudphysics", "make_dataset", "check_trace", "TRACE_VARIABLES",
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
DEFAULT_CHUNK_ROWS = 1 << 18  # lines per block (~16 MB of MSR text): low memory, same speed
#: The longest line a reader accepts (bytes, without the newline). The longest line of valid fields is a few
#: hundred bytes: an MSR line with a 255-byte host name (the DNS limit) and six 20-character integers is 380
#: bytes with its commas and a CR; 1 KiB leaves room for blanks and leading zeros. A longer line is an error
#: raised as soon as it is seen (under both ``errors`` modes): the reader never holds more of a line than this,
#: so a file with no newline (a binary file, a gzip bomb of digits) costs no more memory than a good one.
#: Documented choice.
MAX_LINE_BYTES = 1 << 10
#: A block of lines is also cut after this many bytes (at a line end), whatever ``chunksize`` says: a block
#: holds at most ``MAX_BLOCK_BYTES`` plus one read of 16 MiB, so memory does not grow with the length of the
#: lines either. Real traces never reach it (2^18 MSR lines are ~16 MB). Documented choice.
MAX_BLOCK_BYTES = 1 << 25
#: The address limit: a request must end within 2^53 bytes (8 PiB, far beyond any volume; below it every
#: offset is exact in a float64 and ``offset + size`` never overflows int64). Documented choice.
MAX_ADDRESS_BYTES = 1 << 53
#: Default largest request (bytes): 1 GiB, far above real block IOs (the MSR and CloudPhysics traces' largest are
#: a few MB) and small enough that splitting one into 4 KB pages stays cheap. Documented choice; a reader
#: argument (``max_request_bytes``) raises it.
MAX_REQUEST_BYTES = 1 << 30
#: Default tolerance for time going back (s): real MSR files have small timestamp inversions; one second is
#: far above them and far below a corrupt or concatenated file's jump. Documented choice; a reader argument.
MAX_TIME_INVERSION_S = 1.0


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
        """Hash whatever the parser did not read and return the digest."""
        while block := self._fh.read(1 << 20):
            self.sha256.update(block)
        return self.sha256.hexdigest()


def _open_text(path: Path):
    """(binary stream for the parser, hashing reader, raw file). Gzip is detected by magic bytes, not the suffix."""
    raw = open(path, "rb")  # closed by the caller
    hashing = _HashingReader(raw)
    head = raw.read(2)
    raw.seek(0)
    buffered = io.BufferedReader(hashing, buffer_size=1 << 20)
    if head == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=buffered, mode="rb"), hashing, raw
    if head == ZSTD_MAGIC[:2] and raw.read(4) == ZSTD_MAGIC:
        raw.seek(0)
        return _zstd_stream(path, buffered, raw), hashing, raw
    raw.seek(0)
    return buffered, hashing, raw


#: The first bytes of a zstd frame (RFC 8878, Sec. 3.1.1): libCacheSim's traces are often ``.zst``.
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def _zstd_stream(path: Path, buffered, raw):
    """A decompressing stream over a zstd file, when the optional ``zstandard`` module is installed (it is not
    in requirements.lock: a documented choice, to add no dependency for one compression format)."""
    try:
        import zstandard  # noqa: PLC0415  (optional: only zstd files need it)
    except ImportError:
        raw.close()
        raise TraceFormatError(f"{path}: zstd-compressed (magic bytes 28 b5 2f fd); reading it needs the optional "
                               f"'zstandard' module, which is not installed: `pip install zstandard`, or "
                               f"decompress it first (`zstd -d {path.name}`)") from None
    return zstandard.ZstdDecompressor().stream_reader(buffered, read_across_frames=True)


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _is_real(x) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


def _check_errors_arg(errors: str) -> None:
    if errors not in ("raise", "skip"):
        raise ValueError(f"errors must be 'raise' or 'skip', got {errors!r}")


_GZIP_ERRORS = (EOFError, zlib.error, gzip.BadGzipFile)
try:  # a corrupt zstd stream, where the optional module is installed (see _zstd_stream)
    from zstandard import ZstdError as _ZstdError
    _GZIP_ERRORS = (*_GZIP_ERRORS, _ZstdError)
except ImportError:
    pass


class _LineTooLong(Exception):
    """Raised by :func:`_line_blocks`: line ``line`` (1-based, in the stream) is longer than the limit."""

    def __init__(self, line: int, at_least: int, limit: int):
        super().__init__(line, at_least, limit)
        self.line, self.at_least, self.limit = line, at_least, limit


def _line_blocks(stream, chunksize: int, read_bytes: int = 1 << 24, max_line: int = MAX_LINE_BYTES,
                 max_block: int = MAX_BLOCK_BYTES):
    """Yield ``(body, n_lines, None)``: ``body`` holds ``n_lines`` (``chunksize``, fewer at the end or when
    the block reaches ``max_block`` bytes) complete lines, each ending in ``\n``; then ``(b"", 0, tail)`` with
    the bytes after the file's last newline (``b""`` when the file ends with one). Newlines are found by
    numpy, each byte once (no loop over lines).

    A line of more than ``max_line`` bytes (its newline not counted) raises :class:`_LineTooLong` as soon as
    the read that shows it returns: the bytes held are at most ``max_block`` plus two reads, whatever the
    file holds (no newline at all included)."""
    pieces: list[bytes] = []   # bytes read since the last cut
    count = 0                  # newlines in ``pieces``
    held = 0                   # bytes in ``pieces``
    done = 0                   # newlines in the blocks yielded so far
    run = 0                    # bytes since the last newline (the current line so far)
    while block := stream.read(read_bytes):
        nl = np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == 0x0A)
        if nl.size:  # the lines this read ends: the first continues the current line
            lengths = np.diff(nl, prepend=-1 - run) - 1
            if lengths.max() > max_line:
                i = int(np.argmax(lengths > max_line))
                raise _LineTooLong(done + count + i + 1, int(lengths[i]), max_line)
            run = len(block) - int(nl[-1]) - 1
        else:
            run += len(block)
        if run > max_line:  # the line this read leaves open is already too long: no need to read its end
            raise _LineTooLong(done + count + nl.size + 1, run, max_line)
        while count + nl.size >= chunksize:  # a cut inside this block
            need = chunksize - count
            end = int(nl[need - 1]) + 1
            yield b"".join([*pieces, block[:end]]), chunksize, None
            done += chunksize
            block, nl, pieces, count, held = block[end:], nl[need:] - end, [], 0, 0
        pieces.append(block)
        count += nl.size
        held += len(block)
        if held >= max_block and count:  # a byte budget as well: cut at the last newline so far
            rest = b"".join(pieces)
            end = rest.rindex(b"\n") + 1
            yield rest[:end], count, None
            done += count
            pieces, count, held = [rest[end:]], 0, len(rest) - end
    rest = b"".join(pieces)
    if count:
        end = rest.rindex(b"\n") + 1
        yield rest[:end], count, None
        rest = rest[end:]
    yield b"", 0, rest


def _blocks(path: Path, stream, chunksize: int):
    """``_line_blocks`` with gzip errors and over-long lines turned into :class:`TraceFormatError`."""
    gen = _line_blocks(stream, chunksize)
    while True:
        try:
            item = next(gen)
        except StopIteration:
            return
        except _GZIP_ERRORS as exc:
            raise TraceFormatError(f"{path}: corrupt or truncated compressed (gzip/zstd) stream ({exc}); "
                                   f"refusing to return a short trace") from None
        except _LineTooLong as exc:
            raise TraceFormatError(
                f"{path}: line {exc.line}: longer than {exc.limit} bytes (at least {exc.at_least}); the longest "
                f"line of a valid trace is a few hundred bytes (MAX_LINE_BYTES): not a text trace of this "
                f"format (a binary file, or a file without newlines?)") from None
        yield item


def _bad_line_numbers(caught) -> list[int]:
    """1-based line numbers (within the parsed block) from pandas' "Skipping line 17: expected 7 fields"."""
    out = []
    for w in caught:
        if issubclass(w.category, pd.errors.ParserWarning):
            for part in str(w.message).split("\n"):
                part = part.strip()
                if part.startswith("Skipping line"):
                    out.append(int(part.split()[2].rstrip(":")))
    return out


def _parse_block(path: Path, body: bytes, first_line: int, *, names, dtype, errors: str, extra: bool = False):
    """Parse complete lines ``body`` (the first is line ``first_line`` of the file) with pandas' C parser.

    Returns ``(chunk, n_bad)``: a DataFrame with a ``_line`` column (1-based file line of each row);
    ``n_bad`` lines with a wrong number of fields were dropped (``errors="skip"``). Quotes are ordinary
    characters and only ``\n`` ends a line, so that every physical line is one row (a blank line is a
    malformed row, not a gap).

    pandas takes the first line's number of fields as the width: a later line with more fields is a bad
    line, but a *first* line with more is silently cut to the format's fields (``index_col=False``) with
    a warning. Then ``chunk`` is ``None`` and the caller parses again with ``extra=True``: one more column,
    ``_extra``, holds a field beyond the format's (missing on good rows).
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", pd.errors.ParserWarning)
        try:
            chunk = pd.read_csv(
                io.BytesIO(body), header=None, names=[*names, "_extra"] if extra else list(names), dtype=dtype,
                engine="c", index_col=False,
                skip_blank_lines=False, quoting=csv.QUOTE_NONE, lineterminator="\n", encoding="utf-8",
                on_bad_lines="error" if errors == "raise" else "warn", na_filter=True, low_memory=False,
            )
        except pd.errors.ParserError as exc:
            # "Error tokenizing data. C error: Expected 8 fields in line 5, saw 9" (8: the format's + _extra)
            msg = str(exc)
            where = "a line"
            if " in line " in msg:
                where = f"line {first_line - 1 + int(msg.split(' in line ')[1].split(',')[0])}"
            raise TraceFormatError(f"{path}: {where}: wrong number of fields (expected {len(names)}: "
                                   f"{', '.join(names)})") from None
        except UnicodeDecodeError:
            try:
                body.decode("utf-8")
                pos = 0
            except UnicodeDecodeError as exc:
                pos = exc.start
            line = first_line + body.count(b"\n", 0, pos)
            raise TraceFormatError(f"{path}: line {line}: not UTF-8 text (byte {body[pos:pos + 1]!r}); "
                                   f"not a text CSV trace") from None
    if not extra and any("Length of header or names does not match" in str(w.message) for w in caught):
        return None, 0
    bad = np.asarray(sorted(first_line - 1 + b for b in _bad_line_numbers(caught)), dtype=np.int64)
    n = len(chunk)
    # rows are consecutive lines except the ones pandas skipped: row i is the i-th line not in ``bad``
    all_lines = first_line + np.arange(n + bad.size, dtype=np.int64)
    lines = np.setdiff1d(all_lines, bad, assume_unique=True) if bad.size else all_lines
    chunk["_line"] = lines[:n]
    return chunk, int(bad.size)


def _fail_or_mask(path: Path, bad: np.ndarray, lines: np.ndarray, field: str, why: str, errors: str,
                  keep: np.ndarray) -> None:
    """Raise for the first bad row (errors="raise") or drop the bad rows from ``keep`` (errors="skip")."""
    bad = np.asarray(bad, dtype=bool) & keep  # a row already dropped is not reported twice
    if not bad.any():
        return
    if errors == "raise":
        line = int(lines[np.argmax(bad)])
        raise TraceFormatError(f"{path}: line {line}: " + (f"field {field!r}: " if field else "") + why)
    keep &= ~bad


_INT64_MAX_DIGITS = str(np.iinfo(np.int64).max)  # "9223372036854775807"
_INT_LITERAL = r"^[ \t]*([+-]?)0*([0-9]+)[ \t]*$"
#: Integers a float64 holds exactly (a field written as ``4096.0`` or ``1e3`` is accepted up to here).
_FLOAT_EXACT = 2 ** 53


def _numeric(col: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(int64 values, not-an-integer mask, out-of-range mask) of a column of integers, exactly.

    The fast path is pandas' own int64 column. Otherwise (the block held a missing field, a decimal, junk
    or a number beyond int64) the column was read as text and each entry is parsed here: an integer
    literal (ASCII digits, optional sign and surrounding blanks) exactly when it fits int64 (out of range
    otherwise); any other number (``4096.0``, ``1e3``) only when it is a whole number of at most 2^53 in
    magnitude (a float64 is exact there; out of range beyond it).
    """
    n = len(col)
    if pd.api.types.is_integer_dtype(col.dtype) and col.dtype.kind == "i" and not col.hasnans:
        return col.to_numpy(np.int64), np.zeros(n, bool), np.zeros(n, bool)
    missing = col.isna().to_numpy()
    text = col.astype(object).where(~missing, "").astype(str)
    parts = text.str.extract(_INT_LITERAL)
    is_int = parts[1].notna().to_numpy()
    digits = parts[1].fillna("").to_numpy(dtype=object)
    ndig = parts[1].str.len().fillna(0).to_numpy(np.int64)
    neg = (parts[0].fillna("") == "-").to_numpy()
    fits = is_int & ((ndig < 19) | ((ndig == 19) & ~neg & (digits.astype(str) <= _INT64_MAX_DIGITS)))
    out = np.zeros(n, np.int64)
    if fits.any():
        out[fits] = pd.to_numeric(pd.Series(digits[fits]), errors="raise").to_numpy(np.int64)
        out[fits & neg] *= -1
    big = is_int & ~fits
    other = ~is_int & ~missing
    bad = missing.copy()
    if other.any():
        num = pd.to_numeric(text[other], errors="coerce").to_numpy(np.float64, na_value=np.nan)
        finite_whole = np.isfinite(num) & (num == np.round(num))
        exact = finite_whole & (np.abs(num) <= _FLOAT_EXACT)
        idx = np.flatnonzero(other)
        out[idx[exact]] = num[exact].astype(np.int64)
        bad[idx[~finite_whole]] = True
        big[idx[finite_whole & ~exact]] = True
    return out, bad, big


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


#: The variables every trace consumer reads (``time`` is checked whenever a trace has it).
TRACE_VARIABLES = ("time", "offset", "size", "is_write")


def check_trace(ds, who: str = "trace", *, needs=TRACE_VARIABLES) -> int:
    """Check that ``ds`` is a trace in the schema above and return its number of requests; ``who`` (the
    policy or function that reads it) starts every message. The one check every trace policy runs
    (:func:`tieringlab.policies.contract.check_trace`), so that they agree on what they refuse:

    - ``ds`` is an :class:`xarray.Dataset` holding the variables ``needs`` over the one dimension
      ``request`` (``TypeError`` / ``ValueError``);
    - **it has at least one request**: an empty trace is a ``ValueError`` naming the trace (documented
      choice: a hit ratio or a cost of no requests is undefined, and a 0.0 or NaN would pass into a
      table as a number; LRU, ARC, CAR, vFRM, G1/G2-vFRM and :func:`tieringlab.traces.stats.lru_hit_ratio`
      all refuse it);
    - and, when the values are concrete (:func:`tieringlab.arrays.is_concrete`; under ``jax.jit`` the
      caller guarantees them): ``time`` (when present) is finite and non-decreasing; ``is_write`` is
      boolean (or 0/1); ``offset`` and
      ``size`` are whole numbers with ``offset >= 0``, ``size >= 1`` and ``offset + size <=``
      :data:`MAX_ADDRESS_BYTES` (the readers' limit; no int64 overflow anywhere after). Each error names
      the variable and the first offending request (0-based index).

    A valid trace is not changed (nothing is converted or copied).
    """
    from tieringlab.arrays import is_concrete  # noqa: PLC0415  (jax, loaded with the package anyway)

    if not isinstance(ds, xr.Dataset):
        raise TypeError(f"{who}: the trace must be an xarray.Dataset with dimension 'request' (see "
                        f"tieringlab.traces.make_dataset); got {type(ds).__name__}")
    name = ds.attrs.get("name", "")
    label = f"{who}: trace {name!r}" if name else f"{who}: trace"
    missing = [v for v in needs if v not in ds]
    if missing:
        raise ValueError(f"{label} is missing variable(s) {missing}; needs {', '.join(needs)} over dimension "
                         f"'request'")
    present = [v for v in TRACE_VARIABLES if v in ds]
    for v in present:
        if ds[v].dims != ("request",):
            raise ValueError(f"{label}: variable {v!r} must have dims ('request',); got {ds[v].dims}")
    n = int(ds.sizes.get("request", 0))
    if n == 0:
        raise ValueError(f"{label} has no requests: the hit ratio or cost of an empty trace is undefined (LRU, "
                         f"ARC, CAR, vFRM and stats.lru_hit_ratio all refuse it)")
    data = {v: ds[v].data for v in present}
    if not is_concrete(*data.values()):
        return n
    if "time" in data:
        t = np.asarray(data["time"])
        if not np.issubdtype(t.dtype, np.number) or np.issubdtype(t.dtype, np.complexfloating):
            raise ValueError(f"{label}: variable 'time' must hold seconds (real numbers); got dtype {t.dtype}")
        bad = ~np.isfinite(t)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"{label}: variable 'time' must be finite seconds; request {i} is {t[i].item()!r}")
        back = t[1:] < t[:-1]
        if back.any():
            i = int(np.argmax(back)) + 1
            raise ValueError(f"{label}: variable 'time' must be non-decreasing (requests in time order); request "
                             f"{i} ({t[i].item()!r} s) comes before request {i - 1} ({t[i - 1].item()!r} s)")
    if "is_write" in data:
        w = np.asarray(data["is_write"])
        if w.dtype != bool and not (np.issubdtype(w.dtype, np.integer) and np.all((w == 0) | (w == 1))):
            raise ValueError(f"{label}: variable 'is_write' must be booleans (or 0/1); got dtype {w.dtype}"
                             + ("" if not np.issubdtype(w.dtype, np.integer) else
                                f", request {int(np.argmax((w != 0) & (w != 1)))} is "
                                f"{w[np.argmax((w != 0) & (w != 1))].item()!r}"))
    ints = {}
    for v in ("offset", "size"):
        if v not in data:
            continue
        a = np.asarray(data[v])
        if np.issubdtype(a.dtype, np.floating):
            bad = ~(np.isfinite(a) & (a == np.floor(a)) & (np.abs(a) <= MAX_ADDRESS_BYTES))
        elif np.issubdtype(a.dtype, np.integer) and a.dtype != bool:
            bad = None
        else:
            raise ValueError(f"{label}: variable {v!r} must hold whole numbers of bytes; got dtype {a.dtype}")
        if bad is not None and bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"{label}: variable {v!r} must hold whole numbers of bytes; request {i} is "
                             f"{a[i].item()!r}")
        ints[v] = a
    if "offset" in ints and (ints["offset"] < 0).any():
        i = int(np.argmax(ints["offset"] < 0))
        raise ValueError(f"{label}: variable 'offset' must be >= 0 bytes; request {i} is {ints['offset'][i].item()!r}")
    if "size" in ints and (ints["size"] < 1).any():
        i = int(np.argmax(ints["size"] < 1))
        raise ValueError(f"{label}: variable 'size' must be > 0 bytes; request {i} is {ints['size'][i].item()!r}")
    if len(ints) == 2 and int(ints["offset"].max()) + int(ints["size"].max()) > MAX_ADDRESS_BYTES:
        off, sz = ints["offset"], ints["size"]
        # offset + size <= limit, computed without overflow (both are >= 0 here)
        over = (off > MAX_ADDRESS_BYTES) | (off > MAX_ADDRESS_BYTES - np.minimum(sz, MAX_ADDRESS_BYTES))
        if over.any():
            i = int(np.argmax(over))
            raise ValueError(f"{label}: request {i} (offset {off[i].item()!r}, size {sz[i].item()!r}) ends beyond "
                             f"the address limit of 2^53 bytes (8 PiB, MAX_ADDRESS_BYTES)")
    return n


def _default_name(path: Path) -> str:
    name = path.name
    for suffix in (".gz", ".zst", ".csv", ".txt"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name


def _category_codes(col: pd.Series, table: dict[str, int]) -> np.ndarray:
    """Map a categorical column through ``table`` (categories stripped and lower-cased); -1 if unknown or missing."""
    cats = [str(c).strip().lower() for c in col.cat.categories]
    lut = np.array([table.get(c, -1) for c in cats] + [-1], dtype=np.int8)
    return lut[col.cat.codes.to_numpy()]  # code -1 (missing) maps to the trailing -1


def _header_names(path: Path, line: str, columns: tuple[str, ...]) -> tuple[str, ...] | None:
    """The column order a header line gives, or ``None`` when ``line`` is not a header.

    ``line`` is a header when it starts with the format's first column name or its first field is one of
    the format's column names (case and blanks ignored). Its fields must then be exactly the format's
    columns, in any order: the columns are read by name, so a reordered header is read right; a missing,
    unknown or repeated column is a :class:`TraceFormatError` naming line 1 and the expected columns."""
    canon = {c.lower(): c for c in columns}
    fields = [f.strip().lower() for f in line.split(",")]
    if not (line.strip().lower().startswith(columns[0].lower()) or fields[0] in canon):
        return None
    problems = []
    if "\r" in line.strip():
        problems.append("a carriage return inside the line (lines end with \\n or \\r\\n, never \\r alone: "
                        "a file with old Mac line ends?)")
        line = line.split("\r")[0]
        fields = [f.strip().lower() for f in line.split(",")]
    unknown = [f for f in fields if f not in canon]
    if unknown:
        problems.append(f"unknown column(s) {', '.join(map(repr, unknown))}")
    missing = [c for c in columns if c.lower() not in fields]
    if missing:
        problems.append(f"missing column(s) {', '.join(missing)}")
    repeated = sorted({f for f in fields if f in canon and fields.count(f) > 1})
    if repeated:
        problems.append(f"repeated column(s) {', '.join(canon[f] for f in repeated)}")
    if problems:
        raise TraceFormatError(f"{path}: line 1: header {line.strip()[:200]!r}: {'; '.join(problems)}; expected "
                               f"the {len(columns)} columns {','.join(columns)} (in any order)")
    return tuple(canon[f] for f in fields)


def _check_file(path) -> Path:
    """``path`` as a Path when it is a non-empty regular file; otherwise the error that says what it is."""
    path = Path(path)
    if not path.is_file():
        if path.is_dir():
            raise IsADirectoryError(f"{path}: is a directory, not a trace file")
        if path.exists():
            raise TraceFormatError(f"{path}: not a regular file (a FIFO, socket or device); a trace reader reads a "
                                   f"file on disk (it hashes the whole file)")
        raise FileNotFoundError(f"{path}: no such trace file")
    if path.stat().st_size == 0:
        raise TraceFormatError(f"{path}: empty file (no requests)")
    return path


def _read_chunked(path: str | Path, *, columns: tuple[str, ...], dtype: dict, numeric: tuple[str, ...],
                  parse, ticks_per_s: int, time_field: str, source: str,
                  name: str | None, errors: str, chunksize: int, max_request_bytes: int,
                  max_time_inversion_s: float, header: str = "detect", attrs: dict | None = None) -> xr.Dataset:
    """The readers' shared loop: blocks of lines, the C parser, the field-count checks, per-format ``parse``,
    the end-of-file check, then the file-level time rule (:func:`_finish`). A header line, if the file has
    one, gives the order of ``columns`` (:func:`_header_names`).

    ``parse(chunk, fail, max_request_bytes)`` returns ``(ticks, offset_bytes, size_bytes, is_write)`` arrays
    for the chunk and reports each bad field with ``fail(bad_mask, field, why)`` (raises, or drops the line
    with ``errors="skip"``); it may return a fifth array, a mask of the lines to keep (a volume selected
    from a file of several: the others are left out, neither errors nor skipped lines).

    ``header``: ``"detect"`` (a first line naming the columns is a header, :func:`_header_names`),
    ``"skip"`` (the first line is a header, whatever it says) or ``"none"`` (every line is data): the last two
    for a CSV of user-given columns.
    """
    _check_errors_arg(errors)
    if not (_is_int(chunksize) and chunksize >= 1):
        raise ValueError(f"chunksize must be a positive integer number of lines, got {chunksize!r}")
    if not (_is_int(max_request_bytes) and max_request_bytes >= 1):
        raise ValueError(f"max_request_bytes must be a positive integer number of bytes, got {max_request_bytes!r}")
    if not (_is_real(max_time_inversion_s) and np.isfinite(max_time_inversion_s) and max_time_inversion_s >= 0):
        raise ValueError(f"max_time_inversion_s must be a number of seconds >= 0, got {max_time_inversion_s!r}")
    if name is not None and not isinstance(name, str):
        raise ValueError(f"name must be a string (the trace's name) or None, got {name!r}")
    path = _check_file(path)
    parts: tuple[list, ...] = ([], [], [], [], [])
    names = columns        # the file's column order: the header's, else the format's
    n_skipped = 0
    line0 = 1              # file line number of the next block's first line
    header_done = False
    stream, hashing, raw = _open_text(path)
    try:
        for body, n_lines, tail in _blocks(path, stream, int(chunksize)):
            if tail is not None:  # the end of the file: bytes after the last newline
                if tail.startswith(b"\xef\xbb\xbf") and line0 == 1:
                    tail = tail[3:]
                if not tail:
                    break
                if line0 == 1 and header != "none" and (
                        header == "skip" or _header_names(path, tail.decode("utf-8", "replace"), columns)):
                    break  # a header line alone, without a newline: no requests (reported below)
                if errors == "raise":
                    raise TraceFormatError(
                        f"{path}: line {line0}: the file does not end with a newline, so its last line may have "
                        f"been cut short (a truncated download or copy?); if that line is complete, end the file "
                        f"with a newline")
                n_skipped += 1
                break
            if line0 == 1:
                if body.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte-order mark before the first line
                    body = body[3:]
                cut = body.index(b"\n")
                named = (None if header_done or header == "none" else columns if header == "skip"
                         else _header_names(path, body[:cut].decode("utf-8", "replace"), columns))
                if named:
                    names = named
                    body = body[cut + 1:]
                    line0 += 1
                    n_lines -= 1
                header_done = True
            if n_lines == 0:
                continue
            if b"\r" in body:
                body = body.replace(b"\r\n", b"\n")  # Windows line ends (a lone CR stays, a bad field)
            chunk, n_bad = _parse_block(path, body, line0, names=names, dtype=dtype, errors=errors)
            extra = chunk is None
            dirty = list(numeric) if extra else [c for c in numeric
                                                 if not (chunk[c].dtype.kind == "i" and not chunk[c].hasnans)]
            if dirty:  # exact integers: reread this block's numeric columns as text (see _numeric)
                chunk, n_bad = _parse_block(path, body, line0, names=names, errors=errors, extra=extra,
                                            dtype={**dtype, **{c: str for c in dirty}})
            line0 += n_lines
            n_skipped += n_bad
            lines = chunk["_line"].to_numpy()
            keep = np.ones(len(chunk), bool)

            def fail(bad, field, why, lines=lines, keep=keep):
                _fail_or_mask(path, bad, lines, field, why, errors, keep)

            if extra:
                fail(chunk["_extra"].notna().to_numpy(), None,
                     f"wrong number of fields: too many (expected {len(names)}: {', '.join(names)})")
            # A short line leaves trailing fields missing: check the last field first.
            last = names[-1]
            fail(chunk[last].isna().to_numpy(), last,
                 f"missing (a line needs {len(names)} fields: {','.join(names)})")
            fields = parse(chunk, fail, int(max_request_bytes))
            n_skipped += int((~keep).sum())
            if len(fields) == 5:  # a selection (a volume of a multi-volume file): not skipped lines
                *fields, select = fields
                keep &= select
            for acc, arr in zip(parts, (*fields, lines)):
                acc.append(arr[keep])
        digest = hashing.drain()
    finally:
        stream.close()
        raw.close()
    return _finish(path, *parts, ticks_per_s, time_field=time_field, name=name, source=source, sha256=digest,
                   n_skipped=n_skipped, max_time_inversion_s=float(max_time_inversion_s), **(attrs or {}))


def _check_extent(fail, off: np.ndarray, sz: np.ndarray, max_request_bytes: int, size_field: str,
                  offset_field: str) -> None:
    """The limits every request obeys: ``size <= max_request_bytes`` and ``offset + size <= MAX_ADDRESS_BYTES``."""
    fail(sz > max_request_bytes, size_field,
         f"larger than the limit of {max_request_bytes} bytes per request (max_request_bytes; the default, "
         f"{MAX_REQUEST_BYTES} bytes = 1 GiB, is far above any real block IO; pass a larger max_request_bytes "
         f"to read it)")
    over = off > MAX_ADDRESS_BYTES - np.minimum(np.maximum(sz, 0), MAX_ADDRESS_BYTES)  # off + sz, without overflow
    fail(over, offset_field, "out of range: the request (offset + size) ends beyond the address limit of 2^53 "
                             "bytes (8 PiB)")


@dataclass(frozen=True)
class BlockFields:
    """One block-trace CSV layout's four request fields and how each is checked (one parser for every layout).

    ``time_what``/``time_range`` complete "expected ..." and "out of range: ..."; ``offset_unit`` and
    ``size_unit`` are 1 (bytes) or :data:`SECTOR_BYTES` (512-byte sectors); ``op_codes`` maps the operation
    field's (stripped, lower-case) values to 0 (read) or 1 (write); ``order`` is the order in which the
    offset and size fields are checked (the first failing check names the error)."""

    time: str
    time_what: str
    time_range: str
    offset: str
    offset_unit: int
    size: str
    size_unit: int
    op: str
    op_codes: Mapping[str, int]
    op_what: str
    order: tuple[str, str] = ("offset", "size")


def _address_field(chunk, fail, f: BlockFields) -> np.ndarray:
    v, bad, big = _numeric(chunk[f.offset])
    if f.offset_unit == 1:
        fail(bad | (v < 0), f.offset, "expected a non-negative integer byte offset")
        fail(big | (v > MAX_ADDRESS_BYTES), f.offset, "out of range: offsets are at most 2^53 bytes (8 PiB)")
        return v
    fail(bad | (v < 0), f.offset, "expected a non-negative integer sector number")
    fail(big | (v > MAX_ADDRESS_BYTES // f.offset_unit), f.offset,
         f"out of range: {f.offset} x {f.offset_unit} bytes must stay within the address limit of 2^53 bytes (8 PiB)")
    return np.where(v > MAX_ADDRESS_BYTES // f.offset_unit, 0, v) * f.offset_unit  # no int64 wrap-around


def _size_field(chunk, fail, f: BlockFields, max_request_bytes: int) -> np.ndarray:
    v, bad, big = _numeric(chunk[f.size])
    too_big = f"out of range: larger than the limit of {max_request_bytes} bytes per request"
    if f.size_unit == 1:
        fail(bad | (v <= 0), f.size, "expected a positive integer size in bytes")
        fail(big, f.size, too_big)
        return v
    fail(bad | (v <= 0), f.size, f"expected a positive integer number of {f.size_unit}-byte sectors")
    fail(big | (v > max_request_bytes // f.size_unit), f.size, too_big)
    return np.where(big, 1, v) * f.size_unit


def block_parser(f: BlockFields):
    """The ``parse(chunk, fail, max_request_bytes) -> (time ticks, offset, size, is_write)`` of a layout."""

    def parse(chunk: pd.DataFrame, fail, max_request_bytes: int) -> tuple[np.ndarray, ...]:
        t, bad, big = _numeric(chunk[f.time])
        fail(bad, f.time, f"expected {f.time_what}")
        fail(big | (t < 0), f.time, f"out of range: {f.time_range}")
        got = {}
        for which in f.order:
            got[which] = (_address_field(chunk, fail, f) if which == "offset"
                          else _size_field(chunk, fail, f, max_request_bytes))
        _check_extent(fail, got["offset"], got["size"], max_request_bytes, f.size, f.offset)
        code = _category_codes(chunk[f.op], dict(f.op_codes))
        fail(code < 0, f.op, f"expected {f.op_what}")
        return t, got["offset"], got["size"], code == 1

    return parse


MSR_FIELDS = BlockFields(
    time="Timestamp", time_what="an integer Windows FILETIME (100 ns ticks)",
    time_range="a Windows FILETIME is an integer in [0, 2^63 - 1]", offset="Offset", offset_unit=1,
    size="Size", size_unit=1, op="Type", op_codes={"read": 0, "write": 1}, op_what="'Read' or 'Write'")
CLOUDPHYSICS_FIELDS = BlockFields(
    time="time", time_what="an integer number of seconds",
    time_range="time is a number of seconds in [0, 2^63 - 1]", offset="lbn", offset_unit=SECTOR_BYTES,
    size="size", size_unit=1, op="op", op_codes={**{o: 0 for o in READ_OPS}, **{o: 1 for o in WRITE_OPS}},
    op_what=f"a SCSI read ({'/'.join(READ_OPS)}) or write ({'/'.join(WRITE_OPS)}) opcode", order=("size", "offset"))
_parse_msr = block_parser(MSR_FIELDS)
_parse_cloudphysics = block_parser(CLOUDPHYSICS_FIELDS)


_RULES_DOC = """
    Every reader enforces the same rules (a :class:`TraceFormatError` names the file, the 1-based line,
    the header being line 1, and the field):

    - every line has exactly the format's fields (a line with more is an error, never a shifted row);
    - integers are exact int64 (a value beyond is out of range, never wrapped or rounded);
    - ``size`` is in ``[1, max_request_bytes]`` (default :data:`MAX_REQUEST_BYTES`, 1 GiB) and a request
      ends within :data:`MAX_ADDRESS_BYTES` (2^53 bytes, 8 PiB);
    - timestamps are >= 0 and **time does not go back** by more than ``max_time_inversion_s``
      (default :data:`MAX_TIME_INVERSION_S`, 1 s) from the latest earlier timestamp. Real MSR files
      have small inversions; such a request gets the latest time so far (``time`` is then
      non-decreasing, which every consumer assumes; ``attrs["n_time_clamped"]`` counts them). A larger
      step back (a negative timestamp, two files concatenated) is an error under both ``errors`` modes;
    - the file ends with a newline (otherwise the last line may have been cut short: an error, or that
      line is skipped with ``errors="skip"``); a UTF-8 byte-order mark before the first line is ignored;
    - no line is longer than :data:`MAX_LINE_BYTES` (1 KiB; valid lines are a few hundred bytes at most):
      a longer one is an error under both ``errors`` modes, raised as soon as it is read, so memory stays
      bounded on a file without newlines;
    - a header line (first line starting with the format's first column name, or whose first field is
      one of its column names) names the columns: they are read by name, in any order; a header with a
      missing, unknown or repeated column is an error naming line 1 and the expected columns.
"""


def read_msr(path: str | Path, *, errors: str = "raise", name: str | None = None,
             chunksize: int = DEFAULT_CHUNK_ROWS, max_request_bytes: int | None = None,
             max_time_inversion_s: float | None = None) -> xr.Dataset:
    """Read an MSR Cambridge trace (``<host>_<disk>.csv`` or ``.csv.gz``; SNIA IOTTA set 388).

    Columns ``Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`` (in this order without a
    header line; a header may give another order, see the rules below); ``Timestamp`` is a Windows
    FILETIME (100 ns ticks), ``Type`` is ``Read`` or ``Write``, ``Offset`` and ``Size`` are bytes.
    ``time`` is ``(Timestamp - Timestamp[0]) / 1e7`` seconds (first request in file order).

    Malformed lines (wrong number of fields, non-numeric Timestamp/Offset/Size, negative offset, size
    <= 0, a Type other than Read/Write) raise :class:`TraceFormatError` (file, line, field), or are
    dropped with ``errors="skip"`` (their count in ``attrs["n_skipped"]``).
    """
    return _read_chunked(path, columns=MSR_COLUMNS, dtype={"Hostname": "category", "Type": "category"},
                         numeric=("Timestamp", "Offset", "Size"),
                         parse=_parse_msr,
                         ticks_per_s=FILETIME_TICKS_PER_S, time_field="Timestamp", source="msr", name=name,
                         errors=errors, chunksize=chunksize,
                         max_request_bytes=MAX_REQUEST_BYTES if max_request_bytes is None else max_request_bytes,
                         max_time_inversion_s=(MAX_TIME_INVERSION_S if max_time_inversion_s is None
                                               else max_time_inversion_s))


def read_cloudphysics(path: str | Path, *, errors: str = "raise", name: str | None = None,
                      chunksize: int = DEFAULT_CHUNK_ROWS, max_request_bytes: int | None = None,
                      max_time_inversion_s: float | None = None) -> xr.Dataset:
    """Read the libCacheSim CloudPhysics CSV (``version,time,op,size,lbn``).

    ``time`` is whole seconds, ``op`` a SCSI opcode in hex (28/88/a8 reads, 2a/8a/aa writes), ``size``
    bytes, ``lbn`` the first 512-byte sector: ``offset = lbn * 512``. A header line is expected (and
    detected); its column names decide the order (``version,time,op,lbn,size`` is read by name, not as
    the canonical order); without one the canonical order is assumed. Malformed lines raise
    :class:`TraceFormatError` or are skipped as in :func:`read_msr`.
    """
    return _read_chunked(path, columns=CLOUDPHYSICS_COLUMNS, dtype={"op": "category"},
                         numeric=("time", "size", "lbn"),
                         parse=_parse_cloudphysics,
                         ticks_per_s=1, time_field="time", source="cloudphysics", name=name, errors=errors,
                         chunksize=chunksize,
                         max_request_bytes=MAX_REQUEST_BYTES if max_request_bytes is None else max_request_bytes,
                         max_time_inversion_s=(MAX_TIME_INVERSION_S if max_time_inversion_s is None
                                               else max_time_inversion_s))


read_msr.__doc__ += _RULES_DOC
read_cloudphysics.__doc__ += _RULES_DOC


def _finish(path: Path, ticks, offs, sizes, writes, lines, ticks_per_s: int, *, time_field: str, name, source,
            sha256, n_skipped, max_time_inversion_s: float, unit: str = "line", **attrs) -> xr.Dataset:
    """The file-level rules (at least one request; time goes back at most ``max_time_inversion_s``) and the
    Dataset. ``lines`` hold each request's 1-based ``unit`` (a text line, or a binary trace's record)."""
    t = np.concatenate(ticks) if ticks else np.zeros(0, np.int64)
    if t.size == 0:
        raise TraceFormatError(f"{path}: no valid requests"
                               + (f" ({n_skipped} malformed {unit}s skipped)" if n_skipped else ""))
    line = np.concatenate(lines)
    latest = np.maximum.accumulate(t)
    back = latest - t                       # >= 0; both in [0, 2^63 - 1]: no overflow
    tol = int(np.floor(max_time_inversion_s * ticks_per_s))
    if (back > tol).any():
        i = int(np.argmax(back > tol))
        j = int(np.argmax(t[: i + 1] == latest[i]))
        raise TraceFormatError(
            f"{path}: {unit} {int(line[i])}: field {time_field!r}: time goes back {back[i] / ticks_per_s:g} s from "
            f"{unit} {int(line[j])}'s; a trace may go back at most max_time_inversion_s = {max_time_inversion_s:g} s "
            f"(small inversions get the latest earlier time; a larger one means a corrupt, concatenated or "
            f"unsorted file)")
    time_s = (latest - latest[0]).astype(np.float64) / ticks_per_s
    return make_dataset(time_s, np.concatenate(offs), np.concatenate(sizes), np.concatenate(writes),
                        name=name or _default_name(path), source=source, sha256=sha256,
                        n_skipped=int(n_skipped), n_time_clamped=int((back > 0).sum()),
                        path=portable_path(path), **attrs)  # relative to the checkout: the same in every clone
