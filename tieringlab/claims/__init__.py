"""The claims ledger's definitions: one row per paper claim, with the check that decides it.

Claims live in the submodules of this package, one per paper or notebook, each exposing a
``CLAIMS`` list. A claim names the notebook (``source``) whose metrics carry its reproduced value;
the verdict is computed by :meth:`Claim.verdict` from that value, never typed in:

- ``holds``              the reproduced value passes the claim's check (its tolerance is stated)
- ``differs``            it does not; the note says why where we know
- ``not reproduced yet`` no notebook has produced a value (yet)

Each row also says what kind of evidence it is (:data:`KINDS`): ``claim`` (a claim of a paper that
our run could contradict: the only kind counted in the ledger's verdicts), ``calibration`` (a number
our synthetic inputs were fitted to: a "holds" confirms the fit, not the paper) and ``sanity`` (a
property the simulator has by construction: a check of the code, not of the paper) and ``extension`` (a
statement of ours about something no paper claims, e.g. an extra cache policy beside a paper's baselines:
checked like a claim, listed under its own paper name, never counted as evidence about the papers) and
``precondition`` (a property of our workload or plant that a claim's mechanism needs, measured on the run, with
its threshold and reason fixed from the paper before the first run: "the footprint exceeds the cache", "copies
finish within the warm-up"). A claim lists the preconditions it needs (``requires``); when one of them fails
on the run, the claim's verdict is ``untestable`` (:func:`verdict_given`), naming it, and is counted apart:
the run could not exercise the mechanism, which says nothing about the paper's system. A precondition is never
a calibration target: no twin or scenario is tuned to pass one by looking at a policy's result.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import pkgutil
from functools import lru_cache

Number = float | int

HOLDS, DIFFERS, MISSING, UNTESTABLE = "holds", "differs", "not reproduced yet", "untestable"

#: What kind of evidence a row is; only "claim" rows enter the verdict counts.
KINDS = ("claim", "calibration", "sanity", "extension", "precondition")


@dataclasses.dataclass(frozen=True)
class Check:
    """How a reproduced value is compared with the paper's. Build with the helpers below."""

    kind: str  # "abs" | "rel" | "ge" | "gt" | "le" | "between" | "true" | "false"
    target: Number | None = None
    tol: Number = 0.0
    hi: Number | None = None

    def passes(self, value: float | bool) -> bool:
        if self.kind in ("true", "false"):
            return bool(value) is (self.kind == "true")
        v = float(value)
        if not math.isfinite(v):
            return False
        if self.kind == "abs":
            return abs(v - self.target) <= self.tol
        if self.kind == "rel":
            return abs(v - self.target) <= self.tol * abs(self.target)
        if self.kind == "ge":
            return v >= self.target - self.tol
        if self.kind == "gt":
            return v > self.target
        if self.kind == "le":
            return v <= self.target + self.tol
        if self.kind == "between":
            return self.target - self.tol <= v <= self.hi + self.tol
        raise ValueError(f"unknown check kind {self.kind!r}")

    def describe(self, unit: str = "") -> str:
        u = f" {unit}" if unit else ""
        if self.kind == "abs":
            return f"±{self.tol:g}{u}"
        if self.kind == "rel":
            return f"±{self.tol * 100:g} % relative"
        if self.kind == "ge":
            return f"≥ {self.target - self.tol:g}{u}"
        if self.kind == "gt":
            return f"> {self.target:g}{u}"
        if self.kind == "le":
            return f"≤ {self.target + self.tol:g}{u}"
        if self.kind == "between":
            return f"in [{self.target - self.tol:g}, {self.hi + self.tol:g}]{u}"
        return "must be true" if self.kind == "true" else "must be false"


def within_abs(target: Number, tol: Number) -> Check:
    return Check("abs", target, tol)


def within_rel(target: Number, tol: Number) -> Check:
    return Check("rel", target, tol)


def at_least(bound: Number, tol: Number = 0.0) -> Check:
    return Check("ge", bound, tol)


