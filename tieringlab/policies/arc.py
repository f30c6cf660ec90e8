"""ARC page cache (Megiddo & Modha, FAST'03, Fig. 4), the vFRM paper's second baseline (Sec. 5.1).

Lists T1 (seen once recently), T2 (seen at least twice) holding data, ghost lists B1, B2 holding ids
only (they do not count against the capacity ``c``), and the adaptive target ``p`` for |T1|. The
adaptation step is the paper's, with a real-valued ``p``: ``p <- min(p + max(|B2|/|B1|, 1), c)`` on a
B1 hit and ``p <- max(p - max(|B1|/|B2|, 1), 0)`` on a B2 hit. libcachesim 0.3.5 (the oracle of the
tests) behaves the same way; an integer ``p`` with floor division (as in some libCacheSim source
versions) gives different hits on about a quarter of small random traces. Data leaving T1/T2 (to a
ghost list or out) writes back iff dirty (vFRM Table 2(b)).

Two engines on the shared lists of :mod:`tieringlab.policies._arraylist` (:func:`jax_step`,
:func:`native_loop`); trace mode and the registry entry "ARC" are in :mod:`tieringlab.policies.caching`.
"""

from __future__ import annotations

import jax.numpy as jnp

from tieringlab.policies._arraylist import B1, B2, DIRTY, LIST, META, T1, T2, admit, dirty, native_kernel, push, remove

__all__ = ["jax_step", "native_loop"]


def jax_step(S, x, w, c):
    """ARC (Megiddo & Modha, FAST'03, Fig. 4) with a real-valued target ``p``.

    Case I (x in T1 ∪ T2): hit, move x to MRU of T2. Case II/III (x in B1/B2): adapt p, REPLACE,
    move x to MRU of T2. Case IV (x new), cache full: A) |T1|+|B1| = c: if |T1| < c delete LRU of B1
    and REPLACE, else delete LRU of T1; B) otherwise, if |T1|+|T2|+|B1|+|B2| = 2c delete LRU of B2,
    then REPLACE; x goes to MRU of T1. (x leaves its ghost list before REPLACE runs, which moves a
    page between T and B lists only: the lists end up the same as in the paper's order.)
    """
    nil = S.nil
    px, nx, mx = S.row(x)
    t1, t2, g1, g2 = S.tail(T1), S.tail(T2), S.tail(B1), S.tail(B2)
    r_t1, r_t2, r_g1, r_g2 = S.row(t1), S.row(t2), S.row(g1), S.row(g2)
    s1, s2, b1, b2 = S.size(T1), S.size(T2), S.size(B1), S.size(B2)
    lst = mx & LIST
    hit = (lst == T1) | (lst == T2)
    in_b1, in_b2 = lst == B1, lst == B2
    fresh = lst == 0
    # adaptation (Fig. 4 cases II/III): delta1 = max(|B2|/|B1|, 1), delta2 = max(|B1|/|B2|, 1), real p
    d1 = jnp.maximum(b2.astype(jnp.float64) / jnp.maximum(b1, 1), 1.0)
    d2 = jnp.maximum(b1.astype(jnp.float64) / jnp.maximum(b2, 1), 1.0)
    p = S.p
    p = jnp.where(in_b1, jnp.minimum(p + d1, c), jnp.where(in_b2, jnp.maximum(p - d2, 0), p))
    full = fresh & (s1 + s2 >= c)
    case_a = full & (s1 + b1 >= c)
    del_b1 = case_a & (s1 < c)
    del_t1 = case_a & (s1 >= c)
    del_b2 = full & (~case_a) & (s1 + s2 + b1 + b2 >= 2 * c)
    replace = in_b1 | in_b2 | del_b1 | (full & ~case_a)
    # x leaves its list (hit or ghost hit)
    S.remove(x, lst, px, nx, ~fresh)
    # delete the LRU ghost of B1 or B2 (directory replacement; only when x is new)
    del_g = del_b1 | del_b2
    g = jnp.where(del_b1, g1, g2)
    pg = jnp.where(del_b1, r_g1[0], r_g2[0])
    S.remove(g, jnp.where(del_b1, B1, B2), pg, nil, del_g)
    S.wr(S.at(g, del_g), META, 0)
    # REPLACE(x, p): LRU of T1 to MRU of B1 if |T1| > p or (x in B2 and |T1| = p), else T2 -> B2
    from_t1 = (s1 > 0) & ((s1 > p) | ((s1 == p) & in_b2))
    v_t1 = del_t1 | from_t1
    v = jnp.where(v_t1, t1, t2)
    pv = jnp.where(v_t1, r_t1[0], r_t2[0])
    mv = jnp.where(v_t1, r_t1[2], r_t2[2])
    ev = del_t1 | replace
    wb = ev & dirty(mv)
    S.remove(v, jnp.where(v_t1, T1, T2), pv, nil, ev)
    dst = jnp.where(from_t1, B1, B2)
    S.push(v, dst, replace)
    S.wr(S.at(v, ev), META, jnp.where(replace, dst, 0))
    # x to MRU of T2 (hit or ghost hit) or of T1 (new)
    lt = jnp.where(fresh, T1, T2)
    S.push(x, lt, True)
    S.wr(x, META, lt | (mx & DIRTY) | jnp.where(w, DIRTY, 0))
    S.p = p
    S.output(hit, wb)
    return S


