"""tieringlab.profile: each thread's CPU is charged to the function of the package that burned it, waiting is
charged nothing, and the records of several processes add up (the sampler behind the Timings table's costs)."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import threading
import time
import weakref

import pytest

from tieringlab import pipeline, profile


def burn(cpu_s: float) -> None:
    """Spin until this thread has used ``cpu_s`` seconds of CPU."""
    t0 = time.thread_time()
    while time.thread_time() - t0 < cpu_s:
        pass


def burn_in_worker(cpu_s: float) -> None:
    burn(cpu_s)


def wait(seconds: float) -> None:
    time.sleep(seconds)


def test_cpu_goes_to_the_function_that_burns_it_and_waiting_costs_nothing():
    # package = this module: burn_in_worker is never the innermost frame (burn is), so a worker thread's CPU
    # goes to burn too; wait() sleeps on the main thread while the worker burns.
    s = profile.Sampler(package=__name__).start()
    worker = threading.Thread(target=burn_in_worker, args=(0.4,))
    worker.start()
    wait(0.2)
    worker.join()
    burn(0.2)
    s.stop()
    name = f"{__name__}.burn"
    # one tick's CPU (<= 0.05 s per thread) may land on a neighbour at each transition
    assert s.costs[name] == pytest.approx(0.6, abs=0.15)
    assert s.costs.get(f"{__name__}.wait", 0.0) < 0.05
    assert s.costs[name] > 0.8 * s.sampled_cpu_s
    snap = s.snapshot()
    assert snap["sampled_cpu_s"] <= snap["process_cpu_s"] * 1.05


def test_labels_name_the_innermost_package_frame_or_the_module():
    def inner():
        return sys._getframe()

    frame = inner()
    assert profile._label(frame, __name__).endswith("inner")
    assert profile._label(frame, "no_such_package") == f"<{__name__}>"


def test_records_of_several_processes_add_up_and_are_removed(tmp_path):
    for pid, costs, cpu in ((11, {"tieringlab.a": 3.0, "tieringlab.b": 1.0}, 5.0), (12, {"tieringlab.a": 1.0}, 2.0)):
        (tmp_path / f"profile-{pid}.json").write_text(json.dumps(
            {"pid": pid, "interval_s": 0.05, "process_cpu_s": cpu, "sampled_cpu_s": sum(costs.values()),
             "costs": costs}))
    got = profile.collect(tmp_path, top=1)
    assert got == {"process_cpu_s": 7.0, "sampled_cpu_s": 5.0, "native_cpu_s": 0.0, "interval_s": 0.05,
                   "top": [["tieringlab.a", 4.0, round(4.0 / 7.0, 4)]]}
    assert not list(tmp_path.iterdir()) and profile.collect(tmp_path) is None
    (tmp_path / "profile-3.json").write_text("{")
    with pytest.raises(ValueError, match="profile-3.json: not a profile record"):
        profile.collect(tmp_path)


def test_a_running_sampler_writes_its_record_whole(tmp_path):
    s = profile.Sampler(package=__name__, out=tmp_path / "profile-1.json", flush_s=0.1).start()
    burn(0.3)
    s.stop()
    rec = json.loads((tmp_path / "profile-1.json").read_text())
    assert rec["costs"][f"{__name__}.burn"] > 0.2 and not list(tmp_path.glob(".*tmp"))


def test_bad_settings_are_named(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="interval_s must be > 0"):
        profile.Sampler(interval_s=0)
    monkeypatch.setattr(profile, "_RUNNING", None)
    monkeypatch.setenv(profile.ENV, str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="TIERINGLAB_PROFILE=.*not a folder"):
        profile.start_from_env()


def test_cpu_of_native_threads_goes_to_what_the_main_thread_runs(monkeypatch):
    # XLA's and numba's worker threads are not Python threads: their CPU shows only in the process's clock. Here
    # every Python thread's clock stands still while the process's advances by 1.5 s: all of it is native and is
    # charged to the main thread's function, which is waiting (in join) for the tick to finish.
    s = profile.Sampler(package=__name__)
    known = set(sys._current_frames())
    for ident in known:
        s._last[ident] = 7.0
    monkeypatch.setattr(profile, "_thread_cpu", lambda ident: 7.0 if ident in known else 0.0)  # 0: the new tick
    s._process_last = 100.0
    monkeypatch.setattr(profile.time, "process_time", lambda: 101.5)
    tick = threading.Thread(target=s._tick)
    tick.start()
    tick.join()
    assert s.native_cpu_s == 1.5
    assert dict(s.costs) == {f"{__name__}.test_cpu_of_native_threads_goes_to_what_the_main_thread_runs": 1.5}


DEADLOCK_SCRIPT = """
import gc, sys, threading, time
from tieringlab import profile
{patch}
gc.set_threshold(5, 1, 1)  # collect often: one may start inside the sampler's sys._current_frames()
def make(k):
    for _ in range(k):
        a = threading.local(); b = [a]; a.x = b  # a cycle holding a threading.local, freed by the collector
