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


def test_notebook_bar_is_one_output_updated_in_place(tmp_path, monkeypatch):
    """Executed by papermill (as a student runs a notebook by hand), a bar leaves one display output with its
    final state, and nothing on stderr: a terminal bar would leave a stream of carriage-return fragments."""
    import nbformat
    import papermill

    monkeypatch.setenv("TIERINGLAB_PROGRESS", "1")  # the kernel inherits it (pytest's own variable would silence it)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("from tieringlab.progress import progress\n"
                                          "total = 0\n"
                                          "for i in progress(range(400), desc='replay', unit='req'):\n"
                                          "    total += i\n"
                                          "print(total)")]
    src, out = tmp_path / "bar.ipynb", tmp_path / "out.ipynb"
    nbformat.write(nb, src)
    papermill.execute_notebook(str(src), str(out), kernel_name="python3", progress_bar=False,
                               cwd=str(tmp_path))
    outputs = nbformat.read(out, as_version=4).cells[-1].outputs
    streams = [(o.name, o.text) for o in outputs if o.output_type == "stream"]
    displays = [o for o in outputs if o.output_type == "display_data"]
    assert streams == [("stdout", "79800\n")], streams
    assert len(displays) == 1
    text = displays[0].data["text/plain"]
    assert text.startswith("replay: 100%") and "400/400" in text, text
