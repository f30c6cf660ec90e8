"""Where a stage's CPU goes: a sampling profiler that charges each thread's CPU time to a function (issue 35).

``tieringlab run`` switches it on in the notebook's kernel (``TIERINGLAB_PROFILE=<folder>``, read when
``tieringlab`` is imported) and writes the top entries into the stage's log (``results/logs/<stage>.json``,
``stage.profile``); the README's Timings table shows each stage's three largest.

How it charges: a daemon thread wakes every :data:`INTERVAL_S` and, for every Python thread, reads how much CPU
time that thread used since the last tick (``time.pthread_getcpuclockid``: the kernel's per-thread clock, so a
thread waiting on a lock or a future is charged nothing, and a thread inside a compiled numba or C loop is charged
what it burns) and charges it to the innermost frame on that thread's stack whose module is in the package
(:data:`PACKAGE`): ``tieringlab.policies.caching.replay`` rather than numpy's or numba's internals under it
(a module's top-level code is ``import <module>``: the CPU of importing it and what it imports). CPU
with no package frame on the stack (the notebook's own code, imports) is charged to ``<module of the innermost
frame>``. A thread that holds the interpreter lock inside a long C call delays the next tick; the CPU it used
meanwhile is still measured by its clock and charged at the next tick, to its innermost package frame then (the
function that made the call, or the next line of it). The CPU no Python thread used in an interval (the process's
clock minus the threads' clocks: XLA's and numba's own worker threads, which run a computation the main thread
launched and waits for) is charged to the main thread's function at that tick, and counted in ``native_cpu_s``.
JAX dispatches asynchronously, so a jitted computation's CPU lands on the function that first reads its result
(``np.asarray``, ``block_until_ready``): notebook 07's EAFC scans show up as ``policies.eafc._to_dataset``.
So ``sampled_cpu_s`` ~= ``process_cpu_s``; a thread that ends between two ticks loses at most one interval's CPU.
The sampler's own thread is counted in the process's clock but charged to nothing.

Nothing here touches results: the figures go to the log only, which holds wall-clock data (never a DVC output).
"""

from __future__ import annotations

import atexit
import gc
import json
import os
import sys
import threading
import time
from collections import Counter
from pathlib import Path

__all__ = ["Sampler", "INTERVAL_S", "PACKAGE", "ENV", "start_from_env", "collect"]

#: Seconds between ticks: 20 per second costs ~0.1 % of one core (a stack walk per thread per tick) and resolves
#: any function that uses a few tenths of a second; a stage's costs are tens to thousands of seconds.
INTERVAL_S = 0.05
#: The module prefix whose functions are charged (see the module docstring).
PACKAGE = "tieringlab"
#: The environment variable naming the folder each profiled process writes ``profile-<pid>.json`` into.
ENV = "TIERINGLAB_PROFILE"
#: Seconds between two writes of a running process's figures (the last write is at exit), so a kernel that is
#: killed still leaves what it had measured up to then.
FLUSH_S = 5.0

_SKIP = ("tieringlab.profile", "tieringlab.progress")  # never the cost itself


def _thread_cpu(ident: int) -> float | None:
    try:
        return time.clock_gettime(time.pthread_getcpuclockid(ident))
    except (OSError, OverflowError, ValueError):  # the thread ended between listing and reading
        return None


def _current_frames() -> dict:
    """``sys._current_frames()`` with the automatic garbage collector off. CPython 3.11 builds the dict (and the
    frame objects of running functions) while it holds the runtime's thread-list lock; an allocation there can
    start a collection, and collecting a ``threading.local`` takes that same lock: the process deadlocks
    (seen: notebook 05's kernel stopped after 7 minutes; tests/test_profile.py reproduces it)."""
    enabled = gc.isenabled()
    if enabled:
        gc.disable()
    try:
        return sys._current_frames()
    finally:
        if enabled:
            gc.enable()


def _label(frame, package: str) -> str:
    """The innermost frame of ``package`` (module + qualified name) on ``frame``'s stack, else
    ``<module>`` of the innermost frame."""
    innermost = frame
    while frame is not None:
        mod = frame.f_globals.get("__name__", "")
        if mod.startswith(package) and not mod.startswith(_SKIP):
            name = frame.f_code.co_qualname
            return f"import {mod}" if name == "<module>" else f"{mod}.{name}"
        frame = frame.f_back
    return f"<{innermost.f_globals.get('__name__', '?')}>" if innermost is not None else "<?>"


