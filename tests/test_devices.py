"""Device catalogs: cells typed again from the papers, units, and the lookup's error messages."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tieringlab import units as u
from tieringlab.models import devices as dv


def test_autotiering_table1_cells():
    t = dv.autotiering_ssd_table()
    assert list(t.index) == ["3D XPoint", "NVMe", "SLC SATA3", "MLC SATA3", "TLC SATA3"]
    # 3D XPoint 4.50 375G 10 10
    assert t.loc["3D XPoint", "cost_usd_per_gb"] == 4.50
    assert t.loc["3D XPoint", "max_size_bytes"] == 375_000_000_000
    assert t.loc["3D XPoint", "read_time_s"] == pytest.approx(10e-6, rel=1e-12)
    # NVMe 0.57 3.2T 20 20
    assert t.loc["NVMe", "max_size_bytes"] == 3_200_000_000_000
    # SLC SATA3 0.64 480G 25 250
    assert t.loc["SLC SATA3", "write_time_s"] == pytest.approx(250e-6, rel=1e-12)
    # TLC SATA3 0.28 3.84T 75 1125
    assert t.loc["TLC SATA3", "cost_usd_per_gb"] == 0.28
    assert t.loc["TLC SATA3", "max_size_bytes"] == 3_840_000_000_000
    assert t.loc["TLC SATA3", "write_time_s"] == pytest.approx(1.125e-3, rel=1e-12)
    assert t.loc["MLC SATA3", "max_size_printed"] == "2T"


def test_autotiering_table4_cells():
    t = dv.autotiering_tier_table()
    assert list(t.index) == [1, 2, 3]
    # 1 Samsung PM953 NVMe 240K 19K 1000 870 480
    assert t.loc[1, "model"] == "Samsung PM953" and t.loc[1, "protocol"] == "NVMe"
    assert t.loc[1, "read_iops"] == 240_000 and t.loc[1, "write_iops"] == 19_000
    assert t.loc[1, "read_bytes_per_s"] == 1_000_000_000
    # 2 Samsung PM1633 SAS 200K 37K 1400 930 960
    assert t.loc[2, "write_bytes_per_s"] == 930_000_000
    assert t.loc[2, "disk_size_bytes"] == 960_000_000_000
    # 3 Samsung PM863 SATA 99K 18K 540 480 960
    assert t.loc[3, "read_iops"] == 99_000 and t.loc[3, "read_bytes_per_s"] == 540_000_000


@pytest.mark.parametrize(
    "device, op, pattern, io_bytes, micros",
    [
        ("ssd", "read", "sequential", 4096, 53),
        ("ssd", "write", "sequential", 4096, 59),
        ("md", "write", "sequential", 4096, 92),
        ("ssd", "write", "sequential", 131072, 1242),
        ("md", "read", "sequential", 131072, 1070),
        ("ssd", "read", "random", 4096, 135),
        ("md", "read", "random", 4096, 7671),
        ("md", "write", "random", 4096, 3922),
        ("ssd", "read", "random", 131072, 790),
        ("md", "write", "random", 131072, 4942),
    ],
)
def test_vfrm_table3_cells_in_seconds(device, op, pattern, io_bytes, micros):
    assert dv.vfrm_latency(device, op, pattern, io_bytes) == pytest.approx(micros * 1e-6, rel=1e-12)


def test_vfrm_table_long_form_and_case_insensitive():
    t = dv.vfrm_latency_table()
    assert len(t) == 16 and set(t.io_bytes) == {4096, 131072}
    row = t[(t.device == "md") & (t.op == "read") & (t.pattern == "random") & (t.io_bytes == 131072)]
    assert row.latency_s.item() == pytest.approx(8665e-6)
    assert dv.vfrm_latency("SSD", "Read", "Random", np.int64(4096)) == pytest.approx(135e-6)


@pytest.mark.parametrize(
    "args, match",
    [
        (("flash", "read", "random", 4096), r"device must be one of \['ssd', 'md'\].*'flash'"),
        (("ssd", "trim", "random", 4096), r"op must be one of \['read', 'write'\]"),
        (("ssd", "read", "strided", 4096), r"pattern must be one of \['sequential', 'random'\]"),
        (("ssd", "read", "random", 8192), r"io_bytes must be one of \[4096, 131072\].*8192"),
        (("ssd", "read", "random", 4096.0), r"io_bytes must be one of"),
        (("ssd", "read", "random", True), r"io_bytes must be one of"),
    ],
)
def test_vfrm_latency_errors(args, match):
    with pytest.raises(ValueError, match=match):
        dv.vfrm_latency(*args)


def test_lmst_table4_cells():
    t = dv.lmst_tier_table()
    # SSD 2 40GB 500MB/s ; FC 5 100GB 160MB/s
    assert t.loc["SSD", "disk_number"] == 2 and t.loc["FC", "disk_number"] == 5
    assert t.loc["SSD", "total_capacity_bytes"] == 40 * 10**9
    assert t.loc["FC", "total_capacity_bytes"] == 100 * 10**9
    assert t.loc["SSD", "service_rate_bytes_per_s"] == 500e6
    assert t.loc["FC", "service_rate_bytes_per_s"] == 160e6
    assert dv.LMST_TIERS[1].capacity_per_disk_bytes == 20e9
    # 500 MB/s is 500 KB/ms, the unit of the thesis' rates
    assert dv.LMST_TIERS[0].service_rate_bytes_per_s * 1e-3 / u.KB == pytest.approx(500)


def test_units_and_frozen_records():
    assert (u.KB, u.MB, u.GB, u.TB) == (1e3, 1e6, 1e9, 1e12)
    assert (u.KiB, u.MiB, u.GiB, u.TiB) == (1024, 1024**2, 1024**3, 1024**4)
    assert 8 * 128 * u.KiB == u.MiB  # 8 migration IOs of 128 KB make a 1 MB bin (vFRM Sec. 5.1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        dv.AUTOTIERING_TIERS[0].read_iops = 1.0
    assert dv.VFRM_SSD["capacity_bytes"] == 80e9 and dv.VFRM_MD["rpm"] == 5400
