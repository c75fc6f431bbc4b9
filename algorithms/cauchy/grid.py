"""The radix-two root grid shared by every Cauchy-sum route.

Nodes ``z_k = w^k``, ``0 <= k < M``, with ``w = exp(-2*pi*i/M)`` by default or a given
primitive M-th root ``omega = w^s`` (s odd); values computed on the default grid are
moved to the grid of omega by ``k -> s k mod M``.
"""
from __future__ import annotations

from ...arith import Truth, check_power_of_two

from ..result import COLLISION, OK, Result, undecided


def check_sums(poles: list, weights: list, M: int) -> None:
    """M a power of two and one weight per pole (ValueError otherwise)."""
    check_power_of_two(M)
    if len(poles) != len(weights):
        raise ValueError(f"{len(poles)} poles but {len(weights)} weights")


def root_index(F, omega, M: int) -> Result:
    """The odd s with omega = exp(-2*pi*i/M)^s, found by comparing omega with the
    M-th roots.  In ball fields s is taken when every other candidate is certainly
    different (omega is given to be a primitive M-th root).  ``info``: none; an
    ``undecided`` result says in ``reason`` how many roots matched."""
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


def grid_index(F, omega, M: int) -> Result:
    """:func:`root_index` of omega, or 1 for the default grid (omega None)."""
    return Result(OK, 1) if omega is None else root_index(F, omega, M)


def nodes(F, M: int, omega=None) -> list:
    """The M roots w^k: supplied directly, or powers of a given omega."""
    if omega is None:
        return [F.root_of_unity(M, k) for k in range(M)]
    out = [F.one()]
    for _ in range(M - 1):
        out.append(F.mul(out[-1], omega))
    return out


def permutation(s: int, M: int) -> list[int]:
    """``[s k mod M for k < M]``: entry k of omega's grid is entry s k of the default one."""
    return [(s * k) % M for k in range(M)]


def grid_status(zero: list, unknown: bool, s: int = 1, M: int = 1) -> Result | None:
    """The status of a run whose zero tests found the default-grid indices ``zero``
    certainly on a pole and, if ``unknown``, some test undecided: ``collision`` with
    ``info["roots"]`` (indices on omega's grid, ``omega = w^s``), ``undecided``, or None
    when every test was certainly nonzero."""
    if zero:
        roots = zero if s == 1 else [(k * pow(s, -1, M)) % M for k in zero]
        return Result(COLLISION, info={"roots": sorted(roots)})
    if unknown:
        return undecided("a pole may lie on the root grid")
    return None
