"""epsilon-accurate Cauchy sums on the root grid by hierarchical arcs.

``y_k = sum_j a_j / (z_k - mu_j)``, ``z_k = w^k``, ``0 <= k < M``, ``w = exp(-2*pi*i/M)``
(or a given primitive M-th root), to relative accuracy ``eps``:
``|y^_k - y_k| <= eps * S_abs(k) + rounding``, ``S_abs(k) = sum_j |a_j| / |z_k - mu_j|``.

Poles with ``|mu| <= rho0`` (inner root zone) and ``|mu| >= 1/rho0`` (outer root zone) are
summed by truncated power series and one DFT; the others descend a tree of arcs of the
circle.  Arc ``(l, b)`` holds the nodes ``b*s_l <= k < (b+1)*s_l``, ``s_l = M / 2^l``; its
centre is ``c = exp(-2*pi*i*(b*s_l + (s_l - 1)/2)/M)`` (a 2M-th root of unity) and its
radius ``R_l = 2 sin(pi*(s_l - 1)/(2M)) = max |z_k - c|``.  A pole is expanded about the
first arc with ``R_l / |mu - c| <= theta`` (pole-to-local, P2L); expansions move to the
children by exact re-centring (local-to-local, L2L), are evaluated at the leaves (L2P),
and a pole admissible for no arc down to a leaf is summed there directly (near field).
Every (pole, node) pair is handled by exactly one mechanism (proofs/fast_cauchy.md).

The truncation remainder of each expansion is known exactly, and its bound ``E_k`` is
computed from certified enclosures: in :class:`BallField` it is added to the radii, so
the returned balls contain the exact sums; other fields return the truncated sums and
``E_k`` in ``info["bound"]`` (certified for :class:`ExactField`, uncertified for floats).
"""
from __future__ import annotations

import cmath
import math
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import groupby
from typing import Any

import numpy as np
from flint import acb, acb_mat, arb, ctx, fmpq

from ...arith import BallField, ExactField, Float64Field, Truth, check_power_of_two
from ...arith.ball import float_lower, float_upper

from ..dft import dft
from ..result import COLLISION, OK, Result, undecided

#: the coarsest level of arcs (4 arcs)
ELL_MIN = 2
#: precision (bits) of the enclosures behind the geometric decisions
GEOMETRY_PREC = 128
#: mechanism codes recorded by ``trace_pairs``
INNER, OUTER, NEAR, ARC = 1, 2, 3, 10  # an arc at level l is recorded as ARC + l
_U = 2.0 ** -53


# -- parameters ---------------------------------------------------------------------------

def expansion_orders(eps: float, theta: float = 0.4, rho0: float = 0.5) -> tuple[int, int]:
    """``(p, p0)``: the least orders with ``theta^p <= eps`` and ``rho0^p0 <= eps``, i.e.
    ``p = ceil(ln eps / ln theta)``, ``p0 = ceil(ln eps / ln rho0)``, decided exactly on
    the binary values of the arguments.

    >>> expansion_orders(1e-8)
    (21, 27)
    """
    _check_unit(eps, "eps")
    _check_unit(theta, "theta")
    _check_unit(rho0, "rho0")
    return _least_order(eps, theta), _least_order(eps, rho0)


def _check_unit(x: Any, what: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float, Fraction)) or not 0 < x < 1:
        raise ValueError(f"{what} must be a number strictly between 0 and 1, got {x!r}")
    return float(x)


def _least_order(eps: float, q: float) -> int:
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


def _make_tree(M: int, leaf: int | None, p: int) -> ArcTree:
    if leaf is None:
        leaf = min(M, 1 << max(0, (p - 1).bit_length()))
    elif isinstance(leaf, bool) or not isinstance(leaf, int) or leaf < 1 or leaf > M or leaf & (leaf - 1):
        raise ValueError(f"leaf must be a power of two between 1 and M = {M}, got {leaf!r}")
    return ArcTree(M, leaf)


# -- directed rounding on nonnegative float arrays ---------------------------------------

def _up(x):
    return np.nextafter(x, np.inf)


def _dn(x):
    return np.nextafter(x, -np.inf)


def _add_up(a, b):
    """a + b rounded up, for a, b >= 0 (a sum of nonnegative floats is 0 only when exact)."""
    s = a + b
    return np.where(s == 0, 0.0, _up(s))


def _mul_up(a, b):
    """a * b rounded up, for a, b >= 0; exactly 0 when a factor is 0."""
    return np.where((a == 0) | (b == 0), 0.0, _up(a * b))


