"""Ball mode's disk routes: the filter on float64 midpoint-radius disks
(``algorithms.s4.midrad``), on double-double ones (``algorithms.s4.midrad_dd``) and on
triple-double ones (``algorithms.s4.midrad_td``), each accepted when every radius is at most
eps; one ``DiskRoute`` record per route in ``ROUTES``."""
from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable

import numpy as np
from flint import acb, arb, ctx

from ..algorithms.dft import next_power_of_two
from ..algorithms.s4.bilinear_map import NUMBERS, half_step
from ..algorithms.s4.c_tilde import c_tilde as form_c_tilde
from ..algorithms.s4.midrad import ARITHMETIC, filter_kernel_midrad
from ..algorithms.s4.midrad_dd import ARITHMETIC as DD_ARITHMETIC, filter_kernel_dd
from ..algorithms.s4.midrad_td import ARITHMETIC as TD_ARITHMETIC, SETUP_PREC as TD_SETUP_PREC, filter_kernel_td
from ..arith.midrad import up
from ..arith import BallField

from .ball_run import C_TILDE_METHOD
from .constants import constants_from_bounds

#: precision of the float64 route's set-up (C~, poles, weights) in ball arithmetic
FLOAT64_SETUP_PREC = 128


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


class DDBalls(Sequence):
    """The double-double route's disks |K_j - hi_j - lo_j| <= rad_j as acb boxes (made on
    access): hi + lo enclosed at 128 bits (the rounding in the radius), then widened by
    rad_j in each part."""

    def __init__(self, hi: np.ndarray, lo: np.ndarray, rad: np.ndarray):
        self._hi, self._lo, self._rad = hi, lo, rad

    def __len__(self) -> int:
        return len(self._hi)

    def __getitem__(self, j):
        if isinstance(j, slice):
            return [self[i] for i in range(*j.indices(len(self)))]
        h, l, r = complex(self._hi[j]), complex(self._lo[j]), float(self._rad[j])
        with ctx.workprec(128):
            return acb(arb(h.real) + arb(l.real) + arb(0, r), arb(h.imag) + arb(l.imag) + arb(0, r))


def box_radii(hi: np.ndarray, lo: np.ndarray, rad: np.ndarray) -> np.ndarray:
    """Upper bounds of the radii of the disks that hold the ``DDBalls`` boxes (what a kernel
    file stores): each part's half-width is at most rad (1 + 2^-28) (the radius as an arb
    magnitude) plus 2^-125 |hi|_1 (hi + lo at 128 bits), and the disk around a box is
    sqrt(2) <= 1.4143 times its half-width.  The double-double route is accepted, and its
    ``max_radius`` reported, on these."""
    half = up(up(rad * (1 + 2.0 ** -28)) + up(2.0 ** -125 * up(np.abs(hi.real) + np.abs(hi.imag))))
    return up(1.4143 * half)


#: the triple-double certificate's precision_bits: three float64 significands
TD_PRECISION_BITS = 159
#: the bits of the triple-double route's boxes (``TDBalls``): their midpoints' rounding,
#: 2^-(TD_BOX_PREC - 1) of the midpoint, stays far below the disks' 2^-150
TD_BOX_PREC = 192


class TDBalls(Sequence):
    """The triple-double route's disks |K_j - m_j| <= rad_j (``arith.triple_double.TD``) as
    acb boxes (made on access, ``TD.to_balls``): the three parts of each component summed
    exactly, rounded to a ball at TD_BOX_PREC bits, widened by rad_j in each part."""

    def __init__(self, disks):
        self._disks = disks

    def __len__(self) -> int:
        return len(self._disks)

    def __getitem__(self, j):
        if isinstance(j, slice):
            return self._disks[np.arange(len(self))[j]].to_balls(TD_BOX_PREC)
        return self._disks[np.array([j])].to_balls(TD_BOX_PREC)[0]


def td_box_radii(disks) -> np.ndarray:
    """Upper bounds of the radii of the disks that hold the ``TDBalls`` boxes: each part's
    half-width is at most rad (1 + 2^-28) (the radius as an arb magnitude, the ball's own
    rounding of its radius) plus 2^-(TD_BOX_PREC - 2) |m|_1 (the midpoint rounded to
    TD_BOX_PREC bits), and the disk around a box is sqrt(2) <= 1.4143 times its half-width.
    The triple-double route is accepted, and its ``max_radius`` reported, on these."""
    half = up(up(disks.rad * (1 + 2.0 ** -28)) + up(2.0 ** -(TD_BOX_PREC - 2) * disks.mid_abs1()))
    return up(1.4143 * half)


