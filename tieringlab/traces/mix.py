"""Multi-VM workloads: several block traces merged into one trace with a per-request VM id.

The vFRM paper (Sec. 5.3) and the thesis (Sec. 4.3.3) build the workloads ``cf4``, ``cuf4`` and
``all8`` by mixing MSR traces, one per VM: "The timestamps of IO requests in each trace are
normalized by a unified simulation start time and then used to determine the arrival times for each
IO request in the workload." :func:`mix_traces` does exactly that, with the choices the papers leave
open written down:

1. **Aligned start.** Member ``v``'s request times become ``t - min(t)`` (time since its own first
   request), so every VM starts at ``t = 0``, the common start of the mix.
2. **Merged order.** Requests are sorted by time; ties go to the lower VM index, then to the earlier
   request of the member (a stable, total order, so the mix is deterministic). A member whose file is
   not in time order (a real trace can have small inversions) keeps its own file order: the sort key
   of its request is the running maximum of its times, and ``time`` keeps the request's own time.
3. **Distinct address spaces.** Each VM has its own virtual disk: member ``v``'s byte offsets are
   shifted by ``base_v``, the sum of the earlier members' volume sizes (highest byte touched), each
   rounded up to ``align_bytes`` (default 1 GiB, a multiple of the 4 KB page, the 1 MB bin and the
   1 GB sub-LUN), so no page, bin or sub-LUN of one VM shares an address with another VM's. Policies
   that know VMs (vFRM's ``vm`` argument) and policies that see only addresses (LRU/ARC/CAR page
   caches) then agree on which data is distinct.

The result has the common trace schema (:func:`tieringlab.traces.readers.make_dataset`) plus
``vm`` (int64 VM index, 0 = first member) and ``member_request`` (the request's index in its own
trace); its attrs record the members (``members``, ``member_sources``, ``member_scales``,
``member_offsets``, ``member_volumes``, ``member_requests``) and ``align_bytes``.

This lives in :mod:`tieringlab.traces` rather than in one experiment: it turns traces into a trace
(the first arrow of the data flow in DESIGN.md), and any multi-VM experiment reads mixes the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr

from tieringlab.traces.readers import make_dataset
from tieringlab.units import SUBLUN_BYTES

__all__ = ["mix_traces", "member_of"]


def _volume(ds: xr.Dataset) -> int:
    off = np.asarray(ds["offset"].values, dtype=np.int64)
    size = np.asarray(ds["size"].values, dtype=np.int64)
    return int((off + np.maximum(size, 0)).max()) if off.size else 0


def mix_traces(traces: Sequence[xr.Dataset], *, name: str = "mix", names: Sequence[str] | None = None,
               align_bytes: int = SUBLUN_BYTES) -> xr.Dataset:
    """Merge ``traces`` (one per VM, in VM order) into one multi-VM trace (vFRM paper Sec. 5.3).

    ``names`` labels the members (default: each trace's ``name`` attr); ``align_bytes`` is the
    alignment of each VM's address base (see choice 3 of the module docstring). Returns a Dataset
    over ``request`` with ``time`` (s since the common start), ``offset`` (bytes, shifted per VM),
    ``size``, ``is_write``, ``vm`` and ``member_request``.
    """
    traces = list(traces)
    if not traces:
        raise ValueError("traces must hold at least one trace Dataset (one per VM)")
    if int(align_bytes) <= 0:
        raise ValueError(f"align_bytes must be a positive byte count, got {align_bytes!r}")
    align = int(align_bytes)
    for i, ds in enumerate(traces):
        if not isinstance(ds, xr.Dataset):
            raise TypeError(f"traces[{i}] must be a trace xarray.Dataset, got {type(ds).__name__}")
        missing = [v for v in ("time", "offset", "size", "is_write") if v not in ds]
        if missing:
            raise ValueError(f"traces[{i}] is missing variable(s) {missing}; needs time, offset, size, is_write")
        if ds.sizes.get("request", 0) == 0:
            raise ValueError(f"traces[{i}] ({ds.attrs.get('name', '?')}) has no requests")
        off = np.asarray(ds["offset"].values)
        if np.any(off < 0):
            raise ValueError(f"traces[{i}] ({ds.attrs.get('name', '?')}): offset must be >= 0 bytes; request "
                             f"{int(np.argmax(off < 0))} is negative")
    if names is None:
        names = [str(ds.attrs.get("name", f"vm{i}")) for i, ds in enumerate(traces)]
    names = [str(n) for n in names]
    if len(names) != len(traces):
        raise ValueError(f"names must have one label per trace ({len(traces)}), got {len(names)}")

    n = np.array([ds.sizes["request"] for ds in traces], dtype=np.int64)
    volumes = np.array([_volume(ds) for ds in traces], dtype=np.int64)
    spans = -(-volumes // align) * align
    bases = np.concatenate([[0], np.cumsum(spans)[:-1]]).astype(np.int64)

    vm = np.repeat(np.arange(len(traces), dtype=np.int64), n)
    member_request = np.concatenate([np.arange(k, dtype=np.int64) for k in n])
    times = [np.asarray(ds["time"].values, dtype=np.float64) for ds in traces]
    since_start = [x - x.min() for x in times]
    t = np.concatenate(since_start)
    key = np.concatenate([np.maximum.accumulate(x) for x in since_start])
    offset = np.concatenate([np.asarray(ds["offset"].values, dtype=np.int64) + b for ds, b in zip(traces, bases)])
    size = np.concatenate([np.asarray(ds["size"].values, dtype=np.int64) for ds in traces])
    is_write = np.concatenate([np.asarray(ds["is_write"].values, dtype=bool) for ds in traces])

    order = np.lexsort((member_request, vm, key))  # time, then VM, then the member's own order
    durations = [float(ds.attrs.get("duration_s", 0.0) or 0.0) for ds in traces]
    out = make_dataset(
        t[order], offset[order], size[order], is_write[order], name=name, source="mix",
        members=names, member_sources=[str(ds.attrs.get("source", "")) for ds in traces],
        member_scales=[float(ds.attrs.get("scale", 1.0)) for ds in traces],
        member_offsets=bases.tolist(), member_volumes=volumes.tolist(), member_requests=n.tolist(),
        align_bytes=align, duration_s=max([*durations, float(t.max())]),
    )
    out["vm"] = ("request", vm[order], {"long_name": "VM index (position in attrs['members'])"})
    out["member_request"] = ("request", member_request[order],
                             {"long_name": "index of the request in its member trace"})
    return out


def member_of(mixed: xr.Dataset, v: int | str) -> xr.Dataset:
    """The requests of VM ``v`` (index or member name) of a mix, in mix order, offsets shifted back."""
    members = list(mixed.attrs.get("members", []))
    if not members or "vm" not in mixed:
        raise ValueError("mixed must be a trace built by mix_traces (needs a 'vm' variable and attrs['members'])")
    if isinstance(v, str):
        if v not in members:
            raise KeyError(f"no member {v!r} in this mix; members: {', '.join(members)}")
        v = members.index(v)
    if not 0 <= int(v) < len(members):
        raise IndexError(f"VM index {v} out of range 0..{len(members) - 1}")
    sel = mixed.isel(request=np.flatnonzero(mixed["vm"].values == int(v)))
    sel = sel.assign(offset=sel["offset"] - int(mixed.attrs["member_offsets"][int(v)]))
    sel.attrs = {"name": members[int(v)], "source": mixed.attrs["member_sources"][int(v)]}
    return sel
