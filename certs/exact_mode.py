"""The exact mode: the filter in exact arithmetic over Q(zeta)."""
from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
from flint import acb, arb, ctx, fmpq

from ..algorithms.dft import next_power_of_two
from ..algorithms.s4.dplr import DPLR
from ..algorithms.s4.c_tilde import c_tilde as form_c_tilde
from ..algorithms.s4.filter import filter_kernel
from ..arith import ExactField
from ..arith.ball import float_upper

from .errors import CertificationError


def exact_field_for(N: int, L: int) -> ExactField:
    """Holds the M-th roots of the grid and those of the product tree's transforms."""
    M = next_power_of_two(L)
    return ExactField.for_length(max(M, next_power_of_two(2 * (N + 1))))


def exact_kernel(model: DPLR, step: Any, L: int, c_tilde: Any, exceptional: list[int]) -> list[tuple[Fraction, Fraction]]:
    """K_j as exact Gaussian rationals (the kernel of exact Gaussian-rational data is)."""
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
                      prec: int) -> tuple[list, np.ndarray, np.ndarray]:
    """Exact mode's kernel: (exact values, float64 midpoints, outward-rounded
    |K_j - mid_j|), after checking that the ball run's ``balls`` (at ``prec`` bits)
    contain the exact values (CertificationError if not)."""
    values = exact_kernel(model, step, L, c_tilde, exceptional)
    mid = np.array([complex(float(re), float(im)) for re, im in values], dtype=np.complex128)
    with ctx.workprec(prec + 64):
        for b, (re, im) in zip(balls, values):
            if not b.contains(acb(arb(_fq(re)), arb(_fq(im)))):
                raise CertificationError("internal check failed: the ball run does not contain the exact kernel")
    return values, mid, _exact_rad(values, mid)


def _fq(q: Fraction) -> fmpq:
    return fmpq(q.numerator, q.denominator)


def _exact_rad(values: list, mid: np.ndarray) -> np.ndarray:
    """Outward-rounded |K_j - mid_j| for exact K_j and the float64 midpoints."""
    rad = np.zeros(len(values))
    with ctx.workprec(256):
        for j, ((re, im), m) in enumerate(zip(values, mid)):
            d = acb(arb(_fq(re - Fraction(m.real))), arb(_fq(im - Fraction(m.imag))))
            rad[j] = float_upper(abs(d).upper())
    return rad
