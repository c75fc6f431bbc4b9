"""The field interface shared by every arithmetic model.

A field is a context object: it carries the arithmetic (precision included) and
makes and combines plain elements.  Algorithms take the field as first argument
and never look inside an element, nor at the field's class: what a field can do
is read from its flags and its methods, after FLINT's ``gr`` method tables.

* flags: ``exact`` (results exact, zero tests never ``UNKNOWN``), ``encloses``
  (elements are enclosures containing the true value), ``prec`` (bits, or None);
* enclosure operations: ``enclose``, ``add_error``, ``abs_upper``, ``abs_lower``;
* vector and matrix kernels with classical defaults: ``dot``, ``matmul``,
  ``matvec``; elementwise ``vec_add``, ``vec_sub``, ``vec_mul``, ``vec_scale``,
  ``vec_shift``, ``vec_inverses`` (with the zero tests) and the grid ``roots_of_unity``;
  optional fast primitives ``primitive("dft")``, ``primitive("polymul")``;
* optional functions ``sqrt`` and ``exp``.

An operation a field cannot perform raises :class:`Unsupported` (a ``ValueError``).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable, Sequence

from .convert import as_entries, as_rows
from .truth import Truth


class Unsupported(ValueError):
    """The field cannot perform this operation (FLINT's ``GR_UNABLE`` for a capability)."""


def is_power_of_two(M: int) -> bool:
    return isinstance(M, int) and not isinstance(M, bool) and M >= 1 and (M & (M - 1)) == 0


def check_power_of_two(M: Any, what: str = "M") -> int:
    if not is_power_of_two(M):
        raise ValueError(f"{what} must be a power of two >= 1, got {M!r}")
    return M


def _pairs(xs: Sequence, ys: Sequence):
    if len(xs) != len(ys):
        raise ValueError(f"elementwise operation: lengths {len(xs)} and {len(ys)} differ")
    return zip(xs, ys)


class Field:
    """Abstract scalar field.  Subclasses implement the element operations."""

    name = "field"
    #: True when zero tests are exact (never ``UNKNOWN``) and results are exact.
    exact = False
    #: True when every element is an enclosure of the true value of what it stands for.
    encloses = False
    #: working precision in bits, or None when the field has none
    prec: int | None = None

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
    # add, sub and neg default to the elements' own operators (exact for fmpq_poly, one
    # rounding for complex); a field whose elements need more overrides them
    def add(self, a: Any, b: Any) -> Any:
        return a + b

    def sub(self, a: Any, b: Any) -> Any:
        return a - b

    def neg(self, a: Any) -> Any:
        return -a

    def mul(self, a: Any, b: Any) -> Any:
        raise NotImplementedError

    def div(self, a: Any, b: Any) -> Any:
        raise NotImplementedError

    def conj(self, a: Any) -> Any:
        raise NotImplementedError

    def is_zero(self, a: Any) -> Truth:
        raise NotImplementedError

    # -- optional functions ------------------------------------------------
    def sqrt(self, x: Any) -> Any:
        """The principal square root of an element, or of a number (read exactly, a
        supplied constant).  Unsupported unless the field supplies it."""
        raise Unsupported(f"{self!r} supplies no square root")

    def exp(self, x: Any) -> Any:
        """exp of an element, or of a number (read exactly, a supplied constant).
        Unsupported unless the field supplies it."""
        raise Unsupported(f"{self!r} supplies no exponential")

    # -- enclosure operations --------------------------------------------
    def enclose(self, x: Any, prec: int | None = None) -> Any:
        """An ``acb`` ball containing the value of x (at ``prec`` bits, default the
        field's).  Unsupported where elements are not enclosures of their values."""
        raise Unsupported(f"{self!r} cannot enclose its elements in balls")

    def add_error(self, x: Any, e: float | int | Fraction) -> Any:
        """x enlarged by an absolute error: the result contains every z with
        |z - p| <= e for a point p of x.  ``e`` is an exact number >= 0 (float or
        Fraction), an upper bound of the error.  Unsupported where elements cannot
        carry an error."""
        raise Unsupported(f"{self!r} cannot carry an error bound")

    def abs_upper(self, x: Any) -> float:
        """A float certainly >= |p| for every point p of x (math.inf if unbounded)."""
        raise Unsupported(f"{self!r} cannot bound the modulus of its elements")

    def abs_lower(self, x: Any) -> float:
        """A float certainly <= |p| for every point p of x (0.0 when undecided)."""
        raise Unsupported(f"{self!r} cannot bound the modulus of its elements")

    # -- vector and matrix kernels (classical defaults on the field's own ops)
    def dot(self, xs: Sequence, ys: Sequence) -> Any:
        """sum_i xs[i]*ys[i], in index order (zero for empty vectors)."""
        if len(xs) != len(ys):
            raise ValueError(f"dot: lengths {len(xs)} and {len(ys)} differ")
        if not xs:
            return self.zero()
        acc = self.mul(xs[0], ys[0])
        for x, y in zip(xs[1:], ys[1:]):
            acc = self.add(acc, self.mul(x, y))
        return acc

    def matvec(self, A: Sequence[Sequence], x: Sequence) -> list:
        """A x, A given as a list of rows."""
        return [self.dot(row, x) for row in A]

    def matmul(self, A: Sequence[Sequence], B: Sequence[Sequence]) -> list[list]:
        """A B, both given as lists of rows."""
        if A and len(A[0]) != len(B):
            raise ValueError(f"matmul: {len(A[0])} columns against {len(B)} rows")
        cols = [list(c) for c in zip(*B)] if B else []
        return [[self.dot(row, c) for c in cols] for row in A]

    # -- elementwise vector kernels (the same operations, one per entry, in index order;
    # a field may run them in one sweep, its results entry by entry those of the scalar ops)
    def vec_add(self, xs: Sequence, ys: Sequence) -> list:
        """[xs[k] + ys[k]]."""
        return [self.add(x, y) for x, y in _pairs(xs, ys)]

    def vec_sub(self, xs: Sequence, ys: Sequence) -> list:
        """[xs[k] - ys[k]]."""
        return [self.sub(x, y) for x, y in _pairs(xs, ys)]

    def vec_mul(self, xs: Sequence, ys: Sequence) -> list:
        """[xs[k] * ys[k]]."""
        return [self.mul(x, y) for x, y in _pairs(xs, ys)]

    def vec_scale(self, c: Any, xs: Sequence) -> list:
        """[c * xs[k]] for one element c."""
        return [self.mul(c, x) for x in xs]

    def vec_shift(self, c: Any, xs: Sequence) -> list:
        """[c + xs[k]] for one element c."""
        return [self.add(c, x) for x in xs]

    def vec_inverses(self, xs: Sequence) -> tuple[list, list[int], list[int]]:
        """``(inv, zero, unknown)``: ``inv[k] = 1/xs[k]`` where the zero test of xs[k] is
        FALSE and None elsewhere; ``zero`` the k whose test is TRUE, ``unknown`` those
        whose test is UNKNOWN (both ascending)."""
        inv: list = [None] * len(xs)
        zero, unknown = [], []
        one = self.one()
        for k, x in enumerate(xs):
            t = self.is_zero(x)
            if t is Truth.FALSE:
                inv[k] = self.div(one, x)
            elif t is Truth.TRUE:
                zero.append(k)
            else:
                unknown.append(k)
        return inv, zero, unknown

    def roots_of_unity(self, M: int) -> list:
        """[root_of_unity(M, k) for k < M]: the whole grid (supplied constants)."""
        check_power_of_two(M)
        return [self.root_of_unity(M, k) for k in range(M)]

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


class WrappedField(Field):
    """A field over ``base`` whose elements hold the base's element in ``.v`` (Counting,
    Tracing): the flags and the enclosure queries pass through to the base."""

    def __init__(self, base: Field):
        self.base = base
        self.exact = base.exact
        self.encloses = base.encloses
        self.prec = base.prec

    def enclose(self, x, prec: int | None = None):
        return self.base.enclose(x.v, prec)

    def abs_upper(self, x) -> float:
        return self.base.abs_upper(x.v)

    def abs_lower(self, x) -> float:
        return self.base.abs_lower(x.v)

    def to_complex(self, a) -> complex:
        return self.base.to_complex(a.v)
