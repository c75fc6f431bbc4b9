"""The S4 filter at every root at once, in double-double midpoint-radius arrays.

The stages of ``s4.midrad`` (the float64 disk route) with the arithmetic of
``arith.double_double``: midpoints carried as unevaluated pairs of float64 arrays, radii
bounded per element (``proofs/double_double_filter.md``):

1. set-up (partition, poles mu_j, weights) in ball arithmetic, rounded to double-double
   disks element by element;
2. the (r+1)^2 Cauchy sums directly over blocks of (root, pole) pairs
   (``cauchy_dd.cauchy_sums_dd``): d = z_k - mu_j as a pair, 1/d from a float64 inverse and its
   residual by exact products, the sums over the poles by matrix products of exact
   slices (BLAS);
3. per root, W = I + beta T inverted by Gauss-Jordan on disks (every pivot certainly
   nonzero, else the route stops undecided), then H;
4. the inverse DFT by radix-2 butterflies on the double-double midpoints, its rounding
   bounded a priori per stage, plus the mean of the input radii.

The driver is ``disk_filter.filter_kernel_disks`` on ``DD``; this module holds double-double's
primitives (the Cauchy sums ``cauchy_dd.cauchy_sums_dd`` and the transform ``idft_dd``) and registers them.
The kernel's disks hold K_j for every j < L; the result's ``info`` carries the bounds the
filter constants need (b, w, d, A_wt), as in ``s4.midrad``.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from ...arith.dd_eft import dekker_into, split, split_into, two_sum_into
from ...arith.disk_convert import dd_of_balls
from ...arith.double_double import DD, concat, normalized, roots_of_unity_dd
from ...arith.midrad import RangeError, sum_upper, up

from ..result import Result
from .cauchy_dd import cauchy_sums_dd
from .disk_filter import filter_kernel_disks, register
from .dplr import DPLR
from .midrad import bit_reverse

#: the name of this arithmetic in results and certificates
ARITHMETIC = "double-double midpoint-radius"


#: the Cauchy sums on double-double disks (the registered primitive): ``cauchy_dd.cauchy_sums_dd``
#: (exact products and matrix products of exact slices; RangeError when a difference's disk
#: may contain 0 or a magnitude leaves the range)
cauchy_direct_dd = cauchy_sums_dd


class _StageBuffers:
    """Work arrays for one butterfly stage over M entries (real and imaginary parts stacked,
    2 x M/2 per array), reused by every stage."""

    def __init__(self, M: int):
        self.M = M
        self._flat = [np.empty(M) for _ in range(12)]

    def shaped(self, shape: tuple) -> list:
        return [b.reshape(shape) for b in self._flat]


def _butterfly(eh, el, s, tail, yh, yl, w, sign: float) -> None:
    """y = e + sign p for the product p = s + tail (not normalized): 2Sum of the high parts,
    the rest added, 2Sum again, into the views (yh, yl) (Lemma 13)."""
    add, sub = np.add, np.subtract
    S, G, t = w
    if sign > 0:
        two_sum_into(eh, s, S, G, t)
        add(el, tail, t)
    else:
        sub(eh, s, S)                                    # 2Sum(eh, -s)
        sub(S, eh, t)                                    # bb
        sub(S, t, G)
        sub(eh, G, G)                                    # eh - (S - bb)
        add(s, t, t)
        sub(G, t, G)                                     # (-s) - bb
        sub(el, tail, t)
    add(G, t, G)
    two_sum_into(S, G, yh, yl, t)


def idft_dd(H: DD, M: int) -> DD:
    """Disks of (1/M) sum_k h_k conj(z_k)^j (numpy's ifft convention) for every h in the
    disks H: the radix-2 transform of the midpoints (real and imaginary parts stacked), each
    product w o formed as an unnormalized pair (four Dekker products, the rest in float64,
    as ``arith.double_double._cmul``) and added into both outputs, in work arrays reused by
    every stage; its rounding bounded a priori stage by stage, plus the mean of the input
    radii (proofs/double_double_filter.md, Lemma 13)."""
    absolute = np.abs
    x = normalized(H[bit_reverse(M)])
    # the first stages (blocks of at most m entries) on the transposed layout (2, m, M/m), so
    # that every array operation runs along rows of M/m entries; the later ones on (2, M)
    m = 1 << ((M.bit_length() - 1 + 1) // 2)
    X = np.stack([x.rh, x.ih]).reshape(2, M // m, m).transpose(0, 2, 1).copy()  # (re, im)
    XL = np.stack([x.rl, x.il]).reshape(2, M // m, m).transpose(0, 2, 1).copy()
    Y, YL = np.empty_like(X), np.empty_like(XL)
    Zc, r_w = _twiddles(M)
    c_prod = up(up(42.45 * 2.0 ** -106 * (1 + 2.0 ** -40)) + up(1.01 * r_w))  # the product's share per unit of X
    c_add = 21.5 * 2.0 ** -106 * (1 + 2.0 ** -40)        # the two additions' share
    buf = _StageBuffers(M)
    sign = np.array([-1.0, 1.0])[:, None, None, None]
    E = 0.0
    Xmax = float(np.max(up(absolute(x.rh) + absolute(x.ih)), initial=0.0))
    size = 2
    while size <= M:
        if size == 2 * m:                                # back to (2, M): blocks longer than m
            X, XL = (A.transpose(0, 2, 1).reshape(2, M).copy() for A in (X, XL))
            Y, YL = np.empty_like(X), np.empty_like(XL)
        half = size // 2
        shape = (2, m // size, size, M // m) if size <= m else (2, M // size, size, 1)
        v, vl, yv, ylv = (A.reshape(shape) for A in (X, XL, Y, YL))
        eh, el, oh, ol = v[:, :, :half], vl[:, :, :half], v[:, :, half:], vl[:, :, half:]
        b = buf.shaped(shape[:2] + (half,) + shape[3:])
        if size <= 4:                                    # twiddles 1 and i: p = w o exactly
            s, tail = oh, ol
            if size == 4:                                # the second column times i: (re, im) -> (-im, re)
                s, tail = b[2], b[3]
                s[...], tail[...] = oh, ol
                s[:, :, 1], tail[:, :, 1] = sign[:, :, 0] * oh[::-1, :, 1], sign[:, :, 0] * ol[::-1, :, 1]
            loc = 0.0
        else:
            s, tail = _twiddle_product(Zc[0:M:M // size][:half], oh, ol, b, sign)
            loc = c_prod
        _butterfly(eh, el, s, tail, yv[:, :, :half], ylv[:, :, :half], (b[0], b[1], b[11]), 1.0)
        _butterfly(eh, el, s, tail, yv[:, :, half:], ylv[:, :, half:], (b[0], b[1], b[11]), -1.0)
        X, Y, XL, YL = Y, X, YL, XL
        if not Xmax <= 2.0 ** 500:                       # NaN fails too (the range of Lemma 13)
            raise RangeError("the inverse transform left the double-double range")
        E = up(up(up(2 * E) + up(up(loc + c_add) * Xmax)) + 2.0 ** -945)
        f0, f1 = (buf._flat[i].reshape(X[0].shape) for i in (0, 1))
        absolute(X[0], f0)
        f0 += absolute(X[1], f1)
        Xmax = up(float(np.max(f0)))
        size *= 2
    if M <= m:                                           # the transposed layout to the end
        X, XL = (A.transpose(0, 2, 1).reshape(2, M) for A in (X, XL))
    mean_rad = float(sum_upper(float(np.sum(x.rad)), M)) / M
    R = up(up(mean_rad * (1 + 2.0 ** -50)) + up(E / M))  # E/M, M a power of two: exact but for underflow
    c = 1.0 / M
    out = DD(X[0] * c, XL[0] * c, X[1] * c, XL[1] * c, np.full(M, up(R + 4 * 2.0 ** -940)))
    return out._make(out.rh, out.rl, out.ih, out.il, out.rad)


@lru_cache(maxsize=4)
def _twiddles(M: int) -> tuple[DD, float]:
    """The normalized pairs of conj(z_k) (read-only, cached per M) and their largest radius."""
    Zc = normalized(roots_of_unity_dd(M).conj())
    for a in (Zc.rh, Zc.rl, Zc.ih, Zc.il, Zc.rad):
        a.setflags(write=False)
    return Zc, (float(np.max(Zc.rad)) if M > 1 else 0.0)


def _twiddle_product(tw: DD, oh, ol, b: list, sign) -> tuple:
    """p = w o for the stage's twiddles w (normalized pairs, broadcast along the rows) as an
    unnormalized pair (s, tail) in the buffers b[8], b[9]: the four products of the high
    parts by Dekker, their sums per part by 2Sum, the Dekker errors, the 2Sum error and the
    high-times-low products added in float64 (``_cmul``'s steps without its last 2Sum)."""
    add, sub, mul = np.add, np.subtract, np.multiply
    wr, wrl, wi, wil = (y[None, None, :, None] for y in (tw.rh, tw.rl, tw.ih, tw.il))
    (wrH, wrL), (wiH, wiL) = split(wr), split(wi)
    oH, oL, P, E1, Q, E2, C1, C2, s, g, t = b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[11]
    split_into(oh, oH, oL)                               # Veltkamp's split of o's high parts
    mul(oh, wr, P)                                       # [wr o_re, wr o_im]
    dekker_into(wrH, wrL, oH, oL, P, E1, t, mask=True)
    mul(oh[::-1], wi, Q)                                 # [wi o_im, wi o_re]
    dekker_into(wiH, wiL, oH[::-1], oL[::-1], Q, E2, t, mask=True)
    mul(ol, wr, C1)                                      # [wr o_re, wr o_im]'s high-times-low products
    mul(oh, wrl, t)
    add(C1, t, C1)
    mul(ol[::-1], wi, C2)                                # [wi o_im, wi o_re]'s
    mul(oh[::-1], wil, t)
    add(C2, t, C2)
    mul(Q, sign, Q)                                      # Re = wr o_re - wi o_im, Im = wr o_im + wi o_re
    mul(E2, sign, E2)
    mul(C2, sign, C2)
    two_sum_into(P, Q, s, g, t)
    add(E1, E2, E1)
    add(C1, C2, C1)
    add(E1, C1, E1)
    add(g, E1, g)                                        # the tail: 2Sum error + Dekker errors + the rest
    return s, g


def filter_kernel_dd(model: DPLR, step: Any, L: int, c_tilde: list | None = None,
                     exceptional: list[int] | None = None, prec: int = 192) -> Result:
    """The length-L kernel as double-double disks, the set-up done in ``BallField(prec)``:
    ``disk_filter.filter_kernel_disks(DD, ...)`` (its Result: complex128 midpoints, the
    double-double midpoints rounded, and float64 radii), with ``info["disks"]`` replaced by
    ``info["dd"]``: (hi, lo, rad), the complex parts of the double-double midpoints and
    their radii (|K_j - hi_j - lo_j| <= rad_j).

    >>> from s4cert.algorithms.s4.dplr import DPLR
    >>> res = filter_kernel_dd(DPLR([-1.0, -2.0], [0.5, 0.25], [1, 1], [1, -1]), 0.5, 8)
    >>> hi, lo, rad = res.info["dd"]
    >>> res.ok, bool(rad.max() < 1e-28)
    (True, True)
    """
    res = filter_kernel_disks(DD, model, step, L, c_tilde, exceptional, prec)
    if res.ok:
        K = res.info.pop("disks")
        res.info["dd"] = (K.rh + 1j * K.ih, K.rl + 1j * K.il, K.rad)
    return res


register(DD, arithmetic=ARITHMETIC, of_balls=dd_of_balls, roots=roots_of_unity_dd, concat=concat,
         cauchy=cauchy_direct_dd, idft=idft_dd)
