"""Readers for the community trace formats: libCacheSim's (oracleGeneral, lcs, vscsi, CSV with a column spec),
the Tencent CBS and Alibaba block CSVs, and :func:`read_trace`, one entry point over every format.

Every reader returns the trace schema of :mod:`tieringlab.traces.readers` (``time`` s from the first
request, ``offset``/``size`` bytes, ``is_write``) through the same validation as the MSR and CloudPhysics
readers: a malformed input raises :class:`~tieringlab.traces.readers.TraceFormatError` naming the file and
the 1-based line (text) or record (binary) and the field; ``errors="skip"`` drops bad lines/records
(counted in ``attrs["n_skipped"]``); the file-level time rule, the request and address limits and the
Dataset are the text readers' own (:func:`~tieringlab.traces.readers._finish`). Gzip and zstd input is
detected by its magic bytes (zstd needs the optional ``zstandard`` module).

**Object ids as addresses.** libCacheSim's formats name an object (``obj_id``: "the hash of the key in a
key-value cache or the logical block address in a block cache", libCacheSim ``lcs.h``), not a byte range.
A tieringlab trace is a block trace, so ``offset = obj_id * obj_id_bytes``: ``obj_id_bytes`` (default
:data:`OBJ_ID_BYTES` = 4096, one 4 KB page per id) says what one id step is in bytes (512 for ids that are
sector numbers, 1 for byte offsets). Documented choice: with the default and objects of at most 4 KB each id
is exactly one page of the 4 KB page caches (LRU, ARC, CAR, ...), so their miss ratios are libCacheSim's own
with ``ignore_obj_size`` (tests/test_trace_formats.py checks it). Ids beyond the address limit (a
key-value trace's hashed keys) are an error naming the record. vscsi's ``lbn`` is a 512-byte sector (the
CloudPhysics CSV is the same traces, read with ``offset = lbn * 512``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import xarray as xr

from tieringlab.traces.readers import (
    _GZIP_ERRORS,
    DEFAULT_CHUNK_ROWS,
    MAX_ADDRESS_BYTES,
    MAX_REQUEST_BYTES,
    MAX_TIME_INVERSION_S,
    READ_OPS,
    SECTOR_BYTES,
    WRITE_OPS,
    BlockFields,
    TraceFormatError,
    _category_codes,
    _check_errors_arg,
    _check_extent,
    _check_file,
    _finish,
    _is_int,
    _is_real,
    _numeric,
    _open_text,
    _read_chunked,
    block_parser,
    read_cloudphysics,
    read_msr,
)

__all__ = ["read_trace", "read_oracle_general", "read_lcs", "read_vscsi", "read_csv_trace", "read_tencent_cbs",
           "read_alibaba", "FORMATS", "detect_format", "OBJ_ID_BYTES"]

#: Bytes per object-id step (see the module docstring): one 4 KB page, the page caches' unit. Documented choice.
OBJ_ID_BYTES = 4096
#: Records read per block of a binary trace (memory per block: ~100 MB at most, for lcs v8's 100-byte records).
BINARY_BLOCK_RECORDS = 1 << 20

# ---------------------------------------------------------------------------------- binary layouts
# oracleGeneral (libCacheSim FAQ.md and traceReader/customizedReader/oracle/oracleGeneralBin.h): 24-byte
# little-endian records {uint32 clock_time (s); uint64 obj_id; uint32 obj_size (bytes); int64 next_access_vtime}.
_ORACLE = np.dtype([("time", "<u4"), ("obj_id", "<u8"), ("obj_size", "<u4"), ("next", "<i8")])
# lcs (libCacheSim traceReader/customizedReader/lcs.h): an 8192-byte header {uint64 start_magic; uint64 version;
# 8000-byte stat; 21 x uint64 unused; uint64 end_magic}, then packed records of the header's version:
# v1 = oracleGeneral's; v2 adds {uint32 op:8, tenant:24} after obj_size; v3 has an int64 obj_size, op/tenant
# and a uint32 ttl; v4..v8 are v3 followed by 1, 2, 4, 8, 16 uint32 features.
LCS_MAGIC = 0x123456789ABCDEF0
LCS_HEADER_BYTES = 8192
_V3 = [("time", "<u4"), ("obj_id", "<u8"), ("obj_size", "<i8"), ("op_tenant", "<u4"), ("ttl", "<u4"),
       ("next", "<i8")]
_LCS = {1: _ORACLE,
        2: np.dtype([("time", "<u4"), ("obj_id", "<u8"), ("obj_size", "<u4"), ("op_tenant", "<u4"), ("next", "<i8")]),
        3: np.dtype(_V3),
        **{v: np.dtype([*_V3, ("features", "<u4", (k,))]) for v, k in ((4, 1), (5, 2), (6, 4), (7, 8), (8, 16))}}
#: libCacheSim's request operations (``req_op_e``, the order of ``libcachesim.ReqOp``) that write.
LCS_WRITE_OPS = {3: "SET", 4: "ADD", 5: "CAS", 6: "REPLACE", 7: "APPEND", 8: "PREPEND", 10: "INCR", 11: "DECR",
                 13: "WRITE", 14: "UPDATE"}
#: ... and that read (NOP: a trace converted without an op field, read as v1's requests are).
LCS_READ_OPS = {0: "NOP", 1: "GET", 2: "GETS", 12: "READ"}
# vscsi (libCacheSim traceReader/customizedReader/vscsi.h, from CloudPhysics): v1 records of 32 bytes
# {uint32 sn, len, nSG; uint16 cmd, ver; uint64 lbn, ts}, v2 of 40 {uint16 cmd, ver; uint32 sn, len, nSG;
# uint64 lbn, ts, rt}; ts in microseconds, len in bytes, lbn a 512-byte sector, cmd a SCSI opcode; the
# version is ver >> 8 of the first two records (v2 tried first), as libCacheSim decides it.
_VSCSI = {1: np.dtype([("sn", "<u4"), ("len", "<u4"), ("nSG", "<u4"), ("cmd", "<u2"), ("ver", "<u2"),
                       ("lbn", "<u8"), ("ts", "<u8")]),
          2: np.dtype([("cmd", "<u2"), ("ver", "<u2"), ("sn", "<u4"), ("len", "<u4"), ("nSG", "<u4"),
                       ("lbn", "<u8"), ("ts", "<u8"), ("rt", "<u8")])}
_VSCSI_TEST = 2


def _check_common(errors, name, max_request_bytes, max_time_inversion_s, obj_id_bytes=OBJ_ID_BYTES):
    _check_errors_arg(errors)
    if name is not None and not isinstance(name, str):
        raise ValueError(f"name must be a string (the trace's name) or None, got {name!r}")
    if not (_is_int(max_request_bytes) and max_request_bytes >= 1):
        raise ValueError(f"max_request_bytes must be a positive integer number of bytes, got {max_request_bytes!r}")
    if not (_is_real(max_time_inversion_s) and np.isfinite(max_time_inversion_s) and max_time_inversion_s >= 0):
        raise ValueError(f"max_time_inversion_s must be a number of seconds >= 0, got {max_time_inversion_s!r}")
    if not (_is_int(obj_id_bytes) and 1 <= obj_id_bytes <= MAX_ADDRESS_BYTES):
        raise ValueError(f"obj_id_bytes must be a positive integer number of bytes per object id (4096: pages, "
                         f"512: sectors, 1: byte offsets), got {obj_id_bytes!r}")


def _read_exact(path: Path, stream, n: int) -> bytes:
    out = bytearray()
    try:
        while len(out) < n and (block := stream.read(n - len(out))):
            out += block
    except _GZIP_ERRORS as exc:
        raise TraceFormatError(f"{path}: corrupt or truncated compressed (gzip/zstd) stream ({exc}); refusing to "
                               f"return a short trace") from None
    return bytes(out)


def _binary(path, *, fmt: str, layout, convert, ticks_per_s: int, time_field: str, errors: str, name,
            max_request_bytes: int, max_time_inversion_s: float, source: str, header=None, attrs=None) -> xr.Dataset:
    """The binary readers' loop: ``header(path, stream) -> (layout, attrs, records_bytes)`` reads what precedes
    the records (or the first records, to tell a version: returned as ``records_bytes``); records are read
    :data:`BINARY_BLOCK_RECORDS` at a time and
    ``convert(rec, fail) -> (ticks, offset, size, is_write, keep)`` turns them into requests (``keep``: records
    that are requests at all). A file whose records do not fill it exactly is an error naming the record cut."""
    path = _check_file(path)
    parts: tuple[list, ...] = ([], [], [], [], [])
    n_skipped = n_not_requests = 0
    stream, hashing, raw = _open_text(path)
    attrs = dict(attrs or {})
    try:
        head = b""
        if header is not None:  # -> the record layout, attrs, and bytes read that are records already
            layout, more, head = header(path, stream)
            attrs.update(more)
        first = 1
        while True:
            body = head + _read_exact(path, stream, BINARY_BLOCK_RECORDS * layout.itemsize - len(head))
            head = b""
            if not body:
                break
            n, rest = divmod(len(body), layout.itemsize)
            rec = np.frombuffer(body, dtype=layout, count=n)
            numbers = first + np.arange(n, dtype=np.int64)
            keep = np.ones(n, bool)

            def fail(bad, field, why, numbers=numbers, keep=keep):
                bad = np.asarray(bad, dtype=bool) & keep
                if not bad.any():
                    return
                if errors == "raise":
                    raise TraceFormatError(f"{path}: record {int(numbers[np.argmax(bad)])}: field {field!r}: {why}")
                keep &= ~bad

            t, off, sz, w, request = convert(rec, fail, max_request_bytes)
            n_skipped += int((~keep & request).sum())
            n_not_requests += int((~request).sum())
            keep &= request
            for acc, arr in zip(parts, (t, off, sz, w, numbers)):
                acc.append(np.asarray(arr)[keep])
            first += n
            if rest:
                if errors == "raise":
                    raise TraceFormatError(
                        f"{path}: record {first}: truncated: the file ends {rest} bytes into a {layout.itemsize}-byte "
                        f"{fmt} record (a cut download or copy, or not a {fmt} trace?)")
                n_skipped += 1
                break
        digest = hashing.drain()
    finally:
        stream.close()
        raw.close()
    attrs.setdefault("format", fmt)
    return _finish(path, *parts, ticks_per_s, time_field=time_field, name=name, source=source, sha256=digest,
                   n_skipped=n_skipped, max_time_inversion_s=float(max_time_inversion_s), unit="record",
                   n_not_requests=n_not_requests, **attrs)


def _ids_to_offsets(fail, obj_id: np.ndarray, obj_id_bytes: int, field: str = "obj_id") -> np.ndarray:
    """``obj_id * obj_id_bytes`` as int64 bytes; ids whose address is beyond the limit fail (no wrap-around)."""
    limit = np.uint64(MAX_ADDRESS_BYTES // obj_id_bytes)
    big = obj_id.astype(np.uint64) > limit
    fail(big, field, f"out of range: obj_id x obj_id_bytes ({obj_id_bytes}) must stay within the address limit of "
                     f"2^53 bytes (8 PiB); a key-value trace's hashed keys are no block addresses (set obj_id_bytes "
                     f"to what one id step is: 4096 pages, 512 sectors, 1 bytes)")
    return np.where(big, 0, obj_id).astype(np.int64) * obj_id_bytes


def _object_convert(obj_id_bytes: int, op_of=None):
    """``convert`` for oracleGeneral/lcs records: size-0 records are not requests (libCacheSim's readers skip them,
    ``ignore_size_zero_req``), so request counts agree with libCacheSim's."""
    def convert(rec, fail, max_request_bytes):
        size = rec["obj_size"].astype(np.int64)
        request = size != 0
        fail(size < 0, "obj_size", "expected a positive size in bytes")
        off = _ids_to_offsets(fail, rec["obj_id"], obj_id_bytes)
        _check_extent(fail, off, np.maximum(size, 1), max_request_bytes, "obj_size", "obj_id")
        w = np.zeros(len(rec), bool)
        if op_of is not None and "op_tenant" in rec.dtype.names:
            op = (rec["op_tenant"] & 0xFF).astype(np.int64)
            known = np.isin(op, list(LCS_READ_OPS)) | np.isin(op, list(LCS_WRITE_OPS))
            fail(~known & request, "op",
                 f"not a read or write operation: libCacheSim ops {sorted(LCS_READ_OPS.values())} read, "
                 f"{sorted(LCS_WRITE_OPS.values())} write (DELETE, INVALID are no block IO)")
            w = np.isin(op, list(LCS_WRITE_OPS))
        return rec["time"].astype(np.int64), off, np.maximum(size, 1), w, request
    return convert


