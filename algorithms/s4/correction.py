"""The filter's rank-r correction and transfer value at a root (proofs/spec.md §S26–§S27,
§S31; ``proofs/bilinear_filter.md``).

At a root ``z != -1`` of the grid, with ``beta = (1+z)/2`` and the scaled blocks
``x = S_CB(z)``, ``u = S_CP(z)`` (a row), ``v = S_QB(z)`` (a column), ``T = S_QP(z)``:

* ``W(z) = I_r + beta T``;
* ``H(z) = x - beta u W(z)^-1 v``;

and ``H(-1) = (step/2) C~* B``.  The blocks are keyed like ``FilterSetup.weights``:
``("C", "B")``, ``("C", i)``, ``(i, "B")``, ``(i, k)``.

Everything here is generic over the field F (only ``add``, ``sub``, ``mul``, ``div``,
``one``, ``zero``, ``const`` and, for the eliminations, ``is_zero``), so the same code
serves one root of a field run, one exact root of the routing, and whole arrays of
roots in the float64 disk route (whose inverse is its own Gauss-Jordan kernel).
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Callable

from ...arith import Truth
from ..linalg import cdot, dot, lu, lu_solve
from ..result import Result, Status


def minus_one_index(M: int) -> int | None:
    """The k with z_k = -1 on the M-point grid (None for M = 1)."""
    return M // 2 if M >= 2 else None


def beta(F, z, two=None) -> Any:
    """beta = (1 + z)/2 (``two``: F.const(2), when the caller already holds it)."""
    return F.div(F.add(F.one(), z), two if two is not None else F.const(2))


def at(blocks: Mapping, k: int) -> dict:
    """The blocks at root k, from blocks held as sequences over the grid."""
    return {key: vals[k] for key, vals in blocks.items()}


def by_root(blocks: Mapping) -> Iterator[dict]:
    """The blocks at each root in turn (k = 0, 1, ...), from blocks held as sequences
    over the grid: ``at(blocks, k)`` for every k, without indexing each sequence."""
    keys = list(blocks)
    for values in zip(*blocks.values()):
        yield dict(zip(keys, values))


def matrix(F, blocks: Mapping, b, r: int) -> list[list]:
    """W = I_r + beta T with T[i][c] = blocks[(i, c)]."""
    return [[F.add(F.one() if i == c else F.zero(), F.mul(b, blocks[(i, c)])) for c in range(r)] for i in range(r)]


def transfer(F, blocks: Mapping, b, X: list, r: int) -> Any:
    """H = x - beta u X, where X = W^-1 v."""
    return F.sub(blocks[("C", "B")], F.mul(b, dot(F, [blocks[("C", i)] for i in range(r)], X)))


def rhs(blocks: Mapping, r: int) -> list:
    """v = S_QB, the column W X = v is solved for."""
    return [blocks[(i, "B")] for i in range(r)]


def value_at_minus_one(F, half_delta, c_tilde: list, B: list) -> Any:
    """H(-1) = (step/2) C~* B."""
    return F.mul(half_delta, cdot(F, c_tilde, B))


def value_at(F, blocks: Mapping, b, r: int) -> Result:
    """H at a root z != -1 from the blocks there, W solved by elimination (``linalg.lu``).
    Statuses: ``resonant-correction`` when W is singular; ``undecided`` when a pivot is
    undecided (``info["reason"]``, ``info["stage"] = "correction"``)."""
    f = lu(F, matrix(F, blocks, b, r))
    if not f.ok:
        if f.status == Status.SINGULAR:
            return Result(Status.RESONANT_CORRECTION)
        f.info["stage"] = "correction"
        return f
    return Result(Status.OK, transfer(F, blocks, b, lu_solve(F, f.value, rhs(blocks, r)), r))


def inverse(F, W: list[list]) -> Result:
    """W^-1 (rows), column by column by elimination.  Statuses ``singular`` and
    ``undecided`` as in ``linalg.lu``."""
    r = len(W)
    f = lu(F, W)
    if not f.ok:
        return f
    cols = [lu_solve(F, f.value, [F.one() if i == c else F.zero() for i in range(r)]) for c in range(r)]
    return Result(Status.OK, [[cols[c][i] for c in range(r)] for i in range(r)])


def is_singular(F, W: list[list]) -> Truth:
    """Whether W is singular: TRUE / FALSE, UNKNOWN when elimination cannot decide a pivot
    (never UNKNOWN in an exact field)."""
    status = lu(F, W).status
    return Truth.TRUE if status == Status.SINGULAR else Truth.FALSE if status == Status.OK else Truth.UNKNOWN


def blocks_at_point(F, poles: list, weights: Mapping, offsets: Mapping, z) -> dict:
    """The scaled blocks at one point z, directly: S_uv(z) = offset_uv + sum_j a_j/(z - mu_j)
    (poles and weights as in ``FilterSetup``).  A pole equal to z raises the field's
    division error."""
    inv = [F.div(F.one(), F.sub(z, mu)) for mu in poles]
    out = {}
    for key, a in weights.items():
        s = dot(F, a, inv)
        out[key] = F.add(s, offsets[key]) if key in offsets else s
    return out


def each_root(F, blocks: Mapping, M: int, r: int,
              fn: Callable[[int, Mapping, Any], Any]) -> list:
    """fn(k, blocks at z_k, beta_k) for every root k != -1, in order (blocks held as
    sequences over the grid)."""
    m1 = minus_one_index(M)
    two = F.const(2)
    return [fn(k, bk, beta(F, F.root_of_unity(M, k), two)) for k, bk in enumerate(by_root(blocks)) if k != m1]
