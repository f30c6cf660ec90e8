"""Issue 32's hostile traces, one test per row: the trace readers (a line without a newline, a reordered
header, reader arguments of the wrong type, a directory or FIFO), the public trace API (non-finite or
decreasing times, an empty trace, an unknown trace name, knobs of the wrong type) and the trace
policies' inputs (overflowing requests, capacities, time jumps). Each gets a clear error naming the file
and line (readers), or the variable and the first bad request, or the parameter and what it takes; valid
input gives the same numbers as before. Style and helpers as in test_hostile_inputs.py, whose cases
are not repeated here.
"""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import numpy as np
import pytest

from tieringlab.params import ParamsError
from tieringlab.policies import registry
from tieringlab.policies import vfrm as vfrm_module
from tieringlab.policies.vfrm import VfrmParams, vfrm
from tieringlab.traces import TraceFormatError, load, make_dataset, read_cloudphysics, read_msr, readers, stats

# the documented limits (getattr: so that this file also runs, and fails test by test, on code without them)
MAX_LINE_BYTES = getattr(readers, "MAX_LINE_BYTES", 1 << 10)
MAX_BLOCK_BYTES = getattr(readers, "MAX_BLOCK_BYTES", 1 << 25)
MAX_EPOCHS = getattr(vfrm_module, "MAX_EPOCHS", 1 << 22)

REPO = Path(__file__).resolve().parent.parent
CP_HEADER = "version,time,op,size,lbn\n"
MSR_LINE = "128166372003061629,hm,1,{typ},{off},{size},41286\n"
MiB = 1 << 20


def write(tmp_path, name: str, data: bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


def raises_at(read, path, line: int, *more: str) -> str:
    with pytest.raises(TraceFormatError) as exc:
        read(path)
    msg = str(exc.value)
    assert msg.startswith(f"{path}: line {line}: "), msg
    for text in more:
        assert text in msg, msg
    return msg


def small_trace(n=400, seed=0, name="t"):
    """Requests over 40 MB and five 5-minute epochs, in time order."""
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(0, 1500, n))
    off = rng.integers(0, 40, n) * MiB + rng.integers(0, 255, n) * 4096
    return make_dataset(t, off, rng.choice([4096, 8192, 65536], n), rng.random(n) < 0.3, name=name, source="test")


# ------------------------------------------------------------------ case 1: a line without a newline

class Reads(io.RawIOBase):
    """An endless stream of digits (no newline ever) that counts what the reader asks for."""

    def __init__(self):
        self.read_total = 0

    def readable(self):
        return True

    def readinto(self, buf):
        n = len(buf)
        self.read_total += n
        assert self.read_total <= 64 * MiB, "the reader kept reading a line that can never be valid"
        buf[:n] = b"7" * n
        return n


def test_line_blocks_stop_at_the_line_limit_without_reading_on():
    # structural: the block splitter never holds or asks for more than the line limit plus one read
    from tieringlab.traces.readers import _line_blocks

    stream = Reads()
    with pytest.raises(Exception) as exc:
        list(_line_blocks(io.BufferedReader(stream, 1 << 16), 4, read_bytes=1 << 16))
    assert type(exc.value).__name__ == "_LineTooLong", exc.value
    assert exc.value.line == 1 and exc.value.limit == MAX_LINE_BYTES
    assert stream.read_total <= 2 * (1 << 16)


