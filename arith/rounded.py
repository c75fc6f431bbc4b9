"""Fixed-point arithmetic with a proved absolute error of at most u = 2^-k per step.

This is the arithmetic model of the rational-circuit certificate: every supplied
constant and every operation has absolute error at most u.

How the bound holds.  An element is a pair of integers (X, Y) standing for
(X + iY)·2^-k.  Addition, subtraction, negation and conjugation of such pairs are
exact.  A product or quotient is formed exactly as a rational number and each
part is rounded to the nearest multiple of 2^-k, an error of at most 2^-(k+1) in
each part, so at most 2^-(k+1)·sqrt(2) < 2^-k = u in modulus.  Inputs and rational
constants are rounded the same way.  Roots of unity are taken from a ball enclosure
at k + 20 bits whose radius is checked to be below 2^-(k+16) before rounding, so
their error is below 2^-(k+1)·sqrt(2) + 2^-(k+15) < u.  Ball inputs (e.g. an
enclosed C~) are accepted on the same terms.  No step depends on the size
of the numbers: the bound holds at every magnitude, and magnitudes only set the
length of the integers (k + log2 of the largest modulus bits), hence the cost.
"""
from __future__ import annotations

from fractions import Fraction
from math import gcd as _gcd, isqrt
from typing import Any

from flint import acb, arb, ctx, fmpq, fmpz

from .ball import abs_lower, abs_upper
from .base import Field, Unsupported, check_power_of_two
from .convert import exact_parts
from .truth import Truth


def _round_div(n: fmpz, d: fmpz) -> fmpz:
    """Nearest integer to n/d for d > 0 (ties upward)."""
    return (2 * n + d) // (2 * d)


class Fixed:
    """An element of a RoundedField: ``(x + i*y) * 2^-k`` with flint integers x, y."""

    __slots__ = ("x", "y")

    def __init__(self, x: fmpz, y: fmpz):
        self.x = x
        self.y = y

    def __repr__(self) -> str:
        return f"Fixed({self.x}, {self.y})"


def check_ball_width(z: acb, k: int) -> None:
    """Refuse a ball input whose radii are not below 2^-(k+16): then its midpoint rounded
    to the 2^-k grid is within u = 2^-k of every point of the ball."""
    with ctx.workprec(64):
        limit = arb(2) ** (-(k + 16))
        if not (z.is_finite() and z.real.rad() < limit and z.imag.rad() < limit):
            raise ValueError(f"ball input too wide for u = 2^-{k}: enclose it to more than {k + 16} bits")


