"""Community trace formats (tieringlab.traces.formats) against the pinned libcachesim 0.3.5 as the oracle.

One small trace (3,000 zipf requests of one 4 KB page each over ~400 pages, reads and writes) is written in
every format: as CSV by this test, converted by libcachesim itself to oracleGeneral and lcs (v1, v2, and a
gzip copy), and written here byte by byte as vscsi v1/v2 and the Tencent CBS and Alibaba CSV layouts (their
public layouts, cited in formats.py). For every file: our reading holds libcachesim's request count and
the same requests, and tieringlab's LRU and ARC on our reading give exactly libcachesim's miss ratios on
its own reading of the file (``ignore_obj_size``: one object = one 4 KB page, the cache size in pages, as
tests/test_caching.py compares them). Then malformed files per format: an error naming file and record/line.
"""

from __future__ import annotations

import gzip

import libcachesim as lcs
import numpy as np
import pytest

from tieringlab.policies import registry
from tieringlab.traces import TraceFormatError, readers
from tieringlab.traces import formats as F

N, N_PAGES, PAGE = 3000, 400, 4096
CAPS_PAGES = (16, 128)


@pytest.fixture(scope="module")
def oracle_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("formats")
    rng = np.random.default_rng(33)
    ids = (rng.zipf(1.3, N) % N_PAGES).astype(np.int64)
    t = np.sort(rng.integers(1_600_000_000, 1_600_000_300, N))
    w = rng.random(N) < 0.3
    (d / "t.csv").write_text("".join(f"{a},{b},{PAGE},{'w' if c else 'r'}\n" for a, b, c in zip(t, ids, w)))
    csv_param = lcs.ReaderInitParam(has_header=False, delimiter=",")
    csv_param.time_field, csv_param.obj_id_field, csv_param.obj_size_field = 1, 2, 3
    src = lcs.TraceReader(str(d / "t.csv"), lcs.TraceType.CSV_TRACE, csv_param)
    lcs.Util.convert_to_oracleGeneral(src._reader, str(d / "t.oracleGeneral"))
    src.reset()
    lcs.Util.convert_to_lcs(src._reader, str(d / "t1.lcs"))
    src.reset()
    lcs.Util.convert_to_lcs(src._reader, str(d / "t2.lcs"), lcs_ver=2)
    (d / "t.oracleGeneral.gz").write_bytes(gzip.compress((d / "t.oracleGeneral").read_bytes()))
    for v in (1, 2):
        rec = np.zeros(N, F._VSCSI[v])
        rec["ver"], rec["cmd"], rec["len"] = v << 8, np.where(w, 0x2A, 0x28), PAGE
        rec["lbn"], rec["ts"] = ids * 8, t * 10**6
        rec.tofile(d / f"t{v}.vscsi")
    (d / "tencent.csv").write_text("".join(f"{a},{b * 8},8,{int(c)},7\n" for a, b, c in zip(t, ids, w)))
    (d / "alibaba.csv").write_text("".join(f"5,{'W' if c else 'R'},{b * PAGE},{PAGE},{a * 10**6}\n"
                                           for a, b, c in zip(t, ids, w)))

    def csv_reader(path, time_field, obj_id_field):
        p = lcs.ReaderInitParam(has_header=False, delimiter=",", ignore_obj_size=True)
        p.time_field, p.obj_id_field = time_field, obj_id_field
        return lcs.TraceReader(str(path), lcs.TraceType.CSV_TRACE, p)

    def binary(path, tt):
        return lambda: lcs.TraceReader(str(path), tt, lcs.ReaderInitParam(ignore_obj_size=True))

    files = {  # name -> (our reading, libcachesim's reading, whether our reading knows the writes)
        "csv": (lambda: F.read_trace(d / "t.csv", "csv", n_fields=4, time_field=1, obj_id_field=2,
                                     obj_size_field=3, op_field=4), lambda: csv_reader(d / "t.csv", 1, 2), True),
        "oracleGeneral": (lambda: F.read_trace(d / "t.oracleGeneral"),
                          binary(d / "t.oracleGeneral", lcs.TraceType.ORACLE_GENERAL_TRACE), False),
        "oracleGeneral.gz": (lambda: F.read_trace(d / "t.oracleGeneral.gz"),
                             binary(d / "t.oracleGeneral", lcs.TraceType.ORACLE_GENERAL_TRACE), False),
        "lcs v1": (lambda: F.read_trace(d / "t1.lcs"), binary(d / "t1.lcs", lcs.TraceType.LCS_TRACE), False),
        "lcs v2": (lambda: F.read_trace(d / "t2.lcs"), binary(d / "t2.lcs", lcs.TraceType.LCS_TRACE), False),
        "vscsi v1": (lambda: F.read_trace(d / "t1.vscsi"), binary(d / "t1.vscsi", lcs.TraceType.VSCSI_TRACE), True),
        "vscsi v2": (lambda: F.read_trace(d / "t2.vscsi"), binary(d / "t2.vscsi", lcs.TraceType.VSCSI_TRACE), True),
        "tencent_cbs": (lambda: F.read_trace(d / "tencent.csv", "tencent_cbs"),
                        lambda: csv_reader(d / "tencent.csv", 1, 2), True),
        "alibaba": (lambda: F.read_trace(d / "alibaba.csv", "alibaba"),
                    lambda: csv_reader(d / "alibaba.csv", 5, 3), True),
    }
    return d, ids, t, w, files


