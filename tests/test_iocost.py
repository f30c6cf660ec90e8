"""IO cost, vFRM Eq. 4, priced from the Table 3 latencies (typed here from the paper, in µs)."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from tieringlab.policies.iocost import CACHE_COST, VFRM_COST, CostModel, io_cost, update_cost

US = 1e-6


def test_cache_cost_is_eq4_with_4k_random_row():
    counts = {"ssd_reads": 3, "ssd_writes": 5, "md_reads": 7, "md_writes": 11}
    # Table 3, "4K Random": 135, 58, 7671, 3922 µs
    want = (3 * 135 + 5 * 58 + 7 * 7671 + 11 * 3922) * US
    assert io_cost(counts) == pytest.approx(want, rel=1e-12)
    assert io_cost(counts, CACHE_COST) == pytest.approx(want, rel=1e-12)


def test_vfrm_cost_prices_migrations_sequential_128k():
    counts = {"ssd_reads": 1, "ssd_writes": 2, "md_reads": 3, "md_writes": 4,
              "update_ssd_reads": 8, "update_ssd_writes": 16, "update_md_reads": 16, "update_md_writes": 8}
    # user IO: "128K Random" 790, 1241, 8665, 4942; migrations: "128K Sequential" 558, 1242, 1070, 1104
    want = (1 * 790 + 2 * 1241 + 3 * 8665 + 4 * 4942 + 8 * 558 + 16 * 1242 + 16 * 1070 + 8 * 1104) * US
    assert io_cost(counts, VFRM_COST) == pytest.approx(want, rel=1e-12)


def test_one_bin_move_in_costs_eight_128k_ios():
    # moving a 1 MB bin in: 8 x (MD read + SSD write) of 128 KB, sequential (Table 2(b), Sec. 5.1)
    c = {"ssd_reads": 0, "ssd_writes": 0, "md_reads": 0, "md_writes": 0, "update_md_reads": 8, "update_ssd_writes": 8}
    assert io_cost(c, VFRM_COST) == pytest.approx(8 * (1070 + 1242) * US)


def test_update_counts_are_optional_and_priced_separately():
    base = {"ssd_reads": 2, "ssd_writes": 0, "md_reads": 0, "md_writes": 0}
    model = CostModel(io_bytes=4096, access_pattern="sequential", update_io_bytes=128 << 10, update_pattern="random")
    assert io_cost(base, model) == pytest.approx(2 * 53 * US)
    assert io_cost(dict(base, update_md_writes=1), model) == pytest.approx((2 * 53 + 4942) * US)


def test_dataset_counts_give_labelled_costs():
    ds = xr.Dataset({k: ("flash_size", np.array([1, 2])) for k in ("ssd_reads", "ssd_writes", "md_reads", "md_writes")},
                    coords={"flash_size": [10, 20]})
    c = io_cost(ds)
    assert isinstance(c, xr.DataArray) and c.dims == ("flash_size",)
    np.testing.assert_allclose(c.values, np.array([1, 2]) * (135 + 58 + 7671 + 3922) * US)


def test_errors_name_the_problem():
    with pytest.raises(KeyError, match="md_writes"):
        io_cost({"ssd_reads": 1, "ssd_writes": 1, "md_reads": 1})
    with pytest.raises(ValueError, match="non-negative"):
        io_cost({"ssd_reads": -1, "ssd_writes": 0, "md_reads": 0, "md_writes": 0})
    with pytest.raises(ValueError, match="access_pattern"):
        CostModel(access_pattern="strided")
    with pytest.raises(ValueError, match="io_bytes"):
        CostModel(io_bytes=8192)
    with pytest.raises(TypeError, match="CostModel"):
        io_cost({"ssd_reads": 1, "ssd_writes": 1, "md_reads": 1, "md_writes": 1}, model="vfrm")


def test_update_cost_is_the_flash_update_part_of_eq4():
    """C_FlashUpdate: vFRM's migration counts at the 128 KB sequential rows (Table 3: SSD read 558,
    SSD write 1242, MD read 1070, MD write 1104 us); a page cache's dirty write-back = 4 KB random SSD
    read + MD write (135 + 3922 us). Access counts do not enter it."""
    vf = {"ssd_reads": 5, "ssd_writes": 6, "md_reads": 7, "md_writes": 8,
          "update_ssd_reads": 8, "update_ssd_writes": 16, "update_md_reads": 16, "update_md_writes": 8}
    want = (8 * 558 + 16 * 1242 + 16 * 1070 + 8 * 1104) * 1e-6
    assert update_cost(vf, VFRM_COST) == pytest.approx(want, rel=1e-12)
    pc = {"ssd_reads": 9, "ssd_writes": 9, "md_reads": 9, "md_writes": 9, "dirty_evictions": 3}
    assert update_cost(pc, CACHE_COST) == pytest.approx(3 * (135 + 3922) * 1e-6, rel=1e-12)
    with pytest.raises(KeyError, match="dirty_evictions"):
        update_cost({"ssd_reads": 1}, CACHE_COST)