@np.errstate(over="ignore")  # an overflow to inf is an upper bound still
def _pow_up(x: np.ndarray, k: int) -> np.ndarray:
    out, base, k0 = np.ones_like(x), x.copy(), k
    while k:
        if k & 1:
            out = _up(out * base)
        base = _up(base * base)
        k >>= 1
    return np.where(x == 0, 0.0, out) if k0 else out


@np.errstate(over="ignore")  # inf rounded down is the largest float: a lower bound still
def _pow_dn(x: np.ndarray, k: int) -> np.ndarray:
    out, base = np.ones_like(x), x.copy()
    while k:
        if k & 1:
            out = _dn(out * base)
        base = _dn(base * base)
        k >>= 1
    return out


def _sum_up(values: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
    """Upper bounds of the group sums of nonnegative values.  ``bincount`` adds the
    k terms of a group one by one in round-to-nearest; the exact sum is then at most
    ``computed * (1 + 4 k u)`` while ``k u <= 1/4``."""
    total = np.bincount(groups, weights=values, minlength=n_groups)
    k = np.bincount(groups, minlength=n_groups).astype(float)
    factor = _up(1 + _up(4 * k * _U))
    return np.where(total == 0, 0.0, np.where(k * _U <= 0.25, _up(total * factor), np.inf))


def _total_up(values: np.ndarray) -> float:
    return float(_sum_up(values, np.zeros(values.size, dtype=np.int64), 1)[0])


# -- geometry: zones and admissibility from enclosures -----------------------------------

def _base_field(F):
    while hasattr(F, "base"):
        F = F.base
    return F


class _Geometry:
    """Float estimates of the poles (every field) and, in BallField and ExactField,
    enclosures that certify each decision.  A decision only selects which mechanism
    handles a pair; an expansion is taken only when its ratio bound is certain (in the
    certified fields), so a refused or undecided test is always safe."""

    def __init__(self, F, poles: list):
        self.F = F
        if isinstance(F, BallField):
            self.kind = "ball"
            self.enc = list(poles)
        elif isinstance(F, ExactField):
            self.kind = "exact"
            self.enc = [F.to_acb(x, GEOMETRY_PREC) for x in poles]
        else:
            self.kind = "float"
            self.enc = None
        self.certified = self.enc is not None
        self.mu = np.array([F.to_complex(x) for x in poles], dtype=np.complex128).reshape(-1)

    def weight_upper(self, a) -> float:
        if self.kind == "ball":
            return float_upper(a.abs_upper()) if a.is_finite() else math.inf
        if self.kind == "exact":
            return float_upper(self.F.to_acb(a, 64).abs_upper())
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


@dataclass
class Plan:
    """Which mechanism handles each (pole, node) pair.

    ``inner``/``outer``/``circle``: pole indices by zone; ``mag[j]``: upper |mu_j| for
    inner poles, lower |mu_j| for outer ones; ``levels[l] = (j, b, lo, tb)``: the pairs
    expanded about arc (l, b), with a lower bound ``lo`` of |mu_j - c| and an upper bound
    ``tb`` of R_l / |mu_j - c| (both certified in the certified fields); ``near``: the
    (j, b) pairs summed directly on leaf b; ``tested``: how many (pole, arc) tests ran.
    """

    tree: ArcTree
    theta: float
    rho0: float
    certified: bool
    inner: list
    outer: list
    circle: list
    mag: np.ndarray
    levels: dict = field(default_factory=dict)
    near: tuple = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    tested: int = 0


def plan_pairs(geom: _Geometry, M: int, theta: float, rho0: float, tree: ArcTree) -> Plan:
    """Zones, then the downward pass: every circle pole meets the 2^l0 arcs of level
    l0; an admissible pair is expanded, an inadmissible one passes to the two children
    (or to the near list at the leaves)."""
    n = geom.mu.size
    zones, mag = [], np.full(n, math.nan)
    for j in range(n):
        z, m = geom.zone(j, rho0)
        zones.append(z)
        mag[j] = m
    plan = Plan(tree, theta, rho0, geom.certified,
                [j for j in range(n) if zones[j] == INNER],
                [j for j in range(n) if zones[j] == OUTER],
                [j for j in range(n) if zones[j] == 0], mag)
    width = 1 << tree.l0
    js = np.repeat(np.array(plan.circle, dtype=np.int64), width)
    bs = np.tile(np.arange(width, dtype=np.int64), len(plan.circle))
    for l in range(tree.l0, tree.L + 1):
        plan.tested += js.size
        R = tree.radius(l)
        d = np.abs(geom.mu[js] - np.exp(-1j * np.pi * tree.centre_index(l, bs) / M))
        with np.errstate(divide="ignore", invalid="ignore"):
            cand = (d > 0) & (R <= theta * d)
        ci = np.flatnonzero(cand)
        if geom.certified:
            ok, lo, tb = geom.certify(tree, l, js[ci], bs[ci], theta)
            acc = ci[ok]
            lo, tb = lo[ok], tb[ok]
        else:
            acc = ci
            lo = d[acc]
            tb = R / lo
        mask = np.zeros(js.size, dtype=bool)
        mask[acc] = True
        order = np.lexsort((js[acc], bs[acc]))
        plan.levels[l] = (js[acc][order], bs[acc][order], lo[order], tb[order])
        js, bs = js[~mask], bs[~mask]
        if l < tree.L:
            js = np.repeat(js, 2)
            bs = (2 * bs[:, None] + np.array([0, 1])).reshape(-1)
    order = np.lexsort((js, bs))
    plan.near = (js[order], bs[order])
    return plan


# -- truncation bounds ----------------------------------------------------------------------

def truncation_bounds(plan: Plan, absw: np.ndarray, p: int, p0: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(E, B_in, B_out)``: E[i, k] bounds the truncation error of weight set i at node
    k: ``B_in + B_out + sum_{A contains k} B(A)`` with
    ``B(A) = sum |a_j| tb^p / ((1 - tb) lo)``, ``B_in = sum |a_j| m^p0/(1 - m)``,
    ``B_out = sum |a_j| m^-p0/(m - 1)``; every operation rounded upward (``absw`` holds
    upper bounds of |a_ij|)."""
    tree = plan.tree
    nw = absw.shape[0]
    E = np.zeros((nw, 1 << tree.l0))
    for l in range(tree.l0, tree.L + 1):
        if l > tree.l0:
            E = np.repeat(E, 2, axis=1)
        js, bs, lo, tb = plan.levels[l]
        if js.size:
            f = _up(_pow_up(tb, p) / _dn(_dn(1 - tb) * lo))
            for i in range(nw):
                E[i] = _add_up(E[i], _sum_up(_mul_up(absw[i, js], f), bs, 1 << l))
    E = np.repeat(E, tree.leaf, axis=1)
    B_in, B_out = np.zeros(nw), np.zeros(nw)
    if plan.inner:
        m = plan.mag[plan.inner]
        f = _up(_pow_up(m, p0) / _dn(1 - m))
        B_in = np.array([_total_up(_mul_up(absw[i, plan.inner], f)) for i in range(nw)])
    if plan.outer:
        m = plan.mag[plan.outer]
        with np.errstate(over="ignore"):  # inf rounds down to the largest float: still a lower bound
            f = _up(1 / _dn(_pow_dn(m, p0) * _dn(m - 1)))
        B_out = np.array([_total_up(_mul_up(absw[i, plan.outer], f)) for i in range(nw)])
    return _add_up(E, _add_up(B_in, B_out)[:, None]), B_in, B_out


# -- constants of the expansions --------------------------------------------------------------

class _Constants:
    """Centres, the shift coefficients alpha, beta and the leaf variables u_t in F.

    In the certified and exact fields they are formed from F's roots of unity and
    rational literals, so the shifts are exact identities (balls enclose them).  Over
    float64 the two quantities of the form ``(root - 1) * scale`` lose relative accuracy
    to cancellation when the root is close to 1, so they are supplied from the
    cancellation-free form ``2i sin(phi/2) exp(i phi/2)``."""

    def __init__(self, F, tree: ArcTree):
        self.F, self.tree = F, tree
        self.float_consts = isinstance(_base_field(F), Float64Field)
        self._centres: dict = {}
        self._m: dict = {}
        self._shifts: dict = {}
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
        F = self.F
        if self.float_consts:
            phi = -2 * math.pi * j / K
            return F.from_number(2j * math.sin(phi / 2) * cmath.exp(0.5j * phi) * float(scale))
        return F.mul(F.sub(F.root_of_unity(K, j), F.one()), F.const(scale))

    def alpha_beta(self, l: int, sigma: int) -> tuple:
        """Parent level l, child sigma: u_parent = beta + alpha * u_child."""
        F, tree = self.F, self.tree
        K, j = 1 << (l + 2), (-1 if sigma == 0 else 1)  # c_child / c_parent = root(K, j)
        e = F.root_of_unity(K, j)
        alpha = F.mul(e, F.const(tree.scale(l + 1) / tree.scale(l)))
        beta = self._root_minus_one(K, j, 1 / tree.scale(l))
        return alpha, beta

    def shift(self, l: int, sigma: int, p: int) -> list:
        key = (l, sigma)
        T = self._shifts.get(key)
        if T is None:
            T = self._shifts[key] = shift_matrix(self.F, *self.alpha_beta(l, sigma), p)
        return T

    def forget_shifts(self) -> None:
        """Drop the shift matrices of earlier levels (they are used once)."""
        self._shifts.clear()

    def leaf_variables(self) -> list:
        """u_t = (z_{b s + t}/c - 1)/rho_L for 0 <= t < s (the same for every leaf b)."""
        if self._u is None:
            tree = self.tree
            s, r = tree.leaf, 1 / tree.scale(tree.L)
            self._u = [self._root_minus_one(2 * tree.M, 2 * t - s + 1, r) for t in range(s)]
        return self._u


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


# -- the trace of who handled which pair --------------------------------------------------------

class _Trace:
    def __init__(self, n: int, M: int):
        self.count = np.zeros((n, M), dtype=np.int32)
        self.mechanism = np.zeros((n, M), dtype=np.int32)
        self.arcs: list = []

    def mark(self, j: int, lo: int, hi: int, code: int) -> None:
        self.count[j, lo:hi] += 1
        self.mechanism[j, lo:hi] = code

    def as_dict(self) -> dict:
        return {"count": self.count, "mechanism": self.mechanism, "arcs": self.arcs}


def _record_plan_roots(trace: _Trace | None, plan: Plan) -> None:
    if trace is not None:
        for j in plan.inner:
            trace.mark(j, 0, plan.tree.M, INNER)
        for j in plan.outer:
            trace.mark(j, 0, plan.tree.M, OUTER)


def _record_arc(trace: _Trace | None, tree: ArcTree, l: int, j: int, b: int) -> None:
    if trace is not None:
        s = tree.size(l)
        trace.mark(j, b * s, (b + 1) * s, ARC + l)
        trace.arcs.append((j, l, b))


# -- the generic procedure (any field; counted under Counting) ---------------------------------

def _accumulate(F, vec: list, i: int, v) -> None:
    vec[i] = v if vec[i] is None else F.add(vec[i], v)


def _roots_generic(F, plan: Plan, poles: list, W: list, p0: int) -> list:
    """The root zones: y_k = sum_r x_r w^(-k r) with
    ``x_r = sum_{m+1 = r mod M} S_m - sum_{-m = r mod M} T_m``."""
    M, out = plan.tree.M, []
    for a in W:
        x = [None] * M
        for j in plan.inner:
            t = a[j]
            for m in range(p0):
                if m:
                    t = F.mul(t, poles[j])
                _accumulate(F, x, (m + 1) % M, t)
        for j in plan.outer:
            t = F.div(a[j], poles[j])
            nu = F.div(F.one(), poles[j]) if p0 > 1 else None
            for m in range(p0):
                if m:
                    t = F.mul(t, nu)
                r = (-m) % M
                x[r] = F.neg(t) if x[r] is None else F.sub(x[r], t)
        X = dft(F, [F.zero() if v is None else v for v in x])
        out.append([X[(-k) % M] for k in range(M)])
    return out


def _l2l(F, parent: list, T: list, p: int) -> list:
    child = []
    for g in range(p):
        acc = parent[0] if g == 0 else F.mul(parent[g], T[g][g])
        for h in range(g + 1, p):
            acc = F.add(acc, F.mul(parent[h], T[h][g]))
        child.append(acc)
    return child


def _tree_generic(F, plan: Plan, poles: list, W: list, p: int, consts: _Constants,
                  y: list, trace: _Trace | None) -> None:
    tree, nw = plan.tree, len(W)
    Lcur: dict = {}
    for l in range(tree.l0, tree.L + 1):
        if l > tree.l0 and Lcur:
            new = {}
            consts.forget_shifts()
            for sigma in (0, 1):
                T = consts.shift(l - 1, sigma, p)
                for b, coeffs in Lcur.items():
                    new[2 * b + sigma] = [_l2l(F, c, T, p) for c in coeffs]
            Lcur = new
        js, bs, _, _ = plan.levels[l]
        for j, b in zip(js.tolist(), bs.tolist()):
            dp = F.sub(consts.centre(l, b), poles[j])  # c - mu
            w = F.div(consts.m_arc(l, b), dp)
            coeffs = Lcur.setdefault(b, [[None] * p for _ in range(nw)])
            for i in range(nw):
                t = F.div(W[i][j], dp)
                _accumulate(F, coeffs[i], 0, t)
                for h in range(1, p):
                    t = F.mul(t, w)
                    _accumulate(F, coeffs[i], h, t)
            _record_arc(trace, tree, l, j, b)
    if not Lcur:
        return
    u = consts.leaf_variables()
    s = tree.leaf
    for b, coeffs in Lcur.items():
        for i, c in enumerate(coeffs):
            for t in range(s):
                v = c[p - 1]
                for h in range(p - 2, -1, -1):
                    v = F.add(F.mul(v, u[t]), c[h])
                _accumulate(F, y[i], b * s + t, v)


def _near_generic(F, plan: Plan, poles: list, W: list, y: list, trace: _Trace | None) -> tuple[list, bool]:
    s, M = plan.tree.leaf, plan.tree.M
    nodes: dict = {}
    zero, unknown = set(), False
    for j, b in zip(*(v.tolist() for v in plan.near)):
        for k in range(b * s, (b + 1) * s):
            z = nodes.get(k)
            if z is None:
                z = nodes[k] = F.root_of_unity(M, k)
            d = F.sub(z, poles[j])
            t = F.is_zero(d)
            if t is Truth.TRUE:
                zero.add(k)
                continue
            if t is Truth.UNKNOWN:
                unknown = True
                continue
            for i in range(len(W)):
                _accumulate(F, y[i], k, F.div(W[i][j], d))
        if trace is not None:
            trace.mark(j, b * s, (b + 1) * s, NEAR)
    return sorted(zero), unknown


def _run_generic(F, plan: Plan, poles: list, W: list, p: int, p0: int, trace: _Trace | None):
    M = plan.tree.M
    consts = _Constants(F, plan.tree)
    if plan.inner or plan.outer:
        y = _roots_generic(F, plan, poles, W, p0)
    else:
        y = [[None] * M for _ in W]
    _record_plan_roots(trace, plan)
    _tree_generic(F, plan, poles, W, p, consts, y, trace)
    zero, unknown = _near_generic(F, plan, poles, W, y, trace)
    y = [[F.zero() if v is None else v for v in row] for row in y]
    return y, zero, unknown


# -- the BallField fast path: FLINT matrix products for the heavy phases ------------------------

def _run_ball(F: BallField, plan: Plan, poles: list, W: list, p: int, p0: int, trace: _Trace | None,
              E: np.ndarray):
    """The same phases as the generic procedure, in acb arithmetic at F.prec: the
    root power sums, the shifts of each level and the leaf evaluation as acb_mat
    products, the root transform by acb.dft.  The truncation bounds E (constant on
    each leaf) enter as radii of the leaf coefficients L_0, which the evaluation
    carries with weight u^0 = 1 to every node of the leaf (or, without any arc
    expansion, directly into the sums)."""
    consts = _Constants(F, plan.tree)
    with ctx.workprec(F.prec):
        y = _roots_ball(F, plan, poles, W, p0)
        _record_plan_roots(trace, plan)
        carried = _tree_ball(F, plan, poles, W, p, consts, y, trace, E)
        zero, unknown = _near_ball(F, plan, poles, W, y, trace)
        if not carried:
            y = [_with_error(row, e) for row, e in zip(y, E)]
    return y, zero, unknown


def _power_rows(xs: list, first: list, k: int) -> list:
    """Rows ``[f_j, f_j x_j, ..., f_j x_j^(k-1)]`` for x_j in xs, f_j in first."""
    rows = []
    for x, f in zip(xs, first):
        r = [f]
        for _ in range(1, k):
            r.append(r[-1] * x)
        rows.append(r)
    return rows


def _roots_ball(F, plan: Plan, poles: list, W: list, p0: int) -> list:
    M, nw = plan.tree.M, len(W)
    if not (plan.inner or plan.outer):
        return [[acb(0)] * M for _ in range(nw)]
    x = [[acb(0)] * M for _ in range(nw)]
    one = acb(1)
    if plan.inner:
        V = acb_mat(_power_rows([poles[j] for j in plan.inner], [one] * len(plan.inner), p0))
        S = acb_mat([[W[i][j] for j in plan.inner] for i in range(nw)]) * V
        for i in range(nw):
            for m in range(p0):
                x[i][(m + 1) % M] += S[i, m]
    if plan.outer:
        nus = [one / poles[j] for j in plan.outer]
        V = acb_mat(_power_rows(nus, nus, p0))
        T = acb_mat([[W[i][j] for j in plan.outer] for i in range(nw)]) * V
        for i in range(nw):
            for m in range(p0):
                x[i][(-m) % M] -= T[i, m]
    out = []
    for i in range(nw):
        X = acb.dft(x[i])
        out.append([X[(-k) % M] for k in range(M)])
    return out


def _to_mat(rows: list, ncols: int) -> acb_mat:
    return acb_mat(rows) if rows else acb_mat(0, ncols)


def _tree_ball(F, plan: Plan, poles: list, W: list, p: int, consts: _Constants,
               y: list, trace: _Trace | None, E: np.ndarray) -> bool:
    """P2L, L2L and L2P; returns whether the bounds E were carried into y."""
    tree, nw = plan.tree, len(W)
    first = next((l for l in range(tree.l0, tree.L + 1) if plan.levels[l][0].size), None)
    if first is None:
        return False
    rows = None
    for l in range(first, tree.L + 1):
        width = 1 << l
        if rows is None:
            rows = [[acb(0)] * p for _ in range(nw * width)]
        else:  # both children at once: parent rows times [T_0 | T_1]
            kids = (_to_mat(rows, p) * _shift_pair(consts, l - 1, p)).tolist()
            half = width // 2
            rows = [kids[i * half + (b >> 1)][(b & 1) * p:(b & 1) * p + p] for i in range(nw) for b in range(width)]
        _p2l_ball(plan, l, poles, W, p, consts, rows, trace)
    s, width = tree.leaf, 1 << tree.L
    for i in range(nw):
        for b, e in enumerate(E[i, ::s].tolist()):
            r = arb(0, e)
            rows[i * width + b][0] += acb(r, r)
    u = consts.leaf_variables()
    V = acb_mat(_power_rows(u, [acb(1)] * len(u), p)).transpose()  # V[h, t] = u_t^h
    Y = (_to_mat(rows, p) * V).tolist()
    for i in range(nw):
        yi = y[i]
        for b in range(width):
            row = Y[i * width + b]
            for t in range(s):
                yi[b * s + t] += row[t]
    return True


def _p2l_ball(plan: Plan, l: int, poles: list, W: list, p: int, consts: _Constants, rows: list,
              trace: _Trace | None) -> None:
    """P2L at level l into the coefficient rows (row i * 2^l + b: weight set i, arc b).
    One weight set: the recurrence t <- t w.  Several: the powers of w once per pair and
    one acb_mat product (weights x pairs) (pairs x p) per arc."""
    nw, width = len(W), 1 << l
    js, bs, _, _ = plan.levels[l]
    if nw == 1:
        for j, b in zip(js.tolist(), bs.tolist()):
            dp = consts.centre(l, b) - poles[j]
            w = consts.m_arc(l, b) / dp
            t = W[0][j] / dp
            r = rows[b]
            r[0] += t
            for h in range(1, p):
                t *= w
                r[h] += t
            _record_arc(trace, plan.tree, l, j, b)
        return
    for b, group in groupby(zip(js.tolist(), bs.tolist()), key=lambda jb: jb[1]):
        C, V = [[] for _ in range(nw)], []
        for j, _ in group:
            dp = consts.centre(l, b) - poles[j]
            inv = 1 / dp
            V.append(_powers(consts.m_arc(l, b) * inv, p))
            for i in range(nw):
                C[i].append(W[i][j] * inv)
            _record_arc(trace, plan.tree, l, j, b)
        R = (acb_mat(C) * acb_mat(V)).tolist()
        for i in range(nw):
            r = rows[i * width + b]
            for h in range(p):
                r[h] += R[i][h]


def _shift_pair(consts: _Constants, l: int, p: int) -> acb_mat:
    """[T_0 | T_1] (p x 2p) for the shifts from level l, entries formed in acb from the
    enclosures of alpha and beta."""
    key = ("pair", l)
    m = consts._shifts.get(key)
    if m is None:
        blocks = []
        for sigma in (0, 1):
            alpha, beta = consts.alpha_beta(l, sigma)
            apow, bpow = _powers(alpha, p), _powers(beta, p)
            blocks.append([[math.comb(h, g) * apow[g] * bpow[h - g] if g <= h else acb(0) for g in range(p)]
                           for h in range(p)])
        m = consts._shifts[key] = acb_mat([blocks[0][h] + blocks[1][h] for h in range(p)])
    return m


def _powers(x, k: int) -> list:
    out = [acb(1)]
    for _ in range(1, k):
        out.append(out[-1] * x)
    return out


def _near_ball(F, plan: Plan, poles: list, W: list, y: list, trace: _Trace | None) -> tuple[list, bool]:
    """Direct sums over the near pairs, leaf by leaf.  A difference whose ball contains
    zero is left out and reported (collision if it is exactly zero).  Several weight
    sets: one acb_mat product (weights x poles) (poles x nodes) per leaf."""
    s, M, nw = plan.tree.leaf, plan.tree.M, len(W)
    zero, unknown = set(), False
    for b, group in groupby(zip(*(v.tolist() for v in plan.near)), key=lambda jb: jb[1]):
        z = [F.root_of_unity(M, k) for k in range(b * s, (b + 1) * s)]
        C, inv = [[] for _ in range(nw)], []
        for j, _ in group:
            mu, row = poles[j], []
            for t in range(s):
                d = z[t] - mu
                if d.contains(0):
                    if d.is_zero():
                        zero.add(b * s + t)
                    else:
                        unknown = True
                    row.append(acb(0))
                else:
                    row.append(1 / d if nw > 1 else W[0][j] / d)
            inv.append(row)
            for i in range(nw):
                C[i].append(W[i][j])
            if trace is not None:
                trace.mark(j, b * s, (b + 1) * s, NEAR)
        if zero or unknown:
            continue
        if nw == 1:
            yi = y[0]
            for row in inv:
                for t in range(s):
                    yi[b * s + t] += row[t]
        else:
            R = (acb_mat(C) * acb_mat(inv)).tolist()
            for i in range(nw):
                yi = y[i]
                for t in range(s):
                    yi[b * s + t] += R[i][t]
    return sorted(zero), unknown


# -- the float64 rounding allowance (proofs/fast_cauchy.md, section 8) ---------------------

#: the per-operation relative error assumed for complex float64 arithmetic and for the
#: supplied constants (u for + and -, sqrt(5) u for *, assumed for / and the C library)
ETA = 2.0 ** -50


def float64_allowance(info: dict, n: int, M: int, S_abs: Any, S2: Any, dist_min: float) -> np.ndarray:
    """What float64 rounding may add to the truncation bound, per node (proof, section 8):
    for a Float64Field run of :func:`cauchy_fast` with ``E_k = info["bound"][k]``,
    ``|y^_k - y_k| <= E_k + allowance_k``,
    ``allowance_k = 1.03 eta (D kappa S_abs(k) + kappa2 S2(k)) + 1.03 (max(p, p0) + 3)(5 eta + tau) E_k``
    with ``S2(k) = sum_j |a_j| / |z_k - mu_j|^2``, ``dist_min <= min |z_k - mu_j|``,
    ``tau = (1 + 1.01 theta) eta / dist_min`` and D, kappa, kappa2 as in the proof.
    Infinite when the proof's smallness condition ``D eta + p tau <= 1/100`` fails."""
    p, p0, theta, rho0 = info["p"], info["p0"], info["theta"], info["rho0"]
    l0, L = info["levels"]
    tree = ArcTree(M, info["leaf"])
    S_abs, S2 = np.asarray(S_abs, dtype=float), np.asarray(S2, dtype=float)
    E = np.asarray(info["bound"], dtype=float)
    D = n * (1 + -(-p0 // M)) + 5 * p * (L - l0 + 2) + 2 * p0 + 3 * math.log2(M) + L + 5
    th = 1.01 * theta
    tau = (1 + th) * ETA / dist_min if dist_min > 0 else math.inf
    if D * ETA + p * tau > 0.01:
        return np.full(S_abs.shape, math.inf)
    R0 = tree.radius(l0)
    g0 = tree.phi(l0) / R0 if R0 > 0 else 1.0
    if th * g0 >= 1:
        return np.full(S_abs.shape, math.inf)
    kappa = max(1.0, (1 + rho0) / (1 - rho0), (1 + th) / (1 - th * g0))
    kappa2 = max(1.0, ((1 + th) / (1 - th * g0)) ** 2)
    return 1.03 * ETA * (D * kappa * S_abs + kappa2 * S2) + 1.03 * (max(p, p0) + 3) * (5 * ETA + tau) * E


# -- the public procedures ------------------------------------------------------------------------

def _with_error(y: list, E: np.ndarray) -> list:
    out = []
    for v, e in zip(y, E.tolist()):
        r = arb(0, e)
        out.append(v + acb(r, r))
    return out


def cauchy_fast_many(F, poles: Any, weight_sets: list, M: int, eps: float, omega=None,
                     theta: float = 0.4, rho0: float = 0.5, leaf: int | None = None, *,
                     fast_path: bool | None = None, trace_pairs: bool = False) -> Result:
    """:func:`cauchy_fast` for several weight vectors sharing the poles (the geometry,
    the shifts and the pole powers are formed once).  ``value[i]`` is the sum vector of
    ``weight_sets[i]``; ``info["bound"][i]`` its truncation bounds."""
    check_power_of_two(M)
    eps = _check_unit(eps, "eps")
    theta = _check_unit(theta, "theta")
    rho0 = _check_unit(rho0, "rho0")
    poles = [F.from_number(x) for x in poles]
    W = [[F.from_number(x) for x in a] for a in weight_sets]
    for i, a in enumerate(W):
        if len(a) != len(poles):
            raise ValueError(f"weight set {i}: {len(a)} weights but {len(poles)} poles")
    is_ball = isinstance(F, BallField)
    if fast_path is None:
        fast_path = is_ball
    elif fast_path and not is_ball:
        raise ValueError("fast_path=True needs a BallField")
    try:
        F.root_of_unity(2 * M, 1)
    except ValueError as e:
        raise ValueError(f"cauchy_fast needs the {2 * M}-th roots of unity in the field (arc centres): {e}")
    s_omega = 1
    if omega is not None:
        from .tree import root_index  # the module re-exports this one: import late
        found = root_index(F, omega, M)
        if not found.ok:
            return found
        s_omega = found.value
    p, p0 = _least_order(eps, theta), _least_order(eps, rho0)
    tree = _make_tree(M, leaf, p)
    geom = _Geometry(F, poles)
    plan = plan_pairs(geom, M, theta, rho0, tree)
    trace = _Trace(len(poles), M) if trace_pairs else None
    absw = np.array([[geom.weight_upper(x) for x in a] for a in W], dtype=float).reshape(len(W), len(poles))
    E, B_in, B_out = truncation_bounds(plan, absw, p, p0)
    if fast_path:
        y, zero, unknown = _run_ball(F, plan, poles, W, p, p0, trace, E)
    else:
        y, zero, unknown = _run_generic(F, plan, poles, W, p, p0, trace)
        if is_ball:
            with ctx.workprec(F.prec):
                y = [_with_error(row, e) for row, e in zip(y, E)]
    if zero:
        inv = pow(s_omega, -1, M)
        return Result(COLLISION, info={"roots": sorted((k * inv) % M for k in zero)})
    if unknown:
        return undecided("a pole may lie on the root grid")
    if s_omega != 1:
        perm = [(s_omega * k) % M for k in range(M)]
        y = [[row[k] for k in perm] for row in y]
        E = E[:, perm]
    info = {"p": p, "p0": p0, "theta": theta, "rho0": rho0, "leaf": tree.leaf,
            "levels": (tree.l0, tree.L), "certified": geom.certified, "fast_path": fast_path,
            "zones": {"inner": len(plan.inner), "outer": len(plan.outer), "circle": len(plan.circle)},
            "pairs": {"tested": plan.tested,
                      "expanded": int(sum(v[0].size for v in plan.levels.values())),
                      "near": int(plan.near[0].size)},
            "bound": [e.tolist() for e in E], "B_in": B_in.tolist(), "B_out": B_out.tolist()}
    if trace is not None:
        info["trace"] = trace.as_dict()
    return Result(OK, y, info)


def cauchy_fast(F, poles: Any, weights: Any, M: int, eps: float, omega=None,
                theta: float = 0.4, rho0: float = 0.5, leaf: int | None = None, *,
                fast_path: bool | None = None, trace_pairs: bool = False) -> Result:
    """``y_k = sum_j a_j / (w^k - mu_j)`` on the M roots to relative accuracy eps:
    ``|y^_k - y_k| <= eps * S_abs(k)`` plus rounding, by root-zone power sums and
    hierarchical arcs with admissibility ratio ``theta`` (module docstring).

    Orders: ``p = ceil(ln eps / ln theta)`` for the arcs, ``p0 = ceil(ln eps / ln rho0)``
    for the root zones; ``leaf`` nodes per leaf arc (default the least power of two
    >= p).  In BallField the returned balls contain the exact sums (the truncation bound
    ``E_k`` is added to each radius; ``fast_path`` uses FLINT matrix products, on by
    default); elsewhere ``value`` is the truncated sum and ``info["bound"]`` the list of
    ``E_k`` (a rigorous bound of the truncation error in ExactField; in float fields
    an estimate that ignores rounding).  Statuses as :func:`cauchy_direct`:
    ``"collision"`` (``info["roots"]``) when a pole is certainly a node, ``"undecided"``
    when a near-field difference contains zero.  ``trace_pairs`` records in
    ``info["trace"]`` which mechanism handled each (pole, node) pair (nodes indexed on
    the grid exp(-2 pi i k/M)).  Wrapped fields (Counting, Tracing) run the generic
    path with the decisions of their float values, like Float64Field.

    >>> from s4cert.arith import BallField
    >>> F = BallField(80)
    >>> r = cauchy_fast(F, [F.from_number(2), F.from_number(0.25)], [F.one(), F.one()], 4, 1e-6)
    >>> r.ok, r.value[0].contains(F.from_number(Fraction(1, 3)))  # 1/(1-2) + 1/(1-1/4)
    (True, True)
    """
    res = cauchy_fast_many(F, poles, [weights], M, eps, omega, theta, rho0, leaf,
                           fast_path=fast_path, trace_pairs=trace_pairs)
    if not res.ok:
        return res
    info = dict(res.info)
    info["bound"] = info["bound"][0]
    info["B_in"], info["B_out"] = info["B_in"][0], info["B_out"][0]
    return Result(OK, res.value[0], info)
