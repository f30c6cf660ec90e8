"""The LMST controller (thesis Sec. 4.1.2.2-4.1.2.3, Eqs. 3-17): selection, validation and scheduling of one
window's migrations, a jitted ``lax.scan`` over the candidates vmapped over parameter sets.

Eqs. 11 and 14 are reconstructed, Eqs. 12/15 read as a benefit and Eq. 9 guarded at ``rho_max`` as the
package docstring (:mod:`tieringlab.policies.lmst`) says.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from tieringlab.arrays import bucket
from tieringlab.models import queueing
from tieringlab.policies.lmst.layout import SystemLayout
from tieringlab.policies.lmst.params import LmstParams

__all__ = ["eq4_rates", "plan_window"]


def _g(s, mu, x):
    """Eq. 9, ``g(j, x) = s_{D_j} / (mu_{D_j} - x)`` (inf when ``x >= mu``), via queueing.lmst_response_time."""
    return queueing.lmst_response_time(x, mu, s)


def _g_guard(s, mu, x, rho_max):
    """Eq. 9 with the A10 guard: ``s / max(mu - x, (1 - rho_max) mu)``."""
    return s / jnp.maximum(mu - x, (1.0 - rho_max) * mu)


@jax.jit
def _plan_scan(lam_A, lam_An, s_D, mapping, eligible, free, alun_class, mu, fast, sla, t_win, alun_bytes,
               e, beta, tau_h, tau_l, rho_max, guard_next, rt_back, hide_mig):
    """LMST Sec. 4.1.2.2-4.1.2.3 for one window and one parameter set: a ``lax.scan`` over the candidates.

    Returns per scan position (backward candidates coldest first, then forward ones hottest first):
    the ALUN, its destination, whether it was validated, the kind (0 backward, 1 forward) and the
    Eq. 17 duration estimate.
    """
    n = lam_A.shape[0]
    m = mu.shape[0]
    on_fast = fast[mapping]
    back_ok = eligible & on_fast & (alun_class == 1) & (lam_A < tau_l)      # cold SLA^L data on SSD
    fwd_ok = eligible & ~on_fast & (lam_A > tau_h)                           # hot data on FC
    order_b = jnp.argsort(jnp.where(back_ok, lam_A, jnp.inf), stable=True)
    order_f = jnp.argsort(jnp.where(fwd_ok, -lam_A, jnp.inf), stable=True)
    alun_seq = jnp.concatenate([order_b, order_f])
    kind_seq = jnp.concatenate([jnp.zeros(n, jnp.int32), jnp.ones(n, jnp.int32)])
    elig_seq = jnp.concatenate([back_ok[order_b], fwd_ok[order_f]])
    lam_D = queueing.lmst_disk_arrival_rate(lam_A, mapping, m)                            # Eq. 3
    lam_Dn = queueing.lmst_disk_arrival_rate(lam_An, mapping, m)
    lam_c = jnp.zeros((m, 2)).at[mapping, alun_class].add(lam_A)                          # per disk and class
    disks = jnp.arange(m)

    def step(carry, x):
        lam_D, lam_Dn, lam_c, free = carry
        i, kind, elig = x
        la, lan = lam_A[i], lam_An[i]
        k = mapping[i]
        cls = alun_class[i]
        want_fast = kind == 1
        cand = (fast == want_fast) & (free > 0)
        j = jnp.argmin(jnp.where(cand, lam_D, jnp.inf))       # least-loaded disk with a free slot (ties: lowest)
        has = jnp.any(cand)
        # (1) SLA constraint: Eq. 7 and Eq. 8 at the destination (queueing.lmst_sla_constraint), source stable
        lam_bar = jnp.cumsum(lam_c, axis=1)                                            # Eq. U2
        sla_ok = queueing.lmst_sla_constraint(la, cls, lam_D, lam_bar, mu, s_D, sla)[j]
        src_ok = lam_D[k] < mu[k]
        # Eq. 17: t_mgt = beta * Capacity_of_ALUN / dl, dl = min(mu_k - lam_k, mu_j - lam_j) (Sec. 4.1.2.3)
        dl = jnp.minimum(mu[k] - lam_D[k], mu[j] - lam_D[j])
        t_mgt = jnp.where(dl > 0, beta * alun_bytes / jnp.where(dl > 0, dl, 1.0), jnp.inf)
        time_ok = t_mgt < t_win
        tm = jnp.minimum(t_mgt, t_win)
        # (2) response-time constraint, Eqs. 10-16 (Eqs. 11 and 14 reconstructed, see module docstring)
        gn = lambda d, x: jnp.where(guard_next, _g_guard(s_D[d], mu[d], x, rho_max), _g(s_D[d], mu[d], x))  # noqa: E731
        rt_k = (_g(s_D[k], mu[k], lam_D[k]) + gn(k, lam_Dn[k])) * t_win                         # Eq. 10
        # the during-migration term: A10 (a) guarded g(lambda + dl), or (c) g(lambda) (migration I/Os unseen)
        gm = lambda d: jnp.where(hide_mig, _g(s_D[d], mu[d], lam_D[d]),  # noqa: E731
                                 _g_guard(s_D[d], mu[d], lam_D[d] + dl, rho_max))
        rt_k2 = (_g(s_D[k], mu[k], lam_D[k]) * (t_win - tm) + gm(k) * tm
                 + gn(k, lam_Dn[k] - lan) * t_win)                                              # Eq. 11
        rt_j = (_g(s_D[j], mu[j], lam_D[j]) + gn(j, lam_Dn[j])) * t_win                         # Eq. 13
        rt_j2 = (_g(s_D[j], mu[j], lam_D[j]) * (t_win - tm) + gm(j) * tm
                 + gn(j, lam_Dn[j] + lan) * t_win)                                              # Eq. 14
        ben_k = (rt_k - rt_k2) / rt_k                                                           # Eq. 12 (as a benefit)
        ben_j = (rt_j - rt_j2) / rt_j                                                           # Eq. 15
        rt_ok = (ben_k + ben_j) / 2.0 > e                                                       # Eq. 16
        rt_ok = jnp.where(jnp.isfinite(rt_k) & jnp.isfinite(rt_j), rt_ok, False)
        need_rt = (kind == 1) | rt_back
        acc = elig & has & sla_ok & src_ok & time_ok & (rt_ok | ~need_rt)
        upd = jnp.where(acc, 1.0, 0.0)
        move = (disks == j).astype(jnp.float64) - (disks == k).astype(jnp.float64)   # +1 at j, -1 at k
        lam_D = lam_D + upd * la * move
        lam_Dn = lam_Dn + upd * lan * move
        lam_c = lam_c.at[k, cls].add(-upd * la).at[j, cls].add(upd * la)
        free = free + jnp.where(acc, (disks == k).astype(free.dtype) - (disks == j).astype(free.dtype), 0)
        return (lam_D, lam_Dn, lam_c, free), (i, j, acc, kind, t_mgt)

    _, out = jax.lax.scan(step, (lam_D, lam_Dn, lam_c, free), (alun_seq, kind_seq, elig_seq))
    return out


# vmapped over parameter sets (the knobs and the per-set state: mapping, eligibility, free slots, loads)
_plan_batch = jax.jit(jax.vmap(_plan_scan, in_axes=(0, 0, 0, 0, 0, 0, None, None, None, None, None, None,
                                                     0, 0, 0, 0, 0, None, None, None)))


def eq4_rates(samples: np.ndarray, alpha) -> np.ndarray:
    """Eq. 4, ``lambda_{A_i} = m(lambda_{A'_i}) + alpha Delta(lambda_{A'_i})``: mean plus ``alpha`` times the
    (population) standard deviation of each ALUN's recorded rates ``samples[..., i, :]`` (bytes/s)."""
    samples = np.asarray(samples, float)
    a = np.asarray(alpha, float)
    return samples.mean(-1)[None, :] + a.reshape(-1, 1) * samples.std(-1)[None, :] if a.ndim else \
        samples.mean(-1) + float(a) * samples.std(-1)