def _c_tilde(model, step, L, c_tilde, prec: int = FLOAT64_SETUP_PREC, eps: Any = None) -> tuple[Any, str, float, str]:
    """C~ as supplied, or formed in balls at ``prec`` bits: (C~, why not, seconds, the method
    that formed it, ``c_tilde.c_tilde``'s ``info["method"]``).  With
    ``eps``, by float64 squarings with a certified bound where the model is dissipative and
    the radius fits the kernel's budget ("contractive-squaring"), else by C_TILDE_METHOD."""
    t = time.perf_counter()
    if c_tilde is not None:
        return c_tilde, "", 0.0, "supplied"
    res = form_c_tilde(BallField(prec), model, step, next_power_of_two(L),
                       method=C_TILDE_METHOD if eps is None else "contractive-squaring", kernel_eps=eps)
    if not res.ok:
        return None, f"G not certified invertible at {prec} bits", 0.0, ""
    return res.value, "", time.perf_counter() - t, res.info.get("method", C_TILDE_METHOD)


def _worst(radii: np.ndarray) -> float:
    return float(np.max(radii)) if len(radii) else 0.0


@dataclass(frozen=True)
class DiskRoute:
    """One disk route of ball mode: its name (as ``arithmetic`` names it), the arithmetic its
    results and certificates name, the filter that runs it and the set-up's ball precision,
    whether the filter also decides G (``decide_g``), the radii it is accepted on and its
    enclosures (both from its result), the certificate's ``precision_bits``, its radius floor
    under "auto" (|K_0| 2^-floor_bits, stated as ``floor_text``), its reach in bits beyond
    float64's and whether "auto" tries it."""

    name: str
    arithmetic: str
    kernel: Callable[..., Any]
    setup_prec: int
    decides_g: bool
    radii: Callable[[Any], np.ndarray]
    enclosures: Callable[[Any], Sequence]
    precision_bits: int
    floor_bits: int
    floor_text: str
    reach_bits: int
    in_auto: bool


#: the disk routes, in the order "auto" tries them.  Each is tried where it can reach eps and is
#: faster there than the next: measured (LegS N = 64, L = 16384, step 0.01, timed alternately
#: with the float64 kernel), the triple-double route at 1e-30 and 1e-40 max|K| takes 9.7-10.4
#: times the float64 kernel against the ball run's 28-38 (its Cauchy sums ``cauchy_td``)
ROUTES = (
    DiskRoute(name="float64", arithmetic=ARITHMETIC, kernel=filter_kernel_midrad, setup_prec=FLOAT64_SETUP_PREC,
              decides_g=True, radii=lambda res: res.value[1], enclosures=lambda res: DiskBalls(*res.value),
              precision_bits=53, floor_bits=54, floor_text="u max|K|", reach_bits=0, in_auto=True),
    DiskRoute(name="double-double", arithmetic=DD_ARITHMETIC, kernel=filter_kernel_dd, setup_prec=FLOAT64_SETUP_PREC,
              decides_g=False, radii=lambda res: box_radii(*res.info["dd"]),
              enclosures=lambda res: DDBalls(*res.info["dd"]), precision_bits=106, floor_bits=96,
              floor_text="2^-90 max|K| (measured)", reach_bits=53, in_auto=True),
    DiskRoute(name="triple-double", arithmetic=TD_ARITHMETIC, kernel=filter_kernel_td, setup_prec=TD_SETUP_PREC,
              decides_g=False, radii=lambda res: td_box_radii(res.info["disks"]),
              enclosures=lambda res: TDBalls(res.info["disks"]), precision_bits=TD_PRECISION_BITS, floor_bits=156,
              floor_text="2^-150 max|K| (measured)", reach_bits=113, in_auto=True),
)
#: the disk routes' names, in the order "auto" tries them
DISK_ROUTES = tuple(route.name for route in ROUTES)
#: the disk routes "auto" tries
AUTO_ROUTES = tuple(route.name for route in ROUTES if route.in_auto)
#: the arithmetic choices of ball mode (see ``certify_kernel``)
ARITHMETIC_CHOICES = ("auto", "ball") + DISK_ROUTES


def route_of(res) -> DiskRoute:
    """The route of a disk run's result, by the arithmetic it names."""
    arithmetic = res.info["cauchy"]["arithmetic"]
    for route in ROUTES:
        if route.arithmetic == arithmetic:
            return route
    raise ValueError(f"no disk route computes in {arithmetic!r}")


def _run(route: DiskRoute, model, step, L, eps: Fraction, ct, exceptional,
         decide_g: bool = True) -> tuple[Any, str, float | None]:
    """One disk route on a given C~: (result or None, why not, its largest radius or None).
    ``decide_g``: the float64 route also decides G's invertibility from its set-up (only
    wanted when C~ was supplied)."""
    asked = {"decide_g": decide_g} if route.decides_g else {}
    res = route.kernel(model, step, L, c_tilde=ct, exceptional=exceptional, prec=route.setup_prec, **asked)
    if not res.ok:
        return None, f"{res.status} ({res.info.get('reason', '')})", None
    worst = _worst(route.radii(res))
    if not (math.isfinite(worst) and Fraction(worst) <= eps):
        return None, f"radius {worst:.3g} > eps {float(eps):.3g}", worst
    return res, "", worst


