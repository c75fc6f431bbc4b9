"""The real and complex double-double kernels on float64 arrays (midpoints only, with a-priori
error bounds), under round to nearest and without a fused multiply-add: 2Sum, Veltkamp's split,
Dekker's product (each also written into given buffers: ``two_sum_into``, ``split_into``,
``dekker_into``), the real pair product and sum, and the complex pair product and square with
their bound (``proofs/double_double_filter.md``, Lemmas 1-3 and 8).  ``arith.double_double``
builds its disks on them.

>>> h, l = two_sum(np.array([1.0]), np.array([2.0 ** -60]))
>>> float(h[0]), float(l[0])
(1.0, 8.673617379884035e-19)
"""
from __future__ import annotations

import numpy as np

from .midrad import U, up

#: Veltkamp's splitting constant for 53-bit floats
_SPLIT = 134217729.0  # 2^27 + 1
#: below this |fl(a b)| Dekker's product may not be exact; the error term is dropped then
_TP_MIN = 2.0 ** -900
#: an absolute allowance per real operation for underflow (>= 2^-950 + a few 2^-1075)
TINY = 2.0 ** -940


def two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(s, e) with s = fl(a + b) and s + e = a + b exactly (Knuth; no overflow)."""
    s = np.add(a, b)
    bb = s - a
    if not isinstance(bb, np.ndarray):                 # scalars: no buffers to reuse
        return s, (a - (s - bb)) + (b - bb)
    e = s - bb
    np.subtract(a, e, out=e)                           # a - (s - bb)
    np.subtract(b, bb, out=bb)
    e += bb                                            # the same operations, fewer temporaries
    return s, e


def split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Veltkamp's split a = ah + al exactly, ah and al of at most 26 significant bits
    (|a| < 2^996)."""
    ah = np.multiply(a, _SPLIT)                        # c
    if not isinstance(ah, np.ndarray):
        ah = ah - (ah - a)
        return ah, a - ah
    al = ah - a
    ah -= al                                           # c - (c - a)
    np.subtract(a, ah, out=al)
    return ah, al


def two_prod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(p, e) with p = fl(a b) and |a b - p - e| <= 2^-950: Dekker's product, exact when
    |p| >= 2^-900 (|a|, |b| <= 2^500); below that e is set to 0."""
    p = a * b
    ah, al = split(a)
    bh, bl = split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, np.where(np.abs(p) >= _TP_MIN, e, 0.0)


def _real_add(xh, xl, yh, yl):
    """x + y of real double-doubles: (zh, zl, err) with |x + y - zh - zl| <= err."""
    sh, se = two_sum(xh, yh)
    t = xl + yl
    v = se + t
    zh, zl = two_sum(sh, v)
    return zh, zl, up(U * up(np.abs(t) + np.abs(v)))


def two_sum_into(a, b, s, e, t):
    """2Sum into the buffers: s = fl(a + b), e = a + b - s exactly."""
    add, sub = np.add, np.subtract
    add(a, b, s)
    sub(s, a, t)                                         # bb
    sub(s, t, e)
    sub(a, e, e)                                         # a - (s - bb)
    sub(b, t, t)
    add(e, t, e)


def split_into(x, h, l):
    """Veltkamp's split into the buffers: h + l = x, each of at most 26 bits."""
    mul, sub = np.multiply, np.subtract
    mul(x, _SPLIT, h)
    sub(h, x, l)
    sub(h, l, h)
    sub(x, h, l)


def dekker_into(xH, xL, yH, yL, p, e, t, mask: bool = False):
    """e = ((xH yH - p) + xH yL + xL yH) + xL yL (Dekker's error of p = fl(x y)) into the
    buffer e, t a work buffer; with ``mask`` 0 where |p| < 2^-900 (Lemma 1: then
    |x y - p - e| <= 2^-950; elsewhere exact)."""
    mul, add, sub = np.multiply, np.add, np.subtract
    mul(xH, yH, e)
    sub(e, p, e)
    mul(xH, yL, t)
    add(e, t, e)
    mul(xL, yH, t)
    add(e, t, e)
    mul(xL, yL, t)
    add(e, t, e)
    if mask:
        np.abs(p, t)
        e *= t >= _TP_MIN


