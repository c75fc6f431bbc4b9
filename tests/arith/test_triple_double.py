"""Tests of triple-double disk arithmetic (arith/triple_double.py with its kernels
arith/td_eft.py and compiled loops arith/td_jit.py, proofs/triple_double.md).

Containment is checked against python-flint balls, independent of the code under test: each
disk's midpoint is the exact sum of its float parts (2200-bit arbs), a point of each operand disk
(its centre, inside, or on its boundary up to 2^-49 of the radius, with dyadic coordinates) is
an exact ball, the operation is applied to the points in ball arithmetic (exactly, at 4600 bits,
for sums and products; at 400 bits for quotients), and the result ball must lie in the returned
disk (the distance formed at 4600 bits)."""
from __future__ import annotations

import re

import numpy as np
import pytest
from flint import acb, arb, arb_mat, ctx, fmpq  # noqa: F401
from hypothesis import given, settings, strategies as st

from s4cert.arith.double_double import DD, roots_of_unity_dd
from s4cert.arith.midrad import RangeError
from s4cert.arith.triple_double import (BIG, C_ADD, C_INV, C_MUL, TD, concat, normalized, roots_of_unity_td,
                                        td_of_balls)

U = 2.0 ** -53
U3 = U ** 3
PREC = 400
#: where sums and products of the test's points are exact (two operands of at most 2200 bits)
EXACT = 4600
#: directions of modulus at most 1 (within 2^-49 of it) with float coordinates
DIRECTIONS = [(0.6 - 2.0 ** -50, 0.8 - 2.0 ** -50), (-0.8 + 2.0 ** -50, 0.6 - 2.0 ** -50), (1.0, 0.0), (0.0, -1.0)]


def _mid(x: TD, i) -> acb:
    """The exact midpoint of element i (floats are exact arbs; 2200 bits hold any sum of three)."""
    with ctx.workprec(2200):
        re = arb(float(x.r0[i])) + arb(float(x.r1[i])) + arb(float(x.r2[i]))
        im = arb(float(x.i0[i])) + arb(float(x.i1[i])) + arb(float(x.i2[i]))
        return acb(re, im)


def _point(x: TD, i, t: fmpq, k: int) -> acb:
    """mid + t rad (direction k), exactly: a point of the disk (t <= 1 dyadic)."""
    c, s = DIRECTIONS[k]
    with ctx.workprec(EXACT):
        return _mid(x, i) + arb(float(x.rad[i])) * arb(t) * acb(arb(c), arb(s))


def _inside(ball: acb, out: TD, i) -> bool:
    with ctx.workprec(EXACT):
        return bool(abs(ball - _mid(out, i)).upper() <= arb(float(out.rad[i])))


def _abs0(x: TD, i) -> float:
    """|r0| + |i0| (A_0 of the proof, exact for the test's purposes up to one rounding)."""
    return abs(float(x.r0[i])) + abs(float(x.i0[i]))


# -- the stress families --------------------------------------------------------------------

#: every product of two stays below 2^500 (the range refusal has its own test)
SCALES = [2.0 ** -700, 1e-150, 1e-20, 1.0, 3.7, 1e40, 1e70, 2.0 ** 240]
KINDS = ["normalized", "short", "unnormalized", "subnormal_tail"]


def _component(draw, scale: float, kind: str) -> tuple[float, float, float]:
    h = draw(st.floats(-1, 1)) * scale
    f1, f2 = draw(st.floats(-1, 1)), draw(st.floats(-1, 1))
    if kind == "normalized":
        m = h * f1 * U
        return h, m, m * f2 * U
    if kind == "short":
        return h, (h * f1 * U if draw(st.booleans()) else 0.0), 0.0
    if kind == "unnormalized":
        return h, h * f1 * 2.0 ** -20, h * f2 * 2.0 ** -40
    return h, h * f1 * U, f2 * 2.0 ** -1060           # a subnormal low part


