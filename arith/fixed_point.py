"""RoundedField's arithmetic with roundings by shifts: the same numbers, faster.

``ShiftRoundedField(k)`` has RoundedField's elements and gives **the same results bit
for bit**: RoundedField rounds n/d to ``floor((2n + d)/(2d))``; when d = 2^s this is
``floor((n + 2^(s-1)) / 2^s)``, the floor shift ``(n + 2^(s-1)) >> s`` (flint's ``>>``
rounds toward minus infinity), and a product by 2^k is a shift left; a complex product
takes three integer products instead of four (the same integers), two when a factor is
real; a quotient by a real divisor divides by the divisor itself (the same rational, so
the same floor), and a real numerator takes two products.  Ball inputs and
roots of unity are read from their midpoints ``man 2^exp`` the same way, with no
``Fraction`` (whose gcds dominate at these lengths); outputs convert to Fractions with the
power of two stripped instead of a gcd.  The error analysis of ``rounded_field.md``
therefore holds unchanged.
"""
from __future__ import annotations

from fractions import Fraction

from flint import acb, fmpq, fmpz

from .gaussian import fraction_of
from .rounded import Fixed, RoundedField, check_ball_width


def _round_shift(n: fmpz, s: int) -> fmpz:
    """Nearest integer to n / 2^s (ties upward), s >= 0."""
    if s == 0:
        return n
    return (n + (fmpz(1) << (s - 1))) >> s


#: guard bits of the truncated quotient, and the least cut (bits) for which it is used
GUARD = 64
MIN_CUT = 1024


def _nearest_quotient(a: fmpz, e: int, d: fmpz, guard: int = GUARD, min_cut: int = MIN_CUT) -> fmpz:
    """floor(n/d + 1/2) = floor((2n + d)/(2d)) for n = a 2^e (e >= 0) and d > 0, exactly.

    When d has far more bits than the quotient needs, both are cut by the same s low bits
    and the quotient is formed to ``guard`` more bits (a 2k/k-bit division in place of
    3k/2k); the cut moves n/d by less than (1 + |n1/d1|)/d1, and when the rounded value is
    not decided within that (a near-tie, about 2^-guard of the cases) the exact formula
    runs.  ``rational_circuit.md`` §7a proves the result equal to the exact formula's."""
    if a == 0:
        return fmpz(0)
    bd = d.bit_length()
    qb = max(a.bit_length() + e - bd + 1, 0)  # |n/d| < 2^qb
    s = bd - (qb + guard + 2)
    if s >= max(min_cut, 1):
        c = _cut_quotient(a, e, d, s, guard)
        if c is not None:
            return c
    n = a << e
    return (2 * n + d) // (2 * d)


def _cut_quotient(a: fmpz, e: int, d: fmpz, s: int, guard: int) -> fmpz | None:
    """floor(n/d + 1/2) from n and d cut by s > 0 low bits, or None when the cut does not
    decide it (see ``_nearest_quotient``)."""
    d1 = d >> s
    n1 = a << (e - s) if e >= s else a >> (s - e)  # floor(n / 2^s)
    z = (n1 << guard) // d1
    one = fmpz(1) << guard
    err = (one + abs(z) + 1) // d1 + 1  # |n/d - n1/d1| 2^guard < err
    w = z + (one >> 1)
    c = w >> guard
    r = w - (c << guard)
    return c if r >= err and r + 1 + err <= one else None


def _prod(x: fmpz, y: fmpz) -> fmpz:
    """x y, by a shift when a factor is a positive power of two (the grid's one, 1/2, ...):
    the same integer, without a k-bit product."""
    for p, q in ((x, y), (y, x)):
        if p > 0 and not p & (p - 1):
            return q << (p.bit_length() - 1)
    return x * y


class ShiftRoundedField(RoundedField):
    """RoundedField(k) with shift roundings (see the module); results identical."""

    def __init__(self, k: int):
        super().__init__(k)
        self.name = f"rounded-shift(u=2^-{k})"

    def __repr__(self) -> str:
        return f"ShiftRoundedField({self.k})"

    def _scaled(self, man: fmpz, exp: int) -> fmpz:
        """man 2^exp on the 2^-k grid, rounded to nearest (ties upward)."""
        s = exp + self.k
        return man << s if s >= 0 else _round_shift(man, -s)

    def from_fmpq(self, q: fmpq) -> fmpz:
        """A rational on the grid, rounded to nearest (as ``from_number`` rounds)."""
        n, d = q.p << self.k, q.q
        return (2 * n + d) // (2 * d)

    def _from_ball(self, z: acb) -> Fixed:
        check_ball_width(z, self.k)
        parts = []
        for part in (z.real, z.imag):
            man, exp = part.mid().man_exp()
            parts.append(self._scaled(fmpz(man), int(exp)))
        return Fixed(parts[0], parts[1])

    def mul(self, a, b):
        # the same integers as the four-product formula: two products when a factor is real,
        # else three (im = (x+y)(u+v) - xu - yv)
        if a.y == 0 or b.y == 0:
            if a.y != 0:
                a, b = b, a
            re, im = _prod(a.x, b.x), _prod(a.x, b.y)
        else:
            xu, yv = a.x * b.x, a.y * b.y
            re = xu - yv
            im = (a.x + a.y) * (b.x + b.y) - xu - yv
        return Fixed(_round_shift(re, self.k), _round_shift(im, self.k))

    def div(self, a, b):
        if b.y == 0:
            # a real divisor: floor((2n + d)/(2d)) = floor(n/d + 1/2) is a function of the
            # rational n/d, so n = a 2^k, d = b.x gives the general formula's integers' value
            if b.x == 0:
                raise ZeroDivisionError("division by an exact zero")
            d = 2 * b.x
            return Fixed((2 * (a.x << self.k) + b.x) // d, (2 * (a.y << self.k) + b.x) // d)
        else:
            den = b.x * b.x + b.y * b.y
            if a.y == 0:  # a real numerator: two products, as a complex one would give
                re, im = _prod(a.x, b.x), -_prod(a.x, b.y)
            else:
                re = a.x * b.x + a.y * b.y
                im = a.y * b.x - a.x * b.y
        return Fixed(_nearest_quotient(re, self.k, den), _nearest_quotient(im, self.k, den))

    def to_fractions(self, a) -> tuple[Fraction, Fraction]:
        """The exact value of an element (fmpq strips the power of two)."""
        d = fmpz(1) << self.k
        return fraction_of(fmpq(a.x, d)), fraction_of(fmpq(a.y, d))
