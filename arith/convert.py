"""Exact reading of user numbers.

Every field reads its inputs through :func:`exact_parts`, so all fields agree on what
number a user meant: a float is its exact binary value, a complex number is a pair
of floats, a ``(re, im)`` pair is read part by part.
"""
from __future__ import annotations

import math
import numbers
from fractions import Fraction
from typing import Any

import numpy as np
from flint import fmpq, fmpz

Parts = tuple[Fraction, Fraction]

#: binary64 scalars (Python's and numpy's): exact numbers whenever finite, read without Fractions
BINARY64 = (float, complex, np.float64, np.complex128)


def _real_fraction(x: Any, what: str) -> Fraction:
    if type(x) is float and math.isfinite(x):  # the common case, first
        return Fraction(*x.as_integer_ratio())
    if isinstance(x, (bool, np.bool_)):
        raise ValueError(f"{what}: a boolean is not a number")
    if isinstance(x, Fraction):
        return x
    if isinstance(x, (int, np.integer)):
        return Fraction(int(x))
    if isinstance(x, fmpz):
        return Fraction(int(x))
    if isinstance(x, fmpq):
        return Fraction(int(x.p), int(x.q))
    if isinstance(x, (float, np.floating)):
        if not np.isfinite(x):
            raise ValueError(f"{what}: non-finite number {float(x)!r}")
        return Fraction(*x.as_integer_ratio())  # exact for every width, long double included
    if isinstance(x, numbers.Rational):
        return Fraction(x.numerator, x.denominator)
    raise ValueError(f"{what}: cannot read {type(x).__name__} {x!r} as an exact real number")


def exact_parts(x: Any, what: str = "number") -> Parts:
    """Return ``(re, im)`` as Fractions, exactly.

    Accepts int, float, complex (their exact binary values), Fraction, flint fmpz/fmpq,
    numpy scalars, and a pair ``(re, im)`` of real numbers.

    >>> exact_parts(0.5 + 2j)
    (Fraction(1, 2), Fraction(2, 1))
    """
    if isinstance(x, np.complexfloating):  # parts at their own width (clongdouble too)
        return _real_fraction(x.real, what), _real_fraction(x.imag, what)
    if isinstance(x, complex):
        return _real_fraction(x.real, what), _real_fraction(x.imag, what)
    if isinstance(x, tuple):
        if len(x) != 2:
            raise ValueError(f"{what}: a pair (re, im) has two entries, got {len(x)}")
        return _real_fraction(x[0], what), _real_fraction(x[1], what)
    return _real_fraction(x, what), Fraction(0)


def is_scalar_input(x: Any) -> bool:
    """True when ``x`` reads as one scalar (not a sequence of them)."""
    if isinstance(x, tuple) and len(x) == 2 and not isinstance(x[0], (list, tuple, np.ndarray)):
        return True
    return not isinstance(x, (list, tuple, np.ndarray))


def as_entries(x: Any, what: str) -> list:
    """A vector given as a numpy array, list or tuple, as a plain list of scalars."""
    if isinstance(x, np.ndarray):
        if x.ndim != 1:
            raise ValueError(f"{what}: expected a vector, got an array of shape {x.shape}")
        return [v.item() if hasattr(v, "item") else v for v in x]
    if isinstance(x, (list, tuple)) and not (isinstance(x, tuple) and is_scalar_input(x)):
        for v in x:
            if isinstance(v, (list, np.ndarray)):
                raise ValueError(f"{what}: expected a vector, got a nested sequence")
        return list(x)
    raise ValueError(f"{what}: expected a vector (list or 1-d array), got {type(x).__name__}")


def as_rows(x: Any, what: str) -> list[list]:
    """A matrix given as a 2-d numpy array or nested lists, as a list of rows."""
    if isinstance(x, np.ndarray):
        if x.ndim != 2:
            raise ValueError(f"{what}: expected a matrix, got an array of shape {x.shape}")
        return [[v.item() for v in row] for row in x]
    if not isinstance(x, (list, tuple)):
        raise ValueError(f"{what}: expected a matrix (nested lists or 2-d array), got {type(x).__name__}")
    rows = [as_entries(r, f"{what} row {i}") for i, r in enumerate(x)]
    if rows and any(len(r) != len(rows[0]) for r in rows):
        raise ValueError(f"{what}: rows of unequal length")
    return rows
