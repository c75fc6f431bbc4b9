"""Cauchy sums on the radix-two root grid (spec: "Exact Cauchy matrix-vector product").

``y_k = sum_j a_j / (w^k - mu_j)``, ``0 <= k < M``, ``w`` a primitive M-th root of unity
(by default ``exp(-2*pi*i/M)``).
"""
from __future__ import annotations

from ...arith import Truth, check_power_of_two

from ..dft import dft, polymul
from ..result import COLLISION, OK, Result, undecided, zero_partition


def _check(poles: list, weights: list, M: int) -> None:
    check_power_of_two(M)
    if len(poles) != len(weights):
        raise ValueError(f"{len(poles)} poles but {len(weights)} weights")


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


def root_index(F, omega, M: int) -> Result:
    """The odd s with omega = exp(-2*pi*i/M)^s, found by comparing omega with the
    M-th roots.  In ball fields s is taken when every other candidate is certainly
    different (omega is given to be a primitive M-th root)."""
    if M == 1:
        return Result(OK, 1)
    maybe = []
    for s in range(1, M, 2):
        t = F.is_zero(F.sub(omega, F.root_of_unity(M, s)))
        if t is Truth.TRUE:
            return Result(OK, s)
        if t is Truth.UNKNOWN:
            maybe.append(s)
    if len(maybe) == 1:
        return Result(OK, maybe[0])
    if not maybe:
        raise ValueError(f"omega is not a primitive {M}-th root of unity")
    return undecided(f"omega matches {len(maybe)} roots at this precision")


def cauchy_on_roots(F, poles: list, weights: list, M: int, omega=None) -> Result:
    """The balanced product tree: D_I and P_I, folded mod z^M - 1, two DFTs,
    reindexed by s when ``omega`` is given, then y_k = P(w^k) / D(w^k).

    >>> from s4cert.arith import ExactField
    >>> F = ExactField(4)
    >>> r = cauchy_on_roots(F, [F.from_number(2)], [F.one()], 2)
    >>> [F.to_complex(y) for y in r.value]   # 1/(1-2), 1/(-1-2)
    [(-1+0j), (-0.3333333333333333+0j)]
    """
    _check(poles, weights, M)
    n = len(poles)
    if n == 0:
        return Result(OK, [F.zero()] * M)
    s = 1
    if omega is not None:
        found = root_index(F, omega, M)
        if not found.ok:
            return found
        s = found.value
    D, P = _tree(F, poles, weights, 0, n)
    Dv = dft(F, _fold(F, D, M))
    del D
    Pv = dft(F, _fold(F, P, M))
    del P
    if s != 1:
        Dv = [Dv[(s * k) % M] for k in range(M)]
        Pv = [Pv[(s * k) % M] for k in range(M)]
    zero, _, unknown = zero_partition(F, Dv)
    if zero:
        return Result(COLLISION, info={"roots": zero})
    if unknown:
        return undecided("a pole may lie on the root grid")
    return Result(OK, [F.div(p, d) for p, d in zip(Pv, Dv)])


def grid(F, M: int, omega=None) -> list:
    """The M roots w^k: supplied directly, or powers of a given omega."""
    if omega is None:
        return [F.root_of_unity(M, k) for k in range(M)]
    out = [F.one()]
    for _ in range(M - 1):
        out.append(F.mul(out[-1], omega))
    return out


def cauchy_direct(F, poles: list, weights: list, M: int, omega=None) -> Result:
    """The O(nM) reference: every term summed directly."""
    _check(poles, weights, M)
    zero, unknown, out = [], False, []
    for k, z in enumerate(grid(F, M, omega)):
        row = [F.sub(z, mu) for mu in poles]
        z_, _, u = zero_partition(F, row)
        if z_:
            zero.append(k)
        unknown = unknown or u
        if zero or unknown:
            continue
        acc = F.zero()
        for a, d in zip(weights, row):
            acc = F.add(acc, F.div(a, d))
        out.append(acc)
    if zero:
        return Result(COLLISION, info={"roots": zero})
    if unknown:
        return undecided("a pole may lie on the root grid")
    return Result(OK, out)
from .arcs import cauchy_fast, cauchy_fast_many  # noqa: E402,F401  (re-export)
