"""The test settings of tests/conftest.py: where the CloudPhysics trace is looked for, what a missing trace
does under CI, and the derandomized hypothesis profile of CI."""

from __future__ import annotations

import shutil

import pytest
from conftest import CI, require_cloudphysics
from hypothesis import settings

from tieringlab import data


def test_the_trace_is_found_in_data_first_then_in_shared(tmp_path, cloudphysics_path):
    checkout = tmp_path / "clone"
    local = checkout / data.CLOUDPHYSICS.path
    mirror = tmp_path / "shared" / data.CLOUDPHYSICS.mirror
    for p in (local, mirror):
        p.parent.mkdir(parents=True)
        shutil.copyfile(cloudphysics_path, p)
    assert require_cloudphysics(checkout, ci=True) == local         # data/, where `make data` puts it
    local.unlink()
    assert require_cloudphysics(checkout, ci=True) == mirror        # then ../shared
    mirror.write_bytes(mirror.read_bytes()[:-10])                   # a corrupt copy is never used
    with pytest.raises(pytest.fail.Exception, match="md5 .* does not match"):
        require_cloudphysics(checkout, ci=True)
    shutil.rmtree(tmp_path / "shared")
    with pytest.raises(pytest.fail.Exception,
                       match=r"the CloudPhysics trace is needed: .* "
                             r"\(CI=true: a test that cannot run fails instead of skipping"):
        require_cloudphysics(checkout, ci=True)
    with pytest.raises(pytest.skip.Exception, match="dataset 'cloudphysics' not found .* run `make data`"):
        require_cloudphysics(checkout, ci=False)


def test_ci_runs_a_fixed_derandomized_hypothesis_profile():
    ci = settings.get_profile("ci")
    assert ci.derandomize and ci.database is None and ci.print_blob
    if CI:
        assert settings.default.derandomize and settings.default.database is None