@st.composite
def td_disk(draw, scales=SCALES, kinds=KINDS, radii=(0.0, 2.0 ** -160, 1e-40, 1e-3)):
    """(x, point, kind): a one-element disk of a stress family and a point of it."""
    s, kind = draw(st.sampled_from(scales)), draw(st.sampled_from(kinds))
    re, im = _component(draw, s, kind), _component(draw, s, kind)
    rad = draw(st.sampled_from(radii)) * s
    x = TD.from_parts([complex(re[0], im[0])], [complex(re[1], im[1])], [complex(re[2], im[2])], [rad])
    t = fmpq(draw(st.sampled_from([0, 1, 2, 3, 4])), 4)
    return x, _point(x, 0, t, draw(st.integers(0, 3))), kind


def _cancelling(x: TD, draw) -> TD:
    """-x moved by a few units of its last parts (add: cancellation of the first two orders)."""
    e = draw(st.sampled_from([0.0, 1.0, -3.0])) * U * U
    return TD.from_parts(-x.mid_hi, -(x.r1 + 1j * x.i1), -(x.r2 + 1j * x.i2) + e * x.mid_hi, x.rad)


@settings(max_examples=120)
@given(td_disk(), td_disk(), st.booleans(), st.data())
def test_operations_contain_the_exact_results(a, b, cancel, data):
    """add, sub, mul, square, div, scale, conj, neg on points of the disks (centre, inside,
    boundary), every stress family: contained (Lemmas 2-6), and on normalized points the radii
    within the lemmas' constants (Lemma 2: C_ADD, Lemma 4: C_MUL)."""
    (x, px, kx), (y, py, ky) = a, b
    if cancel:
        y = _cancelling(x, data.draw)
        py = _point(y, 0, fmpq(data.draw(st.integers(0, 2)), 2), 1)
        ky = kx
    with ctx.workprec(EXACT):
        cases = [(x.add(y), px + py), (x.sub(y), px - py), (x.mul(y), px * py), (x.square(), px * px),
                 (x.conj(), px.conjugate()), (x.neg(), -px), (x.scale(0.5), px / 2), (x.scale(-3.0), px * -3)]
    for out, want in cases:
        assert _inside(want, out, 0)
    points = float(x.rad[0]) == 0 and float(y.rad[0]) == 0
    if points and kx == ky == "normalized":
        s, p = cases[0][0], cases[2][0]
        assert s.rad[0] <= C_ADD * U3 * (_abs0(x, 0) + _abs0(y, 0)) * (1 + 2.0 ** -40) + 2.0 ** -1060
        assert p.rad[0] <= C_MUL * U3 * _abs0(x, 0) * _abs0(y, 0) * (1 + 2.0 ** -40) + 2.0 ** -937
    _check_division(x, px, y, py)


def _check_division(x: TD, px: acb, y: TD, py: acb) -> None:
    """inv and div: contained, or refused only where the divisor is not far from 0 or 2^-400 <=
    |mid| <= 2^400 fails (Lemma 6)."""
    m = abs(complex(y.mid_hi[0]))
    must = 2.0 ** -400 <= m <= 2.0 ** 400 and float(y.rad[0]) <= 2.0 ** -10 * m
    try:
        q, d = y.inv(), x.div(y)
    except RangeError:
        assert not must
        return
    with ctx.workprec(PREC):
        assert _inside(1 / py, q, 0)
        assert _inside(px / py, d, 0)


def test_inverse_radius_on_normalized_points():
    """1/y of normalized points within C_INV u^3 |y0| (Lemma 6(b)), from 1e-150 to 1e150, and
    y (1/y) within (C_INV + 2.01 C_MUL) u^3 of 1 (Lemma 4 with A0 B0 <= 2.0001 |y| |1/y|)."""
    g = np.random.default_rng(7)
    vals = []
    for e in (-150, -20, 0, 0, 3, 40, 150):
        for _ in range(8):
            vals.append(complex(*g.standard_normal(2)) * 10.0 ** e)
    with ctx.workprec(PREC):
        balls = [acb(arb(v.real) / 3, arb(v.imag) * arb(2).sqrt()) for v in vals]
    y = td_of_balls(balls)
    y.rad[:] = 0.0                                    # the points of td_of_balls's midpoints
    q = y.inv()
    for j in range(len(vals)):
        with ctx.workprec(PREC):
            assert _inside(1 / _mid(y, j), q, j)
        assert q.rad[j] <= C_INV * U3 * abs(complex(q.mid_hi[j])) * (1 + 2.0 ** -40)
    one = y.mul(q)
    assert float(np.max(one.rad)) <= (C_INV + 2.01 * C_MUL) * U3


