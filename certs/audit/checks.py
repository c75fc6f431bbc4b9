"""The audit's record of checks, and certain comparisons of stored numbers.

A stored bound is checked against an enclosure [lo, hi] of the true value recomputed
independently: an upper bound below lo (a lower bound above hi) is refuted; one at or
beyond the enclosure is proved; one inside it is only "not contradicted".
"""
from __future__ import annotations

import math
from typing import Any, Callable

from flint import acb, arb

from ..io.numbers import exact_arb, parse_rational


class Checks:
    """The (name, passed, detail) of each check, in order."""

    def __init__(self):
        self.items: list[tuple[str, bool, str]] = []

    def add(self, name: str, passed: bool, detail: str) -> None:
        self.items.append((name, bool(passed), detail))

    def run(self, name: str, fn: Callable[[], tuple[bool, str]]) -> None:
        """A check whose inputs may be malformed: an error fails it, naming the error."""
        try:
            passed, detail = fn()
        except (ValueError, KeyError, TypeError, ArithmeticError) as e:
            passed, detail = False, f"cannot be checked: {type(e).__name__}: {e}"
        self.add(name, passed, detail)


def stored_point(v: Any, what: str) -> arb:
    """A stored real number as an arb: exact for ints, floats and dyadic strings."""
    if isinstance(v, bool) or v is None:
        raise ValueError(f"{what}: expected a number, got {v!r}")
    if isinstance(v, int):
        return arb(v)
    if isinstance(v, float):
        if math.isnan(v):
            raise ValueError(f"{what}: NaN")
        return arb(v)
    if v in ("inf", "-inf"):
        return arb(v)
    if isinstance(v, str):
        return exact_arb(parse_rational(v, what), prec=256)
    raise ValueError(f"{what}: expected a number, got {type(v).__name__}")


def stored_float(v: Any, what: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise ValueError(f"{what}: expected a number, got {v!r}")
    if isinstance(v, str):
        if v in ("inf", "-inf"):
            return float(v)
        raise ValueError(f"{what}: expected a float, got {v!r}")
    f = float(v)
    if math.isnan(f):
        raise ValueError(f"{what}: NaN")
    return f


def stored_int(v: Any, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"{what}: expected an integer, got {v!r}")
    return v


def pt_max(a: arb, b: arb) -> arb:
    """max of two exact points (comparisons of exact points are decisive)."""
    return a if a >= b else b


def pt_min(a: arb, b: arb) -> arb:
    return a if a <= b else b


def abs_bounds(x: acb) -> tuple[arb, arb]:
    """(lower, upper) exact points of |x| over the ball (0 and inf if not finite)."""
    if not x.is_finite():
        return arb(0), arb("inf")
    a = abs(x)
    lo = a.lower()
    return (lo if lo > 0 else arb(0)), a.upper()


def sum_bounds(xs: list) -> tuple[arb, arb]:
    lo, hi = arb(0), arb(0)
    for x in xs:
        l, h = abs_bounds(x)
        lo, hi = lo + l, hi + h
    return lo.lower(), hi.upper()


def fmt(x: arb) -> str:
    return f"{float(x.mid()):.6g}" if x.is_finite() else str(x)


def upper_check(name: str, stored: arb, lo: arb, hi: arb) -> tuple[bool, str]:
    """A stored upper bound of a quantity enclosed in [lo, hi]."""
    if stored < lo:
        return False, f"{name} = {fmt(stored)} is below the recomputed lower bound {fmt(lo)} of the true value"
    how = "proved" if stored >= hi else f"not contradicted (true value in [{fmt(lo)}, {fmt(hi)}])"
    return True, f"{name} = {fmt(stored)} >= true value: {how}"


def lower_check(name: str, stored: arb, lo: arb, hi: arb) -> tuple[bool, str]:
    """A stored lower bound of a quantity enclosed in [lo, hi]."""
    if stored > hi:
        return False, f"{name} = {fmt(stored)} is above the recomputed upper bound {fmt(hi)} of the true value"
    how = "proved" if stored <= lo else f"not contradicted (true value in [{fmt(lo)}, {fmt(hi)}])"
    return True, f"{name} = {fmt(stored)} <= true value: {how}"
