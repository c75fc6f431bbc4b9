"""Certified S4 kernels: ``certify_kernel`` and its three modes.

``mode="ball"`` (a posteriori): the filter in ball arithmetic, the precision doubling
until every routing decision is made and every radius is at most eps (``ball_run``);
first, where it applies, on float64 disks, then double-double disks (``float64_route``).  Routing is decided
exactly whenever the inputs are exact (floats and rationals are).

``mode="a-priori"``: the filter traced into a rational circuit; its certificate
(T0, V0, D0, K0, u) from a ball evaluation of the circuit; the circuit run in
RoundedField at that u, which the spec's theorem guarantees within eps (``apriori``).

``mode="exact"``: exact arithmetic (exact inputs only); radius 0 (``exact_mode``).

Every mode records the filter constants (b, w, s, d, A_wt, kappa, partition) and the
operation and word counts of the filter, measured by Counting (``counts``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable

import numpy as np
from flint import ctx

from ..algorithms.dft import next_power_of_two
from ..algorithms.s4.dplr import DPLR, check_length, read_step
from ..arith import Float64Field, exact_parts, fpenv

from . import ball_run, routing
from .apriori import apriori_kernel
from .ball_run import choose_route, enclosure_arrays
from .constants import filter_constants
from .counts import kernel_counts
from .errors import CertificationError
from .exact_mode import exact_mode_kernel
from .float64_route import ARITHMETIC_CHOICES, certificate_of, disk_kernel, disk_routes
from .io.numbers import rational_string

MODES = ("ball", "a-priori", "exact")
#: the ball precision limit in bits of every certification (certify_kernel, certify_model and
#: the command's --max-prec): a limit, not a target; runs stop at the precision eps needs
DEFAULT_MAX_PREC = 1 << 16
#: the a-priori mode refuses circuits needing more bits than this unless forced
DEFAULT_APRIORI_LIMIT = 1 << 24


@dataclass
class CertifiedKernel:
    """K_L with |K_j - mid_j| <= rad_j for the stored float64 midpoints (complex modulus).

    ``balls`` keeps the enclosures at full precision (acb), whose radii are <= eps
    (ball mode) or whose error bound is eps (a-priori mode); ``exact`` holds exact
    Gaussian rationals: the kernel itself in exact mode, the rounded circuit outputs
    (each within eps of K_j) in a-priori mode.

    ``certificate`` holds ``mode``, ``routing`` ("exact" or "ball": how the partition and
    collisions were decided), the filter constants (``b``, ``w``, ``s``, ``d``, ``A_wt``,
    ``kappa``, ``partition``, ``r``: see ``constants``), ``cauchy`` (the route and, for
    the arcs, their parameters and ``max_truncation_bound``), ``precision_bits``,
    ``max_radius``, ``seconds``; with C~ formed here, ``c_tilde`` (how); on the float64
    route ``arithmetic``; after a float64 attempt that failed or was not made,
    ``float64_route`` (why: its radius, or the environment ``arith.fpenv`` found unfit);
    in a-priori mode the circuit's entries (see ``apriori.APrioriResult``).  ``counts``
    is ``counts.kernel_counts``; ``problem`` holds N, r, L, M, eps, mode,
    exact_inputs, c_tilde_supplied.  ``inputs`` keeps (model, step, c_tilde) as certified:
    ``save_kernel`` compares their digest (``io.kernel_file.inputs_digest``) with the
    inputs it is given, so a kernel is never saved for another problem (the digest is
    taken there, not here: it costs as much as a small certification)."""

    mid: np.ndarray
    rad: np.ndarray
    status: str
    certificate: dict
    counts: dict
    problem: dict = field(default_factory=dict)
    balls: list | None = None
    exact: list | None = None
    inputs: tuple | None = field(default=None, repr=False, compare=False)

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


# -- the entry point ----------------------------------------------------------------

def certify_kernel(model: DPLR, step: Any, L: int, eps: Any, mode: str = "ball", c_tilde: Any = None,
                   *, max_prec: int = DEFAULT_MAX_PREC, apriori_limit: int = DEFAULT_APRIORI_LIMIT,
                   force: bool = False, counts: Any = "auto", cauchy: str = "auto",
                   arithmetic: str = "auto", progress: Callable[[str], None] | None = None,
                   exact_route: str = "auto") -> CertifiedKernel:
    """The length-L kernel of ``model`` at ``step`` with ||K^ - K||_inf <= eps, certified.

    ``cauchy`` picks the Cauchy route of the ball run: ``"tree"`` (exact product tree),
    ``"direct"``, ``"fast"`` (hierarchical arcs) or ``"auto"`` (the route the measured
    cost model of ``route_cost`` predicts fastest for N, M and the precision each needs).
    ``arithmetic`` (ball mode): ``"float64"`` runs the filter on float64 disks
    (``algorithms.s4_midrad``: direct Cauchy sums, numpy, rigorous rounding bounds) and
    fails if their radius exceeds eps; ``"double-double"`` likewise on double-double disks
    (``algorithms.s4.midrad_dd``, radii down to about 1e-27 max|K|, then "auto" tries it
    after float64 unless eps is far below its reach, and the certificate's ``arithmetic``
    names the disk route that certified); ``"ball"`` runs it in ball arithmetic with the
    precision raised until the radii reach eps; ``"auto"`` tries float64 first (when
    the Cauchy route is "auto" or "direct") and falls back to balls.
    ``exact_route`` (exact mode): ``"powers"`` (powers of Abar on integer matrices),
    ``"filter"`` (the filter over Q(zeta)) or ``"auto"`` (powers); the same exact kernel.
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
    if arithmetic in ("float64", "double-double", "triple-double") and (mode != "ball" or cauchy not in ("auto", "direct")):
        raise ValueError(f"arithmetic {arithmetic!r} is a ball-mode route with direct Cauchy sums "
                         "(mode='ball', cauchy='auto' or 'direct')")
    route = choose_route(cauchy, model.N)
    M = next_power_of_two(L)
    exact = routing.exact_inputs(model, step, c_tilde)
    problem = {"N": model.N, "r": model.r, "L": L, "M": M, "eps": rational_string(eps_q), "mode": mode,
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
    # with a supplied C~ nothing forms Abar, so a singular G (no kernel) must be caught here;
    # without C~ the run forms Abar, which decides G itself.  Before a disk route the check
    # waits: its set-up decides G in the usual case (``correction.g_certainly_invertible``)
    g_checked = c_tilde is None

    def check_g() -> None:
        nonlocal g_checked
        if g_checked:
            return
        if why_g := routing.g_not_invertible(model, step, exact):
            raise CertificationError(why_g)
        g_checked = True

    disk_first = mode == "ball" and arithmetic != "ball" and cauchy in ("auto", "direct")
    if not disk_first:
        check_g()

    env = fpenv.probe()  # the float64 routes' proofs assume round-to-nearest with subnormals
    if disk_first and not env.ok:
        check_g()
        if arithmetic != "auto":
            raise CertificationError(f"not certified on {arithmetic} disks: the floating-point environment "
                                     f"breaks the route's assumptions: {env.reason}")
        why64 = f"not used: the floating-point environment breaks its assumptions ({env.reason})"
    elif disk_first:
        res_d, t_ct, tried = disk_routes(arithmetic, model, step, L, eps_q, c_tilde, exceptional, progress)
        if res_d is not None:
            if not res_d.info.get("g_invertible"):
                check_g()
            certificate = certificate_of(res_d, model.r, exact)
            if tried:
                certificate["float64_route"] = "tried first, not certified: " + "; ".join(tried)
            mid, rad, disk_balls = disk_kernel(res_d)
            cnt = kernel_counts(model, step, L, res_d.info["exceptional"], counts, "direct", None)
            _finish(certificate, t0, c_tilde, M, t_ct, res_d.info.get("c_tilde_method", "dense-squaring"))
            return CertifiedKernel(mid, rad, "ok", certificate, cnt, problem, balls=disk_balls,
                                   inputs=(model, step, c_tilde))
        check_g()
        if arithmetic != "auto":
            raise CertificationError(f"not certified on {arithmetic} disks: {'; '.join(tried)}")
        why64 = "tried first, not certified: " + "; ".join(tried)
    else:
        why64 = None
    check_g()
    try:
        run = ball_run.ball_filter(model, step, L, eps_q, c_tilde, exceptional, exact, max_prec, progress, route)
    except ValueError as e:  # the input was checked above: an error here is the environment's
        if env.ok:
            raise
        raise CertificationError(f"floating-point environment: {env.reason}; the ball run failed: {e}") from None
    if run.status != "ok":
        raise CertificationError(f"{run.status}: {run.reason}", status=run.status)
    F, res = run.F, run.result
    exceptional = res.info["exceptional"]
    with ctx.workprec(F.prec):  # per-root scalar work: skip the field's precision switches
        constants = filter_constants(F, res.info, model.r)
    certificate: dict = {"mode": mode, "routing": "exact" if exact else "ball", **constants,
                         "cauchy": _route_record(res.info["cauchy"], run.sum_eps)}
    if why64 is not None:
        certificate["float64_route"] = why64
    balls = res.value
    exact_values = None

    if mode == "ball":
        mid, rad = enclosure_arrays(F, balls)
        certificate.update(precision_bits=run.prec, max_radius=run.max_radius)
    elif mode == "exact":
        progress("exact filter")
        try:
            exact_values, mid, rad = exact_mode_kernel(model, step, L, c_tilde, exceptional, balls, run.prec,
                                                       exact_route)
        except OverflowError:  # an exact value beyond the float range: its float64 midpoint
            raise CertificationError("kernel-overflow: an exact K_j exceeds the float range (about 1.8e308), "
                                     "which the float64 midpoints cannot hold; scale B or C down") from None
        certificate.update(precision_bits=None, max_radius=0.0)
    else:
        ap = apriori_kernel(model, step, L, eps_q, c_tilde, exceptional, balls, F, apriori_limit, force, progress)
        mid, rad = ap.mid, ap.rad
        balls, exact_values = ap.balls, ap.values
        certificate.update(ap.certificate)
    _check_float_range(mid)
    ran = res.info["cauchy"]["route"]  # the run may have escalated from the arcs to direct sums
    counts = kernel_counts(model, step, L, exceptional, counts, ran, run.sum_eps if ran == "fast" else None)
    _finish(certificate, t0, c_tilde, M, run.c_tilde_seconds)
    return CertifiedKernel(mid, rad, "ok", certificate, counts, problem, balls=balls, exact=exact_values,
                           inputs=(model, step, c_tilde))


def _check_float_range(mid: np.ndarray) -> None:
    """CertificationError when some |K_j| lies beyond the float range: the float64
    midpoints and radii would read inf, which encloses nothing."""
    bad = np.flatnonzero(~np.isfinite(mid))
    if len(bad):
        raise CertificationError(f"kernel-overflow: K[{bad[0]}] (and {len(bad) - 1} more) exceeds the float range "
                                 "(about 1.8e308), which the float64 midpoints cannot hold; scale B or C down")


def _route_record(info: dict, sum_eps: float | None) -> dict:
    """The Cauchy route of the certifying ball run; for the arcs, the expansion orders, the
    admissibility ratio, the per-sum accuracy ``sum_eps`` (the counts' run uses it) and
    the largest truncation bound added to the radii."""
    out = {"route": info["route"]}
    if info["route"] == "fast":
        out.update(info["fast"], sum_eps=sum_eps)
        bounds = [b for v in info["bound"].values() for b in v]
        out["max_truncation_bound"] = float(max(bounds)) if bounds else 0.0
    return out


def _finish(certificate: dict, t0: float, c_tilde: Any, M: int, c_tilde_seconds: float,
            c_tilde_method: str = "dense-squaring") -> None:
    """Add the run's seconds and, when C~ was formed here, how (``c_tilde``)."""
    certificate["seconds"] = round(time.perf_counter() - t0, 6)
    if c_tilde is None:
        certificate["c_tilde"] = _c_tilde_record(M, c_tilde_seconds, c_tilde_method)


#: how each method of ``c_tilde.c_tilde`` forms C~, as the certificate says it
_C_TILDE_TEXT = {
    "dense-squaring": "ball solve with G, then log2(M) squarings of Abar",
    "structured-squaring": "Abar by the structured ball solver, then log2(M) squarings",
    "adjoint-steps": "M steps of Abar* through the structured ball solver",
    "contractive-squaring": "float64 solve and log2(M) squarings of Abar with a certified 2-norm error bound "
                            "(a dissipative model; proofs/c_tilde_contractive.md), as balls",
}


def _c_tilde_record(M: int, seconds: float, method: str = "dense-squaring") -> dict:
    """How C~ was formed (when not supplied), for the certificate."""
    return {"formed": True, "method": _C_TILDE_TEXT.get(method, method),
            "counted_with_filter": False, "seconds": round(seconds, 6),
            "matrix_products": (M - 1).bit_length() + bin(M).count("1") - 1}