def test_operations_on_arrays_mixed_families():
    """Whole arrays of every family at once (products with cancelling real parts, sums that
    cancel, unnormalized and subnormal parts): every element contained, all certified."""
    g = np.random.default_rng(11)
    n = 96
    scale = g.choice([1e-140, 1e-20, 1.0, 1e40, 1e70], n)
    h = (g.standard_normal(n) + 1j * g.standard_normal(n)) * scale
    m = h * g.uniform(-1, 1, n) * U
    l = np.where(np.arange(n) % 3 == 0, m * g.uniform(-1, 1, n) * U, m * 2.0 ** -30)
    x = TD.from_parts(h, m, l, np.where(np.arange(n) % 4 == 0, 1e-30 * np.abs(h), 0.0))
    # y: i conj(x) (Re(x y) cancels exactly), -x (x + y cancels), and x turned by a random angle
    kinds = np.arange(n) % 3
    turn = np.exp(1j * g.uniform(0, 2 * np.pi, n))
    yh = np.where(kinds == 0, 1j * np.conj(h), np.where(kinds == 1, -h, h * turn))
    ym = np.where(kinds == 0, 1j * np.conj(m), np.where(kinds == 1, -m + U * U * h, m * turn))
    yl = np.where(kinds == 0, 1j * np.conj(l), np.where(kinds == 1, -l, l * turn))
    y = TD.from_parts(yh, ym, yl, 0.0)
    outs = {"add": x.add(y), "mul": x.mul(y), "square": x.square(), "div": x.div(y), "inv": y.inv()}
    certified = 0
    for j in range(n):
        px, py = _mid(x, j), _mid(y, j)
        with ctx.workprec(EXACT):
            px = px + arb(float(x.rad[j])) * acb(*DIRECTIONS[0])
            want = {"add": px + py, "mul": px * py, "square": px * px}
        with ctx.workprec(PREC):
            want.update(div=px / py, inv=1 / py)
        for k, out in outs.items():
            assert _inside(want[k], out, j), (k, j)
            certified += 1
    assert certified == 5 * n


def test_product_radius_is_relative_per_element():
    """Per element: 1e-150 next to 1e70 keeps each product's radius relative to itself."""
    v = np.array([1e-150 * (1 + 2j), 1e70 * (3 - 1j), 0.5 + 0.25j])
    x = TD.exact(v)
    p = x.mul(x)
    for j in range(3):
        assert p.rad[j] <= C_MUL * U3 * _abs0(x, j) ** 2 * (1 + 2.0 ** -40) + 2.0 ** -937


# -- refusals -------------------------------------------------------------------------------

def test_range_is_refused():
    x = TD.exact([2.0 ** 499])
    with pytest.raises(RangeError):
        x.mul(x)
    with pytest.raises(RangeError):
        TD.exact([2.0 ** 501])
    with pytest.raises(RangeError):
        TD.exact([complex(np.nan, 0)])
    with pytest.raises(RangeError):
        TD.exact([2.0 ** 450]).scale(2.0 ** 60)
    with pytest.raises(RangeError):
        TD.exact([2.0 ** -600]).inv()                 # 2^600 is out of range
    with pytest.raises(ValueError):
        TD.from_parts([1.0], [0.0], [0.0], [-1.0])
    with pytest.raises(ValueError):
        TD.exact([1.0]).scale(float("inf"))


def test_inv_refuses_a_disk_around_zero():
    with pytest.raises(RangeError):
        TD.from_parts([1e-3], [0], [0], [2e-3]).inv()
    with pytest.raises(RangeError):
        TD.exact([0.0]).inv()
    with pytest.raises(RangeError):
        TD.from_parts([1.0], [0], [0], [0.6]).inv()   # excludes 0, but q > 1/2
    assert len(TD.from_parts([1.0], [0], [0], [0.1]).inv()) == 1


# -- conversions and the other methods ------------------------------------------------------

