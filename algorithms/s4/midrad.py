"""The S4 filter at every root at once, in float64 midpoint-radius arrays.

The same procedure as ``s4.filter_kernel`` (its set-up is shared), with the work over
the M roots done by numpy on disk arrays (``arith.midrad``):

1. set-up (partition, poles mu_j, weights) in ball arithmetic, rounded to disks;
2. the (r+1)^2 Cauchy sums directly, by blocks of roots: d = z_k - mu_j from
   double-float roots and poles, midpoints by grouped real matrix products added by a
   balanced tree, radii by two nonnegative matrix products with fl(1/|d|^2) and its
   square root (``proofs/midrad_filter.md``, Lemmas 8-10);
3. per root, W = I + beta T inverted by Gauss-Jordan on disks (every pivot certainly
   nonzero, else the route stops undecided), then H;
4. the inverse DFT by an iterative radix-2 transform on the midpoints with a max-norm
   error bound per stage; the kernel's radius is mean(rad H) plus that bound over M.

The result is a pair (midpoints, radii) of numpy arrays with |K_j - mid_j| <= rad_j,
and the bounds the filter constants need (b, w, d, A_wt).  Every decision is made on
certified disks; a disk that cannot decide one stops the route with status
"undecided" (a caller then falls back to ball arithmetic at higher precision).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from flint import acb, ctx

from ...arith import BallField
from ...arith.ball import float_upper
from ...arith.midrad import (MR, SMALL, LARGE, U, UNDERFLOW, RangeError, abs_upper, dd_from_balls, down,
                          modulus_upper, roots_of_unity, roots_of_unity_dd, sum_upper, up)

from ..dft import next_power_of_two
from .dplr import DPLR, check_length
from ..linalg import dot
from ..result import OK, Result, Status, undecided
from . import correction
from .constants import b_rows
from .filter import setup

#: the name of this arithmetic in results and certificates
ARITHMETIC = "float64 midpoint-radius"
#: the blocks of roots hold about this many (root, pole) pairs
BLOCK_PAIRS = 1 << 17
#: poles per matrix product in the Cauchy sums (the rounding bound grows with it)
GROUP = 4


def _disks(F, xs: list) -> MR:
    """Elements of an enclosing field rounded to float64 disks that contain them: each
    is taken as an acb ball (``F.enclose``), whose midpoint is rounded to complex128; the
    radius is a float upper bound of |b - mid| over the ball (its own radius and the
    midpoint's rounding together)."""
    balls = [F.enclose(x) for x in xs]
    mid = np.array([complex(b.mid()) for b in balls], dtype=np.complex128)
    with ctx.workprec(max(F.prec, 53) + 64):  # |b - mid| over the ball: its radius and the midpoint's rounding
        rad = np.array([float_upper(abs(b - acb(m.real, m.imag))) if b.is_finite() else math.inf
                        for b, m in zip(balls, mid)], dtype=np.float64)
    return MR.from_parts(mid, rad)


class DiskArrays:
    """The field operations ``s4.correction`` calls, on disk arrays over the M roots
    (``arith.midrad.MR``, or any class with ``exact``, ``add``, ``sub``, ``mul``): one
    element is a whole array of disks, one per root."""

    def __init__(self, M: int, disks: Any = MR):
        self._one, self._zero = disks.exact(np.ones(M)), disks.exact(np.zeros(M))

    def one(self) -> MR:
        return self._one

    def zero(self) -> MR:
        return self._zero

    def add(self, a: MR, b: MR) -> MR:
        return b if a is self._zero else a.add(b)  # adding the exact zero is exact

    def sub(self, a: MR, b: MR) -> MR:
        return a.sub(b)

    def mul(self, a: MR, b: MR) -> MR:
        return a.mul(b)


def _pairwise_sum(parts: list) -> np.ndarray:
    """The sum of the arrays by a balanced tree: each passes ceil(log2 m) additions."""
    while len(parts) > 1:
        parts = [parts[i] + parts[i + 1] if i + 1 < len(parts) else parts[i] for i in range(0, len(parts), 2)]
    return parts[0]


def cauchy_direct_midrad(roots: tuple, poles: tuple, weights: list[MR]) -> tuple[list[MR], float]:
    """Disks of S_k = sum_j a_j / (z_k - mu_j) for each weight set, and a lower bound of
    min |z_k - mu_j| (inf without poles).

    ``roots`` and ``poles`` are double-float pairs with a radius, ``(hi, lo, R)`` with
    |x - hi - lo| <= R: the differences d = z_k - mu_j are then formed to about u |d|,
    so the bound does not grow like u/|d|^2 next to the circle.  The poles go in groups
    of GROUP; each group's sum is one matrix product (2 GROUP real products per entry)
    and the groups are added by a balanced tree, so each sum's rounding is at most
    gamma_(GROUP + 1 + ceil(log2 m)) times sum |terms| per component.  The radius is
    T @ alpha + (1/|d|^2) @ beta with T ~ 1/|d| (proofs/midrad_filter.md, Lemma 10).
    Raises RangeError when the disks cannot separate a root from a pole or a value
    leaves the safe range."""
    zh, zl, zR = roots
    ph, pl, pR = poles
    M, n, K = len(zh), len(ph), len(weights)
    if n == 0:
        return [MR(np.zeros(M, complex), np.zeros(M)) for _ in weights], math.inf
    g = min(GROUP, n)
    m = -(-n // g)
    depth = max(0, (m - 1).bit_length())
    gam = g + 1 + depth                              # roundings on each product's path
    if not (n + 2) * U <= 0.25 or not gam * U <= 0.0099:
        raise RangeError("too many poles for the a-priori bounds")
    A = np.stack([w.mid for w in weights], axis=1)                     # n x K
    Am = modulus_upper(A)
    Arad = np.stack([w.rad for w in weights], axis=1)
    WA = [(np.concatenate([A.real[J], A.imag[J]], axis=1), np.concatenate([A.imag[J], -A.real[J]], axis=1))
          for J in (slice(a, a + g) for a in range(0, n, g))]
    # R0 >= |exact (z - mu) - (zh + zl - ph - pl)| + the low parts' share of the rounding
    LO = up(float(np.max(modulus_upper(zl))) + float(np.max(modulus_upper(pl))))
    R0 = up(up(zR + pR) + up(2.03 * U * LO))
    # per pole: t (7u (|a| + rad a) + (1 + 8u) rad a + 1.5 gam u |a|) + t^2 (2 R0 (|a| + rad a)),
    # times (1 + 8u) for t <= (1 + 3u) T and t^2 <= (1 + 4u) / nrm
    s_a = up(Am + Arad)
    alpha = up(up(up(7 * U * s_a) + up((1 + 8 * U) * Arad)) + up(1.5 * gam * U * Am))
    alpha = up((1 + 8 * U) * alpha)
    beta = up((1 + 8 * U) * up(up(2 * R0) * s_a))
    out_re, out_im, out_rad = np.empty((M, K)), np.empty((M, K)), np.empty((M, K))
    inv_max = 0.0
    B = max(1, BLOCK_PAIRS // n)
    pre, pim, plre, plim = ph.real[None, :], ph.imag[None, :], pl.real[None, :], pl.imag[None, :]
    for s in range(0, M, B):
        e = min(M, s + B)
        dre = np.subtract(zh.real[s:e, None], pre)
        dre += zl.real[s:e, None] - plre
        dim = np.subtract(zh.imag[s:e, None], pim)
        dim += zl.imag[s:e, None] - plim
        inv = dre * dre
        inv += dim * dim
        with np.errstate(divide="ignore", over="ignore"):  # 0 or overflow is refused just below
            np.divide(1.0, inv, out=inv)              # 1/|d|^2
        lo, hi = float(inv.min()), float(inv.max())
        if not (lo >= SMALL * SMALL and hi <= LARGE * LARGE):
            raise RangeError("a pole lies too close to (or too far from) a root for float64 disks")
        inv_max = max(inv_max, hi)
        dre *= inv                                   # Re(1/d)
        dim *= inv                                   # -Im(1/d)
        parts = [dre[:, a:a + g] @ wr + dim[:, a:a + g] @ wi for a, (wr, wi) in zip(range(0, n, g), WA)]
        G = _pairwise_sum(parts)                      # (e - s) x 2K
        out_re[s:e], out_im[s:e] = G[:, :K], G[:, K:]
        rad2 = inv @ beta
        np.sqrt(inv, out=inv)                         # T ~ 1/|d|
        rad = inv @ alpha
        out_rad[s:e] = up(sum_upper(rad, n) + sum_upper(rad2, n))
    t_max = up((1 + 4 * U) * up(math.sqrt(inv_max)))
    if not up(R0 * t_max) <= 0.25:
        raise RangeError("the disks of a pole and a root are too wide for their distance")
    out_rad = up(out_rad + n * 2.0 ** -1070)       # the value products' underflow allowance
    sep = down(down((1 - 8 * U) / t_max) - R0)
    sums = [MR(out_re[:, c] + 1j * out_im[:, c], out_rad[:, c].copy()) for c in range(K)]
    return sums, max(float(sep), 0.0)


def gauss_jordan_inverse(W: list[list[Any]], disks: Any = MR) -> list[list[Any]]:
    """The inverse of an r x r matrix of disk arrays (of the class ``disks``), without
    pivoting (RangeError when a pivot is not certainly nonzero at some root)."""
    r = len(W)
    A = [row[:] for row in W]
    n = len(A[0][0])
    one, zero = disks.exact(np.ones(n)), disks.exact(np.zeros(n))
    inv = [[one if i == c else zero for c in range(r)] for i in range(r)]
    for p in range(r):
        ip = A[p][p].inv()
        A[p] = [None] * (p + 1) + [x.mul(ip) for x in A[p][p + 1:]]   # columns <= p are never read again
        inv[p] = [x.mul(ip) for x in inv[p]]
        for i in range(r):
            if i == p:
                continue
            f = A[i][p]
            A[i] = [None] * (p + 1) + [x.sub(f.mul(y)) for x, y in zip(A[i][p + 1:], A[p][p + 1:])]
            inv[i] = [x.sub(f.mul(y)) for x, y in zip(inv[i], inv[p])]
    return inv


def bit_reverse(M: int) -> np.ndarray:
    bits = M.bit_length() - 1
    idx = np.arange(M)
    rev = np.zeros(M, dtype=np.int64)
    for b in range(bits):
        rev |= ((idx >> b) & 1) << (bits - 1 - b)
    return rev


def idft_midrad(H: MR, Z: MR) -> tuple[np.ndarray, float]:
    """Midpoints of (1/M) sum_k H_k conj(z_k)^j (numpy's ifft convention) and one bound
    R with |K_j - mid_j| <= R for every j and every H in the disks.  Z are the disks of
    the roots z_k (their conjugates are the inverse transform's twiddles)."""
    mid, R = idft_midrad_rows(H.mid[None, :], H.rad[None, :], Z)
    return mid[0], float(R[0])


def _up(x):
    return np.nextafter(x, np.inf)


def idft_midrad_rows(Hmid: np.ndarray, Hrad: np.ndarray, Z: MR) -> tuple[np.ndarray, np.ndarray]:
    """``idft_midrad`` of every row of the (K, M) disk array (Hmid, Hrad) at once: the
    rows' midpoints and, per row, one bound R_i with |K_ij - mid_ij| <= R_i (each row's
    bound follows its own magnitudes, proofs/midrad_filter.md, Lemma 11)."""
    K, M = Hmid.shape
    x = Hmid[:, bit_reverse(M)]
    tw_rad = float(np.max(Z.rad))
    tw_abs = float(np.max(abs_upper(Z.mid)))
    E = np.zeros(K)
    X = np.max(abs_upper(x), axis=1)
    t = math.nextafter(math.nextafter(3 * U * tw_abs, math.inf) + tw_rad, math.inf)
    size = 2
    while size <= M:
        half = size // 2
        w = np.conj(Z.mid[0:M:M // size][:half])  # conj(z_(jM/size)) = exp(+2 pi i j / size)
        v = x.reshape(K, -1, size)
        e, o = v[:, :, :half], v[:, :, half:]
        p = np.empty(o.shape, dtype=np.complex128)
        p.real = w.real * o.real - w.imag * o.imag
        p.imag = w.real * o.imag + w.imag * o.real
        y = np.empty_like(v)
        y[:, :, :half] = e + p
        y[:, :, half:] = e - p
        x = y.reshape(K, M)
        X2 = np.max(abs_upper(x), axis=1)
        if not np.all(X2 <= LARGE):
            raise RangeError("the inverse transform left the safe range")
        # E' = 2E + (3u |w| + rad w) X + u X' + underflow (proofs/midrad_filter.md, Lemma 11)
        E = _up(2 * E + _up(t * X))
        E = _up(E + _up(U * X2))
        E = _up(E + 8 * UNDERFLOW)
        X = X2
        size *= 2
    mid = x / M
    mean_rad = sum_upper(np.sum(Hrad, axis=1), M) / M
    R = _up(_up(mean_rad) + _up(E / M))
    return mid, _up(R + 4 * UNDERFLOW)


def disk_setup(model: DPLR, step: Any, L: int, c_tilde, exceptional, prec: int) -> Result:
    """What the disk routes (float64 and double-double) share before their arithmetic:
    the checked length L, the filter's M, the ball field of the enclosures and the
    filter's set-up (``filter.setup``); ``value = (L, M, F, setup)`` or the set-up's
    status."""
    L = check_length(L)
    M = next_power_of_two(L)
    F = BallField(prec)
    su = setup(F, model, step, M, c_tilde, exceptional)
    return Result(OK, (L, M, F, su.value)) if su.ok else su


def filter_kernel_midrad(model: DPLR, step: Any, L: int, c_tilde: list | None = None,
                         exceptional: list[int] | None = None, prec: int = 128) -> Result:
    """The length-L kernel as (midpoints, radii) float64 arrays, the set-up done in
    ``BallField(prec)``.  ``info`` holds ``M``, ``exceptional``, the Cauchy route and
    the constants' ingredients: ``b`` and ``w`` (upper), ``d`` (lower), ``A_wt`` (upper,
    by weight key).  Status "undecided" (with a reason) when float64 disks cannot
    decide something; then a ball run at higher precision can.

    Result: ``value`` = (midpoints, radii), both numpy arrays of length L.  ``info``:
    ``"M"``, ``"exceptional"``, ``"poles"`` (how many), ``"cauchy"`` (``"route"``:
    ``"direct"``, ``"arithmetic"``), ``"b"``, ``"w"`` (upper bounds, floats >= 1),
    ``"d"`` (a lower bound of min |z_k - mu_j|), ``"A_wt"`` (upper bounds of
    sum_j |a_j| by weight key).  Statuses: ``undecided`` (``info["reason"]``), and the
    set-up's (``filter.setup``).

    >>> from s4cert.algorithms.s4.dplr import DPLR
    >>> res = filter_kernel_midrad(DPLR([-1.0, -2.0], [0.5, 0.25], [1, 1], [1, -1]), 0.5, 8)
    >>> mid, rad = res.value
    >>> res.ok, bool(rad.max() < 1e-13)
    (True, True)
    """
    su = disk_setup(model, step, L, c_tilde, exceptional, prec)
    if not su.ok:
        return su
    L, M, F, st = su.value
    r = model.r
    try:
        Z = roots_of_unity(M)
        keys = list(st.weights)
        wdisks = [_disks(F, st.weights[k]) for k in keys]
        sums, sep = cauchy_direct_midrad(roots_of_unity_dd(M), dd_from_balls(st.poles), wdisks)
        blocks = dict(zip(keys, sums))
        for key, const in st.offsets.items():  # the exceptional indices' constant, as a disk
            cd = _disks(F, [const])
            blocks[key] = blocks[key].add(MR(np.full(M, cd.mid[0]), np.full(M, cd.rad[0])))
        D = DiskArrays(M)
        beta = Z.add(D.one()).scale(0.5)   # (1 + z)/2, the halving exact
        W = correction.matrix(D, blocks, beta, r)
        minus_one = correction.minus_one_index(M)
        mask = np.ones(M, dtype=bool)
        if minus_one is not None:
            mask[minus_one] = False
            for i in range(r):  # at z = -1 the correction is not used: keep its pivots harmless
                for c in range(r):
                    W[i][c].mid[minus_one] = 1.0 if i == c else 0.0
                    W[i][c].rad[minus_one] = 0.0
        Winv = gauss_jordan_inverse(W)
        v = correction.rhs(blocks, r)
        H = correction.transfer(D, blocks, beta, [dot(D, Winv[i], v) for i in range(r)], r)
        if minus_one is not None:
            h = _disks(F, [correction.value_at_minus_one(F, st.half_delta, st.Ct, st.m.B)])
            H.mid[minus_one], H.rad[minus_one] = h.mid[0], h.rad[0]
        mid, R = idft_midrad(H, Z)
        bounds = constant_bounds(blocks, Winv, mask, r)
    except RangeError as e:
        return undecided(f"float64 disks: {e}")
    A_wt = {key: float(sum_upper(float(np.sum(up(modulus_upper(w.mid) + w.rad))), len(w))) if len(w) else 0.0
            for key, w in zip(keys, wdisks)}
    info = {"M": M, "exceptional": list(st.exceptional), "poles": len(st.poles),
            "cauchy": {"route": "direct", "arithmetic": ARITHMETIC},
            "b": bounds["b"], "w": bounds["w"], "d": sep, "A_wt": A_wt}
    return Result(Status.OK, (mid[:L].copy(), np.full(L, R)), info)


def constant_bounds(blocks: dict, Winv: list, mask: np.ndarray, r: int) -> dict:
    """b >= 1 bounding |x|, ||u||_inf, ||v||_inf, ||T||_inf and w >= 1 bounding
    ||W^-1||_inf over the roots z != -1: the rows of ``s4.constants.b_rows`` and of W^-1,
    their absolute sums bounded per root on the disk arrays, then the largest over the
    roots in ``mask``."""
    if not mask.any():
        return {"b": 1.0, "w": 1.0}

    def row_sum(row):
        acc = row[0].abs_upper()
        for x in row[1:]:
            acc = up(acc + x.abs_upper())
        return acc

    bs = [float(np.max(row_sum(row)[mask])) for row in b_rows(blocks, r)]
    ws = [float(np.max(row_sum(Winv[i])[mask])) for i in range(r)]
    if not all(math.isfinite(v) for v in bs + ws):  # NaN compares False in max: refuse it first
        raise RangeError("a bound of b or w is not finite")
    b, w = max([1.0] + bs), max([1.0] + ws)
    return {"b": b, "w": w}
