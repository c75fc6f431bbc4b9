"""The exact kernel by powers of Abar over the Gaussian rationals, on integer matrices.

For exact Gaussian-rational data, with ``alpha = step/2``, ``G = I - alpha A``,
``Abar = G^-1 (I + alpha A)`` and ``Bbar = G^-1 step B`` (``bilinear``), the kernel the
filter computes on the grid of M-th roots (M the least power of two >= L) is

    K_j = w* Abar^j Bbar,  0 <= j < L,  where (I - Abar^M)* w = C~.

When C~ is formed from C, ``C~ = (I - Abar^M)* C`` and so ``w = C``: the kernel is
``C* Abar^j Bbar`` (proofs/exact_route.md).  Everything is exact: the solves are
fmpq_mat solves of the real forms (``arith.gaussian``), and the powers run on one
integer matrix with a common denominator.  This route takes numbers, not a field: it is
the exact mode's fast route, and the exact filter (``filter_kernel`` in ExactField) is
the other route it is checked against.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any

from flint import fmpq, fmpq_mat

from ...arith import ExactField
from ...arith.gaussian import (fraction_of, integer_form, krylov_values, matrix_power, power_times, real_column,
                              real_matrix)
from ..result import Result, Status
from .bilinear_map import NUMBERS, half_step
from .dplr import DPLR, check_length

Parts = tuple[Fraction, Fraction]


def _parts(xs: list) -> list[Parts]:
    """Exact (re, im) of each number, read as the exact fields read them."""
    G = ExactField(4)
    return [G.to_fractions(G.from_number(x)) for x in xs]


def _cmul(a: Parts, b: Parts) -> Parts:
    return a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0]


def dense_a(model: DPLR) -> list[list[Parts]]:
    """A = Lambda - P Q* in exact parts."""
    lam = _parts(model.Lambda)
    P = [_parts(row) for row in model.P]
    Q = [_parts(row) for row in model.Q]
    N = model.N
    A = []
    for i in range(N):
        row = []
        for j in range(N):
            re, im = (lam[i] if i == j else (Fraction(0), Fraction(0)))
            for p, q in zip(P[i], Q[j]):
                pr, pi = _cmul(p, (q[0], -q[1]))
                re, im = re - pr, im - pi
            row.append((re, im))
        A.append(row)
    return A


def exact_kernel_by_powers(model: DPLR, step: Any, L: int, c_tilde: list | None = None) -> Result:
    """K_j (0 <= j < L) as exact (re, im) Fraction pairs, by the formula of the module.
    Statuses: ``singular-bilinear-matrix`` (G singular), ``singular`` (I - Abar^M
    singular, only with a supplied C~).  ``info``: ``"M"`` (the grid size)."""
    L = check_length(L)
    M = 1 << max(0, (L - 1).bit_length())
    (h, _), = _parts([step])
    alpha = half_step(NUMBERS, h)
    A = real_matrix(dense_a(model))
    n = A.nrows()
    one = fmpq_mat(n, n, [1 if i == j else 0 for i in range(n) for j in range(n)])
    aA = A * fmpq(alpha.numerator, alpha.denominator)
    G, plus = one - aA, one + aA
    if G.rank() < n:
        return Result(Status.SINGULAR_BILINEAR, None, {"M": M})
    Abar = G.solve(plus)
    Bbar = G.solve(real_column(_parts(model.B)) * fmpq(h.numerator, h.denominator))
    C = real_column(_parts(model.C))
    if c_tilde is None:
        w = C
    else:
        H = (one - matrix_power(Abar, M)).transpose()
        if H.rank() < n:
            return Result(Status.SINGULAR, None, {"M": M})
        w = H.solve(real_column(_parts(c_tilde)))
    return Result(Status.OK, krylov_values(Abar, Bbar, w, L), {"M": M})


def exact_c_tilde(model: DPLR, step: Any, M: int) -> Result:
    """``C~ = (I - Abar^M)* C`` exactly, as (re, im) Fraction pairs, on the real forms.
    Status ``singular-bilinear-matrix`` when G is singular."""
    (h, _), = _parts([step])
    A = real_matrix(dense_a(model))
    n = A.nrows()
    one = fmpq_mat(n, n, [1 if i == j else 0 for i in range(n) for j in range(n)])
    alpha = half_step(NUMBERS, h)
    aA = A * fmpq(alpha.numerator, alpha.denominator)
    G = one - aA
    if G.rank() < n:
        return Result(Status.SINGULAR_BILINEAR, None)
    Z, d = integer_form(G.solve(one + aA))  # Abar = Z/d: the powers on integers, no gcd
    zc, dc = integer_form(real_column(_parts(model.C)))
    y = power_times(Z.transpose(), M, zc)   # (Z^M)^T zc, without forming Z^M
    dM = d ** M
    c = [fmpq(zc[i, 0] * dM - y[i, 0], dc * dM) for i in range(n)]
    N = n // 2
    return Result(Status.OK, [(fraction_of(c[i]), fraction_of(c[i + N])) for i in range(N)])
