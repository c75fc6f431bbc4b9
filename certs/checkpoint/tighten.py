"""``s4cert model --compare``: the certified interval for ``max |other - K|`` of a module,
absolute and relative to ``max |K|``, with the kernels whose radius is too wide for it
certified again.

A kernel (channel, head) is too wide when its largest radius is above ``E / 100``, where
``E = max |other - mid|`` over the module (the error the interval must resolve).  Its head
is then certified again (``certify.certify_module(mod, L, eps=E / 1000, heads=...)``; the
radius / 1000 when ``E`` is 0, the other kernels being the midpoints themselves; run
as tasks by the module's runner), which takes the next tighter route that reaches that
eps (float64 disks, double-double disks, balls).  The interval of the new disks and the
one of the old hold both, so the reported interval is their intersection.  At most
``ROUNDS`` rounds (``E`` moves with the midpoints), and none after a round whose disks are
wider than its eps: their radii then hold the rounding of the midpoints to float64 (about
half a unit in the last place of K), which no smaller eps removes.  Whether to certify
again is decided on floats: it chooses work, never a bound.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..compare import TIGHTEN_EPS_FACTOR, TIGHTEN_FACTOR
from .certify import ModuleKernels
from .compare import kernel_max_interval, max_error_interval, relative_interval
from .layouts import KernelModule
from .runner import Runner, Task, head_groups

#: at most this many rounds of certifying again
ROUNDS = 3


def _meet(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    """The intersection of two intervals that both hold the same number."""
    return max(a[0], b[0]), min(a[1], b[1])


def compare_module(res: ModuleKernels, other: np.ndarray, mod: KernelModule, index: int, runner: Runner,
                   max_prec: int, arithmetic: str = "auto", tighten: bool = True, key: Any = None) -> dict:
    """The module's ``compare`` entry: ``max_error`` and ``max_abs_K`` ([lo, hi] floats,
    certified), ``relative`` (certified bounds of their ratio), ``error`` (the estimate
    ``max |other - mid|``) and, when kernels were certified again, ``tightened`` (from
    which arithmetic and radius to which, at which eps, which heads; ``reason`` when a
    head could not be)."""
    mid, rad = res.mid.copy(), res.rad.copy()
    err = max_error_interval(other, mid, rad)
    kmax = kernel_max_interval(mid, rad)
    record: dict | None = None
    for _ in range(ROUNDS if tighten else 0):
        with np.errstate(invalid="ignore", over="ignore"):
            E = float(np.max(np.abs(other - mid)))
        wide = np.max(rad, axis=2) * TIGHTEN_FACTOR > E
        if not (np.isfinite(E) and np.any(wide)):
            break
        heads = sorted({int(h) for h in np.nonzero(wide)[1]})
        eps = (E if E > 0 else float(np.max(rad[:, heads]))) / TIGHTEN_EPS_FACTOR
        if record is None:
            record = {"error": E, "from": {"arithmetic": list(res.info.get("arithmetic", [])),
                                           "max_radius": float(np.max(rad[:, heads]))}}
        groups = [[heads[i] for i in g] for g in head_groups(len(heads))]
        tasks = [Task(index, mod, res.L, eps, max_prec, g, arithmetic) for g in groups]
        arith, refused, done = set(), [], []
        for j, part in runner.run(tasks):
            if part.status != "ok" or part.mid is None:
                refused.append(part.reason)
                continue
            arith |= set(part.info.get("arithmetic", []))
            for i, h in enumerate(tasks[j].heads):
                mid[:, h], rad[:, h] = part.mid[:, i], part.rad[:, i]
                done.append(h)
        if not done:
            record["reason"] = refused[0] if refused else "no head was certified again"
            break
        err = _meet(err, max_error_interval(other, mid, rad))
        kmax = _meet(kmax, kernel_max_interval(mid, rad))
        record["to"] = {"eps": eps, "arithmetic": sorted(arith), "max_radius": float(np.max(rad[:, sorted(done)])),
                        "heads": sorted(done)}
        record["rounds"] = record.get("rounds", 0) + 1
        if refused:
            record["reason"] = refused[0]
            break
        if record["to"]["max_radius"] > eps:
            break  # the float64 midpoints' rounding: a smaller eps would not narrow these disks
    out = {"key": key, "max_error": list(err), "max_abs_K": list(kmax), "relative": list(relative_interval(err, kmax))}
    with np.errstate(invalid="ignore", over="ignore"):
        out["error"] = float(np.max(np.abs(other - mid))) if other.size else 0.0
    if record is not None:
        out["tightened"] = record
    return out


def tightened_line(prefix: str, t: dict) -> str:
    """One line saying how a module's kernels were certified again (or why not)."""
    fr = t["from"]
    head = (f"{prefix}: the other kernels' error (about {t['error']:.3e}) is within {TIGHTEN_FACTOR}x of the "
            if t["error"] > 0 else f"{prefix}: the other kernels are the certified midpoints, whose ")
    head += (f"certified radius {fr['max_radius']:.3e} ({', '.join(fr['arithmetic']) or 'no route'})"
             + (" bounds their error" if t["error"] == 0 else ""))
    if "to" not in t:
        return f"{head}; not certified again: {t.get('reason', '')}"
    to = t["to"]
    heads = to["heads"]
    span = f"head {heads[0]}" if len(heads) == 1 else f"{len(heads)} heads ({heads[0]}..{heads[-1]})"
    line = (f"{head}: {span} certified again at eps {to['eps']:.3e} on the next tighter route "
            f"({', '.join(to['arithmetic'])}), radius {to['max_radius']:.3e}")
    return line + (f"; some not: {t['reason']}" if "reason" in t else "")
