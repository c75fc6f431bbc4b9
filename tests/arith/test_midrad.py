"""Disks on float64 arrays (arith/midrad.py): every result disk contains the exact result
of the same operation at any points of the operand disks.

Floats are exact rationals, so the operations are replayed exactly with Fractions at the
midpoints and at points on and inside the operand circles (rational points of the unit
circle, some aimed at the worst direction), and containment is decided exactly:
(re - mid.re)^2 + (im - mid.im)^2 <= rad^2.  The roots of unity and the double-float pairs
are checked against 300-bit flint enclosures with comparisons that are true only when
certain."""
from __future__ import annotations

import cmath
import math
from fractions import Fraction
from functools import lru_cache

import numpy as np
import pytest
from flint import acb, arb, ctx, fmpq
from hypothesis import assume, example, given, strategies as st

from s4cert.arith.disk_convert import pairs_of_balls as dd_from_balls
from s4cert.arith.midrad import (DD_RADIUS, LARGE, MR, SMALL, UNDERFLOW, RangeError, abs_lower, abs_upper,
                          modulus_upper, roots_of_unity, roots_of_unity_dd, sum_upper)
from tests.helpers import Q2

F = Fraction


# -- exact checks --------------------------------------------------------------------------

def q2(z) -> Q2:
    """A complex float as an exact Gaussian rational."""
    z = complex(z)
    return Q2(z.real, z.imag)


def in_disk(value: Q2, mid, rad) -> bool:
    """|value - mid| <= rad, decided exactly (an infinite radius holds everything, a NaN
    radius or a non-finite midpoint nothing)."""
    mid, rad = complex(mid), float(rad)
    if math.isnan(rad) or rad < 0 or not cmath.isfinite(mid):
        return False
    if math.isinf(rad):
        return True
    return (value - q2(mid)).abs2() <= F(rad) ** 2


def unit(theta: float) -> Q2:
    """A rational point of the unit circle (exactly on it) near e^{i theta}."""
    t = F(math.tan(theta / 2))
    d = 1 + t * t
    return Q2((1 - t * t) / d, 2 * t / d)


#: directions of modulus <= 1: the axes, rational points of the circle, interior points
DIRECTIONS = [Q2(1), Q2(0, 1), Q2(-1), Q2(0, -1), Q2(F(3, 5), F(4, 5)), Q2(F(-5, 13), F(12, 13)),
              Q2(F(-8, 17), F(-15, 17)), Q2(F(7, 10), F(-7, 10)), Q2(F(1, 2), F(1, 3))]
#: fewer directions, for operations on pairs of points
PAIR_DIRECTIONS = [Q2(0, -1), Q2(F(-3, 5), F(4, 5)), Q2(F(1, 2), F(-1, 3))]


def phase(z: Q2) -> float:
    return math.atan2(float(z.im), float(z.re))


def points(mid, rad, angles=(), directions=DIRECTIONS) -> list:
    """The midpoint, points of the circle |x - mid| = rad in the fixed directions and at the
    given angles, and interior points: all exact, all in the disk."""
    m, r = q2(mid), F(float(rad))
    dirs = list(directions) + [unit(a) for a in angles]
    return [m] + [m + Q2(r * d.re, r * d.im) for d in dirs]


def assert_holds(result: MR, j: int, value: Q2, *operands):
    assert in_disk(value, result.mid[j], result.rad[j]), (
        f"entry {j}: exact {value} outside disk ({result.mid[j]!r}, {result.rad[j]!r}); operands {operands}")


# -- strategies ------------------------------------------------------------------------------

@lru_cache(maxsize=None)
def components(lo_e: int, hi_e: int, zero: bool = True):
    """Signed floats m 2^e (53-bit m in [1, 2), e in [lo_e, hi_e]; subnormal when e is below
    -1022) and (with ``zero``) exact zeros."""
    scaled = st.builds(lambda s, m, e: s * math.ldexp(m, e - 52),
                       st.sampled_from([1, -1]), st.integers(2 ** 52, 2 ** 53 - 1), st.integers(lo_e, hi_e))
    return st.one_of(st.just(0.0), scaled, scaled) if zero else scaled