@pytest.fixture(scope="module")
def ours_on_the_trace(oracle_files):
    """tieringlab's LRU and ARC miss ratios on the trace (every format reads to the same requests: checked below)."""
    _, ids, t, w, _ = oracle_files
    from tieringlab.traces import make_dataset

    ds = make_dataset(t - t[0], ids * PAGE, np.full(N, PAGE), w, name="t", source="test")
    caps = [c * PAGE for c in CAPS_PAGES]
    return {p: (1.0 - registry.run(p, ds, caps)["hit_ratio"].values).tolist() for p in ("LRU", "ARC")}


def lcs_count(make) -> int:
    reader, n = make(), 0
    while True:
        try:
            reader.read_one_req()
        except RuntimeError:
            return n
        n += 1


def lcs_miss(make, policy: str, pages: int) -> float:
    return getattr(lcs, policy)(pages).process_trace(make())[0]


@pytest.mark.parametrize("fmt", ["csv", "oracleGeneral", "oracleGeneral.gz", "lcs v1", "lcs v2", "vscsi v1",
                                 "vscsi v2", "tencent_cbs", "alibaba"])
def test_reading_matches_libcachesim(oracle_files, ours_on_the_trace, fmt):
    _, ids, t, w, files = oracle_files
    ours, theirs, has_ops = files[fmt]
    ds = ours()
    assert ds.sizes["request"] == lcs_count(theirs) == N
    np.testing.assert_array_equal(ds["offset"].values, ids * PAGE)
    np.testing.assert_array_equal(ds["size"].values, np.full(N, PAGE))
    np.testing.assert_array_equal(ds["time"].values, (t - t[0]).astype(float))
    np.testing.assert_array_equal(ds["is_write"].values, w if has_ops else np.zeros(N, bool))
    for policy in ("LRU", "ARC"):
        theirs_miss = [lcs_miss(theirs, policy, c) for c in CAPS_PAGES]
        assert ours_on_the_trace[policy] == theirs_miss, (fmt, policy)


def test_size_zero_records_are_not_requests_as_in_libcachesim(oracle_files, tmp_path):
    d, *_ = oracle_files
    rec = np.fromfile(d / "t.oracleGeneral", dtype=F._ORACLE)
    rec["obj_size"][[3, 10, 11]] = 0
    path = tmp_path / "z.oracleGeneral"
    rec.tofile(path)
    ds = F.read_oracle_general(path)
    n = lcs_count(lambda: lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE))
    assert ds.sizes["request"] == n == N - 3 and ds.attrs["n_not_requests"] == 3


# ---------------------------------------------------------------------------------- malformed files


def _oracle(tmp_path, n=5, **fields):
    rec = np.zeros(n, F._ORACLE)
    rec["time"], rec["obj_id"], rec["obj_size"], rec["next"] = np.arange(n), np.arange(n), PAGE, -1
    for k, v in fields.items():
        rec[k] = v
    return rec


def test_binary_formats_name_the_bad_record(tmp_path):
    rec = _oracle(tmp_path)
    path = tmp_path / "cut.oracleGeneral"
    path.write_bytes(rec.tobytes()[:-5])
    with pytest.raises(TraceFormatError, match=r"cut.oracleGeneral: record 5: truncated"):
        F.read_oracle_general(path)
    assert F.read_oracle_general(path, errors="skip").sizes["request"] == 4
    rec["obj_id"][2] = 2**45  # x 4096 bytes: beyond the 2^53-byte address limit; as byte offsets: within
    path.write_bytes(rec.tobytes())
    with pytest.raises(TraceFormatError, match=r"record 3: field 'obj_id': out of range"):
        F.read_oracle_general(path)
    assert F.read_oracle_general(path, obj_id_bytes=1)["offset"].values.tolist() == [0, 1, 2**45, 3, 4]
    rec["obj_id"][2], rec["time"][4] = 2, 0  # time goes back 3 s: the text readers' file-level rule
    path.write_bytes(rec.tobytes())
    with pytest.raises(TraceFormatError, match=r"record 5: field 'clock_time': time goes back 3 s"):
        F.read_oracle_general(path)


