"""Progress bars for long library calls.

Shown on an interactive terminal and in Jupyter; silent when output is not a TTY (logs, CI) and in
tests. ``TIERINGLAB_PROGRESS=1`` forces bars on, ``TIERINGLAB_PROGRESS=0`` forces them off
(``make test`` sets 0).
"""

from __future__ import annotations

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


def progress(iterable: Iterable[T] | None = None, *, total: int | None = None, desc: str | None = None,
             unit: str = "it", leave: bool = True) -> tqdm:
    """A tqdm bar over ``iterable`` (or a manual bar with ``total``), disabled where bars are not wanted."""
    return tqdm(iterable, total=total, desc=desc, unit=unit, leave=leave, disable=not enabled(),
                dynamic_ncols=True, file=sys.stderr)