@lru_cache(maxsize=None)
def exponents(lo_e: int, hi_e: int):
    return st.integers(lo_e, hi_e)


RADIUS_KINDS = st.sampled_from(["zero", "scaled", "scaled", "edge"])
SHIFTS_BELOW = st.sampled_from([1, 2, 10, 30, 52, 53, 60, 100])
SHIFTS_ANY = st.sampled_from([1, 2, 10, 30, 52, 53, 60, 100, 0, -1, -4])
UNIT_FLOATS = st.floats(0, 1)


def radius(draw, scale: float, below: bool = False) -> float:
    """Zero, tiny, comparable to ``scale`` or (unless ``below``) up to 16 times larger."""
    kind = draw(RADIUS_KINDS)
    if kind == "zero":
        return 0.0
    if kind == "edge" and below:  # just below the scale: the disk nearly reaches 0
        return scale * (1 - math.ldexp(1.0, -draw(exponents(1, 52))))
    return math.ldexp(scale * draw(UNIT_FLOATS), -draw(SHIFTS_BELOW if below else SHIFTS_ANY))


@st.composite
def disks(draw, lo_e: int = -300, hi_e: int = 300):
    """(mid, rad) with components of exponent in [lo_e, hi_e] (or zero); the radius is
    relative to the midpoint's size, or to 2^e for a zero midpoint."""
    re, im = draw(components(lo_e, hi_e)), draw(components(lo_e, hi_e))
    scale = max(abs(re), abs(im)) or math.ldexp(1.0, draw(exponents(max(lo_e, -1022), hi_e)))
    return complex(re, im), radius(draw, scale)


def inv_radius_bound(mid: complex, rad: float) -> Fraction:
    """rad / (ell (ell - rad)) for ell = max(|re|, |im|) of the midpoint (exactly): the
    first term of the reciprocal's radius, which must itself stay within 2^400."""
    ell = F(max(abs(mid.real), abs(mid.imag)))
    return F(rad) / (ell * (ell - F(rad)))


@st.composite
def nonzero_disks(draw, lo_e: int = -399, hi_e: int = 399):
    """Disks that certainly exclude 0, with max(|re|, |im|) of the midpoint in
    [2^lo_e, 2^(hi_e+1)) and reciprocals of radius well below 2^400."""
    big, small = draw(components(lo_e, hi_e, zero=False)), draw(components(-1074, hi_e))
    if abs(small) > abs(big):
        big, small = small, big
    re, im = (big, small) if draw(st.booleans()) else (small, big)
    rad = radius(draw, abs(big), below=True)
    assume(rad < abs(big) and inv_radius_bound(complex(re, im), rad) <= 2 ** 398)
    return complex(re, im), rad


angles = st.floats(-math.pi, math.pi)


def mr(ds) -> MR:
    return MR.from_parts([d[0] for d in ds], [d[1] for d in ds])


# -- the operations --------------------------------------------------------------------------

def test_from_parts_validates():
    """Radii broadcast to the midpoints' shape; negative or NaN radii are a ValueError,
    non-finite parts or parts above 2^400 a RangeError."""
    x = MR.from_parts([1, 2j, 3], 0.5)
    assert x.rad.tolist() == [0.5] * 3 and x.mid.dtype == np.complex128
    x.rad[0] = 1.0
    assert x.rad.tolist() == [1.0, 0.5, 0.5]
    for rad in (-1.0, float("nan")):
        with pytest.raises(ValueError):
            MR.from_parts([1.0], [rad])
    out_of_range = [([complex("inf")], [0.0]), ([1.0], [float("inf")]), ([2.0 ** 401 * 1j], [0.0]), ([0j], [2.0 ** 401])]
    for mid, rad in out_of_range:
        with pytest.raises(RangeError):
            MR.from_parts(mid, rad)