def test_td_of_balls_relative_radius():
    """Element-wise radii: from 1e-150 to 1e150 each within 8 u^3 |x0|_1 (< 2^-155 |x0|) of its
    own size, plus the ball's radius (Lemma 7)."""
    with ctx.workprec(PREC):
        balls = [acb(arb(10) ** e / 3, arb(2).sqrt() * arb(10) ** e) for e in (-150, -20, 0, 20, 150)]
        balls.append(acb(arb(fmpq(1, 7), 2.0 ** -200), 0))
    x = td_of_balls(balls, PREC)
    for j, b in enumerate(balls):
        with ctx.workprec(PREC):
            assert bool(abs(b - _mid(x, j)).upper() + b.rad() * 2 <= arb(float(x.rad[j])) * 2)
        assert float(x.rad[j]) <= 2.0 ** -155 * abs(complex(x.mid_hi[j])) + 2.0 ** -198


@pytest.mark.parametrize("M", [1, 2, 4, 8, 16, 64, 1024])
def test_roots_of_unity_contain_the_roots(M):
    """Lemma 8: against 400-bit enclosures; radius <= 2^-158; the high parts those of the
    double-double roots, and both disks hold the same root."""
    Z, D = roots_of_unity_td(M), roots_of_unity_dd(M)
    assert float(Z.rad.max()) <= 2.0 ** -158
    assert np.array_equal(Z.r0, D.rh) and np.array_equal(Z.i0, D.ih)
    with ctx.workprec(PREC):
        for k in range(M):
            s, c = arb.sin_cos_pi_fmpq(fmpq(-2 * k, M))
            assert _inside(acb(c, s), Z, k)


def test_to_balls_and_contains():
    """to_balls contains every point of each disk (its boundary included); contains is True at
    the midpoint's rounding when the radius covers it, and False far away."""
    x = TD.from_parts([1 + 2j, -3e100 + 1e-100j], [1e-17, 2e83j], [1e-34j, 0], [1e-40, 0.0])
    balls = x.to_balls()
    for j in range(2):
        for k in range(4):
            with ctx.workprec(PREC):
                p = _point(x, j, fmpq(1), k)
                assert bool(balls[j].contains(p))
    assert list(x.contains(x.mid_complex())) == [False, False]
    wide = TD.from_parts(x.mid_hi, 0, 0, 1e-10 * np.abs(x.mid_hi))
    assert list(wide.contains(x.mid_complex())) == [True, True]
    assert list(wide.contains(x.mid_complex() * 2)) == [False, False]
    pt = TD.exact([2 + 3j])
    assert list(pt.contains([2 + 3j])) == [True]


def test_bounds_of_the_modulus_and_the_rounded_midpoint():
    """abs_upper >= |x| >= abs_lower over the disk, mid_abs >= |mid|, mid_abs1 >= |re| + |im|,
    mid_complex within u (|result| + |fl(p1 + p2)|) per component (Lemma 1)."""
    g = np.random.default_rng(5)
    h = (g.standard_normal(16) + 1j * g.standard_normal(16)) * 10.0 ** g.integers(-100, 100, 16)
    m, l = h * g.uniform(-1, 1, 16) * U, h * g.uniform(-1, 1, 16) * U * U
    x = TD.from_parts(h, m, l, np.abs(h) * 1e-3)
    up_, lo_ = x.abs_upper(), x.abs_lower()
    ma, m1, mc = x.mid_abs(), x.mid_abs1(), x.mid_complex()
    for j in range(16):
        with ctx.workprec(PREC):
            z = _mid(x, j)
            r = arb(float(x.rad[j]))
            assert bool(abs(z) + r <= arb(float(up_[j]))) and bool(abs(z) - r >= arb(float(lo_[j])))
            assert bool(abs(z) <= arb(float(ma[j]))) and bool(abs(z.real) + abs(z.imag) <= arb(float(m1[j])))
            for part, c, tail in ((z.real, mc[j].real, float(x.r1[j]) + float(x.r2[j])),
                                  (z.imag, mc[j].imag, float(x.i1[j]) + float(x.i2[j]))):
                assert bool(abs(part - arb(c)) <= arb(U) * (abs(arb(c)) + abs(arb(tail))))
    assert float(np.max(lo_)) > 0 and float(TD.from_parts([1.0], 0, 0, [2.0]).abs_lower()[0]) == 0.0
    # any triple, normalized or not: |mid_complex - mid| <= 2u mid_abs1 (the disk filter's bound)
    odd = TD.from_parts(h, h * g.uniform(-1, 1, 16), h * g.uniform(-1, 1, 16) * 2.0 ** -20, 0.0)
    for t in (x, odd):
        mc, m1 = t.mid_complex(), t.mid_abs1()
        for j in range(16):
            with ctx.workprec(EXACT):
                assert bool(abs(_mid(t, j) - acb(mc[j])).upper() <= 2 * arb(U) * arb(float(m1[j])))


