"""The audit's re-certified filter constants: partition, b, w, A_wt, d and s from a
ball filter run (direct Cauchy sums) at the audit's precision."""
from __future__ import annotations

import math
from typing import Any

from flint import arb, ctx

from ...algorithms.s4.constants import norm_terms
from ...algorithms.s4.filter import filter_kernel
from ...arith import BallField

from ..constants import separation, sum_key
from ..io.kernel_file import KernelFile
from .checks import (Checks, fmt, lower_check, pt_max, pt_min, stored_int, stored_point,
                     sum_bounds, upper_check)
from .recompute import file_c_tilde, file_partition


def constant_bounds(F: BallField, info: dict, r: int) -> dict:
    """Certified (lower, upper) exact points of the least valid b, w, A_wt (per sum),
    d and s, from a ball filter run with ``keep_blocks``.  ||u|| of the row u = C~* D P is
    its absolute row sum; ||v|| of the column v = Q* D B its largest entry.  Keys ``b``,
    ``w``, ``d``, ``s`` (pairs) and ``A_wt`` (pairs by ``constants.sum_key``)."""
    blocks, M = info["blocks"], info["M"]
    out: dict = {}
    with ctx.workprec(F.prec):
        b_lo = b_hi = w_lo = w_hi = arb(1)
        for _, rows, inv in norm_terms(F, blocks, M, r):  # the rows of b and of w = ||W^-1||
            for row in rows:
                lo, hi = sum_bounds(row)
                b_lo, b_hi = pt_max(b_lo, lo), pt_max(b_hi, hi)
            if inv is None:
                w_hi = arb("inf")
                continue
            for row in inv:
                lo, hi = sum_bounds(row)
                w_lo, w_hi = pt_max(w_lo, lo), pt_max(w_hi, hi)
        out["b"], out["w"] = (b_lo, b_hi), (w_lo, w_hi)
        poles = info["poles"]
        d_lo = separation(F, poles, M)
        d_hi = arb("inf")
        for mu in poles:
            if not mu.is_finite():
                continue
            k0 = round(-float(mu.arg().mid()) * M / (2 * math.pi))
            for k in (k0 - 1, k0, k0 + 1):
                d_hi = pt_min(d_hi, abs(F.root_of_unity(M, k) - mu).upper())
        out["d"] = (d_lo, d_hi)
        out["A_wt"] = {sum_key(key): sum_bounds(weights) for key, weights in info["weights"].items()}
        s_lo = s_hi = arb(1)
        if poles:
            for lo, hi in out["A_wt"].values():
                s_lo = pt_max(s_lo, (lo / d_hi).lower() if d_hi > 0 else arb("inf"))
                s_hi = pt_max(s_hi, (hi / d_lo).upper() if d_lo > 0 else arb("inf"))
        out["s"] = (s_lo, s_hi)
    return out


def _constants_run(kf: KernelFile, prec: int):
    F = BallField(prec)
    ct, why = file_c_tilde(F, kf)
    if ct is None:
        return F, None, why
    res = filter_kernel(F, kf.model, kf.step, kf.L, c_tilde=ct, cauchy="direct", exceptional=file_partition(kf),
                        keep_blocks=True)
    if not res.ok:
        return F, None, f"the ball filter (direct Cauchy sums, {prec} bits) returned {res.status}"
    return F, res, ""


def constant_checks(kf: KernelFile, prec: int, checks: Checks) -> Any:
    """The checks partition, b, w, A_wt, d, s, added to ``checks``; returns the ball
    filter run (direct Cauchy sums, ``keep_blocks``), or None when it failed."""
    F, res, why = _constants_run(kf, prec)
    if res is None:
        for name in ("partition", "b", "w", "A_wt", "d", "s"):
            checks.add(name, False, why)
        return None
    cert = kf.certificate
    part = list(res.info["exceptional"])
    checks.run("partition", lambda: (
        [stored_int(j, "partition") for j in cert["partition"]] == part,
        f"stored {cert['partition']}, recomputed {part} (the j with lambda_j = -2/step)"))
    bounds = constant_bounds(F, res.info, kf.model.r)
    with ctx.workprec(prec):
        for name in ("b", "w", "s"):
            checks.run(name, lambda name=name: _at_least_one(name, stored_point(cert[name], name), *bounds[name]))
        checks.run("d", lambda: _check_d(stored_point(cert["d"], "d"), *bounds["d"], bool(res.info["poles"])))
        checks.run("A_wt", lambda: _check_awt(cert["A_wt"], bounds["A_wt"]))
    return res


def _at_least_one(name: str, stored: arb, lo: arb, hi: arb) -> tuple[bool, str]:
    if stored < 1:
        return False, f"{name} = {fmt(stored)} must be >= 1"
    return upper_check(name, stored, lo, hi)


def _check_d(stored: arb, lo: arb, hi: arb, has_poles: bool) -> tuple[bool, str]:
    if has_poles and not stored > 0:
        return False, f"d = {fmt(stored)} must be > 0"
    return lower_check("d", stored, lo, hi)


def _check_awt(stored: Any, bounds: dict) -> tuple[bool, str]:
    if not isinstance(stored, dict) or set(stored) != set(bounds):
        return False, f"the Cauchy sums are {sorted(bounds)}, the file lists {sorted(stored) if isinstance(stored, dict) else stored}"
    details = []
    for key, (lo, hi) in sorted(bounds.items()):
        ok, detail = upper_check(f"A_wt{key[1:]}", stored_point(stored[key], key), lo, hi)
        if not ok:
            return False, detail
        details.append("proved" in detail)
    return True, f"{len(bounds)} weight bounds, {sum(details)} proved, none contradicted"