def above(bound: Number) -> Check:
    """Strictly above ``bound``: for a value that is a rule's margin (the lower end of a paired interval), where the
    bound itself (two identical runs: 0 +- 0) does not pass."""
    return Check("gt", bound)


def at_most(bound: Number, tol: Number = 0.0) -> Check:
    return Check("le", bound, tol)


def between(lo: Number, hi: Number, tol: Number = 0.0) -> Check:
    return Check("between", lo, tol, hi)


def is_true() -> Check:
    return Check("true")


def is_false() -> Check:
    return Check("false")


@dataclasses.dataclass(frozen=True)
class Claim:
    """One row of the ledger."""

    id: str            # stable identifier, "<paper>.<where>.<what>"
    paper: str         # short paper name, as in shared/papers/README.md
    where: str         # "Table 1", "Fig. 6", "Sec. 3.3 Obs. 2"
    text: str          # the claim, in our words
    paper_value: str   # what the paper reports, as printed there
    check: Check       # the comparison that decides the verdict
    source: str        # notebook stem whose metrics carry the reproduced value
    unit: str = ""
    note: str = ""     # standing caveat (data used, known reason for a difference)
    kind: str = "claim"  # one of KINDS: only "claim" rows are counted as evidence about the papers
    requires: tuple[str, ...] = ()  # ids of the precondition rows this claim's mechanism needs

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.id!r}: kind must be one of {list(KINDS)}; got {self.kind!r}")
        if not isinstance(self.requires, tuple) or not all(isinstance(r, str) for r in self.requires):
            raise ValueError(f"claim {self.id!r}: requires must be a tuple of precondition ids; got {self.requires!r}")
        if self.kind == "precondition" and self.requires:
            raise ValueError(f"claim {self.id!r}: a precondition requires nothing (it is measured on the run)")

    def verdict(self, value: float | bool | None) -> str:
        if value is None:
            return MISSING
        return HOLDS if self.check.passes(value) else DIFFERS


def verdict_given(claim: Claim, value, preconditions: dict[str, tuple[Claim, object]],
                  recorded: bool = False) -> tuple[str, str]:
    """``(verdict, why)`` of ``claim`` for ``value`` given the measured preconditions it ``requires``
    (``{id: (precondition claim, its value)}``): ``untestable`` with the failing preconditions named when one of
    them fails on the run, else :meth:`Claim.verdict` (``why`` then says which preconditions were not measured,
    if any: an unmeasured precondition neither passes nor fails a claim). A claim with no value is untestable only
    when the run ``recorded`` it without one (the quantity does not exist on the run, e.g. a comparison among
    caches that evict when none does); one the run never reached stays "not reproduced yet"."""
    failed, unmeasured = [], []
    for pid in claim.requires:
        if pid not in preconditions:
            raise KeyError(f"claim {claim.id!r} requires {pid!r}, which is not a defined precondition row")
        pre, pv = preconditions[pid]
        v = pre.verdict(pv)
        if v == DIFFERS:
            failed.append(f"{pid} ({pre.text}: {pv!r}, needs {pre.check.describe(pre.unit)})")
        elif v == MISSING:
            unmeasured.append(pid)
    if failed and (value is not None or recorded):
        return UNTESTABLE, "precondition fails: " + "; ".join(failed)
    why = f"precondition not measured: {', '.join(unmeasured)}" if unmeasured else ""
    return claim.verdict(value), why


@lru_cache(maxsize=1)
def registry() -> dict[str, Claim]:
    """Every claim defined in this package's submodules, by id (ids must be unique)."""
    out: dict[str, Claim] = {}
    for mod_info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{mod_info.name}")
        for claim in getattr(module, "CLAIMS", []):
            if claim.id in out:
                raise ValueError(f"duplicate claim id {claim.id!r} in {module.__name__}")
            out[claim.id] = claim
    for claim in out.values():
        for pid in claim.requires:
            if pid not in out or out[pid].kind != "precondition":
                raise ValueError(f"claim {claim.id!r} requires {pid!r}, which is not a precondition row")
    return out
