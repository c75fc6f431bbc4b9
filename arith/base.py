"""The field interface shared by every arithmetic model.

A field is a context object: it carries the arithmetic (precision included) and
makes and combines plain elements.  Algorithms take the field as first argument
and never look inside an element.  Every field implements the scalar operations
below; a field may also *supply* faster vector primitives (``"dft"``,
``"polymul"``) which generic procedures use when present.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable

from .convert import as_entries, as_rows
from .truth import Truth


def is_power_of_two(M: int) -> bool:
    return isinstance(M, int) and not isinstance(M, bool) and M >= 1 and (M & (M - 1)) == 0


def check_power_of_two(M: Any, what: str = "M") -> int:
    if not is_power_of_two(M):
        raise ValueError(f"{what} must be a power of two >= 1, got {M!r}")
    return M


class Field:
    """Abstract scalar field.  Subclasses implement the element operations."""

    name = "field"
    #: True when zero tests are exact (never ``UNKNOWN``) and results are exact.
    exact = False

    # -- making elements -------------------------------------------------
    def from_number(self, x: Any) -> Any:
        """An input number as an element (int, float, complex, Fraction, fmpq, (re, im))."""
        raise NotImplementedError

    def const(self, q: int | Fraction) -> Any:
        """A rational literal used by an algorithm (2, 1/M, ...), not a problem input."""
        return self.from_number(q)

    def zero(self) -> Any:
        return self.const(0)

    def one(self) -> Any:
        return self.const(1)

    def root_of_unity(self, M: int, k: int) -> Any:
        """exp(-2*pi*i*k/M), a supplied constant."""
        raise NotImplementedError

    def vector(self, xs: Any, what: str = "vector") -> list:
        return [self.from_number(v) for v in as_entries(xs, what)]

    def matrix(self, rows: Any, what: str = "matrix") -> list[list]:
        return [[self.from_number(v) for v in r] for r in as_rows(rows, what)]

    # -- operations ------------------------------------------------------
    def add(self, a: Any, b: Any) -> Any:
        raise NotImplementedError

    def sub(self, a: Any, b: Any) -> Any:
        raise NotImplementedError

    def neg(self, a: Any) -> Any:
        raise NotImplementedError

    def mul(self, a: Any, b: Any) -> Any:
        raise NotImplementedError

    def div(self, a: Any, b: Any) -> Any:
        raise NotImplementedError

    def conj(self, a: Any) -> Any:
        raise NotImplementedError

    def is_zero(self, a: Any) -> Truth:
        raise NotImplementedError

    # -- reading elements out -------------------------------------------
    def to_complex(self, a: Any) -> complex:
        raise NotImplementedError

    # -- optional fast primitives ---------------------------------------
    def primitive(self, name: str) -> Callable | None:
        """A faster vector primitive this field supplies, or None.

        ``"dft"``: ``f(a, inverse) -> list``, the transform of the spec's convention
        (inverse divided by M).  ``"polymul"``: ``f(p, q) -> list``, the product.
        """
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

