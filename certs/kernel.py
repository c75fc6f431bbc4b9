"""Certified S4 kernels: ``certify_kernel`` and its three modes.

``mode="ball"`` (a posteriori): the filter in ball arithmetic, the precision doubling
until every routing decision is made and every radius is at most eps.  Routing is
decided exactly whenever the inputs are exact (floats and rationals are).

``mode="a-priori"``: the filter traced into a rational circuit; its certificate
(T0, V0, D0, K0, u) from a ball evaluation of the circuit; the circuit run in
RoundedField at that u, which the spec's theorem guarantees within eps.

``mode="exact"``: exact arithmetic (exact inputs only); radius 0.

Every mode records the filter constants (b, w, s, d, A_wt, kappa, partition) and the
operation and word counts of the filter, measured by Counting.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from collections.abc import Sequence
from typing import Any, Callable

import numpy as np
from flint import acb, arb, ctx

from ..algorithms.dft import next_power_of_two
from ..algorithms.s4.dplr import DPLR, check_length, read_step
from ..algorithms.s4.solver import bilinear
from ..algorithms.s4.filter import filter_kernel
from ..algorithms.s4.midrad import ARITHMETIC as FLOAT64_ARITHMETIC, filter_kernel_midrad
from ..arith import BallField, Counting, ExactField, Float64Field, exact_parts
from ..arith.ball import float_upper

from . import routing
from .apriori import apriori_kernel
from .ball_run import c_tilde_balls
from .errors import CertificationError
from .exact_mode import exact_kernel
from .constants import constants_from_bounds, filter_constants

MODES = ("ball", "a-priori", "exact")
DEFAULT_MAX_PREC = 1 << 16
#: the a-priori mode refuses circuits needing more bits than this unless forced
DEFAULT_APRIORI_LIMIT = 1 << 24
#: counts are measured by default up to this N + L (the counted run is generic Python)
COUNTS_AUTO_LIMIT = 4096



class DiskBalls(Sequence):
    """The float64 route's disks |K_j - mid_j| <= rad_j as acb boxes (made on access):
    the box with half-widths rad_j around mid_j contains the disk."""

    def __init__(self, mid: np.ndarray, rad: np.ndarray):
        self._mid, self._rad = mid, rad

    def __len__(self) -> int:
        return len(self._mid)

    def __getitem__(self, j):
        if isinstance(j, slice):
            return [self[i] for i in range(*j.indices(len(self)))]
        m, r = self._mid[j], float(self._rad[j])
        return acb(arb(float(m.real), r), arb(float(m.imag), r))


@dataclass
class CertifiedKernel:
    """K_L with |K_j - mid_j| <= rad_j for the stored float64 midpoints (complex modulus).

    ``balls`` keeps the enclosures at full precision (acb), whose radii are <= eps
    (ball mode) or whose error bound is eps (a-priori mode); ``exact`` holds exact
    Gaussian rationals: the kernel itself in exact mode, the rounded circuit outputs
    (each within eps of K_j) in a-priori mode."""

    mid: np.ndarray
    rad: np.ndarray
    status: str
    certificate: dict
    counts: dict
    problem: dict = field(default_factory=dict)
    balls: list | None = None
    exact: list | None = None

    @property
    def L(self) -> int:
        return len(self.mid)


def _check_eps(eps: Any) -> Fraction:
    if isinstance(eps, bool):
        raise ValueError(f"eps must be a number > 0, got {eps!r}")
    try:
        re, im = exact_parts(eps, "eps")
    except ValueError as e:
        raise ValueError(str(e)) from None
    if im != 0 or re <= 0:
        raise ValueError(f"eps must be a real number > 0, got {eps!r}")
    return re


def _log2_ceil_inv(eps: Fraction) -> int:
    """ceil(log2(1/eps)) (at least 0)."""
    return max(0, math.ceil(math.log2(eps.denominator) - math.log2(eps.numerator)) + 1)


# -- ball mode --------------------------------------------------------------------

@dataclass
class _BallRun:
    status: str
    prec: int
    result: Any = None
    reason: str = ""
    F: BallField | None = None
    sum_eps: float | None = None
    c_tilde_seconds: float = 0.0


#: below this many states the product tree (FLINT polynomial arithmetic) is as fast; from
#: here on the arc method is faster (measured: N = 16, L = 16384: 1.5 s against 2.4 s),
#: and the tree's precision needs (~ N log2(1/dist) bits) grow with N
AUTO_FAST_FROM_N = 8
CAUCHY_CHOICES = ("auto", "tree", "direct", "fast")
ARITHMETIC_CHOICES = ("auto", "ball", "float64")
#: precision of the float64 route's set-up (C~, poles, weights) in ball arithmetic
FLOAT64_SETUP_PREC = 128
#: the arcs' per-sum accuracy is a float; below this the ball radii carry the rest
SUM_EPS_FLOOR = 1e-300


def choose_route(cauchy: str, N: int) -> str:
    if cauchy not in CAUCHY_CHOICES:
        raise ValueError(f"cauchy must be one of {', '.join(CAUCHY_CHOICES)}; got {cauchy!r}")
    if cauchy == "auto":
        return "fast" if N >= AUTO_FAST_FROM_N else "tree"
    return cauchy


def _ball_filter(model, step, L, eps: Fraction, c_tilde, exceptional, exact, max_prec: int,
                 progress: Callable[[str], None], route: str = "tree") -> _BallRun:
    """Raise the precision until the filter routes and every radius is <= eps: double it
    while undecided, else step to where the radii (which scale like 2^-prec) reach eps.
    On the fast route the per-sum accuracy tightens with the precision."""
    M = next_power_of_two(L)
    prec = 64 + _log2_ceil_inv(eps)
    eps_f = float(eps)
    log2_eps = math.log2(eps.numerator) - math.log2(eps.denominator)
    sum_eps = max(min(1e-3, 2.0 ** (log2_eps - 10)), SUM_EPS_FLOOR)
    in_bits = None if exact else routing.input_bits(model, step, c_tilde)
    if prec > max_prec:
        return _BallRun("precision-limit", prec, None, f"eps = {eps_f:.3g} needs at least {prec} bits, "
                        f"above the limit of {max_prec}; raise the precision limit")
    while True:
        progress(f"ball filter ({route}) at {prec} bits")
        F = BallField(prec)
        t_ct = time.perf_counter()
        try:
            Ct = c_tilde_balls(model, step, M, prec) if c_tilde is None else [F.from_number(x) for x in c_tilde]
        except ZeroDivisionError:  # the ball solve with G = I - (step/2) A could not invert G
            if exact and not bilinear(ExactField(4), model, step).ok:
                return _BallRun("singular-bilinear-matrix", prec, None, "G = I - (step/2) A is singular (decided exactly)")
            Ct, res, reason = None, None, f"G not certified invertible at {prec} bits"
        t_ct = time.perf_counter() - t_ct
        if Ct is None:
            if 2 * prec > max_prec:
                return _BallRun("precision-limit", prec, None, f"not certified within {max_prec} bits: {reason}")
            prec *= 2
            continue
        res = filter_kernel(F, model, step, L, c_tilde=Ct, exceptional=exceptional, keep_blocks=True,
                            cauchy=route, cauchy_eps=sum_eps if route == "fast" else None)
        next_prec = 2 * prec
        if res.ok:
            log2_radius = _log2_max_radius(res.value)
            if log2_radius is None or log2_radius <= log2_eps - 1:  # radius < eps/2 (or every ball a point)
                return _BallRun("ok", prec, res, F=F, sum_eps=sum_eps if route == "fast" else None,
                                c_tilde_seconds=t_ct)
            reason = f"radius about 2^{log2_radius:.1f} > eps/2"
            if math.isfinite(log2_radius):  # radii scale like 2^-prec (and sum_eps): aim past eps
                gain = math.ceil(log2_radius - log2_eps) + 32
                next_prec = max(prec + 32, prec + gain)
                sum_eps = max(sum_eps * 2.0 ** -gain, 2.0 ** -min(next_prec - 16, 1000), SUM_EPS_FLOOR)
        elif res.status == "undecided":
            if res.info.get("stage") == "correction" and exact:
                k = res.info["root"]
                if routing.correction_singular_at(model, step, M, k):
                    return _BallRun("resonant-correction", prec, res, f"W(z_{k}) is singular (decided exactly)")
            reason = f"undecided at {prec} bits ({res.info.get('reason', '')})"
            if in_bits is not None and prec > in_bits + 128:  # more precision cannot beat the input radii
                return _BallRun("undecided", prec, res, f"{reason}; the ball inputs (about {in_bits} bits) "
                                "do not decide it: give them more precisely")
        else:
            return _BallRun(res.status, prec, res, f"status {res.status} {res.info}")
        if next_prec > max_prec:
            return _BallRun("precision-limit", prec, res,
                            f"not certified within {max_prec} bits: {reason}; raise the precision limit")
        prec = next_prec


def _log2_max_radius(balls: list) -> float | None:
    """An upper bound of log2 of the largest |x - mid| over the balls (rad_re + rad_im),
    None when every ball is a point; inf for a non-finite ball.  Computed on exact
    radii, so it also works far below the float range."""
    best = None
    with ctx.workprec(64):
        for b in balls:
            if not b.is_finite():
                return math.inf
            r = (arb(b.real.rad()) + arb(b.imag.rad())).upper()
            if r == 0:
                continue
            v = float((r.log() / arb(2).log()).upper())
            best = v if best is None or v > best else best
    return best


def _enclosure_arrays(F: BallField, balls: list) -> tuple[np.ndarray, np.ndarray]:
    """float64 midpoints and radii with |K_j - mid_j| <= rad_j for the true K_j."""
    mid = np.array([complex(b.mid()) for b in balls], dtype=np.complex128)
    rad = np.empty(len(balls))
    with ctx.workprec(F.prec + 64):
        for j, (b, m) in enumerate(zip(balls, mid)):
            rad[j] = float_upper(abs(b - acb(m.real, m.imag)).upper()) if b.is_finite() else math.inf
    return mid, rad


# -- the float64 midpoint-radius route -------------------------------------------------

def _float64_filter(model, step, L, eps: Fraction, c_tilde, exceptional, progress) -> tuple[Any, str, float]:
    """The filter on float64 disks (algorithms.s4_midrad): (result, "", seconds spent
    forming C~) when every radius is <= eps, else (None, why, 0)."""
    progress("filter on float64 disks")
    t_ct = time.perf_counter()
    ct = c_tilde
    if ct is None:
        try:
            ct = c_tilde_balls(model, step, next_power_of_two(L), FLOAT64_SETUP_PREC)
        except ZeroDivisionError:
            return None, f"G not certified invertible at {FLOAT64_SETUP_PREC} bits", 0.0
    t_ct = time.perf_counter() - t_ct
    res = filter_kernel_midrad(model, step, L, c_tilde=ct, exceptional=exceptional, prec=FLOAT64_SETUP_PREC)
    if not res.ok:
        return None, f"{res.status} ({res.info.get('reason', '')})", 0.0
    worst = float(np.max(res.value[1]))
    if not (math.isfinite(worst) and Fraction(worst) <= eps):
        return None, f"radius {worst:.3g} > eps {float(eps):.3g}", 0.0
    return res, "", t_ct


def _float64_kernel(res, model, step, L, c_tilde, exact, counts, problem, t0, t_ct) -> "CertifiedKernel":
    mid, rad = res.value
    info = res.info
    constants = constants_from_bounds(info["b"], info["w"], info["d"], info["A_wt"], model.r, info["exceptional"],
                                      {k: info["poles"] > 0 for k in info["A_wt"]})
    certificate: dict = {"mode": "ball", "routing": "exact" if exact else "ball", **constants,
                         "cauchy": dict(info["cauchy"]), "arithmetic": FLOAT64_ARITHMETIC,
                         "precision_bits": 53, "max_radius": float(np.max(rad)) if len(rad) else 0.0}
    cnt = _counts(model, step, L, info["exceptional"], counts, "direct", None)
    certificate["seconds"] = round(time.perf_counter() - t0, 6)
    if c_tilde is None:
        certificate["c_tilde"] = _c_tilde_record(next_power_of_two(L), t_ct)
    return CertifiedKernel(mid, rad, "ok", certificate, cnt, problem, balls=DiskBalls(mid, rad))


def _c_tilde_record(M: int, seconds: float) -> dict:
    """How C~ was formed (when not supplied), for the certificate."""
    return {"formed": True, "method": "ball solve with G, then log2(M) squarings of Abar",
            "counted_with_filter": False, "seconds": round(seconds, 6),
            "matrix_products": (M - 1).bit_length() + bin(M).count("1") - 1}


# -- counts -----------------------------------------------------------------------

def measure_counts(model: DPLR, step: Any, L: int, exceptional: list[int], route: str = "tree",
                   sum_eps: float | None = None) -> dict:
    """Operations by kind, word reads/writes and peak words of the filter (C~ supplied),
    measured by running the generic procedure under Counting(Float64Field()) on the
    same Cauchy route (with the same per-sum accuracy for the arcs)."""
    C = Counting(Float64Field())
    ct = [1.0] * model.N
    C.reset()
    try:
        res = filter_kernel(C, model, step, L, c_tilde=ct, exceptional=exceptional, cauchy=route, cauchy_eps=sum_eps)
    except ArithmeticError as e:  # float64 cannot follow the exact route (e.g. a + lambda_j rounds to 0)
        return {"measured": False, "reason": f"float64 counting run failed: {type(e).__name__}"}
    if not res.ok:
        return {"measured": False, "reason": f"float64 counting run returned {res.status}"}
    return {"measured": True, **C.summary(), "route": route, "field": "float64 (generic procedure)"}


def _counts(model, step, L, exceptional, counts, route, sum_eps) -> dict:
    if counts == "auto" and model.N + L > COUNTS_AUTO_LIMIT:
        return {"measured": False, "reason": f"N + L > {COUNTS_AUTO_LIMIT}; ask for counts to measure them"}
    if not counts:
        return {"measured": False, "reason": "not asked for"}
    return measure_counts(model, step, L, exceptional, route, sum_eps)


# -- the entry point ----------------------------------------------------------------

def certify_kernel(model: DPLR, step: Any, L: int, eps: Any, mode: str = "ball", c_tilde: Any = None,
                   *, max_prec: int = DEFAULT_MAX_PREC, apriori_limit: int = DEFAULT_APRIORI_LIMIT,
                   force: bool = False, counts: Any = "auto", cauchy: str = "auto",
                   arithmetic: str = "auto", progress: Callable[[str], None] | None = None) -> CertifiedKernel:
    """The length-L kernel of ``model`` at ``step`` with ||K^ - K||_inf <= eps, certified.

    ``cauchy`` picks the Cauchy route of the ball run: ``"tree"`` (exact product tree),
    ``"direct"``, ``"fast"`` (hierarchical arcs) or ``"auto"`` (the tree below 8 states,
    the arcs from there on: measured faster, and the tree's precision grows with N).
    ``arithmetic`` (ball mode): ``"float64"`` runs the filter on float64 disks
    (``algorithms.s4_midrad``: direct Cauchy sums, numpy, rigorous rounding bounds) and
    fails if their radius exceeds eps; ``"ball"`` runs it in ball arithmetic with the
    precision raised until the radii reach eps; ``"auto"`` tries float64 first (when
    the Cauchy route is "auto" or "direct") and falls back to balls.
    Raises ValueError for bad input and CertificationError when the certificate cannot
    be completed (the reason names why: a resonance, a precision limit, ...).

    >>> from s4cert.algorithms.s4.dplr import DPLR
    >>> k = certify_kernel(DPLR([-1.0, -2.0], [0.5, 0.25], [1, 1], [1, -1]), 0.5, 8, 1e-20)
    >>> k.status, bool(k.rad.max() < 1e-15)
    ('ok', True)
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    if not isinstance(model, DPLR):
        raise ValueError("model must be an algorithms.dplr.DPLR")
    L = check_length(L)
    eps_q = _check_eps(eps)
    read_step(Float64Field(), step)  # validates step > 0
    if c_tilde is not None:
        c_tilde = list(np.asarray(c_tilde).tolist()) if isinstance(c_tilde, np.ndarray) else list(c_tilde)
        if len(c_tilde) != model.N:
            raise ValueError(f"c_tilde: expected {model.N} entries, got {len(c_tilde)}")
        for i, x in enumerate(c_tilde):
            if isinstance(x, (int, float, complex, Fraction, np.number, tuple)):
                exact_parts(x, f"c_tilde[{i}]")
    progress = progress or (lambda msg: None)
    if arithmetic not in ARITHMETIC_CHOICES:
        raise ValueError(f"arithmetic must be one of {', '.join(ARITHMETIC_CHOICES)}; got {arithmetic!r}")
    if arithmetic == "float64" and (mode != "ball" or cauchy not in ("auto", "direct")):
        raise ValueError("arithmetic 'float64' is a ball-mode route with direct Cauchy sums "
                         "(mode='ball', cauchy='auto' or 'direct')")
    route = choose_route(cauchy, model.N)
    M = next_power_of_two(L)
    exact = routing.exact_inputs(model, step, c_tilde)
    problem = {"N": model.N, "r": model.r, "L": L, "M": M, "eps": str(eps_q), "mode": mode,
               "exact_inputs": exact, "c_tilde_supplied": c_tilde is not None}
    t0 = time.perf_counter()

    # routing decided exactly where the inputs allow (numbers, and balls of radius 0)
    exceptional = None
    if routing.step_is_exact(step):
        exceptional = routing.exact_partition(model, step)
        if exceptional is None:
            raise CertificationError("undecided: a ball entry of Lambda contains -2/step; give it more precisely")
        hit = routing.exact_collisions(model, step, M, exceptional)
        if hit:
            raise CertificationError(f"resonant-diagonal: pole mu_{hit[0]} lies on the root grid (decided exactly)")
    if mode == "exact" and not exact:
        raise ValueError("mode 'exact' needs exact inputs (ints, floats, rationals); the model holds balls")

    if mode == "ball" and arithmetic != "ball" and cauchy in ("auto", "direct"):
        res64, why, t_ct = _float64_filter(model, step, L, eps_q, c_tilde, exceptional, progress)
        if res64 is not None:
            return _float64_kernel(res64, model, step, L, c_tilde, exact, counts, problem, t0, t_ct)
        if arithmetic == "float64":
            raise CertificationError(f"not certified on float64 disks: {why}")
        why64 = why
    else:
        why64 = None
    run = _ball_filter(model, step, L, eps_q, c_tilde, exceptional, exact, max_prec, progress, route)
    if run.status != "ok":
        raise CertificationError(f"{run.status}: {run.reason}")
    F, res = run.F, run.result
    exceptional = res.info["exceptional"]
    constants = filter_constants(F, res.info, model.r)
    certificate: dict = {"mode": mode, "routing": "exact" if exact else "ball", **constants,
                         "cauchy": _route_record(res.info["cauchy"])}
    if why64 is not None:
        certificate["float64_route"] = f"tried first, not certified: {why64}"
    balls = res.value
    exact_values = None

    if mode == "ball":
        mid, rad = _enclosure_arrays(F, balls)
        certificate.update(precision_bits=run.prec, max_radius=_max_rad(F, balls))
    elif mode == "exact":
        progress("exact filter")
        exact_values = exact_kernel(model, step, L, c_tilde, exceptional)
        mid = np.array([complex(float(re), float(im)) for re, im in exact_values], dtype=np.complex128)
        rad = _exact_rad(exact_values, mid)
        certificate.update(precision_bits=None, max_radius=0.0)
        with ctx.workprec(run.prec + 64):
            for b, (re, im) in zip(balls, exact_values):
                if not b.contains(acb(arb(_fq(re)), arb(_fq(im)))):
                    raise CertificationError("internal check failed: the ball run does not contain the exact kernel")
    else:
        ap = apriori_kernel(model, step, L, eps_q, c_tilde, exceptional, balls, F, apriori_limit, force, progress)
        mid, rad = ap.mid, ap.rad
        balls, exact_values = ap.balls, ap.values
        certificate.update(ap.certificate)
    counts = _counts(model, step, L, exceptional, counts, route, run.sum_eps)
    certificate["seconds"] = round(time.perf_counter() - t0, 6)
    if c_tilde is None:
        certificate["c_tilde"] = _c_tilde_record(M, run.c_tilde_seconds)
    return CertifiedKernel(mid, rad, "ok", certificate, counts, problem, balls=balls, exact=exact_values)


def _route_record(info: dict) -> dict:
    """The Cauchy route of the certifying ball run; for the arcs, the expansion orders, the
    admissibility ratio and the largest truncation bound added to the radii."""
    out = {"route": info["route"]}
    if info["route"] == "fast":
        out.update(info["fast"])
        bounds = [b for v in info["bound"].values() for b in v]
        out["max_truncation_bound"] = float(max(bounds)) if bounds else 0.0
    return out


def _fq(q: Fraction):
    from flint import fmpq
    return fmpq(q.numerator, q.denominator)


def _max_rad(F: BallField, balls: list) -> float:
    return max(F.radius(b) for b in balls)


def _exact_rad(values: list, mid: np.ndarray) -> np.ndarray:
    """Outward-rounded |K_j - mid_j| for exact K_j and the float64 midpoints."""
    rad = np.zeros(len(values))
    with ctx.workprec(256):
        for j, ((re, im), m) in enumerate(zip(values, mid)):
            d = acb(arb(_fq(re - Fraction(m.real))), arb(_fq(im - Fraction(m.imag))))
            rad[j] = float_upper(abs(d).upper())
    return rad
