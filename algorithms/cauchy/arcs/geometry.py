"""The arcs of the circle and the decisions that route each pole (proofs/fast_cauchy.md §1, §2, §7).

Arc ``(l, b)`` holds the nodes ``b*s_l <= k < (b+1)*s_l``, ``s_l = M / 2^l``; its centre
is ``c = exp(-2*pi*i*(b*s_l + (s_l - 1)/2)/M)`` (a 2M-th root of unity) and its radius
``R_l = 2 sin(pi*(s_l - 1)/(2M)) = max |z_k - c|``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from flint import acb, arb, ctx, fmpq

from ....arith.ball import float_lower, float_upper

#: the coarsest level of arcs (4 arcs)
ELL_MIN = 2
#: precision (bits) of the enclosures behind the geometric decisions in exact fields
GEOMETRY_PREC = 128
#: mechanism codes recorded by ``trace_pairs``
INNER, OUTER, NEAR, ARC = 1, 2, 3, 10  # an arc at level l is recorded as ARC + l


# -- parameters ---------------------------------------------------------------------------

def expansion_orders(eps: float, theta: float = 0.4, rho0: float = 0.5) -> tuple[int, int]:
    """``(p, p0)``: the least orders with ``theta^p <= eps`` and ``rho0^p0 <= eps``, i.e.
    ``p = ceil(ln eps / ln theta)``, ``p0 = ceil(ln eps / ln rho0)``, decided exactly on
    the binary values of the arguments.

    >>> expansion_orders(1e-8)
    (21, 27)
    """
    check_unit(eps, "eps")
    check_unit(theta, "theta")
    check_unit(rho0, "rho0")
    return least_order(eps, theta), least_order(eps, rho0)


def check_unit(x: Any, what: str) -> float:
    """x as a float, or ValueError unless it is a number strictly between 0 and 1."""
    if isinstance(x, bool) or not isinstance(x, (int, float, Fraction)) or not 0 < x < 1:
        raise ValueError(f"{what} must be a number strictly between 0 and 1, got {x!r}")
    return float(x)


def least_order(eps: float, q: float) -> int:
    """The least k >= 1 with q^k <= eps, decided on exact rationals."""
    e, r = Fraction(eps), Fraction(q)
    k = max(1, math.ceil(math.log(eps) / math.log(q)))
    while r ** k > e:
        k += 1
    while k > 1 and r ** (k - 1) <= e:
        k -= 1
    return k


@dataclass(frozen=True)
class ArcTree:
    """The arcs: levels ``l0 <= l <= L`` with ``s_L = leaf`` nodes per leaf arc."""

    M: int
    leaf: int

    @property
    def L(self) -> int:
        return (self.M // self.leaf).bit_length() - 1

    @property
    def l0(self) -> int:
        return min(ELL_MIN, self.L)

    def size(self, l: int) -> int:
        return self.M >> l

    def centre_index(self, l: int, b) -> Any:
        """``c = exp(-2*pi*i*idx/(2M))``: works on ints and numpy arrays."""
        s = self.M >> l
        return 2 * b * s + s - 1

    def phi(self, l: int) -> float:
        """The largest angle between a node of an arc and its centre."""
        return math.pi * (self.size(l) - 1) / self.M

    def radius(self, l: int) -> float:
        return 2 * math.sin(self.phi(l) / 2)

    def radius_upper(self, l: int) -> float:
        """A certified upper bound of ``R_l = 2 sin(pi (s_l - 1)/(2M))``."""
        s = self.size(l)
        if s == 1:
            return 0.0
        with ctx.workprec(64):
            return float_upper(2 * arb.sin_pi(arb(fmpq(s - 1, 2 * self.M))))

    def scale(self, l: int) -> Fraction:
        """``rho_l``: a short dyadic number >= R_l that scales the local variable
        ``u = (z/c - 1)/rho_l`` (any nonzero scale gives the same sums)."""
        R = self.radius(l)
        if R == 0:
            return Fraction(1)
        e = 11 - math.floor(math.log2(R))
        return Fraction(math.ceil(R * 2.0 ** e), 2 ** e)


def make_tree(M: int, leaf: int | None, p: int) -> ArcTree:
    """The arcs for ``leaf`` nodes per leaf (default the least power of two >= p, at most M)."""
    if leaf is None:
        leaf = min(M, 1 << max(0, (p - 1).bit_length()))
    elif isinstance(leaf, bool) or not isinstance(leaf, int) or leaf < 1 or leaf > M or leaf & (leaf - 1):
        raise ValueError(f"leaf must be a power of two between 1 and M = {M}, got {leaf!r}")
    return ArcTree(M, leaf)


# -- geometry: zones and admissibility from enclosures -----------------------------------

class Geometry:
    """Float estimates of the poles (every field) and, where the field's elements
    enclose their values (``F.encloses``), ball enclosures that certify each decision.
    A decision only selects which mechanism handles a pair; an expansion is taken only
    when its ratio bound is certain (in the certified fields), so a refused or
    undecided test is always safe."""

    def __init__(self, F, poles: list):
        self.F = F
        self.certified = bool(F.encloses)
        self.enc = [F.enclose(x, GEOMETRY_PREC) for x in poles] if self.certified else None
        self.mu = np.array([F.to_complex(x) for x in poles], dtype=np.complex128).reshape(-1)

    def weight_upper(self, a) -> float:
        """A bound of |a|: certain in the certified fields, the float modulus elsewhere."""
        if self.certified:
            return self.F.abs_upper(a)
        return abs(self.F.to_complex(a))

    def zone(self, j: int, rho0: float) -> tuple[int, float]:
        """(INNER, upper |mu|), (OUTER, lower |mu|) or (0, nan) for the circle zone."""
        if not self.certified:
            a = abs(self.mu[j])
            if a <= rho0:
                return INNER, a
            if a * rho0 >= 1:
                return OUTER, a
            return 0, math.nan
        with ctx.workprec(GEOMETRY_PREC):
            e = self.enc[j]
            if not e.is_finite():
                return 0, math.nan
            up = e.abs_upper()
            if up <= arb(rho0):
                return INNER, float_upper(up)
            lo = e.abs_lower()
            if lo * arb(rho0) >= 1:
                return OUTER, float_lower(lo)
        return 0, math.nan

    def certify(self, tree: ArcTree, l: int, js: np.ndarray, bs: np.ndarray,
                theta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For candidate pairs (j, b) at level l: accepted mask, certified lower bound
        of |mu_j - c_b| and certified upper bound of R_l / |mu_j - c_b|."""
        ok = np.zeros(js.size, dtype=bool)
        lo_out = np.zeros(js.size)
        tb_out = np.zeros(js.size)
        R = arb(tree.radius_upper(l))
        idx = tree.centre_index(l, bs)
        with ctx.workprec(GEOMETRY_PREC):
            cache: dict = {}
            for t, (j, ci) in enumerate(zip(js.tolist(), idx.tolist())):
                c = cache.get(ci)
                if c is None:
                    c = cache[ci] = acb.exp_pi_i(acb(fmpq(-ci, tree.M)))
                lo = (c - self.enc[j]).abs_lower()
                if not lo > 0:
                    continue
                tb = float_upper(R / lo)
                if tb <= theta:
                    ok[t], lo_out[t], tb_out[t] = True, float_lower(lo), tb
        return ok, lo_out, tb_out
