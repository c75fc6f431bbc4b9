"""HiPPO state matrices over a field (proofs/spec.md §S16–§S17, the HiPPO theorem;
proofs/hippo_nplr.md).

Generators (rows and columns indexed 0..N-1):

* LegS ``G_nk = -sqrt((2n+1)(2k+1))`` (n > k), ``-(n+1)`` (n = k), 0 (n < k); ``B_n = sqrt(2n+1)``;
* LegT ``G_nk = -(2n+1)(-1)^(n-k)/theta`` (n >= k), ``-(2n+1)/theta`` (n < k);
  ``B_n = (2n+1)(-1)^n/theta`` (the LMU's matrices);
* LagT ``G_nk = -1`` (n >= k), 0 (n < k); ``B_n = 1``.

Similarity ``x = S x~``: the identity for LegS and LagT, ``S0 = diag(sqrt(2n+1) (-1)^n)`` for
LegT, so ``G~ = S^-1 G S``, ``B~ = S^-1 B``, ``C~ = S* C``.  The normal-plus-low-rank split
of ``G~`` is in :mod:`.hippo_nplr`, the certified DPLR model in :mod:`.hippo_dplr`, the
float64 model in :mod:`.hippo_float64`.
"""
from __future__ import annotations

from fractions import Fraction
from math import isqrt
from typing import Any

import numpy as np

from ...arith import BallField, ExactField, exact_parts

from ..s4.dplr import as_vector
from ..s4.kernels import dense_kernel
from ..result import Result

KINDS = ("legs", "legt", "lagt")


# -- square roots of rationals, per field ---------------------------------------

def _exact_rational_sqrt(q: Fraction) -> Fraction | None:
    """sqrt(q) when it is rational (q >= 0 in lowest terms: both parts perfect squares)."""
    a, b = isqrt(q.numerator), isqrt(q.denominator)
    return Fraction(a, b) if a * a == q.numerator and b * b == q.denominator else None


def field_sqrt(F, q: Any):
    """sqrt(q) for a rational q >= 0, as an element of F.

    A rational square root is read exactly in every field (an input).  Otherwise it is
    ``F.sqrt(q)``, a supplied constant: BallField encloses it at the field's precision;
    Float64Field rounds it; RoundedField supplies it with absolute error below u; Counting
    and Tracing take it from their base field; ExactField cannot hold it and raises
    ``Unsupported`` (a ValueError).

    >>> from s4cert.arith import ExactField
    >>> F = ExactField(4)
    >>> F.to_fractions(field_sqrt(F, Fraction(9, 4)))
    (Fraction(3, 2), Fraction(0, 1))
    >>> F = BallField(64)
    >>> r = field_sqrt(F, 2)
    >>> F.mul(r, r).contains(2)
    True
    """
    re, im = exact_parts(q, "sqrt argument")
    if im != 0 or re < 0:
        raise ValueError(f"sqrt: expected a rational number >= 0, got {q!r}")
    exact = _exact_rational_sqrt(re)
    if exact is not None:
        return F.from_number(exact)
    return F.sqrt(re)


# -- input checks ------------------------------------------------------------------

def check_size(x: Any, what: str) -> int:
    """A size (state, memory, length, features) as an int >= 1."""
    if not isinstance(x, (int, np.integer)) or isinstance(x, (bool, np.bool_)) or x < 1:
        raise ValueError(f"{what} must be an integer >= 1, got {x!r}")
    return int(x)


def check_N(N: Any) -> int:
    """The state size as an int >= 1."""
    return check_size(N, "N")


def read_theta(theta: Any) -> Fraction:
    """The window length theta as an exact positive rational (a float is its exact
    binary value)."""
    if theta is None:
        raise ValueError("LegT needs a window length theta > 0")
    re, im = exact_parts(theta, "theta")
    if im != 0 or re <= 0:
        raise ValueError(f"theta must be a real number > 0, got {theta!r}")
    return re


