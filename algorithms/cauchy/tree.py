"""Cauchy sums on the radix-two root grid by the balanced product tree (proofs/spec.md
§S22–§S24; proofs/cauchy_product_tree.md).

``y_k = sum_j a_j / (w^k - mu_j)``, ``0 <= k < M``, ``w`` a primitive M-th root of unity
(by default ``exp(-2*pi*i/M)``).
"""
from __future__ import annotations

from ...arith import check_power_of_two
from ..dft import dft, polymul
from ..result import OK, Result, zero_partition
from .grid import check_sums, grid_index, grid_status, permutation


def _tree_many(F, poles: list, sets: list, lo: int, hi: int) -> tuple[list, list]:
    """(D_I, [P_I for each weight set]) for [lo, hi): ``_tree`` with D_I formed once."""
    if hi - lo == 1:
        return [F.neg(poles[lo]), F.one()], [[a[lo]] for a in sets]
    mid = lo + (hi - lo + 1) // 2
    D1, P1 = _tree_many(F, poles, sets, lo, mid)
    D2, P2 = _tree_many(F, poles, sets, mid, hi)
    P = []
    for p1, p2 in zip(P1, P2):
        a, b = polymul(F, p1, D2), polymul(F, D1, p2)
        P.append([F.add(x, y) for x, y in zip(a, b)])
    del P1, P2
    return polymul(F, D1, D2), P


def _tree(F, poles: list, weights: list, lo: int, hi: int) -> tuple[list, list]:
    """(D_I, P_I) for the index interval [lo, hi): D_I = prod (z - mu_j),
    P_I / D_I = sum a_j / (z - mu_j).  Children are dropped once combined."""
    if hi - lo == 1:
        return [F.neg(poles[lo]), F.one()], [weights[lo]]
    mid = lo + (hi - lo + 1) // 2  # sizes differ by at most one
    D1, P1 = _tree(F, poles, weights, lo, mid)
    D2, P2 = _tree(F, poles, weights, mid, hi)
    a = polymul(F, P1, D2)
    b = polymul(F, D1, P2)
    del P1, P2
    P = [F.add(x, y) for x, y in zip(a, b)]
    del a, b
    return polymul(F, D1, D2), P


def _fold(F, coeffs: list, M: int) -> list:
    """Coefficients modulo z^M - 1."""
    out = list(coeffs[:M]) + [F.zero()] * max(0, M - len(coeffs))
    for r in range(M, len(coeffs)):
        out[r % M] = F.add(out[r % M], coeffs[r])
    return out


def cauchy_on_roots(F, poles: list, weights: list, M: int, omega=None) -> Result:
    """The balanced product tree: D_I and P_I, folded mod z^M - 1, two DFTs,
    reindexed by s when ``omega = w^s`` is given, then y_k = P(w^k) / D(w^k).
    ``value``: the M sums.  Statuses: ``"collision"`` with ``info["roots"]`` (the k
    with D(w^k) certainly zero), ``"undecided"`` when D(w^k) may be zero or omega's
    index is undecided; ``info`` is empty on ``ok``.

    >>> from s4cert.arith import ExactField
    >>> F = ExactField(4)
    >>> r = cauchy_on_roots(F, [F.from_number(2)], [F.one()], 2)
    >>> [F.to_complex(y) for y in r.value]   # 1/(1-2), 1/(-1-2)
    [(-1+0j), (-0.3333333333333333+0j)]
    """
    check_sums(poles, weights, M)
    n = len(poles)
    if n == 0:
        return Result(OK, [F.zero()] * M)
    found = grid_index(F, omega, M)
    if not found.ok:
        return found
    s = found.value
    D, P = _tree(F, poles, weights, 0, n)
    Dv = dft(F, _fold(F, D, M))
    del D
    Pv = dft(F, _fold(F, P, M))
    del P
    if s != 1:
        perm = permutation(s, M)
        Dv = [Dv[i] for i in perm]
        Pv = [Pv[i] for i in perm]
    zero, _, unknown = zero_partition(F, Dv)
    return grid_status(zero, unknown) or Result(OK, [F.div(p, d) for p, d in zip(Pv, Dv)])


def cauchy_on_roots_many(F, poles: list, weight_sets: list, M: int, omega=None) -> Result:
    """:func:`cauchy_on_roots` for several weight vectors sharing the poles: one tree
    (D_I formed once, a P_I per set), one transform of D, its values inverted once
    (``F.vec_inverses``, whose zero tests decide the statuses as in
    :func:`cauchy_on_roots`), then ``y_k = P(w^k) (1/D(w^k))`` for each set.  ``value[i]``
    is the M sums of ``weight_sets[i]``; statuses and ``info`` as
    :func:`cauchy_on_roots`.

    >>> from s4cert.arith import ExactField
    >>> F = ExactField(4)
    >>> r = cauchy_on_roots_many(F, [F.from_number(2)], [[F.one()], [F.from_number(3)]], 2)
    >>> [[F.to_complex(y) for y in ys] for ys in r.value]
    [[(-1+0j), (-0.3333333333333333+0j)], [(-3+0j), (-1+0j)]]
    """
    check_power_of_two(M)
    for a in weight_sets:
        check_sums(poles, a, M)
    n = len(poles)
    if n == 0:
        return Result(OK, [[F.zero()] * M for _ in weight_sets])
    found = grid_index(F, omega, M)
    if not found.ok:
        return found
    s = found.value
    D, P = _tree_many(F, poles, list(weight_sets), 0, n)
    Dv = dft(F, _fold(F, D, M))
    del D
    perm = permutation(s, M) if s != 1 else None
    if perm is not None:
        Dv = [Dv[i] for i in perm]
    inv, zero, unknown = F.vec_inverses(Dv)
    del Dv
    stop = grid_status(zero, bool(unknown))
    if stop is not None:
        return stop
    out = []
    for p in P:
        pv = dft(F, _fold(F, p, M))
        if perm is not None:
            pv = [pv[i] for i in perm]
        out.append(F.vec_mul(pv, inv))
    return Result(OK, out)