@given(st.lists(st.tuples(disks(), disks(), angles, angles), min_size=1, max_size=2))
def test_add_sub_contain_exact_sums(cases):
    """add and sub: the result disks contain x + y and x - y for x, y at the midpoints, on
    the operand circles (fixed, random and error-aligned directions) and inside them."""
    x, y = mr([c[0] for c in cases]), mr([c[1] for c in cases])
    for op, sign in ((x.add, 1), (x.sub, -1)):
        z = op(y)
        for j, (a, b, t, s) in enumerate(cases):
            exact = q2(a[0]) + Q2(sign) * q2(b[0])
            err = exact - q2(z.mid[j])
            phi = phase(err) if err.abs2() else phase(exact) if exact.abs2() else 0.0
            for p in points(*a, angles=(t, phi), directions=PAIR_DIRECTIONS):
                for w in points(*b, angles=(s, phi if sign > 0 else phi + math.pi), directions=PAIR_DIRECTIONS):
                    assert_holds(z, j, p + Q2(sign) * w, a, b)


def test_add_refuses_a_midpoint_beyond_the_range():
    """A sum of midpoints above 2^400 is refused (RangeError), not rounded silently."""
    x = MR.exact([LARGE + 0j])
    with pytest.raises(RangeError):
        x.add(x)
    with pytest.raises(RangeError):
        x.sub(x.neg())
    with pytest.raises(RangeError):
        MR.exact([LARGE * 1j]).add(MR.exact([2.0 ** 348 * 1j]))


def assert_mul_contains(cases):
    x, y = mr([c[0] for c in cases]), mr([c[1] for c in cases])
    z = x.mul(y)
    for j, (a, b, t, s) in enumerate(cases):
        ab = q2(a[0]) * q2(b[0])
        err = ab - q2(z.mid[j])
        phi = phase(err) if err.abs2() else phase(ab) if ab.abs2() else 0.0
        pa = phase(q2(a[0])) if a[0] else 0.0
        pb = phase(q2(b[0])) if b[0] else 0.0
        for p in points(*a, angles=(t, phi - pb), directions=PAIR_DIRECTIONS):
            for w in points(*b, angles=(s, phi - pa), directions=PAIR_DIRECTIONS):
                assert_holds(z, j, p * w, a, b)


@given(st.lists(st.tuples(disks(-180, 180), disks(-180, 180), angles, angles), min_size=1, max_size=2))
def test_mul_contains_exact_products(cases):
    """mul: the disks contain x y for x, y at the midpoints, on the operand circles (fixed,
    random, and the directions that align every error term) and inside them."""
    assert_mul_contains(cases)


@given(st.lists(st.tuples(disks(-1074, 190), disks(-1074, 190), angles, angles), min_size=1, max_size=2))
def test_mul_contains_exact_products_down_to_underflow(cases):
    """mul from the subnormals up to products near 2^390, subnormal midpoints and radii
    included: products that underflow (or come out subnormal) are still contained."""
    assert_mul_contains(cases)


@pytest.mark.parametrize("a,b", [
    (2.0 ** -300, 2.0 ** -300),                                   # 2^-600: normal, below 2^-400
    (2.0 ** -600, 2.0 ** -600),                                   # underflows to 0
    (2.0 ** -1074, 0.75),                                         # subnormal, rounded
    (3 * 2.0 ** -540 + 1j * 2.0 ** -560, 2.0 ** -534 - 5j * 2.0 ** -540),  # subnormal components
    (1 + 1j * 2.0 ** -1074, 1 - 1j * 2.0 ** -1074),               # imaginary parts cancel
    (2.0 ** -1074 * (1 + 1j), 2.0 ** -1074 * (1 - 1j)),           # everything underflows
])
def test_mul_tiny_products(a, b):
    """Products below 2^-400 (normal, subnormal, or underflowing to zero) are not refused
    and the disks contain the exact product, radii 0 and 2^-1074 alike."""
    for ra, rb in ((0.0, 0.0), (2.0 ** -1074, 0.0), (abs(a) / 3, abs(b) / 5)):
        assert_mul_contains([((a, ra), (b, rb), 0.3, -2.0)])