def read_oracle_general(path: str | Path, *, obj_id_bytes: int = OBJ_ID_BYTES, errors: str = "raise",
                        name: str | None = None, max_request_bytes: int | None = None,
                        max_time_inversion_s: float | None = None) -> xr.Dataset:
    """Read libCacheSim's oracleGeneral binary trace (24-byte records; ``.zst`` or gzip too).

    ``time`` is the records' ``clock_time`` (s), ``offset = obj_id * obj_id_bytes`` (module docstring),
    ``size = obj_size``; every request is a read (the format has no operation). Records of size 0 are not
    requests (libCacheSim skips them too; their count is ``attrs["n_not_requests"]``). A record beyond the
    limits (:data:`~tieringlab.traces.readers.MAX_REQUEST_BYTES` per request, 2^53 bytes of address) or a
    file that ends inside a record raises :class:`TraceFormatError` naming the record (1-based)."""
    mrb, mti = _limits(max_request_bytes, max_time_inversion_s)
    _check_common(errors, name, mrb, mti, obj_id_bytes)
    return _binary(path, fmt="oracleGeneral", layout=_ORACLE, convert=_object_convert(obj_id_bytes),
                   ticks_per_s=1, time_field="clock_time", errors=errors, name=name, max_request_bytes=mrb,
                   max_time_inversion_s=mti, source="oracleGeneral", attrs={"obj_id_bytes": obj_id_bytes})


