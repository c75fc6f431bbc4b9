"""Ball mode's run: the filter in ball arithmetic, the precision raised until the
radii reach eps, with C~ formed in balls at each precision (``C_TILDE_METHOD``)."""
from __future__ import annotations

import math
import operator
import time
from dataclasses import dataclass
from fractions import Fraction
from operator import attrgetter
from typing import Any, Callable

import numpy as np
from flint import acb, arb, ctx

from ..algorithms.dft import next_power_of_two
from ..algorithms.s4.c_tilde import c_tilde as form_c_tilde
from ..algorithms.s4.filter import filter_kernel
from ..algorithms.s4.solver import bilinear
from ..arith import BallField, ExactField
from ..arith.ball import DFT_SPARE_BITS, float_upper
from ..arith.disk_convert import midrad_arrays_of_balls

from . import route_cost, routing


#: how the certifier forms C~ (``algorithms.s4.c_tilde``): Abar by elimination on the dense
#: G = I - (step/2) A (FLINT's ball solve, BallField's "solve" primitive), then log2 M
#: squarings.  The audit forms it by "structured-squaring" (``audit.recompute``), so the two
#: share only the squarings.
C_TILDE_METHOD = "dense-squaring"


def log2_ceil_inv(eps: Fraction) -> int:
    """ceil(log2(1/eps)) (at least 0)."""
    return max(0, math.ceil(math.log2(eps.denominator) - math.log2(eps.numerator)) + 1)


# -- the run -----------------------------------------------------------------------

@dataclass
class BallRun:
    """The outcome of a ball run: its status ("ok" or why it stopped), the precision
    reached, the filter's Result, the field, the arcs' per-sum accuracy, the seconds
    spent forming C~ and, when ok, a float >= rad_re + rad_im of every output ball."""

    status: str
    prec: int
    result: Any = None
    reason: str = ""
    F: BallField | None = None
    sum_eps: float | None = None
    c_tilde_seconds: float = 0.0
    max_radius: float = math.inf


CAUCHY_CHOICES = ("auto", "tree", "direct", "fast")
#: the arcs' per-sum accuracy is a float; below this the ball radii carry the rest
SUM_EPS_FLOOR = 1e-300
#: the transforms' spare bits on the product tree's first pass (``BallField(prec, dft_spare_bits)``)
FIRST_PASS_DFT_SPARE = -8


def choose_route(cauchy: str, N: int) -> str:
    """The Cauchy route of the ball run for a ``cauchy`` choice: the route named, or
    "auto", which ``ball_filter`` settles by the cost model (``route_cost.plan``) once it
    knows the poles, the grid and eps.  (N is kept for the callers' signature.)"""
    if cauchy not in CAUCHY_CHOICES:
        raise ValueError(f"cauchy must be one of {', '.join(CAUCHY_CHOICES)}; got {cauchy!r}")
    return cauchy