def test_mul_refuses_products_beyond_the_range():
    """A product midpoint above 2^400 is refused (RangeError)."""
    with pytest.raises(RangeError):
        MR.exact([2.0 ** 201]).mul(MR.exact([2.0 ** 200]))
    with pytest.raises(RangeError):
        MR.exact([2.0 ** 250 * (1 + 1j)]).mul(MR.exact([2.0 ** 250 * (1 - 1j)]))


def test_a_radius_beyond_the_range_is_refused_before_it_can_overflow():
    """A product whose radius would pass 2^400 (two 2^400-wide disks, or 2^200-wide ones:
    2^800 and 2^400 + ...) is refused, so no chain of products reaches an overflowed
    radius; the widest disk times the point 0 (either order) is certified and contains 0."""
    x, zero = MR.from_parts([0j], [LARGE]), MR.exact([0j])
    for z in (x.mul(zero), zero.mul(x)):
        assert in_disk(Q2(0), z.mid[0], z.rad[0]), (z.mid, z.rad)
    for w in (x, MR.from_parts([0j], [2.0 ** 200])):
        with pytest.raises(RangeError):
            w.mul(w)


@given(st.lists(st.tuples(nonzero_disks(), angles), min_size=1, max_size=3))
def test_inv_contains_exact_reciprocals(cases):
    """inv: the disks contain 1/x for x at the midpoint, on the circle (fixed, random, the
    point nearest 0 and the error-aligned direction) and inside it."""
    y = mr([c[0] for c in cases])
    z = y.inv()
    for j, ((b, rb), t) in enumerate(cases):
        inv_b = Q2(1) / q2(b)
        err = inv_b - q2(z.mid[j])
        psi = phase(err) if err.abs2() else 0.0
        pb = phase(q2(b))
        for w in points(b, rb, angles=(t, pb + math.pi, psi + math.pi + 2 * pb)):
            assert_holds(z, j, Q2(1) / w, (b, rb))


@given(st.lists(st.tuples(disks(-150, 150), nonzero_disks(-150, 150), angles, angles), min_size=1, max_size=2))
def test_div_contains_exact_quotients(cases):
    """div: the disks contain x / y for x, y at the midpoints, on the circles and inside."""
    x, y = mr([c[0] for c in cases]), mr([c[1] for c in cases])
    z = x.div(y)
    for j, (a, b, t, s) in enumerate(cases):
        pb = phase(q2(b[0]))
        for p in points(*a, angles=(t,), directions=PAIR_DIRECTIONS):
            for w in points(*b, angles=(s, pb + math.pi), directions=PAIR_DIRECTIONS):
                assert_holds(z, j, p / w, a, b)


@given(st.lists(st.tuples(disks(-300, 300), angles), min_size=1, max_size=3), st.integers(-1100, 90))
def test_scale_contains_exact_multiples(cases, k):
    """scale by 2^k: the disks contain 2^k x, including when the scaled midpoints are
    subnormal or underflow to zero."""
    x = mr([c[0] for c in cases])
    c = 2.0 ** k
    assume(c > 0)
    z = x.scale(c)
    for j, (a, t) in enumerate(cases):
        for p in points(*a, angles=(t,)):
            assert_holds(z, j, Q2(F(c)) * p, a, c)


def test_scale_takes_only_positive_powers_of_two():
    """scale refuses non-powers of two (ValueError) and results above 2^400 (RangeError)."""
    x = MR.exact([1 + 1j])
    for c in (3.0, 0.75, 0.0, -2.0, 1 + 2.0 ** -52):
        with pytest.raises(ValueError):
            x.scale(c)
    with pytest.raises(RangeError):
        MR.exact([2.0 ** 300]).scale(2.0 ** 101)


