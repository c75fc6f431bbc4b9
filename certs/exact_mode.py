"""The exact mode: the kernel in exact arithmetic, by one of two routes.

``"powers"``: powers of Abar over the Gaussian rationals on integer matrices
(``algorithms.s4.exact_route``, proofs/exact_route.md); ``"filter"``: the filter in
ExactField over Q(zeta) (its operation counts are the filter's).  Both give the same
exact kernel; ``"auto"`` takes the powers route, measured far faster."""
from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
from flint import acb, arb, ctx, fmpz

from ..algorithms.dft import next_power_of_two
from ..algorithms.s4.dplr import DPLR
from ..algorithms.s4.c_tilde import c_tilde as form_c_tilde
from ..algorithms.s4.exact_route import exact_kernel_by_powers
from ..algorithms.s4.filter import filter_kernel
from ..arith import ExactField
from ..arith.ball import float_upper

from .errors import CertificationError

EXACT_ROUTES = ("auto", "powers", "filter")


def exact_field_for(N: int, L: int) -> ExactField:
    """Holds the M-th roots of the grid and those of the product tree's transforms."""
    M = next_power_of_two(L)
    return ExactField.for_length(max(M, next_power_of_two(2 * (N + 1))))


def exact_kernel(model: DPLR, step: Any, L: int, c_tilde: Any, exceptional: list[int],
                 route: str = "filter") -> list[tuple[Fraction, Fraction]]:
    """K_j as exact Gaussian rationals (the kernel of exact Gaussian-rational data is), by
    ``route`` (see the module)."""
    if route not in EXACT_ROUTES:
        raise ValueError(f"exact route must be one of {', '.join(EXACT_ROUTES)}; got {route!r}")
    if route != "filter":
        res = exact_kernel_by_powers(model, step, L, c_tilde)
        if not res.ok:
            raise ArithmeticError(f"exact kernel by powers returned {res.status}")
        return res.value
    E = exact_field_for(model.N, L)
    if c_tilde is None:  # C~ is a Gaussian rational: form it in Q(i), far cheaper than in Q(zeta)
        G = ExactField(4)
        ct = form_c_tilde(G, model, step, next_power_of_two(L))
        if not ct.ok:
            raise ArithmeticError(f"forming C~ returned {ct.status}")
        c_tilde = [G.to_fractions(x) for x in ct.value]
    res = filter_kernel(E, model, step, L, c_tilde=c_tilde, exceptional=exceptional)
    if not res.ok:
        raise ArithmeticError(f"exact filter returned {res.status}")
    return [E.to_fractions(k) for k in res.value]


def exact_mode_kernel(model: DPLR, step: Any, L: int, c_tilde: Any, exceptional: list[int], balls: list,
                      prec: int, route: str = "auto") -> tuple[list, np.ndarray, np.ndarray]:
    """Exact mode's kernel: (exact values, float64 midpoints, outward-rounded
    |K_j - mid_j|), after checking that the ball run's ``balls`` (at ``prec`` bits)
    contain the exact values (CertificationError if not); ``route`` as in ``exact_kernel``."""
    values = exact_kernel(model, step, L, c_tilde, exceptional, route)
    mid = np.array([complex(float(re), float(im)) for re, im in values], dtype=np.complex128)
    with ctx.workprec(prec + 64):
        for b, (re, im) in zip(balls, values):
            if not b.contains(acb(_arb(re), _arb(im))):
                raise CertificationError("internal check failed: the ball run does not contain the exact kernel")
    return values, mid, _exact_rad(values, mid)


def _arb(q: Fraction) -> arb:
    """A ball containing q at the working precision (no gcd: kernel entries run to
    hundreds of thousands of bits)."""
    return arb(fmpz(q.numerator)) / arb(fmpz(q.denominator))


def _exact_rad(values: list, mid: np.ndarray) -> np.ndarray:
    """Outward-rounded |K_j - mid_j| for exact K_j and the float64 midpoints."""
    rad = np.zeros(len(values))
    with ctx.workprec(256):
        for j, ((re, im), m) in enumerate(zip(values, mid)):
            d = acb(_arb(re) - arb(m.real), _arb(im) - arb(m.imag))
            rad[j] = float_upper(abs(d).upper())
    return rad
