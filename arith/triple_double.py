"""Triple-double midpoint-radius arithmetic on numpy arrays, rigorous under round to nearest.

A ``TD`` holds complex disks ``|x - mid| <= rad`` whose midpoints are unevaluated sums of three
float64 arrays per component, ``(r0 + r1 + r2) + i (i0 + i1 + i2)``: about 2^-150 relative
accuracy, the rung above ``arith.double_double``.  The midpoints are computed with error-free
transformations (``two_sum``; Veltkamp's ``split`` and Dekker's product, without a fused
multiply-add, from ``arith.dd_eft``); every operation bounds its own rounding (from the
quantities it computed, or a priori from the operands' parts), rounded up as in
``arith.midrad.up``; inverses are bounded a posteriori from a residual.  Every operation
returns disks that contain the exact result of the same operation on any points of the
operand disks (``proofs/triple_double.md``).  Parts and radii above ``BIG = 2^500`` in
magnitude are refused (``arith.midrad.RangeError``): below it no split, product or sum
overflows; tiny values cost an absolute allowance of at most ``TINY_TD = 2^-938`` per
operation (Dekker's products below 2^-900 are not relied on).  The operations run on whole
arrays in blocks of 2^14 elements (numpy), or, on arrays of at least 2^12 elements and with
numba installed, as compiled loops that are bitwise the array forms (``arith.td_jit``, each
behind its gate, checked on probes before first use; ``S4CERT_COMPILED=0`` turns them off).
The error-free kernels and the operations' array forms are in ``arith.td_eft``.

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

from . import td_jit
from .compiled import Gate
from .midrad import U, RangeError, up
from .td_eft import (_FIELDS, _UF, BIG, C_ADD, C_INV, C_MUL, TINY_TD, _add_kernel, _check,  # noqa: F401 (the API)
                         _distance_upper, _inv_kernel, _modulus_upper, _mul_kernel, _renorm3, _sum3_abs)


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
        if ADD.use(max(self.r0.size, other.r0.size)):
            return _run_loop("add", self, other)
        return _blocked(_add_kernel, self, other)

    def sub(self, other: "TD") -> "TD":
        return self.add(other.neg())

    def mul(self, other: "TD") -> "TD":
        """(ar + i ai)(br + i bi): the midpoints by ``_prod_part`` per component with the a-priori
        bound of Lemma 3 from A_k = |ar_k| + |ai_k|, B_k; the radii by |x y - a b| <= |a| rad_y +
        rad_x |b| + rad_x rad_y; all summed in floating point, then ``_finish`` (Lemma 4).
        Large arrays run as one compiled loop with the same operations."""
        if MUL.use(max(self.r0.size, other.r0.size)):
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
        if INV.use(self.r0.size):
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
# ``TD.add``, ``TD.mul`` and ``TD.inv`` on arrays of at least ``td_jit.MIN_ELEMENTS`` elements run as
# one compiled loop over the elements (``arith.td_jit``: per element the operations of the array forms
# ``_add_kernel``, ``_mul_kernel``, ``_inv_kernel``, on the same operands in the same order; the
# results are the same numbers, as ``_mul_radius`` skips only terms that are exact zeros, which the
# loop adds), each behind its gate: open where its probe gave bitwise the array form's results.


def _gate(name: str, loop: str, kernel) -> Gate:
    return Gate(name, td_jit.MIN_ELEMENTS, lambda: td_jit.agrees(loop, lambda *ops: _blocked(kernel, *ops), TD))


ADD = _gate("triple-double sum", "add", _add_kernel)
MUL = _gate("triple-double product", "mul", _mul_kernel)
INV = _gate("triple-double inverse", "inv", _inv_kernel)


def _run_loop(name: str, *operands: TD) -> TD:
    """The compiled loop ``name`` on the operands (broadcast), raising as the array forms do."""
    shape = np.broadcast_shapes(*(x.shape for x in operands))
    return TD(*td_jit.run(name, [list(x._arrays()) for x in operands], shape))