@given(st.lists(st.tuples(disks(), angles), min_size=1, max_size=3))
def test_conj_neg_contain_exact_images(cases):
    """conj and neg: exact maps of the midpoints, same radii; the disks contain conj(x), -x."""
    x = mr([c[0] for c in cases])
    zc, zn = x.conj(), x.neg()
    assert np.array_equal(zc.rad, x.rad) and np.array_equal(zn.rad, x.rad)
    for j, (a, t) in enumerate(cases):
        for p in points(*a, angles=(t,)):
            assert_holds(zc, j, p.conj(), a)
            assert_holds(zn, j, -p, a)


@given(st.lists(st.tuples(disks(-1074, 395), angles), min_size=1, max_size=3))
def test_disk_modulus_bounds(cases):
    """MR.abs_upper >= |x| and 0 <= MR.abs_lower <= |x| for every x in the disk."""
    x = mr([c[0] for c in cases])
    hi, lo = x.abs_upper(), x.abs_lower()
    for j, (a, t) in enumerate(cases):
        assert lo[j] >= 0
        for p in points(*a, angles=(t,)):
            assert F(float(lo[j])) ** 2 <= p.abs2()
            assert math.isinf(hi[j]) or p.abs2() <= F(float(hi[j])) ** 2


# -- zero tests ------------------------------------------------------------------------------

def test_certainly_nonzero_examples():
    """The mask is True only where the disk excludes 0 (and says False when unsure)."""
    x = MR.from_parts([2, 1j, 1 + 1j, 0, 3, -0.5 + 4j, 2.0 ** -1074], [1, 1, 1.2, 0, 3, 3.999, 0])
    assert x.certainly_nonzero().tolist() == [True, False, False, False, False, True, True]


@given(st.lists(disks(-1074, 395), min_size=1, max_size=4))
def test_certainly_nonzero_excludes_zero(ds):
    """Where the mask is True, 0 is outside the disk, exactly."""
    mask = mr(ds).certainly_nonzero()
    for (m, r), certain in zip(ds, mask):
        if certain:
            assert not in_disk(Q2(0), m, r)


@pytest.mark.parametrize("mid,rad", [
    ([1 + 0j], [1.0]),                       # 0 on the boundary
    ([1 + 1j], [1.2]),                       # excludes 0, but not certainly by the mask
    ([0j], [0.0]),                           # the point 0
    ([2, 0.5j], [0.1, 0.6]),                 # one bad entry among good ones
    ([2.0 ** -401], [0.0]),                  # below the range
    ([2.0 ** -401 + 1j * 2.0 ** -402], [0.0]),
])
def test_inv_refuses_possible_zeros_and_tiny_divisors(mid, rad):
    """inv (and div) raise RangeError unless every disk certainly excludes 0 and every
    midpoint has max(|re|, |im|) in [2^-400, 2^400]."""
    y = MR.from_parts(mid, rad)
    with pytest.raises(RangeError):
        y.inv()
    with pytest.raises(RangeError):
        MR.exact(np.ones(len(mid))).div(y)


def test_inv_refuses_divisors_above_the_range():
    """A midpoint above 2^400 (built directly, since from_parts already refuses it)."""
    with pytest.raises(RangeError):
        MR(np.array([2.0 ** 401 + 0j]), np.array([0.0])).inv()
    with pytest.raises(RangeError):
        MR.from_parts([2.0 ** 401], [0.0])


def test_inv_accepts_the_range_ends():
    """2^-400 and 2^400 themselves are accepted, and the reciprocals contained."""
    for v in (SMALL, LARGE, SMALL * 1j, -LARGE * 1j):
        for r in (0.0, abs(v) / 4):
            z = MR.from_parts([v], [r]).inv()
            for w in points(v, r, angles=(0.1,)):
                assert_holds(z, 0, Q2(1) / w, v, r)


