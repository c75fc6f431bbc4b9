"""Fields whose elements are arrays of disks: one generic procedure run for many inputs.

``DiskArrayField`` runs a procedure written for scalars once on numpy arrays of disks of
one disk class (``arith.midrad.MR``: float64 midpoints; ``arith.double_double.DD``:
double-double midpoints; ``arith.triple_double.TD``: triple-double midpoints).  Each element is a disk array of any shape (shapes broadcast),
and every operation acts entry by entry with the class's rigorous bounds, so one run gives
disks containing the procedure's exact value for every entry of its inputs
(``MRArrayField``, ``DDArrayField``, ``TDArrayField``).

Decisions are made for the whole array at once.  ``is_zero`` is TRUE when every entry is
the exact point 0, FALSE when every disk certainly excludes 0, UNKNOWN otherwise: a
procedure that branches on it takes one branch for all entries, and only when that branch
is right for each.  ``zero_mask`` gives the same test entry by entry, so a caller can set
the undecided entries aside instead of stopping.  Likewise ``enclose`` is one ball holding
every entry (``enclose_entries`` gives a ball per entry), ``abs_upper`` the largest upper
bound and ``abs_lower`` the least lower bound, and ``to_complex`` the midpoint of largest
modulus (a representative for pivot ranking, never for a decision).

A number is read exactly (a point) when both parts are floats, else enclosed by FLINT at
256 bits and rounded to a disk by ``arith.disk_convert``.  Operations outside a class's
range raise its ``RangeError`` (an ``ArithmeticError``), as does a division by a disk that
is not certainly nonzero (or, for double-double disks, one so wide that the inverse's
a-posteriori bound fails).

>>> F = MRArrayField()
>>> x = F.from_array([1.0, 2.0, 4.0])
>>> y = F.div(F.one(), x)
>>> [float(v) for v in y.mid.real]
[1.0, 0.5, 0.25]
>>> d = MR.from_parts([0.0, 3.0, 1e-3], [0.0, 0.01, 0.01])      # a point 0, a nonzero, undecided
>>> F.zero_mask(d)
(array([ True, False, False]), array([False,  True, False]))
>>> F.is_zero(d)
<Truth.UNKNOWN: 'unknown'>
"""
from __future__ import annotations

from dataclasses import fields, replace
from fractions import Fraction
from typing import Any

import numpy as np
from flint import acb, arb, ctx, fmpq

from . import dd_exp
from .ball import error_upper
from .base import Field, check_power_of_two
from .convert import exact_parts
from .disk_convert import balls_of_disks, dd_midpoints, dd_of_balls, mr_midpoints, mr_of_balls
from .double_double import BIG, DD, roots_of_unity_dd
from .midrad import LARGE, MR, RangeError, roots_of_unity, up
from .triple_double import BIG as TD_BIG, TD, roots_of_unity_td, td_of_balls
from .truth import Truth

#: bits at which numbers that are not floats are enclosed before rounding to disks
NUMBER_PREC = 256