def test_shape_methods_and_exact_conversions():
    """__getitem__, __len__, reshape, concat, set_point, normalized (same values, |p2| <= u |p1|),
    from_dd (exact) and to_dd (contains the disk)."""
    x = TD.from_parts([1 + 1j, 2, 3j, 4], [1e-16, 2e-16j, 0, 1e-20], [1e-40, 0, 1e-35j, 0], [0, 1e-30, 0, 0])
    assert len(x) == 4 and len(x[1:3]) == 2 and x[2].r0.ndim == 0
    r = x.reshape(2, 2)
    assert r.shape == (2, 2) and r[1, 0].i0 == 3.0
    c = concat([x[:1], x[2:]])
    assert len(c) == 3 and c.i0[1] == 3.0
    y = TD.from_parts(x.mid_hi, x.r1 + 1j * x.i1, x.r2 + 1j * x.i2, x.rad)
    y.set_point(1, 5.0)
    assert (y.r0[1], y.r1[1], y.r2[1], y.i0[1], y.rad[1]) == (5.0, 0.0, 0.0, 0.0, 0.0) and y.r0[0] == 1.0
    un = TD.from_parts([1.0], [2.0 ** -20], [2.0 ** -30 + 2.0 ** -80], 0)
    nz = normalized(un)
    assert _mid(nz, 0) == _mid(un, 0) and abs(nz.r2[0]) <= U * abs(nz.r1[0])
    d = DD.from_parts([1 + 2j], [1e-17j], [1e-30])
    t = TD.from_dd(d)
    with ctx.workprec(EXACT):
        assert _mid(t, 0) == acb(arb(1), arb(2) + arb(1e-17)) and t.rad[0] == 1e-30
    dd = x.to_dd()
    for j in range(4):
        with ctx.workprec(PREC):
            m = acb(arb(float(dd.rh[j])) + arb(float(dd.rl[j])), arb(float(dd.ih[j])) + arb(float(dd.il[j])))
            assert bool(abs(m - _mid(x, j)).upper() + float(x.rad[j]) <= arb(float(dd.rad[j])))


def test_zero_dimensional_and_broadcast_operands():
    x = TD.exact(np.complex128(1 + 2j))
    y = x.mul(x)
    assert y.r0.ndim == 0 and y.r0 == -3.0 and y.i0 == 4.0
    assert x.inv().r0.ndim == 0
    a = TD.exact(np.arange(1, 6) + 0.5j)
    b = TD.exact([2.0 + 0j])
    p = a.mul(b)
    assert p.shape == (5,) and np.array_equal(p.r0, 2 * np.arange(1, 6.0))


def test_scale_by_powers_of_two_is_exact():
    x = TD.from_parts([3 + 1j], [1e-17j], [1e-35], [1e-40])
    for c in (0.5, 4.0, -0.25):
        y = x.scale(c)
        with ctx.workprec(EXACT):
            assert _mid(y, 0) == _mid(x, 0) * c
        assert y.rad[0] <= abs(c) * 1e-40 * (1 + 2.0 ** -50) + 2.0 ** -935
    assert float(BIG) == 2.0 ** 500


# -- the kernels in exact rationals ---------------------------------------------------------

tiny_or_big = st.one_of(st.floats(allow_nan=False, allow_infinity=False, min_value=-2.0 ** 480, max_value=2.0 ** 480),
                        st.floats(min_value=-1e-300, max_value=1e-300),
                        st.sampled_from([5e-324, -5e-324, 2.0 ** -1022, 2.0 ** -460, 1e-160, 1e160, 0.0]))


