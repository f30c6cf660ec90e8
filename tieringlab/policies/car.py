"""CAR page cache (Bansal & Modha, FAST'04, Fig. 2), the vFRM paper's third baseline (Sec. 5.1).

Two clocks T1, T2 with reference bits and ghost lists B1, B2; the pseudo-code of the CAR paper is
followed literally (line numbers in the comments), with a real-valued target ``p``. A clock's head
(the hand) is the LRU end of its list here; "the tail of a clock" is the MRU end. Data demoted to a
ghost list writes back iff dirty (vFRM Table 2(b)).

Two engines on the shared lists of :mod:`tieringlab.policies._arraylist` (:func:`jax_step`,
:func:`native_loop`); trace mode and the registry entry "CAR" are in :mod:`tieringlab.policies.caching`.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from tieringlab.policies._arraylist import (
    B1,
    B2,
    DIRTY,
    FLAG,
    FULL,
    LIST,
    META,
    REF,
    T1,
    T2,
    TAIL,
    WB,
    Cache,
    admit,
    dirty,
    native_kernel,
    push,
    remove,
)

__all__ = ["jax_step", "native_loop"]


def jax_step(S, x, w, c):
    """CAR (Bansal & Modha, FAST'04, Fig. 2): lines 1-21 around replace() (lines 22-39).

    A clock's head (the hand) is the LRU end of its list here; "the tail of a clock" is the MRU end.
    """
    nil = S.nil
    _, _, mx = S.row(x)
    lst = mx & LIST
    hit = (lst == T1) | (lst == T2)
    full = (~hit) & (S.size(T1) + S.size(T2) >= c)
    S.slot(FLAG, full)  # 1 while replace() has not found its victim
    S.slot(FULL, full)
    S.slot(WB, 0)
    S.commit(scalars=False)
    e = S.e

    def body(a):  # one move of the clock hand, lines 25-39
        T = Cache(a, nil)
        use_t1 = T.size(T1).astype(jnp.float64) >= jnp.maximum(1.0, T.p)  # line 25
        ls = jnp.where(use_t1, T1, T2)
        hnd = T.hd(TAIL, ls)
        ph, _, mh = T.row(hnd)
        r = (mh & REF) != 0
        T.slot(WB, (~r) & dirty(mh))  # lines 27-28 / 34-35: demote to MRU of B1 / B2
        T.slot(FLAG, r)
        T.remove(hnd, ls, ph, nil, True)
        dst = jnp.where(r, T2, ls + 2)  # lines 30 / 37: reset the bit, move to the tail of T2
        T.push(hnd, dst, True)
        T.wr(hnd, META, jnp.where(r, T2 | (mh & DIRTY), dst))
        T.commit()
        return T.a

    S = Cache(jax.lax.while_loop(lambda a: a[e + FLAG] != 0, body, S.a), nil)
    full, wb = S.a[e + FULL] != 0, S.a[e + WB] != 0
    px, nx, mx = S.row(x)  # replace() does not move x, but may have changed its neighbours
    lst = mx & LIST
    hit = (lst == T1) | (lst == T2)  # as before replace(), which runs only on a miss
    in_b1, in_b2 = lst == B1, lst == B2
    in_b = in_b1 | in_b2
    s1, s2, b1, b2 = S.size(T1), S.size(T2), S.size(B1), S.size(B2)
    del_b1 = full & (~in_b) & (s1 + b1 == c)  # lines 6-7
    del_b2 = full & (~in_b) & (~del_b1) & (s1 + s2 + b1 + b2 == 2 * c)  # lines 8-9
    del_g = del_b1 | del_b2
    lg = jnp.where(del_b1, B1, B2)
    g = S.hd(TAIL, lg)
    pg, _, _ = S.row(g)
    S.remove(g, lg, pg, nil, del_g)
    S.wr(S.at(g, del_g), META, 0)
    b1, b2 = S.size(B1).astype(jnp.float64), S.size(B2).astype(jnp.float64)
    p = S.p
    p = jnp.where(in_b1, jnp.minimum(p + jnp.maximum(1.0, b2 / jnp.maximum(b1, 1.0)), c), p)  # line 15
    p = jnp.where(in_b2, jnp.maximum(p - jnp.maximum(1.0, b1 / jnp.maximum(b2, 1.0)), 0.0), p)  # line 18
    S.p = p
    S.remove(x, lst, px, nx, in_b)
    lt = jnp.where(in_b, T2, T1)
    S.push(x, lt, ~hit)  # lines 13, 16, 19
    wbit = jnp.where(w, DIRTY, 0)
    S.wr(x, META, jnp.where(hit, mx | REF | wbit, lt | wbit))  # line 2 (hit: bit 1) / bit 0 on insertion
    S.output(hit, wb)
    return S


@native_kernel
def native_loop(ids, is_write, c, prev, nxt, meta, head, tail, size, p_state, hit_out, wb_out):
    """CAR (Bansal & Modha, FAST'04, Fig. 2), real-valued ``p`` (the same decisions as :func:`jax_step`).

    A clock's head (the hand) is the LRU end (tail) of its list here; "the tail of a clock" is the MRU
    end (head).
    """
    nil = prev.size - 1
    p = p_state[0]
    for t in range(ids.size):
        x = ids[t]
        lst = meta[x] & LIST
        hit = lst == T1 or lst == T2
        wb = False
        full = (not hit) and size[T1] + size[T2] >= c
        if full:  # replace(), lines 22-39
            while True:
                ls = T1 if size[T1] >= max(1.0, p) else T2  # line 25
                hnd = tail[ls]
                mh = meta[hnd]
                r = (mh & REF) != 0
                remove(hnd, ls, prev, nxt, head, tail, size, nil)
                if r:  # lines 30 / 37: reset the reference bit, make it the tail (MRU) of T2
                    push(hnd, T2, prev, nxt, head, tail, size, nil)
                    meta[hnd] = T2 | (mh & DIRTY)
                else:  # lines 27-28 / 34-35: demote to MRU of B1 / B2 (its data leaves the cache)
                    wb = (mh & DIRTY) != 0
                    push(hnd, ls + 2, prev, nxt, head, tail, size, nil)
                    meta[hnd] = ls + 2
                    break
        mx = meta[x]  # replace() does not move x
        in_b1 = lst == B1
        in_b2 = lst == B2
        in_b = in_b1 or in_b2
        s1, s2, b1, b2 = size[T1], size[T2], size[B1], size[B2]
        if full and not in_b:
            lg = 0
            if s1 + b1 == c:  # lines 6-7
                lg = B1
            elif s1 + s2 + b1 + b2 == 2 * c:  # lines 8-9
                lg = B2
            if lg != 0:
                g = tail[lg]
                remove(g, lg, prev, nxt, head, tail, size, nil)
                meta[g] = 0
        b1f, b2f = float(size[B1]), float(size[B2])
        if in_b1:  # line 15
            p = min(p + max(1.0, b2f / max(b1f, 1.0)), float(c))
        elif in_b2:  # line 18
            p = max(p - max(1.0, b1f / max(b2f, 1.0)), 0.0)
        wbit = DIRTY if is_write[t] else 0
        if hit:  # line 2: set the reference bit
            meta[x] = mx | REF | wbit
        else:
            if in_b:
                remove(x, lst, prev, nxt, head, tail, size, nil)
            lt = T2 if in_b else T1  # lines 13, 16, 19 (reference bit 0 on insertion)
            admit(x, lt, 0, wbit, prev, nxt, meta, head, tail, size, nil)
        hit_out[t] = hit
        wb_out[t] = wb
    p_state[0] = p
