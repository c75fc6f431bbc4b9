"""Small dense linear algebra over any field (matrices are lists of rows)."""
from __future__ import annotations

from dataclasses import dataclass

from ..arith import Truth
from ..arith.base import Field

from .result import Result, Status, undecided


def identity(F, n: int) -> list[list]:
    one, zero = F.one(), F.zero()
    return [[one if i == j else zero for j in range(n)] for i in range(n)]


def dot(F, x: list, y: list):
    """sum_i x_i y_i (no conjugation; zero for empty vectors) in index order on F's own
    ``mul`` and ``add``: the classical ``Field.dot``, whatever kernel F itself supplies,
    so a procedure's operation sequence (counted, traced, rounded) does not depend on it."""
    return Field.dot(F, x, y)


def cdot(F, x: list, y: list):
    """x* y = sum_i conj(x_i) y_i."""
    return dot(F, [F.conj(a) for a in x], y)


def matvec(F, A: list[list], x: list) -> list:
    return [dot(F, row, x) for row in A]


def matmul(F, A: list[list], B: list[list]) -> list[list]:
    cols = list(zip(*B))
    return [[dot(F, row, list(c)) for c in cols] for row in A]


def conj_transpose(F, A: list[list]) -> list[list]:
    return [[F.conj(A[i][j]) for i in range(len(A))] for j in range(len(A[0]))] if A else []


@dataclass
class LU:
    """Row-pivoted elimination of a square matrix, for repeated solves."""

    n: int
    perm: list[int]
    lower: list[list]   # multipliers below the diagonal
    upper: list[list]


def lu(F, A: list[list]) -> Result:
    """Factor A.  Pivots are certainly nonzero (the largest in magnitude among them);
    status ``singular`` when a column has only exact zeros left, ``undecided`` when
    no candidate is certainly nonzero but some are undecided."""
    n = len(A)
    U = [list(r) for r in A]
    Lm = [[None] * n for _ in range(n)]
    perm = list(range(n))
    for c in range(n):
        best, best_mag, unknown = None, -1.0, False
        for r in range(c, n):
            t = F.is_zero(U[r][c])
            if t is Truth.FALSE:
                mag = abs(F.to_complex(U[r][c]))
                if mag > best_mag:
                    best, best_mag = r, mag
            elif t is Truth.UNKNOWN:
                unknown = True
        if best is None:
            return undecided(f"pivot in column {c}") if unknown else Result(Status.SINGULAR, info={"column": c})
        if best != c:
            U[c], U[best] = U[best], U[c]
            Lm[c], Lm[best] = Lm[best], Lm[c]
            perm[c], perm[best] = perm[best], perm[c]
        for r in range(c + 1, n):
            f = F.div(U[r][c], U[c][c])
            Lm[r][c] = f
            U[r] = U[r][:c + 1] + [F.sub(U[r][j], F.mul(f, U[c][j])) for j in range(c + 1, n)]
    return Result(Status.OK, LU(n, perm, Lm, U))


def lu_solve(F, f: LU, b: list) -> list:
    y = [b[p] for p in f.perm]
    for r in range(f.n):
        for c in range(r):
            y[r] = F.sub(y[r], F.mul(f.lower[r][c], y[c]))
    x = [None] * f.n
    for r in range(f.n - 1, -1, -1):
        acc = y[r]
        for c in range(r + 1, f.n):
            acc = F.sub(acc, F.mul(f.upper[r][c], x[c]))
        x[r] = F.div(acc, f.upper[r][r])
    return x


def solve(F, A: list[list], b: list) -> Result:
    """Solve A x = b by elimination; status ``singular`` or ``undecided`` as in :func:`lu`."""
    if len(A) != len(b) or any(len(r) != len(A) for r in A):
        raise ValueError(f"solve: need a square matrix and a matching vector, got {len(A)} rows and {len(b)} entries")
    res = lu(F, A)
    return Result(Status.OK, lu_solve(F, res.value, b)) if res.ok else res