@settings(max_examples=200)
@given(tiny_or_big, tiny_or_big)
def test_dekker_term_within_its_bound(a, b):
    """Lemma 3(a): exact when |fl(a b)| >= 2^-900, else within 2^-945, and |e| <= u |p| + 2^-944."""
    from fractions import Fraction

    from s4cert.arith.td_eft import _dekker, split
    if abs(a) > BIG or abs(b) > BIG:
        return                                         # outside the lemma (and refused by every operation)
    p = np.array([a]) * np.array([b])
    e = _dekker(*split(np.array([a])), *split(np.array([b])), p)
    err = abs(Fraction(a) * Fraction(b) - Fraction(float(p[0])) - Fraction(float(e[0])))
    assert err <= Fraction(2) ** -945
    assert abs(float(e[0])) <= U * abs(float(p[0])) + 2.0 ** -944
    if abs(float(p[0])) >= 2.0 ** -900:
        assert err == 0


@st.composite
def any_triple(draw):
    """A component's three parts, normalized or not: ratios from 0 to 1, tiny, subnormal or zero
    parts, magnitudes 1e-300 to 2^240."""
    s = draw(st.sampled_from([1e-300, 1e-160, 1e-20, 1.0, 3.7, 1e40, 2.0 ** 240]))
    h = draw(st.one_of(st.floats(-1, 1), st.sampled_from([0.0, 5e-324, -2.0 ** -1022]))) * s
    r1, r2 = (draw(st.sampled_from([0.0, 2.0 ** -53, 2.0 ** -30, 1.0])) for _ in range(2))
    m = h * draw(st.floats(-1, 1)) * r1
    return h, m, m * draw(st.floats(-1, 1)) * r2


@settings(max_examples=100)
@given(any_triple(), any_triple(), any_triple(), any_triple())
def test_product_midpoint_within_its_bound(xr, xi, yr, yi):
    """Lemma 3(b), (c): |x y - m_xy| (real and imaginary errors added, exact rationals) is at
    most the computed bound ``_finish(_cmul_terms(...))``, for triples normalized or not."""
    from fractions import Fraction

    from s4cert.arith.td_eft import _cmul_mid, _cmul_terms, _finish, _level_sums
    x = TD.from_parts([complex(xr[0], xi[0])], [complex(xr[1], xi[1])], [complex(xr[2], xi[2])], 0)
    y = TD.from_parts([complex(yr[0], yi[0])], [complex(yr[1], yi[1])], [complex(yr[2], yi[2])], 0)
    parts = [float(v[0]) for v in _cmul_mid(x, y)]
    bound = float(_finish(_cmul_terms(_level_sums(x), _level_sums(y)))[0])
    X = [sum(map(Fraction, c)) for c in (xr, xi)]
    Y = [sum(map(Fraction, c)) for c in (yr, yi)]
    re = X[0] * Y[0] - X[1] * Y[1] - sum(map(Fraction, parts[:3]))
    im = X[0] * Y[1] + X[1] * Y[0] - sum(map(Fraction, parts[3:]))
    assert abs(re) + abs(im) <= Fraction(bound)


# -- the compiled loops ---------------------------------------------------------------------

def _td_random(rng, n: int, spread: int) -> TD:
    """Disks with parts from 2^-spread to 2^spread (signed zeros, subnormal third parts,
    products below Dekker's threshold) and radii."""
    parts = []
    for _ in range(2):
        h = rng.standard_normal(n) * 2.0 ** rng.integers(-spread, spread + 1, n)
        h[rng.random(n) < 0.05] = 0.0
        h[rng.random(n) < 0.05] = -0.0
        m = h * rng.uniform(-1, 1, n) * U
        lo = np.where(rng.random(n) < 0.1, 5e-324, m * rng.uniform(-1, 1, n) * U)
        parts += [h, m, lo]
    return TD(*parts, np.abs(rng.standard_normal(n)) * 2.0 ** rng.integers(-200, -20, n))


def _bits(x: TD) -> list:
    return [np.asarray(a).view(np.uint64).tolist() for a in x._arrays()]


