"""The S4 filter at every root at once, in double-double midpoint-radius arrays.

The stages of ``s4.midrad`` (the float64 disk route) with the arithmetic of
``arith.double_double``: midpoints carried as unevaluated pairs of float64 arrays, radii
bounded per element (``proofs/double_double_filter.md``):

1. set-up (partition, poles mu_j, weights) in ball arithmetic, rounded to double-double
   disks element by element;
2. the (r+1)^2 Cauchy sums directly over blocks of (root, pole) pairs: d = z_k - mu_j,
   1/d (a Newton step and a residual bound), the weighted terms, the sum over the poles by
   a balanced tree of double-double additions;
3. per root, W = I + beta T inverted by Gauss-Jordan on disks (every pivot certainly
   nonzero, else the route stops undecided), then H;
4. the inverse DFT by radix-2 butterflies on disks, so every output disk contains the
   transform of every choice of inputs in the input disks.

The kernel's disks hold K_j for every j < L; the result's ``info`` carries the bounds the
filter constants need (b, w, d, A_wt), as in ``s4.midrad``.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...arith.double_double import DD, add_pairs, concat, dd_of_balls, mul_pairs, normalized, roots_of_unity_dd
from ...arith.midrad import RangeError, sum_upper, up

from ..linalg import dot
from ..result import Result, Status, undecided
from . import correction
from .dplr import DPLR
from .midrad import DiskArrays, bit_reverse, constant_bounds, disk_setup, gauss_jordan_inverse

#: the name of this arithmetic in results and certificates
ARITHMETIC = "double-double midpoint-radius"
#: the blocks of roots hold about this many (root, pole) pairs
BLOCK_PAIRS = 1 << 14


def _tree_pairs(re: tuple, im: tuple) -> tuple[tuple, tuple]:
    """Sums over the last axis of the pairs (hi, lo) of both parts by a balanced tree of
    ``add_pairs`` (midpoints only; the bound is the caller's)."""
    while re[0].shape[-1] > 1:
        n = re[0].shape[-1]
        h = n // 2
        parts = []
        for x in (re, im):
            s = add_pairs(x[0][..., :h], x[1][..., :h], x[0][..., h:2 * h], x[1][..., h:2 * h])
            parts.append(tuple(np.concatenate([a, b[..., 2 * h:]], axis=-1) for a, b in zip(s, x)) if n % 2 else s)
        re, im = parts
    return (re[0][..., 0], re[1][..., 0]), (im[0][..., 0], im[1][..., 0])


def _weighted_sums(q: DD, a: DD, C: float) -> DD:
    """Disks of sum_j a_jc q_kj for every weight set c (q: roots x poles, a: poles x sets;
    both with 2Sum pairs), shape roots x sets: the midpoints by double-double products
    (broadcast over the sets, so each part of q is split once) and a balanced tree over
    the poles, midpoints only; the radius C sum_j |a_jc|_1 |q_kj|_1 (their rounding,
    Lemma 9) plus the propagated radii sum_j |q_kj| rad a_jc + rad q_kj (|a_jc| + rad a_jc),
    each sum by one nonnegative matrix product bounded by ``sum_upper`` (Lemma 1 of
    proofs/midrad_filter.md)."""
    Q = [x[None] for x in (q.rh, q.rl, q.ih, q.il)]                 # 1 x roots x poles
    Aw = [np.ascontiguousarray(x.T)[:, None, :] for x in (a.rh, a.rl, a.ih, a.il)]  # sets x 1 x poles
    p1 = mul_pairs(Q[0], Q[1], Aw[0], Aw[1])
    p2 = mul_pairs(Q[2], Q[3], Aw[2], Aw[3])
    p3 = mul_pairs(Q[0], Q[1], Aw[2], Aw[3])
    p4 = mul_pairs(Q[2], Q[3], Aw[0], Aw[1])
    re, im = _tree_pairs(add_pairs(p1[0], p1[1], -p2[0], -p2[1]), add_pairs(p3[0], p3[1], p4[0], p4[1]))
    n = q.rh.shape[1]
    Q1 = up(np.abs(q.rh) + np.abs(q.ih))
    A1 = up(np.abs(a.rh) + np.abs(a.ih))
    rad = up(C * sum_upper(Q1 @ A1, n))
    rad = up(rad + sum_upper(q.mid_abs() @ a.rad, n))
    rad = up(rad + sum_upper(q.rad @ up(a.mid_abs() + a.rad), n))
    rad = up(rad + n * 2.0 ** -930)               # the products' and additions' underflow allowances
    out = DD(re[0].T, re[1].T, im[0].T, im[1].T, rad)                # roots x sets
    return out._make(out.rh, out.rl, out.ih, out.il, out.rad)


def cauchy_direct_dd(Z: DD, poles: DD, weights: list[DD]) -> tuple[list[DD], float]:
    """Disks of S_k = sum_j a_j / (z_k - mu_j) for each weight set (poles and weights as
    double-double disks), and a lower bound of min |z_k - mu_j| (inf without poles).
    RangeError when a difference's disk may contain 0 or a magnitude leaves the range."""
    M, n, K = len(Z), len(poles), len(weights)
    if n == 0:
        return [DD.exact(np.zeros(M)) for _ in weights], math.inf
    B = max(1, BLOCK_PAIRS // n)
    P = poles.reshape(1, n)
    A = normalized(concat([w.reshape(n, 1) for w in weights], axis=1))    # poles x sets
    # the products' and the tree's rounding: (12 + 4 depth) u^2 sum |a|_1 |q|_1 (Lemma 9)
    C = (12 + 4 * max(0, (n - 1).bit_length())) * 2.0 ** -106
    out: list[DD] = []
    sep = math.inf
    for s in range(0, M, B):
        z = Z[s:s + B].reshape(-1, 1)
        d = z.sub(P)
        sep = min(sep, float(np.min(d.abs_lower())))
        out.append(_weighted_sums(d.inv(), A, C))
    if not sep > 0:
        raise RangeError("a pole's disk meets a root's")
    S = concat(out)                                                     # roots x sets
    return [DD(*(np.ascontiguousarray(x[:, c]) for x in (S.rh, S.rl, S.ih, S.il, S.rad))) for c in range(K)], sep


def idft_dd(H: DD, M: int) -> DD:
    """Disks of (1/M) sum_k h_k conj(z_k)^j (numpy's ifft convention) for every h in the
    disks H: an iterative radix-2 transform on disks (twiddles the disks of conj(z))."""
    x = H[bit_reverse(M)]
    Zc = roots_of_unity_dd(M).conj()
    size = 2
    while size <= M:
        half = size // 2
        w = Zc[0:M:M // size][:half].reshape(1, half)   # exp(+2 pi i j / size)
        v = x.reshape(-1, size)
        p = v[:, half:].mul(w)
        e = v[:, :half]
        x = concat([e.add(p), e.sub(p)], axis=1).reshape(-1)
        size *= 2
    return x.scale(1.0 / M) if M > 1 else x


def filter_kernel_dd(model: DPLR, step: Any, L: int, c_tilde: list | None = None,
                     exceptional: list[int] | None = None, prec: int = 192) -> Result:
    """The length-L kernel as double-double disks, the set-up done in ``BallField(prec)``.

    Result: ``value`` = (midpoints, radii): complex128 midpoints (the double-double
    midpoints rounded) and float64 radii, so |K_j - mid_j| <= rad_j.  ``info`` as in
    ``s4.midrad.filter_kernel_midrad``: ``"M"``, ``"exceptional"``, ``"poles"``,
    ``"cauchy"`` (``"route"``: ``"direct"``, ``"arithmetic"``), ``"b"``, ``"w"`` (upper
    bounds, floats >= 1), ``"d"`` (a lower bound of min |z_k - mu_j|), ``"A_wt"`` (upper
    bounds of sum_j |a_j| by weight key), and ``"dd"``: (hi, lo, rad), the complex parts
    of the double-double midpoints and their radii (|K_j - hi_j - lo_j| <= rad_j).  Statuses: ``undecided`` (``info["reason"]``) and the set-up's.

    >>> from s4cert.algorithms.s4.dplr import DPLR
    >>> res = filter_kernel_dd(DPLR([-1.0, -2.0], [0.5, 0.25], [1, 1], [1, -1]), 0.5, 8)
    >>> hi, lo, rad = res.info["dd"]
    >>> res.ok, bool(rad.max() < 1e-28)
    (True, True)
    """
    su = disk_setup(model, step, L, c_tilde, exceptional, prec)
    if not su.ok:
        return su
    L, M, F, st = su.value
    r = model.r
    try:
        Z = roots_of_unity_dd(M)
        keys = list(st.weights)
        wdisks = [dd_of_balls([F.enclose(x) for x in st.weights[k]]) for k in keys]
        sums, sep = cauchy_direct_dd(Z, dd_of_balls([F.enclose(p) for p in st.poles]), wdisks)
        blocks = dict(zip(keys, sums))
        for key, const in st.offsets.items():  # the exceptional indices' constant
            cd = dd_of_balls([F.enclose(const)])
            blocks[key] = blocks[key].add(cd)
        D = DiskArrays(M, DD)
        beta = Z.add(D.one()).scale(0.5)
        W = correction.matrix(D, blocks, beta, r)
        minus_one = correction.minus_one_index(M)
        mask = np.ones(M, dtype=bool)
        if minus_one is not None:
            mask[minus_one] = False
            for i in range(r):  # at z = -1 the correction is not used: keep its pivots harmless
                for c in range(r):
                    for f, v in (("rh", 1.0 if i == c else 0.0), ("rl", 0.0), ("ih", 0.0), ("il", 0.0), ("rad", 0.0)):
                        getattr(W[i][c], f)[minus_one] = v
        Winv = gauss_jordan_inverse(W, DD)
        v = correction.rhs(blocks, r)
        H = correction.transfer(D, blocks, beta, [dot(D, Winv[i], v) for i in range(r)], r)
        if minus_one is not None:
            h = dd_of_balls([F.enclose(correction.value_at_minus_one(F, st.half_delta, st.Ct, st.m.B))])
            for f in ("rh", "rl", "ih", "il", "rad"):
                getattr(H, f)[minus_one] = getattr(h, f)[0]
        K = idft_dd(H, M)[:L]
        bounds = constant_bounds(blocks, Winv, mask, r)
    except RangeError as e:
        return undecided(f"double-double disks: {e}")
    A_wt = {key: float(sum_upper(float(np.sum(w.abs_upper())), len(w))) if len(w) else 0.0
            for key, w in zip(keys, wdisks)}
    # the midpoints rounded to complex128: within 2u |mid| per component, added to the radius
    mid = K.mid_complex()
    rad = up(K.rad + up(2 * 2.0 ** -53 * K.mid_abs1()))
    info = {"M": M, "exceptional": list(st.exceptional), "poles": len(st.poles),
            "cauchy": {"route": "direct", "arithmetic": ARITHMETIC},
            "b": bounds["b"], "w": bounds["w"], "d": sep, "A_wt": A_wt,
            "dd": (K.rh + 1j * K.ih, K.rl + 1j * K.il, K.rad)}
    return Result(Status.OK, (mid, rad), info)
