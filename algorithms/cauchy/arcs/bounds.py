"""Truncation bounds of the arc method, rounded upward, and the float64 rounding
allowance (proofs/fast_cauchy.md §3, §8)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ....arith.midrad import U, down, next_up
from .geometry import ArcTree
from .plan import Plan


# -- directed rounding on nonnegative float arrays: one float step (arith.midrad) ----------

def _add_up(a, b):
    """a + b rounded up, for a, b >= 0 (a sum of nonnegative floats is 0 only when exact)."""
    s = a + b
    return np.where(s == 0, 0.0, next_up(s))


def _mul_up(a, b):
    """a * b rounded up, for a, b >= 0; exactly 0 when a factor is 0."""
    return np.where((a == 0) | (b == 0), 0.0, next_up(a * b))


@np.errstate(over="ignore")  # an overflow to inf is an upper bound still
def _pow_up(x: np.ndarray, k: int) -> np.ndarray:
    out, base, k0 = np.ones_like(x), x.copy(), k
    while k:
        if k & 1:
            out = next_up(out * base)
        base = next_up(base * base)
        k >>= 1
    return np.where(x == 0, 0.0, out) if k0 else out


@np.errstate(over="ignore")  # inf rounded down is the largest float: a lower bound still
def _pow_dn(x: np.ndarray, k: int) -> np.ndarray:
    out, base = np.ones_like(x), x.copy()
    while k:
        if k & 1:
            out = down(out * base)
        base = down(base * base)
        k >>= 1
    return out


def _sum_up(values: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
    """Upper bounds of the group sums of nonnegative values.  ``bincount`` adds the
    k terms of a group one by one in round-to-nearest; the exact sum is then at most
    ``computed * (1 + 4 k u)`` while ``k u <= 1/4``."""
    total = np.bincount(groups, weights=values, minlength=n_groups)
    k = np.bincount(groups, minlength=n_groups).astype(float)
    factor = next_up(1 + next_up(4 * k * U))
    return np.where(total == 0, 0.0, np.where(k * U <= 0.25, next_up(total * factor), np.inf))


def _total_up(values: np.ndarray) -> float:
    return float(_sum_up(values, np.zeros(values.size, dtype=np.int64), 1)[0])


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
            f = next_up(_pow_up(tb, p) / down(down(1 - tb) * lo))
            for i in range(nw):
                E[i] = _add_up(E[i], _sum_up(_mul_up(absw[i, js], f), bs, 1 << l))
    E = np.repeat(E, tree.leaf, axis=1)
    B_in, B_out = np.zeros(nw), np.zeros(nw)
    if plan.inner:
        m = plan.mag[plan.inner]
        f = next_up(_pow_up(m, p0) / down(1 - m))
        B_in = np.array([_total_up(_mul_up(absw[i, plan.inner], f)) for i in range(nw)])
    if plan.outer:
        m = plan.mag[plan.outer]
        with np.errstate(over="ignore"):  # inf rounds down to the largest float: still a lower bound
            f = next_up(1 / down(_pow_dn(m, p0) * down(m - 1)))
        B_out = np.array([_total_up(_mul_up(absw[i, plan.outer], f)) for i in range(nw)])
    return _add_up(E, _add_up(B_in, B_out)[:, None]), B_in, B_out


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
