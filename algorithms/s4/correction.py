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
``transfer_all`` does every root of a field run at once with the field's elementwise
kernels (``vec_mul``, ``vec_inverses``, ..., ``roots_of_unity``), falling back to
``value_at`` at the roots where a diagonal pivot is not certainly nonzero.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np
from typing import Any, Callable

from ...arith import Truth
from ..linalg import cdot, dot, lu, lu_solve
from ..result import Result, Status
from . import bilinear_map


def minus_one_index(M: int) -> int | None:
    """The k with z_k = -1 on the M-point grid (None for M = 1)."""
    return M // 2 if M >= 2 else None


beta = bilinear_map.beta


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


def g_certainly_invertible(F, poles: list, weights: Mapping, offsets: Mapping, r: int) -> bool:
    """Whether G = I - (step/2) A is certainly invertible, from the filter's set-up (its poles,
    weights and offsets, ``filter.setup``): every pole mu_j certainly nonzero and
    W(0) = I + (1/2) S_QP(0) certainly nonsingular.  By the matrix determinant lemma
    det G = det D det W(0) with D = I - (step/2) Lambda, and mu_j = 0 exactly when D_jj = 0
    (proofs/ball_mode.md, Lemma G).  False means "not decided here", never "singular"."""
    if any(F.is_zero(mu) is not Truth.FALSE for mu in poles):
        return False
    qp = {key: a for key, a in weights.items() if isinstance(key[0], int) and isinstance(key[1], int)}
    blocks = blocks_at_point(F, poles, qp, offsets, F.zero())
    W = matrix(F, blocks, beta(F, F.zero()), r)     # beta(0) = 1/2
    return bool(w_certainly_nonsingular(F, W, r))


def w_certainly_nonsingular(F, W: list[list], r: int) -> Any:
    """The one decision on W(0) (Lemma G of proofs/ball_mode.md): whether the r x r matrix W
    is certainly nonsingular.  Ranks one and two by the determinant (W_00, or
    W_00 W_11 - W_01 W_10) certainly nonzero; a higher rank by elimination.  Over an array
    field (``zero_mask``: heads as an axis) the answer is a boolean array, entry by entry,
    and a rank above two is not decided there (all False); otherwise a bool.

    >>> from s4cert.arith import ExactField
    >>> F = ExactField()
    >>> w_certainly_nonsingular(F, [[F.one(), F.one()], [F.one(), F.one()]], 2)
    False
    """
    masks = hasattr(F, "zero_mask")
    if r > 2:
        return (np.zeros(np.shape(W[0][0].rad), dtype=bool) if masks
                else is_singular(F, W) is Truth.FALSE)
    det = W[0][0] if r == 1 else F.sub(F.mul(W[0][0], W[1][1]), F.mul(W[0][1], W[1][0]))
    return F.zero_mask(det)[1] if masks else F.is_zero(det) is Truth.FALSE


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


# -- every root at once (vectors over the grid) ---------------------------------------

def betas(F, M: int) -> list:
    """beta_k = (1 + z_k)/2 for every root of the M-point grid."""
    return bilinear_map.betas(F, F.roots_of_unity(M))


def _invert_all(F, W: list[list], r: int) -> tuple[list[list], set]:
    """W^-1 at every root by Gauss-Jordan elimination with the diagonal pivots, the
    entries being vectors over the roots; returns (the inverse's entries, the roots
    where some pivot's zero test was not FALSE: there the entries mean nothing).
    Entries known to be 0 or 1 are held as None and ``_ONE`` and not multiplied."""
    A = [list(row) for row in W]
    X: list[list] = [[_ONE if i == c else None for c in range(r)] for i in range(r)]
    bad: set = set()
    for c in range(r):
        piv, zero, unknown = F.vec_inverses(A[c][c])
        if zero or unknown:
            bad.update(zero, unknown)
            one = F.one()
            piv = [one if p is None else p for p in piv]
        A[c] = [None] * (c + 1) + [F.vec_mul(piv, x) for x in A[c][c + 1:]]
        X[c] = [_times(F, piv, x) for x in X[c]]
        for i in range(r):
            if i == c:
                continue
            f = A[i][c]
            A[i] = A[i][:c + 1] + [F.vec_sub(A[i][j], F.vec_mul(f, A[c][j])) for j in range(c + 1, r)]
            X[i] = [_minus_product(F, X[i][j], f, X[c][j]) for j in range(r)]
    return X, bad


class _One:
    """The entry 1 of the identity, before any elimination touched it."""


_ONE = _One()


def _times(F, v: list, x) -> list | None:
    """v * x for a vector v and an entry x (None: zero, _ONE: one, else a vector)."""
    return None if x is None else v if x is _ONE else F.vec_mul(v, x)


def _minus_product(F, y, f: list, x):
    """y - f x for entries y, x (None, _ONE or vectors) and a vector f."""
    fx = _times(F, f, x)
    if fx is None:
        return y
    if y is None:
        return F.vec_scale(F.const(-1), fx)
    if y is _ONE:
        return F.vec_sub([F.one()] * len(fx), fx)
    return F.vec_sub(y, fx)


def _vector(F, x, n: int) -> list:
    return [F.zero()] * n if x is None else [F.one()] * n if x is _ONE else x


def transfer_all(F, blocks: Mapping, M: int, r: int, minus_one_value) -> Result:
    """H at every root of the grid, the roots handled together as vectors: beta, W,
    W^-1 (``_invert_all``), X = W^-1 v, H = x - beta u X, and ``H[M/2] = minus_one_value``.
    Where a diagonal pivot's zero test is not FALSE, the root is done alone by
    ``value_at`` (row pivoting), in increasing order, and its first non-ok status is
    returned with ``info["root"]`` (``resonant-correction``, or ``undecided`` with
    ``info["stage"] = "correction"``).  ``info["inverse"]``: W^-1 (rows of vectors over
    the roots; the entries at M/2 mean nothing)."""
    b = betas(F, M)
    m1 = minus_one_index(M)
    W = [[F.vec_mul(b, blocks[(i, c)]) for c in range(r)] for i in range(r)]
    for i in range(r):
        W[i][i] = F.vec_shift(F.one(), W[i][i])
    inv, bad = _invert_all(F, W, r)
    del W
    inv = [[list(_vector(F, x, M)) for x in row] for row in inv]  # own lists: roots alone are written in
    v = rhs(blocks, r)
    acc = None  # sum_i u_i X_i, X = W^-1 v
    for i in range(r):
        Xi = None
        for c in range(r):
            t = F.vec_mul(inv[i][c], v[c])
            Xi = t if Xi is None else F.vec_add(Xi, t)
        t = F.vec_mul(blocks[("C", i)], Xi)
        acc = t if acc is None else F.vec_add(acc, t)
    H = F.vec_sub(blocks[("C", "B")], F.vec_mul(b, acc)) if r else list(blocks[("C", "B")])
    bad.discard(m1)
    for k in sorted(bad):
        bk = at(blocks, k)
        h = value_at(F, bk, b[k], r)
        if not h.ok:
            h.info["root"] = k
            return h
        H[k] = h.value
        w = inverse(F, matrix(F, bk, b[k], r)).value
        for i in range(r):
            for c in range(r):
                inv[i][c][k] = w[i][c]
    if m1 is not None:
        H[m1] = minus_one_value
    return Result(Status.OK, H, {"inverse": inv})
