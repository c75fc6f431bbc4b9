"""complex128 arithmetic: the fast, uncertified baseline."""
from __future__ import annotations

import cmath
import math
from typing import Any

import numpy as np
from flint import acb, arb

from .ball import abs_lower, abs_upper
from .base import Field, check_power_of_two
from .convert import exact_parts
from .truth import Truth

_QUARTER = (1 + 0j, -1j, -1 + 0j, 1j)


class Float64Field(Field):
    """Python ``complex`` (IEEE binary64 parts).  Nothing is certified; zero tests
    compare the computed value with zero.  Supplies numpy's FFT and convolution."""

    name = "float64"

    def from_number(self, x: Any) -> complex:
        if isinstance(x, complex):
            if not (math.isfinite(x.real) and math.isfinite(x.imag)):
                raise ValueError(f"non-finite number {x!r}")
            return x
        if isinstance(x, (acb, arb)):  # a ball: its midpoint (this field certifies nothing)
            return complex(acb(x).mid())
        re, im = exact_parts(x)
        return complex(float(re), float(im))

    def root_of_unity(self, M: int, k: int) -> complex:
        check_power_of_two(M)
        k %= M
        if (4 * k) % M == 0:
            return _QUARTER[(4 * k) // M]
        return cmath.exp(-2j * math.pi * k / M)

    def mul(self, a, b):
        return a * b

    def div(self, a, b):
        return a / b

    def conj(self, a):
        return a.conjugate()

    def is_zero(self, a) -> Truth:
        return Truth.TRUE if a == 0 else Truth.FALSE

    def to_complex(self, a) -> complex:
        return complex(a)

    def sqrt(self, x) -> complex:
        """cmath's principal square root of the element (a number is read first)."""
        return cmath.sqrt(self.from_number(x))

    def exp(self, x) -> complex:
        return cmath.exp(self.from_number(x))

    # the modulus of the computed point itself, bounded exactly (nothing is enclosed)
    def abs_upper(self, x) -> float:
        return abs_upper(acb(x.real, x.imag))

    def abs_lower(self, x) -> float:
        return abs_lower(acb(x.real, x.imag))

    def primitive(self, name: str):
        if name == "dft":
            def dft(a, inverse=False):
                v = np.asarray(a, dtype=np.complex128)
                return (np.fft.ifft(v) if inverse else np.fft.fft(v)).tolist()
            return dft
        if name == "polymul":
            return lambda p, q: np.convolve(np.asarray(p, np.complex128), np.asarray(q, np.complex128)).tolist()
        return None