def first_entry_estimate(model, step) -> float | None:
    """|K_0| = |C* G^-1 step B| (G = I - (step/2) A) in float64, by Woodbury on the DPLR
    form: an uncertified estimate for routing only (None if the inputs do not convert).
    The float64 route's radius is at least u max_j |K_j| (the transform's last rounding,
    proofs/midrad_filter.md, Lemma 11), so an eps far below u |K_0| is out of its reach."""
    try:
        lam = np.array([complex(x) for x in model.Lambda])
        P = np.array([[complex(x) for x in row] for row in model.P])
        Q = np.array([[complex(x) for x in row] for row in model.Q])
        B = np.array([complex(x) for x in model.B])
        C = np.array([complex(x) for x in model.C])
        h = half_step(NUMBERS, float(step))
        with np.errstate(all="ignore"):
            D = 1 - h * lam                               # G = diag(D) + h P Q*
            Db, DP = B / D, P / D[:, None]
            S = np.eye(P.shape[1]) + h * (Q.conj().T @ DP)
            x = Db - h * (DP @ np.linalg.solve(S, Q.conj().T @ Db))
            k0 = abs(np.vdot(C, 2 * h * x))
    except (TypeError, ValueError, np.linalg.LinAlgError, OverflowError):
        return None
    return float(k0) if math.isfinite(k0) else None


def disk_routes(arithmetic: str, model, step, L, eps: Fraction, c_tilde, exceptional,
                progress: Callable[[str], None]) -> tuple[Any, float, list[str]]:
    """The disk routes ``arithmetic`` allows ("auto": the AUTO_ROUTES, float64, double-double,
    then triple-double; else the one named), the first whose radii are all <= eps: (its result or
    None, seconds spent forming C~, why each route tried did not certify).  C~, when not
    supplied, is formed once per set-up precision (FLOAT64_SETUP_PREC for the float64 and
    double-double routes, TD_SETUP_PREC for the triple-double one).  Under "auto" a route is
    skipped when eps is below what it can reach: below |K_0| 2^-floor_bits
    (``first_entry_estimate``; the radii are at least u max|K|, and, measured, 2^-90 max|K|
    on double-double and 2^-150 max|K| on triple-double disks, while |K_0| <= max|K|), or
    below the radius of the last route that ran times 2^-(the difference of their
    reach_bits), so a ball run is not delayed by a route that cannot reach eps."""
    formed: dict[int, tuple] = {}
    t_ct = 0.0

    def c_tilde_at(prec: int) -> tuple[Any, str]:
        nonlocal t_ct
        if prec not in formed:
            ct, why, t, method = _c_tilde(model, step, L, c_tilde, prec, eps)
            formed[prec] = (ct, why, method)
            t_ct += t
        return formed[prec]

    tried: list[str] = []
    previous = None                                        # (route, radius) of the last route run
    k0 = first_entry_estimate(model, step) if arithmetic == "auto" else None
    for route in ROUTES:
        name = route.name
        if arithmetic != name and not (arithmetic == "auto" and route.in_auto):
            continue
        if k0 is not None and Fraction(k0) * Fraction(1, 2 ** route.floor_bits) > eps:
            tried.append(f"{name}: skipped (its radius is at least {route.floor_text}, and |K_0| is about {k0:.3g})")
            continue
        if arithmetic == "auto" and previous is not None and previous[1] is not None \
                and Fraction(previous[1]) * Fraction(1, 2 ** (route.reach_bits - previous[0].reach_bits)) > eps:
            tried.append(f"{name}: skipped ({previous[0].name} radius {previous[1]:.3g}; eps far below its reach)")
            continue
        ct, why, method = c_tilde_at(route.setup_prec)
        if ct is None:
            return None, t_ct, tried + [f"C~: {why}"]
        progress(f"filter on {name} disks")
        res, why, worst = _run(route, model, step, L, eps, ct, exceptional, decide_g=c_tilde is not None)
        if res is not None:
            res.info["c_tilde_method"] = method
            return res, t_ct, tried
        tried.append(f"{name}: {why}")
        previous = (route, worst)
    return None, t_ct, tried


def certificate_of(res, r: int, exact: bool) -> dict:
    """The certificate of an accepted disk run: mode, routing, the filter constants (from the
    run's bounds b, w, d, A_wt), Cauchy route, and its route's arithmetic, precision_bits and
    max_radius (the largest of the radii it was accepted on: the disks' own for float64, those
    of the disks around its boxes, ``box_radii`` and ``td_box_radii``, for the others)."""
    route, info = route_of(res), res.info
    constants = constants_from_bounds(info["b"], info["w"], info["d"], info["A_wt"], r, info["exceptional"],
                                      {k: info["poles"] > 0 for k in info["A_wt"]})
    return {"mode": "ball", "routing": "exact" if exact else "ball", **constants,
            "cauchy": dict(info["cauchy"]), "arithmetic": route.arithmetic,
            "precision_bits": route.precision_bits, "max_radius": _worst(route.radii(res))}


def disk_kernel(res) -> tuple[np.ndarray, np.ndarray, Sequence]:
    """(midpoints, radii, enclosures) of an accepted disk run: float64, double-double or
    triple-double."""
    mid, rad = res.value
    return mid, rad, route_of(res).enclosures(res)