@given(st.lists(st.tuples(disks(-420, 395), angles), min_size=1, max_size=3))
def test_inv_refuses_exactly_the_unsafe_divisors(cases):
    """inv raises RangeError when some disk has rad >= max(|re|, |im|) of its midpoint, or
    that maximum is below 2^-400; otherwise its disks contain the reciprocals (a refusal is
    allowed only where the reciprocal's radius comes near 2^400)."""
    y = mr([c[0] for c in cases])
    ell = [max(abs(m.real), abs(m.imag)) for (m, _), _ in cases]
    if any(e < SMALL or r >= e for e, ((_, r), _) in zip(ell, cases)):
        with pytest.raises(RangeError):
            y.inv()
        return
    if any(inv_radius_bound(m, r) > 2 ** 398 for (m, r), _ in cases):
        try:
            z = y.inv()
        except RangeError:
            return
    else:
        z = y.inv()
    for j, ((b, rb), t) in enumerate(cases):
        for w in points(b, rb, angles=(t, phase(q2(b)) + math.pi)):
            assert_holds(z, j, Q2(1) / w, (b, rb))


# -- contains ---------------------------------------------------------------------------------

@given(disks(-300, 300), angles, st.sampled_from([F(1, 2), F(99, 100), F(1), F(101, 100), F(3, 2)]))
@example(d=(0j, 0.5), t=1.0, s=F(1))  # a rounded point of the circle, just outside it
def test_contains_is_never_wrong_when_true(d, t, s):
    """MR.contains(v) True means v lies in the disk exactly (it may say False on the
    boundary, never True outside)."""
    m, r = d
    u = unit(t)
    v = complex(float(q2(m).re + F(r) * s * u.re), float(q2(m).im + F(r) * s * u.im))
    if MR.from_parts([m], [r]).contains([v])[0]:
        assert in_disk(q2(v), m, r)


def test_contains_corner_of_the_square():
    """1 + i is at distance sqrt(2) from 0: not in the unit disk."""
    assert not MR.from_parts([0j], [1.0]).contains([1 + 1j])[0]


@given(disks(-300, 300), angles)
def test_contains_accepts_interior_points(d, t):
    """Points at half the radius from the midpoint are recognised."""
    m, r = d
    u = unit(t)
    v = complex(float(q2(m).re + F(r) / 2 * u.re), float(q2(m).im + F(r) / 2 * u.im))
    assert MR.from_parts([m], [r]).contains([m, v]).all()


# -- scalar bounds ----------------------------------------------------------------------------

@given(st.lists(st.tuples(components(-1074, 500), components(-1074, 500)), min_size=1, max_size=6))
def test_modulus_bounds(zs):
    """modulus_upper >= |z| and abs_upper >= |z| (squares compared exactly), abs_lower <= |z|."""
    z = np.array([complex(a, b) for a, b in zs])
    mu, au, al = modulus_upper(z), abs_upper(z), abs_lower(z)
    for j, w in enumerate(z):
        n2 = q2(w).abs2()
        assert F(float(mu[j])) ** 2 >= n2
        assert F(float(au[j])) ** 2 >= n2
        assert F(float(al[j])) ** 2 <= n2 and al[j] >= 0


nonnegative = st.one_of(st.just(0.0), components(-1074, 300).map(abs), st.floats(0, 1e-300, allow_subnormal=True))


def computed_sums(xs):
    """The float sum of xs in several orders (pairwise, reversed, sorted, correctly rounded)."""
    return [float(np.sum(np.array(xs))), sum(reversed(xs)), sum(sorted(xs)), sum(sorted(xs, reverse=True)),
            math.fsum(xs), float(np.cumsum(np.array(xs))[-1]) if xs else 0.0]