@given(seed=st.integers(0, 2 ** 32 - 1), n=st.integers(1, 200), spread=st.sampled_from([0, 30, 240, 480]))
def test_compiled_loops_are_bitwise_the_array_forms(seed, n, spread):
    """add, mul, inv as compiled loops: the same bits as the array forms (so Lemmas 2-6 cover
    them), or both refuse; with spread <= 30 every operation must compute."""
    pytest.importorskip("numba", reason="the compiled loops need the 'fast' extra (numba)")
    from s4cert.arith import td_eft as K, triple_double as T
    assert T.ADD.open() and T.MUL.open() and T.INV.open()
    rng = np.random.default_rng(seed)
    x, y = _td_random(rng, n, spread), _td_random(rng, n, spread)
    for name, kernel, ops in (("add", K._add_kernel, (x, y)), ("mul", K._mul_kernel, (x, y)),
                              ("inv", K._inv_kernel, (x,))):
        try:
            want = T._blocked(kernel, *ops)
        except RangeError:
            assert spread > 30 or name == "inv"
            with pytest.raises(RangeError):
                T._run_loop(name, *ops)
            continue
        assert _bits(T._run_loop(name, *ops)) == _bits(want)


def test_methods_take_the_compiled_loops_and_refuse_alike(monkeypatch):
    """TD.add / mul / inv run the loops (forced here on small arrays) with the array forms'
    results, and raise RangeError where those do; the gates follow the switch."""
    pytest.importorskip("numba", reason="the compiled loops need the 'fast' extra (numba)")
    from s4cert.arith import td_jit, td_eft as K, triple_double as T
    rng = np.random.default_rng(9)
    x, y = _td_random(rng, 40, 20), _td_random(rng, 40, 20)
    x.i0[:] = 1.0                                   # inverses defined everywhere
    monkeypatch.setenv("S4CERT_COMPILED", "1")
    assert all(g.use(1) for g in (T.ADD, T.MUL, T.INV))
    assert _bits(x.add(y)) == _bits(T._blocked(K._add_kernel, x, y))
    assert _bits(x.mul(y)) == _bits(T._blocked(K._mul_kernel, x, y))
    assert _bits(x.inv()) == _bits(T._blocked(K._inv_kernel, x))
    big = TD.exact(np.full(8, 2.0 ** 300))
    for f, message in ((lambda: big.mul(big), td_jit.RANGE), (lambda: TD.exact(np.zeros(8)).inv(), td_jit.ZERO),
                       (lambda: TD.from_parts(np.ones(8), 0, 0, 0.9).inv(), td_jit.NEAR_ZERO)):
        with pytest.raises(RangeError, match=re.escape(message)):
            f()
    monkeypatch.setenv("S4CERT_COMPILED", "0")
    assert not any(g.use(1 << 30) for g in (T.ADD, T.MUL, T.INV))


def test_no_fused_multiply_add_in_the_td_loops():
    """The product loop and a loop over the helpers only the inverse uses, compiled with the
    project's settings (here without numba's cache, to read their machine code), have products
    and no fused multiply-add."""
    numba = pytest.importorskip("numba", reason="the compiled loops need the 'fast' extra (numba)")
    from s4cert.arith import td_jit as J
    loops = J.compiled()

    def rest(a, b, out):  # the inverse's helpers: the double-double product, renormalization, up
        for k in range(a.shape[0]):
            p = J._cmul_dd_real(a[k], b[k], a[k], b[k], a[k], b[k])
            h, m, l = J._renorm3(p[0], p[1], p[2])
            out[k] = J._up(h * m + l) + p[3]

    mul = numba.njit(nogil=True, error_model="numpy")(loops["mul"].py_func)
    mul(*[np.ones(4) for _ in range(21)])
    rest = numba.njit(nogil=True, error_model="numpy")(rest)
    rest(np.ones(4), np.ones(4), np.ones(4))
    for f in (mul, rest):
        asm = "\n".join(f.inspect_asm().values()).lower()
        assert "mulsd" in asm or "mulpd" in asm
        assert not any(op in asm for op in ("vfmadd", "vfmsub", "vfnmadd", "vfnmsub"))


def test_the_loops_are_cached_module_functions():
    """The loops and the helpers they call are module-level functions (numba caches a loop
    only then, not a closure), and the loops are compiled with numba's cache."""
    pytest.importorskip("numba", reason="the compiled loops need the 'fast' extra (numba)")
    from s4cert.arith import td_jit as J
    for name, loop in J.compiled().items():
        assert loop.py_func.__closure__ is None and "<locals>" not in loop.py_func.__qualname__, name
        assert loop._cache.__class__.__name__ == "FunctionCache", name
    for name in J._INLINED:
        assert getattr(J, name).py_func.__qualname__ == name
