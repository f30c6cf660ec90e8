"""The vFRM and G-vFRM precondition rows (issue 28): their measurement (:func:`bin_reuse`) against small traces
computed by hand, the values the ledger gets from a sweep's counts, and which claims need them."""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr

from tieringlab import claims, paths
from tieringlab.claims import DIFFERS, HOLDS, UNTESTABLE
from tieringlab.claims import gvfrm as CG
from tieringlab.claims import vfrm as CV
from tieringlab.experiments import gvfrm_multi_vm as G
from tieringlab.experiments import vfrm_single_vm as X
from tieringlab.traces import make_dataset

MB = 1 << 20
KB = 1 << 10


def trace(rows, vm=None):
    """``rows``: (time s, offset, size) per request, in time order."""
    t, o, s = (np.array(c) for c in zip(*rows))
    ds = make_dataset(t.astype(float), o.astype(np.int64), s.astype(np.int64), np.zeros(len(t), bool), name="h",
                      source="test")
    if vm is not None:
        ds["vm"] = ("request", np.asarray(vm))
    return ds


# ------------------------------------------------------------------------------------------ bin_reuse by hand


def test_bin_reuse_by_hand_every_bin_within_the_history():
    """300 s epochs, N = 8 (the whole trace is within the history): bins 0, 1, 2 are reused, bin 5 heats once and
    never again (1 of 4 heatings before the last epoch; bin 3 heats in the last epoch: no move-in follows)."""
    ds = trace([(0, 0, 4 * KB), (10, 4 * KB, 4 * KB), (20, MB, 4 * KB), (30, 5 * MB, 4 * KB),
                (310, 8 * KB, 4 * KB), (320, 2 * MB, 4 * KB), (330, MB - 4 * KB, 8 * KB), (620, 3 * MB, 4 * KB),
                (630, 2 * MB + 4 * KB, 4 * KB)])
    b = X.bin_reuse(ds, MB, 300.0, 8)
    assert (b["n_epochs"], b["bins_touched"], b["heatings"], b["heatings_never_reused"]) == (3, 5, 4, 1)
    assert b["never_reused_pct"] == pytest.approx(25.0)
    # re-accesses: t=10 (bin 0, same epoch as its first IO: not warm), t=310, t=330 (bins 0 and 1), t=630 (bin 2)
    assert (b["requests"], b["reaccess_requests"], b["warm_requests"]) == (9, 4, 3)
    assert b["warm_pct"] == pytest.approx(75.0)
    assert b["reusable_bins_by_vm"].tolist() == [3]  # bins 0, 1, 2 have IO in two epochs


def test_bin_reuse_by_hand_bins_that_cool_and_heat_again():
    """1 s epochs, N = 2. Bin 0 has IO in epochs 0, 1, 5, 9; bin 1 in epoch 2. Heatings: bin 0 at 0 (reused at 1),
    bin 0 at 5 (next IO 4 epochs later: never reused while warm), bin 1 at 2 (never again); bin 0 at 9 is in the
    last epoch (no move-in follows). Re-accesses: epochs 1 (warm), 5 and 9 (4 epochs after the previous IO: cold)."""
    ds = trace([(0.1, 0, 4 * KB), (1.1, 0, 4 * KB), (2.1, MB, 4 * KB), (5.1, 0, 4 * KB), (9.1, 0, 4 * KB)])
    b = X.bin_reuse(ds, MB, 1.0, 2)
    assert (b["heatings"], b["heatings_never_reused"]) == (3, 2)
    assert b["never_reused_pct"] == pytest.approx(200 / 3)
    assert (b["reaccess_requests"], b["warm_requests"]) == (3, 1)
    assert b["reusable_bins_by_vm"].tolist() == [1]
    # with a history long enough to span the gaps, every heating but bin 1's is reused and every re-access is warm
    b = X.bin_reuse(ds, MB, 1.0, 8)
    assert (b["heatings"], b["heatings_never_reused"], b["warm_requests"]) == (2, 1, 3)


def test_bin_reuse_keeps_each_vms_bins_apart():
    """Two VMs on the same offsets: VM b's first IO to offset 0 is not a re-access of VM a's bin. 1 s epochs, N = 8:
    heatings a:0@0 (reused), b:0@1 (never), b:1@2 (reused), b:2@4 (reused); re-accesses a@1, b@3, b@5, all warm."""
    ds = trace([(0.1, 0, 4 * KB), (1.1, 0, 4 * KB), (1.2, 0, 4 * KB), (2.1, MB, 4 * KB), (3.1, MB, 4 * KB),
                (4.1, 2 * MB, 4 * KB), (5.1, 2 * MB, 4 * KB)], vm=["a", "a", "b", "b", "b", "b", "b"])
    b = X.bin_reuse(ds, MB, 1.0, 8)
    assert b["vms"].tolist() == ["a", "b"]
    assert b["reusable_bins_by_vm"].tolist() == [1, 2]
    assert (b["heatings"], b["heatings_never_reused"]) == (4, 1)
    assert (b["reaccess_requests"], b["warm_requests"]) == (3, 3)
    # without the VM labels the two VMs share bin 0: b's first IO there becomes a re-access
    assert X.bin_reuse(ds.drop_vars("vm"), MB, 1.0, 8)["reaccess_requests"] == 4


