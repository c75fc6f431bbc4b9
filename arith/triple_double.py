"""Triple-double midpoint-radius arithmetic on numpy arrays, rigorous under round to nearest.

A ``TD`` holds complex disks ``|x - mid| <= rad`` whose midpoints are unevaluated sums of three
float64 arrays per component, ``(r0 + r1 + r2) + i (i0 + i1 + i2)``: about 2^-150 relative
accuracy, the rung above ``arith.double_double``.  The midpoints are computed with error-free
transformations (``two_sum``; Veltkamp's ``split`` and Dekker's product, without a fused
multiply-add, from ``arith.dd_kernels``); every operation bounds its own rounding (from the
quantities it computed, or a priori from the operands' parts), rounded up as in
``arith.midrad.up``; inverses are bounded a posteriori from a residual.  Every operation
returns disks that contain the exact result of the same operation on any points of the
operand disks (``proofs/triple_double.md``).  Parts and radii above ``BIG = 2^500`` in
magnitude are refused (``arith.midrad.RangeError``): below it no split, product or sum
overflows; tiny values cost an absolute allowance of at most ``TINY_TD = 2^-938`` per
operation (Dekker's products below 2^-900 are not relied on).  The operations run on whole
arrays in blocks of 2^14 elements (numpy), or, on arrays of at least 2^12 elements and with
numba installed, as compiled loops that are bitwise the array forms (checked on probes before
first use; ``S4CERT_COMPILED=0`` turns them off).

>>> x = TD.exact([1 + 1j])
>>> y = x.mul(x.inv())
>>> bool(abs(y.r0[0] - 1) <= 1e-44 and y.rad[0] <= 1e-44)
True
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .dd_kernels import _SPLIT, _TP_MIN, _cmul, split, two_prod, two_sum  # noqa: F401 (two_prod: the kernels' API)
from .midrad import UNDERFLOW, U, RangeError, up

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
    e = np.multiply(aH, bH)
    e -= p
    t = aH * bL
    e += t
    e += np.multiply(aL, bH, out=t)
    e += np.multiply(aL, bL, out=t)
    return e


def _sum3_abs(a, b, c):
    """fl(fl(|a| + |b|) + |c|)."""
    s = np.abs(a)
    s += np.abs(b)
    s += np.abs(c)
    return s


def _modulus_upper(r0, r1, r2, i0, i1, i2) -> np.ndarray:
    """An upper bound of sqrt(A^2 + B^2), A = |r0| + |r1| + |r2|, B likewise (>= |mid|):
    fl(fl(w (1 + 2^-50)) + 2^-535) for w the rounded value (Lemma 1)."""
    a = _sum3_abs(r0, r1, r2)
    b = _sum3_abs(i0, i1, i2)
    a *= a
    b *= b
    a += b
    a = np.sqrt(a)
    a *= 1.0 + 2.0 ** -50
    a += 2.0 ** -535
    return a


def _level_sums(x: "TD") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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


def _cmul_mid(x: "TD", y: "TD"):
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


# -- the disks -----------------------------------------------------------------------------

@dataclass
class TD:
    """Complex disks with triple-double midpoints: mid = (r0 + r1 + r2) + i (i0 + i1 + i2)."""

    r0: np.ndarray
    r1: np.ndarray
    r2: np.ndarray
    i0: np.ndarray
    i1: np.ndarray
    i2: np.ndarray
    rad: np.ndarray

    @classmethod
    def from_parts(cls, hi, mid, lo, rad) -> "TD":
        """From complex arrays of the high, middle and low parts and radii (checked)."""
        hi = np.asarray(hi, dtype=np.complex128)
        mid = np.broadcast_to(np.asarray(mid, dtype=np.complex128), hi.shape)
        lo = np.broadcast_to(np.asarray(lo, dtype=np.complex128), hi.shape)
        r = np.broadcast_to(np.asarray(rad, dtype=np.float64), hi.shape).copy()
        if np.any(np.isnan(r)) or np.any(r < 0):
            raise ValueError("radii must be >= 0")
        out = cls(hi.real.copy(), mid.real.copy(), lo.real.copy(), hi.imag.copy(), mid.imag.copy(),
                  lo.imag.copy(), r)
        _check(*out._arrays())
        return out

    @classmethod
    def exact(cls, values) -> "TD":
        """Points: complex128 values taken as exact."""
        v = np.asarray(values, dtype=np.complex128)
        z = np.zeros(v.shape, complex)
        return cls.from_parts(v, z, z, np.zeros(v.shape))

    @classmethod
    def from_dd(cls, x) -> "TD":
        """The same disks as the double-double disks ``x`` (``arith.double_double.DD``): exact."""
        z = np.zeros(np.shape(x.rh))
        return cls(x.rh.copy(), x.rl.copy(), z, x.ih.copy(), x.il.copy(), z.copy(), x.rad.copy())

    def _arrays(self) -> tuple:
        return tuple(getattr(self, f) for f in _FIELDS)

    def __len__(self) -> int:
        return len(self.r0)

    def __getitem__(self, idx) -> "TD":
        return TD(*(a[idx] for a in self._arrays()))

    def set_point(self, idx, value: float) -> None:
        """Make the disks at ``idx`` the exact real point ``value`` (in place)."""
        self.r0[idx] = value
        for f in _FIELDS[1:]:
            getattr(self, f)[idx] = 0.0

    @property
    def shape(self) -> tuple:
        return self.r0.shape

    @property
    def mid_hi(self) -> np.ndarray:
        return self.r0 + 1j * self.i0

    def mid_complex(self) -> np.ndarray:
        """The midpoints rounded to complex128: fl(p0 + fl(p1 + p2)) per component, within
        u (|result| + |fl(p1 + p2)|) of the exact component, and in modulus within
        2u ``mid_abs1()`` of the midpoint, normalized or not (Lemma 1(c))."""
        return (self.r0 + (self.r1 + self.r2)) + 1j * (self.i0 + (self.i1 + self.i2))

    def mid_abs1(self) -> np.ndarray:
        """An upper bound of |mid| (real plus imaginary parts)."""
        return up(up(_sum3_abs(self.r0, self.r1, self.r2) * (1 + 4 * U))
                  + up(_sum3_abs(self.i0, self.i1, self.i2) * (1 + 4 * U)))

    def mid_abs(self) -> np.ndarray:
        """An upper bound of |mid|: sqrt(A^2 + B^2) for A = |r0| + |r1| + |r2|, B likewise (no
        sqrt(2) lost), from its rounded value w by fl(fl(w (1 + 2^-50)) + 2^-535) (Lemma 1)."""
        return _modulus_upper(self.r0, self.r1, self.r2, self.i0, self.i1, self.i2)

    def _make(self, *arrays) -> "TD":
        _check(*arrays)
        return TD(*arrays)

    def conj(self) -> "TD":
        return TD(self.r0, self.r1, self.r2, -self.i0, -self.i1, -self.i2, self.rad)

    def neg(self) -> "TD":
        return TD(-self.r0, -self.r1, -self.r2, -self.i0, -self.i1, -self.i2, self.rad)

    def add(self, other: "TD") -> "TD":
        """x + y: each component by ``_add_part`` (2Sums for the first two orders, the third in
        floating point), the rounding bounded from the computed s2, g, t2 (Lemma 2).  Large
        arrays run as one compiled loop with the same operations."""
        if _compiled("add", max(self.r0.size, other.r0.size)):
            return _run_loop("add", self, other)
        return _blocked(_add_kernel, self, other)

    def sub(self, other: "TD") -> "TD":
        return self.add(other.neg())

    def mul(self, other: "TD") -> "TD":
        """(ar + i ai)(br + i bi): the midpoints by ``_prod_part`` per component with the a-priori
        bound of Lemma 3 from A_k = |ar_k| + |ai_k|, B_k; the radii by |x y - a b| <= |a| rad_y +
        rad_x |b| + rad_x rad_y; all summed in floating point, then ``_finish`` (Lemma 4).
        Large arrays run as one compiled loop with the same operations."""
        if _compiled("mul", max(self.r0.size, other.r0.size)):
            return _run_loop("mul", self, other)
        return _blocked(_mul_kernel, self, other)

    def square(self) -> "TD":
        """x x: ``mul(x, x)`` (the same operations; |x^2 - m^2| <= 2 |m| rad + rad^2)."""
        return self.mul(self)

    def scale(self, c: float) -> "TD":
        """Multiplication by a real float c: by a power of two (either sign) each part is scaled
        exactly unless it underflows (Lemma 4); any other finite c by ``mul`` with the point c."""
        if not (isinstance(c, (int, float, np.floating)) and math.isfinite(c)):
            raise ValueError("scale takes a finite real float")
        c = float(c)
        if c != 0 and abs(c) == 2.0 ** round(math.log2(abs(c))):
            parts = [a * c for a in self._arrays()[:6]]
            return self._make(*parts, up(up(self.rad * abs(c)) + 6 * TINY_TD))
        return self.mul(TD.exact(np.full(self.shape, c)))

    def inv(self) -> "TD":
        """1/x for every x in the disks, bounded a posteriori: y from y0 = conj(m') / |m'|^2
        (m' the midpoint's first two parts rounded), one Newton step on double-double pairs
        and one on triples, then q >= |1 - x y| over the disk (|1 - m y| from ``mul``'s
        midpoint and bound, plus rad |y|); if q <= 1/2 the disk excludes 0 and |1/x - y| <=
        |y| q / (1 - q) <= |y| q (1 + 2 q).  RangeError otherwise (Lemma 6).  Large arrays run
        as one compiled loop with the same operations."""
        if _compiled("inv", self.r0.size):
            return _run_loop("inv", self)
        return _blocked(_inv_kernel, self)

    def div(self, other: "TD") -> "TD":
        """x / y as x (1/y) (``inv``, then ``mul``)."""
        return self.mul(other.inv())

    def abs_upper(self) -> np.ndarray:
        """Upper bounds of |x| over each disk."""
        return up(self.mid_abs() + self.rad)

    def abs_lower(self) -> np.ndarray:
        """Lower bounds of |x| over each disk (0 where it may contain 0):
        |x| >= max(|re mid|, |im mid|) - rad, with |p0 + p1 + p2| >= |p0| - |p1| - |p2| rounded down."""
        lr = np.nextafter(np.nextafter(np.abs(self.r0) - np.abs(self.r1), -np.inf) - np.abs(self.r2), -np.inf)
        li = np.nextafter(np.nextafter(np.abs(self.i0) - np.abs(self.i1), -np.inf) - np.abs(self.i2), -np.inf)
        return np.maximum(np.nextafter(np.maximum(lr, li) - self.rad, -np.inf), 0.0)

    def contains(self, values) -> np.ndarray:
        """Whether each complex128 value lies certainly in its disk: True only when an upper
        bound of |value - mid| is <= rad (so it may say False on the boundary; Lemma 1)."""
        v = np.broadcast_to(np.asarray(values, dtype=np.complex128), self.shape)
        dr = _distance_upper(v.real, self.r0, self.r1, self.r2)
        di = _distance_upper(v.imag, self.i0, self.i1, self.i2)
        return ((dr == 0) & (di == 0)) | (up(np.sqrt(up(up(dr * dr) + up(di * di)))) <= self.rad)

    def reshape(self, *shape) -> "TD":
        return TD(*(a.reshape(*shape) for a in self._arrays()))

    def to_dd(self):
        """Double-double disks containing these: pairs (p0, fl(p1 + p2)), the rounding
        (at most u |fl(p1 + p2)| per component) in the radius (Lemma 1)."""
        from .double_double import DD

        rl, il = self.r1 + self.r2, self.i1 + self.i2
        rad = up(self.rad + up(_UF * up(np.abs(rl) + np.abs(il))))
        _check(rl, il, rad)
        return DD(self.r0.copy(), rl, self.i0.copy(), il, rad)

    def to_balls(self, prec: int = 400) -> list:
        """Each disk as an acb ball that contains it: the three parts of each component summed
        exactly (at 2200 bits), then rounded to a ball at ``prec`` bits, widened by rad."""
        from flint import acb, arb, ctx

        out = []
        cols = [a.ravel().tolist() for a in self._arrays()]
        with ctx.workprec(2200):
            mids = [(arb(a) + arb(b) + arb(c), arb(d) + arb(e) + arb(f)) for a, b, c, d, e, f, _ in zip(*cols)]
        with ctx.workprec(prec):
            for (re, im), rad in zip(mids, cols[6]):
                w = arb(0, rad) if rad > 0 else arb(0)
                out.append(acb(+re + w, +im + w))
        return out


#: elements per block of the array operations (their temporaries stay in the cache)
BLOCK = 1 << 14


def _blocked(kernel, *operands: TD) -> TD:
    """``kernel`` on the operands broadcast to one shape and flattened, block by block (every
    output block range-checked), as one TD of that shape."""
    shape = np.broadcast_shapes(*(x.shape for x in operands))
    n = math.prod(shape)
    flat = [TD(*(np.ascontiguousarray(np.broadcast_to(a, shape)).reshape(-1) for a in x._arrays()))
            for x in operands]
    if n <= BLOCK:
        out = kernel(*flat)
        _check(*out)
        return TD(*(a.reshape(shape) for a in out))
    res = [np.empty(n) for _ in _FIELDS]
    for i in range(0, n, BLOCK):
        block = kernel(*(x[i:i + BLOCK] for x in flat))
        _check(*block)
        for r, b in zip(res, block):
            r[i:i + BLOCK] = b
    return TD(*(a.reshape(shape) for a in res))


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
    double-double pairs (the residual by ``dd_kernels._cmul`` from x's first two parts), then
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
    y1 = TD(yrh, yrl, zero, yih, yil, zero, zero)
    p = _cmul_mid(x, y1)
    rr = ((1.0 - p[0]) - p[1]) - p[2]
    ri = -((p[3] + p[4]) + p[5])
    dr = yrh * rr - yih * ri
    di = yrh * ri + yih * rr
    return TD(*_renorm3(yrh, yrl, dr), *_renorm3(yih, yil, di), zero)


def normalized(x: TD) -> TD:
    """The same disks with each component's triple renormalized by 2Sums (exact: the same
    values), so |p2| <= u |p1|."""
    return TD(*_renorm3(x.r0, x.r1, x.r2), *_renorm3(x.i0, x.i1, x.i2), x.rad)


def concat(parts: list[TD], axis: int = 0) -> TD:
    """The disks of ``parts`` side by side (``np.concatenate`` of every array)."""
    return TD(*(np.concatenate([getattr(p, f) for p in parts], axis=axis) for f in _FIELDS))


# -- conversions -----------------------------------------------------------------------------

def _td_parts(x, float_upper) -> tuple[float, float, float, float]:
    """(p0, p1, p2, err) with |x - p0 - p1 - p2| <= err for every point of the real ball x: the
    rounded midpoints of x, x - p0 and x - p0 - p1, err an upper bound of the ball
    |x - p0 - p1 - p2| (at the current precision, the rounding in the radius; Lemma 7)."""
    p0 = float(x.mid())
    rest = x - p0
    p1 = float(rest.mid())
    rest = rest - p1
    p2 = float(rest.mid())
    return p0, p1, p2, float_upper(abs(rest - p2))


def td_of_balls(balls: list, prec: int = 400) -> TD:
    """Triple-double disks containing the acb balls (each point of each ball), with a radius
    per element: relative to the element (about 2^-159 |x| plus the ball's own radius)."""
    from flint import ctx

    from .ball import float_upper

    parts = []
    with ctx.workprec(prec):
        for b in balls:
            if not b.is_finite():
                raise RangeError("a ball is not finite")
            parts.append(_td_parts(b.real, float_upper) + _td_parts(b.imag, float_upper))
    a = np.array(parts, dtype=np.float64).reshape(len(balls), 8)   # r0, r1, r2, er, i0, i1, i2, ei
    return TD.from_parts(a[:, 0] + 1j * a[:, 4], a[:, 1] + 1j * a[:, 5], a[:, 2] + 1j * a[:, 6],
                         up(a[:, 3] + a[:, 7]))


@lru_cache(maxsize=8)
def _roots_table(M: int) -> tuple[np.ndarray, ...]:
    from flint import arb, ctx, fmpq

    from .ball import float_upper

    E = max(M // 8, 1)
    c, s = np.empty((E + 1, 4)), np.empty((E + 1, 4))
    with ctx.workprec(256):
        for k in range(E + 1):
            sk, ck = arb.sin_cos_pi_fmpq(fmpq(2 * k, M))
            c[k], s[k] = _td_parts(ck, float_upper), _td_parts(sk, float_upper)
    k = np.arange(M)
    quadrant, kk = divmod(k, max(M // 4, 1)) if M >= 4 else (k * (4 // M), np.zeros(M, dtype=int))
    swap = kk > E
    j = np.where(swap, max(M // 4, 1) - kk, kk)
    re = np.where(swap[:, None], s[j], c[j])          # cos(2 pi kk / M): (p0, p1, p2, err)
    im = -np.where(swap[:, None], c[j], s[j])         # -sin(2 pi kk / M); the error bound negated too
    im[:, 3] = -im[:, 3]
    for q in (1, 2, 3):                                # times (-i)^q: (re, im) -> (im, -re), exactly
        sel = quadrant == q
        for _ in range(q):
            re_q, im_q = im[sel].copy(), re[sel].copy()
            im_q[:, :3] = -im_q[:, :3]
            re[sel], im[sel] = re_q, im_q
    out = tuple(re[:, p] + 1j * im[:, p] for p in range(3)) + (up(re[:, 3] + im[:, 3]),)
    for a in out:
        a.setflags(write=False)
    return out


def roots_of_unity_td(M: int) -> TD:
    """The disks of z_k = exp(-2 pi i k / M), k < M, around triple-double midpoints, each with
    its own radius (the error of its triple, bounded from a 256-bit enclosure): from cos and
    sin at the M/8 + 1 angles of the first octant, the rest by exact swaps and sign changes
    (as ``arith.double_double.roots_of_unity_dd``).  Cached per M."""
    if M < 1 or M & (M - 1):
        raise ValueError(f"M must be a power of two, got {M}")
    p0, p1, p2, rad = _roots_table(M)
    return TD.from_parts(p0, p1, p2, rad)


# -- compiled loops ----------------------------------------------------------------------------
#
# ``TD.add``, ``TD.mul`` and ``TD.inv`` on large arrays run as one compiled loop over the elements
# (numba, the optional extra ``fast``) performing, per element, the operations of the array forms
# above (``_add_kernel``, ``_mul_kernel``, ``_inv_kernel`` and what they call) on the same operands
# in the same order; ``arith.compiled.jit`` compiles without fast-math flags, so nothing is fused or
# reassociated and the results are the same numbers (``_mul_radius`` skips only terms that are
# exact zeros, which the loop adds).  Before first use ``_loops_agree`` runs both forms on probe
# disks and a loop is used only when every output agrees bitwise (the helpers are inlined into
# the loops, which LLVM then vectorizes; numba caches the loops); ``S4CERT_COMPILED=0`` turns
# them off (``arith.compiled.wanted``).

#: arrays with fewer elements than this stay on numpy
MIN_COMPILED = 1 << 12
#: ``up``'s factor and term, as module constants for the loops (numba caches loops that read globals)
_UP, _UPA = 1.0 + 4 * U, 4 * UNDERFLOW
#: the loops' refusal codes: a part or radius out of range, a zero midpoint, q > 1/2
_RANGE, _ZERO, _NEAR_ZERO = 1, 2, 3
_MESSAGES = {_RANGE: "a triple-double part or radius is not finite or exceeds 2^500",
             _ZERO: "a divisor's midpoint is 0 or out of range",
             _NEAR_ZERO: "a divisor is not certainly nonzero (or its inverse not accurate)"}


@lru_cache(maxsize=1)
def _loops():
    global _jit_split_, _jit_two_sum_, _jit_dekker_masked, _jit_dekker, _jit_up_, _jit_bad, _jit_part_minus, _jit_part_plus, _jit_cmul_mid, _jit_terms, _jit_mid_abs, _jit_renorm3, _jit_add_part, _jit_cmul_dd_real  # loops that read globals are cached by numba
    from .compiled import installed, jit

    if not installed():
        return None
    import numba

    def inline(f):
        """A helper inlined into the loops (numba's IR), with jit's settings: no fast-math flags."""
        return numba.njit(inline="always", nogil=True, error_model="numpy")(f)

    def _jit_up_(x):  # pragma: no cover (compiled)
        return x * _UP + _UPA

    def _jit_bad(x):  # pragma: no cover (compiled): _check fails
        return not (x <= BIG and x >= -BIG)

    def _jit_split_(a):  # pragma: no cover (compiled)
        c = a * _SPLIT
        h = c - (c - a)
        return h, a - h

    def _jit_two_sum_(a, b):  # pragma: no cover (compiled)
        s = a + b
        bb = s - a
        return s, (a - (s - bb)) + (b - bb)

    def _jit_dekker(aH, aL, bH, bL, p):  # pragma: no cover (compiled)
        return (((aH * bH - p) + aH * bL) + aL * bH) + aL * bL

    def _jit_dekker_masked(aH, aL, bH, bL, p):  # pragma: no cover (compiled)
        e = (((aH * bH - p) + aH * bL) + aL * bH) + aL * bL
        return e * (1.0 if abs(p) >= _TP_MIN else 0.0)

    _jit_split_, _jit_two_sum_, _jit_dekker, _jit_dekker_masked, _jit_up_, _jit_bad = (
        inline(f) for f in (_jit_split_, _jit_two_sum_, _jit_dekker, _jit_dekker_masked, _jit_up_, _jit_bad))

    def _jit_part_minus(a0, a1, a2, b0, b1, b2, c0, c1, c2, d0, d1, d2):  # pragma: no cover (compiled)
        a0H, a0L = _jit_split_(a0)
        a1H, a1L = _jit_split_(a1)
        b0H, b0L = _jit_split_(b0)
        b1H, b1L = _jit_split_(b1)
        c0H, c0L = _jit_split_(c0)
        c1H, c1L = _jit_split_(c1)
        d0H, d0L = _jit_split_(d0)
        d1H, d1L = _jit_split_(d1)
        P = a0 * b0
        eP = _jit_dekker(a0H, a0L, b0H, b0L, P)
        Q = c0 * d0
        eQ = _jit_dekker(c0H, c0L, d0H, d0L, Q)
        Q, eQ = -Q, -eQ
        s, g = _jit_two_sum_(P, Q)
        h1 = a0 * b1
        f1 = _jit_dekker(a0H, a0L, b1H, b1L, h1)
        h2 = a1 * b0
        f2 = _jit_dekker(a1H, a1L, b0H, b0L, h2)
        h3 = c0 * d1
        f3 = _jit_dekker(c0H, c0L, d1H, d1L, h3)
        h4 = c1 * d0
        f4 = _jit_dekker(c1H, c1L, d0H, d0L, h4)
        k1, q1 = _jit_two_sum_(h1, h2)
        k2, q2 = _jit_two_sum_(h3, h4)
        k2, q2 = -k2, -q2
        k3, q3 = _jit_two_sum_(k1, k2)
        k4, q4 = _jit_two_sum_(eP, eQ)
        k5, q5 = _jit_two_sum_(k3, k4)
        k6, q6 = _jit_two_sum_(k5, g)
        D = ((q1 + q2) + (q3 + q4)) + (q5 + q6)
        F = (f1 + f2) - (f3 + f4)
        pp = (a0 * b2 + a1 * b1) + a2 * b0
        rr = (c0 * d2 + c1 * d1) + c2 * d0
        Pi = pp - rr
        S2 = D + (F + Pi)
        h, t = _jit_two_sum_(s, k6)
        m, l = _jit_two_sum_(t, S2)
        return h, m, l


    def _jit_part_plus(a0, a1, a2, b0, b1, b2, c0, c1, c2, d0, d1, d2):  # pragma: no cover (compiled)
        a0H, a0L = _jit_split_(a0)
        a1H, a1L = _jit_split_(a1)
        b0H, b0L = _jit_split_(b0)
        b1H, b1L = _jit_split_(b1)
        c0H, c0L = _jit_split_(c0)
        c1H, c1L = _jit_split_(c1)
        d0H, d0L = _jit_split_(d0)
        d1H, d1L = _jit_split_(d1)
        P = a0 * b0
        eP = _jit_dekker(a0H, a0L, b0H, b0L, P)
        Q = c0 * d0
        eQ = _jit_dekker(c0H, c0L, d0H, d0L, Q)
        s, g = _jit_two_sum_(P, Q)
        h1 = a0 * b1
        f1 = _jit_dekker(a0H, a0L, b1H, b1L, h1)
        h2 = a1 * b0
        f2 = _jit_dekker(a1H, a1L, b0H, b0L, h2)
        h3 = c0 * d1
        f3 = _jit_dekker(c0H, c0L, d1H, d1L, h3)
        h4 = c1 * d0
        f4 = _jit_dekker(c1H, c1L, d0H, d0L, h4)
        k1, q1 = _jit_two_sum_(h1, h2)
        k2, q2 = _jit_two_sum_(h3, h4)
        k3, q3 = _jit_two_sum_(k1, k2)
        k4, q4 = _jit_two_sum_(eP, eQ)
        k5, q5 = _jit_two_sum_(k3, k4)
        k6, q6 = _jit_two_sum_(k5, g)
        D = ((q1 + q2) + (q3 + q4)) + (q5 + q6)
        F = (f1 + f2) + (f3 + f4)
        pp = (a0 * b2 + a1 * b1) + a2 * b0
        rr = (c0 * d2 + c1 * d1) + c2 * d0
        Pi = pp + rr
        S2 = D + (F + Pi)
        h, t = _jit_two_sum_(s, k6)
        m, l = _jit_two_sum_(t, S2)
        return h, m, l

    _jit_part_minus, _jit_part_plus = inline(_jit_part_minus), inline(_jit_part_plus)

    def _jit_cmul_mid(xr0, xr1, xr2, xi0, xi1, xi2, yr0, yr1, yr2, yi0, yi1, yi2):  # pragma: no cover
        a, b, c = _jit_part_minus(xr0, xr1, xr2, yr0, yr1, yr2, xi0, xi1, xi2, yi0, yi1, yi2)
        d, e, f = _jit_part_plus(xr0, xr1, xr2, yi0, yi1, yi2, xi0, xi1, xi2, yr0, yr1, yr2)
        return a, b, c, d, e, f

    def _jit_terms(A0, A1, A2, B0, B1, B2):  # pragma: no cover (compiled)
        t = (A0 * B0) * C_00
        t = t + ((A0 * B1) + A1 * B0) * C_01
        t = t + (((A0 * B2) + A1 * B1) + A2 * B0) * C_02
        return t + (((A1 * B2) + A2 * B1) + A2 * B2)

    def _jit_mid_abs(r0, r1, r2, i0, i1, i2):  # pragma: no cover (compiled)
        a = (abs(r0) + abs(r1)) + abs(r2)
        b = (abs(i0) + abs(i1)) + abs(i2)
        return np.sqrt(a * a + b * b) * (1.0 + 2.0 ** -50) + 2.0 ** -535

    def _jit_renorm3(a, b, c):  # pragma: no cover (compiled)
        s, t = _jit_two_sum_(b, c)
        h, m = _jit_two_sum_(a, s)
        m, l = _jit_two_sum_(m, t)
        return h, m, l

    def _jit_add_part(x0, x1, x2, y0, y1, y2):  # pragma: no cover (compiled)
        s0, e0 = _jit_two_sum_(x0, y0)
        s1, e1 = _jit_two_sum_(x1, y1)
        s2 = x2 + y2
        t1, f1 = _jit_two_sum_(e0, s1)
        g = e1 + s2
        t2 = g + f1
        h, a = _jit_two_sum_(s0, t1)
        m, l = _jit_two_sum_(a, t2)
        return h, m, l, (abs(s2) + abs(g)) + abs(t2)

    _jit_cmul_mid, _jit_terms, _jit_mid_abs, _jit_renorm3, _jit_add_part = (inline(f) for f in (_jit_cmul_mid, _jit_terms, _jit_mid_abs, _jit_renorm3, _jit_add_part))

    def add(xr0, xr1, xr2, xi0, xi1, xi2, xrad, yr0, yr1, yr2, yi0, yi1, yi2, yrad,
            R0, R1, R2, I0, I1, I2, RAD):  # pragma: no cover (compiled)
        fail = False
        for k in range(xr0.shape[0]):
            r0, r1, r2, sr = _jit_add_part(xr0[k], xr1[k], xr2[k], yr0[k], yr1[k], yr2[k])
            i0, i1, i2, si = _jit_add_part(xi0[k], xi1[k], xi2[k], yi0[k], yi1[k], yi2[k])
            t = (sr + si) * _UF
            rad = _jit_up_(_jit_up_(xrad[k] + yrad[k]) + _jit_up_(t))
            R0[k], R1[k], R2[k], I0[k], I1[k], I2[k], RAD[k] = r0, r1, r2, i0, i1, i2, rad
            fail = fail | _jit_bad(r0) | _jit_bad(r1) | _jit_bad(r2) | _jit_bad(i0) | _jit_bad(i1) | _jit_bad(i2) | _jit_bad(rad)
        return fail

    def mul(xr0, xr1, xr2, xi0, xi1, xi2, xrad, yr0, yr1, yr2, yi0, yi1, yi2, yrad,
            R0, R1, R2, I0, I1, I2, RAD):  # pragma: no cover (compiled)
        fail = False
        for k in range(xr0.shape[0]):
            a0, a1, a2, c0, c1, c2 = xr0[k], xr1[k], xr2[k], xi0[k], xi1[k], xi2[k]
            b0, b1, b2, d0, d1, d2 = yr0[k], yr1[k], yr2[k], yi0[k], yi1[k], yi2[k]
            r0, r1, r2 = _jit_part_minus(a0, a1, a2, b0, b1, b2, c0, c1, c2, d0, d1, d2)
            i0, i1, i2 = _jit_part_plus(a0, a1, a2, d0, d1, d2, c0, c1, c2, b0, b1, b2)
            t = _jit_terms(abs(a0) + abs(c0), abs(a1) + abs(c1), abs(a2) + abs(c2),
                      abs(b0) + abs(d0), abs(b1) + abs(d1), abs(b2) + abs(d2))
            t = t + _jit_mid_abs(a0, a1, a2, c0, c1, c2) * yrad[k]
            t = t + xrad[k] * _jit_mid_abs(b0, b1, b2, d0, d1, d2)
            t = t + xrad[k] * yrad[k]
            t = t * _FIN + TINY_TD
            R0[k], R1[k], R2[k], I0[k], I1[k], I2[k], RAD[k] = r0, r1, r2, i0, i1, i2, t
            fail = fail | _jit_bad(r0) | _jit_bad(r1) | _jit_bad(r2) | _jit_bad(i0) | _jit_bad(i1) | _jit_bad(i2) | _jit_bad(t)
        return fail

    def _jit_cmul_dd_real(xrh, xrl, xih, xil, yrh, yih):  # pragma: no cover (compiled)
        """dd_kernels._cmul(x pairs, (yrh, 0), (yih, 0), bound=False), operation for operation."""
        yrl = 0.0
        yil = 0.0
        xrH, xrL = _jit_split_(xrh)
        xiH, xiL = _jit_split_(xih)
        yrH, yrL = _jit_split_(yrh)
        yiH, yiL = _jit_split_(yih)
        p1, p2, p3, p4 = xrh * yrh, xih * yih, xrh * yih, xih * yrh
        e1, e2 = _jit_dekker_masked(xrH, xrL, yrH, yrL, p1), _jit_dekker_masked(xiH, xiL, yiH, yiL, p2)
        e3, e4 = _jit_dekker_masked(xrH, xrL, yiH, yiL, p3), _jit_dekker_masked(xiH, xiL, yrH, yrL, p4)
        s, g = _jit_two_sum_(p1, -p2)
        c = (xrh * yrl + xrl * yrh) - (xih * yil + xil * yih)
        g = g + ((e1 - e2) + c)
        rh, rl = _jit_two_sum_(s, g)
        s, g = _jit_two_sum_(p3, p4)
        c = (xrh * yil + xrl * yih) + (xih * yrl + xil * yrh)
        g = g + ((e3 + e4) + c)
        ih, il = _jit_two_sum_(s, g)
        return rh, rl, ih, il

    _jit_cmul_dd_real = inline(_jit_cmul_dd_real)

    def inv(xr0, xr1, xr2, xi0, xi1, xi2, xrad, R0, R1, R2, I0, I1, I2, RAD, flags):  # pragma: no cover
        zero, rng, near = False, False, False
        for k in range(xr0.shape[0]):
            r0, r1, r2, i0, i1, i2, rho = xr0[k], xr1[k], xr2[k], xi0[k], xi1[k], xi2[k], xrad[k]
            a = r0 + r1
            b = i0 + i1
            n = a * a + b * b
            y0r = a / n
            y0i = -(b / n)
            zero = zero | (not (np.isfinite(y0r) and np.isfinite(y0i)))
            pr, prl, pi, pil = _jit_cmul_dd_real(r0, r1, i0, i1, y0r, y0i)
            rr = (1.0 - pr) - prl
            ri = -(pi + pil)
            yrh, yrl = _jit_two_sum_(y0r, y0r * rr - y0i * ri)
            yih, yil = _jit_two_sum_(y0i, y0r * ri + y0i * rr)
            rng = rng | _jit_bad(yrh) | _jit_bad(yih)
            p0, p1, p2, p3, p4, p5 = _jit_cmul_mid(r0, r1, r2, i0, i1, i2, yrh, yrl, 0.0, yih, yil, 0.0)
            rr = ((1.0 - p0) - p1) - p2
            ri = -((p3 + p4) + p5)
            yr0, yr1, yr2 = _jit_renorm3(yrh, yrl, yrh * rr - yih * ri)
            yi0, yi1, yi2 = _jit_renorm3(yih, yil, yrh * ri + yih * rr)
            rng = rng | _jit_bad(yr0) | _jit_bad(yr1) | _jit_bad(yr2) | _jit_bad(yi0) | _jit_bad(yi1) | _jit_bad(yi2)
            p0, p1, p2, p3, p4, p5 = _jit_cmul_mid(r0, r1, r2, i0, i1, i2, yr0, yr1, yr2, yi0, yi1, yi2)
            err = _jit_terms(abs(r0) + abs(i0), abs(r1) + abs(i1), abs(r2) + abs(i2),
                        abs(yr0) + abs(yi0), abs(yr1) + abs(yi1), abs(yr2) + abs(yi2)) * _FIN + TINY_TD
            a = 1.0 - p0
            b = a - p1
            c = b - p2
            re = _jit_up_(_jit_up_(((abs(a) + abs(b)) + abs(c)) * _UF) + abs(c))
            d = p3 + p4
            e = d + p5
            im = _jit_up_(_jit_up_((abs(d) + abs(e)) * _UF) + abs(e))
            r_mid = _jit_up_(np.sqrt(_jit_up_(_jit_up_(re * re) + _jit_up_(im * im))))
            ymod = _jit_mid_abs(yr0, yr1, yr2, yi0, yi1, yi2)
            q = _jit_up_(_jit_up_(r_mid + err) + _jit_up_(rho * ymod))
            near = near | (not q <= 0.5)
            rad = _jit_up_(_jit_up_(q * ymod) * _jit_up_(1.0 + 2 * q))
            R0[k], R1[k], R2[k], I0[k], I1[k], I2[k], RAD[k] = yr0, yr1, yr2, yi0, yi1, yi2, rad
            rng = rng | _jit_bad(rad)
        flags[0], flags[1], flags[2] = zero, rng, near

    return {"add": jit(add), "mul": jit(mul), "inv": jit(inv)}


def _flat(x: TD, shape: tuple) -> list:
    """x's seven arrays broadcast to ``shape``, flat and contiguous (copies only where needed)."""
    return [np.ascontiguousarray(np.broadcast_to(a, shape)).reshape(-1) for a in x._arrays()]


def _run_loop(name: str, *operands: TD) -> TD:
    """The compiled loop ``name`` on the operands (broadcast), raising as the array forms do."""
    shape = np.broadcast_shapes(*(x.shape for x in operands))
    n = math.prod(shape)
    out = [np.empty(n) for _ in _FIELDS]
    args = [a for x in operands for a in _flat(x, shape)] + out
    if name == "inv":
        flags = np.zeros(3, dtype=np.bool_)
        _loops()[name](*args, flags)
        for flag, code in zip(flags, (_ZERO, _RANGE, _NEAR_ZERO)):
            if flag:
                raise RangeError(_MESSAGES[code])
    elif _loops()[name](*args):
        raise RangeError(_MESSAGES[_RANGE])
    return TD(*(a.reshape(shape) for a in out))


def _probe_td(seed: int) -> tuple[TD, TD]:
    """Two arrays of probe disks: long mantissas, parts from 2^-60 to 2^60 and a few of 2^-460
    (products below Dekker's 2^-900) or 2^240, signed zeros, subnormal third parts, radii."""
    rng = np.random.default_rng(seed)
    n = 64

    def one() -> TD:
        parts = []
        for _ in range(2):
            h = rng.standard_normal(n) * 2.0 ** rng.integers(-60, 61, n)
            h[:4] = [0.0, -0.0, 2.0 ** -460, -(2.0 ** 240)]
            m = h * rng.uniform(-1, 1, n) * U
            lo = m * rng.uniform(-1, 1, n) * U
            lo[4:8] = [5e-324, -2.0 ** -1060, 0.0, -0.0]
            parts += [h, m, lo]
        r0, r1, r2, i0, i1, i2 = parts
        i0[:4] = [1.0, 2.0 ** -30, 3.0, -1.0]        # midpoints not zero (for the inverse)
        return TD(r0, r1, r2, i0, i1, i2, np.abs(h) * 2.0 ** rng.integers(-200, -20, n))
    return one(), one()


@lru_cache(maxsize=None)
def _loops_agree(name: str) -> bool:
    """Whether the compiled loop ``name`` ("add", "mul", "inv") runs here and gives bitwise the
    array form's results on the probe disks (``_probe_td``); each loop is compiled on its first
    check (numba caches it)."""
    from .compiled import same_floats

    if _loops() is None:
        return False
    x, y = _probe_td(20261202)
    small = TD(*(a * 2.0 ** -300 for a in x._arrays()))
    cases = {"add": [(_add_kernel, (x, y))], "mul": [(_mul_kernel, (x, y)), (_mul_kernel, (small, small))],
             "inv": [(_inv_kernel, (x,))]}[name]
    for kernel, ops in cases:
        want = _blocked(kernel, *ops)
        got = _run_loop(name, *ops)
        if not all(same_floats(a, b) for a, b in zip(want._arrays(), got._arrays())):
            return False
    return True


def _compiled(name: str, size: int) -> bool:
    """Run the compiled loop ``name`` on ``size`` elements: asked for, and bitwise the array form here."""
    from .compiled import wanted

    return wanted(size, MIN_COMPILED) and _loops_agree(name)
