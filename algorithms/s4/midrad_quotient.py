"""The rank-one transfer value as a quotient of two Cauchy sums (float64 disk route).

For r = 1 and no exceptional index, with the scaled blocks x, u, v, T of ``correction``
(Cauchy sums with weights a^x, a^u, a^v, a^T over the poles mu_j) and W = 1 + beta T,
beta = (1 + z)/2:

    H = x - beta u v / W = (x W - beta u v) / W = (x + beta D) / W,    D = x T - u v.

D is a Cauchy sum with simple poles: the double poles of x T - u v cancel, since
a^x_j a^T_j = a^u_j a^v_j (= g_j^2 conj(C~_j) B_j conj(Q_j) P_j), and partial fractions give
D(z) = sum_i e_i / (z - mu_i) with

    e_i = sum_{j != i} c_ij / (mu_i - mu_j),  c_ij = a^x_i a^T_j + a^x_j a^T_i - a^u_i a^v_j - a^u_j a^v_i.

As beta / (z - mu) = 1/2 + ((1 + mu)/2) / (z - mu),

    N(z) = x + beta D = n0 + sum_i nu_i / (z - mu_i),  nu_i = a^x_i + e_i (1 + mu_i)/2,  n0 = sum_i e_i / 2,

one more Cauchy sum.  Near a pole mu_i, N and W both grow like 1/(z - mu_i) and H = N / W
stays moderate: the disks of N / W follow |H| where those of x - beta u v / W follow |x|
(proofs/midrad_filter.md, Lemma 12).  The weights nu_i and n0 are formed in double-double
disks (``arith.double_double``) from the set-up's balls, every pair (i, j) at once.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from ...arith.disk_convert import mr_of_dd, mr_pairs_of_dd as mr_pairs  # noqa: F401 (the conversions, re-exported)
from ...arith.double_double import DD, add_pairs, mul_pairs, normalized
from ...arith.midrad import MR, U, roots_of_unity, sum_upper, up

from . import correction
from . import bilinear_map
from .disk_filter import DiskArrays, betas_of

#: the weight keys of x, u, v and T for r = 1
KEYS = (("C", "B"), ("C", 0), (0, "B"), (0, 0))


#: the quotient's weights cost about 1 us per pair of poles (double-double, n^2 pairs), the
#: Cauchy sums about 22 ns per (root, pole) pair (measured, n = 64 to 1024).  With 64 roots per
#: pole the route took 6-23% longer with the quotient than with the correction (LegS n = 64,
#: 128, 256 at M = 64 n; radii 4-90 times smaller); with fewer, more (N = 1024 at M = 2048:
#: 7 s against 1.5 s)
ROOTS_PER_POLE = 64


def applies(r: int, st: Any) -> bool:
    """Whether the quotient form applies to a set-up: rank one, no exceptional index, at
    least one regular pole, and at least ROOTS_PER_POLE roots per pole (the cost rule)."""
    n = len(st.poles)
    return r == 1 and not st.exceptional and not st.offsets and n > 0 and st.M >= ROOTS_PER_POLE * n


def _pair_products(E: DD, A: DD) -> tuple:
    """The midpoint-only products E_ij a_jc (pairs, a priori bounded: Lemma 8 of
    proofs/double_double_filter.md) for E of shape (n, n) and A of shape (n, K), as four
    (K, n, n) arrays (re hi, re lo, im hi, im lo; [c, i, j]); normalized inputs.  The last
    axis is j, so numpy's inner loops run over n entries."""
    er, erl, ei, eil = (x[None, :, :] for x in (E.rh, E.rl, E.ih, E.il))
    ar, arl, ai, ail = (np.ascontiguousarray(x.T)[:, None, :] for x in (A.rh, A.rl, A.ih, A.il))
    p1, p2 = mul_pairs(er, erl, ar, arl), mul_pairs(ei, eil, ai, ail)
    p3, p4 = mul_pairs(er, erl, ai, ail), mul_pairs(ei, eil, ar, arl)
    re = add_pairs(p1[0], p1[1], -p2[0], -p2[1])
    im = add_pairs(p3[0], p3[1], p4[0], p4[1])
    return re[0], re[1], im[0], im[1]