def _lcs_header(path: Path, stream):
    head = _read_exact(path, stream, LCS_HEADER_BYTES)
    if len(head) < LCS_HEADER_BYTES:
        raise TraceFormatError(f"{path}: not an lcs trace: {len(head)} bytes, shorter than the {LCS_HEADER_BYTES}-byte "
                               f"lcs header")
    start, version = np.frombuffer(head[:16], "<u8")
    end = np.frombuffer(head[-8:], "<u8")[0]
    if int(start) != LCS_MAGIC or int(end) != LCS_MAGIC:
        raise TraceFormatError(f"{path}: not an lcs trace: the header's start/end magic is not 0x{LCS_MAGIC:x} "
                               f"(libCacheSim lcs.h)")
    if int(version) not in _LCS:
        raise TraceFormatError(f"{path}: lcs header: version {int(version)} is not one of {sorted(_LCS)}")
    stat = np.frombuffer(head[16:16 + 3 * 8], "<i8")
    return _LCS[int(version)], {"lcs_version": int(version), "lcs_n_req": int(stat[1])}, b""


def read_lcs(path: str | Path, *, obj_id_bytes: int = OBJ_ID_BYTES, errors: str = "raise", name: str | None = None,
             max_request_bytes: int | None = None, max_time_inversion_s: float | None = None) -> xr.Dataset:
    """Read libCacheSim's lcs binary trace (versions 1-8; the 8 KB header names the version).

    As :func:`read_oracle_general` (v1 records are oracleGeneral's); from v2 on, the ``op`` field decides
    ``is_write`` (:data:`LCS_WRITE_OPS`; NOP, GET, GETS and READ read; DELETE and INVALID are errors naming the
    record). ``attrs["lcs_version"]``."""
    mrb, mti = _limits(max_request_bytes, max_time_inversion_s)
    _check_common(errors, name, mrb, mti, obj_id_bytes)
    return _binary(path, fmt="lcs", layout=None, header=_lcs_header, convert=_object_convert(obj_id_bytes, True),
                   ticks_per_s=1, time_field="clock_time", errors=errors, name=name, max_request_bytes=mrb,
                   max_time_inversion_s=mti, source="lcs", attrs={"obj_id_bytes": obj_id_bytes})