def test_lcs_header_and_ops(tmp_path, oracle_files):
    d, *_ = oracle_files
    good = (d / "t2.lcs").read_bytes()
    path = tmp_path / "x.lcs"
    path.write_bytes(b"\0" * 8 + good[8:])
    with pytest.raises(TraceFormatError, match=r"x.lcs: not an lcs trace: the header's start/end magic"):
        F.read_lcs(path)
    path.write_bytes(good[:8] + np.uint64(9).tobytes() + good[16:])
    with pytest.raises(TraceFormatError, match=r"version 9 is not one of \[1, 2, 3, 4, 5, 6, 7, 8\]"):
        F.read_lcs(path)
    path.write_bytes(good[:100])
    with pytest.raises(TraceFormatError, match=r"shorter than the 8192-byte lcs header"):
        F.read_lcs(path)
    rec = np.frombuffer(good[F.LCS_HEADER_BYTES:], dtype=F._LCS[2]).copy()
    rec["op_tenant"][:3] = [13, 9, 1]  # WRITE, DELETE, GET
    path.write_bytes(good[:F.LCS_HEADER_BYTES] + rec.tobytes())
    with pytest.raises(TraceFormatError, match=r"record 2: field 'op': not a read or write operation"):
        F.read_lcs(path)
    ds = F.read_lcs(path, errors="skip")
    assert ds.attrs["n_skipped"] == 1 and ds["is_write"].values[:2].tolist() == [True, False]


def test_vscsi_version_and_opcodes(tmp_path):
    rec = np.zeros(4, F._VSCSI[2])
    rec["ver"], rec["cmd"], rec["len"], rec["lbn"], rec["ts"] = 2 << 8, 0x28, PAGE, [0, 8, 16, 24], 0
    path = tmp_path / "t.vscsi"
    rec["cmd"][2] = 0x35  # SYNCHRONIZE CACHE: no read or write
    rec.tofile(path)
    with pytest.raises(TraceFormatError, match=r"t.vscsi: record 3: field 'cmd': expected a SCSI read"):
        F.read_vscsi(path)
    rec["ver"] = 3 << 8
    rec.tofile(path)
    with pytest.raises(TraceFormatError, match=r"not a vscsi trace: the first two records' version"):
        F.read_vscsi(path)
    path.write_bytes(b"\0" * 50)
    with pytest.raises(TraceFormatError, match=r"not a vscsi trace: 50 bytes"):
        F.read_vscsi(path)


def test_block_csv_layouts_name_line_field_and_volume(tmp_path):
    path = tmp_path / "cbs.csv"
    path.write_text("100,8,8,0,1\n101,16,8,2,1\n")
    with pytest.raises(TraceFormatError, match=r"cbs.csv: line 2: field 'IOType': expected 0 \(read\) or 1"):
        F.read_tencent_cbs(path)
    path.write_text("100,8,8,0,1\n101,16,8,1,2\n102,0,16,1,1\n")
    with pytest.raises(TraceFormatError, match=r"mixes 2 VolumeIDs \(1, 2\).*volume=ID"):
        F.read_tencent_cbs(path)
    ds = F.read_tencent_cbs(path, volume=1)
    assert ds["offset"].values.tolist() == [4096, 0] and ds["size"].values.tolist() == [4096, 8192]
    assert ds["time"].values.tolist() == [0.0, 2.0] and ds.attrs["n_skipped"] == 0 and ds.attrs["volume"] == 1
    with pytest.raises(TraceFormatError, match=r"no requests of VolumeID 3; the file holds VolumeIDs 1, 2"):
        F.read_tencent_cbs(path, volume=3)
    path = tmp_path / "ali.csv"
    path.write_text("0,R,4096,4096,1577808000000626\n0,X,0,512,1577808000000700\n")
    with pytest.raises(TraceFormatError, match=r"ali.csv: line 2: field 'opcode': expected 'R' or 'W'"):
        F.read_alibaba(path)


def test_csv_spec_and_format_errors(tmp_path):
    path = tmp_path / "k.csv"
    path.write_text("time,id\n5,3\n6,x\n")
    with pytest.raises(TraceFormatError, match=r"k.csv: line 3: field 'field2': expected a non-negative integer"):
        F.read_csv_trace(path, n_fields=2, time_field=1, obj_id_field=2, has_header=True)
    with pytest.raises(ValueError, match=r"obj_id_field must be a field number in \[1, n_fields=2\]"):
        F.read_csv_trace(path, n_fields=2, obj_id_field=3)
    with pytest.raises(ValueError, match=r"unknown trace format 'nope'; known: msr, cloudphysics, oracleGeneral"):
        F.read_trace(path, "nope")
    with pytest.raises(ValueError, match=r"cannot tell the trace format.*one of: msr"):
        F.read_trace(path)
    zst = tmp_path / "t.oracleGeneral.zst"
    zst.write_bytes(readers.ZSTD_MAGIC + b"\0" * 40)
    try:
        import zstandard  # noqa: F401
    except ImportError:  # the optional module is not installed (not in requirements.lock): a clear error
        with pytest.raises(TraceFormatError, match=r"zstd-compressed.*needs the optional 'zstandard' module"):
            F.read_trace(zst)
    else:  # pragma: no cover  (a corrupt zstd stream is an error, never a short trace)
        with pytest.raises(TraceFormatError):
            F.read_trace(zst)
