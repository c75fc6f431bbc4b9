"""Cauchy sums on the root grid to double-double accuracy, on BLAS.

S_c(z_k) = sum_j a_jc / (z_k - mu_j) for every root z_k and weight set c, with the
roots, poles and weights given as double-double disks (``arith.double_double.DD``) and
the sums returned as double-double disks.  Per block of roots, with the (component,
pole, root) arrays of the block's pairs (``proofs/double_double_filter.md``, section 6):

1. d = dh + dl, the difference as a pair: the roots and poles are cut once into three
   parts on two common grids, so that the differences of the first two parts are exact
   and one Fast2Sum joins them; its error and the third parts' difference make the low
   part (Lemma 10);
2. q0, a float64 inverse of dh (any value would do), the residual r = 1 - (dh + dl) q0
   from Dekker's exact products and 2Sum, and delta = q0 r, so that q0 + delta is within
   about u^2 |q0| of 1/d (Lemma 11);
3. the weighted sums by matrix products: q0 is cut into four slices on grids relative
   to its root's largest entry, delta into two, its first on the third slice's grid and
   joined to it, the weights into four relative to their set's largest entry, so that
   the products of the leading slices are exact (Ozaki's splitting) and only the small
   remainders are rounded, each in a product of inner dimension 2n (Lemma 12).

The radius bounds every error from the block's actual magnitudes.  Raises
``RangeError`` when a bound would not hold (a pole whose disk is too close to a root,
magnitudes outside the checked range).
"""
from __future__ import annotations

import math

import numpy as np

from ...arith.dd_eft import dekker_into, split_into, two_sum_into
from ...arith.double_double import DD, two_sum
from ...arith.midrad import U, RangeError, sum_upper, up

#: (root, pole) pairs per block: a block's arrays stay in the second-level cache
BLOCK_PAIRS = 1 << 14
#: the block is refused when the residual bound rho' exceeds this
RHO_MAX = 2.0 ** -30
#: the slices' width is at most this many bits (then delta's first slice fits the third
#: slice of q0, Lemma 12)
BETA_MAX = 22


def _pow2_at_least(m: np.ndarray) -> np.ndarray:
    """The least power of two >= m, for m > 0 (exact: frexp)."""
    f, e = np.frexp(m)
    return np.ldexp(np.ones_like(m), e - (f == 0.5))


def _layout(re: np.ndarray, im: np.ndarray) -> np.ndarray:
    """The 2n x 2K real layout of weights a = re + i im (n x K) for a left factor
    [qr | qi] of q = qr - i qi: columns (Re, Im) of each set, rows j then n + j."""
    n, K = re.shape
    out = np.empty((2 * n, 2 * K))
    out[:n, 0::2], out[:n, 1::2] = re, im
    out[n:, 0::2], out[n:, 1::2] = im, -re
    return out