def ball_filter(model, step, L, eps: Fraction, c_tilde, exceptional, exact, max_prec: int,
                 progress: Callable[[str], None], route: str = "tree") -> BallRun:
    """Raise the precision until the filter routes and every radius is <= eps: double it
    while undecided, else step to where the radii (which scale like 2^-prec) reach eps.
    On the fast route the per-sum accuracy tightens with the precision.  The BallRun's
    status is "ok" (``result``: the filter's Result with ``keep_blocks``), or the reason
    it stopped: "precision-limit", "undecided" (ball inputs too wide to decide),
    "input-precision" (ball inputs too wide for eps: past their accuracy, a pass at more
    precision left the radius where it was),
    "singular-bilinear-matrix" / "resonant-correction" (decided exactly), or the
    filter's own status.  The fast route escalates to direct Cauchy sums (the Result's
    ``info["cauchy"]["route"]`` says which certified) after an undecided correction, or
    when its per-sum accuracy is at SUM_EPS_FLOOR and a pass gains under 16 bits."""
    M = next_power_of_two(L)
    plan = route_cost.plan(model, step, M, eps, c_tilde, exceptional, route, max_prec)
    route, prec = plan.route, plan.prec
    eps_f = float(eps) if eps < 2 ** 1000 else math.inf  # eps may lie above the float range
    log2_eps = math.log2(eps.numerator) - math.log2(eps.denominator)
    sum_eps = max(min(1e-3, 2.0 ** (min(log2_eps, 0) - 10)), SUM_EPS_FLOOR)
    in_bits = None if exact else routing.input_bits(model, step, c_tilde)
    first = True
    prev_log2_radius = math.inf
    if prec > max_prec and 64 + log2_ceil_inv(eps) <= max_prec:
        prec = max_prec  # the tree's estimate is not a bound: try at the limit
    if prec > max_prec:
        return BallRun("precision-limit", prec, None, f"eps = {eps_f:.3g} needs at least {prec} bits, "
                        f"above the limit of {max_prec}; raise max_prec (--max-prec)")
    while True:
        progress(f"ball filter ({route}) at {prec} bits")
        # the tree's first pass lets the final transform round its inputs FIRST_PASS_DFT_SPARE
        # bits below their accuracy (twice as fast at ~135 bits; the plan keeps guard bits
        # for it); later passes keep them (the default), so raising the precision helps
        F = BallField(prec, FIRST_PASS_DFT_SPARE if first and route == "tree" else DFT_SPARE_BITS)
        first = False
        t_ct = time.perf_counter()
        if c_tilde is None:
            ct = form_c_tilde(F, model, step, M, method=C_TILDE_METHOD)
            Ct = ct.value if ct.ok else None
        else:
            Ct = [F.from_number(x) for x in c_tilde]
        if Ct is None:  # the ball solve with G = I - (step/2) A could not invert G
            if exact and not bilinear(ExactField(4), model, step).ok:
                return BallRun("singular-bilinear-matrix", prec, None, "G = I - (step/2) A is singular (decided exactly)")
            res, reason = None, f"G not certified invertible at {prec} bits"
        t_ct = time.perf_counter() - t_ct
        if Ct is None:
            if 2 * prec > max_prec:
                return BallRun("precision-limit", prec, None, f"not certified within {max_prec} bits: {reason}")
            prec *= 2
            continue
        with ctx.workprec(prec):  # the field's scalar operations then skip their precision switches
            res = filter_kernel(F, model, step, L, c_tilde=Ct, exceptional=exceptional, keep_blocks=True,
                                cauchy=route, cauchy_eps=sum_eps if route == "fast" else None)
        next_prec = 2 * prec
        if res.ok:
            top = _max_radius_point(res.value)
            log2_radius = _log2_point(top)
            if log2_radius is None or log2_radius <= log2_eps - 1:  # radius < eps/2 (or every ball a point)
                return BallRun("ok", prec, res, F=F, sum_eps=sum_eps if route == "fast" else None,
                                c_tilde_seconds=t_ct, max_radius=_float_point(top))
            reason = f"radius about 2^{log2_radius:.1f} > eps/2"
            if math.isfinite(log2_radius) and route != "fast" and in_bits is not None \
                    and prec > in_bits + 64 and log2_radius > prev_log2_radius - 16:
                # past the inputs' accuracy the radii no longer scale like 2^-prec
                return BallRun("input-precision", prec, res, f"{reason} at {prec} bits as at the pass before: "
                               f"the ball inputs (about {in_bits} bits) hold it there; give them more precisely")
            if math.isfinite(log2_radius):  # radii scale like 2^-prec (and sum_eps): aim past eps
                gain = math.ceil(log2_radius - log2_eps) + 32
                next_prec = max(prec + 32, prec + gain)
                if route == "fast" and sum_eps <= SUM_EPS_FLOOR and log2_radius > prev_log2_radius - 16:
                    route = "direct"  # the arcs' accuracy floor holds the radii up: direct sums
                sum_eps = max(sum_eps * 2.0 ** -gain, 2.0 ** -min(next_prec - 16, 1000), SUM_EPS_FLOOR)
                prev_log2_radius = log2_radius
        elif res.status == "undecided":
            if route == "fast" and res.info.get("stage") == "correction":
                # the arcs' truncation bounds can hide a nearly singular W(z_k) at any precision
                # (and the exact check is slow): direct sums first, at the same precision
                route = "direct"
                continue
            if res.info.get("stage") == "correction" and exact:
                k = res.info["root"]
                if routing.correction_singular_at(model, step, M, k):
                    return BallRun("resonant-correction", prec, res, f"W(z_{k}) is singular (decided exactly)")
            reason = f"undecided at {prec} bits ({res.info.get('reason', '')})"
            if in_bits is not None and prec > in_bits + 128:  # more precision cannot beat the input radii
                return BallRun("undecided", prec, res, f"{reason}; the ball inputs (about {in_bits} bits) "
                                "do not decide it: give them more precisely")
        else:
            return BallRun(res.status, prec, res, f"status {res.status} {res.info}")
        if next_prec > max_prec:
            return BallRun("precision-limit", prec, res,
                            f"not certified within {max_prec} bits: {reason}; raise max_prec (--max-prec)")
        prec = next_prec


def _max_radius_point(balls: list) -> arb:
    """An exact point >= rad_re + rad_im of every ball (0 when every ball is a point,
    +inf when one is not finite): the sums of the exact part radii, rounded up, and
    their maximum (comparisons of exact points are exact)."""
    with ctx.workprec(64):
        if not all(map(acb.is_finite, balls)):
            return arb(math.inf)
        if not balls:
            return arb(0)
        rr = map(arb.rad, map(attrgetter("real"), balls))
        ri = map(arb.rad, map(attrgetter("imag"), balls))
        return max(map(arb.upper, map(operator.add, rr, ri)))


def _float_point(m: arb) -> float:
    if not m.is_finite():
        return math.inf
    with ctx.workprec(64):
        return float_upper(m)


def _log2_point(m: arb) -> float | None:
    if not m.is_finite():
        return math.inf
    if m == 0:
        return None
    with ctx.workprec(64):
        return float((m.log() / arb(2).log()).upper())


def max_radius(balls: list) -> float:
    """A float >= rad_re + rad_im of every ball (``BallField.radius`` of each, at once)."""
    return _float_point(_max_radius_point(balls))


def log2_max_radius(balls: list) -> float | None:
    """An upper bound of log2 of the largest |x - mid| over the balls (rad_re + rad_im),
    None when every ball is a point; inf for a non-finite ball.  Computed on exact
    radii, so it also works far below the float range."""
    return _log2_point(_max_radius_point(balls))


def enclosure_arrays(F: BallField, balls: list) -> tuple[np.ndarray, np.ndarray]:
    """float64 midpoints and radii with |K_j - mid_j| <= rad_j for the true K_j.

    mid_j is the ball's midpoint rounded to complex128; rad_j is ``abs_upper`` of the
    ball b_j - mid_j (which contains K_j - mid_j), an exact point rounded up to 53
    bits, so its float is exact in the normal range; entries outside it (zero, tiny,
    huge, not finite) are bounded one by one with ``float_upper`` at ``F.prec + 64`` bits
    (the rule is ``arith.disk_convert.midrad_arrays_of_balls``)."""
    return midrad_arrays_of_balls(balls, F.prec)
