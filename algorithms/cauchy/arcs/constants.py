"""The constants of the arc expansions in the field: centres, the shift coefficients
and shift matrices, the leaf variables and their powers (proofs/fast_cauchy.md §1, §4)."""
from __future__ import annotations

import math
from fractions import Fraction

from .geometry import ArcTree


def powers(F, x, k: int) -> list:
    """``[1, x, x^2, ..., x^(k-1)]`` (k - 2 multiplications)."""
    out = [F.one(), x][:k]
    for _ in range(2, k):
        out.append(F.mul(out[-1], x))
    return out


class Constants:
    """Centres, the shift coefficients alpha, beta and the leaf variables u_t in F.

    They are formed from F's roots of unity and rational literals, so the shifts are
    exact identities (balls enclose them).  The two quantities of the form
    ``(root - 1) * scale`` are formed as such where F is exact or encloses; in a
    rounding field ``root - 1`` would lose relative accuracy to cancellation when the
    root is close to 1, so there it is formed as ``h (h - conj(h))`` with ``h^2 = root``
    (``h - conj(h) = 2i Im h`` is exact in floats: the float64 constants
    ``2i sin(phi/2) exp(i phi/2)`` of the proof's model (M2))."""

    def __init__(self, F, tree: ArcTree):
        self.F, self.tree = F, tree
        self.cancels = not (F.exact or F.encloses)
        self._centres: dict = {}
        self._m: dict = {}
        self._u: list | None = None

    def centre(self, l: int, b: int):
        key = (l, b)
        c = self._centres.get(key)
        if c is None:
            c = self._centres[key] = self.F.root_of_unity(2 * self.tree.M, self.tree.centre_index(l, b))
        return c

    def m_arc(self, l: int, b: int):
        """``-c * rho_l``: w = m_arc / (c - mu)."""
        key = (l, b)
        m = self._m.get(key)
        if m is None:
            m = self._m[key] = self.F.mul(self.centre(l, b), self.F.const(-self.tree.scale(l)))
        return m

    def _root_minus_one(self, K: int, j: int, scale: Fraction):
        """``(root_of_unity(K, j) - 1) * scale``."""
        F = self.F
        if self.cancels:  # h^2 = root; a root of small angle, conjugated for j < 0
            h = F.root_of_unity(2 * K, abs(j))
            h = F.conj(h) if j < 0 else h
            d = F.mul(F.sub(h, F.conj(h)), h)
        else:
            d = F.sub(F.root_of_unity(K, j), F.one())
        return F.mul(d, F.const(scale))

    def alpha_beta(self, l: int, sigma: int) -> tuple:
        """Parent level l, child sigma: u_parent = beta + alpha * u_child."""
        F, tree = self.F, self.tree
        K, j = 1 << (l + 2), (-1 if sigma == 0 else 1)  # c_child / c_parent = root(K, j)
        e = F.root_of_unity(K, j)
        alpha = F.mul(e, F.const(tree.scale(l + 1) / tree.scale(l)))
        beta = self._root_minus_one(K, j, 1 / tree.scale(l))
        return alpha, beta

    def shift_block(self, l: int, p: int, lo: int, hi: int, T: tuple | None = None) -> list[list]:
        """Rows ``lo..p-1`` and columns ``lo..hi-1`` of ``[T_0 | T_1]`` side by side
        (``(p - lo) x 2(hi - lo)``), the shifts from level l to both children, zeros above
        the diagonals; ``T`` the pair of triangles if already formed."""
        zero = self.F.zero()
        T0, T1 = T or self.shifts(l, p)
        return [[zero if v is None else v for v in T0[h][lo:hi] + T1[h][lo:hi]] for h in range(lo, p)]

    def shifts(self, l: int, p: int) -> tuple:
        """``(T_0, T_1)``: the shift triangles from level l to its children (None above
        the diagonals), formed once per level and not kept."""
        return tuple(shift_matrix(self.F, *self.alpha_beta(l, sigma), p) for sigma in (0, 1))

    def leaf_variables(self) -> list:
        """u_t = (z_{b s + t}/c - 1)/rho_L for 0 <= t < s (the same for every leaf b)."""
        if self._u is None:
            tree = self.tree
            s, r = tree.leaf, 1 / tree.scale(tree.L)
            self._u = [self._root_minus_one(2 * tree.M, 2 * t - s + 1, r) for t in range(s)]
        return self._u

    def leaf_powers(self, p: int) -> list[list]:
        """``V[h][t] = u_t^h`` (p x s): the evaluation at the nodes of a leaf."""
        cols = [powers(self.F, u, p) for u in self.leaf_variables()]
        return [list(r) for r in zip(*cols)]


def shift_matrix(F, alpha, beta, p: int) -> list[list]:
    """``T[h][g] = C(h, g) alpha^g beta^(h-g)`` for ``g <= h < p`` (None above the
    diagonal): ``sum_h L_h (beta + alpha u)^h = sum_g (sum_h L_h T[h][g]) u^g``."""
    apow, bpow = [F.one(), alpha], [F.one(), beta]
    for _ in range(2, p):
        apow.append(F.mul(apow[-1], alpha))
        bpow.append(F.mul(bpow[-1], beta))
    T = [[None] * p for _ in range(p)]
    for h in range(p):
        for g in range(h + 1):
            if g == 0:
                v = bpow[h]
            elif g == h:
                v = apow[g]
            else:
                v = F.mul(apow[g], bpow[h - g])
            c = math.comb(h, g)
            T[h][g] = v if c == 1 else F.mul(F.const(c), v)
    return T