def test_blocks_are_cut_by_bytes_as_well_as_lines():
    # 2^18-line blocks of 1000-byte lines would be 256 MB: a block stops at MAX_BLOCK_BYTES (+ one read)
    from tieringlab.traces.readers import _line_blocks

    line = b"9" * 999 + b"\n"
    data = line * (2 * MAX_BLOCK_BYTES // len(line) + 3)
    sizes = [len(body) for body, n, tail in _line_blocks(io.BytesIO(data), 1 << 18, read_bytes=1 << 20)]
    assert max(sizes) <= MAX_BLOCK_BYTES + (1 << 20)
    assert sum(sizes) == len(data) and len(sizes) >= 3


MEMORY_CHILD = textwrap.dedent("""
    import resource, sys
    from tieringlab.traces import read_cloudphysics, read_msr, TraceFormatError
    vm = [int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmSize")][0]
    limit = vm + 256 * 2**20   # 256 MiB over what the imports took: each file expands to 768 MiB
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    for path, fmt in zip(sys.argv[1::2], sys.argv[2::2]):  # one child (one import) reads every file in turn
        try:
            (read_msr if fmt == "msr" else read_cloudphysics)(path)
            print("READ")
        except TraceFormatError as exc:
            print("ERROR", exc)
        except MemoryError:
            print("MEMORY")
""")


def digits_without_newline(tmp_path, gz: bool, header: str) -> Path:
    """768 MiB of digits after the header and no newline: a gzip of 768 concatenated members (~0.8 MB), or a
    plain file whose body is a hole (NUL bytes, no disk)."""
    if gz:
        p = tmp_path / "bomb.csv.gz"
        member = gzip.compress(b"7" * MiB, 9)
        with open(p, "wb") as f:
            f.write(gzip.compress(header.encode()))
            for _ in range(768):
                f.write(member)
    else:
        p = tmp_path / "bomb.csv"
        p.write_bytes(header.encode())
        os.truncate(p, len(header) + 768 * MiB)
    return p


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS and /proc are Linux")
def test_a_line_without_newline_is_an_error_in_bounded_memory(tmp_path):
    # issue 32: a 783 KB gzip of 768 MiB of digits peaked at 3.4 GB before its error. Under an address-space
    # limit 256 MiB above the imports, the reader must give the clear error (the old one ran out of memory).
    # The four cases (msr/cloudphysics, gzip/plain) run in one child, one after the other, under the one limit:
    # the child's imports (jax) are paid once.
    cases = [("msr", True), ("msr", False), ("cloudphysics", True), ("cloudphysics", False)]
    argv = []
    for i, (fmt, gz) in enumerate(cases):
        (tmp_path / str(i)).mkdir()
        argv += [str(digits_without_newline(tmp_path / str(i), gz, CP_HEADER if fmt == "cloudphysics" else "")), fmt]
    out = subprocess.run([sys.executable, "-c", MEMORY_CHILD, *argv], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    got = out.stdout.splitlines()
    assert len(got) == len(cases), (out.stdout, out.stderr[-2000:])
    for (fmt, gz), path, result in zip(cases, argv[::2], got):
        line = 2 if fmt == "cloudphysics" else 1
        assert result.startswith(f"ERROR {path}: line {line}: longer than {MAX_LINE_BYTES} bytes"), \
            (fmt, gz, out.stdout, out.stderr[-2000:])


@pytest.mark.parametrize("read, lead, line", [(read_cloudphysics, CP_HEADER + "1,10,28,512,1\n", 3),
                                              (read_msr, MSR_LINE.format(typ="Read", off=0, size=512), 2)])
def test_the_line_limit_is_exact_and_names_the_line(tmp_path, read, lead, line):
    good = lead.splitlines()[-1]
    # blanks around a field are allowed: a line of exactly MAX_LINE_BYTES is read, one byte more is not
    at_limit = good + " " * (MAX_LINE_BYTES - len(good))
    ok = read(write(tmp_path, "ok.csv", (lead + at_limit + "\n").encode()))
    assert ok.sizes["request"] == 2
    path = write(tmp_path, "long.csv", (lead + at_limit + " \n" + lead.splitlines()[-1] + "\n").encode())
    raises_at(read, path, line, f"longer than {MAX_LINE_BYTES} bytes")
    with pytest.raises(TraceFormatError, match=f"line {line}: longer than"):  # under errors="skip" too
        read(path, errors="skip")


def test_a_million_columns_on_one_line_is_refused_at_the_line_limit(tmp_path):
    path = write(tmp_path, "wide.csv", (CP_HEADER + "1," * 10**6 + "1\n").encode())
    raises_at(read_cloudphysics, path, 2, "longer than", "at least 2000001")


def test_old_mac_line_ends_name_the_carriage_returns(tmp_path):
    path = write(tmp_path, "mac.csv", (CP_HEADER + "1,10,28,512,1\n").replace("\n", "\r").encode())
    raises_at(read_cloudphysics, path, 1, "carriage return")


# ------------------------------------------------------------------ case 2: the CloudPhysics header

def test_a_reordered_cloudphysics_header_is_read_by_name(tmp_path):
    canon = read_cloudphysics(write(tmp_path, "a.csv", (CP_HEADER + "1,10,28,512,7\n1,11,2a,4096,9\n").encode()))
    # issue 32: version,time,op,lbn,size swapped size and lbn (only startswith("version") was checked)
    swapped = read_cloudphysics(write(tmp_path, "b.csv", b"version,time,op,lbn,size\n1,10,28,7,512\n1,11,2a,9,4096\n"))
    shuffled = read_cloudphysics(write(tmp_path, "c.csv",
                                       b" LBN ,Size,op,Time,version\n7,512,28,10,1\n9,4096,2a,11,1\n"))
    for ds in (swapped, shuffled):
        for v in ("time", "offset", "size", "is_write"):
            np.testing.assert_array_equal(ds[v].values, canon[v].values)
    assert canon["offset"].values.tolist() == [7 * 512, 9 * 512] and canon["size"].values.tolist() == [512, 4096]


def test_a_reordered_msr_header_is_read_by_name(tmp_path):
    body = "128166372003061629,hm,1,Read,8192,512,41286\n"
    canon = read_msr(write(tmp_path, "a.csv", body.encode()))
    swapped = read_msr(write(tmp_path, "b.csv", (b"Timestamp,Hostname,DiskNumber,Type,Size,Offset,ResponseTime\n"
                                                   b"128166372003061629,hm,1,Read,512,8192,41286\n")))
    assert swapped["offset"].values.tolist() == canon["offset"].values.tolist() == [8192]
    assert swapped["size"].values.tolist() == [512]


@pytest.mark.parametrize("header, why", [
    ("version,time,op,size,lbn,extra", "unknown column(s) 'extra'"),
    ("version,time,op,size,lbn,", "unknown column(s) ''"),
    ("version,time,op,size", "missing column(s) lbn"),
    ("version,time,op,size,size", "repeated column(s) size"),
    ("lbn,time,op,size,lbn,version", "repeated column(s) lbn"),
])
def test_a_cloudphysics_header_with_a_wrong_column_names_line_1(tmp_path, header, why):
    path = write(tmp_path, "h.csv", (header + "\n1,10,28,512,1\n").encode())
    for errors in ("raise", "skip"):
        with pytest.raises(TraceFormatError) as exc:
            read_cloudphysics(path, errors=errors)
        msg = str(exc.value)
        assert msg.startswith(f"{path}: line 1: header ") and why in msg and "version,time,op,size,lbn" in msg, msg


def test_the_canonical_header_reads_the_real_trace_unchanged(cloudphysics_path, tmp_path):
    # bit-identical for the canonical header: the file as is, and the same rows under a permuted header
    ds = read_cloudphysics(cloudphysics_path)
    lines = cloudphysics_path.read_text().splitlines()[:2001]
    assert lines[0] == CP_HEADER.strip()
    perm = [4, 2, 0, 3, 1]  # lbn,op,version,size,time
    rows = [",".join(np.asarray(r.split(","))[perm]) for r in lines]
    path = write(tmp_path, "perm.csv", ("\n".join(rows) + "\n").encode())
    got = read_cloudphysics(path)
    for v in ("time", "offset", "size", "is_write"):
        np.testing.assert_array_equal(got[v].values, ds[v].values[:2000])


# ------------------------------------------------------------------ reader arguments and odd paths

@pytest.mark.parametrize("kw, fragment", [
    ({"chunksize": "5"}, "chunksize"), ({"chunksize": 2.7}, "chunksize"), ({"chunksize": True}, "chunksize"),
    ({"max_request_bytes": 1.5}, "max_request_bytes"), ({"max_request_bytes": "x"}, "max_request_bytes"),
    ({"max_time_inversion_s": "1"}, "max_time_inversion_s"), ({"name": 5}, "name"),
])
def test_reader_arguments_of_the_wrong_type_name_the_argument(tmp_path, kw, fragment):
    # before: "5" and 2.7 were taken as 5 and 2, 1.5 bytes as 1 (every request "too large"), a string
    # time tolerance was a TypeError from numpy
    path = write(tmp_path, "g.csv", (CP_HEADER + "1,10,28,512,1\n").encode())
    with pytest.raises(ValueError, match=fragment) as exc:
        read_cloudphysics(path, **kw)
    assert not isinstance(exc.value, TraceFormatError)


def test_a_directory_or_a_fifo_is_named_for_what_it_is(tmp_path):
    with pytest.raises(IsADirectoryError, match="is a directory"):
        read_msr(tmp_path)
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    with pytest.raises(TraceFormatError, match="not a regular file"):
        read_cloudphysics(fifo)
    with pytest.raises(FileNotFoundError, match="no such trace file"):
        read_msr(tmp_path / "nope.csv")


# ------------------------------------------------------------------ case 3: the public trace API

TRACE_POLICIES = ("LRU", "ARC", "CAR", "vFRM", "G1-vFRM", "G2-vFRM")


def run(name, ds, caps):
    return registry.run(name, ds, caps)


@pytest.mark.parametrize("name", TRACE_POLICIES)
def test_a_nan_time_names_the_variable_and_the_request(name):
    # issue 32: one NaN time made vFRM return a hit ratio of 0.0 (0.305 expected) with a cast warning
    ds = small_trace()
    t = ds["time"].values.copy()
    t[123] = np.nan
    with pytest.raises(ValueError, match=r"variable 'time' must be finite seconds; request 123 is nan"):
        run(name, ds.assign(time=("request", t)), [4 * MiB])
    t[123] = np.inf
    with pytest.raises(ValueError, match=r"request 123 is inf"):
        run(name, ds.assign(time=("request", t)), [4 * MiB])


@pytest.mark.parametrize("name", TRACE_POLICIES)
def test_decreasing_times_name_the_first_request_out_of_order(name):
    ds = small_trace()
    t = ds["time"].values.copy()
    t[200], t[201] = t[201] + 5.0, t[200]  # request 201 is before request 200
    with pytest.raises(ValueError, match=r"variable 'time' must be non-decreasing .* request 201 .* request 200"):
        run(name, ds.assign(time=("request", t)), [4 * MiB])
    with pytest.raises(ValueError, match="non-decreasing"):
        run(name, ds.isel(request=slice(None, None, -1)), [4 * MiB])


@pytest.mark.parametrize("name", TRACE_POLICIES)
def test_an_empty_trace_is_the_same_error_everywhere(name):
    # issue 32: LRU/ARC/CAR returned 0.0, vFRM raised, stats.lru_hit_ratio returned NaN
    empty = make_dataset([], [], [], [], name="nothing", source="test")
    with pytest.raises(ValueError, match=r"trace 'nothing' has no requests"):
        run(name, empty, [4 * MiB])


OTF_POLICIES = ("OTF-AST", "OTF-AST without write-back", "static tiering", "FlashCache", "HDD only")


@pytest.mark.parametrize("name", OTF_POLICIES)
def test_the_otf_ast_testbed_policies_run_the_same_trace_check(name):
    # the sub-LUN testbed's policies had their own check: an empty trace or a NaN time was not refused
    ds = small_trace()
    caps, key = [24 * 2**30], jax.random.key(0)  # the paper's 24 sub-LUNs of 1 GiB; the testbed is randomised
    with pytest.raises(ValueError, match=r"trace 'nothing' has no requests"):
        registry.run(name, make_dataset([], [], [], [], name="nothing", source="test"), caps, key=key)
    t = ds["time"].values.copy()
    t[5] = np.nan
    with pytest.raises(ValueError, match=r"variable 'time' must be finite seconds; request 5 is nan"):
        registry.run(name, ds.assign(time=("request", t)), caps, key=key)
    t = ds["time"].values.copy()
    t[200], t[201] = t[201] + 5.0, t[200]
    with pytest.raises(ValueError, match=r"variable 'time' must be non-decreasing .* request 201 .* request 200"):
        registry.run(name, ds.assign(time=("request", t)), caps, key=key)


def test_stats_refuse_an_empty_trace_like_the_policies():
    empty = make_dataset([], [], [], [], name="nothing", source="test")
    for f in (lambda: stats.lru_hit_ratio(empty, 4 * MiB), lambda: stats.lru_hit_ratio(empty, [MiB, 2 * MiB]),
              lambda: stats.table1_row(empty)):
        with pytest.raises(ValueError, match=r"trace 'nothing' has no requests"):
            f()


def test_valid_traces_give_the_same_numbers_through_the_checks():
    # the check converts nothing: integer times and a float64 trace give what their int64/float64 twins give
    ds = small_trace()
    as_float = ds.assign(offset=("request", ds["offset"].values.astype(float)))
    for name in ("LRU", "vFRM"):
        a, b = run(name, ds, [4 * MiB, 16 * MiB]), run(name, as_float, [4 * MiB, 16 * MiB])
        np.testing.assert_array_equal(a["hits"].values, b["hits"].values)
    # independent truth for the hand case: 3 requests to one page, LRU of one page hits twice
    ds = make_dataset([0.0, 1.0, 1.0], [0, 0, 100], [4096, 4096, 10], [False] * 3, name="h", source="test")
    assert run("LRU", ds, [4096])["hits"].values.tolist() == [2]
    assert stats.lru_hit_ratio(ds, 4096) == pytest.approx(2 / 3)


@pytest.mark.parametrize("name", ("LRU", "vFRM"))
def test_requests_beyond_the_address_limit_are_refused_before_any_allocation(name):
    # offset + size = 2^63: int64 wraps; before, LRU asked for 8 PiB and vFRM for 32 TiB (MemoryError)
    ds = small_trace()
    off, size = ds["offset"].values.copy(), ds["size"].values.copy()
    off[3] = size[3] = 2**62
    bad = ds.assign(offset=("request", off), size=("request", size))
    with pytest.raises(ValueError, match=r"request 3 .*ends beyond the address limit of 2\^53"):
        run(name, bad, [4 * MiB])
    with pytest.raises(ValueError, match=r"request 3 .*address limit"):
        stats.lru_hit_ratio(bad, 4 * MiB)


@pytest.mark.parametrize("var, values, fragment", [
    ("offset", lambda o: o + 0.5, "variable 'offset' must hold whole numbers of bytes; request 0"),
    ("offset", lambda o: np.where(np.arange(o.size) == 7, -4096, o), "variable 'offset' must be >= 0 bytes; request 7"),
    ("size", lambda s: np.where(np.arange(s.size) == 9, 0, s), "variable 'size' must be > 0 bytes; request 9"),
    ("time", lambda t: np.arange(t.size).astype("datetime64[s]"), "variable 'time' must hold seconds"),
    ("is_write", lambda w: np.where(np.arange(w.size) == 4, 2, 0), "variable 'is_write' must be booleans"),
])
def test_trace_variables_of_the_wrong_kind_are_named(var, values, fragment):
    # the one check of the contract names the policy and the trace, then the variable and the request
    ds = small_trace()
    bad = ds.assign({var: ("request", values(ds[var].values))})
    for name in ("LRU", "vFRM"):
        with pytest.raises(ValueError, match=f"^{name}: trace 't': " + fragment.replace("(", r"\(")):
            run(name, bad, [4 * MiB])


def test_a_time_jump_of_10_18_seconds_is_refused_before_vfrm_builds_its_epochs():
    # before: MemoryError, "Unable to allocate 23.7 PiB" (an array over 3.3e15 epochs)
    ds = small_trace()
    t = ds["time"].values.copy()
    t[200:] += 1e18
    jump = ds.assign(time=("request", t))
    for name in ("vFRM", "G1-vFRM"):
        with pytest.raises(ValueError, match=rf"spans 1e\+18 s.*MAX_EPOCHS = {MAX_EPOCHS}"):
            run(name, jump, [4 * MiB])
    with pytest.raises(ValueError, match="MAX_PERIODS"):
        stats.bins_per_epoch(jump)
    # LRU does not look at time beyond the checks: the same numbers as without the jump
    np.testing.assert_array_equal(run("LRU", jump, [4 * MiB])["hits"], run("LRU", ds, [4 * MiB])["hits"])


@pytest.mark.parametrize("caps, fragment", [([1e300], "below 2"), ([np.uint64(2**64 - 1)], "below 2")])
def test_capacities_out_of_int64_are_refused(caps, fragment):
    # before: 1e300 and 2^64 - 1 wrapped to negative int64 ("'minlength' must not be negative" from numpy)
    for name in ("LRU", "vFRM"):
        with pytest.raises(ValueError, match=f"capacities must .*{fragment}"):
            run(name, small_trace(), caps)


def test_stats_cache_sizes_are_checked_like_capacities():
    ds = small_trace()
    with pytest.raises(ValueError, match="cache_bytes must be whole numbers"):
        stats.lru_hit_ratio(ds, float("nan"))  # before: "cannot convert float NaN to integer"
    with pytest.raises(ValueError, match="cache_bytes must be whole numbers"):
        stats.lru_hit_ratio(ds, 1e300)  # before: OverflowError
    with pytest.raises(ValueError, match="cache_bytes must be a number of bytes"):
        stats.lru_hit_ratio(ds, "1GB")
    unsorted = stats.lru_hit_ratio(ds, [16 * MiB, 0, 4 * MiB])  # any order, each its own ratio
    assert unsorted.tolist() == [stats.lru_hit_ratio(ds, c) for c in (16 * MiB, 0, 4 * MiB)]
    assert unsorted[1] == 0.0


def test_vfrm_start_and_params_must_be_finite():
    ds = small_trace()
    with pytest.raises(ValueError, match="start must be a finite time"):
        vfrm(ds, [4 * MiB], start=float("nan"))  # before: hit ratio 0.0 and a cast warning
    with pytest.raises(ValueError, match="epoch_s: expected a number"):
        VfrmParams(epoch_s=float("inf"))  # before: one endless epoch, hit ratio 0.0
    with pytest.raises(ValueError, match="lam"):
        VfrmParams(lam=float("inf"))


def test_load_of_an_unknown_name_lists_the_known_names():
    # issue 32: traces.load('nope') was a bare KeyError: 'nope'
    for name in ("nope", None):
        with pytest.raises(KeyError, match=r"unknown trace .*known: cloudphysics, mds_0, .*src21"):
            load(name)
    from tieringlab.traces import effective_scale

    with pytest.raises(KeyError, match="known: cloudphysics"):
        effective_scale("nope")


@pytest.mark.parametrize("name, knobs, want", [
    ("vFRM", {"epoch_s": "300"}, "knob 'epoch_s' must be float"),
    ("vFRM", {"n_epochs": [8]}, "knob 'n_epochs' must be int"),
    ("vFRM", {"bin_bytes": 1.5}, "knob 'bin_bytes' must be int"),
    ("vFRM", {"idle_bins": 3}, "knob 'idle_bins' must be str"),
    ("LRU", {"page_bytes": "4096"}, "knob 'page_bytes' must be int"),
    ("ARC", {"threads": True}, "knob 'threads' must be int"),
    ("CAR", {"cost_model": "x"}, "knob 'cost_model' must be"),
])
def test_knobs_of_the_wrong_type_name_the_policy_knob_type_and_value(name, knobs, want):
    # issue 32: a string for a number gave "'>' not supported between instances of 'str' and 'int'"
    with pytest.raises(ParamsError) as exc:
        registry.make_params(name, knobs)
    msg = str(exc.value)
    assert msg.startswith(f"{name}: {want}") and repr(next(iter(knobs.values()))) in msg, msg
    with pytest.raises(ParamsError, match=want):
        registry.run(name, small_trace(), [4 * MiB], knobs=knobs)


def test_knobs_of_the_right_type_pass_unchanged():
    p = registry.make_params("vFRM", {"epoch_s": 300, "n_epochs": np.int64(8), "lam": np.float64(0.5)})
    assert p.epoch_s == 300 and type(p.epoch_s) is int and p.n_epochs == 8 and p.lam == 0.5
    assert registry.make_params("LRU", {"cost_model": None}).cost_model is None