def deeper(k):
    make(k)  # a fresh frame each call: the sampler makes its frame object, an allocation
s = profile.Sampler(package="__main__", interval_s=0.0005).start()
t0 = time.monotonic()
while time.monotonic() - t0 < {seconds}:
    deeper(3)
s.stop()
print("finished")
"""


def run_deadlock_script(patch: str, seconds: float, timeout: float) -> bool:
    """Whether the script finished (False: still running after ``timeout`` s, i.e. deadlocked)."""
    try:
        out = subprocess.run([sys.executable, "-c", DEADLOCK_SCRIPT.format(patch=patch, seconds=seconds)],
                             capture_output=True, text=True, timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        return False
    return "finished" in out.stdout


def test_sampling_while_the_collector_frees_thread_locals_does_not_deadlock():
    # CPython 3.11: a collection started inside sys._current_frames() that frees a threading.local waits for the
    # thread-list lock _current_frames holds (notebook 05's kernel hung this way); profile._current_frames runs it
    # with the automatic collector off. The unpatched call hangs within seconds (checked when the fix was made:
    # run_deadlock_script("profile._current_frames = sys._current_frames", 2, 60) is False).
    assert run_deadlock_script("", seconds=2, timeout=120)


class _Payload:
    """A stand-in for a large array a sampled function holds in a local."""


def test_a_sampled_function_frees_its_locals_when_it_returns():
    # A frame object still referenced when its function returns keeps that function's locals alive; the sampler
    # must hold no frame past its tick (notebook 08's kernel peaked at 12.2 GB when it did). The collector is off,
    # so only reference counting can free the payload.
    refs, inside, leave = [], threading.Event(), threading.Event()

    def hold():
        payload = _Payload()
        refs.append(weakref.ref(payload))
        inside.set()
        leave.wait()

    s = profile.Sampler(package=__name__)
    was = gc.isenabled()
    gc.disable()
    try:
        worker = threading.Thread(target=hold)
        worker.start()
        inside.wait()
        s._tick()  # from this thread: its own frame is among sys._current_frames()
        s._tick()
        leave.set()
        worker.join()
        assert refs[0]() is None
    finally:
        if was:
            gc.enable()


def test_tieringlab_run_switches_the_stage_sampler(tmp_path):
    assert pipeline.kernel_env(tmp_path, environ={}) == {"TIERINGLAB_PROGRESS": "0", profile.ENV: str(tmp_path)}
    assert pipeline.kernel_env(tmp_path, environ={pipeline.PROFILE_SWITCH: "0"}) == {"TIERINGLAB_PROGRESS": "0"}
    with pytest.raises(ValueError, match=r"TIERINGLAB_STAGE_PROFILE='no': allowed values are 1 .* and 0"):
        pipeline.kernel_env(tmp_path, environ={pipeline.PROFILE_SWITCH: "no"})
