"""A field whose elements are arrays of double-double disks, one procedure run for many.

``DDArrayField`` runs a generic procedure once on numpy arrays: each element is a
``DD`` (any shape; shapes broadcast), and every operation acts entry by entry with the
rigorous bounds of ``arith.double_double``.  So a procedure written for scalars (the
diagonal kernel's weights and nodes, say) gives, in one run, disks containing its
exact value for every entry of its inputs.

Zero tests are three-valued over the whole array: TRUE when every entry is the exact
point 0, FALSE when every disk certainly excludes 0, UNKNOWN otherwise.  A procedure
that branches on them therefore takes one branch for all entries, and only when that
branch is right for each.  ``to_complex`` gives the midpoint of largest modulus (a
representative for pivot ranking, never for a decision).

>>> F = DDArrayField()
>>> x = F.from_array([1.0, 2.0, 4.0])
>>> y = F.div(F.one(), x)
>>> [float(v) for v in y.mid_complex().real]
[1.0, 0.5, 0.25]
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from . import dd_exp
from .base import Field
from .convert import exact_parts
from .double_double import DD, dd_of_balls
from .truth import Truth


class DDArrayField(Field):
    """Elements: ``DD`` arrays (double-double disks), operated on entry by entry."""

    name = "dd-arrays"
    encloses = True

    def from_array(self, values: Any) -> DD:
        """complex128 (or real) values taken as exact points."""
        return DD.exact(np.asarray(values, dtype=np.complex128))

    def from_number(self, x: Any) -> DD:
        """A number as a 0-d disk: exact when both parts are floats, else enclosed."""
        re, im = exact_parts(x)
        if _is_float(re) and _is_float(im):
            return DD.exact(complex(float(re), float(im)))
        from flint import acb, arb, ctx, fmpq

        with ctx.workprec(256):
            ball = acb(arb(fmpq(re.numerator, re.denominator)), arb(fmpq(im.numerator, im.denominator)))
        return dd_of_balls([ball]).reshape(())

    def add(self, a: DD, b: DD) -> DD:
        return a.add(b)

    def sub(self, a: DD, b: DD) -> DD:
        return a.sub(b)

    def neg(self, a: DD) -> DD:
        return a.neg()

    def mul(self, a: DD, b: DD) -> DD:
        return a.mul(b)

    def div(self, a: DD, b: DD) -> DD:
        return a.mul(b.inv())

    def conj(self, a: DD) -> DD:
        return a.conj()

    def exp(self, x: Any) -> DD:
        return dd_exp.exp(x if isinstance(x, DD) else self.from_number(x))

    def is_zero(self, a: DD) -> Truth:
        if np.all(a.abs_lower() > 0):
            return Truth.FALSE
        point_zero = (a.rh == 0) & (a.rl == 0) & (a.ih == 0) & (a.il == 0) & (a.rad == 0)
        return Truth.TRUE if np.all(point_zero) else Truth.UNKNOWN

    def abs_upper(self, x: DD) -> float:
        return float(np.max(x.abs_upper(), initial=0.0))

    def abs_lower(self, x: DD) -> float:
        return float(np.min(x.abs_lower(), initial=np.inf))

    def to_complex(self, a: DD) -> complex:
        m = np.ravel(a.mid_complex())
        return complex(m[int(np.argmax(np.abs(m)))]) if m.size else 0j


def _is_float(q: Fraction) -> bool:
    try:
        return Fraction(float(q)) == q
    except OverflowError:
        return False
