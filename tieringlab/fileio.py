"""Atomic file writes: write to a temporary file in the target directory, then rename.

An interrupted run never leaves a half-written result that DVC (or a reader) would take as done.

Temporary files are named ``.<target name>.tmp-<random>.tmp``: hidden, and ending in ``.tmp`` whatever
the target's suffix, so no reader that globs for results (``metrics/*.json``, ``*.csv``) ever matches
one, and git ignores them (``*.tmp`` in ``.gitignore``). A process killed between the write and the
rename (``kill -9``) leaves such a file behind; :func:`remove_stale_temps` deletes them, and the writers
that own a directory (:class:`tieringlab.results.Outputs`, the report, the pipeline) call it before
they write there.

**All-or-nothing installs.** :func:`install` moves a set of staged files and folders onto their
targets so that a crash at any point leaves either every old target or, once completed, every new
one: it first writes a journal naming every move (atomically: the commit point), then sets each old
target aside (``.<name>.old-<pid>``), renames the staged one onto it, and only when every new one is
in place deletes the old ones and then the journal. A process killed before the journal exists
changed no target; one killed after it leaves a journal that :func:`roll_forward` (called by the
next run or reader, see :func:`tieringlab.results.complete_installs`) completes; every step of it
can be repeated, so a crash during the roll-forward is completed by the next one. :func:`locked`
keeps two processes from installing (or rolling forward) the same thing at once.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

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


# ------------------------------------------------------------------------------------ locks

@contextlib.contextmanager
def locked(path: str | os.PathLike, *, wait: bool = True) -> Iterator[Path]:
    """Hold an exclusive lock on the file ``path`` (created, and removed on release) while the block runs.

    The lock is ``flock``'s: the system drops it when its holder dies, even by ``kill -9``, so a crash
    never leaves a stale lock (a leftover file is locked again). ``wait=False`` raises
    :class:`BlockingIOError` at once when another process holds it. The holder's process id is written
    into the file (:func:`lock_holder` reads it for an error message).
    """
    import fcntl  # noqa: PLC0415  (POSIX only)

    path = Path(path)
    while True:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666 & ~_umask())
        except FileNotFoundError:  # the folder was removed between the two calls (another holder's cleanup)
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(path))
            except FileNotFoundError:
                same = False
        except BaseException:
            os.close(fd)
            raise
        if same:
            break
        os.close(fd)  # the previous holder removed the file while we waited: lock the one there now
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield path
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # while still locked: a waiter that then gets the old file sees it is gone
        os.close(fd)


def lock_holder(path: str | os.PathLike) -> str:
    """The process id written in lock file ``path`` by its holder (``"?"`` if unreadable)."""
    with contextlib.suppress(OSError, UnicodeDecodeError):
        text = Path(path).read_text(encoding="utf-8").strip()
        if text.isdigit():
            return text
    return "?"


# ------------------------------------------------------------------------------------ all-or-nothing installs

#: The format version of an install journal.
JOURNAL_FORMAT = 1
_ASIDE = re.compile(r"^\.(?P<name>.+)\.old-\d+$")


class JournalError(ValueError):
    """An install journal that cannot be read or names paths an install never writes (edited by hand)."""


def remove_tree(path: str | os.PathLike) -> None:
    """Delete a file, a symlink (not what it points to) or a folder with everything in it; nothing if missing."""
    path = Path(path)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()


def relative(path: str | os.PathLike, base: str | os.PathLike) -> str:
    """``path`` relative to ``base`` (POSIX separators) when inside it, else as given: what an install journal
    records (it then survives moving the whole tree) and what an executed notebook records (the same in
    every clone)."""
    try:
        return Path(path).relative_to(base).as_posix()
    except ValueError:
        return str(path)


def install(moves: list[tuple[Path | None, Path]], journal: str | os.PathLike, *, base: str | os.PathLike,
            remove: tuple[Path, ...] = ()) -> None:
    """Move every ``(staged, target)`` of ``moves`` onto its target, all or nothing across a crash (module
    docstring); ``staged`` None removes ``target``. ``journal`` (a file beside the staged ones) records the
    plan, paths inside ``base`` relative to it; ``remove`` lists what to delete once every move is done
    (the emptied staging folder). Old targets are deleted only after every new one is in place."""
    base, journal = Path(base), Path(journal)
    entries = []
    for staged, target in moves:
        target = Path(target)
        target.parent.mkdir(parents=True, exist_ok=True)  # before the commit: an empty folder changes no result
        aside = target.parent / f".{target.name}.old-{os.getpid()}"
        entries.append({"staged": None if staged is None else relative(Path(staged), base),
                        "target": relative(target, base), "aside": relative(aside, base)})
    plan = {"install": JOURNAL_FORMAT, "moves": entries, "remove": [relative(Path(p), base) for p in remove]}
    write_text(journal, json.dumps(plan, indent=1) + "\n")  # the commit point
    roll_forward(journal, base=base)


def read_journal(journal: str | os.PathLike, *, base: str | os.PathLike) -> dict:
    """The plan in ``journal`` with absolute paths; :class:`JournalError` naming the file if it is not one
    :func:`install` wrote (a staged path outside the journal's folder, a set-aside name not derived from
    its target: what a roll-forward would move or delete must be what an install would)."""
    journal, base = Path(journal), Path(base)
    here = journal.parent

    def bad(why: str) -> JournalError:
        return JournalError(f"{journal}: not an install journal of tieringlab ({why}); the install it records "
                            f"cannot be completed: delete this file and rerun the stage")

    try:
        plan = json.loads(journal.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise bad(f"line {exc.lineno}: not valid JSON: {exc.msg}") from None
    except UnicodeDecodeError:
        raise bad("not UTF-8 text") from None
    if not isinstance(plan, dict) or plan.get("install") != JOURNAL_FORMAT:
        raise bad(f"expected an object with 'install': {JOURNAL_FORMAT}")
    moves, remove = plan.get("moves"), plan.get("remove", [])
    if not isinstance(moves, list) or not isinstance(remove, list) or not all(isinstance(r, str) for r in remove):
        raise bad("expected 'moves' and 'remove' lists")

    def where(text, key: str, i: int) -> Path:
        if not isinstance(text, str) or not text:
            raise bad(f"moves[{i}]: {key!r} must be a path")
        p = Path(text)
        return p if p.is_absolute() else base / p

    def inside(p: Path, folder: Path) -> bool:
        return ".." not in p.parts and folder in p.parents

    out = []
    for i, m in enumerate(moves):
        if not isinstance(m, dict):
            raise bad(f"moves[{i}]: expected an object")
        target, aside = where(m.get("target"), "target", i), where(m.get("aside"), "aside", i)
        staged = None if m.get("staged") is None else where(m.get("staged"), "staged", i)
        match = _ASIDE.match(aside.name)
        if aside.parent != target.parent or not match or match.group("name") != target.name:
            raise bad(f"moves[{i}]: 'aside' must be .{target.name}.old-<pid> beside {target}")
        if staged is not None and not inside(staged, here):
            raise bad(f"moves[{i}]: 'staged' must be inside {here}")
        out.append((staged, target, aside))
    gone = [base / r for r in remove]
    if not all(inside(p, here) for p in gone):
        raise bad(f"'remove' must name paths inside {here}")
    return {"moves": out, "remove": gone}


def roll_forward(journal: str | os.PathLike, *, base: str | os.PathLike) -> None:
    """Complete the install ``journal`` records (see :func:`install`). Every step looks at what is there and
    does only what is left, so it may be repeated after a crash at any point. The caller holds the lock
    that keeps other installers of the same targets out."""
    journal = Path(journal)
    plan = read_journal(journal, base=base)
    for staged, target, aside in plan["moves"]:
        if staged is not None and not os.path.lexists(staged):
            continue  # already moved into place
        if os.path.lexists(target):
            if os.path.lexists(aside):
                remove_tree(aside)  # cannot happen through install; a target replaced by hand
            os.replace(target, aside)  # the old copy, kept until every new one is in place
        if staged is not None:
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staged, target)
    for _, _, aside in plan["moves"]:
        remove_tree(aside)
    for p in plan["remove"]:
        remove_tree(p)
    journal.unlink()
