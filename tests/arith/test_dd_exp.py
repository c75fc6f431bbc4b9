"""The complex exponential on double-double disks (arith/dd_exp.py, proofs/dd_exp.md).

Every disk is checked against FLINT's ``acb`` exponential at 300 bits, far beyond the
disks' 106 bits: the point or disk midpoint is built exactly as a ball (a float is exact
in ``acb``), every operation on the balls is done at 300 bits, and containment is the
certain comparison ``upper(|e^w - mid|) <= rad``."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from flint import acb, arb, ctx
from hypothesis import given, strategies as st

from s4cert.arith import dd_exp
from s4cert.arith.double_double import DD
from s4cert.arith.midrad import RangeError

PREC = 300


def mid_ball(x: DD, i) -> acb:
    """The exact double-double midpoint of entry i (a ball at 300 bits holding it)."""
    return acb(arb(float(x.rh[i])) + arb(float(x.rl[i])), arb(float(x.ih[i])) + arb(float(x.il[i])))


def holds(x: DD, i, value: acb) -> bool:
    """Whether disk i of x certainly contains every point of the ball ``value``."""
    with ctx.workprec(PREC):
        return bool(abs(value - mid_ball(x, i)).upper() <= arb(float(x.rad[i])))


def exp_ball(w: acb) -> acb:
    with ctx.workprec(PREC):
        return w.exp()


POINTS = [0j, 5e-324 + 0j, 1e-300 + 0j, 1e-300j, -1e-20 + 3e-25j, 1 + 1j, 1j * math.pi, 1j * 1e4, -1j * 9999.5,
          1j * 1e9, 2.0 ** 39 * 1j, -1.0 + 0j, -40.25 + 7j, -700 + 0j, -700 + 3j, -745.0 + 0.5j, -1e-3 + 1e4j,
          10 + 0j, 100 - 20j, 300 + 0j, 300 + 1e4j, 346 + 0j]


def test_exp_contains_the_exponential_at_points():
    """Points from 0 and subnormals to |w| = 2^39: underflowing results (Re w = -745) and
    results near 2^499 (Re w = 346) included; one call, so all share the largest scale."""
    x = DD.exact(np.array(POINTS))
    e = dd_exp.exp(x)
    for i, w in enumerate(POINTS):
        assert holds(e, i, exp_ball(acb(w))), w
    for i, w in enumerate(POINTS):   # and each alone (its own scale)
        assert holds(dd_exp.exp(DD.exact(np.array([w]))), 0, exp_ball(acb(w))), w


def axis_points(x: DD, i):
    """The midpoint moved by the radius along both axes (points on the circle), and two
    interior points, as 300-bit balls holding the exact points."""
    with ctx.workprec(PREC):
        m, r = mid_ball(x, i), arb(float(x.rad[i]))
        return [m, m + r, m - r, m + acb(0, r), m - acb(0, r), m + acb(r * 3 / 5, -r * 4 / 5) / 2,
                m + acb(-r * 12 / 13, r * 5 / 13)]


@pytest.mark.parametrize("rad", [1e-30, 1e-12, 1e-3, 0.5])
def test_exp_disks_contain_the_exponential_of_every_point(rad):
    """Disks with radii from 1e-30 to 0.5 (and low parts): exp of points on the circle and
    inside lies in the result."""
    hi = np.array([0j, 1 + 1j, -3 + 100j, 0.25 - 2e3j, -600 + 1j, 50 + 0j])
    lo = hi * 2.0 ** -60
    x = DD.from_parts(hi, lo, np.full(hi.shape, rad))
    e = dd_exp.exp(x)
    for i in range(len(hi)):
        for p in axis_points(x, i):
            assert holds(e, i, exp_ball(p)), (hi[i], rad)


@given(st.floats(-700, 300), st.floats(-1e4, 1e4), st.sampled_from([0.0, 1e-25, 1e-8, 1e-2]),
       st.floats(-1, 1), st.floats(0, 2 * math.pi))
def test_exp_disks_contain_random_points(re, im, rad, lo, angle):
    w = complex(re, im)
    x = DD.from_parts(np.array([w]), np.array([w * lo * 2.0 ** -54]), np.array([rad]))
    e = dd_exp.exp(x)
    c, s = Fraction(math.cos(angle)), Fraction(math.sin(angle))
    norm = max(Fraction(1), c * c + s * s)           # keep the direction inside the unit disk
    with ctx.workprec(PREC):
        p = mid_ball(x, 0) + acb(arb(float(c / norm)), arb(float(s / norm))) * arb(rad) * arb(0.999)
    assert holds(e, 0, exp_ball(p))


@pytest.mark.parametrize("w", [2.0 ** 41, 1j * 2.0 ** 41, complex(2.0 ** 40 * (1 + 2.0 ** -20), 0), 3e12 + 1e12j])
def test_exp_refuses_arguments_above_2_to_the_40(w):
    with pytest.raises(RangeError):
        dd_exp.exp(DD.exact(np.array([w])))
    with pytest.raises(RangeError):                 # a disk reaching that far, around a small point
        dd_exp.exp(DD.from_parts(np.array([1.0 + 0j]), np.array([0j]), np.array([abs(w)])))


def test_exp_refuses_results_beyond_big():
    with pytest.raises(RangeError):
        dd_exp.exp(DD.exact(np.array([400.0 + 0j])))


@pytest.mark.parametrize("w", [0j, 1e-10 + 0j, 0.5 - 0.25j, 1j * math.pi, -3 + 4j, 10 + 0j, -10 + 0j, 7j, -6 - 8j])
def test_exp_is_tight_for_moderate_arguments(w):
    """|w| <= 10: the radius stays below 1e-25 |e^w| (the route's 106 bits, less a few
    squarings' doubling)."""
    e = dd_exp.exp(DD.exact(np.array([w])))
    assert holds(e, 0, exp_ball(acb(w)))
    assert float(e.rad[0]) < 1e-25 * math.exp(w.real)


def test_scale_and_truncation_constants():
    """The scale makes every |w 2^-s| <= 2^-8 with the least such s, and the truncation
    bound covers the Taylor tail at r = 2^-8 (against an exact 300-bit tail sum)."""
    for b in [0.0, 5e-324, 1e-300, 2.0 ** -9, 2.0 ** -8, 0.0039, 0.004, 1.0, 1000.0, 2.0 ** 40]:
        s = dd_exp.scale_exponent(b)
        assert Fraction(b) * Fraction(2) ** -s < Fraction(1, 256)        # strictly: the least such s
        assert s == 0 or Fraction(b) * Fraction(2) ** (1 - s) >= Fraction(1, 256)
    for b in [2.0 ** 40 * (1 + 2.0 ** -52), math.inf, math.nan]:
        with pytest.raises(RangeError):
            dd_exp.scale_exponent(b)
    K = dd_exp.TERMS
    with ctx.workprec(PREC):
        r = arb(2) ** -dd_exp.SCALE_BITS
        tail = r.exp() - sum((r ** k / math.factorial(k) for k in range(K + 1)), arb(0))
        assert tail.upper() <= arb(dd_exp.truncation_bound())
    assert Fraction(dd_exp.truncation_bound()) >= Fraction(2, math.factorial(K + 1)) * Fraction(1, 2 ** (8 * (K + 1)))
    assert dd_exp.truncation_bound() < 2.0 ** -110


def test_coefficients_contain_the_reciprocal_factorials():
    for k, c in enumerate(dd_exp._coefficients()):
        with ctx.workprec(PREC):
            m = acb(arb(float(c.rh)) + arb(float(c.rl)), arb(float(c.ih)) + arb(float(c.il)))
            assert bool(abs(acb(1) / math.factorial(k) - m).upper() <= arb(float(c.rad)))
