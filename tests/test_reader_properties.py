"""Property tests for every trace reader: any file gives a correct trace or a TraceFormatError, never
another exception.

Two properties per reader (:func:`tieringlab.traces.read_msr`, :func:`tieringlab.traces.read_cloudphysics`):

1. **Files of generated lines** (valid values, out-of-range integers, junk, missing and extra fields,
   blank lines, decreasing times, no final newline, a BOM, CRLF line ends, any block size): a plain
   per-line reference written here from the documented rules (readers' docstrings) decides which lines
   are bad and what the good ones hold. With ``errors="raise"`` the reader raises exactly when the
   reference finds a problem, naming one of the offending lines; with ``errors="skip"`` it returns
   exactly the reference's requests (time, offset, size, is_write, skip count).
2. **Arbitrary bytes** (raw, and gzip streams cut anywhere): a Dataset in the trace schema or a
   TraceFormatError.
"""

from __future__ import annotations

import gzip
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tieringlab.traces import TraceFormatError, read_cloudphysics, read_msr
from tieringlab.traces.readers import MAX_ADDRESS_BYTES, MAX_REQUEST_BYTES, MAX_TIME_INVERSION_S

INT64_MAX = 2**63 - 1

# ---------------------------------------------------------------------------------- the reference


def ref_int(token: str):
    """('ok', value) | ('bad', None) | ('big', None) for an integer field, by the documented rule."""
    t = token.strip(" \t")
    if re.fullmatch(r"[+-]?[0-9]+", t):
        v = int(t)
        return ("ok", v) if -(2**63) <= v <= INT64_MAX else ("big", None)
    if t.lower() in ("", "nan", "inf", "-inf", "na", "null", "none"):
        return "bad", None
    try:
        f = float(t) if re.fullmatch(r"[+-]?[0-9]*\.?[0-9]+(e[+-]?[0-9]+)?", t.lower()) else None
    except ValueError:  # pragma: no cover
        f = None
    if f is None or f != f or f in (float("inf"), float("-inf")) or f != int(f):
        return "bad", None
    return ("ok", int(f)) if abs(f) <= 2**53 else ("big", None)


def ref_line_msr(fields: list[str]):
    """(time ticks, offset, size, is_write) or None (a bad line)."""
    if len(fields) != 7:
        return None
    ts, _, _, typ, off, size, rt = fields
    if rt.strip(" \t").lower() in ("", "nan", "na", "null", "none"):
        return None
    k, t = ref_int(ts)
    k2, o = ref_int(off)
    k3, s = ref_int(size)
    if "ok" != k or t < 0 or k2 != "ok" or o < 0 or o > MAX_ADDRESS_BYTES:
        return None
    if k3 != "ok" or not 1 <= s <= MAX_REQUEST_BYTES or o + s > MAX_ADDRESS_BYTES:
        return None
    typ = typ.strip().lower()
    if typ not in ("read", "write"):
        return None
    return t, o, s, typ == "write"


OPS = {"28": False, "88": False, "a8": False, "2a": True, "8a": True, "aa": True}


def ref_line_cp(fields: list[str]):
    if len(fields) != 5:
        return None
    _, tm, op, size, lbn = fields
    k, t = ref_int(tm)
    k2, s = ref_int(size)
    k3, b = ref_int(lbn)
    if k != "ok" or t < 0 or k3 != "ok" or b < 0 or b > MAX_ADDRESS_BYTES // 512:
        return None
    if k2 != "ok" or not 1 <= s <= MAX_REQUEST_BYTES or b * 512 + s > MAX_ADDRESS_BYTES:
        return None
    op = op.strip().lower()
    if op not in OPS:
        return None
    return t, b * 512, s, OPS[op]


def reference(lines: list[list[str]], *, header: bool, final_newline: bool, ref_line, ticks_per_s: int):
    """(problem lines for errors="raise", skip-mode result or the string 'error')."""
    first = 2 if header else 1
    parsed = [ref_line(f) for f in lines]
    numbers = list(range(first, first + len(lines)))
    bad = {n for n, r in zip(numbers, parsed) if r is None}
    tail = numbers[-1] if lines and not final_newline else None
    # skip mode: the bad lines and an unterminated last line are dropped
    kept = [(n, r) for n, r in zip(numbers, parsed) if r is not None and n != tail]
    n_skipped = len(lines) - len(kept)
    tol = int(np.floor(MAX_TIME_INVERSION_S * ticks_per_s))
    latest, clamped, inverted = None, [], []
    for n, (t, *_ ) in kept:
        latest = t if latest is None else max(latest, t)
        if latest - t > tol:
            inverted.append(n)
        clamped.append(latest)
    raise_problems = bad | ({tail} if tail else set())
    if not raise_problems:
        raise_problems = set(inverted[:1])
    if not kept or inverted:
        return raise_problems or {"no requests"}, "error"
    t0 = clamped[0]
    skip = {"time": [(c - t0) / ticks_per_s for c in clamped], "offset": [r[1] for _, r in kept],
            "size": [r[2] for _, r in kept], "is_write": [r[3] for _, r in kept], "n_skipped": n_skipped}
    return raise_problems, skip


