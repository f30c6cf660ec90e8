"""Compiled epoch loops of the vFRM family: vFRM's ``idle_bins="keep"`` ranks, G1-vFRM (vFRM paper
Alg. 1) and G2-vFRM (thesis Alg. 2) with their replay.

The zone updates of Alg. 1 and Alg. 2 are sequential in the epochs (each epoch starts from the zones
the previous one left) and touch a few thousand bins per epoch out of up to a million; the replay
that follows them (which requests hit, which bins move in or out, which leave dirty) needs only the
bins that changed. Written as numpy calls per epoch and per VM, one (mix, flash size) at paper
scale took minutes (thousands of small sorts and set operations, each with its own allocations);
as one compiled loop over the epochs per call it takes seconds. That is why these two loops are
numba (:func:`tieringlab.native.jit`, compiled on first use, like the page caches) and
not numpy or a ``lax.scan`` (the state is a set of bins of data-dependent size).

State is kept per bin (``zone[b]``: 0 = on the MD, 1 = private zone, 2 = public zone), so a bin is
in at most one zone by construction; the private zones are lists per VM, the public zone one list.
Popularity orders (``T_i`` of Eq. 1, ties by bin id; see :mod:`tieringlab.policies.gvfrm`) are taken
by selection (quickselect) where only a set is needed and by sorting where an order is; both are
written as plain loops (heapsort, quickselect), not numpy's ``partition``/``argsort``, whose compiled
versions took most of the compile time.
"""

from __future__ import annotations

import numpy as np

from tieringlab import native

__all__ = ["keep_kernel", "merge_kernel", "since_write_kernel", "lookup_kernel", "g1_kernel", "g2_kernel"]


@native.jit(cache=False, inline="always")
def _before(ta, ba, tb, bb, top):
    """Whether bin ``ba`` (temperature ``ta``) comes before bin ``bb`` in the popularity order (``top``:
    ``T`` descending, ties by bin id ascending) or in its reverse."""
    if top:
        return ta > tb or (ta == tb and ba < bb)
    return ta < tb or (ta == tb and ba > bb)


@native.jit(cache=False)
def _select(bins, temp, j, top):
    """The ``j`` bins of ``bins`` with the highest (``top``) or lowest popularity, as a set (unordered).

    Popularity order: ``T`` descending, ties by bin id ascending; "lowest" is its reverse
    (``T`` ascending, ties by bin id descending). ``j`` is clipped to ``[0, len(bins)]``. A quickselect
    (Hoare's, median-of-three pivot) on the distinct bins: expected O(n), plain loops (fast to compile).
    """
    n = bins.size
    if j <= 0:
        return bins[:0].copy()
    if j >= n:
        return bins.copy()
    a = bins.copy()
    t = np.empty(n, np.float64)
    for i in range(n):
        t[i] = temp[a[i]]
    lo = 0
    hi = n - 1
    k = j - 1
    while lo < hi:
        mid = (lo + hi) // 2  # median of three to the end as the pivot
        if _before(t[mid], a[mid], t[lo], a[lo], top):
            a[mid], a[lo] = a[lo], a[mid]
            t[mid], t[lo] = t[lo], t[mid]
        if _before(t[hi], a[hi], t[lo], a[lo], top):
            a[hi], a[lo] = a[lo], a[hi]
            t[hi], t[lo] = t[lo], t[hi]
        if _before(t[mid], a[mid], t[hi], a[hi], top):
            a[mid], a[hi] = a[hi], a[mid]
            t[mid], t[hi] = t[hi], t[mid]
        pt, pb = t[hi], a[hi]
        store = lo
        for i in range(lo, hi):
            if _before(t[i], a[i], pt, pb, top):
                a[i], a[store] = a[store], a[i]
                t[i], t[store] = t[store], t[i]
                store += 1
        a[hi], a[store] = a[store], a[hi]
        t[hi], t[store] = t[store], t[hi]
        if store == k:
            break
        if store < k:
            lo = store + 1
        else:
            hi = store - 1
    return a[:j].copy()


