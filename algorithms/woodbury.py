"""Solving (D + U V*) x = b with D diagonal, through W = I_r + V* D^-1 U.

(D + U V*)^-1 = D^-1 - D^-1 U W^-1 V* D^-1 when D and W are invertible; a singular
W (or a zero in D) is reported with status ``singular``, never divided by.
"""
from __future__ import annotations

from dataclasses import dataclass

from .linalg import LU, cdot, dot, lu, lu_solve
from .result import Result, Status, undecided, zero_partition


@dataclass
class Woodbury:
    """A prepared solver: D^-1 U and the factored correction W, for many right-hand sides."""

    d: list
    V: list[list]
    DinvU: list[list]
    W: LU

    def solve(self, F, b: list) -> list:
        y = [F.div(bj, dj) for bj, dj in zip(b, self.d)]
        r = len(self.DinvU[0]) if self.DinvU else 0
        rhs = [cdot(F, [row[i] for row in self.V], y) for i in range(r)]
        t = lu_solve(F, self.W, rhs)
        return [F.sub(yj, dot(F, row, t)) for yj, row in zip(y, self.DinvU)]


def prepare(F, d: list, U: list[list], V: list[list]) -> Result:
    """Check D and W, factor W.  ``U``, ``V`` are N x r lists of rows.  ``value``: a
    :class:`Woodbury`.  Statuses: ``singular`` (``info["reason"]``; ``"index"`` of a zero
    entry of D, or ``"column"`` of W's elimination) and ``undecided`` (``info["reason"]``)."""
    if not (len(d) == len(U) == len(V)):
        raise ValueError(f"woodbury: D has {len(d)} entries, U {len(U)} rows, V {len(V)} rows")
    r = len(U[0]) if U else 0
    if any(len(row) != r for row in U) or any(len(row) != r for row in V):
        raise ValueError("woodbury: U and V must both be N x r")
    zero, _, unknown = zero_partition(F, d)
    if zero:
        return Result(Status.SINGULAR, info={"reason": "D has a zero entry", "index": zero[0]})
    if unknown:
        return undecided("an entry of D may be zero")
    DinvU = [[F.div(x, dj) for x in row] for row, dj in zip(U, d)]
    W = [[F.add(F.one() if i == k else F.zero(), cdot(F, [row[i] for row in V], [row[k] for row in DinvU]))
          for k in range(r)] for i in range(r)]
    f = lu(F, W)
    if not f.ok:
        f.info.setdefault("reason", "W = I + V* D^-1 U is singular")
        return f
    return Result(Status.OK, Woodbury(list(d), V, DinvU, f.value))


def woodbury_solve(F, d: list, U: list[list], V: list[list], b: list) -> Result:
    """x with (diag(d) + U V*) x = b.  Statuses as in :func:`prepare`.

    >>> from s4cert.arith import ExactField
    >>> F = ExactField(4)
    >>> n = F.from_number
    >>> r = woodbury_solve(F, [n(2), n(3)], [[n(1)], [n(1)]], [[n(1)], [n(1)]], [n(4), n(5)])
    >>> [F.to_complex(x) for x in r.value]
    [(1+0j), (1+0j)]
    """
    if len(b) != len(d):
        raise ValueError(f"woodbury: b has {len(b)} entries, D has {len(d)}")
    p = prepare(F, d, U, V)
    return Result(Status.OK, p.value.solve(F, b)) if p.ok else p