# ---------------------------------------------------------------------------------- strategies

HOSTILE = ["", "x", "1.5", "nan", "0x10", "--1", "-5", str(2**63), str(2**64), str(2**70), "4096.0", "1e3",
           " 7 ", "+12", "0007", "NA", "9" * 25, "Read", "2a"]

MSR_T0 = 128166372003061629
#: time steps between lines, in units of 0.3 s (MSR) or 1 s (CloudPhysics): mostly forward, a small step back
#: (clamped: within the 1 s tolerance) and a large one (an error)
STEPS = st.sampled_from([0, 1, 1, 1, 2, 5, 5, 40, -1, -30])

msr_clean = st.tuples(
    st.sampled_from(["hm", "src1", "", "NA"]),
    st.sampled_from(["0", "1", ""]),
    st.sampled_from(["Read", "Write", "write", " Read "]),
    st.one_of(st.integers(0, 1 << 40).map(str), st.sampled_from([str(MAX_ADDRESS_BYTES - 4096)])),
    st.one_of(st.integers(1, 1 << 17).map(str), st.sampled_from([str(MAX_REQUEST_BYTES), "4096"])),
    st.sampled_from(["41286", "0"]),
)
cp_clean = st.tuples(
    st.sampled_from(["1", "0", "x", ""]),
    st.sampled_from(["28", "2a", "A8", "8a", "aa", "88", " 2a"]),
    st.integers(1, 1 << 17).map(str),
    st.one_of(st.integers(0, 1 << 30).map(str), st.sampled_from([str(2**44 - 8)])),
)


