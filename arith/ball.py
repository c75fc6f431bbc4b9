"""Ball arithmetic: python-flint ``acb`` at a fixed working precision."""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Callable

import numpy as np
from flint import acb, acb_mat, acb_poly, arb, ctx, fmpq

from .base import Field, check_power_of_two
from .convert import BINARY64, exact_parts
from .truth import Truth


def _arb_exact(x: Fraction) -> arb:
    return arb(fmpq(x.numerator, x.denominator))


#: default bits of the transforms' working precision beyond the inputs' mean accuracy
#: (``BallField(prec, dft_spare_bits)``, ``BallField._dft``); a negative value rounds the
#: inputs below it (radii up to about 2^-value times larger), which a caller with room to
#: spare may ask for: a transform of inputs accurate to ~135 bits then runs on two-limb
#: numbers, about twice as fast
DFT_SPARE_BITS = 32
#: how many grids of roots of unity (by M and precision) are kept (``BallField.roots_of_unity``)
GRIDS_KEPT = 2
_GRIDS: dict = {}


class BallField(Field):
    """Complex balls (midpoint, radius) at ``prec`` bits.  ``dft_spare_bits``: how far the
    transforms' working precision may sit above (or, negative, below) the inputs' mean
    accuracy (``DFT_SPARE_BITS`` by default; see ``_transform_prec``).

    Every result encloses the exact result of the same operation on any points of
    the operand balls.  flint keeps one process-wide precision; the field sets it
    for each of its own operations and restores it afterwards, so nothing leaks out.
    Zero tests are three-valued: ``TRUE`` only for an exact zero, ``FALSE`` when the
    ball excludes zero, otherwise ``UNKNOWN``.

    >>> F = BallField(100)
    >>> x = F.div(F.one(), F.from_number(3))
    >>> F.is_zero(F.sub(F.mul(x, F.from_number(3)), F.one()))
    <Truth.UNKNOWN: 'unknown'>
    >>> F.abs_upper(F.add_error(F.zero(), 0.5)) >= 0.5
    True
    """

    encloses = True

    def __init__(self, prec: int = 128, dft_spare_bits: int = DFT_SPARE_BITS):
        if not isinstance(prec, int) or prec < 2:
            raise ValueError(f"precision must be an integer >= 2 bits, got {prec!r}")
        self.prec = prec
        self.dft_spare_bits = int(dft_spare_bits)
        self.name = f"ball({prec} bits)"
        self._consts: dict = {}

    def __repr__(self) -> str:
        return f"BallField({self.prec})"

    # every operation runs at self.prec and restores the global precision; when the
    # global precision already is self.prec (a caller runs a whole procedure inside
    # ctx.workprec(F.prec)), the two switches are skipped: they cost more than the product
    def _at(self, f: Callable, *args):
        old = ctx.prec
        if old == self.prec:
            return f(*args)
        ctx.prec = self.prec
        try:
            return f(*args)
        finally:
            ctx.prec = old

    def from_number(self, x: Any) -> acb:
        if isinstance(x, acb):
            return x
        if isinstance(x, arb):
            return acb(x)
        if type(x) in BINARY64 and math.isfinite(x.real) and math.isfinite(x.imag):
            return acb(float(x.real), float(x.imag))  # binary64 parts convert exactly, at any precision
        re, im = exact_parts(x)
        return self._at(lambda: acb(_arb_exact(re), _arb_exact(im)))

    def const(self, q) -> acb:
        # rational literals recur in every loop of an algorithm: enclose each once
        key = (type(q), q)
        c = self._consts.get(key)
        if c is None:
            c = self._consts[key] = self.from_number(q)
        return c

    def root_of_unity(self, M: int, k: int) -> acb:
        check_power_of_two(M)
        k %= M
        if (4 * k) % M == 0:  # 1, -i, -1, i exactly
            return [acb(1), acb(0, -1), acb(-1), acb(0, 1)][(4 * k) // M]
        return self._at(lambda: acb.exp_pi_i(acb(fmpq(-2 * k, M))))

    def add(self, a, b):
        return self._at(acb.__add__, a, b)

    def sub(self, a, b):
        return self._at(acb.__sub__, a, b)

    # negation and conjugation round to the global precision in flint: wrap them too
    def neg(self, a):
        return self._at(acb.__neg__, a)

    def mul(self, a, b):
        return self._at(acb.__mul__, a, b)

    def div(self, a, b):
        return self._at(acb.__truediv__, a, b)

    def conj(self, a):
        return self._at(acb.conjugate, a)

    def is_zero(self, a) -> Truth:
        if a.is_zero():
            return Truth.TRUE
        if a.is_finite() and not a.contains(0):
            return Truth.FALSE
        return Truth.UNKNOWN

    def to_complex(self, a) -> complex:
        return complex(a.mid())

    def midpoint(self, a) -> complex:
        """The midpoint rounded to complex128 (not an enclosure by itself)."""
        return complex(a.mid())

    def radius(self, a) -> float:
        """An upper bound, as a float, on |x - mid| for every x in the ball."""
        if not a.is_finite():
            return math.inf
        with ctx.workprec(64):
            return float_upper(arb(a.real.rad()) + arb(a.imag.rad()))

    # -- functions ---------------------------------------------------------
    def _element(self, x: Any) -> acb:
        return x if isinstance(x, acb) else self.from_number(x)

    def sqrt(self, x) -> acb:
        """The principal square root (branch cut on the negative real axis, continuous
        from above as in arb): the result contains the principal root of every point of
        x, so a ball straddling the cut gets one enclosure of both sides (a wide ball);
        a real nonnegative x has a real root."""
        return self._at(acb.sqrt, self._element(x))

    def exp(self, x) -> acb:
        return self._at(acb.exp, self._element(x))

    # -- enclosure operations ---------------------------------------------
    def enclose(self, x, prec: int | None = None) -> acb:
        """The element itself: it is already a ball (at this field's precision)."""
        return x

    def add_error(self, x, e) -> acb:
        """x with both parts' radii enlarged by a certain upper bound of e: the box
        contains the disk of radius e about every point of x."""
        r = error_upper(e)
        with ctx.workprec(self.prec):
            err = arb(0, r)
            return acb(x.real + err, x.imag + err)

    def abs_upper(self, x) -> float:
        return abs_upper(x)

    def abs_lower(self, x) -> float:
        return abs_lower(x)

    # -- vector and matrix kernels (acb_mat: one rigorous dot product per entry)
    def dot(self, xs, ys) -> acb:
        if len(xs) != len(ys):
            raise ValueError(f"dot: lengths {len(xs)} and {len(ys)} differ")
        if not xs:
            return acb(0)
        return self.matmul([list(xs)], [[y] for y in ys])[0][0]

    def matvec(self, A, x) -> list:
        if not A:
            return []
        return [row[0] for row in self.matmul(A, [[v] for v in x])]

    def matmul(self, A, B) -> list[list]:
        if A and len(A[0]) != len(B):
            raise ValueError(f"matmul: {len(A[0])} columns against {len(B)} rows")
        if not A or not B or not B[0]:
            return super().matmul(A, B)
        return self._at(lambda: (acb_mat(A) * acb_mat(B)).tolist())

    # -- elementwise vector kernels: the scalar operations in one sweep at self.prec
    def vec_add(self, xs, ys) -> list:
        _same_length(xs, ys)
        return self._at(lambda: list(map(acb.__add__, xs, ys)))

    def vec_sub(self, xs, ys) -> list:
        _same_length(xs, ys)
        return self._at(lambda: list(map(acb.__sub__, xs, ys)))

    def vec_mul(self, xs, ys) -> list:
        _same_length(xs, ys)
        return self._at(lambda: list(map(acb.__mul__, xs, ys)))

    def vec_scale(self, c, xs) -> list:
        return self._at(lambda: [c * x for x in xs])

    def vec_shift(self, c, xs) -> list:
        return self._at(lambda: [c + x for x in xs])

    def vec_inverses(self, xs) -> tuple[list, list[int], list[int]]:
        """1/x for every entry in one sweep; when every result is finite, every x is
        finite and excludes 0 (a ball containing 0 has an unbounded set of inverses, which
        no finite ball encloses), so every zero test is FALSE.  Otherwise the entries are
        tested one by one (``Field.vec_inverses``)."""
        def run():
            one = acb(1)
            inv = [one / x for x in xs]
            return inv if all(map(acb.is_finite, inv)) else None
        inv = self._at(run)
        if inv is None:
            return super().vec_inverses(xs)
        return inv, [], []

    def roots_of_unity(self, M: int) -> list:
        """The grid z_k = exp(-2 pi i k/M), k < M: z_k = cos(2 pi k/M) - i sin(2 pi k/M)
        from Arb's ``sin_cos_pi_fmpq`` for k <= M/8; the rest by the symmetries
        z_{M/4-k} = -i conj(z_k) and z_{k+M/4} = -i z_k, as Arb products with the exact
        point -i (enclosures; the parts only swap and change sign, the radii may round
        up by a few units in their last place).  The last GRIDS_KEPT grids are kept, by
        (M, prec), for every field of that precision (constants, like Arb's own caches)."""
        check_power_of_two(M)
        key = (M, self.prec)
        grid = _GRIDS.get(key)
        if grid is None:
            grid = self._at(lambda: _grid(M))
            if len(_GRIDS) >= GRIDS_KEPT:
                _GRIDS.pop(next(iter(_GRIDS)))
            _GRIDS[key] = grid
        return list(grid)

    def primitive(self, name: str):
        if name == "dft":
            return self._dft
        if name == "polymul":
            return lambda p, q: self._at(lambda: _poly_coeffs(acb_poly(list(p)) * acb_poly(list(q)), len(p) + len(q) - 1))
        if name == "solve":
            return self._solve
        return None

    def _dft(self, a, inverse: bool = False) -> list:
        """``acb.dft`` of the inputs rounded to ``_transform_prec(a)`` bits, at that working
        precision: Arb's rounding and transform enclose at every precision; the precision
        only sizes the rounding errors (see DFT_SPARE_BITS and ``dft_spare_bits``)."""
        a = list(a)
        p = _transform_prec(a, self.prec, self.dft_spare_bits)
        a = _rounded(a, p, self.prec)
        with ctx.workprec(p):
            return list(acb.dft(a, inverse=inverse))

    def _solve(self, A: list, B: list) -> list | None:
        """``A^{-1} B`` (rows) by FLINT's certified solve at this precision (``acb_mat.solve``:
        the result encloses the solution for every point of the balls), or None when A is
        not certainly invertible at this precision."""
        def run():
            try:
                X = acb_mat([list(r) for r in A]).solve(acb_mat([list(r) for r in B]))
            except ZeroDivisionError:
                return None
            return [[X[i, j] for j in range(X.ncols())] for i in range(X.nrows())]
        return self._at(run)


def float_upper(x: arb) -> float:
    """The least float that is certainly >= every point of the real ball x."""
    u = x.upper()
    f = float(u)
    if math.isnan(f):  # a NaN ball bounds nothing
        return math.inf
    while not (arb(f) >= u):
        f = math.nextafter(f, math.inf)
    return f


def float_lower(x: arb) -> float:
    """The greatest float that is certainly <= every point of the real ball x."""
    lo = x.lower()
    f = float(lo)
    if math.isnan(f):
        return -math.inf
    while not (arb(f) <= lo):
        f = math.nextafter(f, -math.inf)
    return f


def error_upper(e: Any) -> float:
    """A float certainly >= the error bound e >= 0 (int, float, Fraction, fmpq or arb)."""
    if isinstance(e, float):
        if math.isnan(e) or e < 0:
            raise ValueError(f"an error bound must be a number >= 0, got {e!r}")
        return e
    if isinstance(e, arb):
        b = e
    else:
        q, im = exact_parts(e, "error bound")
        if q < 0 or im != 0:
            raise ValueError(f"an error bound must be a number >= 0, got {e!r}")
        b = None
    with ctx.workprec(64):
        if b is None:
            b = _arb_exact(q)
        if b < 0:
            raise ValueError(f"an error bound must be a number >= 0, got {e!r}")
        return float_upper(b)


def abs_upper(z: acb) -> float:
    """A float certainly >= |p| for every point p of the ball z (math.inf if unbounded)."""
    if not z.is_finite():
        return math.inf
    with ctx.workprec(64):
        return float_upper(abs(z))


def abs_lower(z: acb) -> float:
    """A float certainly <= |p| for every point p of the ball z (0.0 if none better)."""
    if not z.is_finite():
        return 0.0
    with ctx.workprec(64):
        return max(0.0, float_lower(abs(z)))


def _transform_prec(a: list, prec: int, spare: int = DFT_SPARE_BITS) -> int:
    """min(prec, log2(sum |x| / sum rad(x)) + spare) over a sample of at most
    about 1024 evenly spaced inputs (float estimates: the choice is part of no bound);
    prec when no sampled input has a radius or a value is not finite, and when the two
    need as many 64-bit limbs (the products then cost the same).  A transform's
    output radius is about the mean input radius plus about 2^-p log2(M) times the mean
    input modulus: at this p the second is some 2^-spare times the first."""
    if not a:
        return prec
    sample = a[::max(1, len(a) // 1024)]
    with ctx.workprec(64):
        mags = np.abs(np.fromiter(map(complex, sample), dtype=np.complex128, count=len(sample)))
        rads = np.fromiter(map(float, map(acb.rad, sample)), dtype=float, count=len(sample))
    s_abs, s_rad = float(mags.sum()), float(rads.sum())
    if not (math.isfinite(s_abs) and math.isfinite(s_rad)) or s_rad <= 0 or s_abs <= 0:
        return prec
    # log2 of each (the quotient overflows for radii near the subnormals, as at eps 1e-300)
    p = max(2, min(prec, math.ceil(math.log2(s_abs) - math.log2(s_rad)) + spare))
    return prec if (p + 63) // 64 >= (prec + 63) // 64 else p  # rounding pays only with fewer limbs


def _rounded(a: list, p: int, prec: int) -> list:
    """The inputs rounded to p bits when p < prec (each ``+x`` at p bits encloses x:
    the midpoint rounded, the rounding added to the radius), so the transform's products
    run on p-bit midpoints."""
    if p >= prec:
        return a
    with ctx.workprec(p):
        return list(map(acb.__pos__, a))


def _same_length(xs, ys) -> None:
    if len(xs) != len(ys):
        raise ValueError(f"elementwise operation: lengths {len(xs)} and {len(ys)} differ")


def _grid(M: int) -> list:
    """exp(-2 pi i k/M) for k < M at the global precision (see BallField.roots_of_unity)."""
    if M < 8:
        return [[acb(1), acb(0, -1), acb(-1), acb(0, 1)][(4 * k) // M] if (4 * k) % M == 0
                else acb.exp_pi_i(acb(fmpq(-2 * k, M))) for k in range(M)]
    q, e = M // 4, M // 8
    first = []
    for k in range(e + 1):
        s, c = arb.sin_cos_pi_fmpq(fmpq(2 * k, M))
        first.append(acb(c, -s))
    mi = acb(0, -1)  # times -i: (a + bi) -> b - ai
    # z_{q-k} = -i conj(z_k) for 0 < k < e
    quarter = first + list(map(mi.__mul__, map(acb.conjugate, first[e - 1:0:-1])))
    out = quarter
    for _ in range(3):  # z_{k+q} = -i z_k
        quarter = list(map(mi.__mul__, quarter))
        out = out + quarter
    return out


def _poly_coeffs(p: acb_poly, n: int) -> list:
    c = p.coeffs()
    return c + [acb(0)] * (n - len(c))
