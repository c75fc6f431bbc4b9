"""The error-free kernels of triple-double disk arithmetic (``arith.triple_double.TD``) and
the operations' array forms on flat arrays, in numpy, rigorous under round to nearest.

Real kernels on arrays of float64 parts: 2Sum (``dd_eft.two_sum``), Veltkamp's split and
Dekker's product without a fused multiply-add, the sum of two triples (``_add_part``), the
product midpoint of two complex triples (``_prod_part``, ``_cmul_mid``), the a-priori bound of
that product (``_cmul_terms``), the bound's final rounding (``_finish``), renormalization
(``_renorm3``).  On top of them the array forms of ``TD.add``, ``TD.mul`` and ``TD.inv`` on
flat disks (``_add_kernel``, ``_mul_kernel``, ``_inv_kernel``), which ``arith.td_jit``'s
compiled loops reproduce operation for operation.  The lemmas cited are those of
``proofs/triple_double.md``; the constants of the bounds are defined here.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .dd_eft import (_SPLIT, _TP_MIN, _cmul, dekker, modulus_of_bounds, split, two_prod,  # noqa: F401 (the kernels' API)
                         two_sum)
from .midrad import U, RangeError, up

#: the disks the array forms take: ``arith.triple_double.TD`` (the seven arrays r0, r1, r2, i0,
#: i1, i2, rad), flat; the inverse builds its approximations with the operand's own class
TD = Any

#: magnitudes of midpoint parts and radii are kept at most this (no overflow anywhere below it)
BIG = 2.0 ** 500
#: the absolute allowance of one operation's bound (underflow, Dekker's products below 2^-900)
TINY_TD = 2.0 ** -938
#: a nonnegative bound of at most twelve roundings to nearest times this is above its exact value
_FIN = 1.0 + 2.0 ** -48
#: u (1 + 2^-48), exactly: a computed sum of at most five nonnegative terms times this is above u times its exact value
_UF = U * _FIN

#: the product's bound per unit of A0 B0, A0 B1 + A1 B0, A0 B2 + A1 B1 + A2 B0 (Lemma 3)
C_00 = 16.01 * U ** 3
C_01 = 20.01 * U ** 2
C_02 = 6.01 * U
#: the product's bound on normalized operands, per unit of A0 B0 (Lemma 4)
C_MUL = 184.1
#: the sum's bound on normalized operands, per unit of |x0|_1 + |y0|_1 (Lemma 2)
C_ADD = 19.1
#: an inverse's radius on a normalized point, per unit of |y| (Lemma 6(b))
C_INV = 1700.0

_FIELDS = ("r0", "r1", "r2", "i0", "i1", "i2", "rad")


def _check(*arrays: np.ndarray) -> None:
    for a in arrays:
        # -BIG <= min and max <= BIG (two reads, no temporary); NaN fails the comparisons
        if a.size and not (float(np.max(a)) <= BIG and float(np.min(a)) >= -BIG):
            raise RangeError("a triple-double part or radius is not finite or exceeds 2^500")


def _finish(t: np.ndarray) -> np.ndarray:
    """fl(fl(t (1 + 2^-48)) + 2^-938) for a nonnegative t of at most twelve roundings to
    nearest: above its exact value plus 2^-939 (Lemma 3(c))."""
    t = np.multiply(t, _FIN)
    t += TINY_TD
    return t


def _dekker(aH, aL, bH, bL, p):
    """Dekker's error term of p = fl(a b) from the splits of a and b, unmasked: a b = p + e
    exactly when |p| >= 2^-900, and |a b - p - e| <= 2^-945 for any |a|, |b| <= 2^500
    (Lemma 3(a))."""
    return dekker(aH, aL, bH, bL, p, mask=False)


def _sum3_abs(a, b, c):
    """fl(fl(|a| + |b|) + |c|)."""
    s = np.abs(a)
    s += np.abs(b)
    s += np.abs(c)
    return s


def _modulus_upper(r0, r1, r2, i0, i1, i2) -> np.ndarray:
    """An upper bound of sqrt(A^2 + B^2), A = |r0| + |r1| + |r2|, B likewise (>= |mid|):
    fl(fl(w (1 + 2^-50)) + 2^-535) for w the rounded value (Lemma 1)."""
    return modulus_of_bounds(_sum3_abs(r0, r1, r2), _sum3_abs(i0, i1, i2))


def _level_sums(x: TD) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A_k = fl(|r_k| + |i_k|), k = 0, 1, 2."""
    return tuple(np.abs(getattr(x, f"r{k}")) + np.abs(getattr(x, f"i{k}")) for k in range(3))


def _renorm3(a, b, c):
    """(h, m, l) with h + m + l = a + b + c exactly (three 2Sums; |l| <= u |m|)."""
    s, t = two_sum(b, c)
    h, m = two_sum(a, s)
    m, l = two_sum(m, t)
    return h, m, l


# -- the real kernels ----------------------------------------------------------------------

