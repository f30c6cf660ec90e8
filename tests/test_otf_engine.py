"""The closed-loop OTF-AST event simulation (tieringlab.policies.otf_ast.sim) against independent references:

- a **SimPy model** written here (callbacks on SimPy's event heap, OrderedDict LRUs, deques, a plain-Python
  controller): per-request routes and responses and the move log agree, with copies in flight, under FIFO and
  CFQ queues, the HDD write cache off and on, one or two moves at once, demotions copied or skipped;
- the **sort-based model** (tieringlab.models.storage.serve) where they must agree: no move in flight, FIFO, write
  cache off (fixed routes with open-loop background IO): identical responses, cache hits and utilisation;
- **closed forms**: a no-load copy takes the Table 1 time; copies slow under user load (closed loop);
- ``load_scale``: a stationary input at scale 0.1 keeps scale 1's per-disk utilisation and per-copy time.

Simultaneous events: under CFQ with the default kcopyd (8 chunks of 512 KiB in flight over 64 KiB stripes) a copy's
pieces on two disks can finish at the same instant (sequential pieces of equal size started together). The engine
handles equal times in a fixed order (disk completions first, the lower disk first, then chunks, syncs, timers,
decisions, background jobs, arrivals; :func:`sim._run`); SimPy handles them in the order they were scheduled, so
disk 1 could finish before disk 0 and the next CFQ slice went to another queue: ~0.1 % of routes and a few % of
copy times differed. The SimPy model now schedules disk completions with the engine's priority
(:meth:`SimpyTestbed.start`), and :func:`test_cfq_default_kcopyd_simultaneous_completions` shows the case.
"""

from __future__ import annotations

from collections import OrderedDict, deque

import jax
import numpy as np
import pytest
import simpy

from tieringlab.models import storage
from tieringlab.models.storage import BUFFER, HDD, SSD, Raid0Hdd
from tieringlab.policies import otf_ast as oa
from tieringlab.policies.otf_ast import sim
from tieringlab.units import GiB, KiB, MiB

# A small testbed: 1 MiB sub-LUNs copied in 64 KiB chunks (16 per copy, 4 in flight), 16 KiB stripes, small
# disk caches, so that copies, queueing behind them, cache hits and the buffer all happen on a few hundred IOs.
UNIT, S = 1 * MiB, 8
HDD_SMALL = Raid0Hdd.from_table1(0.02, 0.05, unit_bytes=UNIT, stripe_bytes=16 * KiB, cache_bytes=256 * KiB,
                                 cache_segment_bytes=16 * KiB, write_cache_bytes=64 * KiB)
TB = storage.Testbed(hdd=HDD_SMALL, copy_chunk_bytes=64 * KiB, copy_inflight=4, sync_max_iops=400.0, cfq_slice_s=0.01)
T_S, K = 2, 10