class _Weights:
    """The weights' slices (real layout) and the radius coefficients that do not depend on
    the block (Lemma 12)."""

    def __init__(self, a: DD, beta: int, gam: float):
        n, K = a.rh.shape
        self.n, self.K = n, K
        amax = np.maximum(np.abs(a.rh).max(axis=0), np.abs(a.ih).max(axis=0))      # per set
        self.sigma = _pow2_at_least(np.where(amax > 0, amax, 1.0))                 # an all-zero set: 1
        self.sigma_min, self.sigma_max = float(self.sigma.min()), float(self.sigma.max())
        if not self.sigma_min >= 2.0 ** (3 * beta - 1070):
            raise RangeError("a weight set too small for exact slices")
        (r1, r2, r3, r4), (i1, i2, i3, i4) = (_slices(x, self.sigma[None, :], beta) for x in (a.rh, a.ih))
        A1, A2, A3 = _layout(r1, i1), _layout(r2, i2), _layout(r3, i3)
        r23, i23 = r2 + r3, i2 + i3                                                # exact
        r123, i123 = (r1 + r2) + r3, (i1 + i2) + i3                                # the last sum rounded
        r4l, i4l = r4 + a.rl, i4 + a.il                                            # rounded
        #: the right factors of the products with q1, q2 ([A1 A2 A3]), with q3 + delta1
        #: ([A1 A2+A3]), with q0 (A4 + a^l) and with q4 + delta2 (A1 + A2 + A3), sets'
        #: rows first (Lemma 12)
        tr = lambda x: np.ascontiguousarray(x.T)
        self.F12 = tr(np.hstack([A1, A2, A3]))
        self.F3 = tr(np.hstack([A1, _layout(r23, i23)]))
        self.F4l = tr(_layout(r4l, i4l))
        self.F123 = tr(_layout(r123, i123))
        one = lambda x, y: up(np.abs(x) + np.abs(y))                               # |.|_1, rounded up
        a4l_1 = one(r4l, i4l)
        rank1 = up(up(2.0 ** -beta * one(r3, i3)) + up(1.25 * 2.0 ** (-2 * beta) * one(r23, i23)))
        rank1 = up(rank1 + up(2.01 * 2.0 ** (-3 * beta) * one(r123, i123)))
        self.rank1 = sum_upper(np.sum(rank1, axis=0), n)                           # per set, times tau
        self.sum_a1 = np.sum(up(up(one(a.rh, a.ih) + one(a.rl, a.il)) + a.rad), axis=0)   # per set
        #: the left factor of the radius sums against [T; v]: rows (rad a | |a| + rad a | |a4 + al|_1)
        #: against T, then |a| + rad a against v (sets' rows first; Lemma 12.4); c4 the rounding's
        #: coefficient of the product with q0 per unit of T |a4 + al|_1
        ar = up(a.abs_upper() + a.rad)                                             # >= |a| + rad a over the disk
        self.c4 = up((gam + 4.05 * U) * 1.4143 * (1 + 4 * U))
        G = np.zeros((4 * K, 2 * n))                                               # [T; v] as one right factor
        G[:3 * K, :n] = np.hstack([a.rad, ar, a4l_1]).T
        G[3 * K:, n:] = ar.T
        self.G = G


def _slices(w: np.ndarray, scale: np.ndarray, beta: int) -> tuple:
    """w = w1 + w2 + w3 + w4 exactly, w_k on the grid scale 2^(-k beta) (k <= 3), for
    |w| <= scale (a power of two, broadcast against w)."""
    out, rest = [], w
    for k in (1, 2, 3):
        C = 1.5 * scale * 2.0 ** (52 - k * beta)
        wk = (rest + C) - C
        out.append(wk)
        rest = rest - wk
    return (*out, rest)


def _tiny_to_zero(x: np.ndarray) -> np.ndarray:
    """x with its entries below 2^-200 in magnitude set to 0."""
    return np.where(np.abs(x) >= 2.0 ** -200, x, 0.0)


def _three_parts(h: np.ndarray, l: np.ndarray, S: float) -> tuple:
    """(x1, x2, x3) with x1 on the grid g1 = S 2^-52, x2 on the grid g2 = g1 2^-51,
    |x3| <= g2/2, each part 0 or at least 2^-200 in magnitude, and |h + l - x1 - x2 - x3|
    <= 0.7 u g2 + 2^-200 (Lemma 10), for |h| <= S/2 (S a power of two) and parts h, l that
    are 0 or at least 2^-200 in magnitude."""
    g1 = S * 2.0 ** -52
    C1, C2 = 1.5 * S, 1.5 * 2.0 ** 52 * (g1 * 2.0 ** -51)
    h, l = two_sum(h, l)                                   # normalized: |l| <= u |h|
    x1 = (h + C1) - C1                                     # h on the grid g1
    s, e = two_sum(h - x1, l)                              # h - x1 exact
    x2 = (s + C2) - C2                                     # s on the grid g2
    x3 = (s - x2) + e                                      # s - x2 exact; the sum rounded
    k = (x3 + C2) - C2                                     # 0 or +-g2: |x3 - k| <= g2/2
    return x1, x2 + k, _tiny_to_zero(x3 - k)


def _factors(parts: list) -> tuple:
    """From the three parts of (Re z, Im z, Re mu, Im mu), the factors of the differences
    z_i - p_i as matrix products [-p_i 1] [1; z_i]: (2, 2, M) and (2, n, 2) per part (A2:
    each entry the sum of two exact products, so the one rounding of z_i - p_i, or none)."""
    return _z_factors(parts[:2]), _p_factors(parts[2:])


def _z_factors(parts: list) -> tuple:
    """[1; z_i] per part i, (2, 2, M), from the three parts of (Re z, Im z)."""
    one = np.ones(len(parts[0][0]))
    return tuple(np.stack([np.stack([one, parts[c][i]]) for c in (0, 1)]) for i in range(3))