def check_kind(kind: Any, theta: Any) -> tuple[str, Fraction | None]:
    """(kind, theta read exactly); theta is required for LegT and refused otherwise."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if kind == "legt":
        return kind, read_theta(theta)
    if theta is not None:
        raise ValueError(f"theta applies to LegT only, got theta={theta!r} for {kind!r}")
    return kind, None


def check_C(C: Any, N: int) -> list:
    """The output vector as N entries; None means all ones."""
    if C is None:
        return [1] * N
    c = as_vector(C, "C")
    if len(c) != N:
        raise ValueError(f"C: expected {N} entries (N = {N}), got {len(c)}")
    return c


# -- generators --------------------------------------------------------------------

def legs(F, N: int) -> tuple[list[list], list]:
    """The LegS generator ``G^S`` and input ``B_n = sqrt(2n+1)`` over F.

    >>> F = BallField(64)
    >>> G, B = legs(F, 2)
    >>> F.mul(G[1][0], G[1][0]).contains(3), F.mul(B[1], B[1]).contains(3)
    (True, True)
    """
    N = check_N(N)
    G = [[F.neg(field_sqrt(F, (2 * n + 1) * (2 * k + 1))) if n > k
          else F.from_number(-(n + 1)) if n == k else F.zero() for k in range(N)] for n in range(N)]
    return G, [field_sqrt(F, 2 * n + 1) for n in range(N)]


def legt(F, N: int, theta: Any) -> tuple[list[list], list]:
    """The LegT (LMU) generator ``G^T`` and input ``B_n = (2n+1)(-1)^n/theta`` over F;
    exact for a rational theta.

    >>> F = ExactField(4)
    >>> G, B = legt(F, 2, 1)
    >>> [[F.to_fractions(x)[0] for x in row] for row in G]
    [[Fraction(-1, 1), Fraction(-1, 1)], [Fraction(3, 1), Fraction(-3, 1)]]
    """
    G, B = legt_rational(N, theta)
    return [[F.from_number(x) for x in row] for row in G], [F.from_number(b) for b in B]


def legt_rational(N: int, theta: Any) -> tuple[list[list[Fraction]], list[Fraction]]:
    """``G^T`` and ``B`` of :func:`legt` as exact rationals (theta read exactly)."""
    N, th = check_N(N), read_theta(theta)
    sign = lambda m: 1 if m % 2 == 0 else -1
    G = [[Fraction(-(2 * n + 1) * (sign(n - k) if n >= k else 1)) / th for k in range(N)]
         for n in range(N)]
    return G, [Fraction((2 * n + 1) * sign(n)) / th for n in range(N)]


def lagt(F, N: int) -> tuple[list[list], list]:
    """The LagT generator ``G^L`` (-1 on and below the diagonal) and input ``B = 1``.

    >>> F = ExactField(4)
    >>> G, B = lagt(F, 2)
    >>> [[F.to_fractions(x)[0] for x in row] for row in G]
    [[Fraction(-1, 1), Fraction(0, 1)], [Fraction(-1, 1), Fraction(-1, 1)]]
    """
    N = check_N(N)
    G = [[F.from_number(-1) if n >= k else F.zero() for k in range(N)] for n in range(N)]
    return G, [F.from_number(1) for _ in range(N)]


def generator(F, kind: str, N: int, theta: Any = None) -> tuple[list[list], list]:
    """(G, B) of the named HiPPO kind: ``"legs"``, ``"legt"`` (needs theta) or ``"lagt"``."""
    kind, th = check_kind(kind, theta)
    if kind == "legs":
        return legs(F, N)
    if kind == "legt":
        return legt(F, N, th)
    return lagt(F, N)


def similarity(F, kind: str, N: int) -> list:
    """The diagonal of the state change S (x = S x~): ones for LegS and LagT,
    ``sqrt(2n+1) (-1)^n`` for LegT."""
    N = check_N(N)
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if kind != "legt":
        return [F.one() for _ in range(N)]
    return [field_sqrt(F, 2 * n + 1) if n % 2 == 0 else F.neg(field_sqrt(F, 2 * n + 1))
            for n in range(N)]


# -- dense kernels (the reference for the original system) ----------------------------

def hippo_kernel(F, kind: str, N: int, step: Any, L: int, theta: Any = None, C: Any = None) -> Result:
    """The kernel of the original HiPPO system (G, B, C) with output ``y = C* x``;
    C defaults to the all-ones vector.  Exact in ExactField for LagT and rational-theta LegT.

    ``value``: the list ``K_0 .. K_{L-1}`` (``s4.kernels.dense_kernel``).  Statuses:
    ``singular-bilinear-matrix`` (``info["column"]``: the column of ``I - (step/2) G`` without
    a pivot) and ``undecided`` (``info["reason"]``: the pivot the field could not decide).
    """
    G, B = generator(F, kind, N, theta)
    return dense_kernel(F, G, B, check_C(C, check_N(N)), step, L)