def _requests(seed, n, length=T_S * K, hot_share=0.7):
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(0, length, n))
    hot = (t // 5).astype(int) % (S - 1)
    sub = np.where(rng.random(n) < hot_share, hot + rng.integers(0, 2, n), rng.integers(0, S, n))
    # a few offsets per sub-LUN, so that reads find what writes left in the buffer and the disk caches hit
    off = sub * UNIT + rng.integers(0, 24, n) * 8 * KiB
    size = rng.choice([4 * KiB, 8 * KiB, 32 * KiB], n)
    return dict(time=t, offset=off.astype(np.int64), size=size.astype(np.int64), is_write=rng.random(n) < 0.4,
                sub=sub.astype(np.int64), length_s=float(length))


def _ctrl(rq, c=1, o=2, n_top=2):
    p = oa.OtfAstSettings(t_s=T_S, m_window=T_S, n_top=n_top, i_pct=40.0, c_intervals=c, o_intervals=o)
    cnt = oa.interval_counts(rq["sub"], rq["time"], S, T_S, T_S, K)
    hot, _ = oa.hot_matrix(cnt, p)
    return hot, np.zeros(hot.shape, np.int64), cnt


# ----------------------------------------------------------------------------- the SimPy reference

def _u01(seed, a, b, c):
    """splitmix64 in Python integers (the background pieces' rotational draws)."""
    m = (1 << 64) - 1
    x = (seed ^ (a * 0x9E3779B97F4A7C15) ^ (b * 0xBF58476D1CE4E5B9) ^ (c * 0x94D049BB133111EB)) & m
    x = (x + 0x9E3779B97F4A7C15) & m
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & m
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & m
    x ^= x >> 31
    return (x >> 11) / float(1 << 53)


class SimpyTestbed:
    """OTF-AST's testbed and controller as a SimPy model: every completion, chunk, sync write, decision and
    arrival is an event on SimPy's heap; state in plain Python (deques per disk and class, an OrderedDict LRU
    per disk, dicts per move)."""

    def __init__(self, tb, key, rq, ctrl, cap, copy_s, c, o, conc, skip_down, route=None, evict=False,
                 history=False, unit=UNIT, n_subluns=S, t_s=T_S):
        self.tb, self.h, self.sd = tb, tb.hdd, tb.ssd
        self.unit, self.S, self.t_s = unit, n_subluns, t_s
        self.env = simpy.Environment()
        self.t_now = 0.0          # the time of the event being handled, exact (SimPy's clock adds delays)
        self.rq = rq
        n = rq["time"].size
        self.U, _ = sim.user_draws(tb, key, n)
        self.seed = int(np.asarray(jax.random.key_data(key)).ravel()[-1]) & 0x7FFFFFFF
        self.ctrl, self.cap, self.copy_s, self.c, self.o = ctrl, cap, copy_s, c, o
        self.conc, self.skip, self.evict, self.history = conc, skip_down, evict, history
        self.fixed = route
        nd = self.h.n_disks
        self.q = [[deque(), deque()] for _ in range(nd)]
        self.cur = [None] * nd
        self.head = [0] * nd
        self.first = [True] * nd
        self.active = [0] * nd
        self.slice0 = [0.0] * nd
        self.wc = [0] * nd
        self.lru = [OrderedDict() for _ in range(nd)]
        self.chan = [-np.inf] * self.sd.channels
        self.rr = 0
        self.done = np.zeros(n)
        self.route = np.zeros(n, np.int64)
        self.tier = [0] * self.S
        self.busy = [False] * self.S
        self.streak = [0] * self.S
        self.tmo = [0] * self.S
        self.moving = {}
        self.log = []
        self.head_q = 0
        self.slots = [None] * conc
        self.L = float(rq["length_s"])

    # --- devices
    def ssd(self, t, b, w):
        ch = self.rr % self.sd.channels
        self.rr += 1
        svc = (self.sd.fixed_s("write") + b * self.sd.channels / self.sd.write_bytes_per_s if w
               else self.sd.fixed_s("read") + b * self.sd.channels / self.sd.read_bytes_per_s)
        s0 = max(t, self.chan[ch])
        self.chan[ch] = s0 + svc
        return s0 + svc

    def pieces(self, off, size):
        U, nd = self.h.stripe_bytes, self.h.n_disks
        size = max(size, 1)
        per = {}
        for u in range(off // U, (off + size - 1) // U + 1):
            lo, hi = max(off, u * U), min(off + size, (u + 1) * U)
            d = u % nd
            doff = (u // nd) * U + (lo - u * U)
            o0, b0 = per.get(d, (doff, 0))
            per[d] = (min(o0, doff), b0 + hi - lo)
        return sorted(per.items())

    def hdd(self, off, size, w, cls, rot_of, on_done):
        """Enqueue the pieces; ``on_done(t)`` is called as each completes (acknowledged)."""
        ps = self.pieces(off, size)
        for d, (doff, b) in ps:
            piece = dict(off=doff, b=b, w=w, rot=rot_of(d), cb=on_done, acked=False)
            if w and self.tb.hdd_write_cache and self.wc[d] + b <= self.h.write_cache_bytes:
                self.wc[d] += b
                piece["acked"] = True
                on_done(self.t_now + self.h.cache_hit_s + b / self.h.bus_bytes_per_s)
            self.q[d][cls if self.tb.copy_scheduler == "cfq" else 0].append(piece)
            if self.cur[d] is None:
                self.start(d)
        return len(ps)

    def start(self, d):
        now = self.t_now
        q = self.q[d]
        if self.tb.copy_scheduler == "fifo":
            cls = 0 if q[0] else None
        else:
            a = self.active[d]
            if q[a] and now - self.slice0[d] < self.tb.cfq_slice_s:
                cls = a
            elif q[1 - a]:
                cls = 1 - a
                self.active[d], self.slice0[d] = cls, now
            elif q[a]:
                cls = a
                self.slice0[d] = now
            else:
                cls = None
        if cls is None:
            self.cur[d] = None
            return
        p = q[cls].popleft()
        h = self.h
        hit = False
        if not p["w"]:
            hit = True
            seg = h.cache_segment_bytes
            for sgm in range(p["off"] // seg, (p["off"] + max(p["b"], 1) - 1) // seg + 1):
                lru = self.lru[d]
                if sgm in lru:
                    lru.move_to_end(sgm)
                else:
                    hit = False
                    lru[sgm] = True
                    if len(lru) > h.cache_segments:
                        lru.popitem(last=False)
        seq = (not self.first[d]) and self.head[d] == p["off"]
        dist = p["off"] if self.first[d] else abs(p["off"] - self.head[d])
        self.first[d] = False
        self.head[d] = p["off"] + p["b"]
        if hit:
            svc = h.cache_hit_s + p["b"] / h.bus_bytes_per_s
        elif seq:
            svc = p["b"] / (h.seq_write_bytes_per_s if p["w"] else h.seq_read_bytes_per_s)
        else:
            seek = h.seek_min_s + (h.seek_max_s - h.seek_min_s) * np.sqrt(dist / h.disk_bytes) if dist > 0 else 0.0
            svc = seek + p["rot"] * h.rev_s + p["b"] / h.media_bytes_per_s + (h.write_settle_s if p["w"] else 0.0)
        self.cur[d] = p
        end = now + svc
        # the engine's order at equal times (sim._run): disk completions first, the lower disk first; SimPy's own
        # order (first scheduled, first served) would let disk 1 finish before disk 0 at the same instant
        ev = self.env.event()
        ev._ok, ev._value = True, None
        self.env.schedule(ev, priority=d - self.h.n_disks, delay=svc)
        ev.callbacks.append(lambda _e, d=d, p=p, end=end: self._fire(end, lambda: self.finish(d, p)))

    def finish(self, d, p):
        if p["acked"]:
            self.wc[d] -= p["b"]
        else:
            p["cb"](self.t_now)
        self.start(d)

    def at(self, t, fn):
        t = max(t, self.t_now)
        ev = self.env.timeout(t - self.t_now)
        ev.callbacks.append(lambda _e: self._fire(t, fn))

    def _fire(self, t, fn):
        self.t_now = t
        fn()

    # --- user IO
    def user(self, i):
        rq = self.rq
        s, w, off, size = int(rq["sub"][i]), bool(rq["is_write"][i]), int(rq["offset"][i]), int(rq["size"][i])
        if self.fixed is not None:
            r = int(self.fixed[i])
        else:
            r = SSD if self.tier[s] else HDD
            mv = self.moving.get(s)
            if mv is not None:
                sectors = range((off - s * self.unit) // 512, (off + max(size, 1) - 1 - s * self.unit) // 512 + 1)
                covered = all(x in mv["bits"] for x in sectors) and sectors[-1] < self.unit // 512
                if mv["phase"] == "copy":
                    if w:
                        r = BUFFER
                        mv["bits"].update(x for x in sectors if x < self.unit // 512)
                        mv["buf"].append((off, size))
                    elif covered:
                        r = BUFFER
                    else:
                        r = HDD if mv["up"] else SSD
                else:
                    r = BUFFER if (not w and covered) else (SSD if mv["up"] else HDD)
        self.route[i] = r
        now = self.t_now
        if r == BUFFER:
            self.done[i] = now + self.tb.buffer_s
        elif r == SSD:
            self.done[i] = self.ssd(now, size, w)
        else:
            self.done[i] = now

            def cb(t, i=i):
                self.done[i] = max(self.done[i], t)
            self.hdd(off, size, w, 0, lambda d, i=i: self.U[i, d], cb)

    # --- the controller
    def decide(self, k):
        hot, hsum, cnt = self.ctrl
        now = self.t_now
        demote, cand, staying = [], [], 0
        for s in range(self.S):
            if self.busy[s]:
                continue
            if self.tier[s] == 0:
                self.streak[s] = self.streak[s] + 1 if hot[k, s] else 0
                if (hsum[k, s] if self.history else self.streak[s]) >= self.c:
                    cand.append(s)
            else:
                self.tmo[s] = 0 if hot[k, s] else self.tmo[s] + 1
                if self.tmo[s] >= self.o:
                    demote.append(s)
                else:
                    staying += 1
        pending_up = sum(1 for m in self.log if m["up"] and not np.isfinite(m["te"]))
        room = max(self.cap - staying - pending_up, 0)
        if self.evict:      # f2: residents not hot now, the largest timeout first, one per waiting candidate
            ev = sorted((s for s in range(self.S) if not self.busy[s] and self.tier[s] and s not in demote
                         and self.tmo[s] >= 1), key=lambda s: (-self.tmo[s], s))
            n_ev = min(max(len(cand) - room, 0), len(ev))
            demote = sorted(demote + ev[:n_ev])
            room += n_ev
        promote = sorted(cand, key=lambda s: (-cnt[k, s], s))[:room]
        for s in demote:
            self.log.append(dict(sub=s, up=False, tq=now, ts=np.inf, tc=np.inf, te=np.inf))
            self.busy[s] = True
        for s in promote:
            self.log.append(dict(sub=s, up=True, tq=now, ts=np.inf, tc=np.inf, te=np.inf))
            self.busy[s] = True
            self.streak[s] = 0
        self.try_start()

    def try_start(self):
        now = self.t_now
        while self.head_q < len(self.log) and now < self.L:
            m = self.log[self.head_q]
            free = [q for q in range(self.conc) if self.slots[q] is None]
            occ = sum(self.tier) + sum(1 for x in self.slots if x is not None and x["up"])
            if not free or (m["up"] and occ >= self.cap):
                return
            q = free[0]
            m.update(ts=now, phase="copy", bits=set(), buf=[], q=q, mid=self.head_q)
            self.head_q += 1
            self.slots[q] = m
            self.moving[m["sub"]] = m
            if not m["up"] and self.skip:
                m.update(tc=now, nbw=0, nsync=0)
                self.end_move(m)
                continue
            m["nk"] = -(-self.unit // self.tb.copy_chunk_bytes)
            m.update(next=0, infl=0, ndone=0)
            self.issue(m)

    def issue(self, m):
        now = self.t_now
        thr = self.copy_s[0 if m["up"] else 1] / m["nk"]
        while m["next"] < m["nk"] and m["infl"] < self.tb.copy_inflight and now < self.L:
            due = m["ts"] + m["next"] * thr
            if due > now:
                if m.get("timer") != due:
                    m["timer"] = due
                    self.at(due, lambda m=m: self.issue(m))
                return
            k = m["next"]
            m["next"] += 1
            m["infl"] += 1
            self.stage(m, k, 0)

    def stage(self, m, k, st):
        now = self.t_now
        ck = self.tb.copy_chunk_bytes
        off, nb = m["sub"] * self.unit + k * ck, min(ck, self.unit - k * ck)
        if not (m["up"] if st == 0 else not m["up"]):         # the SSD side
            dep = self.ssd(now, nb, st == 1)
            self.at(dep, lambda: self.after_stage(m, k, st))
            return
        box = dict(pend=len(self.pieces(off, nb)), t=now)

        def cb(t):
            box["t"] = max(box["t"], t)
            box["pend"] -= 1
            if box["pend"] == 0:
                self.at(box["t"], lambda: self.after_stage(m, k, st))
        self.hdd(off, nb, st == 1, 1, lambda d: _u01(self.seed, m["mid"] * 4 + st, k, d), cb)

    def after_stage(self, m, k, st):
        if st == 0:
            self.stage(m, k, 1)
            return
        m["infl"] -= 1
        m["ndone"] += 1
        if m["ndone"] == m["nk"]:
            self.sync(m)
        else:
            self.issue(m)

    def sync(self, m):
        now = self.t_now
        m.update(tc=now, phase="sync", nbw=len(m["buf"]))
        ext = {}
        for off, size in sorted(m["buf"], key=lambda e: (e[0], e[1])):
            ext.setdefault(off, size)
        ext = sorted(ext.items())
        m["nsync"] = len(ext)
        if not ext:
            self.end_move(m)
            return
        box = dict(pend=0, t=now, issued=0)

        def cb(t):
            box["t"] = max(box["t"], t)
            box["pend"] -= 1
            if box["pend"] == 0 and box["issued"] == len(ext):
                self.at(box["t"], lambda: self.end_move(m))

        def write(j):
            if self.t_now >= self.L:
                return
            off, size = ext[j]
            box["issued"] += 1
            if m["up"]:
                box["pend"] += 1
                cb(self.ssd(self.t_now, size, True))
            else:
                box["pend"] += len(self.pieces(off, size))
                self.hdd(off, size, True, 1, lambda d: _u01(self.seed, m["mid"] * 4 + 2, j, d), cb)
        for j in range(len(ext)):
            self.at(now + j / self.tb.sync_max_iops, lambda j=j: write(j))

    def end_move(self, m):
        m["te"] = self.t_now
        s = m["sub"]
        self.tier[s] = 1 if m["up"] else 0
        self.busy[s] = False
        self.tmo[s] = self.streak[s] = 0
        del self.moving[s]
        self.slots[m["q"]] = None
        m["phase"] = "done"
        self.try_start()

    def run(self):
        rq = self.rq
        if self.ctrl is not None:
            for k in range(self.ctrl[0].shape[0]):
                self.at((k + 1) * self.t_s, lambda k=k: self.decide(k))
        for i in range(rq["time"].size):
            self.at(float(rq["time"][i]), lambda i=i: self.user(i))
        self.env.run()
        resp = np.where(self.route == BUFFER, self.tb.buffer_s, self.done - rq["time"]) + self.tb.driver_s
        return resp, self.route, self.log


def _engine(tb, key, rq, ctrl, cap, conc, skip, copy_s=(0.02, 0.05), c=1, evict=False, history=False, **kw):
    return sim.simulate(tb, key, rq, ctrl=ctrl, n_subluns=S, sublun_bytes=UNIT, cap=cap, copy_s=copy_s, t_s=T_S,
                        c=c, o=2, conc=conc, skip_down=skip, evict=evict, history=history, **kw)


CASES = [dict(sched="fifo", wc=False, conc=1, skip=False), dict(sched="cfq", wc=False, conc=1, skip=False),
         dict(sched="cfq", wc=True, conc=2, skip=False), dict(sched="fifo", wc=True, conc=1, skip=True),
         dict(sched="cfq", wc=False, conc=1, skip=False, f2_c2=True)]


def _case_id(c):
    return f"{c['sched']}-wc{int(c['wc'])}-conc{c['conc']}-skip{int(c['skip'])}" + ("-f2c2" if c.get("f2_c2") else "")


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_closed_loop_matches_simpy_request_by_request(case):
    """With copies in flight: every request's route and response, and every move's start, copy end and sync end,
    equal the SimPy model's (1e-9 s), on two traces per case; the case does exercise moves, the buffer and
    queueing behind copies."""
    import dataclasses
    tb = dataclasses.replace(TB, copy_scheduler=case["sched"], hdd_write_cache=case["wc"])
    moves = buffered = 0
    f2 = case.get("f2_c2", False)       # f2 (evict on demand) and c2 (c hot intervals among the last m = 3)
    cap, c = (2, 2) if f2 else (3, 1)
    for seed in (0, 1):
        rq = _requests(seed, 500)
        ctrl = _ctrl(rq)
        if f2:
            ctrl = (ctrl[0], oa.monitor.history_counts(ctrl[0], 3), ctrl[2])
        key = jax.random.key(seed)
        r = _engine(tb, key, rq, ctrl, cap=cap, conc=case["conc"], skip=case["skip"], c=c, evict=f2, history=f2)
        ref = SimpyTestbed(tb, key, rq, ctrl, cap, (0.02, 0.05), c, 2, case["conc"], case["skip"], evict=f2,
                           history=f2)
        resp, route, log = ref.run()
        np.testing.assert_array_equal(r["route"], route)
        np.testing.assert_allclose(r["response_s"], resp, rtol=0, atol=1e-9)
        lg = r["log"]
        assert lg["sub"].tolist() == [m["sub"] for m in log]
        assert lg["up"].tolist() == [m["up"] for m in log]
        for f in ("tq", "ts", "tc", "te"):
            a, b = lg[f], np.array([m[f] for m in log], float)
            assert np.array_equal(np.isfinite(a), np.isfinite(b)), f
            np.testing.assert_allclose(a[np.isfinite(a)], b[np.isfinite(b)], rtol=0, atol=1e-9, err_msg=f)
        assert lg["nsync"].tolist() == [m.get("nsync", 0) for m in log]
        moves += int(np.isfinite(lg["te"]).sum())
        buffered += int((r["route"] == BUFFER).sum())
    assert moves >= 4 and buffered > 0


def _same_run(a, b):
    """Two runs' outputs are bit for bit the same (every response, route, utilisation second and move time)."""
    for k in ("response_s", "route", "hdd_util", "hdd_user_util", "resident", "n_hot"):
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)
    assert (a["hdd_cache_hits"], a["hdd_pieces"], a["n_moves"]) == (b["hdd_cache_hits"], b["hdd_pieces"], b["n_moves"])
    for k in a["log"]:
        np.testing.assert_array_equal(a["log"][k], b["log"][k], err_msg=k)


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_pieces_started_at_arrival_change_nothing(case):
    """The engine serves a piece at its arrival when nothing could overtake it in the queue (sim's docstring);
    sending every piece through the queues instead gives bit for bit the same run, on bursty inputs (arrivals in
    bursts of a few ms, so that pieces wait and the guards bind) with copies in flight, and the first way does
    start most pieces at arrival when the write cache is off (none when it is on)."""
    import dataclasses
    tb = dataclasses.replace(TB, copy_scheduler=case["sched"], hdd_write_cache=case["wc"])
    f2 = case.get("f2_c2", False)
    cap, c = (2, 2) if f2 else (3, 1)
    early = pieces = 0
    for seed in range(4):
        rq = _requests(seed, 1500)
        rng = np.random.default_rng(100 + seed)             # bursts: arrivals pulled onto 2 ms grid points
        rq["time"] = np.sort(np.floor(rq["time"] / 0.002) * 0.002 + rng.uniform(0, 2e-4, rq["time"].size))
        ctrl = _ctrl(rq)
        if f2:
            ctrl = (ctrl[0], oa.monitor.history_counts(ctrl[0], 3), ctrl[2])
        key = jax.random.key(seed)
        a, b = (_engine(tb, key, rq, ctrl, cap=cap, conc=case["conc"], skip=case["skip"], c=c, evict=f2, history=f2,
                        start_at_arrival=way) for way in (True, False))
        _same_run(a, b)
        assert b["hdd_pieces_at_arrival"] == 0 and np.isfinite(a["log"]["te"]).sum() >= 2
        early += a["hdd_pieces_at_arrival"]
        pieces += a["hdd_pieces"]
    if case["wc"]:
        assert early == 0
    else:
        assert early > 0.5 * pieces


def _fixed_routes(sched, seed, p_route, nb):
    """8 s of the small testbed under ``sched``: 3,000 IOs on fixed routes (HDD, SSD, buffer with ``p_route``) and
    ``nb`` open-loop background jobs on each device."""
    import dataclasses
    tb = dataclasses.replace(TB, copy_scheduler=sched)
    rng = np.random.default_rng(seed)
    rq = _requests(seed, 3000, length=8.0)
    route = rng.choice([HDD, SSD, BUFFER], rq["time"].size, p=p_route)
    bg_hdd = dict(time=np.sort(rng.uniform(0, 8, nb)), offset=rng.integers(0, S * UNIT // 4096, nb) * 4096,
                  size=rng.choice([4096, 65536], nb), is_write=rng.random(nb) < 0.7)
    bg_ssd = dict(time=np.sort(rng.uniform(0, 8, nb)), size=rng.choice([4096, 65536], nb),
                  is_write=rng.random(nb) < 0.5)
    return tb, rq, route, bg_hdd, bg_ssd


def test_background_jobs_started_at_arrival_change_nothing():
    """Fixed routes with open-loop background IO (FlashCache's cleaning and fills) under CFQ: the same run with
    pieces started at arrival as with every piece queued."""
    tb, rq, route, bg_hdd, bg_ssd = _fixed_routes("cfq", 3, [0.7, 0.2, 0.1], 600)
    key = jax.random.key(5)
    kw = dict(route=route, bg_hdd=bg_hdd, bg_ssd=bg_ssd, n_subluns=S, sublun_bytes=UNIT)
    a = sim.simulate(tb, key, rq, **kw)
    b = sim.simulate(tb, key, rq, start_at_arrival=False, **kw)
    _same_run(a, b)
    assert a["hdd_pieces_at_arrival"] > 0.5 * a["hdd_pieces"]


def test_cfq_default_kcopyd_simultaneous_completions():
    """The default kcopyd (8 chunks of 512 KiB in flight over 64 KiB stripes) under CFQ, copies unthrottled: two
    disks finish pieces at the same instant (counted in the SimPy model), and with the engine's order at equal
    times (disk completions first, the lower disk first) the SimPy model agrees request by request; with SimPy's
    own order (first scheduled, first served) this case differed on 5 of 6,000 responses."""
    unit, n_sub, k = 8 * MiB, 8, 10
    tb = storage.Testbed(hdd=Raid0Hdd.from_table1(0.3, 0.8, unit_bytes=unit), copy_scheduler="cfq")
    rng = np.random.default_rng(1)
    n = 6000
    t = np.sort(rng.uniform(0, T_S * k, n))
    hot = (t // 5).astype(int) % (n_sub - 1)
    sub = np.where(rng.random(n) < 0.7, hot + rng.integers(0, 2, n), rng.integers(0, n_sub, n))
    off = sub * unit + rng.integers(0, unit // (8 * KiB), n) * 8 * KiB
    size = rng.choice([4 * KiB, 8 * KiB, 32 * KiB], n)
    rq = dict(time=t, offset=off.astype(np.int64), size=size.astype(np.int64), is_write=rng.random(n) < 0.4,
              sub=sub.astype(np.int64), length_s=float(T_S * k))
    p = oa.OtfAstSettings(t_s=T_S, m_window=T_S, n_top=2, i_pct=40.0, c_intervals=1, o_intervals=2)
    cnt = oa.interval_counts(rq["sub"], rq["time"], n_sub, T_S, T_S, k)
    hot_m, _ = oa.hot_matrix(cnt, p)
    ctrl = (hot_m, np.zeros(hot_m.shape, np.int64), cnt)
    key = jax.random.key(1)
    r = sim.simulate(tb, key, rq, ctrl=ctrl, n_subluns=n_sub, sublun_bytes=unit, cap=3, copy_s=(0.0, 0.0), t_s=T_S,
                     c=1, o=2)

    class Logged(SimpyTestbed):
        def finish(self, d, piece):
            self.finished.append((self.t_now, d))
            super().finish(d, piece)

    ref = Logged(tb, key, rq, ctrl, 3, (0.0, 0.0), 1, 2, 1, False, unit=unit, n_subluns=n_sub)
    ref.finished = []
    resp, route, log = ref.run()
    ties = sum(a[0] == b[0] for a, b in zip(ref.finished, ref.finished[1:]))
    assert ties >= 1 and int(np.isfinite(r["log"]["te"]).sum()) >= 4
    np.testing.assert_array_equal(r["route"], route)
    np.testing.assert_allclose(r["response_s"], resp, rtol=0, atol=1e-9)
    np.testing.assert_allclose(r["log"]["tc"], [m["tc"] for m in log], rtol=0, atol=1e-9)


def test_a_run_that_exhausts_the_first_pool_reruns_on_the_bound(monkeypatch):
    """The piece pool is first allotted sim.POOL_FIRST pieces; a run that needs more runs again on the bound, with
    the same result as a run on the bound from the start."""
    rq = _requests(0, 500)
    ctrl = _ctrl(rq)
    key = jax.random.key(0)
    tb = storage.Testbed(**{**TB.__dict__, "copy_scheduler": "cfq"})
    full = _engine(tb, key, rq, ctrl, cap=3, conc=1, skip=False)
    sizes = []
    state = sim._state
    monkeypatch.setattr(sim, "_state", lambda pool, *a: sizes.append(pool) or state(pool, *a))
    monkeypatch.setattr(sim, "POOL_FIRST", 2)
    small = _engine(tb, key, rq, ctrl, cap=3, conc=1, skip=False)
    assert len(sizes) == 2 and sizes[0] == 2 < sizes[1]
    np.testing.assert_array_equal(small["response_s"], full["response_s"])
    np.testing.assert_array_equal(small["route"], full["route"])
    np.testing.assert_array_equal(small["log"]["te"], full["log"]["te"])


def test_no_move_in_flight_equals_the_sort_based_model():
    """Fixed routes (HDD, SSD, buffer), open-loop background IO on both devices, FIFO, write cache off: the same
    per-request responses, background draws, disk-cache hits and per-second utilisation as storage.serve."""
    tb, rq, route, bg_hdd, bg_ssd = _fixed_routes("fifo", 7, [0.6, 0.3, 0.1], 200)
    key = jax.random.key(11)
    r = sim.simulate(tb, key, rq, route=route, bg_hdd=bg_hdd, bg_ssd=bg_ssd, n_subluns=S, sublun_bytes=UNIT)
    o = storage.serve(tb, key, time=rq["time"], offset=rq["offset"], size=rq["size"], is_write=rq["is_write"],
                      route=route, bg_hdd=bg_hdd, bg_ssd=bg_ssd, util_window=(0.0, 8))
    np.testing.assert_allclose(r["response_s"], o["response_s"], rtol=1e-12, atol=1e-12)
    assert r["hdd_cache_hits"] == o["hdd_cache_hits"] > 0
    np.testing.assert_allclose(r["hdd_util"], o["hdd_util"].mean(axis=0), atol=1e-12)
    assert 0.2 < r["hdd_util"].mean() < 1.0                # the case does queue


def test_no_load_copy_time_is_table1_and_copies_slow_under_load():
    """Closed forms: with no user IO, a 1 GiB copy takes Table 1's 2.5 s up and 6.5 s down (the streaming
    rates' closed form, storage.no_load_copy_s, within the pipeline's fill: 1 %); under user load on the HDD the
    same copy takes longer (closed loop), and a copy throttled to 60 s takes 60 s."""
    tb = storage.Testbed()
    t = sim.no_load_copy_times(tb, GiB)
    assert t["up"] == pytest.approx(storage.no_load_copy_s(tb, "up"), rel=0.01)
    assert t["down"] == pytest.approx(storage.no_load_copy_s(tb, "down"), rel=0.01)
    slow = sim.no_load_copy_times(tb, GiB, copy_s=(60.0, 60.0))
    assert slow["up"] == pytest.approx(60.0, rel=0.001) and slow["down"] == pytest.approx(60.0, rel=0.001)


def _stationary(scale, seed, length=40.0, rate=400.0):
    """Poisson arrivals at ``rate`` x scale over a LUN of S sub-LUNs of scale GiB, uniform offsets (stationary)."""
    rng = np.random.default_rng(seed)
    unit = sim_unit(scale)
    n = rng.poisson(rate * scale * length)
    t = np.sort(rng.uniform(0, length, n))
    off = rng.integers(0, S * unit // 4096 - 8, n) * 4096
    return dict(time=t, offset=off, size=np.full(n, 8192), is_write=rng.random(n) < 0.5, sub=off // unit,
                length_s=length), unit


def sim_unit(scale):
    return int(round(GiB * scale / 4096)) * 4096


def test_load_scale_keeps_the_load_per_disk_and_the_copy_time():
    """A stationary input at scale 0.1 (sub-LUNs of 0.1 GiB, a tenth of the IOs) on the scaled testbed: the
    per-disk utilisation, the time of a promotion copy under that load and the mean response (x scale) are scale
    1's (within the sampling noise of three 40 s runs, 10 %), while on the unscaled testbed the utilisation falls
    about tenfold."""
    tb = storage.Testbed()
    util, copy, resp = {}, {}, {}
    for scale in (1.0, 0.1):
        us, cs, rs = [], [], []
        for seed in (0, 1, 2):
            rq, unit = _stationary(scale, seed)
            hot = np.zeros((4, S), bool)
            hot[0, 0] = True                       # sub-LUN 0 promoted at t = 10 s
            cnt = np.ones((4, S), np.int64)
            r = sim.simulate(sim.scaled_testbed(tb, scale), jax.random.key(seed), rq, ctrl=(hot, 0 * cnt, cnt),
                             n_subluns=S, sublun_bytes=unit, cap=1, copy_s=(2.5, 6.5), t_s=10, c=1, o=10)
            us.append(r["hdd_user_util"].mean())
            cs.append(r["log"]["tc"][0] - r["log"]["ts"][0])
            rs.append(r["response_s"].mean() * scale)        # in paper-scale seconds
            if scale < 1:
                r0 = sim.simulate(tb, jax.random.key(seed), rq, route=np.zeros(rq["time"].size, np.int64),
                                  n_subluns=S, sublun_bytes=unit)
                assert r0["hdd_user_util"].mean() < 0.2 * us[-1]
        util[scale], copy[scale], resp[scale] = np.mean(us), np.mean(cs), np.mean(rs)
    assert util[1.0] > 0.3                                  # the copy does compete with user IO
    assert util[0.1] == pytest.approx(util[1.0], rel=0.10)
    assert copy[0.1] == pytest.approx(copy[1.0], rel=0.10)
    assert resp[0.1] == pytest.approx(resp[1.0], rel=0.10)
    assert copy[1.0] > 1.2 * 2.5                            # slower than no load: closed loop