@given(st.lists(nonnegative, max_size=40))
def test_sum_upper_bounds_every_summation_order(xs):
    """sum_upper(s, n) >= the exact sum of n nonnegative floats, s computed in any order."""
    exact = sum(map(F, xs), F(0))
    n = len(xs)
    for s in computed_sums(xs):
        assert exact <= F(float(sum_upper(s, n)))
        assert exact <= F(float(sum_upper(s, n + 3)))  # "at most n" terms
    bounds = sum_upper(np.array(computed_sums(xs)), n)
    assert all(exact <= F(float(b)) for b in bounds)


@given(st.lists(st.tuples(nonnegative, nonnegative), max_size=30))
def test_sum_upper_bounds_dot_products(pairs):
    """sum_upper(s, n) >= the exact sum of n nonnegative products, s a float dot product
    (products that underflow included)."""
    a, b = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    exact = sum((F(x) * F(y) for x, y in pairs), F(0))
    n = len(pairs)
    prods = [float(x) * float(y) for x, y in pairs]
    for s in (float(np.dot(a, b)) if n else 0.0, sum(prods), sum(reversed(prods)), math.fsum(prods)):
        assert exact <= F(float(sum_upper(s, n)))


@pytest.mark.parametrize("n", [1, 2, 10, 1000, 10 ** 5])
def test_sum_upper_adversarial_sums(n):
    """1 followed by n - 1 terms of u = 2^-53 (each lost to rounding): the float sum is 1,
    the exact sum 1 + (n - 1) u; and n products 2^-600 * 2^-600 that underflow to 0."""
    xs = [1.0] + [2.0 ** -53] * (n - 1)
    s = 0.0
    for x in xs:
        s += x
    assert s == 1.0 or n == 1
    assert 1 + F(n - 1, 2 ** 53) <= F(float(sum_upper(s, n)))
    tiny = np.full(n, 2.0 ** -600)
    s = float(np.dot(tiny, tiny))
    assert s == 0.0
    assert n * F(2) ** -1200 <= F(float(sum_upper(s, n)))
    assert F(n) * F(UNDERFLOW) <= F(float(sum_upper(0.0, n)))


def test_sum_upper_refuses_too_many_terms():
    """(n + 1) u must be at most 1/4."""
    sum_upper(1.0, 2 ** 51 - 1)
    with pytest.raises(RangeError):
        sum_upper(1.0, 2 ** 51)


# -- roots of unity and double-float pairs ----------------------------------------------------

def root(M: int, k: int) -> acb:
    return acb.exp_pi_i(acb(fmpq(-2 * k, M)))


@pytest.mark.parametrize("M", [1, 2, 4, 8, 16, 64, 1024])
def test_roots_of_unity_dd_within_radius(M):
    """|exp(-2 pi i k/M) - hi_k - lo_k| <= DD_RADIUS certainly, for every k (300-bit
    enclosures); the parts of lo_k are at most 2^-52."""
    hi, lo, R = roots_of_unity_dd(M)
    assert R == DD_RADIUS and hi.shape == lo.shape == (M,)
    with ctx.workprec(300):
        for k in range(M):
            d = root(M, k) - acb(complex(hi[k])) - acb(complex(lo[k]))
            assert (abs(d) <= arb(R)) is True, (M, k, d)
    assert np.all(abs_lower(lo) <= 2.0 ** -52)


@pytest.mark.parametrize("M", [1, 2, 4, 8, 16, 64, 1024])
def test_roots_of_unity_disks_contain_the_roots(M):
    """roots_of_unity(M): each disk certainly contains exp(-2 pi i k/M)."""
    z = roots_of_unity(M)
    assert z.mid.shape == z.rad.shape == (M,)
    with ctx.workprec(300):
        for k in range(M):
            d = root(M, k) - acb(complex(z.mid[k]))
            assert (abs(d) <= arb(float(z.rad[k]))) is True, (M, k, d)


def test_roots_of_unity_exact_points():
    """1, -i, -1, i are represented exactly (hi exact, lo zero)."""
    hi, lo, _ = roots_of_unity_dd(4)
    assert hi.tolist() == [1, -1j, -1, 1j] and not np.any(lo)
    hi, lo, _ = roots_of_unity_dd(16)
    assert hi[0] == 1 and hi[4] == -1j and hi[8] == -1 and hi[12] == 1j and not np.any(lo[::4])


