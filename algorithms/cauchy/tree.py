"""Cauchy sums on the radix-two root grid by the balanced product tree (proofs/spec.md
§S22–§S24; proofs/cauchy_product_tree.md).

``y_k = sum_j a_j / (w^k - mu_j)``, ``0 <= k < M``, ``w`` a primitive M-th root of unity
(by default ``exp(-2*pi*i/M)``).
"""
from __future__ import annotations

from ..dft import dft, polymul
from ..result import OK, Result, zero_partition
from .grid import check_sums, grid_index, grid_status, permutation


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