class Sampler:
    """Charges every Python thread's CPU time to the function it runs (module docstring). ``start()``,
    ``stop()``; ``costs`` (a Counter, CPU seconds per function), ``sampled_cpu_s`` and ``process_cpu_s``
    (since ``start``); ``snapshot()`` gives them as one dict."""

    def __init__(self, *, interval_s: float = INTERVAL_S, package: str = PACKAGE, out: Path | None = None,
                 flush_s: float = FLUSH_S):
        if not interval_s > 0:
            raise ValueError(f"interval_s must be > 0 seconds; got {interval_s!r}")
        self.interval_s, self.package, self.out, self.flush_s = interval_s, package, out, flush_s
        self.costs: Counter = Counter()
        self._last: dict[int, float] = {}
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._cpu0 = self._wall0 = self._process_last = self.native_cpu_s = 0.0
        self._pid = os.getpid()

    def start(self) -> Sampler:
        self._cpu0, self._wall0 = time.process_time(), time.monotonic()
        self._process_last = self._cpu0
        for ident in _current_frames():  # threads already running are charged from now on
            cpu = _thread_cpu(ident)
            if cpu is not None:
                self._last[ident] = cpu
        self._thread = threading.Thread(target=self._loop, name="tieringlab-profile", daemon=True)
        self._thread.start()
        return self

    def _tick(self) -> None:
        me, main = threading.get_ident(), threading.main_thread().ident
        labels = self._labels(me)
        process = time.process_time()
        with self._lock:
            charged = 0.0
            for ident in (*labels, me):
                cpu = _thread_cpu(ident)
                if cpu is None:
                    continue
                used = cpu - self._last.get(ident, 0.0)  # a thread first seen: its whole CPU (it started later)
                self._last[ident] = cpu
                charged += max(used, 0.0)
                if used > 0 and ident != me:
                    self.costs[labels[ident]] += used
            for gone in set(self._last) - set(labels) - {me}:
                del self._last[gone]
            # what no Python thread used: native worker threads (XLA's, numba's), working for the main thread
            native = process - self._process_last - charged
            self._process_last = process
            if native > 0 and main in labels:
                self.native_cpu_s += native
                self.costs[labels[main]] += native

    def _labels(self, me: int) -> dict[int, str]:
        """Every other thread's label. The frame objects are dropped before this returns, and the sampler's own
        frame is never held: a frame object still referenced when its function returns keeps that function's
        locals alive, and holding this thread's own frame in a local would make a cycle (frame -> dict -> frame)
        that keeps every sampled thread's returned locals (arrays of gigabytes) until the cyclic collector runs
        (seen: notebook 08's kernel peaked at 12.2 GB instead of 4.8)."""
        frames = _current_frames()
        frames.pop(me, None)
        try:
            return {ident: _label(frame, self.package) for ident, frame in frames.items()}
        finally:
            frames.clear()

    def _loop(self) -> None:
        next_flush = time.monotonic() + self.flush_s
        while not self._stop.wait(self.interval_s):
            self._tick()
            if self.out is not None and time.monotonic() >= next_flush:
                self.write()
                next_flush = time.monotonic() + self.flush_s

    def stop(self) -> None:
        """Stop ticking (a last tick charges the CPU since the previous one) and write the figures if ``out``."""
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._thread = None
        self._tick()
        if self.out is not None:
            self.write()

    @property
    def sampled_cpu_s(self) -> float:
        return float(sum(self.costs.values()))

    def snapshot(self) -> dict:
        with self._lock:
            costs = dict(self.costs.most_common())
        return {"pid": os.getpid(), "interval_s": self.interval_s, "process_cpu_s": time.process_time() - self._cpu0,
                "wall_s": time.monotonic() - self._wall0, "sampled_cpu_s": float(sum(costs.values())),
                "native_cpu_s": self.native_cpu_s, "costs": costs}

    def write(self) -> None:
        """Write :meth:`snapshot` to ``out`` (a temporary file renamed over it: never half-written)."""
        if os.getpid() != self._pid:  # a forked child inherits the sampler, not its thread: the parent writes
            return
        tmp = self.out.with_name(f".{self.out.name}.tmp")
        tmp.write_text(json.dumps(self.snapshot(), indent=1), encoding="utf-8")
        os.replace(tmp, self.out)


_RUNNING: Sampler | None = None


def start_from_env() -> Sampler | None:
    """Start one sampler for this process when ``$TIERINGLAB_PROFILE`` names a folder (``tieringlab run`` sets it
    for the kernel); it writes ``<folder>/profile-<pid>.json`` every :data:`FLUSH_S` and at exit."""
    global _RUNNING
    folder = os.environ.get(ENV, "").strip()
    if not folder or _RUNNING is not None:
        return _RUNNING
    path = Path(folder)
    if not path.is_dir():
        raise ValueError(f"{ENV}={folder!r}: not a folder (tieringlab run sets it to the stage's staging folder)")
    _RUNNING = Sampler(out=path / f"profile-{os.getpid()}.json").start()
    atexit.register(_RUNNING.stop)
    return _RUNNING


def collect(folder: Path, top: int = 10) -> dict | None:
    """The figures of every ``profile-<pid>.json`` in ``folder`` added up (the kernel and any process it started):
    ``{"process_cpu_s", "sampled_cpu_s", "native_cpu_s", "interval_s", "top": [[function, cpu_s, share of the
    process CPU], ...]}`` with the ``top`` largest; None when no process wrote any. The files are removed."""
    files = sorted(Path(folder).glob("profile-*.json"))
    if not files:
        return None
    costs: Counter = Counter()
    cpu = sampled = native = 0.0
    interval = INTERVAL_S
    for f in files:
        try:
            rec = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"{f}: not a profile record ({exc})") from exc
        costs.update({k: float(v) for k, v in rec.get("costs", {}).items()})
        cpu += float(rec.get("process_cpu_s", 0.0))
        sampled += float(rec.get("sampled_cpu_s", 0.0))
        native += float(rec.get("native_cpu_s", 0.0))
        interval = float(rec.get("interval_s", interval))
        f.unlink()
    return {"process_cpu_s": round(cpu, 3), "sampled_cpu_s": round(sampled, 3), "native_cpu_s": round(native, 3),
            "interval_s": interval,
            "top": [[name, round(s, 3), round(s / cpu, 4) if cpu > 0 else None] for name, s in costs.most_common(top)]}