class DiskArrayField(Field):
    """Elements: disk arrays of the class ``disk``, operated on entry by entry.

    A subclass names the class and its conversions: ``disk`` (with ``exact``, ``add``,
    ``sub``, ``neg``, ``mul``, ``inv``, ``conj``, ``abs_upper``, ``abs_lower``,
    ``mid_complex``, ``reshape`` and a dataclass field ``rad``), ``bound`` (the largest
    radius the class keeps), ``prec`` (the midpoints' bits), ``_of_balls`` (acb balls to
    a 1-d disk array containing them), ``_balls`` (a ball containing each disk) and
    ``_grid`` (the disks of the M-th roots of unity)."""

    encloses = True
    disk: type = object
    bound: float = 0.0

    def __init__(self) -> None:
        self._consts: dict = {}
        self._grids: dict = {}

    # -- the class's conversions (a subclass supplies them) --------------------------------
    def _of_balls(self, balls: list) -> Any:
        raise NotImplementedError

    def _balls(self, x: Any, prec: int) -> list:
        raise NotImplementedError

    def _grid(self, M: int) -> Any:
        raise NotImplementedError

    # -- making elements -------------------------------------------------------------------
    def from_array(self, values: Any) -> Any:
        """complex128 (or real) values taken as exact points."""
        return self.disk.exact(np.asarray(values, dtype=np.complex128))

    def from_balls(self, balls: list) -> Any:
        """Disks containing acb balls (a 1-d array, one disk per ball)."""
        return self._of_balls([acb(b) for b in balls])

    def from_number(self, x: Any) -> Any:
        """A number as a 0-d disk: exact when both parts are floats, else enclosed (an acb
        or arb ball is enclosed as it is); the field's own elements pass through."""
        if isinstance(x, self.disk):
            return x
        if isinstance(x, (acb, arb)):
            if not acb(x).is_finite():
                raise ValueError(f"a ball that is not finite: {x!r}")
            return self.from_balls([x]).reshape(())
        re, im = exact_parts(x)
        if _is_float(re) and _is_float(im):
            return self.disk.exact(complex(float(re), float(im)))
        with ctx.workprec(NUMBER_PREC):
            ball = acb(arb(fmpq(re.numerator, re.denominator)), arb(fmpq(im.numerator, im.denominator)))
        return self.from_balls([ball]).reshape(())

    def const(self, q: int | Fraction) -> Any:
        # literals recur in every loop of a procedure: convert each once
        key = (type(q), q)
        c = self._consts.get(key)
        if c is None:
            c = self._consts[key] = self.from_number(q)
        return c

    def root_of_unity(self, M: int, k: int) -> Any:
        """exp(-2 pi i k/M) as a 0-d disk: the quarter points exactly, the others from the
        class's grid of root disks (cached per M)."""
        check_power_of_two(M)
        k %= M
        if (4 * k) % M == 0:
            return self.disk.exact((1 + 0j, -1j, -1 + 0j, 1j)[(4 * k) // M])
        return _entry(self._roots(M), k)

    def roots_of_unity(self, M: int) -> list:
        check_power_of_two(M)
        return [self.root_of_unity(M, k) for k in range(M)]

    def _roots(self, M: int) -> Any:
        grid = self._grids.get(M)
        if grid is None:
            grid = self._grids[M] = self._grid(M)
        return grid

    # -- operations ------------------------------------------------------------------------
    def add(self, a, b):
        return a.add(b)

    def sub(self, a, b):
        return a.sub(b)

    def neg(self, a):
        return a.neg()

    def mul(self, a, b):
        return a.mul(b)

    def div(self, a, b):
        return a.mul(b.inv())

    def conj(self, a):
        return a.conj()

    # -- zero tests --------------------------------------------------------------------------
    def zero_mask(self, a) -> tuple[np.ndarray, np.ndarray]:
        """``(certainly_zero, certainly_nonzero)``: boolean arrays of a's shape, True where
        the disk is the exact point 0, resp. where it certainly excludes 0 (a positive lower
        bound of its modulus); an entry False in both is undecided."""
        parts = [np.asarray(getattr(a, f.name)) for f in fields(a) if f.name != "rad"]
        zero = np.asarray(a.rad) == 0
        for p in parts:
            zero = zero & (p == 0)
        return zero, np.asarray(a.abs_lower()) > 0

    def is_zero(self, a) -> Truth:
        zero, nonzero = self.zero_mask(a)
        if np.all(nonzero):
            return Truth.FALSE
        return Truth.TRUE if np.all(zero) else Truth.UNKNOWN

    # -- enclosure operations ------------------------------------------------------------------
    def enclose_entries(self, x, prec: int | None = None) -> list:
        """A ball per entry (flattened in C order) containing that entry's disk, formed at
        ``prec`` bits (default the field's ``prec`` + 64)."""
        return self._balls(x, self.prec + 64 if prec is None else prec)

    def enclose(self, x, prec: int | None = None) -> acb:
        """One ball containing the disk of every entry of x (the entry's own ball when x has
        one entry): decisions made on it hold for every entry at once."""
        balls = self.enclose_entries(x, prec)
        if not balls:
            raise ValueError("enclose: an element with no entries")
        p = self.prec + 64 if prec is None else prec
        out = balls[0]
        with ctx.workprec(p):
            for b in balls[1:]:
                out = out.union(b)
        return out

    def add_error(self, x, e) -> Any:
        """x with every radius enlarged by a certain upper bound of e >= 0: the disk of
        radius rad + e about the same midpoint contains every z with |z - p| <= e for a point
        p of the disk.  RangeError when a radius leaves the class's range."""
        r = error_upper(e)
        rad = up(np.asarray(x.rad) + r)
        if not (np.all(np.isfinite(rad)) and float(np.max(rad, initial=0.0)) <= self.bound):
            raise RangeError(f"a radius beyond {self.bound!r}")
        return replace(x, rad=np.asarray(rad, dtype=np.float64))

    def abs_upper(self, x) -> float:
        return float(np.max(x.abs_upper(), initial=0.0))

    def abs_lower(self, x) -> float:
        return float(np.min(x.abs_lower(), initial=np.inf))

    # -- reading elements out ------------------------------------------------------------------
    def to_complex(self, a) -> complex:
        m = np.ravel(a.mid_complex())
        return complex(m[int(np.argmax(np.abs(m)))]) if m.size else 0j


class MRArrayField(DiskArrayField):
    """Elements: ``MR`` arrays (float64 disks, ``arith.midrad``), operated on entry by entry.
    Numbers are rounded by ``disk_convert.mr_of_balls``; no square root or exponential."""

    name = "mr-arrays"
    disk = MR
    bound = LARGE
    prec = 53

    def _of_balls(self, balls: list) -> MR:
        return mr_of_balls(balls)

    def _balls(self, x: MR, prec: int) -> list:
        return balls_of_disks(mr_midpoints(x), np.asarray(x.rad), prec)

    def _grid(self, M: int) -> MR:
        return roots_of_unity(M)


class DDArrayField(DiskArrayField):
    """Elements: ``DD`` arrays (double-double disks, ``arith.double_double``), operated on
    entry by entry, with the exponential of ``arith.dd_exp``.

    >>> F = DDArrayField()
    >>> x = F.from_array([1.0, 2.0, 4.0])
    >>> y = F.div(F.one(), x)
    >>> [float(v) for v in y.mid_complex().real]
    [1.0, 0.5, 0.25]
    """

    name = "dd-arrays"
    disk = DD
    bound = BIG
    prec = 106

    def _of_balls(self, balls: list) -> DD:
        return dd_of_balls(balls)

    def _balls(self, x: DD, prec: int) -> list:
        return balls_of_disks(dd_midpoints(x, prec), np.asarray(x.rad), prec)

    def _grid(self, M: int) -> DD:
        return roots_of_unity_dd(M)

    def exp(self, x: Any) -> DD:
        """e^w for every point w of every disk (``dd_exp.exp``); a number is read first."""
        return dd_exp.exp(x if isinstance(x, DD) else self.from_number(x))


class TDArrayField(DiskArrayField):
    """Elements: ``TD`` arrays (triple-double disks, ``arith.triple_double``), operated on
    entry by entry; numbers and balls converted by ``triple_double.td_of_balls``, disks to
    balls by ``TD.to_balls``.  No square root or exponential."""

    name = "td-arrays"
    disk = TD
    bound = TD_BIG
    prec = 159

    def _of_balls(self, balls: list) -> TD:
        return td_of_balls(balls)

    def _balls(self, x: TD, prec: int) -> list:
        return x.to_balls(prec)

    def _grid(self, M: int) -> TD:
        return roots_of_unity_td(M)


def _entry(x: Any, k: int) -> Any:
    """Entry k of a 1-d disk array as a 0-d disk array of its own (copies)."""
    return type(x)(**{f.name: np.array(getattr(x, f.name)[k]) for f in fields(x)})


def _is_float(q: Fraction) -> bool:
    try:
        return Fraction(float(q)) == q
    except OverflowError:
        return False