def _add_part(x0, x1, x2, y0, y1, y2):
    """x + y of real triples: (h, m, l, s2, g, t2) with h + m + l = x + y - (rounding), the
    rounding at most u (|s2| + |g| + |t2|) (Lemma 2)."""
    s0, e0 = two_sum(x0, y0)
    s1, e1 = two_sum(x1, y1)
    s2 = x2 + y2
    t1, f1 = two_sum(e0, s1)
    g = e1 + s2
    t2 = g + f1
    h, a = two_sum(s0, t1)
    m, l = two_sum(a, t2)
    return h, m, l, s2, g, t2


def _prod_part(a, b, c, d, sp, negate: bool):
    """a b - c d (``negate``) or a b + c d of real triples, midpoint only, by Lemma 3(a):
    a0 b0, c0 d0 and the four first-order products by Dekker's product, the first-order terms
    by a chain of 2Sums, the second-order terms in floating point, the third- and fourth-order
    products dropped.  ``sp`` holds the splits of a0, a1, b0, b1, c0, c1, d0, d1."""
    (a0, a1, a2), (b0, b1, b2), (c0, c1, c2), (d0, d1, d2) = a, b, c, d
    sa0, sa1, sb0, sb1, sc0, sc1, sd0, sd1 = sp
    P = a0 * b0
    eP = _dekker(*sa0, *sb0, P)
    Q = c0 * d0
    eQ = _dekker(*sc0, *sd0, Q)
    if negate:
        np.negative(Q, out=Q)
        np.negative(eQ, out=eQ)
    s, g = two_sum(P, Q)
    h1 = a0 * b1
    f1 = _dekker(*sa0, *sb1, h1)
    h2 = a1 * b0
    f2 = _dekker(*sa1, *sb0, h2)
    h3 = c0 * d1
    f3 = _dekker(*sc0, *sd1, h3)
    h4 = c1 * d0
    f4 = _dekker(*sc1, *sd0, h4)
    k1, q1 = two_sum(h1, h2)
    k2, q2 = two_sum(h3, h4)
    if negate:
        np.negative(k2, out=k2)
        np.negative(q2, out=q2)
    k3, q3 = two_sum(k1, k2)
    k4, q4 = two_sum(eP, eQ)
    k5, q5 = two_sum(k3, k4)
    k6, q6 = two_sum(k5, g)
    q1 += q2                                           # D = ((q1 + q2) + (q3 + q4)) + (q5 + q6)
    q3 += q4
    q1 += q3
    q5 += q6
    q1 += q5
    f1 += f2                                           # F = (f1 + f2) -+ (f3 + f4)
    f3 += f4
    (np.subtract if negate else np.add)(f1, f3, out=f1)
    p = a0 * b2                                        # Pi = ((a0 b2 + a1 b1) + a2 b0) -+ (...)
    p += np.multiply(a1, b1, out=f2)
    p += np.multiply(a2, b0, out=f2)
    r = c0 * d2
    r += np.multiply(c1, d1, out=f2)
    r += np.multiply(c2, d0, out=f2)
    (np.subtract if negate else np.add)(p, r, out=p)
    f1 += p                                            # S2 = D + (F + Pi)
    q1 += f1
    h, t = two_sum(s, k6)
    m, l = two_sum(t, q1)
    return h, m, l


def _cmul_mid(x: TD, y: TD):
    """The midpoint of x y (Lemma 3(b)): six parts."""
    xr, xi = (x.r0, x.r1, x.r2), (x.i0, x.i1, x.i2)
    yr, yi = (y.r0, y.r1, y.r2), (y.i0, y.i1, y.i2)
    sxr0, sxr1, sxi0, sxi1 = split(x.r0), split(x.r1), split(x.i0), split(x.i1)
    syr0, syr1, syi0, syi1 = split(y.r0), split(y.r1), split(y.i0), split(y.i1)
    re = _prod_part(xr, yr, xi, yi, (sxr0, sxr1, syr0, syr1, sxi0, sxi1, syi0, syi1), True)
    im = _prod_part(xr, yi, xi, yr, (sxr0, sxr1, syi0, syi1, sxi0, sxi1, syr0, syr1), False)
    return re + im


def _cmul_terms(xa: tuple, ya: tuple) -> np.ndarray:
    """C_00 A0 B0 + C_01 (A0 B1 + A1 B0) + C_02 (A0 B2 + A1 B1 + A2 B0) + (A1 B2 + A2 B1 + A2 B2),
    each operation rounded to nearest (Lemma 3(c))."""
    A0, A1, A2 = xa
    B0, B1, B2 = ya
    t = A0 * B0
    t *= C_00
    v = A0 * B1
    v += A1 * B0
    v *= C_01
    t += v
    np.multiply(A0, B2, out=v)
    v += A1 * B1
    v += A2 * B0
    v *= C_02
    t += v
    np.multiply(A1, B2, out=v)
    v += A2 * B1
    v += A2 * B2
    t += v
    return t



# -- the operations on flat disks ---------------------------------------------------------

