"""Progress bars for long library calls.

Shown on an interactive terminal and in Jupyter; silent when output is not a TTY (logs, CI) and in
tests. ``TIERINGLAB_PROGRESS=1`` forces bars on, ``TIERINGLAB_PROGRESS=0`` forces them off
(``make test`` and ``tieringlab run`` set 0).

In a Jupyter kernel a bar is one display output updated in place (an IPython display handle), never text
written to stderr: a notebook executed by hand with papermill, or saved from JupyterLab, keeps one line per bar
(its final state) instead of the hundreds of carriage-return fragments a terminal bar leaves in a stream output.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterable
from typing import TypeVar

from tqdm import tqdm

T = TypeVar("T")


def _in_notebook() -> bool:
    try:
        from IPython import get_ipython  # noqa: PLC0415
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and shell.__class__.__name__ == "ZMQInteractiveShell"


def enabled() -> bool:
    """Whether progress bars are shown in this process (see module docstring)."""
    forced = os.environ.get("TIERINGLAB_PROGRESS")
    if forced is not None:
        if forced not in {"0", "1"}:
            raise ValueError(f"TIERINGLAB_PROGRESS must be '0' or '1', got {forced!r}")
        return forced == "1"
    if "PYTEST_CURRENT_TEST" in os.environ:
        return False
    return _in_notebook() or sys.stderr.isatty()


class _DisplayBar(tqdm):
    """A tqdm bar rendered as one ``text/plain`` display output that each refresh replaces (``update_display_data``)."""

    def __init__(self, *args, **kwargs):
        self._handle = None  # tqdm's __init__ refreshes once before the handle exists
        super().__init__(*args, file=io.StringIO(), ncols=100, **kwargs)
        if not self.disable:
            from IPython.display import display  # noqa: PLC0415  (only inside a Jupyter kernel)

            self._handle = display({"text/plain": str(self)}, raw=True, display_id=True)

    def display(self, msg: str | None = None, pos: int | None = None) -> bool:
        if self._handle is not None:
            self._handle.update({"text/plain": str(self) if msg is None else msg}, raw=True)
        return True


def progress(iterable: Iterable[T] | None = None, *, total: int | None = None, desc: str | None = None,
             unit: str = "it", leave: bool = True) -> tqdm:
    """A tqdm bar over ``iterable`` (or a manual bar with ``total``), disabled where bars are not wanted."""
    shown = enabled()
    if shown and _in_notebook():
        return _DisplayBar(iterable, total=total, desc=desc, unit=unit, leave=leave)
    return tqdm(iterable, total=total, desc=desc, unit=unit, leave=leave, disable=not shown,
                dynamic_ncols=True, file=sys.stderr)
