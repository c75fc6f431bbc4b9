"""Shared checks and strategies for the test suite."""
from __future__ import annotations

from fractions import Fraction

from hypothesis import strategies as st

from arith import BallField, ExactField, Truth


def exact_equal(F: ExactField, x, y) -> bool:
    """x == y exactly in an exact field."""
    return F.is_zero(F.sub(x, y)) is Truth.TRUE


def all_exact_equal(F, xs, ys) -> bool:
    return len(xs) == len(ys) and all(exact_equal(F, x, y) for x, y in zip(xs, ys))


def encloses(ball, E: ExactField, x) -> bool:
    """The ball certainly contains the exact element x of E (checked against a much
    tighter enclosure of x)."""
    return bool(ball.contains(E.to_acb(x, 4096)))


def all_enclose(balls, E, xs) -> bool:
    return len(balls) == len(xs) and all(encloses(b, E, x) for b, x in zip(balls, xs))


def fractions(max_num: int = 20, max_den: int = 8):
    return st.builds(Fraction, st.integers(-max_num, max_num), st.integers(1, max_den))


def gaussian(max_num: int = 20, max_den: int = 8):
    """Gaussian rationals as (re, im) pairs of Fractions."""
    return st.tuples(fractions(max_num, max_den), fractions(max_num, max_den))
