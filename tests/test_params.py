"""params.yaml schema validation: unknown keys, wrong types and out-of-range values fail, naming the key."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

import tieringlab.experiments  # noqa: F401  (registers every section: this file must not depend on test order)
from tieringlab import params
from tieringlab.params import ParamsError

REPO = Path(__file__).resolve().parent.parent


def write(tmp_path, data) -> Path:
    p = tmp_path / "params.yaml"
    p.write_text(yaml.safe_dump(data))
    return p


def repo_params() -> dict:
    return yaml.safe_load((REPO / "params.yaml").read_text())


def test_repo_params_yaml_is_valid():
    loaded = params.load(REPO / "params.yaml")
    assert isinstance(loaded["seed"], int)
    assert set(loaded) - {"seed"} <= set(params.sections())


def test_every_section_in_params_yaml_and_every_default_valid():
    """Each registered section validates with its own defaults (the schema is self-consistent)."""
    for name, cls in params.sections().items():
        defaults = {f.name: f.default for f in dataclasses.fields(cls)}
        params.validate_section(name, defaults, partial=False)


def test_unknown_top_level_key(tmp_path):
    data = repo_params() | {"quikstart": {}}
    with pytest.raises(ParamsError, match=r"quikstart: unknown top-level key; allowed: .*quickstart"):
        params.load(write(tmp_path, data))


def test_unknown_parameter_names_section_and_allowed(tmp_path):
    data = repo_params()
    data["quickstart"]["cache_size"] = 3
    with pytest.raises(ParamsError, match=r"quickstart\.cache_size: unknown parameter; allowed: .*cache_sizes_mb"):
        params.load(write(tmp_path, data))


@pytest.mark.parametrize(
    ("key", "value", "pattern"),
    [
        ("line_bytes", 4000, r"quickstart\.line_bytes: expected one of 512, .*4096.*got 4000"),
        ("line_bytes", "4096", r"quickstart\.line_bytes: expected one of .* got '4096'"),
        ("max_requests", -5, r"quickstart\.max_requests: expected an integer >= 0, got -5"),
        ("max_requests", 1.5, r"quickstart\.max_requests: expected an integer >= 0, got 1\.5"),
        ("max_requests", True, r"quickstart\.max_requests: expected an integer >= 0, got True"),
        ("reaccess_window_s", 0.0, r"quickstart\.reaccess_window_s: expected a number >= 1\.0 \(s\), got 0\.0"),
        ("cache_sizes_mb", [], r"quickstart\.cache_sizes_mb: expected a non-empty list of numbers"),
        ("cache_sizes_mb", [1, -2], r"quickstart\.cache_sizes_mb\[1\]: expected a number >= 0\.001, got -2"),
        ("cache_sizes_mb", 5, r"quickstart\.cache_sizes_mb: expected a non-empty list of numbers"),
    ],
)
def test_bad_values_name_key_and_allowed(tmp_path, key, value, pattern):
    data = repo_params()
    data["quickstart"][key] = value
    with pytest.raises(ParamsError, match=pattern):
        params.load(write(tmp_path, data))


def test_bad_seed_and_missing_seed(tmp_path):
    data = repo_params() | {"seed": -1}
    with pytest.raises(ParamsError, match=r"seed: expected an integer in \[0, "):
        params.load(write(tmp_path, data))
    data.pop("seed")
    with pytest.raises(ParamsError, match=r"seed: missing"):
        params.load(write(tmp_path, data))


def test_not_yaml_and_missing_file(tmp_path):
    p = tmp_path / "params.yaml"
    p.write_text("seed: [1,\n")
    with pytest.raises(ParamsError, match="not valid YAML"):
        params.load(p)
    with pytest.raises(ParamsError, match="file not found"):
        params.load(tmp_path / "nope.yaml")


def test_lists_become_tuples_and_ints_become_floats(tmp_path):
    data = repo_params()
    data["quickstart"]["cache_sizes_mb"] = [1, 2]
    loaded = params.load(write(tmp_path, data))
    assert loaded["quickstart"].cache_sizes_mb == (1.0, 2.0)
    assert all(isinstance(v, float) for v in loaded["quickstart"].cache_sizes_mb)


def test_check_notebook_namespace():
    ns = {"max_requests": 10, "line_bytes": 4096, "unrelated": object()}
    p = params.check("quickstart", ns)
    assert p.max_requests == 10
    with pytest.raises(ParamsError, match=r"notebook parameters: quickstart\.max_requests"):
        params.check("quickstart", {"max_requests": -1})


def test_cli_reports_bad_params(tmp_path, capsys):
    from tieringlab.cli import main

    data = repo_params()
    data["quickstart"]["line_bytes"] = 3
    assert main(["params", "check", str(write(tmp_path, data))]) == 2
    err = capsys.readouterr().err
    assert "quickstart.line_bytes: expected one of" in err
