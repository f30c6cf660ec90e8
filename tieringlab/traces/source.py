"""One entry point for "give me trace X" that every experiment uses: the twin or the verified real file.

The shared ``traces`` section of ``params.yaml`` (:class:`tieringlab.experiments.trace_characterization.TracesParams`)
says which: ``source: twin`` (default; :func:`tieringlab.traces.msr_twin` at ``scale``) or ``source: msr``
(the real SNIA file under ``msr_dir``, used only when its md5 is pinned in ``msr_md5`` and matches).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tieringlab import data, paths
from tieringlab.traces.readers import read_cloudphysics, read_msr
from tieringlab.traces.twins import PAPER_NAMES, TWINS, msr_twin
from tieringlab.units import GiB

__all__ = ["load", "effective_scale", "section_dict", "known_names"]


def section_dict(traces: Any) -> dict:
    """The ``traces`` params section as a plain dict (from a dict, a dataclass or None)."""
    if traces is None:
        return {}
    if dataclasses.is_dataclass(traces):
        return dataclasses.asdict(traces)
    if isinstance(traces, Mapping):
        return dict(traces)
    raise TypeError(f"traces must be the 'traces' params section (dict or dataclass), got {type(traces).__name__}")


def effective_scale(name: str, traces: Any = None) -> float:
    """The twin scale used for ``name``: ``traces.scale``, capped so the working set stays under
    ``traces.max_wss_gb`` (0 = no cap) to bound memory on large twins such as usr_2 (382.7 GB)."""
    t = section_dict(traces)
    scale = float(t.get("scale", 1.0))
    cap = float(t.get("max_wss_gb", 0.0) or 0.0)
    spec = TWINS[_twin_key(name)]
    if cap > 0:
        scale = min(scale, cap * GiB / spec.wss_bytes)
    return scale


def known_names() -> list[str]:
    """Every name :func:`load` takes: the MSR file names of the twins, the papers' names, ``"cloudphysics"``."""
    return ["cloudphysics", *TWINS, *(n for n in PAPER_NAMES if n not in TWINS)]


def _twin_key(name: str) -> str:
    """The MSR file name of trace ``name`` (file or paper name); ``KeyError`` listing the known names."""
    key = PAPER_NAMES.get(name, name) if isinstance(name, str) else name
    if not isinstance(key, str) or key not in TWINS:
        raise KeyError(f"unknown trace {name!r}; known: {', '.join(known_names())}")
    return key


def load(name: str, traces: Any = None, seed: int = 0):
    """Trace ``name`` (MSR file name, paper name, or ``"cloudphysics"``) as a trace Dataset.

    ``traces`` is the ``traces`` params section (dict or dataclass). With ``source="twin"`` the result is
    the synthetic twin at :func:`effective_scale`; with ``source="msr"`` it is the real MSR file, which
    must be present under ``msr_dir`` and match the md5 pinned for it in ``msr_md5``
    (:class:`tieringlab.data.UnverifiedError` if none is pinned, :class:`tieringlab.data.ChecksumError`
    if it differs). ``"cloudphysics"`` is always the real, pinned CloudPhysics trace. An unknown name is a
    ``KeyError`` listing the known ones (:func:`known_names`).
    """
    t = section_dict(traces)
    if name == "cloudphysics":
        return read_cloudphysics(data.locate("cloudphysics"), name="cloudphysics")
    source = t.get("source", "twin")
    if source not in ("twin", "msr"):
        raise ValueError(f"traces.source must be 'twin' or 'msr', got {source!r}")
    pins = data.parse_md5_pins(t.get("msr_md5", "")) if source == "msr" else {}
    if source == "msr" and isinstance(name, str) and PAPER_NAMES.get(name, name) in pins:
        key = PAPER_NAMES.get(name, name)  # a real MSR file pinned by md5: a name beyond the twins is fine
    else:
        key = _twin_key(name)
    if source == "twin":
        return msr_twin(key, scale=effective_scale(key, t), seed=seed)
    msr_dir = Path(t.get("msr_dir", "data/msr"))
    path = msr_dir if msr_dir.is_absolute() else paths.repo_root() / msr_dir
    path = path / f"{key}.csv.gz"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: MSR trace {key!r} not found; download it from "
                                f"{t.get('msr_base_url', data.MSR_BASE_URL)} and pin its md5 in traces.msr_md5")
    data.verify(path, pins.get(key), origin=str(path))
    ds = read_msr(path, name=key)
    ds.attrs["scale"] = 1.0
    return ds
