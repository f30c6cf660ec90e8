"""Atomic file writes: write to a temporary file in the target directory, then rename.

An interrupted run never leaves a half-written result that DVC (or a reader) would take as done.

Temporary files are named ``.<target name>.tmp-<random>.tmp``: hidden, and ending in ``.tmp`` whatever
the target's suffix, so no reader that globs for results (``metrics/*.json``, ``*.csv``) ever matches
one, and git ignores them (``*.tmp`` in ``.gitignore``). A process killed between the write and the
rename (``kill -9``) leaves such a file behind; :func:`remove_stale_temps` deletes them, and the writers
that own a directory (:class:`tieringlab.results.Outputs`, the report, the pipeline) call it before
they write there.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Callable, Iterator

#: Marks a temporary name: ``.<target name>`` + TMP_MARK + random + TMP_SUFFIX.
TMP_MARK = ".tmp-"
TMP_SUFFIX = ".tmp"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def is_temp_name(name: str) -> bool:
    """Whether ``name`` is a temporary file of :func:`atomic_path` (or of its earlier ``.<name>.tmp-*`` form)."""
    return name.startswith(".") and TMP_MARK in name


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success rename it onto ``path``, else delete it.

    The temporary name ends in ``.tmp`` (``suffix`` overrides it); writers that choose a format by
    extension must be told the format (``Outputs.figure`` passes ``format=`` to matplotlib).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}{TMP_MARK}", suffix=TMP_SUFFIX if suffix is None else suffix,
                               dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    os.chmod(tmp_path, 0o666 & ~_umask())  # mkstemp creates 0600; results are ordinary files
    try:
        yield tmp_path
        os.replace(tmp_path, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp_path.unlink()
        raise


def remove_stale_temps(directory: str | os.PathLike, names: tuple[str, ...] | None = None) -> list[Path]:
    """Delete temporary files that an interrupted :func:`atomic_path` left in ``directory`` (not recursive).

    ``names`` limits it to the temporaries of those target names (a writer cleans only what it owns, so
    two stages writing into one folder never delete each other's live temporaries). Returns what was
    removed; a missing directory is nothing to clean.
    """
    d = Path(directory)
    if not d.is_dir():
        return []
    removed = []
    for p in d.iterdir():
        if not is_temp_name(p.name) or not p.is_file() or p.is_symlink():
            continue
        if names is not None and not any(p.name.startswith(f".{n}{TMP_MARK}") for n in names):
            continue
        with contextlib.suppress(FileNotFoundError):
            p.unlink()
            removed.append(p)
    return removed


def write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` to ``path`` atomically (UTF-8)."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def write_with(path: str | os.PathLike, writer: Callable[[Path], object]) -> Path:
    """Call ``writer(tmp_path)`` and rename the result onto ``path`` atomically."""
    with atomic_path(path) as tmp:
        writer(tmp)
    return Path(path)
