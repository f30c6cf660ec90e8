"""Progress bars: forced on/off by TIERINGLAB_PROGRESS, silent in tests and when stderr is not a TTY."""

from __future__ import annotations

import pytest

from tieringlab import progress


def test_silent_under_pytest(monkeypatch):
    monkeypatch.delenv("TIERINGLAB_PROGRESS", raising=False)
    assert not progress.enabled()
    assert progress.progress(range(3)).disable


def test_forced(monkeypatch):
    monkeypatch.setenv("TIERINGLAB_PROGRESS", "1")
    assert progress.enabled()
    bar = progress.progress(range(3), desc="x")
    assert not bar.disable and list(bar) == [0, 1, 2]
    monkeypatch.setenv("TIERINGLAB_PROGRESS", "0")
    assert not progress.enabled()


def test_non_tty_is_silent(monkeypatch):
    monkeypatch.delenv("TIERINGLAB_PROGRESS", raising=False)
    monkeypatch.delenv("PYTEST_CURRENT_TEST", raising=False)
    monkeypatch.setattr("sys.stderr.isatty", lambda: False, raising=False)
    assert not progress.enabled()


def test_bad_value(monkeypatch):
    monkeypatch.setenv("TIERINGLAB_PROGRESS", "yes")
    with pytest.raises(ValueError, match="TIERINGLAB_PROGRESS must be '0' or '1'"):
        progress.enabled()
