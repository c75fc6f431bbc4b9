"""Midpoint-radius arithmetic on float64 arrays, rigorous under round to nearest.

An ``MR`` holds a complex128 array of midpoints and a float64 array of radii: the
disks ``|x - mid| <= rad``.  Every operation returns disks that contain the exact
result of the same operation on any points of the operand disks.  Nothing changes the
rounding mode: midpoints are computed in round to nearest with an a-priori bound on
their rounding error (``U = 2^-53`` per operation), and radii are computed with every
operation's rounded result x bounded by ``x (1 + 4u) + 2^-1070`` (at least the exact
result of one rounding to nearest, underflow included), and lower bounds one step down
(``np.nextafter(x, -inf)``).  ``proofs/midrad_filter.md`` proves each rule; the operations refuse (``RangeError``) magnitudes outside
``[2^-400, 2^400]`` where a bound would need the subnormal or overflow range.

Zero tests are three-valued per entry (``certainly_nonzero`` is the TRUE/FALSE mask
of "excludes zero"; a disk that contains zero is UNKNOWN unless it is the point 0).

>>> x = MR.from_parts([1 + 1j], [0.0])
>>> y = x.mul(x.inv())
>>> bool(abs(y.mid[0] - 1) <= y.rad[0])
True
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

#: unit roundoff of float64 (round to nearest)
U = 2.0 ** -53
#: magnitudes outside [SMALL, LARGE] are refused where an error bound needs them
SMALL = 2.0 ** -400
LARGE = 2.0 ** 400
#: per-operation allowance for an underflowing product (four times the subnormal unit)
UNDERFLOW = 2.0 ** -1072


class RangeError(ArithmeticError):
    """An operand outside the range where the a-priori rounding bounds hold."""


# The two rounding rules (proofs/midrad_filter.md, (F2)-(F3)): ``up``, a relative factor and
# an additive term (one product and one sum, so it vectorizes and compiles alike), and one
# float step (``down``, ``next_up``).  Compiled loops call ``compiled_rounding()``'s forms.

#: (1 + 4u) and 1 - 2^-53, exactly
_UP, _BELOW = 1.0 + 4 * U, 1.0 - U


def up(x):
    """An upper bound of y >= 0 from its rounded value x = fl(y) (one rounding to nearest,
    underflow included): x (1 + 4u) + 2^-1070, both steps rounded to nearest.  For
    nonnegative quantities only (radii and bounds)."""
    return x * _UP + 4 * UNDERFLOW


def up_into(x: np.ndarray) -> np.ndarray:
    """``up(x)`` written into the float64 array ``x`` (the same two operations); returns x."""
    np.multiply(x, _UP, out=x)
    x += 4 * UNDERFLOW
    return x


def down(x):
    """The next float below x: a lower bound of y from its rounded value x = fl(y)."""
    return np.nextafter(x, -np.inf)


def next_up(x):
    """The next float above x: an upper bound of y from its rounded value x = fl(y)."""
    return np.nextafter(x, np.inf)


def down_normal(x):
    """``down(x)`` as one product, fl(x (1 - 2^-53)), for every normal x > 2^-1022 (not
    below: there it may return x); the form of the compiled loops, as a product vectorizes
    (proofs/midrad_filter.md, section 5)."""
    return x * _BELOW


@lru_cache(maxsize=1)
def compiled_rounding() -> tuple:
    """(``up``, ``down_normal``) compiled by numba for the compiled loops (numba must be
    installed): numba compiles these functions themselves, so the loops round as here."""
    from .compiled import jit
    return jit(up), jit(down_normal)


def abs_upper(z: np.ndarray) -> np.ndarray:
    """|re| + |im| rounded up: >= |z| (at most sqrt(2) |z|)."""
    return up(np.abs(z.real) + np.abs(z.imag))


def modulus_upper(z: np.ndarray) -> np.ndarray:
    """An upper bound of |z|: m sqrt(1 + (n/m)^2) with m = max(|re|, |im|), n = min(...),
    every operation rounded up (scaled, so tiny moduli keep a relative bound)."""
    a, b = np.abs(np.real(z)), np.abs(np.imag(z))
    m, n = np.maximum(a, b), np.minimum(a, b)
    pos = m > 0
    r = up(np.divide(n, m, out=np.zeros(np.shape(m)), where=pos))
    s = up(np.sqrt(up(1.0 + up(r * r))))
    return np.where(pos, up(m * s), 0.0)


def modulus_up(z: np.ndarray) -> np.ndarray:
    """An upper bound of |z| for |re|, |im| <= 2^400: sqrt(re^2 + im^2), every operation
    rounded up (cheaper than ``modulus_upper``; a square that underflows is covered by the
    additive term of ``up``)."""
    a, b = np.abs(np.real(z)), np.abs(np.imag(z))
    return up(np.sqrt(up(up(a * a) + up(b * b))))


def abs_lower(z: np.ndarray) -> np.ndarray:
    """max(|re|, |im|), exactly: <= |z|."""
    return np.maximum(np.abs(z.real), np.abs(z.imag))


def sum_upper(s: np.ndarray | float, n: int):
    """An upper bound of an exact sum of at most ``n`` nonnegative products (or terms)
    whose computed value is ``s`` (any summation order, fused or not, underflow
    included): s (1 + (2n+2)u) + n 2^-1072, rounded up.  Needs (n+1) u <= 1/4."""
    if not (n + 1) * U <= 0.25:
        raise RangeError(f"a sum of {n} terms is beyond the a-priori bound")
    c = 1.0 + (2 * n + 2) * U  # exact: 1 + an even multiple of u
    return up(up(np.multiply(s, c)) + n * UNDERFLOW)


def _check_range(*arrays: np.ndarray) -> None:
    for a in arrays:
        if a.size and not (np.all(np.isfinite(a)) and float(np.max(np.abs(a))) <= LARGE):
            raise RangeError("a midpoint or radius is not finite or exceeds 2^400")


@dataclass
class MR:
    """Complex disks ``|x - mid| <= rad`` (numpy arrays of one shape)."""

    mid: np.ndarray
    rad: np.ndarray

    @classmethod
    def from_parts(cls, mid, rad) -> "MR":
        m = np.asarray(mid, dtype=np.complex128)
        r = np.asarray(rad, dtype=np.float64)
        r = np.broadcast_to(r, m.shape).copy()
        if np.any(r < 0) or np.any(np.isnan(r)):
            raise ValueError("radii must be >= 0")
        _check_range(m.real, m.imag, r)
        return cls(m, r)

    @classmethod
    def exact(cls, values) -> "MR":
        """Points: complex128 values taken as exact."""
        m = np.asarray(values, dtype=np.complex128)
        return cls.from_parts(m, np.zeros(m.shape))

    def __len__(self) -> int:
        return len(self.mid)

    def __getitem__(self, idx) -> "MR":
        return MR(self.mid[idx], self.rad[idx])

    def set_point(self, idx, value: float) -> None:
        """Make the disks at ``idx`` the exact real point ``value`` (in place)."""
        self.mid[idx] = value
        self.rad[idx] = 0.0

    def reshape(self, *shape) -> "MR":
        """The same disks in another shape (views where numpy gives them)."""
        return MR(self.mid.reshape(*shape), self.rad.reshape(*shape))

    def mid_complex(self) -> np.ndarray:
        """The midpoints (complex128, exact: ``DD.mid_complex``'s counterpart)."""
        return self.mid

    # -- the operations --------------------------------------------------------------------

    def conj(self) -> "MR":
        return MR(np.conj(self.mid), self.rad.copy())

    def neg(self) -> "MR":
        return MR(-self.mid, self.rad.copy())

    def _addsub(self, other: "MR", sign: int) -> "MR":
        m = self.mid + other.mid if sign > 0 else self.mid - other.mid
        _check_range(m.real, m.imag)
        # |fl(x) - x| <= u |fl(x)| per component (additions never underflow), so <= u |fl(x)| in all
        r = up(up(self.rad + other.rad) + up(U * modulus_up(m)))
        _check_range(r)
        return MR(m, r)

    def add(self, other: "MR") -> "MR":
        return self._addsub(other, 1)

    def sub(self, other: "MR") -> "MR":
        return self._addsub(other, -1)

    def mul(self, other: "MR") -> "MR":
        a, b = self.mid, other.mid
        ar, ai, br, bi = a.real, a.imag, b.real, b.imag
        m = np.empty(np.broadcast(a, b).shape, dtype=np.complex128)
        m.real = ar * br - ai * bi  # each component: error <= gamma_2 (|ar br| + |ai bi|) + 2 underflows
        m.imag = ar * bi + ai * br
        _check_range(m.real, m.imag)
        aa, ab = modulus_up(a), modulus_up(b)
        rad = up(up(aa * other.rad) + up(self.rad * ab))
        rad = up(rad + up(self.rad * other.rad))
        rad = up(rad + up(up(2.9 * U * aa) * ab))  # sqrt(2) gamma_2 |a| |b| for both components together
        rad = up(rad + 8 * UNDERFLOW)
        _check_range(rad)
        return MR(m, rad)

    def scale(self, c: float) -> "MR":
        """Multiplication by an exact power of two (exact unless it underflows)."""
        if not (isinstance(c, (int, float)) and math.isfinite(c) and c > 0) or c != 2.0 ** round(math.log2(c)):
            raise ValueError("scale takes a positive power of two")
        m = self.mid * c
        _check_range(m.real, m.imag)
        rad = up(up(self.rad * c) + 2 * UNDERFLOW)
        _check_range(rad)
        return MR(m, rad)

    def certainly_nonzero(self) -> np.ndarray:
        """True where the disk excludes 0 (a mask; False means 'not certainly')."""
        return abs_lower(self.mid) > self.rad

    def inv(self) -> "MR":
        """1/x; raises RangeError unless every disk certainly excludes 0 (and the
        midpoints lie in the safe range)."""
        b = self.mid
        ell = abs_lower(b)
        if b.size and not (np.all(ell > self.rad) and float(np.min(ell)) >= SMALL and float(np.max(ell)) <= LARGE):
            raise RangeError("a divisor is not certainly nonzero (or is outside [2^-400, 2^400])")
        n = b.real * b.real + b.imag * b.imag
        m = np.empty(b.shape, dtype=np.complex128)
        m.real = b.real / n
        m.imag = -b.imag / n
        # |b^| >= fl(sqrt(n)) (1 - 4u) (n within (1 + u)^2 of |b^|^2, n >= 2^-800): a modulus, not a part
        ell = np.maximum(ell, down(np.sqrt(n) * (1 - 4 * U)))
        t = up(1.0 / ell)  # >= 1/|b^| >= |1/b^|
        # |1/x - 1/b^| <= rad / (ell (ell - rad)); |m - 1/b^| <= 3.02u t (gamma_3 per component, no underflow here)
        den = down(ell * down(ell - self.rad))
        rad = up(up(self.rad / den) + up(3.02 * U * t))
        _check_range(rad)
        return MR(m, rad)

    def div(self, other: "MR") -> "MR":
        return self.mul(other.inv())

    def abs_upper(self) -> np.ndarray:
        """Upper bounds of |x| over each disk."""
        return up(modulus_up(self.mid) + self.rad)

    def abs_lower(self) -> np.ndarray:
        """Lower bounds of |x| over each disk (0 where it may contain 0)."""
        return np.maximum(down(abs_lower(self.mid) - self.rad), 0.0)

    def contains(self, values) -> np.ndarray:
        """Whether each complex128 value lies certainly in its disk: True only when an
        upper bound of |value - mid| is <= rad (so it may say False on the boundary)."""
        v = np.asarray(values, dtype=np.complex128)
        d = v - self.mid  # each component within u of the computed one
        return (d == 0) | (up((1 + 2 * U) * modulus_upper(d)) <= self.rad)  # fl(v - mid) = 0 iff v = mid


def on_grid(hi: np.ndarray, lo: np.ndarray, g: float) -> tuple[np.ndarray, np.ndarray, float]:
    """Double-float numbers hi + lo rebased so that the high part lies on the grid g (a power
    of two >= 2^-60): (hi', lo', e) with hi' = g rint(hi/g) (exact), hi - hi' exact, and
    lo' = fl(lo + (hi - hi')), so |hi + lo - hi' - lo'| <= u |lo'| per part and e >= u max |lo'|
    (proofs/midrad_filter.md, Lemma 8)."""
    inv_g = 1.0 / g                                   # a power of two: exact
    h2r, h2i = np.rint(hi.real * inv_g) * g, np.rint(hi.imag * inv_g) * g
    l2r, l2i = lo.real + (hi.real - h2r), lo.imag + (hi.imag - h2i)
    e = up(U * float(np.max(up(np.abs(l2r) + np.abs(l2i)), initial=0.0)))   # |lo'| <= |lo'|_1
    return h2r + 1j * h2i, l2r + 1j * l2i, e


@lru_cache(maxsize=8)
def roots_on_grid(M: int, g: float) -> tuple[np.ndarray, np.ndarray, float]:
    """``on_grid`` of the pairs of ``roots_of_unity_dd(M)``, cached (read-only arrays)."""
    hi, lo, _ = roots_of_unity_dd(M)
    h2, l2, e = on_grid(hi, lo, g)
    h2.setflags(write=False)
    l2.setflags(write=False)
    return h2, l2, e


#: bound on |x - (hi + lo)| of the double-float pairs made from enclosures
DD_RADIUS = 2.0 ** -103


#: 2^-110 as an arb (the radius test of ``_dd_part``)
_R110 = None


def _dd_part(x) -> tuple[float, float]:
    """(hi, lo) floats with |x - hi - lo| <= 2^-110 + 2^-104 max(|hi|, 1) for a real ball x
    (checked: the ball x - hi has radius < 2^-110 and |lo| <= 2^-52 max(|hi|, 2^-400)).
    The caller sets the global precision to at least 128 bits (x - hi exactly enough:
    flint rounds to the global precision)."""
    global _R110
    if _R110 is None:
        from flint import arb
        _R110 = arb(2) ** -110
    hi = float(x.mid())
    rest = x - hi
    lo = float(rest.mid())
    if not (abs(lo) <= 2.0 ** -52 * max(abs(hi), 2.0 ** -400) and rest.rad() < _R110):
        raise RangeError("a ball is too wide for a double-float pair")
    return hi, lo


@lru_cache(maxsize=8)
def _roots_dd(M: int) -> tuple[np.ndarray, np.ndarray]:
    from flint import ctx, fmpq, arb

    E = max(M // 8, 1)
    c = np.empty((E + 1, 2))
    s = np.empty((E + 1, 2))
    with ctx.workprec(128):
        for k in range(E + 1):
            sk, ck = arb.sin_cos_pi_fmpq(fmpq(2 * k, M))
            c[k] = _dd_part(ck)
            s[k] = _dd_part(sk)
    k = np.arange(M)
    quadrant, kk = divmod(k, max(M // 4, 1)) if M >= 4 else (k * (4 // M), np.zeros(M, dtype=int))
    swap = kk > E
    j = np.where(swap, max(M // 4, 1) - kk, kk)
    cos_t = np.where(swap[:, None], s[j], c[j])      # cos(2 pi kk / M), as a (hi, lo) pair
    sin_t = np.where(swap[:, None], c[j], s[j])
    re, im = cos_t, -sin_t                           # exp(-2 pi i kk / M)
    for q in (1, 2, 3):                              # times (-i)^q, exactly
        sel = quadrant == q
        for _ in range(q):
            re_q, im_q = im[sel].copy(), -re[sel]
            re[sel], im[sel] = re_q, im_q
    hi = re[:, 0] + 1j * im[:, 0]
    lo = re[:, 1] + 1j * im[:, 1]
    hi.setflags(write=False)
    lo.setflags(write=False)
    return hi, lo


def roots_of_unity_dd(M: int) -> tuple[np.ndarray, np.ndarray, float]:
    """z_k = exp(-2 pi i k / M), k = 0..M-1, as double-float pairs: hi + lo with
    |z_k - hi_k - lo_k| <= DD_RADIUS.  From an enclosure of cos and sin at the
    M/8 + 1 angles of the first octant; the rest by exact swaps and sign changes.
    Cached per M (read-only arrays)."""
    if M < 1 or M & (M - 1):
        raise ValueError(f"M must be a power of two, got {M}")
    hi, lo = _roots_dd(M)
    return hi, lo, DD_RADIUS


def roots_of_unity(M: int) -> MR:
    """The disks of z_k = exp(-2 pi i k / M) around float64 midpoints."""
    hi, lo, rad = roots_of_unity_dd(M)
    return MR(hi.copy(), up(abs_upper(lo) + rad))