def _p_factors(parts: list) -> tuple:
    """[-p_i 1] per part i, (2, n, 2), from the three parts of (Re mu, Im mu)."""
    one = np.ones(len(parts[0][0]))
    return tuple(np.stack([np.stack([-parts[c][i], one], axis=1) for c in (0, 1)]) for i in range(3))


#: the last roots' factors (the roots of unity are the same from one call to the next):
#: [(S, copies of the roots' parts, the factors)]
_ROOT_CACHE: list = []


def _root_factors(Z: DD, S: float) -> tuple:
    """``_factors``' roots side, (2, 2, M) per part, reused when the roots' parts and S are
    bitwise those of the last call."""
    key = (Z.rh, Z.rl, Z.ih, Z.il)
    for s0, arrs, Zp in _ROOT_CACHE:
        if s0 == S and all(a.shape == b.shape and np.array_equal(a.view(np.int64), b.view(np.int64))
                           for a, b in zip(arrs, key)):
            return Zp
    Zp = _z_factors([_three_parts(_tiny_to_zero(h), _tiny_to_zero(l), S) for h, l in ((Z.rh, Z.rl), (Z.ih, Z.il))])
    for a in Zp:
        a.setflags(write=False)
    _ROOT_CACHE[:] = [(S, tuple(np.array(a, dtype=np.float64) for a in key), Zp)]
    return Zp