def dekker(aH, aL, bH, bL, p, mask: bool = True):
    """Dekker's error of p = fl(a b) from the splits of a and b (``dekker_into`` into new
    arrays of p's shape; scalars too), by default masked."""
    if np.ndim(p) == 0:
        e = ((aH * bH - p) + aH * bL + aL * bH) + aL * bL
        return e * (abs(p) >= _TP_MIN) if mask else e
    e, t = np.empty(np.shape(p)), np.empty(np.shape(p))
    dekker_into(aH, aL, bH, bL, p, e, t, mask)
    return e


#: the complex kernel's rounding per unit of Ah Bh and of Ah Bl + Al Bh (Lemma 3), rounded up
_C_HH = up(8 * U * U * (1 + 2.0 ** -49))
_C_CROSS = up(10 * U * (1 + 2.0 ** -50))


def _cmul(xrh, xrl, xih, xil, yrh, yrl, yih, yil, bound: bool = True):
    """x y of complex double-doubles, midpoints as pairs: (rh, rl, ih, il, err) with
    |x y - (rh + rl) - i (ih + il)| <= err for any pairs (normalized or not): four Dekker
    products, each part's two high products added by 2Sum, the rest (2Sum error, Dekker
    errors, the high-times-low products) added in float64, a final 2Sum; the low-times-low
    products dropped.  err a priori from Ah = |xrh| + |xih|, Al = |xrl| + |xil| and Bh, Bl
    of y (proofs/double_double_filter.md, Lemma 3); err is None without ``bound``."""
    args = np.broadcast_arrays(xrh, xrl, xih, xil, yrh, yrl, yih, yil)
    if args[0].ndim == 0:                              # 0-d: as arrays of one element
        return tuple(v if v is None else v.reshape(()) for v in _cmul(*(a.reshape(1) for a in args), bound=bound))
    xrh, xrl, xih, xil, yrh, yrl, yih, yil = args
    xrH, xrL = split(xrh)
    xiH, xiL = split(xih)
    yrH, yrL = split(yrh)
    yiH, yiL = split(yih)
    p1, p2, p3, p4 = xrh * yrh, xih * yih, xrh * yih, xih * yrh
    e1, e2 = dekker(xrH, xrL, yrH, yrL, p1), dekker(xiH, xiL, yiH, yiL, p2)
    e3, e4 = dekker(xrH, xrL, yiH, yiL, p3), dekker(xiH, xiL, yrH, yrL, p4)
    np.negative(p2, out=p2)
    s, g = two_sum(p1, p2)
    e1 -= e2
    c, t = xrh * yrl, xrl * yrh
    c += t
    t2 = np.multiply(xih, yil, out=e2)
    t2 += np.multiply(xil, yih, out=t)
    c -= t2
    e1 += c
    g += e1                                            # g + ((e1 - e2) + ((. + .) - (. + .)))
    rh, rl = two_sum(s, g)
    s, g = two_sum(p3, p4)
    e3 += e4
    np.multiply(xrh, yil, out=c)
    c += np.multiply(xrl, yih, out=t)
    np.multiply(xih, yrl, out=t2)
    t2 += np.multiply(xil, yrh, out=t)
    c += t2
    e3 += c
    g += e3
    ih, il = two_sum(s, g)
    return rh, rl, ih, il, (_cmul_bound(xrh, xrl, xih, xil, yrh, yrl, yih, yil) if bound else None)


#: the bounds' last factor (Lemma 3(b)): a nonnegative result of at most ten roundings to
#: nearest, times this and plus TINY (both rounded), is above its exact value plus 2^-947
_FIN = 1.0 + 2.0 ** -48


def _finish(t):
    """fl(fl(t (1 + 2^-48)) + TINY) for a nonnegative t computed with at most ten roundings to
    nearest (Lemma 3(b))."""
    t = np.multiply(t, _FIN)
    t += TINY
    return t


def _moduli(rh, rl, ih, il) -> tuple:
    """|rh|, |rl|, |ih|, |il|."""
    return np.abs(rh), np.abs(rl), np.abs(ih), np.abs(il)


