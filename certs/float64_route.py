"""Ball mode's disk routes: the filter on float64 midpoint-radius disks
(``algorithms.s4.midrad``) and on double-double ones (``algorithms.s4.midrad_dd``), each
accepted when every radius is at most eps."""
from __future__ import annotations

import math
import time
from collections.abc import Sequence
from fractions import Fraction
from typing import Any, Callable

import numpy as np
from flint import acb, arb, ctx

from ..algorithms.dft import next_power_of_two
from ..algorithms.s4.c_tilde import c_tilde as form_c_tilde
from ..algorithms.s4.midrad import ARITHMETIC, filter_kernel_midrad
from ..algorithms.s4.midrad_dd import ARITHMETIC as DD_ARITHMETIC, filter_kernel_dd
from ..arith.midrad import up
from ..arith import BallField

from .ball_run import C_TILDE_METHOD
from .constants import constants_from_bounds

#: the arithmetic choices of ball mode (see ``certify_kernel``)
ARITHMETIC_CHOICES = ("auto", "ball", "float64", "double-double")
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


def _c_tilde(model, step, L, c_tilde) -> tuple[Any, str, float]:
    """C~ as supplied, or formed in balls at FLOAT64_SETUP_PREC: (C~, why not, seconds)."""
    t = time.perf_counter()
    if c_tilde is not None:
        return c_tilde, "", 0.0
    res = form_c_tilde(BallField(FLOAT64_SETUP_PREC), model, step, next_power_of_two(L), method=C_TILDE_METHOD)
    if not res.ok:
        return None, f"G not certified invertible at {FLOAT64_SETUP_PREC} bits", 0.0
    return res.value, "", time.perf_counter() - t


def _worst(radii: np.ndarray) -> float:
    return float(np.max(radii)) if len(radii) else 0.0


def _run(name: str, model, step, L, eps: Fraction, ct, exceptional,
         decide_g: bool = True) -> tuple[Any, str, float | None]:
    """One disk route on a given C~: (result or None, why not, its largest radius or None).
    ``decide_g``: the float64 route also decides G's invertibility from its set-up (only
    wanted when C~ was supplied)."""
    if name == "float64":
        res = filter_kernel_midrad(model, step, L, c_tilde=ct, exceptional=exceptional, prec=FLOAT64_SETUP_PREC,
                                   decide_g=decide_g)
        radii = res.value[1] if res.ok else None
    else:
        res = filter_kernel_dd(model, step, L, c_tilde=ct, exceptional=exceptional, prec=FLOAT64_SETUP_PREC)
        radii = box_radii(*res.info["dd"]) if res.ok else None
    if radii is None:
        return None, f"{res.status} ({res.info.get('reason', '')})", None
    worst = _worst(radii)
    if not (math.isfinite(worst) and Fraction(worst) <= eps):
        return None, f"radius {worst:.3g} > eps {float(eps):.3g}", worst
    return res, "", worst


#: the disk routes, in the order "auto" tries them
DISK_ROUTES = ("float64", "double-double")


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
        h = float(step) / 2
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
    """The disk routes ``arithmetic`` allows ("auto": float64, then double-double), the first
    whose radii are all <= eps: (its result or None, seconds spent forming C~, why each
    route tried did not certify).  C~, when formed, is formed once for both.  Under "auto"
    a route is skipped when eps is below what it can reach: the float64 route when eps is
    below u |K_0| / 2, the double-double route below 2^-96 |K_0| (``first_entry_estimate``;
    their radii are at least u max|K| and, measured, 2^-90 max|K| or more, while
    |K_0| <= max|K|) or, after a float64 run,
    below the float64 radius times 2^-53, so a ball run is not delayed by a route that
    cannot reach eps."""
    ct, why, t_ct = _c_tilde(model, step, L, c_tilde)
    if ct is None:
        return None, 0.0, [f"C~: {why}"]
    tried: list[str] = []
    radius64 = None
    k0 = first_entry_estimate(model, step) if arithmetic == "auto" else None
    for name in DISK_ROUTES:
        if arithmetic not in ("auto", name):
            continue
        if k0 is not None and Fraction(k0) * Fraction(1, 2 ** (54 if name == "float64" else 96)) > eps:
            floor = "u max|K|" if name == "float64" else "2^-90 max|K| (measured)"
            tried.append(f"{name}: skipped (its radius is at least {floor}, and |K_0| is about {k0:.3g})")
            continue
        if name == "double-double" and arithmetic == "auto" and radius64 is not None \
                and Fraction(radius64) * Fraction(1, 2 ** 53) > eps:
            tried.append(f"double-double: skipped (float64 radius {radius64:.3g}; eps far below its reach)")
            continue
        progress(f"filter on {name} disks")
        res, why, worst = _run(name, model, step, L, eps, ct, exceptional, decide_g=c_tilde is not None)
        if res is not None:
            return res, t_ct, tried
        tried.append(f"{name}: {why}")
        if name == "float64":
            radius64 = worst
    return None, t_ct, tried


def certificate_of(res, r: int, exact: bool) -> dict:
    """The certificate of an accepted disk run (float64 or double-double)."""
    return double_double_certificate(res, r, exact) if "dd" in res.info else float64_certificate(res, r, exact)


def float64_certificate(res, r: int, exact: bool) -> dict:
    """The certificate of an accepted float64 run: mode, routing, the filter constants
    (from the run's bounds b, w, d, A_wt), Cauchy route, arithmetic, precision_bits
    (53) and max_radius."""
    info = res.info
    rad = res.value[1]
    constants = constants_from_bounds(info["b"], info["w"], info["d"], info["A_wt"], r, info["exceptional"],
                                      {k: info["poles"] > 0 for k in info["A_wt"]})
    return {"mode": "ball", "routing": "exact" if exact else "ball", **constants,
            "cauchy": dict(info["cauchy"]), "arithmetic": ARITHMETIC,
            "precision_bits": 53, "max_radius": float(np.max(rad)) if len(rad) else 0.0}


def double_double_certificate(res, r: int, exact: bool) -> dict:
    """The certificate of an accepted double-double run: as ``float64_certificate``, with
    ``arithmetic`` the double-double one, ``precision_bits`` 106 and ``max_radius`` the
    largest radius of the disks around its boxes (``box_radii``)."""
    cert = float64_certificate(res, r, exact)
    cert.update(arithmetic=DD_ARITHMETIC, precision_bits=106, max_radius=_worst(box_radii(*res.info["dd"])))
    return cert


def disk_kernel(res) -> tuple[np.ndarray, np.ndarray, Sequence]:
    """(midpoints, radii, enclosures) of an accepted disk run, float64 or double-double."""
    mid, rad = res.value
    if "dd" in res.info:
        return mid, rad, DDBalls(*res.info["dd"])
    return mid, rad, DiskBalls(mid, rad)
