"""Helpers shared by the params tests: the repository's params.yaml as data, a params file written from
data, and ``tieringlab params check`` expected to fail with given fragments and no traceback."""

from __future__ import annotations

from pathlib import Path

import yaml

from tieringlab.cli import main as cli

REPO = Path(__file__).resolve().parent.parent


def repo_params() -> dict:
    return yaml.safe_load((REPO / "params.yaml").read_text())


def write_params(tmp_path, data, name="params.yaml") -> Path:
    p = tmp_path / name
    p.write_text(yaml.safe_dump(data, sort_keys=False))
    return p


def check_fails(path, capsys, *fragments) -> str:
    assert cli(["params", "check", str(path)]) == 2
    err = capsys.readouterr().err
    for f in fragments:
        assert f in err, err
    assert "Traceback" not in err
    return err


def section_check_fails(tmp_path, capsys, section: str, values: dict, key: str, why: str) -> Path:
    """The repository's params.yaml with ``values`` set in ``section`` fails ``params check`` naming ``key``
    and ``why``; returns the file written."""
    data = repo_params()
    data[section].update(values)
    path = write_params(tmp_path, data)
    check_fails(path, capsys, f"{path}: {key}", why)
    return path