def test_bin_reuse_refuses_what_it_cannot_measure():
    with pytest.raises(ValueError, match="empty"):
        X.bin_reuse(trace([(0, 0, 4096)]).isel(request=slice(0, 0)))
    with pytest.raises(ValueError, match="n_epochs"):
        X.bin_reuse(trace([(0, 0, 4096)]), MB, 300.0, 0)
    one = X.bin_reuse(trace([(0, 0, 4096), (1, 0, 4096)]))  # one epoch: no move-in can follow
    assert one["heatings"] == 0 and np.isnan(one["never_reused_pct"])


# ------------------------------------------------------------------------------------------ ledger values


def vfrm_counts(rows):
    """A sweep-shaped Dataset holding only the precondition counts, per trace: (heatings, never, reaccess, warm)."""
    names = list(rows)
    res = xr.Dataset({k: ("trace", np.array([rows[n][i] for n in names], np.int64)) for i, k in enumerate(X.PRE_VARS)},
                     coords={"trace": names})
    res.attrs.update(epoch_s=300.0, n_history_epochs=8, bin_bytes=MB)
    return res


def test_vfrm_precondition_values_from_the_counts():
    res = vfrm_counts({"mds_0": (100, 77, 50, 40), "stg_1": (10, 2, 10, 3), "cloudphysics": (8, 2, 20, 15)})
    t = X.preconditions_table(res).set_index("trace")
    assert t.loc["mds_0", "never_reused_pct"] == pytest.approx(77.0) and t.loc["stg_1", "warm_pct"] == 30.0
    v = X._precondition_values(res)
    assert v[CV.PRE_MDS0_NEVER_REUSED][0] == pytest.approx(77.0)
    assert v[CV.PRE_NEVER_REUSED][0] == pytest.approx(77.0) and "largest on mds_0" in v[CV.PRE_NEVER_REUSED][1]
    assert v[CV.PRE_WARM_REUSE][0] is False  # mds_0 80 %, stg_1 30 %: 1 of 2 is not most
    assert "1 of 2 traces" in v[CV.PRE_WARM_REUSE][1]
    assert v[CV.PRE_CLOUDPHYSICS_NEVER_REUSED][0] == pytest.approx(25.0)
    assert v[CV.PRE_CLOUDPHYSICS_WARM_REUSE][0] == pytest.approx(75.0)
    reg = claims.registry()
    verdicts = {k: reg[k].verdict(x) for k, (x, _) in v.items()}
    assert verdicts == {CV.PRE_MDS0_NEVER_REUSED: DIFFERS, CV.PRE_NEVER_REUSED: DIFFERS, CV.PRE_WARM_REUSE: DIFFERS,
                        CV.PRE_CLOUDPHYSICS_NEVER_REUSED: HOLDS, CV.PRE_CLOUDPHYSICS_WARM_REUSE: HOLDS}
    # a failing precondition makes the claims that need it untestable, naming it
    pre = {pid: (reg[pid], v[pid][0] if pid in v else None) for pid in CV.PRECONDITIONS}  # billing: not measured
    verdict, why = claims.verdict_given(reg[CV.MDS0_COST_REL_LRU], 31.0, pre)
    assert verdict == UNTESTABLE and CV.PRE_MDS0_NEVER_REUSED in why
    assert claims.verdict_given(reg[CV.COST_FRACTION_OF_LRU_CLOUDPHYSICS], 54.0, pre)[0] == HOLDS
    assert claims.verdict_given(reg[CV.CATCHES_UP], True, pre)[0] == UNTESTABLE
    # a sweep without the counts gives no precondition values (they stay not measured)
    assert X._precondition_values(res.drop_vars(list(X.PRE_VARS))) == {}


def gvfrm_counts(rows, flash_bytes=(100 * MB, 3200 * MB)):
    """Per mix: (heatings, never, reusable bins, smallest VM's, largest VM's)."""
    mixes = list(rows)
    res = xr.Dataset({k: ("mix", np.array([rows[m][i] for m in mixes], np.int64)) for i, k in enumerate(G.PRE_VARS)},
                     coords={"mix": mixes, "flash_gb": [1.0, 32.0], "scale": ("mix", np.full(len(mixes), 0.1)),
                             "flash_bytes": (("mix", "flash_gb"), np.tile(np.asarray(flash_bytes), (len(mixes), 1)))})
    res.attrs.update(bin_bytes=MB, seed=0)
    return res


