"""The normal-plus-low-rank split of a HiPPO generator (proofs/spec.md §S17–§S18;
proofs/hippo_nplr.md).

In the similarity's coordinates ``x = S x~`` (:func:`~.hippo.similarity`),
``G~ = S^-1 G S = H - U V*`` with ``H = c I + K``, K real skew-symmetric (so H is normal):

* LegS ``H = G + p p^T``, ``p_n = sqrt(n + 1/2)``, ``c = -1/2``; U = V = p;
* LegT ``H = G~ + (1/(2 theta)) (s s^T + (s.e)(s.e)^T)``, ``s_n = sqrt(2n+1)``,
  ``e_n = (-1)^n``, ``c = 0``; ``U = [s, s.e]/(2 theta)``, ``V = [s, s.e]``;
* LagT ``H = G + (1/2) 1 1^T``, ``c = -1/2``; ``U = 1/2``, ``V = 1``.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .hippo import check_kind, check_N, field_sqrt, generator, similarity


def _shift(kind: str) -> Fraction:
    """c in H = c I + K."""
    return Fraction(0) if kind == "legt" else Fraction(-1, 2)


def _skew(kind: str, n: int, k: int, theta: Fraction | None) -> tuple[Fraction, int]:
    """(kappa, w) with ``K_nk = kappa sqrt(w)`` (proofs/hippo_nplr.md)."""
    sgn = -1 if n > k else 1 if n < k else 0
    if kind == "lagt":
        return Fraction(sgn, 2), 1
    w = (2 * n + 1) * (2 * k + 1)
    if kind == "legs":
        return Fraction(sgn, 2), w
    return (Fraction(sgn) / theta if (n + k) % 2 else Fraction(0)), w


@dataclass
class NPLRSplit:
    """``G = H - U V*`` in the similarity's coordinates.

    ``H`` (N x N, normal: ``H = shift I + skew``), ``U``, ``V`` (N x rank), ``G`` = S^-1 G S
    and ``B`` = S^-1 B (the transformed generator and input), ``S`` the diagonal of the
    state change (``C~ = S* C``).  All entries are elements of the field used.
    """

    kind: str
    theta: Fraction | None
    H: list[list]
    U: list[list]
    V: list[list]
    G: list[list]
    B: list
    S: list
    shift: Fraction

    @property
    def N(self) -> int:
        return len(self.H)

    @property
    def rank(self) -> int:
        """The number of columns of U and V, a bound on rank(U V*)."""
        return len(self.U[0])


def _normal_part(F, kind: str, N: int, theta: Fraction | None, c: Fraction) -> list[list]:
    """H = c I + K, entry by entry from the closed form of K."""
    H = [[None] * N for _ in range(N)]
    for n in range(N):
        for k in range(N):
            if n == k:
                H[n][k] = F.from_number(c)
                continue
            kappa, w = _skew(kind, n, k, theta)
            H[n][k] = F.zero() if kappa == 0 else F.mul(F.from_number(kappa), field_sqrt(F, w))
    return H


def _low_rank(F, kind: str, N: int, theta: Fraction | None) -> tuple[list[list], list[list]]:
    """(U, V) of the split."""
    if kind == "legs":
        p = [field_sqrt(F, Fraction(2 * n + 1, 2)) for n in range(N)]
        U = V = [[x] for x in p]
        return U, V
    if kind == "lagt":
        return [[F.from_number(Fraction(1, 2))] for _ in range(N)], [[F.one()] for _ in range(N)]
    two_theta = F.from_number(2 * theta)
    s = [field_sqrt(F, 2 * n + 1) for n in range(N)]
    se = [x if n % 2 == 0 else F.neg(x) for n, x in enumerate(s)]
    V = [[a, b] for a, b in zip(s, se)]
    return [[F.div(a, two_theta), F.div(b, two_theta)] for a, b in V], V


def nplr(F, kind: str, N: int, theta: Any = None) -> NPLRSplit:
    """The split of the spec's HiPPO theorem, over F.

    Entries are exact in ExactField where they are rational (LagT; N = 1); an irrational
    square root there raises ValueError.

    >>> from s4cert.arith import ExactField
    >>> F = ExactField(4)
    >>> sp = nplr(F, "lagt", 3)
    >>> [[F.to_fractions(x)[0] for x in row] for row in sp.H][1]
    [Fraction(-1, 2), Fraction(-1, 2), Fraction(1, 2)]
    >>> sp.rank
    1
    """
    kind, th = check_kind(kind, theta)
    N = check_N(N)
    G, B = generator(F, kind, N, th)
    S = similarity(F, kind, N)
    if kind == "legt":
        G = [[F.div(F.mul(G[n][k], S[k]), S[n]) for k in range(N)] for n in range(N)]
        B = [F.div(b, s) for b, s in zip(B, S)]
    c = _shift(kind)
    H = _normal_part(F, kind, N, th, c)
    U, V = _low_rank(F, kind, N, th)
    return NPLRSplit(kind, th, H, U, V, G, B, S, c)
