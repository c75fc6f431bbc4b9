"""The dense bilinear (Tustin) discretization (proofs/spec.md §S14), once for every model.

With ``alpha = step/2`` and ``G = I - alpha A``:
``Abar = G^-1 (I + alpha A)`` and ``Bbar = G^-1 step B``.  ``G`` is factored once
(row-pivoted elimination, ``linalg.lu``); a singular ``G`` is the status
``singular-bilinear-matrix``, a pivot the field cannot decide is ``undecided``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..linalg import LU, dot, lu, lu_solve
from ..result import Result, Status
from .bilinear_map import half_step


@dataclass
class DenseBilinear:
    """A factored ``G = I - alpha A`` of a dense ``A`` (elements of one field), for the
    discretized map and repeated solves."""

    A: list[list]
    delta: Any
    alpha: Any
    G: LU

    def solve(self, F, b: list) -> list:
        """G^-1 b."""
        return lu_solve(F, self.G, b)

    def step(self, F, v: list) -> list:
        """Abar v = G^-1 (v + alpha A v)."""
        return self.solve(F, [F.add(x, F.mul(self.alpha, dot(F, row, v))) for x, row in zip(v, self.A)])

    def input_map(self, F, B: list) -> list:
        """Bbar b = G^-1 step b for one input column b."""
        return self.solve(F, [F.mul(self.delta, x) for x in B])

    def matrices(self, F, B: list[list]) -> tuple[list[list], list[list]]:
        """(Abar, Bbar) as dense matrices (lists of rows), B given as N rows of m inputs;
        Abar column by column as G^-1 (I + alpha A) e_j."""
        N = len(self.A)
        one, zero = F.one(), F.zero()
        plus = [[F.add(one if i == j else zero, F.mul(self.alpha, self.A[i][j])) for j in range(N)] for i in range(N)]
        Abar = _solve_columns(F, self.G, plus)
        Bbar = _solve_columns(F, self.G, [[F.mul(self.delta, b) for b in row] for row in B]) if B and B[0] else \
            [[] for _ in range(N)]
        return Abar, Bbar


def _solve_columns(F, G: LU, rhs: list[list]) -> list[list]:
    cols = [lu_solve(F, G, [row[j] for row in rhs]) for j in range(len(rhs[0]))]
    return [[c[i] for c in cols] for i in range(len(rhs))]


def factor(F, A: list[list], delta) -> Result:
    """Factor ``G = I - (delta/2) A`` for a dense N x N ``A`` and a step ``delta``
    (elements of F).  ``value``: a :class:`DenseBilinear`.  Statuses:
    ``singular-bilinear-matrix`` (G singular; ``info["column"]``: the column without a
    pivot) and ``undecided`` (``info["reason"]``: the pivot the field could not decide)."""
    N = len(A)
    if N < 1 or any(len(row) != N for row in A):
        raise ValueError(f"bilinear: A must be N x N with N >= 1, got {N} rows")
    alpha = half_step(F, delta)
    G = [[F.sub(F.one() if i == j else F.zero(), F.mul(alpha, A[i][j])) for j in range(N)] for i in range(N)]
    f = lu(F, G)
    if not f.ok:
        return Result(Status.SINGULAR_BILINEAR, info=f.info) if f.status == Status.SINGULAR else f
    return Result(Status.OK, DenseBilinear(A, delta, alpha, f.value))


def discretize(F, A: list[list], B: list[list], delta) -> Result:
    """``(Abar, Bbar)`` of a dense system: A is N x N, B is N rows of m inputs, delta the
    step (elements of F).  Statuses and ``info`` as in :func:`factor`.

    >>> from s4cert.arith import ExactField
    >>> E = ExactField(4)
    >>> n = E.from_number
    >>> Abar, Bbar = discretize(E, [[n(-1)]], [[n(1)]], n(1)).value
    >>> E.to_fractions(Abar[0][0])[0], E.to_fractions(Bbar[0][0])[0]
    (Fraction(1, 3), Fraction(2, 3))
    """
    f = factor(F, A, delta)
    if not f.ok:
        return f
    return Result(Status.OK, f.value.matrices(F, B))
