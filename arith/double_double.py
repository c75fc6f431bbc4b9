"""Double-double midpoint-radius arithmetic on numpy arrays, rigorous under round to nearest.

A ``DD`` holds complex disks ``|x - mid| <= rad`` whose midpoints are unevaluated sums
``(re_hi + re_lo) + i (im_hi + im_lo)`` of float64 arrays.  The midpoints are computed with
error-free transformations (``two_sum``; ``two_prod`` by Veltkamp splitting and Dekker's
product, not relying on a fused multiply-add), and every operation bounds its own rounding
from the quantities it computed (a running error bound), rounded up as in
``arith.midrad.up``; inverses are bounded a posteriori from a residual.  Every operation
returns disks that contain the exact result of the same operation on any points of the
operand disks (``proofs/double_double_filter.md``).  Magnitudes above ``BIG = 2^500`` are
refused (``arith.midrad.RangeError``): below it no split, product or sum overflows.

>>> x = DD.exact([1 + 1j])
>>> y = x.mul(x.inv())
>>> bool(abs(y.mid_hi[0] - 1) <= 1e-30 and y.rad[0] <= 1e-30)
True
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .dd_eft import (TINY, _bound_terms, _cmul, _cmul_bound, _csquare, _finish, _moduli,  # noqa: F401
                         _modulus_upper, _real_add, add_pairs, mul_pairs, split, two_prod, two_sum)
from . import dd_jit
from .compiled import Gate
from .midrad import U, RangeError, up

#: magnitudes of midpoint parts and radii are kept at most this (no overflow anywhere below it)
BIG = 2.0 ** 500
def _abs1(h: np.ndarray, l: np.ndarray) -> np.ndarray:
    """An upper bound of |h + l|."""
    return up(np.abs(h) + np.abs(l))


def _check(*arrays: np.ndarray) -> None:
    for a in arrays:
        # -BIG <= min and max <= BIG (two reads, no temporary); NaN fails the comparisons
        if a.size and not (float(np.max(a)) <= BIG and float(np.min(a)) >= -BIG):
            raise RangeError("a double-double part or radius is not finite or exceeds 2^500")


@dataclass
class DD:
    """Complex disks with double-double midpoints: mid = (rh + rl) + i (ih + il)."""

    rh: np.ndarray
    rl: np.ndarray
    ih: np.ndarray
    il: np.ndarray
    rad: np.ndarray

    @classmethod
    def from_parts(cls, hi, lo, rad) -> "DD":
        """From complex arrays of high and low parts and radii (checked)."""
        hi = np.asarray(hi, dtype=np.complex128)
        lo = np.broadcast_to(np.asarray(lo, dtype=np.complex128), hi.shape)
        r = np.broadcast_to(np.asarray(rad, dtype=np.float64), hi.shape).copy()
        if np.any(np.isnan(r)) or np.any(r < 0):
            raise ValueError("radii must be >= 0")
        out = cls(hi.real.copy(), lo.real.copy(), hi.imag.copy(), lo.imag.copy(), r)
        _check(out.rh, out.rl, out.ih, out.il, r)
        return out

    def set_point(self, idx, value: float) -> None:
        """Make the disks at ``idx`` the exact real point ``value`` (in place)."""
        self.rh[idx], self.rl[idx], self.ih[idx], self.il[idx], self.rad[idx] = value, 0.0, 0.0, 0.0, 0.0

    @classmethod
    def exact(cls, values) -> "DD":
        """Points: complex128 values taken as exact."""
        v = np.asarray(values, dtype=np.complex128)
        return cls.from_parts(v, np.zeros(v.shape, complex), np.zeros(v.shape))

    def __len__(self) -> int:
        return len(self.rh)

    def __getitem__(self, idx) -> "DD":
        return DD(self.rh[idx], self.rl[idx], self.ih[idx], self.il[idx], self.rad[idx])

    @property
    def mid_hi(self) -> np.ndarray:
        return self.rh + 1j * self.ih

    def mid_complex(self) -> np.ndarray:
        """The midpoints rounded to complex128 (within 2u |mid| per component)."""
        return (self.rh + self.rl) + 1j * (self.ih + self.il)

    def mid_abs1(self) -> np.ndarray:
        """An upper bound of |mid| (real plus imaginary parts)."""
        return up(_abs1(self.rh, self.rl) + _abs1(self.ih, self.il))

    def mid_abs(self) -> np.ndarray:
        """An upper bound of |mid|: sqrt(A^2 + B^2) for A = |rh| + |rl|, B = |ih| + |il| (no
        sqrt(2) lost, which compounds over chains of products), from its rounded value w by
        fl(fl(w (1 + 2^-50)) + 2^-535) (proofs/double_double_filter.md, section 3)."""
        return _modulus_upper(_moduli(self.rh, self.rl, self.ih, self.il))

    def _make(self, rh, rl, ih, il, rad) -> "DD":
        _check(rh, ih, rad)  # |lo| <= u |hi| after two_sum, so the low parts are in range too
        return DD(rh, rl, ih, il, rad)

    def conj(self) -> "DD":
        return DD(self.rh, self.rl, -self.ih, -self.il, self.rad)

    def neg(self) -> "DD":
        return DD(-self.rh, -self.rl, -self.ih, -self.il, self.rad)

    def add(self, other: "DD") -> "DD":
        rh, rl, er = _real_add(self.rh, self.rl, other.rh, other.rl)
        ih, il, ei = _real_add(self.ih, self.il, other.ih, other.il)
        return self._make(rh, rl, ih, il, up(up(self.rad + other.rad) + up(er + ei)))

    def sub(self, other: "DD") -> "DD":
        return self.add(other.neg())

    def mul(self, other: "DD") -> "DD":
        """(ar + i ai)(br + i bi): the midpoints by the complex pair kernel ``_cmul`` with its
        a-priori error; the radii by |x y - a b| <= |a| rad_y + rad_x |b| + rad_x rad_y; the
        error and the radii's terms summed in floating point, then ``_finish`` (Lemma 4).
        Large arrays run as one compiled loop with the same operations (``dd_jit``)."""
        if self.rh.shape == other.rh.shape and COMPILED.use(self.rh.size):   # (the array form's broadcasting kept)
            *parts, failed = dd_jit.mul(self, other)
            return _checked(parts, failed)
        return _array_mul(self, other)

    def square(self) -> "DD":
        """x x: ``mul(x, x)`` with three real Dekker products (``_csquare``), its midpoint
        error bounded as mul's; the radius by |x^2 - m^2| <= 2 |m| rad + rad^2, computed as
        mul(x, x)'s (proofs/double_double_filter.md, Lemmas 3 and 4).  Large arrays run as one
        compiled loop with the same operations (``dd_jit``)."""
        if COMPILED.use(self.rh.size):
            *parts, failed = dd_jit.square(self)
            return _checked(parts, failed)
        return _array_square(self)

    def scale(self, c: float) -> "DD":
        """Multiplication by an exact power of two c <= 1 (exact unless it underflows)."""
        if not (0 < c <= 1 and c == 2.0 ** round(np.log2(c))):
            raise ValueError("scale takes a power of two in (0, 1]")
        return self._make(self.rh * c, self.rl * c, self.ih * c, self.il * c, up(up(self.rad * c) + 4 * TINY))

    def inv(self) -> "DD":
        """1/x for every x in the disks, bounded a posteriori: y from y0 = 1/fl(m) and one
        Newton step y0 + y0 (1 - m y0) (the residual by ``_cmul``), then q >= |1 - x y| over
        the disk (|1 - m y| from ``_cmul``'s pairs and error, plus rad |y|); if q <= 1/2 the
        disk excludes 0 and |1/x - y| = |y| |1 - x y| / |x y| <= 2 q |y|.  RangeError
        otherwise (proofs/double_double_filter.md, Lemma 5)."""
        m = (self.rh, self.rl, self.ih, self.il)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            y0 = 1.0 / ((self.rh + self.rl) + 1j * (self.ih + self.il))
        if not np.all(np.isfinite(y0)):
            raise RangeError("a divisor's midpoint is 0 or out of range")
        y0r, y0i, zero = y0.real.copy(), y0.imag.copy(), np.zeros(y0.shape)
        pr, prl, pi, pil, _ = _cmul(*m, y0r, zero, y0i, zero, bound=False)
        rr, ri = (1.0 - pr) - prl, -(pi + pil)               # 1 - m y0, to about u^2 (not relied on)
        yrh, yrl = two_sum(y0r, y0r * rr - y0i * ri)
        yih, yil = two_sum(y0i, y0r * ri + y0i * rr)
        y = DD(yrh, yrl, yih, yil, zero)
        _check(yrh, yih)
        mr, mrl, mi, mil, err = _cmul(*m, yrh, yrl, yih, yil)
        a = 1.0 - mr
        b = a - mrl                                          # Re(1 - m y) = b + two roundings
        c = np.abs(mi + mil)                                 # |Im(m y)| <= c (1 + u)
        re = up(np.abs(b) + up(U * up(np.abs(a) + np.abs(b))))
        im = up(c + U * c)
        r_mid = up(np.sqrt(up(up(re * re) + up(im * im))))
        ymod = y.mid_abs()
        q = up(up(r_mid + err) + up(self.rad * ymod))
        if not float(np.max(q, initial=0.0)) <= 0.5:
            raise RangeError("a divisor is not certainly nonzero (or its inverse not accurate)")
        return self._make(yrh, yrl, yih, yil, up(2 * up(q * ymod)))

    def abs_upper(self) -> np.ndarray:
        """Upper bounds of |x| over each disk."""
        return up(self.mid_abs() + self.rad)

    def abs_lower(self) -> np.ndarray:
        """Lower bounds of |x| over each disk (0 where it may contain 0):
        |x| >= max(|re mid|, |im mid|) - rad, with |h + l| >= |h| - |l| rounded down."""
        lr = np.nextafter(np.abs(self.rh) - np.abs(self.rl), -np.inf)
        li = np.nextafter(np.abs(self.ih) - np.abs(self.il), -np.inf)
        return np.maximum(np.nextafter(np.maximum(lr, li) - self.rad, -np.inf), 0.0)

    def reshape(self, *shape) -> "DD":
        return DD(*(a.reshape(*shape) for a in (self.rh, self.rl, self.ih, self.il, self.rad)))


#: ``dd_jit``'s loops, from ``dd_jit.MIN_ELEMENTS`` elements on, where they gave bitwise the
#: array forms' results on its probe disks
COMPILED = Gate("double-double product and square", dd_jit.MIN_ELEMENTS,
                lambda: dd_jit.agrees(_array_square, _array_mul, DD))


def _checked(parts: list, failed: bool) -> DD:
    if failed:
        raise RangeError("a double-double part or radius is not finite or exceeds 2^500")
    return DD(*parts)


def _array_mul(x: DD, y: DD) -> DD:
    """``DD.mul`` by numpy passes."""
    rh, rl, ih, il, _ = _cmul(x.rh, x.rl, x.ih, x.il, y.rh, y.rl, y.ih, y.il, bound=False)
    xa, ya = _moduli(x.rh, x.rl, x.ih, x.il), _moduli(y.rh, y.rl, y.ih, y.il)
    t = _bound_terms(xa, ya)
    t += _modulus_upper(xa) * y.rad
    t += x.rad * _modulus_upper(ya)
    t += x.rad * y.rad
    return x._make(rh, rl, ih, il, _finish(t))


def _array_square(x: DD) -> DD:
    """``DD.square`` by numpy passes."""
    rh, rl, ih, il, _ = _csquare(x.rh, x.rl, x.ih, x.il)
    xa = _moduli(x.rh, x.rl, x.ih, x.il)
    t = _bound_terms(xa, xa)                       # mul(x, x)'s radius, operation for operation
    aa = _modulus_upper(xa)
    t += aa * x.rad
    t += x.rad * aa
    t += x.rad * x.rad
    return x._make(rh, rl, ih, il, _finish(t))


def normalized(x: DD) -> DD:
    """The same disks with each part's pair renormalized by 2Sum (exact: the same values),
    so |lo| <= u |hi|."""
    rh, rl = two_sum(x.rh, x.rl)
    ih, il = two_sum(x.ih, x.il)
    return DD(rh, rl, ih, il, x.rad)


def concat(parts: list[DD], axis: int = 0) -> DD:
    """The disks of ``parts`` side by side (``np.concatenate`` of every array)."""
    return DD(*(np.concatenate([getattr(p, f) for p in parts], axis=axis) for f in ("rh", "rl", "ih", "il", "rad")))


def _dd_of_real(x, prec: int) -> tuple[float, float, float]:
    """(hi, lo, err) with |x - hi - lo| <= err for every point of the real ball x: hi and lo
    the rounded midpoints of x and of the ball x - hi, err an upper bound of the ball
    |x - hi - lo| (formed at ``prec`` bits, the rounding in the radius)."""
    from flint import ctx

    with ctx.workprec(prec):
        return _dd_parts(x)


def _dd_parts(x, float_upper=None) -> tuple[float, float, float]:
    """``_dd_of_real`` at the current precision (the caller sets it; ``float_upper`` is
    ``arith.ball.float_upper``, passed by callers in a loop)."""
    if float_upper is None:
        from .ball import float_upper

    hi = float(x.mid())
    rest = x - hi
    lo = float(rest.mid())
    return hi, lo, float_upper(abs(rest - lo))  # the ball x - hi - lo, its rounding in its radius


@lru_cache(maxsize=8)
def _roots_table(M: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from flint import arb, ctx, fmpq

    E = max(M // 8, 1)
    c, s = np.empty((E + 1, 3)), np.empty((E + 1, 3))
    with ctx.workprec(128):
        for k in range(E + 1):
            sk, ck = arb.sin_cos_pi_fmpq(fmpq(2 * k, M))
            c[k], s[k] = _dd_of_real(ck, 192), _dd_of_real(sk, 192)
    k = np.arange(M)
    quadrant, kk = divmod(k, max(M // 4, 1)) if M >= 4 else (k * (4 // M), np.zeros(M, dtype=int))
    swap = kk > E
    j = np.where(swap, max(M // 4, 1) - kk, kk)
    re = np.where(swap[:, None], s[j], c[j])          # cos(2 pi kk / M): (hi, lo, err)
    im = -np.where(swap[:, None], c[j], s[j])         # -sin(2 pi kk / M); the error bound negated too
    im[:, 2] = -im[:, 2]
    for q in (1, 2, 3):                                # times (-i)^q: (re, im) -> (im, -re), exactly
        sel = quadrant == q
        for _ in range(q):
            re_q, im_q = im[sel].copy(), re[sel].copy()
            im_q[:, :2] = -im_q[:, :2]
            re[sel], im[sel] = re_q, im_q
    out = (re[:, 0] + 1j * im[:, 0], re[:, 1] + 1j * im[:, 1], up(re[:, 2] + im[:, 2]))
    for a in out:
        a.setflags(write=False)
    return out


def roots_of_unity_dd(M: int) -> DD:
    """The disks of z_k = exp(-2 pi i k / M), k < M, around double-double midpoints, each
    with its own radius (the error of its pair, bounded from a 192-bit enclosure): from
    cos and sin at the M/8 + 1 angles of the first octant, the rest by exact swaps and sign
    changes.  Cached per M."""
    if M < 1 or M & (M - 1):
        raise ValueError(f"M must be a power of two, got {M}")
    hi, lo, rad = _roots_table(M)
    return DD.from_parts(hi, lo, rad)
