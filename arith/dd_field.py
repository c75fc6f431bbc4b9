"""A field whose elements are arrays of double-double disks, one procedure run for many.

``DDArrayField`` runs a generic procedure once on numpy arrays: each element is a
``DD`` (any shape; shapes broadcast), and every operation acts entry by entry with the
rigorous bounds of ``arith.double_double``.  So a procedure written for scalars (the
diagonal kernel's weights and nodes, say) gives, in one run, disks containing its
exact value for every entry of its inputs.  It is ``arith.array_field``'s generic disk
array field over ``DD``, with the exponential of ``arith.dd_exp``.

Zero tests are three-valued over the whole array: TRUE when every entry is the exact
point 0, FALSE when every disk certainly excludes 0, UNKNOWN otherwise.  A procedure
that branches on them therefore takes one branch for all entries, and only when that
branch is right for each (``zero_mask`` gives the test entry by entry).  ``to_complex``
gives the midpoint of largest modulus (a representative for pivot ranking, never for a
decision).

>>> F = DDArrayField()
>>> x = F.from_array([1.0, 2.0, 4.0])
>>> y = F.div(F.one(), x)
>>> [float(v) for v in y.mid_complex().real]
[1.0, 0.5, 0.25]
"""
from __future__ import annotations

from .array_field import DDArrayField

__all__ = ["DDArrayField"]