@native.jit(cache=False)
def _sort_int(a):
    """Sort int64 array ``a`` in place (heapsort: plain loops, fast to compile)."""
    n = a.size
    for start in range(n // 2 - 1, -1, -1):
        _sift(a, start, n)
    for end in range(n - 1, 0, -1):
        a[0], a[end] = a[end], a[0]
        _sift(a, 0, end)


@native.jit(cache=False, inline="always")
def _sift(a, root, end):
    while True:
        child = 2 * root + 1
        if child >= end:
            return
        if child + 1 < end and a[child + 1] > a[child]:
            child += 1
        if a[root] >= a[child]:
            return
        a[root], a[child] = a[child], a[root]
        root = child


@native.jit(cache=False)
def _smallest_sorted(keys, j):
    """The ``j`` smallest of the distinct int64 ``keys``, ascending (quickselect, then heapsort)."""
    n = keys.size
    a = keys.copy()
    if j < n:
        lo = 0
        hi = n - 1
        k = j - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if a[mid] < a[lo]:
                a[mid], a[lo] = a[lo], a[mid]
            if a[hi] < a[lo]:
                a[hi], a[lo] = a[lo], a[hi]
            if a[mid] < a[hi]:
                a[mid], a[hi] = a[hi], a[mid]
            pv = a[hi]
            store = lo
            for i in range(lo, hi):
                if a[i] < pv:
                    a[i], a[store] = a[store], a[i]
                    store += 1
            a[hi], a[store] = a[store], a[hi]
            if store == k:
                break
            if store < k:
                lo = store + 1
            else:
                hi = store - 1
        a = a[:max(j, 0)].copy()
    _sort_int(a)
    return a


@native.jit(cache=False, nogil=True)
def _keep(n_epochs, n_bins, kmax, elig_ptr, elig_bin, pair_ptr, pair_bin):
    """vFRM ranks of the idle bins under ``idle_bins="keep"``; see :func:`tieringlab.policies.vfrm.vfrm_ranks`.

    ``elig_bin``: the warm bins (``T_i > 0``) of each epoch in rank order (CSR by ``elig_ptr``).
    Returns ``(keys, ranks)`` of the idle bins with rank ``< kmax``, epoch by epoch (``keys = epoch *
    n_bins + bin``, not sorted). At epoch ``i`` the candidates are the bins ranked ``< kmax`` at
    ``i - 1`` that are idle at ``i``; in the order (last access epoch descending, bin id ascending)
    each gets ``max(rho, v)``, ``rho`` its rank at ``i - 1`` and ``v`` the ``(n_pos_i + 1)``-th
    smallest value not taken by the previous ranks of the candidates before it (a Fenwick tree over
    ``[0, kmax)``). That is the smallest ``k`` for which a flash of ``k`` bins still holds it:
    it held it at ``i - 1`` (``rho < k``) and it is among the first ``k - n_pos_i`` candidates that
    the flash of ``k`` bins held at ``i - 1``.
    """
    big = np.int64(1) << 62
    rank_prev = np.full(n_bins, big, np.int64)
    last = np.full(n_bins, -1, np.int64)
    warm = np.zeros(n_bins, np.int64)
    listed = np.zeros(max(kmax, 1), np.int64)
    n_listed = 0
    new_listed = np.zeros(max(kmax, 1), np.int64)
    new_rank = np.zeros(max(kmax, 1), np.int64)
    tree = np.zeros(kmax + 1, np.int64)
    cap_out = 1024
    out_k = np.zeros(cap_out, np.int64)
    out_r = np.zeros(cap_out, np.int64)
    n_out = 0
    top = 1
    while top * 2 <= kmax:
        top *= 2
    for e in range(n_epochs):
        if e >= 1:
            for k in range(pair_ptr[e - 1], pair_ptr[e]):
                last[pair_bin[k]] = e - 1
        lo = elig_ptr[e]
        n_pos = elig_ptr[e + 1] - lo
        for k in range(lo, elig_ptr[e + 1]):
            warm[elig_bin[k]] = e + 1
        n_cand = 0
        for i in range(n_listed):
            if warm[listed[i]] != e + 1:
                n_cand += 1
        cand = np.empty(n_cand, np.int64)
        n_cand = 0
        for i in range(n_listed):
            if warm[listed[i]] != e + 1:
                cand[n_cand] = listed[i]
                n_cand += 1
        key = np.empty(n_cand, np.int64)
        for i in range(n_cand):
            key[i] = (n_epochs - last[cand[i]]) * n_bins + cand[i]
        _sort_int(key)
        for i in range(n_cand):
            cand[i] = key[i] % n_bins
        m = 0
        for k in range(lo, min(lo + n_pos, lo + kmax)):
            new_listed[m] = elig_bin[k]
            new_rank[m] = k - lo
            m += 1
        for i in range(n_cand):
            x = cand[i]
            rho = rank_prev[x]
            # v: the (n_pos + 1)-th smallest value in [0, kmax) not in the tree (Fenwick descent)
            v = kmax
            if n_pos < kmax:
                pos = 0
                rem = n_pos + 1
                step = top
                while step > 0:
                    nxt = pos + step
                    if nxt <= kmax and step - tree[nxt] < rem:
                        pos = nxt
                        rem -= step - tree[nxt]
                    step //= 2
                v = pos
            r = rho if rho > v else v
            j = rho + 1
            while j <= kmax:
                tree[j] += 1
                j += j & (-j)
            if r < kmax:
                if n_out == cap_out:
                    cap_out *= 2
                    gk = np.zeros(cap_out, np.int64)
                    gr = np.zeros(cap_out, np.int64)
                    gk[:n_out] = out_k[:n_out]
                    gr[:n_out] = out_r[:n_out]
                    out_k = gk
                    out_r = gr
                out_k[n_out] = e * n_bins + x
                out_r[n_out] = r
                n_out += 1
                new_listed[m] = x
                new_rank[m] = r
                m += 1
        for i in range(n_cand):  # empty the tree for the next epoch
            j = rank_prev[cand[i]] + 1
            while j <= kmax:
                tree[j] -= 1
                j += j & (-j)
        for i in range(n_listed):
            rank_prev[listed[i]] = big
        for i in range(m):
            rank_prev[new_listed[i]] = new_rank[i]
            listed[i] = new_listed[i]
        n_listed = m
    return out_k[:n_out].copy(), out_r[:n_out].copy()


@native.jit(cache=False, nogil=True)
def _g1(n_epochs, vm_lo, elig_ptr, elig_bin, elig_temp, pair_ptr, pair_bin, pair_wrote, cap, p_vm, private_total,
        demand, record, rec_bin, rec_zone, rec_ptr, in_pair, counters):
    """G1-vFRM (Alg. 1) for one flash size ``cap`` (bins), with the replay; see :func:`g1_kernel`."""
    n_vm = vm_lo.size - 1
    n_bins = vm_lo[n_vm]
    temp = np.zeros(n_bins, np.float64)
    zone = np.zeros(n_bins, np.int8)
    resident = np.zeros(n_bins, np.bool_)
    dirty = np.zeros(n_bins, np.bool_)
    mark = np.zeros(n_bins, np.int64)  # stamps: "in popBin[v]", "in the candidate set"
    stamp = 0
    p_max = private_total if demand else p_vm
    prv = np.zeros((n_vm, max(p_max, 1)), np.int64)
    prv_n = np.zeros(n_vm, np.int64)
    share = np.full(n_vm, p_vm, np.int64)  # private slots of each VM (len(prvBin[i]) of Alg. 1)
    pub = np.zeros(max(cap, 1), np.int64)
    pub_n = 0
    old = np.zeros(max(cap, 1), np.int64)
    evict = np.zeros(max(cap, 1), np.int64)
    extra_cap = 1024
    extra = np.zeros(extra_cap, np.int64)
    cand = np.zeros(max(cap, 1) + 1, np.int64)
    diff = np.zeros(max(p_max, 1) + 1, np.int64)
    pop_lo = np.zeros(n_vm + 1, np.int64)
    move_ins = 0
    move_outs = 0
    dirty_outs = 0
    n_rec = 0
    for e in range(n_epochs):
        for k in range(elig_ptr[e], elig_ptr[e + 1]):
            temp[elig_bin[k]] = elig_temp[k]
        n_old = 0
        for v in range(n_vm):
            for i in range(prv_n[v]):
                old[n_old] = prv[v, i]
                n_old += 1
        for i in range(pub_n):
            old[n_old] = pub[i]
            n_old += 1
        # popBin[v]: bins of VM v accessed in epoch e - 1 (pairs sorted by bin: VM-contiguous)
        a = pair_ptr[e - 1] if e >= 1 else 0
        b = pair_ptr[e] if e >= 1 else 0
        pos = a
        for v in range(n_vm + 1):
            while pos < b and pair_bin[pos] < vm_lo[v]:
                pos += 1
            pop_lo[v] = pos
        pop_lo[n_vm] = b
        if demand:  # Sec. 5.3 reading: the private zone split in proportion to |popBin[v]|
            tot = b - a
            if tot > 0:
                for v in range(n_vm):
                    share[v] = (private_total * (pop_lo[v + 1] - pop_lo[v])) // tot
        q = cap - share.sum()
        n_ev = 0
        n_ex = 0
        for v in range(n_vm):  # UpdatePrivateZone, Alg. 1 lines 8-23
            pv = share[v]
            stamp += 1
            n_pop = pop_lo[v + 1] - pop_lo[v]
            for k in range(pop_lo[v], pop_lo[v + 1]):
                mark[pair_bin[k]] = stamp
            if n_pop < pv:  # lines 12-17: popDiff joins; the least popular make room (free slots first)
                n_diff = 0
                for k in range(pop_lo[v], pop_lo[v + 1]):  # popDiff (line 10), before any eviction
                    if zone[pair_bin[k]] != 1:
                        diff[n_diff] = pair_bin[k]
                        n_diff += 1
                need = prv_n[v] + n_diff - pv
                if need > 0:
                    gone = _select(prv[v, :prv_n[v]].copy(), temp, need, False)
                    for x in gone:
                        zone[x] = 0
                        evict[n_ev] = x
                        n_ev += 1
                    m = 0
                    for i in range(prv_n[v]):
                        if zone[prv[v, i]] == 1:
                            prv[v, m] = prv[v, i]
                            m += 1
                    prv_n[v] = m
                for i in range(n_diff):
                    x = diff[i]
                    zone[x] = 1  # leaves the public zone if it was there (one zone per bin)
                    prv[v, prv_n[v]] = x
                    prv_n[v] += 1
            else:  # lines 19-22: prvDiff leaves; the top len(prvBin) of popBin stay; the rest is extra
                for i in range(prv_n[v]):
                    x = prv[v, i]
                    if mark[x] != stamp:
                        zone[x] = 0
                        evict[n_ev] = x
                        n_ev += 1
                    else:
                        zone[x] = 0  # re-decided below
                keep = _select(pair_bin[pop_lo[v]:pop_lo[v + 1]].copy(), temp, pv, True)
                stamp += 1
                for x in keep:
                    mark[x] = stamp
                prv_n[v] = 0
                for x in keep:
                    zone[x] = 1
                    prv[v, prv_n[v]] = x
                    prv_n[v] += 1
                for k in range(pop_lo[v], pop_lo[v + 1]):
                    x = pair_bin[k]
                    if mark[x] != stamp:
                        if n_ex == extra_cap:
                            extra_cap *= 2
                            grown = np.zeros(extra_cap, np.int64)
                            grown[:n_ex] = extra[:n_ex]
                            extra = grown
                        extra[n_ex] = x
                        n_ex += 1
        # UpdatePublicZone, Alg. 1 lines 24-37, on distinct bins: pubBin less the bins now private
        # (as Alg. 2 line 19 does), and the union pubBin + extraBin + evictBin counted once
        stamp += 1
        n_c = 0
        for i in range(pub_n):
            x = pub[i]
            if zone[x] == 2:
                mark[x] = stamp
                cand[n_c] = x
                n_c += 1
        n_pub_only = n_c
        stamp_c = stamp
        stamp += 1
        for i in range(n_ex):  # extra or evict bins already in pubBin: no longer "pubBin only"
            if mark[extra[i]] == stamp_c:
                mark[extra[i]] = stamp
                n_pub_only -= 1
        for i in range(pub_n):
            x = pub[i]
            if zone[x] == 2:
                zone[x] = 0
        new_n = 0
        if q <= 0:
            new_n = 0
        elif n_ex >= q:  # lines 25-27
            sel = _select(extra[:n_ex].copy(), temp, q, True)
            for x in sel:
                pub[new_n] = x
                new_n += 1
        elif n_ex + n_ev >= q:  # lines 28-31
            for i in range(n_ex):
                pub[new_n] = extra[i]
                new_n += 1
            sel = _select(evict[:n_ev].copy(), temp, q - n_ex, True)
            for x in sel:
                pub[new_n] = x
                new_n += 1
        else:  # lines 33-36: the least popular of pubBin (not re-entering) make room
            only = np.empty(n_pub_only, np.int64)
            m = 0
            for i in range(n_c):
                if mark[cand[i]] == stamp_c:
                    only[m] = cand[i]
                    m += 1
            need = n_pub_only + n_ex + n_ev - q
            stamp += 1
            if need > 0:
                gone = _select(only, temp, need, False)
                for x in gone:
                    mark[x] = stamp
            for i in range(n_pub_only):
                if mark[only[i]] != stamp:
                    pub[new_n] = only[i]
                    new_n += 1
            for i in range(n_ex):
                pub[new_n] = extra[i]
                new_n += 1
            for i in range(n_ev):
                pub[new_n] = evict[i]
                new_n += 1
        pub_n = new_n
        for i in range(pub_n):
            zone[pub[i]] = 2
        # replay: move-outs (dirty ones written back), move-ins, then this epoch's accesses
        for i in range(n_old):
            x = old[i]
            if zone[x] == 0 and resident[x]:
                resident[x] = False
                move_outs += 1
                if dirty[x]:
                    dirty_outs += 1
                    dirty[x] = False
        for v in range(n_vm):
            for i in range(prv_n[v]):
                x = prv[v, i]
                if not resident[x]:
                    resident[x] = True
                    move_ins += 1
                if record:
                    rec_bin[n_rec] = x
                    rec_zone[n_rec] = v
                    n_rec += 1
        for i in range(pub_n):
            x = pub[i]
            if not resident[x]:
                resident[x] = True
                move_ins += 1
            if record:
                rec_bin[n_rec] = x
                rec_zone[n_rec] = -1
                n_rec += 1
        if record:
            rec_ptr[e + 1] = n_rec
        for k in range(pair_ptr[e], pair_ptr[e + 1]):
            x = pair_bin[k]
            in_pair[k] = resident[x]
            if resident[x] and pair_wrote[k]:
                dirty[x] = True
        for k in range(elig_ptr[e], elig_ptr[e + 1]):
            temp[elig_bin[k]] = 0.0
    counters[0] = move_ins
    counters[1] = move_outs
    counters[2] = dirty_outs
    counters[3] = dirty.sum()  # still dirty when the trace ends (never written back in the replay)


@native.jit(cache=False, nogil=True)
def _g2(n_epochs, n_bins, elig_ptr, elig_bin, elig_temp, pair_ptr, pair_bin, pair_count, pair_wrote, caps, ps,
        period, record, rec_bin, rec_zone, rec_ptr, in_pair, counters):
    """G2-vFRM (thesis Alg. 2) for every flash size of ``caps`` at once, with the replay; see :func:`g2_kernel`."""
    n_caps = caps.size
    temp = np.zeros(n_bins, np.float64)
    freq = np.zeros(n_bins, np.int64)
    zone = np.zeros((n_caps, n_bins), np.int8)
    resident = np.zeros((n_caps, n_bins), np.bool_)
    dirty = np.zeros((n_caps, n_bins), np.bool_)
    mark = np.zeros(n_bins, np.int64)
    stamp = 0
    c_max = max(caps.max(), 1)
    prv = np.zeros((n_caps, c_max), np.int64)
    prv_n = np.zeros(n_caps, np.int64)
    pub = np.zeros((n_caps, c_max), np.int64)
    pub_n = np.zeros(n_caps, np.int64)
    old = np.zeros(c_max, np.int64)
    evict = np.zeros(c_max, np.int64)
    work = np.zeros(n_bins + 2 * c_max + 1, np.int64)
    keys = np.zeros(n_bins, np.int64)
    big = np.int64(1) << 32
    n_rec = 0
    for e in range(n_epochs):
        for k in range(elig_ptr[e], elig_ptr[e + 1]):
            temp[elig_bin[k]] = elig_temp[k]
        a = pair_ptr[e - 1] if e >= 1 else 0
        b = pair_ptr[e] if e >= 1 else 0
        if e >= 1:  # F_{e-1} = (F_{e-2} >> 1 when aged) + M_{e-1}
            if e - 1 > 0 and (e - 1) % period == 0:
                for x in range(n_bins):
                    freq[x] >>= 1
            for k in range(a, b):
                freq[pair_bin[k]] += pair_count[k]
        # binFreq.keys in order (freq descending, ties by bin id): the top K, K = min(#keys, max cap)
        n_keys = 0
        for x in range(n_bins):
            if freq[x] > 0:
                keys[n_keys] = ((np.int64(2147483647) - freq[x]) * big) + x
                n_keys += 1
        kk = min(n_keys, c_max)
        top = _smallest_sorted(keys[:n_keys], kk)
        for i in range(kk):
            top[i] = top[i] % big
        for c in range(n_caps):
            cap = caps[c]
            p = ps[c]
            q = cap - p
            n_old = 0
            for i in range(prv_n[c]):
                old[n_old] = prv[c, i]
                n_old += 1
            for i in range(pub_n[c]):
                old[n_old] = pub[c, i]
                n_old += 1
            n_ev = 0
            # UpdatePrivateZone, Alg. 2 lines 6-13: the top len(prvBin) bins by frequency
            for i in range(prv_n[c]):
                zone[c, prv[c, i]] = 0
            m = min(p, n_keys)
            for i in range(m):
                x = top[i]
                zone[c, x] = 1
                prv[c, i] = x
            for i in range(prv_n[c]):  # evictBin: the bins that left the private zone
                x = old[i]
                if zone[c, x] != 1:
                    evict[n_ev] = x
                    n_ev += 1
            prv_n[c] = m
            # UpdatePublicZone, Alg. 2 lines 15-29; pubBin never holds a private bin (line 19, every branch)
            if n_keys <= p:
                k2 = 0
                for i in range(pub_n[c]):
                    x = pub[c, i]
                    if zone[c, x] != 1:
                        pub[c, k2] = x
                        k2 += 1
                pub_n[c] = k2
            elif n_keys <= p + q:  # lines 16-17: pubBin = binFreq.keys not in prvBin
                for i in range(pub_n[c]):
                    if zone[c, pub[c, i]] == 2:
                        zone[c, pub[c, i]] = 0
                k2 = 0
                for i in range(p, n_keys):
                    pub[c, k2] = top[i]
                    k2 += 1
                pub_n[c] = k2
            else:  # lines 18-29
                stamp += 1
                n_pop = 0
                for k in range(a, b):  # popBin less the private bins (line 20)
                    x = pair_bin[k]
                    if zone[c, x] != 1:
                        work[n_pop] = x
                        n_pop += 1
                        mark[x] = stamp
                if n_pop >= q:  # lines 21-23
                    sel = _select(work[:n_pop].copy(), temp, q, True)
                    for i in range(pub_n[c]):
                        if zone[c, pub[c, i]] == 2:
                            zone[c, pub[c, i]] = 0
                    k2 = 0
                    for x in sel:
                        pub[c, k2] = x
                        k2 += 1
                    pub_n[c] = k2
                else:  # lines 25-29: (pubBin + evictBin) less popBin, its top q - |popBin|, then popBin
                    n_rest = 0
                    rest = work[n_pop:]
                    for i in range(pub_n[c]):
                        x = pub[c, i]
                        if zone[c, x] == 2:
                            zone[c, x] = 0
                            if mark[x] != stamp:
                                rest[n_rest] = x
                                n_rest += 1
                    for i in range(n_ev):
                        x = evict[i]
                        if mark[x] != stamp:
                            rest[n_rest] = x
                            n_rest += 1
                    sel = _select(rest[:n_rest].copy(), temp, q - n_pop, True)
                    k2 = 0
                    for x in sel:
                        pub[c, k2] = x
                        k2 += 1
                    for i in range(n_pop):
                        pub[c, k2] = work[i]
                        k2 += 1
                    pub_n[c] = k2
            for i in range(pub_n[c]):
                zone[c, pub[c, i]] = 2
            # replay
            for i in range(n_old):
                x = old[i]
                if zone[c, x] == 0 and resident[c, x]:
                    resident[c, x] = False
                    counters[c, 1] += 1
                    if dirty[c, x]:
                        counters[c, 2] += 1
                        dirty[c, x] = False
            for i in range(prv_n[c]):
                x = prv[c, i]
                if not resident[c, x]:
                    resident[c, x] = True
                    counters[c, 0] += 1
                if record:
                    rec_bin[n_rec] = x
                    rec_zone[n_rec] = 0
                    n_rec += 1
            for i in range(pub_n[c]):
                x = pub[c, i]
                if not resident[c, x]:
                    resident[c, x] = True
                    counters[c, 0] += 1
                if record:
                    rec_bin[n_rec] = x
                    rec_zone[n_rec] = -1
                    n_rec += 1
            if record:
                rec_ptr[e + 1] = n_rec
            for k in range(pair_ptr[e], pair_ptr[e + 1]):
                x = pair_bin[k]
                in_pair[c, k] = resident[c, x]
                if resident[c, x] and pair_wrote[k]:
                    dirty[c, x] = True
        for k in range(elig_ptr[e], elig_ptr[e + 1]):
            temp[elig_bin[k]] = 0.0
    for c in range(n_caps):
        counters[c, 3] = dirty[c].sum()  # still dirty when the trace ends (never written back in the replay)


@native.jit(cache=False, nogil=True)
def since_write_kernel(keys, ranks, n_bins, pair_epoch, pair_bin, pair_wrote, inf):  # pragma: no cover - numba
    """For every placed ``(epoch e, bin b)`` (``keys = e * n_bins + b`` sorted, unique; ``ranks`` its rank): the
    largest rank of b over epochs ``w .. e``, ``w`` its latest write epoch ``<= e`` (an access pair of b with
    ``pair_wrote``), or ``inf`` when b has no such write or was neither placed nor accessed in an epoch between (an
    access pair that is not placed has rank ``inf``). One pass over the placed keys and the access pairs (both in
    (epoch, bin) order), each bin's running maximum and its last epoch carried in arrays over the bins."""
    n = keys.size
    m = pair_epoch.size
    out = np.empty(n, np.int64)
    last = np.full(n_bins, -2, np.int64)  # the last epoch with an entry of the bin (-2: none yet)
    cur = np.zeros(n_bins, np.int64)      # the running maximum since the bin's last write
    big = np.iinfo(np.int64).max
    i = 0
    j = 0
    while i < n or j < m:
        ki = keys[i] if i < n else big
        kj = pair_epoch[j] * n_bins + pair_bin[j] if j < m else big
        placed = ki <= kj
        if placed:
            e = ki // n_bins
            b = ki % n_bins
            r = ranks[i]
        else:
            e = pair_epoch[j]
            b = pair_bin[j]
            r = inf
        wrote = False
        if kj <= ki:
            wrote = pair_wrote[j]
            j += 1
        if wrote:
            c = r                             # a write starts the bin's residency anew
        elif last[b] == e - 1:
            c = max(cur[b], r)
        else:
            c = inf                           # no entry in the epoch before: not resident throughout
        cur[b] = c
        last[b] = e
        if placed:
            out[i] = c
            i += 1
    return out


@native.jit(cache=False, nogil=True)
def lookup_kernel(keys, values, query, missing, valid, use_valid):  # pragma: no cover - compiled by numba
    """``values[i]`` where ``keys[i] == query[t]`` (``keys`` sorted, unique) and ``valid[t]`` (when ``use_valid``), else
    ``missing``, for every query. Each search starts from the previous answer when the queries ascend (galloping,
    then bisection), so sorted queries cost one pass over ``keys``; a query below the previous one searches from 0."""
    n = keys.size
    out = np.empty(query.size, np.int64)
    pos = 0
    for t in range(query.size):
        q = query[t]
        if t > 0 and q < query[t - 1]:
            pos = 0
        lo = pos  # keys[pos .. lo - 1] < q throughout
        hi = lo
        step = 1
        while hi < n and keys[hi] < q:
            lo = hi + 1
            hi = lo + step
            step *= 2
        if hi > n:
            hi = n
        while lo < hi:
            mid = (lo + hi) >> 1
            if keys[mid] < q:
                lo = mid + 1
            else:
                hi = mid
        pos = lo
        if pos < n and keys[pos] == q and (not use_valid or valid[t]):
            out[t] = values[pos]
        else:
            out[t] = missing
    return out


@native.jit(cache=False, nogil=True)
def merge_kernel(keys, values, ik, iv):  # pragma: no cover - compiled by numba
    """Two key-sorted lists of (key, value) entries merged into one, in one pass: at equal keys the entries of
    ``keys`` first, each list in its own order (what a stable sort of the concatenation gives)."""
    n = keys.size
    m = ik.size
    k = np.empty(n + m, np.int64)
    v = np.empty(n + m, np.int64)
    i = 0
    j = 0
    for o in range(n + m):
        if j >= m or (i < n and keys[i] <= ik[j]):
            k[o] = keys[i]
            v[o] = values[i]
            i += 1
        else:
            k[o] = ik[j]
            v[o] = iv[j]
            j += 1
    return k, v


#: The public kernels (arguments as in :func:`_keep`, :func:`_g1`, :func:`_g2`), compiled on their first call
#: with the helpers above (see :mod:`tieringlab.native`).
keep_kernel = _keep
g1_kernel = _g1
g2_kernel = _g2
