"""Plain reference caches written from the papers' pseudo-code (test oracles, one access at a time).

Each ``access(x, write)`` returns ``(hit, dirty_writeback)``. Lists are OrderedDicts whose last item is
the MRU end. Dirty pages are written back when their data leaves the cache (vFRM Table 2(b)).
"""

from __future__ import annotations

from collections import OrderedDict


class RefLRU:
    def __init__(self, c):
        self.c, self.t, self.dirty = c, OrderedDict(), set()

    def access(self, x, write=False):
        wb = False
        if x in self.t:
            self.t.move_to_end(x)
            hit = True
        else:
            hit = False
            if len(self.t) >= self.c:
                v, _ = self.t.popitem(last=False)
                wb = v in self.dirty
                self.dirty.discard(v)
            self.t[x] = None
        if write:
            self.dirty.add(x)
        return hit, wb


class RefARC:
    """ARC, Megiddo & Modha FAST'03 Fig. 4, with a real-valued p: delta1 = max(|B2| / |B1|, 1)."""

    def __init__(self, c):
        self.c, self.p = c, 0.0
        self.t1, self.t2, self.b1, self.b2 = OrderedDict(), OrderedDict(), OrderedDict(), OrderedDict()
        self.dirty = set()

    def _evict(self, v):
        wb = v in self.dirty
        self.dirty.discard(v)
        return wb

    def _replace(self, in_b2):
        t1 = len(self.t1)
        if t1 > 0 and (t1 > self.p or (t1 == self.p and in_b2)):
            v, _ = self.t1.popitem(last=False)
            self.b1[v] = None
        else:
            v, _ = self.t2.popitem(last=False)
            self.b2[v] = None
        return self._evict(v)

    def access(self, x, write=False):
        c, wb, hit = self.c, False, False
        if x in self.t1 or x in self.t2:  # case I
            hit = True
            self.t1.pop(x, None)
            self.t2.pop(x, None)
            self.t2[x] = None
        elif x in self.b1:  # case II
            self.p = min(self.p + max(len(self.b2) / len(self.b1), 1.0), c)
            wb = self._replace(False)
            del self.b1[x]
            self.t2[x] = None
        elif x in self.b2:  # case III
            self.p = max(self.p - max(len(self.b1) / len(self.b2), 1.0), 0)
            wb = self._replace(True)
            del self.b2[x]
            self.t2[x] = None
        else:  # case IV
            if len(self.t1) + len(self.t2) >= c:
                if len(self.t1) + len(self.b1) >= c:  # case A
                    if len(self.t1) < c:
                        self.b1.popitem(last=False)
                        wb = self._replace(False)
                    else:
                        v, _ = self.t1.popitem(last=False)
                        wb = self._evict(v)
                else:  # case B
                    if len(self.t1) + len(self.t2) + len(self.b1) + len(self.b2) >= 2 * c:
                        self.b2.popitem(last=False)
                    wb = self._replace(False)
            self.t1[x] = None
        if write:
            self.dirty.add(x)
        return hit, wb


class RefCAR:
    """CAR, Bansal & Modha FAST'04 Fig. 2, literally (real-valued p). Clocks as OrderedDict: first = head."""

    def __init__(self, c):
        self.c, self.p = c, 0.0
        self.t1, self.t2, self.b1, self.b2 = OrderedDict(), OrderedDict(), OrderedDict(), OrderedDict()
        self.dirty = set()

    def _replace(self):
        while True:
            if len(self.t1) >= max(1.0, self.p):
                h, ref = next(iter(self.t1.items()))
                del self.t1[h]
                if not ref:
                    self.b1[h] = None
                    break
                self.t2[h] = False
            else:
                h, ref = next(iter(self.t2.items()))
                del self.t2[h]
                if not ref:
                    self.b2[h] = None
                    break
                self.t2[h] = False
        wb = h in self.dirty
        self.dirty.discard(h)
        return wb

    def access(self, x, write=False):
        c, wb = self.c, False
        if x in self.t1 or x in self.t2:
            hit = True
            if x in self.t1:
                self.t1[x] = True
            else:
                self.t2[x] = True
        else:
            hit = False
            in_b = x in self.b1 or x in self.b2
            if len(self.t1) + len(self.t2) == c:
                wb = self._replace()
                if not in_b and len(self.t1) + len(self.b1) == c:
                    self.b1.popitem(last=False)
                elif len(self.t1) + len(self.t2) + len(self.b1) + len(self.b2) == 2 * c and not in_b:
                    self.b2.popitem(last=False)
            if not in_b:
                self.t1[x] = False
            elif x in self.b1:
                self.p = min(self.p + max(1.0, len(self.b2) / len(self.b1)), c)
                del self.b1[x]
                self.t2[x] = False
            else:
                self.p = max(self.p - max(1.0, len(self.b1) / len(self.b2)), 0.0)
                del self.b2[x]
                self.t2[x] = False
        if write:
            self.dirty.add(x)
        return hit, wb


REFS = {"lru": RefLRU, "arc": RefARC, "car": RefCAR}


def ref_replay(policy, keys, capacity, writes=None):
    cache = REFS[policy](capacity)
    writes = [False] * len(keys) if writes is None else writes
    out = [cache.access(int(k), bool(w)) for k, w in zip(keys, writes)]
    return [h for h, _ in out], [b for _, b in out]