def _bound_terms(xa: tuple, ya: tuple):
    """C_HH (Ah Bh) + C_CROSS (Ah Bl + Al Bh) + 2 (Al Bl) from the parts' moduli (``_moduli``),
    each operation rounded to nearest: every term passes at most seven roundings (Lemma 3(b))."""
    Ah, Al, Bh, Bl = xa[0] + xa[2], xa[1] + xa[3], ya[0] + ya[2], ya[1] + ya[3]
    t = Ah * Bl
    t += Al * Bh
    t *= _C_CROSS
    e = Ah * Bh
    e *= _C_HH
    e += t
    Al *= Bl
    Al += Al                                           # exact doubling
    e += Al
    return e


def _cmul_bound(xrh, xrl, xih, xil, yrh, yrl, yih, yil):
    """Lemma 3's bound: C_HH Ah Bh + C_CROSS (Ah Bl + Al Bh) + 2 Al Bl in floating point, then
    ``_finish`` (>= the bound plus 2^-947)."""
    return _finish(_bound_terms(_moduli(xrh, xrl, xih, xil), _moduli(yrh, yrl, yih, yil)))


def _modulus_upper(xa: tuple):
    """``DD.mid_abs`` from the parts' moduli (``_moduli``): the same operations."""
    return modulus_of_bounds(xa[0] + xa[1], xa[2] + xa[3])


def modulus_of_bounds(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """fl(fl(w (1 + 2^-50)) + 2^-535) for w = fl(sqrt(fl(a^2) + fl(b^2))), in place in the
    fresh arrays (or scalars) a and b: an upper bound of sqrt(a^2 + b^2) for a, b >= 0
    (proofs/double_double_filter.md, section 3; triple_double.md, Lemma 1)."""
    a *= a
    b *= b
    a += b
    a = np.sqrt(a)
    a *= 1.0 + 2.0 ** -50
    a += 2.0 ** -535
    return a


def _csquare(xrh, xrl, xih, xil):
    """x x as ``_cmul(x, x)``'s pairs with three Dekker products: Re by the same steps with
    the two high-times-low products of each part equal (2 fl(xrh xrl) - 2 fl(xih xil), the
    doubling exact), Im = 2 (xrh xih + the rest) with the doubling exact.  Its error is at
    most ``_cmul_bound(x, x)`` (Lemma 3)."""
    xrH, xrL = split(xrh)
    xiH, xiL = split(xih)
    p1, p2, p3 = xrh * xrh, xih * xih, xrh * xih
    e1, e2 = dekker(xrH, xrL, xrH, xrL, p1), dekker(xiH, xiL, xiH, xiL, p2)
    e3 = dekker(xrH, xrL, xiH, xiL, p3)
    s, g = two_sum(p1, -p2)
    t = g + ((e1 - e2) + 2 * (xrh * xrl - xih * xil))
    rh, rl = two_sum(s, t)
    ih, il = two_sum(p3, e3 + (xrh * xil + xrl * xih))
    return rh, rl, 2 * ih, 2 * il, _cmul_bound(xrh, xrl, xih, xil, xrh, xrl, xih, xil)


def mul_pairs(xh, xl, yh, yl):
    """x y of real double-doubles, midpoint only (Lemma 3's real pair product; a 2Sum
    pair, so |zl| <= u |zh|).  For normalized operands (|xl| <= u |xh|, |yl| <= u |yh|)
    |x y - zh - zl| <= 8.1 u^2 |xh| |yh| + 2^-949 and |zh| <= 1.001 |xh| |yh|
    (proofs/double_double_filter.md, Lemma 8)."""
    p, e = two_prod(xh, yh)
    return two_sum(p, e + (xh * yl + xl * yh))


def add_pairs(xh, xl, yh, yl):
    """x + y of real double-doubles, midpoint only: the (zh, zl) of ``_real_add``.  For
    normalized operands |x + y - zh - zl| <= 3.1 u^2 (|xh| + |yh|) (Lemma 8)."""
    sh, se = two_sum(xh, yh)
    return two_sum(sh, se + (xl + yl))
