"""The exact mode: the filter in exact arithmetic over Q(zeta)."""
from __future__ import annotations

from fractions import Fraction
from typing import Any

from ..algorithms.dft import next_power_of_two
from ..algorithms.s4.dplr import DPLR
from ..algorithms.s4.c_tilde import c_tilde as form_c_tilde
from ..algorithms.s4.filter import filter_kernel
from ..arith import ExactField


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