class RoundedField(Field):
    """Elements are :class:`Fixed` pairs of flint ``fmpz`` meaning ``(X + iY)·2^-k``.

    >>> F = RoundedField(60)
    >>> third = F.div(F.one(), F.from_number(3))
    >>> abs(F.to_fractions(third)[0] - Fraction(1, 3)) <= F.u
    True
    """

    def __init__(self, k: int):
        if not isinstance(k, int) or k < 1:
            raise ValueError(f"k (u = 2^-k) must be an integer >= 1, got {k!r}")
        self.k = k
        self.u = Fraction(1, 2**k)
        self.name = f"rounded(u=2^-{k})"
        self._scale = fmpz(2) ** k
        self._roots: dict[tuple[int, int], Fixed] = {}  # supplied constants, computed once
        self._octants: dict[int, list[acb]] = {}          # M -> enclosures of w_M^j, 0 <= j <= M/8

    def __repr__(self) -> str:
        return f"RoundedField({self.k})"

    def _from_fraction(self, x: Fraction) -> fmpz:
        return _round_div(fmpz(x.numerator) * self._scale, fmpz(x.denominator))

    def from_number(self, x: Any):
        if isinstance(x, Fixed):
            return x
        if isinstance(x, (acb, arb)):
            return self._from_ball(acb(x))
        re, im = exact_parts(x)
        return Fixed(self._from_fraction(re), self._from_fraction(im))

    def _from_ball(self, z: acb) -> Fixed:
        """A ball input whose radii are below 2^-(k+16): its midpoint rounded to the grid
        is within 2^-(k+1)*sqrt(2) + 2^-(k+15) < u of every point of the ball."""
        check_ball_width(z, self.k)
        parts = []
        for part in (z.real, z.imag):
            man, exp = part.mid().man_exp()
            parts.append(Fraction(int(man)) * Fraction(2) ** int(exp))
        return Fixed(self._from_fraction(parts[0]), self._from_fraction(parts[1]))

    def root_of_unity(self, M: int, k: int):
        check_power_of_two(M)
        k %= M
        key = (M // _gcd(M, k), k // _gcd(M, k))
        if key not in self._roots:
            self._roots[key] = self._compute_root(*key)
        return self._roots[key]

    def _compute_root(self, M: int, k: int) -> Fixed:
        if (4 * k) % M == 0:
            q = (4 * k) // M
            s, z = self._scale, fmpz(0)
            return [Fixed(s, z), Fixed(z, -s), Fixed(-s, z), Fixed(z, s)][q]
        return self._from_ball(self._root_ball(M, k))

    def _root_ball(self, M: int, k: int) -> acb:
        """An enclosure of z = exp(-2 pi i k / M), far narrower than u (``_from_ball``
        checks it), from a table of the first octant's powers w^j = exp(-2 pi i j / M'),
        0 <= j <= M'/8, of some grid M' that M divides, by the circle's symmetries (swaps
        and sign changes of the enclosures, exact): with q, j = divmod(k, M/4),
        z = (-i)^q w^j, and for j > M/8, w^j = -i conj(w^(M/4 - j)).  One exponential
        per table and M'/8 products, in place of one exponential at k + 20 bits per root."""
        Mt = next((m for m in sorted(self._octants, reverse=True) if m % M == 0), None)
        if Mt is None:
            Mt = M
            self._octants[M] = self._octant_table(M)
        k = k * (Mt // M)
        q, j = divmod(k, Mt // 4)
        with ctx.workprec(self._table_prec(Mt)):  # python-flint rounds to the context precision
            if 8 * j <= Mt:
                z = self._octants[Mt][j]
            else:
                t = self._octants[Mt][Mt // 4 - j]
                z = acb(-t.imag, -t.real)
            for _ in range(q):
                z = acb(z.imag, -z.real)  # times -i
        return z

    def _table_prec(self, M: int) -> int:
        return self.k + 24 + 2 * M.bit_length()

    def _octant_table(self, M: int) -> list[acb]:
        """w^j, 0 <= j <= M/8, for w = exp(-2 pi i / M), by successive products: each
        product adds a relative error of about 2^-prec, so prec has guard bits for M/8
        of them (the radius is checked when a root is read)."""
        with ctx.workprec(self._table_prec(M)):
            w = acb.exp_pi_i(acb(fmpq(-2, M)))
            table = [acb(1)]
            for _ in range(M // 8):
                table.append(table[-1] * w)
        return table

    def add(self, a, b):
        return Fixed(a.x + b.x, a.y + b.y)

    def sub(self, a, b):
        return Fixed(a.x - b.x, a.y - b.y)

    def neg(self, a):
        return Fixed(-a.x, -a.y)

    def conj(self, a):
        return Fixed(a.x, -a.y)

    def mul(self, a, b):
        # (X+iY)(U+iV)·2^-2k, rounded to the 2^-k grid
        re = a.x * b.x - a.y * b.y
        im = a.x * b.y + a.y * b.x
        return Fixed(_round_div(re, self._scale), _round_div(im, self._scale))

    def div(self, a, b):
        den = b.x * b.x + b.y * b.y
        if den == 0:
            raise ZeroDivisionError("division by an exact zero")
        re = (a.x * b.x + a.y * b.y) * self._scale
        im = (a.y * b.x - a.x * b.y) * self._scale
        return Fixed(_round_div(re, den), _round_div(im, den))

    def is_zero(self, a) -> Truth:
        return Truth.TRUE if a.x == 0 and a.y == 0 else Truth.FALSE

    def sqrt(self, x) -> Fixed:
        """sqrt(q) of a rational q >= 0 (an element, or a number read exactly: a supplied
        constant), with absolute error below u: a rational root is rounded as an input;
        otherwise a = floor(sqrt(q) 2^m), m = k + 2, is within 2^-(k+2) of sqrt(q), and
        rounding a 2^-m to the 2^-k grid adds at most 2^-(k+1).  Complex or negative
        arguments are Unsupported."""
        re, im = self.to_fractions(x) if isinstance(x, Fixed) else exact_parts(x, "sqrt argument")
        if im != 0 or re < 0:
            raise Unsupported(f"{self!r} takes square roots of rationals >= 0 only, got {x!r}")
        a, b = isqrt(re.numerator), isqrt(re.denominator)
        if a * a == re.numerator and b * b == re.denominator:
            return self.from_number(Fraction(a, b))
        m = self.k + 2
        return self.from_number(Fraction(isqrt((re.numerator << (2 * m)) // re.denominator), 1 << m))

    # the modulus of the element's exact (rational) value, bounded with certainty
    def abs_upper(self, a) -> float:
        return abs_upper(self._ball(a))

    def abs_lower(self, a) -> float:
        return abs_lower(self._ball(a))

    def _ball(self, a) -> acb:
        with ctx.workprec(64):
            return acb(arb(fmpz(a.x)) * arb(2) ** (-self.k), arb(fmpz(a.y)) * arb(2) ** (-self.k))

    def to_fractions(self, a) -> tuple[Fraction, Fraction]:
        """The exact value of an element."""
        return Fraction(int(a.x), 2**self.k), Fraction(int(a.y), 2**self.k)

    def to_complex(self, a) -> complex:
        d = 2**self.k
        return complex(int(a.x) / d, int(a.y) / d)