def _add_kernel(x: TD, y: TD) -> tuple:
    """``TD.add`` on flat arrays (Lemma 2)."""
    r0, r1, r2, a, b, c = _add_part(x.r0, x.r1, x.r2, y.r0, y.r1, y.r2)
    i0, i1, i2, d, e, f = _add_part(x.i0, x.i1, x.i2, y.i0, y.i1, y.i2)
    t = _sum3_abs(a, b, c)
    t += _sum3_abs(d, e, f)
    t *= _UF
    rad = x.rad + y.rad
    rad = up(up(rad) + up(t))
    return r0, r1, r2, i0, i1, i2, rad


def _mul_radius(x: TD, y: TD) -> np.ndarray:
    """Lemma 3's terms for x y plus |a| rad_y + rad_x |b| + rad_x rad_y, then ``_finish``
    (terms with a zero radius array skipped: they are zero)."""
    t = _cmul_terms(_level_sums(x), _level_sums(y))
    xr, yr = bool(np.any(x.rad)), bool(np.any(y.rad))
    if yr:
        t += x.mid_abs() * y.rad
    if xr:
        t += x.rad * y.mid_abs()
    if xr and yr:
        t += x.rad * y.rad
    return _finish(t)


def _mul_kernel(x: TD, y: TD) -> tuple:
    """``TD.mul`` on flat arrays (Lemmas 3 and 4)."""
    return _cmul_mid(x, y) + (_mul_radius(x, y),)


def _inv_kernel(x: TD) -> tuple:
    """``TD.inv`` on flat arrays (Lemma 6)."""
    y = _newton_td(x)
    _check(*y._arrays()[:6])
    p = _cmul_mid(x, y)
    err = _finish(_cmul_terms(_level_sums(x), _level_sums(y)))
    a = 1.0 - p[0]
    b = a - p[1]
    c = b - p[2]                                       # Re(1 - m y) = c + three roundings
    re = _sum3_abs(a, b, c)
    re *= _UF
    re = up(up(re) + np.abs(c))
    d = p[3] + p[4]
    e = d + p[5]                                       # Im(m y) = e + two roundings
    im = np.abs(d)
    im += np.abs(e)
    im *= _UF
    im = up(up(im) + np.abs(e))
    r_mid = up(np.sqrt(up(up(re * re) + up(im * im))))
    ymod = y.mid_abs()
    q = up(up(r_mid + err) + up(x.rad * ymod))
    if not float(np.max(q, initial=0.0)) <= 0.5:
        raise RangeError("a divisor is not certainly nonzero (or its inverse not accurate)")
    rad = up(up(q * ymod) * up(1.0 + 2 * q))
    return y.r0, y.r1, y.r2, y.i0, y.i1, y.i2, rad


def _distance_upper(v, p0, p1, p2) -> np.ndarray:
    """An upper bound of |v - p0 - p1 - p2|: c = fl(fl(fl(v - p0) - p1) - p2), plus
    u (|a| + |b| + |c|) for the three roundings; 0 where v = p0 and p1 = p2 = 0."""
    a = v - p0
    b = a - p1
    c = b - p2
    t = _sum3_abs(a, b, c)
    t *= _UF
    return np.where((a == 0) & (p1 == 0) & (p2 == 0), 0.0, up(up(t) + np.abs(c)))


def _newton_td(x: TD) -> TD:
    """An approximation y of 1/m (its accuracy matters for the radius only, Lemma 6(b)):
    y0 = conj(m') / |m'|^2 with m' = fl(r0 + r1) + i fl(i0 + i1), a Newton step on
    double-double pairs (the residual by ``dd_eft._cmul`` from x's first two parts), then
    one on triples (the residual by ``_cmul_mid``), renormalized."""
    a, b = x.r0 + x.r1, x.i0 + x.i1
    n = a * a
    n += b * b
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        y0r = a / n
        y0i = b / n
    np.negative(y0i, out=y0i)
    if not (np.all(np.isfinite(y0r)) and np.all(np.isfinite(y0i))):
        raise RangeError("a divisor's midpoint is 0 or out of range")
    zero = np.zeros(y0r.shape)
    pr, prl, pi, pil, _ = _cmul(x.r0, x.r1, x.i0, x.i1, y0r, zero, y0i, zero, bound=False)
    rr, ri = (1.0 - pr) - prl, -(pi + pil)
    yrh, yrl = two_sum(y0r, y0r * rr - y0i * ri)
    yih, yil = two_sum(y0i, y0r * ri + y0i * rr)
    _check(yrh, yih)
    disks = type(x)
    y1 = disks(yrh, yrl, zero, yih, yil, zero, zero)
    p = _cmul_mid(x, y1)
    rr = ((1.0 - p[0]) - p[1]) - p[2]
    ri = -((p[3] + p[4]) + p[5])
    dr = yrh * rr - yih * ri
    di = yrh * ri + yih * rr
    return disks(*_renorm3(yrh, yrl, dr), *_renorm3(yih, yil, di), zero)