def _vscsi_version(path: Path, stream):
    head = _read_exact(path, stream, _VSCSI[2].itemsize * _VSCSI_TEST)
    if len(head) < _VSCSI[2].itemsize * _VSCSI_TEST:
        raise TraceFormatError(f"{path}: not a vscsi trace: {len(head)} bytes, fewer than two version-2 records "
                               f"(libCacheSim needs {_VSCSI[2].itemsize * _VSCSI_TEST} to tell the version)")
    for v in (2, 1):
        ver = np.frombuffer(head, _VSCSI[v], count=_VSCSI_TEST)["ver"] >> 8
        if np.all(ver == v):
            return _VSCSI[v], {"vscsi_version": v}, head
    raise TraceFormatError(f"{path}: not a vscsi trace: the first two records' version bytes (ver >> 8) are neither "
                           f"all 2 nor all 1 (libCacheSim vscsi.h)")


_SCSI_READ = [int(o, 16) for o in READ_OPS]
_SCSI_WRITE = [int(o, 16) for o in WRITE_OPS]


def _vscsi_convert(rec, fail, max_request_bytes):
    size = rec["len"].astype(np.int64)
    fail(size == 0, "len", "expected a positive size in bytes")
    lbn = rec["lbn"]
    big = lbn > np.uint64(MAX_ADDRESS_BYTES // SECTOR_BYTES)
    fail(big, "lbn", f"out of range: lbn x {SECTOR_BYTES} bytes must stay within the address limit of 2^53 bytes")
    off = np.where(big, 0, lbn).astype(np.int64) * SECTOR_BYTES
    _check_extent(fail, off, np.maximum(size, 1), max_request_bytes, "len", "lbn")
    cmd = rec["cmd"].astype(np.int64)
    fail(~np.isin(cmd, _SCSI_READ + _SCSI_WRITE), "cmd",
         f"expected a SCSI read ({'/'.join(READ_OPS)}) or write ({'/'.join(WRITE_OPS)}) opcode (hex)")
    ts = rec["ts"]
    fail(ts > np.uint64(2**63 - 1), "ts", "out of range: a time in microseconds in [0, 2^63 - 1]")
    return (np.where(ts > np.uint64(2**63 - 1), 0, ts).astype(np.int64), off, np.maximum(size, 1),
            np.isin(cmd, _SCSI_WRITE), np.ones(len(rec), bool))


def read_vscsi(path: str | Path, *, errors: str = "raise", name: str | None = None,
               max_request_bytes: int | None = None, max_time_inversion_s: float | None = None) -> xr.Dataset:
    """Read a vscsi binary trace (CloudPhysics; libCacheSim's ``vscsi``; versions 1 and 2, told apart as
    libCacheSim does). ``time`` from ``ts`` (microseconds; libCacheSim truncates it to seconds, which no
    cache policy here reads), ``offset = lbn * 512``, ``size = len`` bytes, ``is_write`` from the SCSI
    opcode ``cmd`` (28/88/a8 read, 2a/8a/aa write; any other is an error naming the record)."""
    mrb, mti = _limits(max_request_bytes, max_time_inversion_s)
    _check_common(errors, name, mrb, mti)
    return _binary(path, fmt="vscsi", layout=None, header=_vscsi_version, convert=_vscsi_convert,
                   ticks_per_s=10**6, time_field="ts", errors=errors, name=name, max_request_bytes=mrb,
                   max_time_inversion_s=mti, source="vscsi")


def _limits(max_request_bytes, max_time_inversion_s):
    return (MAX_REQUEST_BYTES if max_request_bytes is None else max_request_bytes,
            MAX_TIME_INVERSION_S if max_time_inversion_s is None else max_time_inversion_s)


# ---------------------------------------------------------------------------------- text layouts
#: The Tencent CBS block traces (SNIA IOTTA "Tencent CBS", 2018; layout from the set's README, 3. "I/O trace file
#: format", mirrored at https://huggingface.co/datasets/1a1a11a/jason_original/blob/main/tencent/tencentBlock_README):
#: Timestamp (Unix s), Offset (512-byte sectors), Size (sectors), IOType (0 read, 1 write), VolumeID; no header.
TENCENT_CBS_COLUMNS = ("Timestamp", "Offset", "Size", "IOType", "VolumeID")
#: The Alibaba block traces (https://github.com/alibaba/block-traces, README "Schema", io_traces.csv):
#: device_id (uint32), opcode ('R' or 'W'), offset (bytes), length (bytes), timestamp (microseconds); no header.
ALIBABA_COLUMNS = ("device_id", "opcode", "offset", "length", "timestamp")
#: Operation tokens of a CSV with a column spec (case and blanks ignored).
CSV_READ_TOKENS = ("r", "read", "get", "gets")
CSV_WRITE_TOKENS = ("w", "write", "set")


def _volume_parse(parse_rest, volume_field: str, volume, seen: set):
    """Wrap a parse function: check the volume column, record the volumes seen, keep ``volume``'s lines only."""
    def parse(chunk, fail, max_request_bytes):
        vol, bad, big = _numeric(chunk[volume_field])
        fail(bad | big | (vol < 0), volume_field, "expected a non-negative integer volume id")
        out = parse_rest(chunk, fail, max_request_bytes)
        seen.update(np.unique(vol).tolist()[:1000])
        return (*out, np.ones(len(chunk), bool) if volume is None else vol == volume)
    return parse


def _one_volume(path: Path, read, volume, what: str):
    """Run ``read`` (a multi-volume reader); with ``volume=None`` the file must hold one volume only."""
    if volume is not None and not (_is_int(volume) and volume >= 0):
        raise ValueError(f"volume must be a non-negative integer {what} or None (the file's only one), got {volume!r}")
    seen: set = set()
    try:
        ds = read(seen)
    except TraceFormatError as exc:
        if volume is not None and "no valid requests" in str(exc):
            shown = ", ".join(map(str, sorted(seen)[:10]))
            raise TraceFormatError(f"{path}: no requests of {what} {volume}; the file holds {what}s {shown}"
                                   + (" ..." if len(seen) > 10 else "")) from None
        raise
    if volume is None and len(seen) > 1:
        shown = ", ".join(map(str, sorted(seen)[:10]))
        raise TraceFormatError(f"{path}: the file mixes {len(seen)}{'+' if len(seen) >= 1000 else ''} {what}s "
                               f"({shown}{' ...' if len(seen) > 10 else ''}), whose offsets are separate address "
                               f"spaces: pass volume=ID (--volume ID) to read one")
    ds.attrs["volume"] = int(volume if volume is not None else next(iter(seen)))
    return ds


TENCENT_CBS_FIELDS = BlockFields(
    time="Timestamp", time_what="an integer Unix time in seconds", time_range="a Unix time in seconds in [0, 2^63 - 1]",
    offset="Offset", offset_unit=SECTOR_BYTES, size="Size", size_unit=SECTOR_BYTES, op="IOType",
    op_codes={"0": 0, "1": 1}, op_what="0 (read) or 1 (write)")
ALIBABA_FIELDS = BlockFields(
    time="timestamp", time_what="an integer time in microseconds",
    time_range="a time in microseconds in [0, 2^63 - 1]", offset="offset", offset_unit=1, size="length",
    size_unit=1, op="opcode", op_codes={"r": 0, "w": 1}, op_what="'R' or 'W'")
_parse_tencent = block_parser(TENCENT_CBS_FIELDS)
_parse_alibaba = block_parser(ALIBABA_FIELDS)


def _text_kw(errors, name, chunksize, max_request_bytes, max_time_inversion_s):
    mrb, mti = _limits(max_request_bytes, max_time_inversion_s)
    _check_common(errors, name, mrb, mti)
    return dict(name=name, errors=errors, chunksize=chunksize, max_request_bytes=mrb, max_time_inversion_s=mti)


def read_tencent_cbs(path: str | Path, *, volume: int | None = None, errors: str = "raise", name: str | None = None,
                     chunksize: int = DEFAULT_CHUNK_ROWS, max_request_bytes: int | None = None,
                     max_time_inversion_s: float | None = None) -> xr.Dataset:
    """Read a Tencent CBS block trace (``Timestamp,Offset,Size,IOType,VolumeID``; see
    :data:`TENCENT_CBS_COLUMNS`): ``time`` from the Unix seconds, ``offset = Offset * 512``, ``size = Size *
    512`` bytes, ``is_write = IOType == 1``. A file holds many volumes (separate address spaces): ``volume``
    selects one; with ``None`` a file of more than one is an error listing them. The rules of the text readers
    (:func:`~tieringlab.traces.readers.read_msr`) apply line by line."""
    kw = _text_kw(errors, name, chunksize, max_request_bytes, max_time_inversion_s)
    path = Path(path)
    return _one_volume(path, lambda seen: _read_chunked(
        path, columns=TENCENT_CBS_COLUMNS, dtype={"IOType": "category"}, numeric=("Timestamp", "Offset", "Size",
                                                                                  "VolumeID"),
        parse=_volume_parse(_parse_tencent, "VolumeID", volume, seen), ticks_per_s=1, time_field="Timestamp",
        source="tencent_cbs", **kw), volume, "VolumeID")


def read_alibaba(path: str | Path, *, volume: int | None = None, errors: str = "raise", name: str | None = None,
                 chunksize: int = DEFAULT_CHUNK_ROWS, max_request_bytes: int | None = None,
                 max_time_inversion_s: float | None = None) -> xr.Dataset:
    """Read an Alibaba block trace (``device_id,opcode,offset,length,timestamp``; see :data:`ALIBABA_COLUMNS`):
    ``time`` from the microseconds, ``offset``/``size`` bytes, ``is_write = opcode == 'W'``. ``volume``
    selects one ``device_id`` (required when the file holds several), as in :func:`read_tencent_cbs`."""
    kw = _text_kw(errors, name, chunksize, max_request_bytes, max_time_inversion_s)
    path = Path(path)
    return _one_volume(path, lambda seen: _read_chunked(
        path, columns=ALIBABA_COLUMNS, dtype={"opcode": "category"}, numeric=("device_id", "offset", "length",
                                                                              "timestamp"),
        parse=_volume_parse(_parse_alibaba, "device_id", volume, seen), ticks_per_s=10**6, time_field="timestamp",
        source="alibaba", **kw), volume, "device_id")


def read_csv_trace(path: str | Path, *, obj_id_field: int, n_fields: int, time_field: int | None = None,
                   obj_size_field: int | None = None, op_field: int | None = None, has_header: bool = False,
                   ticks_per_s: int = 1, obj_id_bytes: int = OBJ_ID_BYTES, errors: str = "raise",
                   name: str | None = None, chunksize: int = DEFAULT_CHUNK_ROWS, max_request_bytes: int | None = None,
                   max_time_inversion_s: float | None = None) -> xr.Dataset:
    """Read a comma-separated trace by a column spec, as libCacheSim's ``csv`` reader does (fields 1-based).

    Every line has ``n_fields`` fields; ``obj_id_field`` holds an integer object id (``offset = obj_id *
    obj_id_bytes``, module docstring); ``time_field`` integer ticks (``ticks_per_s`` per second; absent: every
    request at time 0); ``obj_size_field`` bytes (absent: ``obj_id_bytes``, one id step); ``op_field`` an
    operation token (:data:`CSV_READ_TOKENS` read, :data:`CSV_WRITE_TOKENS` write; absent: all reads).
    ``has_header``: the first line is a header (skipped, whatever it says). libCacheSim's plain-text format
    (one id per line) is ``n_fields=1, obj_id_field=1``."""
    kw = _text_kw(errors, name, chunksize, max_request_bytes, max_time_inversion_s)
    _check_common(errors, name, kw["max_request_bytes"], kw["max_time_inversion_s"], obj_id_bytes)
    if not (_is_int(n_fields) and 1 <= n_fields <= 240):
        raise ValueError(f"n_fields must be the number of fields per line, an integer in [1, 240], got {n_fields!r}")
    spec = {"obj_id_field": obj_id_field, "time_field": time_field, "obj_size_field": obj_size_field,
            "op_field": op_field}
    for k, v in spec.items():
        if (v is not None or k == "obj_id_field") and not (_is_int(v) and 1 <= v <= n_fields):
            raise ValueError(f"{k} must be a field number in [1, n_fields={n_fields}]"
                             + ("" if k == "obj_id_field" else " or None") + f", got {v!r}")
    used = [v for v in spec.values() if v is not None]
    if len(set(used)) != len(used):
        raise ValueError(f"the column spec names one field twice: {spec}")
    if not (_is_int(ticks_per_s) and ticks_per_s >= 1):
        raise ValueError(f"ticks_per_s must be a positive integer (1: seconds, 1000: ms, 1000000: us), got "
                         f"{ticks_per_s!r}")
    if not isinstance(has_header, bool):
        raise ValueError(f"has_header must be True or False, got {has_header!r}")
    names = tuple(f"field{i}" for i in range(1, n_fields + 1))
    col = {k: (None if v is None else names[v - 1]) for k, v in spec.items()}
    numeric = tuple(col[k] for k in ("time_field", "obj_id_field", "obj_size_field") if col[k])

    def parse(chunk, fail, max_request_bytes):
        n = len(chunk)
        t = np.zeros(n, np.int64)
        if col["time_field"]:
            t, bad, big = _numeric(chunk[col["time_field"]])
            fail(bad, col["time_field"], "expected an integer time (ticks)")
            fail(big | (t < 0), col["time_field"], "out of range: a time in [0, 2^63 - 1] ticks")
        oid, bad, big = _numeric(chunk[col["obj_id_field"]])
        fail(bad | (oid < 0), col["obj_id_field"], "expected a non-negative integer object id")
        fail(big, col["obj_id_field"], "out of range: an object id in [0, 2^63 - 1]")
        off = _ids_to_offsets(fail, np.where(big | (oid < 0), 0, oid), obj_id_bytes, col["obj_id_field"])
        sz = np.full(n, obj_id_bytes, np.int64)
        if col["obj_size_field"]:
            sz, bad, big = _numeric(chunk[col["obj_size_field"]])
            fail(bad | (sz <= 0), col["obj_size_field"], "expected a positive integer size in bytes")
            fail(big, col["obj_size_field"], f"out of range: larger than the limit of {max_request_bytes} bytes")
        _check_extent(fail, off, sz, max_request_bytes, col["obj_size_field"] or "obj_size", col["obj_id_field"])
        w = np.zeros(n, bool)
        if col["op_field"]:
            code = _category_codes(chunk[col["op_field"]], {**dict.fromkeys(CSV_READ_TOKENS, 0),
                                                            **dict.fromkeys(CSV_WRITE_TOKENS, 1)})
            fail(code < 0, col["op_field"], f"expected a read ({'/'.join(CSV_READ_TOKENS)}) or write "
                                            f"({'/'.join(CSV_WRITE_TOKENS)}) operation")
            w = code == 1
        return t, off, sz, w

    return _read_chunked(path, columns=names, dtype={col["op_field"]: "category"} if col["op_field"] else {},
                         numeric=numeric, parse=parse, ticks_per_s=int(ticks_per_s),
                         time_field=col["time_field"] or "time", source="csv",
                         header="skip" if has_header else "none",
                         attrs={"obj_id_bytes": obj_id_bytes, "format": "csv"}, **kw)


# ---------------------------------------------------------------------------------- one entry point

def _reader(fn, fixed=None):
    return (lambda path, **kw: fn(path, **{**(fixed or {}), **kw}))


#: Every format :func:`read_trace` reads -> its reader. ``txt`` is libCacheSim's plain text (one id per line).
FORMATS = {
    "msr": read_msr,
    "cloudphysics": read_cloudphysics,
    "oracleGeneral": read_oracle_general,
    "lcs": read_lcs,
    "vscsi": read_vscsi,
    "csv": read_csv_trace,
    "txt": _reader(read_csv_trace, {"n_fields": 1, "obj_id_field": 1}),
    "tencent_cbs": read_tencent_cbs,
    "alibaba": read_alibaba,
}


def detect_format(path: str | Path) -> str:
    """The format of ``path`` from its name (``.oracleGeneral``, ``.lcs``, ``.vscsi``, ``.txt``; a ``.zst`` or
    ``.gz`` suffix is looked through), else from its first bytes (the lcs magic; the CloudPhysics or MSR header;
    a first line of 7 fields with Read/Write: MSR). Anything else is a ``ValueError`` asking for a format."""
    path = Path(path)
    low = path.name.lower()
    for suffix in (".zst", ".gz"):
        low = low.removesuffix(suffix)
    for key, fmt in (("oraclegeneral", "oracleGeneral"), (".lcs", "lcs"), (".vscsi", "vscsi"), (".txt", "txt")):
        if key in low:
            return fmt
    try:
        stream, _, raw = _open_text(_check_file(path))
        try:
            head = _read_exact(path, stream, LCS_HEADER_BYTES)
        finally:
            stream.close()
            raw.close()
    except TraceFormatError:
        head = b""
    if len(head) >= 8 and int(np.frombuffer(head[:8], "<u8")[0]) == LCS_MAGIC:
        return "lcs"
    first = head.split(b"\n", 1)[0].decode("utf-8", "replace").lstrip("\ufeff").strip().lower()
    fields = [f.strip() for f in first.split(",")]
    if first.startswith("version,time,op"):
        return "cloudphysics"
    if first.startswith("timestamp,hostname") or (len(fields) == 7 and fields[3] in ("read", "write")):
        return "msr"
    raise ValueError(f"{path}: cannot tell the trace format from the name or the first bytes; pass format= "
                     f"(--format), one of: {', '.join(FORMATS)}")


def read_trace(path: str | Path, format: str | None = None, **kw) -> xr.Dataset:
    """Read ``path`` in ``format`` (a key of :data:`FORMATS`; ``None``: :func:`detect_format`), passing ``kw`` to
    that format's reader. An unknown format is a ``ValueError`` naming the known ones."""
    if format is None:
        format = detect_format(path)
    if format not in FORMATS:
        raise ValueError(f"unknown trace format {format!r}; known: {', '.join(FORMATS)}")
    return FORMATS[format](path, **kw)