def _tree_sum(parts: tuple) -> tuple[tuple, int]:
    """Sums over the last axis of pair arrays (re hi, re lo, im hi, im lo) by ``add_pairs``
    on halves, the axis first padded with exact zeros to a power of two: (the sums, the
    number of halvings D)."""
    m = parts[0].shape[-1]
    size = 1 << max(0, (m - 1).bit_length())
    if size > m:
        pad = [(0, 0)] * (parts[0].ndim - 1) + [(0, size - m)]
        parts = tuple(np.pad(x, pad) for x in parts)
    depth = 0
    while size > 1:
        h = size // 2
        rh, rl = add_pairs(parts[0][..., :h], parts[1][..., :h], parts[0][..., h:], parts[1][..., h:])
        ih, il = add_pairs(parts[2][..., :h], parts[3][..., :h], parts[2][..., h:], parts[3][..., h:])
        parts, size, depth = (rh, rl, ih, il), h, depth + 1
    return tuple(x[..., 0].T.copy() for x in parts), depth


#: the pair sums work on blocks of rows of about this many (set, row, column) products
AT_POLES_BLOCK = 1 << 15


def cauchy_at_poles(E: DD, A: DD) -> DD:
    """Disks of S'_ic = sum_j E_ij a_jc for disks E (n, n) and A (n, K): the products and
    the sums over j as pairs (``mul_pairs``, ``add_pairs``), their rounding bounded a priori
    by (11.2 + 3.2 D) u^2 1.01 sum_j |E_h|_1 |a_h|_1 plus underflow allowances, and the
    disks' radii by sum_j (|E| rad a + rad E |a| + rad E rad a), all sums over j by matrix
    products of nonnegative floats and ``sum_upper`` (proofs/midrad_filter.md, Lemma 13).
    The rows i are done in blocks (AT_POLES_BLOCK products each)."""
    E, A = normalized(E), normalized(A)
    n, K = E.rh.shape[1], A.rh.shape[1]
    step = max(1, AT_POLES_BLOCK // max(1, n * K))
    parts, depth = [], 0
    for i in range(0, E.rh.shape[0], step):
        p, depth = _tree_sum(_pair_products(E[i:i + step], A))
        parts.append(p)
    rh, rl, ih, il = (np.concatenate([p[f] for p in parts]) for f in range(4))
    e1 = up(np.abs(E.rh) + np.abs(E.ih))                     # |E_h|_1
    a1 = up(np.abs(A.rh) + np.abs(A.ih))
    em = up(e1 * (1 + 2 * U))                                # >= |E_h + E_l|
    am = up(a1 * (1 + 2 * U))
    c = up((11.2 + 3.2 * depth) * 1.01 * U * U)
    rnd = up(c * sum_upper(e1 @ a1, n))
    rad = up(up(sum_upper(em @ A.rad, n) + sum_upper(E.rad @ am, n)) + sum_upper(E.rad @ A.rad, n))
    tiny = up(n * (4 * 2.0 ** -947 + (depth + 1) * 2.0 ** -940))
    return DD(rh, rl, ih, il, up(up(rad + rnd) + tiny))


#: the quotient is taken when sum |nu_i| <= QUOTIENT_RATIO sum |a^x_i| (measured: beyond about
#: 4 the residues e_i of close poles cancel in N and its disks grow past the correction's)
QUOTIENT_RATIO = 4.0


def quotient_pays(nu: DD, ax: DD) -> bool:
    """Whether the quotient form is expected to give the tighter disks: sum |nu_i| at most
    QUOTIENT_RATIO times sum |a^x_i| (a choice between two rigorous routes, made on
    floats; it decides nothing about the result)."""
    return float(np.sum(nu.abs_upper())) <= QUOTIENT_RATIO * float(np.sum(ax.abs_upper()))


def _stack(xs: list[DD]) -> DD:
    """Disk arrays of one length n side by side: shape (n, len(xs))."""
    return DD(*(np.stack([getattr(x, f) for x in xs], axis=1) for f in ("rh", "rl", "ih", "il", "rad")))


def quotient_weights(st: Any, mu: DD, weights: list[DD]) -> tuple[DD, DD]:
    """(nu, n0): the weights nu_i of N as double-double disks and n0 (one disk), from the
    set-up ``st`` of ``filter.setup`` (which ``applies``), the poles' double-double disks
    ``mu`` and the weights' (in the order of ``st.weights``).  With E_ij = 1/(mu_i - mu_j)
    (i != j) and S'_i = sum_{j != i} E_ij a_j for each of the four weight sets,
    e_i = a^x_i T'_i + a^T_i x'_i - a^u_i v'_i - a^v_i u'_i (the sum over j of c_ij E_ij).
    Raises RangeError when two poles' disks cannot be told apart (then 1/(mu_i - mu_j) is
    not bounded) or a magnitude leaves the double-double range."""
    by_key = dict(zip(st.weights, weights))
    ax, au, av, aT = (by_key[k] for k in KEYS)
    n = len(mu)
    if n == 1:
        e = DD.exact(np.zeros(1))
    else:
        iu, ju = np.triu_indices(n, 1)               # i < j: E_ji = -E_ij
        upper = mu[iu].sub(mu[ju]).inv()
        inv = DD(*(np.zeros((n, n)) for _ in range(5)))
        for f in ("rh", "rl", "ih", "il"):
            getattr(inv, f)[iu, ju] = getattr(upper, f)
            getattr(inv, f)[ju, iu] = -getattr(upper, f)
        inv.rad[iu, ju] = inv.rad[ju, iu] = upper.rad
        S = cauchy_at_poles(inv, _stack([aT, ax, av, au]))   # (n, 4): T', x', v', u'
        left = _stack([ax, aT, au, av])                 # the factors of T', x', v', u'
        prod = left.mul(S)
        e = prod[:, 0].add(prod[:, 1]).sub(prod[:, 2].add(prod[:, 3]))
    half_one_mu = bilinear_map.beta_disks(mu, DD)                      # beta(mu) = (1 + mu)/2
    nu = ax.add(e.mul(half_one_mu))
    n0 = cauchy_at_poles(DD.exact(np.ones((1, n))), e.reshape(n, 1)).reshape(1).scale(0.5)   # beta(z) - beta(mu) = (z - mu)/2
    return nu, n0


@lru_cache(maxsize=8)
def betas(M: int) -> MR:
    """The disks of beta_k = (1 + z_k)/2 over the M-point grid (``disk_filter.betas_of`` of
    ``roots_of_unity``, Lemmas 2 and 4), cached per M (read-only arrays)."""
    b = betas_of(roots_of_unity(M))
    b.mid.setflags(write=False)
    b.rad.setflags(write=False)
    return b


def quotient_transfer(N: MR, T: MR, beta: MR, skip) -> tuple[MR, MR]:
    """H = N / W with W = 1 + beta T on float64 disk arrays (``beta`` the disks of
    (1 + z)/2, ``betas``): (H, 1/W).  At the positions ``skip`` (z = -1, or None) W is set
    to the point 1 (the caller sets H there).  RangeError when some W is not certainly
    nonzero."""
    W = correction.matrix(DiskArrays(len(T)), {(0, 0): T}, beta, 1)[0][0]   # 1 + beta T, as transfer_disks
    if skip is not None:
        W.set_point(skip, 1.0)
    Winv = W.inv()
    return N.mul(Winv), Winv
