"""``tieringlab simulate``: sizes, policies and formats named in errors, and the printed miss ratios against
libcachesim 0.3.5 (a tiny vscsi trace written here; the first 20,000 CloudPhysics requests, where a request
hits when all its 4 KB pages hit, vFRM Sec. 5.1, so the oracle is libcachesim's page-by-page replay)."""

from __future__ import annotations

import libcachesim as lcs
import numpy as np
import pytest

from tieringlab.cli import main as cli
from tieringlab.simulate import parse_size, parse_sizes
from tieringlab.traces import formats as F

PAGE = 4096


def table(out: str) -> dict[str, list[float]]:
    """The printed table: policy -> miss ratios in the order of the sizes."""
    rows = [line.split() for line in out.splitlines()[3:] if line.strip() and not line.startswith("hit-ratio")]
    return {r[0]: [float(x) for x in r[1:]] for r in rows}


def lcs_request_miss(policy: str, pages: np.ndarray, req: np.ndarray, n_req: int, capacity_pages: int) -> float:
    """libcachesim's cache fed page by page (obj_size 1); a request misses when any of its pages misses."""
    cache = getattr(lcs, policy)(capacity_pages)
    hit = np.array([cache.get(lcs.Request(obj_size=1, op=lcs.ReqOp.OP_GET, obj_id=int(p))) for p in pages])
    missed = np.zeros(n_req, bool)
    np.logical_or.at(missed, req, ~hit)
    return float(missed.mean())


@pytest.mark.parametrize("text, value", [("64MiB", 64 << 20), ("1GiB", 1 << 30), ("1GB", 10**9), ("4096", 4096),
                                         ("1.5kib", 1536), ("2 TB", 2 * 10**12), ("512B", 512)])
def test_sizes_are_bytes_with_binary_or_decimal_units(text, value):
    assert parse_size(text) == value


@pytest.mark.parametrize("text, fragment", [("1MeB", "units: KiB, MiB"), ("0.5B", "whole number of bytes"),
                                            ("-1MiB", "expected a number and a unit"), ("0", "bytes >= 1")])
def test_bad_sizes_name_the_size_and_the_units(text, fragment):
    with pytest.raises(ValueError, match=f"cache size '{text}'.*{fragment}"):
        parse_size(text)
    with pytest.raises(ValueError, match="given twice"):
        parse_sizes("1MiB,1048576")


@pytest.fixture()
def tiny_vscsi(tmp_path):
    rng = np.random.default_rng(5)
    n = 600
    rec = np.zeros(n, F._VSCSI[1])
    rec["ver"], rec["cmd"], rec["len"] = 1 << 8, rng.choice([0x28, 0x2A], n), PAGE
    rec["lbn"], rec["ts"] = (rng.zipf(1.4, n) % 120) * 8, np.sort(rng.integers(0, 10**8, n))
    path = tmp_path / "tiny.vscsi"
    rec.tofile(path)
    return path, n


def test_simulate_prints_libcachesim_miss_ratios_and_plots(tiny_vscsi, tmp_path, capsys):
    path, n = tiny_vscsi
    png = tmp_path / "curves.png"
    assert cli(["simulate", str(path), "--policy", "lru,ARC", "--sizes", "64KiB,256KiB", "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"miss ratio of tiny.vscsi ({n} requests)") and "64KiB" in out and "256KiB" in out
    got = table(out)
    for policy in ("LRU", "ARC"):
        theirs = [lcs_request_miss(policy, np.asarray(np.fromfile(path, F._VSCSI[1])["lbn"] // 8), np.arange(n), n, c)
                  for c in (16, 64)]
        assert got[policy] == [round(m, 4) for m in theirs], policy
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("args, fragment", [
    (["--policy", "LRU,nope", "--sizes", "1MiB"], "unknown policy 'nope'; trace policies: ARC, CAR"),
    (["--policy", "ARA", "--sizes", "1MiB"], "'ARA' is a queueing system, not one that replays a trace"),
    (["--policy", "LRU", "--sizes", "1MiB,lots"], "cache size 'lots'"),
    (["--policy", "LRU", "--sizes", "1MiB", "--format", "parquet"], "unknown trace format; known: msr, cloudphysics"),
    (["--policy", "LRU", "--sizes", "1MiB", "--volume", "3"], "--volume applies to the tencent_cbs and alibaba"),
])
def test_simulate_errors_name_the_allowed_values(tiny_vscsi, capsys, args, fragment):
    path, _ = tiny_vscsi
    assert cli(["simulate", str(path), *args]) == 2
    assert fragment in capsys.readouterr().err


def test_simulate_on_the_cloudphysics_trace(cloudphysics_path, capsys):
    n = 20_000
    assert cli(["simulate", str(cloudphysics_path), "--policy", "LRU,ARC", "--sizes", "2MiB,16MiB",
                "--requests", str(n)]) == 0
    got = table(capsys.readouterr().out)
    from tieringlab.policies.caching import page_accesses
    from tieringlab.traces import read_cloudphysics

    pages, req, _ = page_accesses(read_cloudphysics(cloudphysics_path).isel(request=slice(0, n)))
    for policy in ("LRU", "ARC"):
        theirs = [lcs_request_miss(policy, pages, req, n, c) for c in (512, 4096)]
        assert got[policy] == [round(m, 4) for m in theirs], policy
