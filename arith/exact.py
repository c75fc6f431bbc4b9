"""Exact arithmetic in the cyclotomic field Q(zeta_order), order a power of two."""
from __future__ import annotations

from fractions import Fraction
from math import isqrt
from typing import Any

from flint import acb, arb, ctx, fmpq, fmpq_poly

from .ball import abs_lower, abs_upper
from .base import Field, Unsupported, is_power_of_two
from .convert import exact_parts
from .truth import Truth


def _fmpq(x: Fraction) -> fmpq:
    return fmpq(x.numerator, x.denominator)


class ExactField(Field):
    """Q(zeta) with zeta = exp(-2*pi*i/order): elements are polynomials in zeta of degree
    < order/2, reduced modulo the cyclotomic polynomial zeta^(order/2) + 1.

    The Gaussian rationals are ExactField(4).  ``root_of_unity(M, k)`` is exact for
    every M dividing ``order``; zero tests are exact.

    >>> F = ExactField(8)
    >>> w = F.root_of_unity(8, 1)
    >>> F.is_zero(F.sub(F.mul(w, w), F.root_of_unity(4, 1)))
    <Truth.TRUE: 'true'>
    """

    exact = True
    encloses = True  # an exact element is its own (zero-width) enclosure

    def __init__(self, order: int = 4):
        if not is_power_of_two(order) or order < 4:
            raise ValueError(f"order must be a power of two >= 4, got {order!r}")
        self.order = order
        self.h = order // 2
        self.name = f"exact(Q(zeta_{order}))"
        self._modulus = fmpq_poly([1] + [0] * (self.h - 1) + [1])
        # zeta^(order/4) = exp(-i*pi/2) = -i, so i = -zeta^(h/2)
        self._i = self._monomial(self.h // 2, -1)

    @classmethod
    def for_length(cls, M: int) -> "ExactField":
        """The smallest such field holding the M-th roots of unity (and i), M rounded
        up to a power of two."""
        return cls(1 << max(2, (M - 1).bit_length()))

    def __repr__(self) -> str:
        return f"ExactField({self.order})"

    def _monomial(self, e: int, c: int) -> fmpq_poly:
        e %= self.order
        if e >= self.h:
            e, c = e - self.h, -c
        coeffs = [0] * (e + 1)
        coeffs[e] = c
        return fmpq_poly(coeffs)

    def _reduce(self, p: fmpq_poly) -> fmpq_poly:
        return p % self._modulus if p.degree() >= self.h else p

    # -- making elements -------------------------------------------------
    def from_number(self, x: Any) -> fmpq_poly:
        if isinstance(x, fmpq_poly):
            return self._reduce(x)
        re, im = exact_parts(x)
        out = fmpq_poly([_fmpq(re)])
        if im:
            out = out + self._i * _fmpq(im)
        return out

    def root_of_unity(self, M: int, k: int) -> fmpq_poly:
        if not is_power_of_two(M) or self.order % M:
            raise ValueError(f"{self!r} holds the M-th roots of unity only for M dividing {self.order}, got M={M!r}")
        return self._monomial((k % M) * (self.order // M), 1)

    # -- operations ------------------------------------------------------
    def mul(self, a, b):
        return self._reduce(a * b)

    def div(self, a, b):
        if b.is_zero():
            raise ZeroDivisionError("division by an exact zero")
        # z^h + 1 is irreducible over Q, so gcd(b, modulus) is a nonzero constant g
        g, s, _ = b.xgcd(self._modulus)
        return self._reduce(a * s) / g[0]

    def conj(self, a):
        # conj(zeta^e) = zeta^(-e) = -zeta^(h-e) for 0 < e < h
        c = a.coeffs()
        if len(c) <= 1:
            return a
        out = [0] * self.h
        out[0] = c[0]
        for e in range(1, len(c)):
            out[self.h - e] = -c[e]
        return fmpq_poly(out)

    def is_zero(self, a) -> Truth:
        return Truth.TRUE if a.is_zero() else Truth.FALSE

    # -- functions -----------------------------------------------------------
    def sqrt(self, x) -> fmpq_poly:
        """sqrt of a nonnegative rational that is the square of a rational (an element
        or a number); anything else is Unsupported (it is irrational or not real)."""
        q = self._rational(x)
        if q is not None and q >= 0:
            a, b = isqrt(q.numerator), isqrt(q.denominator)
            if a * a == q.numerator and b * b == q.denominator:
                return self.from_number(Fraction(a, b))
        raise Unsupported(f"sqrt({x!r}) is irrational or not a nonnegative rational; "
                          f"{self!r} holds only rational square roots")

    def exp(self, x) -> fmpq_poly:
        """Only exp(0) = 1 lies in the field; anything else is Unsupported."""
        q = self._rational(x)
        if q == 0:
            return self.one()
        raise Unsupported(f"exp({x!r}) is transcendental; {self!r} cannot hold it")

    def _rational(self, x) -> Fraction | None:
        """The value of x as a real rational, or None when it is not one."""
        if not isinstance(x, fmpq_poly):
            re, im = exact_parts(x, "argument")
            return re if im == 0 else None
        c = self._reduce(x).coeffs()
        if len(c) > 1 and any(v != 0 for v in c[1:]):
            return None
        v = c[0] if c else fmpq(0)
        return Fraction(int(v.p), int(v.q))

    # -- enclosure operations -------------------------------------------------
    def enclose(self, x, prec: int | None = None) -> acb:
        """A ball containing x at ``prec`` bits (default 128)."""
        return self.to_acb(x, 128 if prec is None else prec)

    def abs_upper(self, x) -> float:
        return abs_upper(self.to_acb(x, 64))

    def abs_lower(self, x) -> float:
        """Certain and positive for a nonzero x (the enclosure is refined until it
        excludes zero)."""
        if x.is_zero():
            return 0.0
        prec = 64
        while True:
            low = abs_lower(self.to_acb(x, prec))
            if low > 0.0 or prec > 1 << 16:
                return low
            prec *= 4

    # -- reading out -------------------------------------------------------
    def to_acb(self, a, prec: int = 128) -> acb:
        """A ball enclosing the exact value, at ``prec`` bits."""
        with ctx.workprec(prec + 20):
            out = acb(0)
            for e, c in enumerate(a.coeffs()):
                if c != 0:
                    if (4 * e) % self.order == 0:  # 1 or -i, exactly
                        root = acb(1) if e == 0 else acb(0, -1)
                    else:
                        root = acb.exp_pi_i(acb(fmpq(-2 * e, self.order)))
                    out += acb(arb(c)) * root
        return out

    def to_complex(self, a) -> complex:
        return complex(self.to_acb(a, 80).mid())

    def to_fractions(self, a) -> tuple[Fraction, Fraction]:
        """Exact (re, im) of a Gaussian-rational element; ValueError otherwise."""
        c = a.coeffs() + [fmpq(0)] * (self.h - len(a.coeffs()))
        if self.h > 2 and any(c[e] != 0 for e in range(1, self.h) if e != self.h // 2):
            raise ValueError("element is not a Gaussian rational")
        im = -c[self.h // 2] if self.h >= 2 else fmpq(0)
        return Fraction(int(c[0].p), int(c[0].q)), Fraction(int(im.p), int(im.q))