def cauchy_sums_dd(Z: DD, poles: DD, weights: list[DD]) -> tuple[list[DD], float]:
    """Disks of S_c(z_k) = sum_j a_jc / (z_k - mu_j) for each weight set (double-double
    midpoints, radii from the actual magnitudes), and a lower bound of min |z_k - mu_j|
    (inf without poles).  RangeError when a bound would not hold."""
    M, n, K = len(Z), len(poles), len(weights)
    if n == 0:
        return [DD.exact(np.zeros(M)) for _ in weights], math.inf
    beta = min(BETA_MAX, (51 - (2 * n - 1).bit_length()) // 2)   # 2 beta + log2(2n) <= 51: sums of 3 exact products exact
    m = 2 * n                                              # the inner dimension of every product
    if not m * U <= 0.01:
        raise RangeError("too many poles for the a-priori bounds")
    gam = up(m * U * (1 + 4 * U) / (1 - m * U))           # >= gamma_2n: a rounded product's rounding
    W = _Weights(DD(*(np.stack([getattr(w, f) for w in weights], axis=1) for f in ("rh", "rl", "ih", "il", "rad"))),
                 beta, gam)                               # poles x sets

    big = max(float(np.max(np.abs(p))) for p in (Z.rh, Z.ih, poles.rh, poles.ih))
    if not big <= 2.0 ** 100:                             # NaN fails too
        raise RangeError("a root or pole exceeds 2^100 for double-double disks")
    # parts below 2^-200 are set to 0 (into the radius), then each real part is cut into
    # three on the grids g1 = S 2^-52 and g2 = g1 2^-51 (Lemma 10)
    S = float(_pow2_at_least(np.array(2.0 * max(big, 1.0))))
    g2 = S * 2.0 ** -103
    Zp = _root_factors(Z, S)
    Pp = _p_factors([_three_parts(_tiny_to_zero(h), _tiny_to_zero(l), S) for h, l in ((poles.rh, poles.rl), (poles.ih, poles.il))])
    # |z - z1 - z2 - z3| + |mu - p1 - p2 - p3| and the rounding of d's pair, but for its
    # relative part 1.45 u^2 |dh| (Lemma 10): at most R0
    R0 = up(up(up(float(np.max(Z.rad)) + float(np.max(poles.rad))) + 2.0 ** -196) + 8 * U * g2)
    out = _Out(K, M)
    sep = math.inf
    Bk = max(1, min(M, BLOCK_PAIRS // n))
    work = _Work(Bk, n)
    for s in range(0, M, Bk):
        e = min(M, s + Bk)
        sep = min(sep, _block(work, out, slice(s, e), tuple(z[..., s:e] for z in Zp), Pp, W, beta, R0, gam, g2))
    h, l, rad = _assemble(out, W, n, K, gam, R0)
    res = [DD(h[2 * c], l[2 * c], h[2 * c + 1], l[2 * c + 1], rad[c]) for c in range(K)]
    for x in res:
        x._make(x.rh, x.rl, x.ih, x.il, x.rad)             # the range check
    return res, sep


class _Out:
    """What the blocks leave, over all M roots (one column per root): the products with q1,
    q2, q3 + delta1, q0 and q4 + delta2 (rows: the (Re, Im) of each set, for each right
    factor block), the sums of T and of v against the weights (with the block's constants),
    and per root the slices' scale tau."""

    def __init__(self, K: int, M: int):
        self.C1, self.C2 = np.empty((6 * K, M)), np.empty((6 * K, M))
        self.C3, self.C5 = np.empty((4 * K, M)), np.empty((4 * K, M))
        self.G = np.empty((4 * K, M))
        self.tau, self.cw, self.calpha, self.rho = np.empty(M), np.empty(M), np.empty(M), np.empty(M)


def _assemble(o: _Out, W: _Weights, n: int, K: int, gam: float, R0: float) -> tuple:
    """The pairs (h, l) of the sums, (2K, M), and their radii, (K, M) (Lemma 12.3-4)."""
    k2 = 2 * K
    # the exact products on one grid added exactly (Lemma 12.1): q1 a2 + q2 a1; q1 a3 + q2 a2 + q3' a1
    g3 = o.C1[k2:2 * k2] + o.C2[:k2]
    g4 = o.C1[2 * k2:] + o.C2[k2:2 * k2]
    g4 += o.C3[:k2]
    h, l1 = two_sum(o.C1[:k2], g3)
    h, l2 = two_sum(h, g4)
    # the errors and the rounded outputs by a tree of depth 3 (Lemma 12.3): its rounding is at most
    # 3.01 u (|l1| + |l2| + the rounded outputs' magnitudes), those within the rank-one and q0 terms
    tt = l1 + l2
    t2 = o.C2[2 * k2:] + o.C3[k2:]
    tt += t2
    np.add(o.C5[:k2], o.C5[k2:], out=t2)
    tt += t2
    h, l = two_sum(h, tt)
    la = np.abs(l1, out=l1)
    la += np.abs(l2, out=l2)
    # the radius (Lemma 12.4): the weights' radii and 1/d's error (Lemma 11) against T and v with
    # the blocks' constants, the rank-one roundings, the tree's; summed in floating point (at most
    # seven roundings per term), then one factor for those and for the sums' own rounding
    # (computed sums of at most 2n nonnegative products), then the allowances
    G = [o.G[i * K:(i + 1) * K] for i in range(4)]
    cv = up(up((1 + 5.2 * U) * (1 + 4 * U)) * R0)
    rad = o.cw * G[0]                                      # rad a (c_w + c_alpha) + c_alpha |a|
    rad += o.calpha * G[1]
    rad += up(W.c4 + o.rho) * G[2]                         # the product with q0, the omitted delta (a4 + al)
    rad += cv * G[3]                                       # sum_j R_0 v_kj (|a_j| + rad)
    rad += up((gam + 5.1 * U) * W.rank1)[:, None] * o.tau[None, :]
    rad += 3.02 * U * (la[0::2] + la[1::2])
    rad *= 1.0 + (4 * n + 16) * U                          # exact: 1 + an even multiple of u
    rad += up(up(up((2 + cv) * n * 2.0 ** -1070) + n * 2.0 ** -1059) + up(2.0 ** -1070 * W.sum_a1))[:, None]
    return h, l, rad


class _Work:
    """Buffers for blocks of up to ``B`` roots (reused: no allocation per block); the roots
    are the last, contiguous axis."""

    def __init__(self, B: int, n: int):
        shape = (2, n, B)
        self.dh, self.dl, self.q0 = np.empty(shape), np.empty(shape), np.empty(shape)
        self.dH, self.dL, self.qH, self.qL = (np.empty(shape) for _ in range(4))
        self.p, self.e, self.t = (np.empty(shape) for _ in range(3))
        self.d = self.e                                    # delta, once the residual is formed
        #: [q1, q2, q3 + delta1, q0, q4 + delta2], in the splits' buffers once the residual is formed
        self.L = [self.dH, self.dL, self.qH, self.q0, self.qL]
        self.TV = np.empty((2, n, B))                      # [T; v]
        self.T, self.v = self.TV


def _differences(w: _Work, Zp: tuple, Pp: tuple) -> tuple:
    """d = z - mu for the block's pairs as the pair (dh, dl) = (s, v) (Lemma 10): d1 = z1 - p1
    and d2 = z2 - p2 exact, Fast2Sum of d1 + d2 into (s, e), v = e + (z3 - p3); per component
    |v| <= (1 + u)(u |s| + g2)."""
    (Z1, Z2, Z3), (P1, P2, P3) = Zp, Pp
    matmul, add, sub = np.matmul, np.add, np.subtract
    a, b, dh, dl = w.p, w.e, w.dh, w.dl
    matmul(P1, Z1, a)                                      # d1 = z1 - p1, exact
    matmul(P2, Z2, b)                                      # d2 = z2 - p2, exact
    add(a, b, dh)                                          # s
    sub(dh, a, a)                                          # s - d1, exact
    sub(b, a, dl)                                          # e = d2 - (s - d1)
    matmul(P3, Z3, a)                                      # d3 = z3 - p3, rounded
    add(dl, a, dl)                                         # v = e + d3, rounded
    return dh, dl


def _block(w: _Work, out: "_Out", cols: slice, Zp: tuple, Pp: tuple, W: _Weights, beta: int,
           R0: float, gam: float, g2: float) -> float:
    """One block of roots (the columns ``cols`` of ``out``): the exact and rounded
    products and the radius ingredients at its roots; returns its separation bound.  The
    block's arrays are (component, pole, root)."""
    B, n = Zp[0].shape[2], W.n
    add, sub, mul, div, sqrt, matmul = np.add, np.subtract, np.multiply, np.divide, np.sqrt, np.matmul
    if B != w.dh.shape[2]:
        w = _Work(B, n)
    # 1. d = dh + dl, |dl| <= 1.43 u |dh| + 2.01 g2 (Lemma 10)
    dh, dl = _differences(w, Zp, Pp)
    t = w.t
    sq = mul(dh, dh, t)
    v = add(sq[0], sq[1], w.v)                             # |dh|^2, rounded
    vmin = float(v.min())
    if not vmin >= 2.0 ** -798:                            # NaN fails too
        raise RangeError("a pole lies too close to a root for double-double disks")
    div(1.0, v, v)
    Tmax = math.sqrt(1.0 / vmin)                           # = max T: both roundings are monotone
    L = w.L
    q0 = mul(dh, v, L[3])                                  # [q0r, q0i]: q0 = q0r - i q0i
    # 2. the residual r = 1 - (dh + dl) q0 by exact products (Lemma 11)
    dH, dL, qH, qL = w.dH, w.dL, w.qH, w.qL
    split_into(dh, dH, dL)
    split_into(q0, qH, qL)
    p, e, rre, (s, g) = w.p, w.e, w.T, t                   # (few buffers: they stay in cache; T later)
    mul(dh, q0, p)                                         # [dhr q0r, dhi q0i]
    dekker_into(dH, dL, qH, qL, p, e, t)
    two_sum_into(p[0], p[1], s, g, rre)                    # 2Sum of p1 + p2
    sub(1.0, s, rre)                                       # ((1 - s) - g) - (e1 + e2) - Re(dl q0)
    sub(rre, g, rre)
    add(e[0], e[1], s)
    sub(rre, s, rre)
    mul(dl, q0, t)
    add(t[0], t[1], s)
    sub(rre, s, rre)
    mul(dh[::-1], q0, p)                                   # [dhi q0r, dhr q0i]
    dekker_into(dH[::-1], dL[::-1], qH, qL, p, e, t)
    im = p[0]
    sub(p[0], p[1], im)                                    # Im(d q0) = -Im r
    sub(e[0], e[1], s)
    add(im, s, im)
    mul(dl[::-1], q0, t)
    sub(t[0], t[1], s)
    add(im, s, im)
    rho = up(max(float(rre.max()), -float(rre.min())) + max(float(im.max()), -float(im.min())))  # >= |r^|
    d = w.d                                                # delta = q0 r^ in q0's layout:
    mul(q0, rre, d)                                        # [q0r rre - q0i im, q0r im + q0i rre]
    mul(q0, im, t)
    sub(d[0], t[1], d[0])
    add(d[1], t[0], d[1])
    sqrt(v, w.T)                                           # T, for the radius sums
    # per pair |d - dh - dl| <= R_d = R0 (+ 1.45 u^2 |dh|, in c_alpha) (Lemma 10); |dl| |q0| <=
    # 1.43 u |dh q0| + lam_g, and lam_g's share of the residual's rounding (Lemma 11.3)
    cbeta = up((1 + 5.2 * U) * R0)
    eg = up(up(8 * U * up(2.02 * g2)) * Tmax)
    # the bounds of Lemma 11: |1/d - (q0 + delta)| <= c_alpha T + c_beta v per pair
    rho1 = up(up(up(up((1 + 7.03 * U) * rho) + up(18.3 * U * U + eg)) + up(cbeta * up((1 + 4 * U) * Tmax))) + 2.0 ** -947)
    if not rho1 <= RHO_MAX:
        raise RangeError("a pole lies too close to a root for double-double disks")
    calpha = up((1 + 4 * U) * up(up(up(rho1 * rho1) * (1 + 2 * RHO_MAX)) + up(up(9.93 * U * rho) + up(18.3 * U * U + eg))))
    calpha = up(calpha + 2.0 ** -946)                      # the underflow allowances
    sep = math.nextafter(math.nextafter((1 - 4.1 * U) / Tmax, -math.inf) - up(R0 + 2.01 * g2), -math.inf)
    if not sep > 0:
        raise RangeError("a pole's disk meets a root's")
    # 3. the sums: exact products of the leading slices, the rest rounded (Lemma 12)
    fr, ex = math.frexp(up((1 + 4 * U) * Tmax))
    tau = math.ldexp(1.0, ex - (fr == 0.5))                # per block: the least power of two >= (1 + 4u) Tmax
    tmin = tmax = tau
    if not (tmin * W.sigma_min >= 2.0 ** (4 * beta - 1072) and tmax * W.sigma_max <= 2.0 ** 900):
        raise RangeError("the sums' magnitudes leave the range of exact slices")
    if not up(2 * (1 + 3 * U) * rho) <= 2.0 ** (-2 * beta - 4):  # |delta| <= tau 2^(-2 beta - 4)
        raise RangeError("the residual is too large for the sums' slices")
    src = q0
    for sl, k in ((L[0], 1), (L[1], 2)):
        C = 1.5 * 2.0 ** (52 - k * beta) * tau             # per block
        add(src, C, sl)
        sub(sl, C, sl)                                     # src rounded to the grid tau 2^(-k beta)
        sub(src, sl, t)                                    # exact
        src = t
    C = 1.5 * 2.0 ** (52 - 3 * beta) * tau
    add(t, C, L[2])
    sub(L[2], C, L[2])                                     # q3: on the grid tau 2^(-3 beta)
    sub(t, L[2], t)                                        # q4, exact: |q4| <= tau 2^(-3 beta - 1)
    add(d, C, L[4])
    sub(L[4], C, L[4])                                     # delta1: on the same grid
    sub(d, L[4], d)                                        # delta2, exact: |delta2| <= tau 2^(-3 beta - 1)
    add(L[2], L[4], L[2])                                  # q3 + delta1, exact
    add(t, d, L[4])                                        # q4 + delta2, rounded
    left = lambda i: L[i].reshape(2 * n, B)
    # each product written straight into its columns of the output (a matrix of leading dimension M)
    matmul(W.F12, left(0), out.C1[:, cols])                # exact: a1 q1 | a2 q1 | a3 q1
    matmul(W.F12, left(1), out.C2[:, cols])                # exact: a1 q2 | a2 q2; rounded: a3 q2
    matmul(W.F3, left(2), out.C3[:, cols])                 # exact: a1 q3'; rounded: (a2 + a3) q3'
    k2 = 2 * W.K
    matmul(W.F4l, left(3), out.C5[:k2, cols])              # rounded: (a4 + al) q0
    matmul(W.F123, left(4), out.C5[k2:, cols])             # rounded: a123 (q4 + delta2)
    # the weights against T and v; the block's constants for the radius (Lemma 12.2, 12.4)
    matmul(W.G, w.TV.reshape(2 * n, B), out.G[:, cols])    # the sums against T and v
    out.tau[cols] = tau
    out.cw[cols] = up((1 + 4 * U) * (1 + 1.01 * rho))      # |q^| <= cw T
    out.calpha[cols] = calpha
    out.rho[cols] = up((1 + 9 * U) * rho)
    return sep