def test_gvfrm_precondition_values_from_the_counts():
    res = gvfrm_counts({"cf4": (200, 20, 400, 50, 150), "cuf4": (100, 90, 60, 10, 15), "all8": (10, 5, 300, 0, 3)})
    res.attrs["pre_reusable_bins_by_vm_cf4"] = [50, 100, 100, 150]
    res.attrs["members_cf4"] = ["mds_0", "src1_2", "stg_0", "usr_0"]
    v = G._precondition_values(res)
    assert v[CG.pre_never_reused("cf4")][0] == pytest.approx(10.0)
    assert v[CG.pre_never_reused("cuf4")][0] == pytest.approx(90.0)
    # 400 bins of 1 MB over the smallest flash, 100 MB; 60 over 100
    assert v[CG.pre_reusable_over_flash("cf4")][0] == pytest.approx(4.0)
    assert v[CG.pre_reusable_over_flash("cuf4")][0] == pytest.approx(0.6)
    assert "mds_0 50" in v[CG.pre_reusable_over_flash("cf4")][1]
    assert v[CG.pre_heterogeneity("cf4")][0] == pytest.approx(3.0)
    assert v[CG.pre_heterogeneity("cuf4")][0] == pytest.approx(1.5)
    assert v[CG.pre_heterogeneity("all8")][0] == pytest.approx(3.0)  # a VM with no reusable bin counts as one
    reg = claims.registry()
    verdicts = {k: reg[k].verdict(x) for k, (x, _) in v.items()}
    assert [verdicts[CG.pre_never_reused(m)] for m in CG.MIXES] == [HOLDS, DIFFERS, HOLDS]
    assert [verdicts[CG.pre_reusable_over_flash(m)] for m in CG.MIXES] == [HOLDS, DIFFERS, HOLDS]
    assert [verdicts[CG.pre_heterogeneity(m)] for m in CG.MIXES] == [HOLDS, DIFFERS, HOLDS]
    pre = {pid: (reg[pid], x) for pid, (x, _) in v.items()}
    assert not any(CG.pre_writebacks_billed(m) in v for m in CG.MIXES)  # no footprint counts: no billing rows
    pre.update({CG.pre_writebacks_billed(m): (reg[CG.pre_writebacks_billed(m)], True) for m in CG.MIXES})
    assert claims.verdict_given(reg[CG.g2_hit_above_g1("cuf4")], 1.0, pre)[0] == UNTESTABLE
    assert claims.verdict_given(reg[CG.g2_hit_above_g1("cf4")], 1.0, pre)[0] == HOLDS
    assert claims.verdict_given(reg[CG.g1_cost_below_lru("cuf4")], 0.5, pre)[0] == UNTESTABLE
    assert claims.verdict_given(reg[CG.g1_cost_below_lru("cf4")], 0.5, pre)[0] == HOLDS
    pre[CG.pre_writebacks_billed("cf4")] = (reg[CG.pre_writebacks_billed("cf4")], False)  # the cache holds it all
    assert claims.verdict_given(reg[CG.g1_cost_below_lru("cf4")], 0.5, pre)[0] == UNTESTABLE
    # the hit-ratio rows of G1 need none of them
    assert claims.verdict_given(reg[CG.CF4_G1_TOP], 99.0, pre)[0] == HOLDS


# ------------------------------------------------------------------------------------------ the rows


def test_each_system_has_preconditions_and_the_claims_that_need_them_say_so():
    reg = claims.registry()
    vpre = {c.id for c in CV.CLAIMS if c.kind == "precondition"}
    gpre = {c.id for c in CG.CLAIMS if c.kind == "precondition"}
    assert vpre == set(CV.PRECONDITIONS) and len(vpre) >= 2 and len(gpre) >= 2
    for pid in vpre | gpre:
        c = reg[pid]
        assert c.id.split(".")[1] == "pre" and c.note and c.paper_value
    need = {pid for c in CV.CLAIMS for pid in c.requires}
    assert need == vpre  # every vFRM precondition is needed by some claim
    assert {pid for c in CG.CLAIMS for pid in c.requires} == gpre
    for cid in CV.COST_ROWS:
        assert any("never_reused" in r for r in reg[cid].requires), cid
    for m in CG.MIXES:
        assert set(reg[CG.g2_cost_below_g1(m)].requires) == {CG.pre_never_reused(m), CG.pre_reusable_over_flash(m),
                                                             CG.pre_heterogeneity(m)}
        assert CG.pre_never_reused(m) in reg[CG.g1_cost_below_lru(m)].requires
        assert CG.pre_writebacks_billed(m) in reg[CG.g1_cost_below_lru(m)].requires  # issue 34


@pytest.mark.parametrize("nb", ["02_vfrm_single_vm", "03_gvfrm_multi_vm"])
def test_the_notebooks_record_every_row_with_its_readings(nb):
    """The ledger cell records the claim values by reading (one row per claim, the other readings on it), and the
    preconditions table is written."""
    cells = json.loads((paths.repo_root() / "notebooks" / f"{nb}.ipynb").read_text(encoding="utf-8"))["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    assert "out.claims_by_reading(vals)" in code
    assert "preconditions_table(res)" in code and '"preconditions"' in code
    assert "out.claim(" not in code  # no row recorded around the readings mechanism
