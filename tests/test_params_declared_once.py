"""A parameter is declared once (``params.param``), and nothing unknown passes silently: embedded policy
parameters in a section, the same declaration checking a policy called from Python, unknown knobs, params keys
and notebook parameter names refused with the allowed names."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from tieringlab import params
from tieringlab.params import ParamsError, param
from tieringlab.policies import registry

REPO = Path(__file__).resolve().parent.parent


@dataclasses.dataclass(frozen=True)
class _Policy:
    e: float = param(0.0, "Eq. 16 threshold (a fraction)", bounds=(-0.99, 0.99))
    timing: str = param("causal", "A5", choices=("causal", "lookahead"))
    chunk_bytes: int = param(1_000_000, "documented choice: 1 MB", bounds=(1, None), unit="bytes")

    def __post_init__(self):
        params.cross_field(params.field_problems(self))


@dataclasses.dataclass(frozen=True)
class _Section:
    n_reps: int = param(3, "replications", bounds=(2, 64))
    policy: _Policy = param(_Policy(timing="lookahead"), "the system's parameters (embedded)")


@pytest.fixture(autouse=True)
def _registered():
    """The test section exists only while a test of this file runs (other files list every section)."""
    params.section("_test_declared_once")(_Section)
    yield
    params._SECTIONS.pop("_test_declared_once", None)


def test_a_section_sets_embedded_policy_fields_keeping_the_embedded_defaults():
    s = params.validate_section("_test_declared_once", {"policy": {"e": -0.05}})
    assert s.policy == _Policy(e=-0.05, timing="lookahead")   # the section's default for timing is kept
    assert params.validate_section("_test_declared_once", {}).policy.timing == "lookahead"


def test_every_error_in_an_embedded_mapping_names_its_key_path():
    with pytest.raises(ParamsError) as exc:
        params.validate_section("_test_declared_once",
                                {"policy": {"e": 5.0, "timng": "causal", "chunk_bytes": "1MB"}, "n_rep": 3})
    errs = exc.value.errors
    assert any("_test_declared_once.n_rep: unknown parameter; allowed: n_reps, policy" in e for e in errs)
    assert any("_test_declared_once.policy.timng: unknown parameter; allowed: chunk_bytes, e, timing" in e
               for e in errs)
    assert any("_test_declared_once.policy.e: expected a number in [-0.99, 0.99]" in e for e in errs)
    assert any("_test_declared_once.policy.chunk_bytes: expected an integer >= 1 (bytes)" in e for e in errs)
    with pytest.raises(ParamsError, match="policy: expected a mapping"):
        params.validate_section("_test_declared_once", {"policy": 3})


def test_the_same_declaration_checks_a_policy_built_in_python():
    with pytest.raises(ValueError, match=r"_Policy.timing: expected one of 'causal', 'lookahead', got 'later'"):
        _Policy(timing="later")
    with pytest.raises(ValueError, match=r"_Policy.chunk_bytes: expected an integer >= 1"):
        _Policy(chunk_bytes=0)
    assert _Policy(e=0.5).e == 0.5


def test_notebook_parameters_refuse_a_name_the_section_does_not_have():
    ns = {"n_reps": 4, "results_dir": None, "seed": 0, "np": sys, "In": [], "_i1": "x", "polcy": {"e": 0.1}}
    with pytest.raises(ParamsError, match=r"_test_declared_once\.polcy: unknown parameter; allowed: n_reps, "
                                          r"policy, results_dir, seed"):
        params.check("_test_declared_once", ns)
    del ns["polcy"]
    assert params.check("_test_declared_once", ns).n_reps == 4


def test_schema_of_one_section_lists_embedded_fields_with_units():
    text = params.schema_markdown("_test_declared_once")
    assert "| `_test_declared_once.policy.chunk_bytes` | `1000000` | an integer >= 1 (bytes) |" in text
    assert "`_test_declared_once.policy.timing` | `'lookahead'`" in text
    assert "quickstart" not in text
    with pytest.raises(ParamsError, match="unknown section 'nope'"):
        params.schema_markdown("nope")


def test_cli_prints_one_sections_schema():
    out = subprocess.run([sys.executable, "-m", "tieringlab", "params", "schema", "quickstart"],
                         capture_output=True, text=True, check=True).stdout
    assert "`quickstart.max_requests`" in out and "lmst." not in out


def test_an_unknown_or_contradicting_knob_is_an_error_naming_the_fields():
    with pytest.raises(ParamsError, match=r"LRU: unknown knob 'page_byts'; CachingParams has: page_bytes, "):
        registry.make_params("LRU", {"page_byts": 4096})
    with pytest.raises(ParamsError, match=r"Qlen: knob 'policy'='rand' contradicts the name"):
        registry.make_params("Qlen", {"policy": "rand"})
    assert registry.make_params("Qlen", {"policy": "qlen"}) == registry.make_params("Qlen")


def test_a_sweep_sets_a_field_of_embedded_policy_parameters():
    """``tieringlab sweep -p policy.e ...``: the field is validated by its one declaration, and the notebook
    receives the whole embedded dict with the swept value."""
    from tieringlab import sweep  # the top layer: imported where used

    nb = REPO / "notebooks" / "05_lmst.ipynb"
    points = sweep.plan(nb, {"policy.e": [-0.05, 0.05], "seed": [1]})
    assert [p.values for p in points] == [(("policy.e", -0.05), ("seed", 1)), (("policy.e", 0.05), ("seed", 1))]
    assert [p.parameters["policy"]["e"] for p in points] == [-0.05, 0.05]
    assert points[0].parameters["policy"]["alpha"] == params.load(REPO / "params.yaml")["lmst"].policy.alpha
    (q,) = sweep.plan(nb, {"lmst.policy.alpha": [0.2]}, base="notebook")
    assert q.parameters["policy"]["alpha"] == 0.2 and q.values == (("policy.alpha", 0.2),)
    with pytest.raises(ParamsError, match=r"lmst\.policy\.e: expected"):
        sweep.plan(nb, {"policy.e": [5.0]})
    with pytest.raises(ParamsError, match=r"-p policy\.ee: not a parameter of section 'lmst'; allowed: .*policy\.<f"):
        sweep.plan(nb, {"policy.ee": [0.1]})