def plan_window(p: LmstParams, layout: SystemLayout, samples, samples_next, s_D, mapping, migrating, reserved,
                alun_bytes: int):
    """The plan of one window for each parameter set of ``p`` (Sec. 4.1.2.2-4.1.2.3).

    ``samples``: ``(n, k)`` the recorded per-ALUN rates (bytes/s) of the window the decision looks at;
    ``samples_next``: those that give the next-window loads (``lambda'``; the same array in the causal
    reading); ``s_D``: ``(m,)`` mean I/O size per disk (bytes); ``mapping``, ``migrating`` (bool),
    ``reserved`` (per disk, incoming in-flight migrations): ``(C, n)``, ``(C, n)``, ``(C, m)`` per set.

    Returns ``(plans, validated_forward)``: per set a dict of arrays ``alun, dst, kind, est`` (backward
    candidates first, then forward, in validation order) and the ``(C, n)`` mask of ALUNs validated for
    a forward migration.
    """
    k = p.knob_arrays()
    C = p.n_configs
    n = layout.alun_class.size
    lam_A = np.broadcast_to(eq4_rates(samples, k["alpha"]), (C, n))
    lam_An = np.broadcast_to(eq4_rates(samples_next, k["alpha"]), (C, n))
    mapping = np.asarray(mapping, np.int64).reshape(C, n)
    migrating = np.asarray(migrating, bool).reshape(C, n)
    occupied = np.stack([np.bincount(mapping[c], minlength=layout.m) for c in range(C)]) + np.asarray(reserved)
    free = (layout.slots - occupied).astype(np.int32)
    s_Db = np.broadcast_to(np.asarray(s_D, float), (C, layout.m))
    # padded to size classes (ALUNs: idle, never eligible; parameter sets: copies of the last), so that the
    # jitted scan compiles once per class, not per workload and sweep length
    nb, cb = bucket(n, minimum=64), bucket(C)

    def pad(x, fill, axis_n=True):
        x = np.asarray(x)
        if axis_n:
            x = np.concatenate([x, np.full(x.shape[:-1] + (nb - n,), fill, x.dtype)], axis=-1)
        return np.concatenate([x, np.repeat(x[-1:], cb - C, axis=0)], axis=0) if x.ndim and x.shape[0] == C else x

    kn = {name: np.concatenate([k[name], np.repeat(k[name][-1:], cb - C)]) for name in k}
    out = _plan_batch(jnp.asarray(pad(lam_A, 0.0)), jnp.asarray(pad(lam_An, 0.0)), jnp.asarray(pad(s_Db, 0.0, False)),
                      jnp.asarray(pad(mapping, 0)), jnp.asarray(pad(~migrating, False)),
                      jnp.asarray(pad(free, 0, False)),
                      jnp.asarray(np.r_[layout.alun_class, np.zeros(nb - n, np.int64)]), jnp.asarray(layout.mu),
                      jnp.asarray(layout.fast), jnp.asarray(layout.sla), float(p.window_s), float(alun_bytes),
                      jnp.asarray(kn["e"]), jnp.asarray(kn["beta"]), jnp.asarray(kn["tau_h"]), jnp.asarray(kn["tau_l"]),
                      jnp.asarray(kn["rho_max"]), p.timing == "lookahead", bool(p.rt_check_backward),
                      p.migration_term == "hidden")
    alun, dst, acc, kind, est = (np.asarray(x)[:C] for x in out)
    plans = []
    fwd = np.zeros((C, n), bool)
    for c in range(C):                       # compaction of C small arrays (parameter sets, not jobs)
        sel = acc[c]
        plans.append({"alun": alun[c][sel].astype(np.int64), "dst": dst[c][sel].astype(np.int64),
                      "kind": kind[c][sel].astype(np.int64), "est": est[c][sel].astype(np.float64)})
        fwd[c, alun[c][sel & (kind[c] == 1)]] = True
    return plans, fwd
