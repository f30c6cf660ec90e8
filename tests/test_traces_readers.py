"""Readers: MSR and CloudPhysics formats, bad input (file, 1-based line, field), gzip, chunking."""

from __future__ import annotations

import gzip
import hashlib

import numpy as np
import pytest

from tieringlab.traces import TraceFormatError, read_cloudphysics, read_msr

GOOD = [
    "128166372003061629,hm,1,Read,7014609920,24576,41286",
    "128166372013061629,hm,1,Write,4096,4096,1000",
    "128166372023061629,hm,1,Read,0,512,77",
]


def write(tmp_path, name, lines, *, gz=False, header=False):
    text = ("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n" if header else "") + \
        "".join(line + "\n" for line in lines)
    path = tmp_path / name
    if gz:
        with gzip.open(path, "wt") as fh:
            fh.write(text)
    else:
        path.write_text(text)
    return path


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("header", [False, True])
def test_msr_values(tmp_path, gz, header):
    path = write(tmp_path, "hm_1.csv.gz" if gz else "hm_1.csv", GOOD, gz=gz, header=header)
    ds = read_msr(path)
    assert ds.attrs["name"] == "hm_1" and ds.attrs["source"] == "msr"
    assert ds.attrs["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    np.testing.assert_array_equal(ds["time"].values, [0.0, 1.0, 2.0])  # 10^7 ticks of 100 ns = 1 s
    np.testing.assert_array_equal(ds["offset"].values, [7014609920, 4096, 0])
    np.testing.assert_array_equal(ds["size"].values, [24576, 4096, 512])
    np.testing.assert_array_equal(ds["is_write"].values, [False, True, False])
    assert ds["time"].dtype == np.float64 and ds["offset"].dtype == np.int64 and ds["is_write"].dtype == bool


def test_chunks_give_the_same_trace(tmp_path):
    rng = np.random.default_rng(1)
    n = 5000
    ts = 128166372003061629 + np.cumsum(rng.integers(0, 10**6, n))
    lines = [f"{t},src,0,{'Write' if w else 'Read'},{o},{s},1"
             for t, w, o, s in zip(ts, rng.random(n) < 0.3, rng.integers(0, 2**40, n), rng.integers(1, 2**17, n))]
    path = write(tmp_path, "src_0.csv", lines)
    a, b = read_msr(path), read_msr(path, chunksize=333)
    for v in ("time", "offset", "size", "is_write"):
        np.testing.assert_array_equal(a[v].values, b[v].values)
    np.testing.assert_allclose(a["time"].values, (ts - ts[0]) / 1e7)


BAD = [
    # (bad line, field named in the message)
    ("128166372003061630,hm,1,Read,70,4096,41286,9", "fields"),           # too many fields
    ("128166372003061630,hm,1,Read,70,4096", "ResponseTime"),             # too few fields
    ("128166372003061630,hm,1,Read,70x1,4096,5", "Offset"),               # non-numeric
    ("12816637200306163x,hm,1,Read,70,4096,5", "Timestamp"),
    ("128166372003061630,hm,1,Read,70,0,5", "Size"),                      # zero size
    ("128166372003061630,hm,1,Read,70,-4096,5", "Size"),                  # negative size
    ("128166372003061630,hm,1,Read,-70,4096,5", "Offset"),                # negative offset
    ("128166372003061630,hm,1,Flush,70,4096,5", "Type"),                  # unknown type
    ("", "ResponseTime"),                                                 # blank line
]


@pytest.mark.parametrize("header", [False, True])
@pytest.mark.parametrize("bad,field", BAD)
def test_msr_bad_line_names_file_line_field(tmp_path, bad, field, header):
    path = write(tmp_path, "x_0.csv", [GOOD[0], GOOD[1], bad, GOOD[2]], header=header)
    line = 3 + int(header)
    with pytest.raises(TraceFormatError) as exc:
        read_msr(path, chunksize=2)
    msg = str(exc.value)
    assert str(path) in msg and f"line {line}" in msg and field in msg
    ds = read_msr(path, errors="skip", chunksize=2)
    assert ds.sizes["request"] == 3 and ds.attrs["n_skipped"] == 1
    np.testing.assert_array_equal(ds["offset"].values, [7014609920, 4096, 0])


def test_skip_counts_many_bad_lines(tmp_path):
    lines = [GOOD[0]] + [b for b, _ in BAD if b] + [GOOD[1]]
    ds = read_msr(write(tmp_path, "y_0.csv", lines), errors="skip", chunksize=3)
    assert ds.sizes["request"] == 2 and ds.attrs["n_skipped"] == len([b for b, _ in BAD if b])


def test_errors_argument_is_checked(tmp_path):
    with pytest.raises(ValueError, match="errors"):
        read_msr(write(tmp_path, "a.csv", GOOD), errors="ignore")


def test_empty_file_is_an_error(tmp_path):
    path = tmp_path / "e.csv"
    path.write_text("")
    with pytest.raises(TraceFormatError, match="empty"):
        read_msr(path)
    gz = tmp_path / "e.csv.gz"
    with gzip.open(gz, "wt"):
        pass
    with pytest.raises(TraceFormatError):
        read_msr(gz)
    hdr = write(tmp_path, "h.csv", [], header=True)
    with pytest.raises(TraceFormatError, match="no valid requests"):
        read_msr(hdr)


def test_truncated_gzip_is_an_error(tmp_path):
    full = write(tmp_path, "t.csv.gz", GOOD * 4000, gz=True)
    cut = tmp_path / "cut.csv.gz"
    cut.write_bytes(full.read_bytes()[: full.stat().st_size // 2])
    for errors in ("raise", "skip"):
        with pytest.raises(TraceFormatError, match="truncated"):
            read_msr(cut, errors=errors)


def test_cloudphysics_real_file(cloudphysics_path):
    ds = read_cloudphysics(cloudphysics_path)
    # README of the shared copy: 113,872 requests, 46,974 reads (op 28), 66,898 writes (op 2a), sha256 pinned
    assert ds.sizes["request"] == 113_872
    assert int((~ds["is_write"].values).sum()) == 46_974
    assert ds.attrs["sha256"] == "987ff2213050e47d24e8ba6e010d4b3127e51aafef6a76a8a6d43d13b9156fa1"
    first = cloudphysics_path.read_text().splitlines()[1].split(",")  # 1,5633898,2a,512,42932745
    assert ds["offset"].values[0] == int(first[4]) * 512 and ds["size"].values[0] == int(first[3])
    assert ds["time"].values[0] == 0.0 and ds["time"].values[-1] == pytest.approx(7200, abs=60)


def test_cloudphysics_ops_and_errors(tmp_path):
    path = tmp_path / "cp.csv"
    path.write_text("version,time,op,size,lbn\n1,10,28,512,1\n1,11,8a,4096,2\n1,12,A8,1024,3\n1,13,aa,512,4\n")
    ds = read_cloudphysics(path)
    np.testing.assert_array_equal(ds["is_write"].values, [False, True, False, True])
    np.testing.assert_array_equal(ds["offset"].values, [512, 1024, 1536, 2048])
    np.testing.assert_array_equal(ds["time"].values, [0, 1, 2, 3])
    path.write_text("version,time,op,size,lbn\n1,10,28,512,1\n1,11,35,4096,2\n")
    with pytest.raises(TraceFormatError, match=r"line 3: field 'op'"):
        read_cloudphysics(path)
    assert read_cloudphysics(path, errors="skip").attrs["n_skipped"] == 1