def lines_strategy(fmt):
    """Lines as field lists. Times are a cumulative sum of STEPS; a line is clean, or has one field replaced by
    a hostile token or an edge value, a field dropped or added, or is blank."""
    clean = msr_clean if fmt == "msr" else cp_clean
    edges = ([str(MAX_ADDRESS_BYTES), str(2**63 - 100), "0", str(MAX_REQUEST_BYTES + 1), str(2**50), "Flush", ""]
             if fmt == "msr" else [str(2**60), str(MAX_ADDRESS_BYTES // 512), "0", str(MAX_REQUEST_BYTES + 1),
                                   str(2**50), "35", ""])

    @st.composite
    def one(draw, t):
        rest = list(draw(clean))
        unit = 3_000_000 if fmt == "msr" else 1
        base = MSR_T0 if fmt == "msr" else 100
        f = ([str(base + t * unit)] + rest) if fmt == "msr" else [rest[0], str(base + t * unit)] + rest[1:]
        kind = draw(st.sampled_from(["clean"] * 8 + ["hostile", "edge", "short", "long", "blank"]))
        if kind in ("hostile", "edge"):
            i = draw(st.integers(0, len(f) - 1))
            f[i] = draw(st.sampled_from(HOSTILE if kind == "hostile" else edges))
        elif kind == "short":
            f = f[:-1]
        elif kind == "long":
            f = f + ["9"] if draw(st.booleans()) else ["9"] + f
        elif kind == "blank":
            f = [""]
        return f

    @st.composite
    def many(draw):
        steps = draw(st.lists(STEPS, min_size=1, max_size=8))
        times = np.cumsum([10] + steps[1:]).tolist()
        return [draw(one(t)) for t in times]

    return many()


def render(lines, *, header_text, header, final_newline, bom, crlf):
    eol = "\r\n" if crlf else "\n"
    body = eol.join(",".join(f) for f in lines)
    text = (header_text + eol if header else "") + body + (eol if final_newline and lines else "")
    return ("\ufeff" if bom else "") + text


def without_unterminated_blank_lines(lines, final_newline: bool):
    """An empty last line without a newline is no line at all (nothing of it is in the file), and neither is the
    blank line before it once it is gone: drop them all, so that the reference sees the lines the file holds.
    (Dropping only one left ``[[""], [""]]`` as ``[[""]]``: the reference counted a blank line 2 that
    ``render`` does not write, and expected an error naming it on a file holding only its header.)"""
    while not final_newline and lines and lines[-1] == [""]:
        lines = lines[:-1]
    return lines


READERS = {
    "msr": (read_msr, lines_strategy("msr"), "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime",
            ref_line_msr, 10**7),
    "cloudphysics": (read_cloudphysics, lines_strategy("cloudphysics"), "version,time,op,size,lbn", ref_line_cp, 1),
}


@pytest.mark.parametrize("fmt", sorted(READERS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_reader_matches_reference_rules(fmt, data, tmp_path):
    read, line_st, header_text, ref_line, tps = READERS[fmt]
    lines = data.draw(line_st, label="lines")
    header = True if fmt == "cloudphysics" else data.draw(st.booleans(), label="header")
    final_newline = data.draw(st.sampled_from([True, True, True, False]), label="final_newline")
    bom = data.draw(st.booleans(), label="bom")
    crlf = data.draw(st.sampled_from([False, False, True]), label="crlf")
    chunk = data.draw(st.integers(1, 6), label="chunksize")
    lines = without_unterminated_blank_lines(lines, final_newline)
    text = render(lines, header_text=header_text, header=header, final_newline=final_newline, bom=bom, crlf=crlf)
    path = tmp_path / f"trace_{fmt}.csv"
    path.write_bytes(text.encode("utf-8"))
    problems, skip = reference(lines, header=header, final_newline=final_newline, ref_line=ref_line,
                               ticks_per_s=tps)

    event(f"raise: {'error' if problems else 'trace'}; skip: {'error' if skip == 'error' else 'trace'}")
    if problems:
        with pytest.raises(TraceFormatError) as exc:
            read(path, chunksize=chunk)
        named = re.search(r": line (\d+):", str(exc.value))
        if named:
            assert int(named.group(1)) in problems, (str(exc.value), problems)
        else:
            assert problems == {"no requests"} and re.search(r"no (valid )?requests", str(exc.value)), str(exc.value)
    else:
        ds = read(path, chunksize=chunk)
        assert skip != "error"
        np.testing.assert_array_equal(ds["time"].values, skip["time"])
    if skip == "error":
        with pytest.raises(TraceFormatError):
            read(path, errors="skip", chunksize=chunk)
    else:
        ds = read(path, errors="skip", chunksize=chunk)
        np.testing.assert_array_equal(ds["offset"].values, np.asarray(skip["offset"], dtype=np.int64))
        np.testing.assert_array_equal(ds["size"].values, np.asarray(skip["size"], dtype=np.int64))
        np.testing.assert_array_equal(ds["is_write"].values, np.asarray(skip["is_write"], dtype=bool))
        np.testing.assert_allclose(ds["time"].values, skip["time"], rtol=0, atol=0)
        assert ds.attrs["n_skipped"] == skip["n_skipped"]


def check_schema(ds):
    t, o, s = ds["time"].values, ds["offset"].values, ds["size"].values
    assert ds.sizes["request"] > 0
    assert t.dtype == np.float64 and o.dtype == np.int64 and s.dtype == np.int64 and ds["is_write"].dtype == bool
    assert t[0] == 0.0 and np.all(np.diff(t) >= 0) and np.all(np.isfinite(t))
    assert np.all(o >= 0) and np.all(s >= 1) and np.all(s <= MAX_REQUEST_BYTES)
    assert np.all(o + s <= MAX_ADDRESS_BYTES)


@pytest.mark.parametrize("fmt", sorted(READERS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.binary(max_size=300), prefix=st.booleans(), errors=st.sampled_from(["raise", "skip"]))
def test_any_bytes_give_a_trace_or_a_trace_format_error(fmt, raw, prefix, errors, tmp_path):
    read, _, header_text, _, _ = READERS[fmt]
    path = tmp_path / "junk.csv"
    path.write_bytes((header_text.encode() + b"\n" if prefix else b"") + raw)
    try:
        ds = read(path, errors=errors, chunksize=3)
    except TraceFormatError as exc:
        assert str(path) in str(exc)
    else:
        check_schema(ds)


@pytest.mark.parametrize("fmt", sorted(READERS))
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_gzip_cut_anywhere_is_a_trace_or_an_error(fmt, data, tmp_path):
    read, line_st, header_text, _, _ = READERS[fmt]
    lines = data.draw(line_st)
    text = render(lines, header_text=header_text, header=True, final_newline=True, bom=False, crlf=False)
    blob = gzip.compress(text.encode())
    cut = data.draw(st.integers(1, len(blob)))
    path = tmp_path / "t.csv.gz"
    path.write_bytes(blob[:cut])
    try:
        ds = read(path, errors="skip")
    except TraceFormatError:
        pass
    else:
        check_schema(ds)
        assert cut == len(blob), "a cut gzip stream must never give a (short) trace"


@pytest.mark.parametrize("fmt", sorted(READERS))
def test_a_file_of_only_a_header_and_blank_unterminated_lines_has_no_requests(fmt, tmp_path):
    # the example hypothesis found (dev profile): lines [[''], ['']], a BOM, no final newline. The file holds the
    # header (or nothing) only: the reference and the reader agree that there are no requests, no line to name
    read, _, header_text, ref_line, tps = READERS[fmt]
    lines = without_unterminated_blank_lines([[""], [""]], final_newline=False)
    header = fmt == "cloudphysics"
    text = render(lines, header_text=header_text, header=header, final_newline=False, bom=True, crlf=False)
    assert text == "\ufeff" + (header_text + "\n" if header else "")
    path = tmp_path / "t.csv"
    path.write_bytes(text.encode("utf-8"))
    assert reference(lines, header=header, final_newline=False, ref_line=ref_line, ticks_per_s=tps) == \
        ({"no requests"}, "error")
    for errors in ("raise", "skip"):
        with pytest.raises(TraceFormatError, match=r"t.csv: no valid requests$"):
            read(path, errors=errors)