@native_kernel
def native_loop(ids, is_write, c, prev, nxt, meta, head, tail, size, p_state, hit_out, wb_out):
    """ARC (Megiddo & Modha, FAST'03, Fig. 4), real-valued ``p`` (the same decisions as :func:`jax_step`).

    Case I (x in T1 ∪ T2): hit, x to MRU of T2. Cases II/III (x in B1/B2): adapt p, x leaves its ghost
    list, REPLACE, x to MRU of T2. Case IV (x new) with |T1| + |T2| >= c: A) |T1| + |B1| >= c: if
    |T1| < c delete LRU of B1 and REPLACE, else delete LRU of T1; B) otherwise delete LRU of B2 if
    |T1| + |T2| + |B1| + |B2| >= 2c, then REPLACE; x to MRU of T1.
    """
    nil = prev.size - 1
    p = p_state[0]
    for t in range(ids.size):
        x = ids[t]
        mx = meta[x]
        lst = mx & LIST
        s1, s2, b1, b2 = size[T1], size[T2], size[B1], size[B2]
        hit = lst == T1 or lst == T2
        in_b1 = lst == B1
        in_b2 = lst == B2
        fresh = lst == 0
        if in_b1:  # delta1 = max(|B2| / |B1|, 1)
            p = min(p + max(b2 / max(b1, 1), 1.0), float(c))
        elif in_b2:  # delta2 = max(|B1| / |B2|, 1)
            p = max(p - max(b1 / max(b2, 1), 1.0), 0.0)
        full = fresh and s1 + s2 >= c
        case_a = full and s1 + b1 >= c
        del_b1 = case_a and s1 < c
        del_t1 = case_a and s1 >= c
        del_b2 = full and (not case_a) and s1 + s2 + b1 + b2 >= 2 * c
        replace = in_b1 or in_b2 or del_b1 or (full and not case_a)
        if not fresh:  # x leaves its list (hit or ghost hit)
            remove(x, lst, prev, nxt, head, tail, size, nil)
        if del_b1 or del_b2:  # directory replacement: the LRU ghost of B1 or B2 is forgotten
            lg = B1 if del_b1 else B2
            g = tail[lg]
            remove(g, lg, prev, nxt, head, tail, size, nil)
            meta[g] = 0
        wb = False
        if del_t1 or replace:
            # REPLACE(x, p): LRU of T1 to MRU of B1 if |T1| > p or (x in B2 and |T1| = p), else T2 -> B2
            from_t1 = s1 > 0 and (s1 > p or (s1 == p and in_b2))
            lv = T1 if (del_t1 or from_t1) else T2
            v = tail[lv]
            wb = (meta[v] & DIRTY) != 0
            remove(v, lv, prev, nxt, head, tail, size, nil)
            if replace:
                dst = B1 if from_t1 else B2
                push(v, dst, prev, nxt, head, tail, size, nil)
                meta[v] = dst
            else:
                meta[v] = 0
        lt = T1 if fresh else T2
        admit(x, lt, mx, DIRTY if is_write[t] else 0, prev, nxt, meta, head, tail, size, nil)
        hit_out[t] = hit
        wb_out[t] = wb
    p_state[0] = p