def test_roots_of_unity_cache_is_read_only():
    """The cached pairs cannot be written; the disks' midpoints are copies."""
    hi, lo, _ = roots_of_unity_dd(64)
    assert not hi.flags.writeable and not lo.flags.writeable
    with pytest.raises(ValueError):
        hi[0] = 2.0
    with pytest.raises(ValueError):
        lo[1] = 2.0
    z = roots_of_unity(64)
    z.mid[0] = 5.0
    assert roots_of_unity_dd(64)[0][0] == 1 and roots_of_unity(64).mid[0] == 1


@pytest.mark.parametrize("M", [0, 3, 12, -4])
def test_roots_of_unity_need_a_power_of_two(M):
    with pytest.raises(ValueError):
        roots_of_unity_dd(M)


BALL_KINDS = st.sampled_from(["rational", "rational", "float", "zero"])
NUMERATORS = st.integers(-2 ** 120, 2 ** 120)
DENOMINATORS = st.integers(1, 2 ** 120)
HALF_RANGE = st.floats(-2, 2)


@st.composite
def real_balls(draw, lo_e: int, hi_e: int):
    """A 200-bit ball around 2^e p/(|p/q| + 1) for a rational p/q (or an exact float 2^e f
    with |f| <= 2, or 0), as an arb."""
    e = draw(exponents(lo_e, hi_e))
    kind = draw(BALL_KINDS)
    with ctx.workprec(200):
        if kind == "zero":
            return arb(0)
        if kind == "float":
            return arb(math.ldexp(draw(HALF_RANGE), e))
        x = arb(fmpq(draw(NUMERATORS), draw(DENOMINATORS)))
        return x * arb(2) ** e / (abs(x) + 1)


def assert_dd_holds(balls):
    hi, lo, R = dd_from_balls(balls)
    assert hi.shape == lo.shape == (len(balls),)
    with ctx.workprec(300):
        for j, b in enumerate(balls):
            d = b - acb(complex(hi[j])) - acb(complex(lo[j]))
            assert (abs(d) <= arb(R)) is True, (j, b, hi[j], lo[j], R)


@given(st.lists(st.tuples(real_balls(-60, 0), real_balls(-60, 0)), min_size=1, max_size=4))
def test_dd_from_balls_within_radius_unit_size(parts):
    """dd_from_balls on 200-bit balls of modulus at most about 1: |x - hi - lo| <= R,
    certainly (300-bit check)."""
    assert_dd_holds([acb(a, b) for a, b in parts])


@given(st.lists(st.tuples(real_balls(-60, 60), real_balls(-60, 60)), min_size=1, max_size=4))
def test_dd_from_balls_within_radius_any_size(parts):
    """dd_from_balls on 200-bit balls of modulus between 2^-60 and 2^60: |x - hi - lo| <= R,
    certainly (300-bit check)."""
    assert_dd_holds([acb(a, b) for a, b in parts])


def test_dd_from_balls_beyond_64():
    """193/3 at 200 bits: its pair must still be within R."""
    with ctx.workprec(200):
        b = acb(fmpq(193, 3))
    assert_dd_holds([b])


def test_dd_from_balls_refuses_wide_and_non_finite_balls():
    """A ball of radius 1e-10, an infinite or NaN ball, or a midpoint above 2^400: RangeError."""
    refused = [acb(arb(1, 1e-10)), acb(0.5, arb(0, 1e-10)), acb(arb("inf")), acb(0, arb("nan")),
               acb(arb(1, "inf")), acb(2.0 ** 401)]
    for b in refused:
        with pytest.raises(RangeError):
            dd_from_balls([acb(0.25), b])
    hi, lo, R = dd_from_balls([])
    assert hi.shape == lo.shape == (0,)
