"""Tests of double-double disk arithmetic (arith/double_double.py, proofs/double_double_filter.md §1-§3).

Containment is decided exactly: floats are rationals, so every disk is checked against the
exact result of the operation on points of the operand disks."""
from fractions import Fraction

import numpy as np
import pytest
from flint import acb, arb, ctx, fmpq
from hypothesis import given, settings, strategies as st

from s4cert.arith.disk_convert import dd_of_balls
from s4cert.arith.double_double import DD, roots_of_unity_dd, two_prod, two_sum
from s4cert.arith.midrad import RangeError

finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-2.0 ** 480, max_value=2.0 ** 480)
tiny_or_big = st.one_of(finite, st.floats(min_value=-1e-300, max_value=1e-300),
                        st.sampled_from([5e-324, -5e-324, 2.0 ** -1022, 1e-160, 1e160, 0.0]))


@given(tiny_or_big, tiny_or_big)
def test_two_sum_is_exact(a, b):
    s, e = two_sum(np.array([a]), np.array([b]))
    assert Fraction(float(s[0])) + Fraction(float(e[0])) == Fraction(a) + Fraction(b)


@given(tiny_or_big, tiny_or_big)
def test_two_prod_within_its_bound(a, b):
    """Exact when |fl(ab)| >= 2^-900; otherwise within 2^-950 (the error term dropped)."""
    if abs(a) > 2.0 ** 500 or abs(b) > 2.0 ** 500:
        return
    p, e = two_prod(np.array([a]), np.array([b]))
    err = abs(Fraction(a) * Fraction(b) - Fraction(float(p[0])) - Fraction(float(e[0])))
    assert err <= Fraction(2) ** -950
    if abs(float(p[0])) >= 2.0 ** -900:
        assert err == 0


def _exact(x: DD, i: int) -> tuple[Fraction, Fraction]:
    return (Fraction(float(x.rh[i])) + Fraction(float(x.rl[i])), Fraction(float(x.ih[i])) + Fraction(float(x.il[i])))


def _holds(x: DD, i: int, re: Fraction, im: Fraction) -> bool:
    mr, mi = _exact(x, i)
    return (re - mr) ** 2 + (im - mi) ** 2 <= Fraction(float(x.rad[i])) ** 2


@st.composite
def disk(draw, scale=st.sampled_from([1e-150, 1e-20, 1.0, 3.7, 1e40, 1e150])):
    """A double-double disk and a point in it (the point exact, on the boundary or inside)."""
    s = draw(scale)
    hr, hi = (draw(st.floats(-1, 1)) * s for _ in range(2))
    lr, li = hr * draw(st.floats(-1, 1)) * 2 ** -53, hi * draw(st.floats(-1, 1)) * 2 ** -53
    rad = draw(st.sampled_from([0.0, 1e-32, 1e-3])) * s
    x = DD.from_parts([complex(hr, hi)], [complex(lr, li)], [rad])
    mr, mi = _exact(x, 0)
    t = Fraction(draw(st.floats(0, 1)))
    pr, pi = mr + Fraction(rad) * t * Fraction(3, 5), mi + Fraction(rad) * t * Fraction(4, 5)
    return x, (pr, pi)


def _within(x: DD, bound: float) -> bool:
    """Every part and the radius of the disk are at most ``bound`` in modulus."""
    return all(abs(float(a[0])) <= bound for a in (x.rh, x.rl, x.ih, x.il, x.rad))


@settings(max_examples=200)
@given(disk(), disk())
def test_add_sub_mul_contain_the_exact_results(a, b):
    """The results contain the exact ones; they are refused only out of range: operands
    with every part and radius <= 2^240 give parts and radii below 4 * 2^480 < BIG = 2^500,
    so those are always certified (the refusal is only for a result that may pass 2^500)."""
    (x, (xr, xi)), (y, (yr, yi)) = a, b
    try:
        s, d, p = x.add(y), x.sub(y), x.mul(y)
    except RangeError:
        assert not (_within(x, 2.0 ** 240) and _within(y, 2.0 ** 240))
        return
    assert _holds(s, 0, xr + yr, xi + yi)
    assert _holds(d, 0, xr - yr, xi - yi)
    assert _holds(p, 0, xr * yr - xi * yi, xr * yi + xi * yr)


@settings(max_examples=200)
@given(disk())
def test_square_contains_the_exact_square(a):
    """DD.square: every point's square lies in the disk (three real products, the cross
    product doubled exactly), and the disk is no wider than mul(x, x)'s."""
    x, (xr, xi) = a
    try:
        q, p = x.square(), x.mul(x)
    except RangeError:
        assert not _within(x, 2.0 ** 240)   # as for mul: in range, always certified
        return
    assert _holds(q, 0, xr * xr - xi * xi, 2 * xr * xi)
    assert float(q.rad[0]) <= float(p.rad[0])


@settings(max_examples=200)
@given(disk())
def test_inv_contains_the_exact_inverse_or_refuses(a):
    """Contained, or refused only for a divisor out of range or whose disk is not well away
    from 0: with |mid| in [2^-400, 2^400] and rad <= |mid| / 4, Lemma 5's q is at most
    about rad / |mid| + 2u <= 1/2, so such a divisor is always certified."""
    x, (xr, xi) = a
    try:
        q = x.inv()
    except RangeError:
        m = abs(complex(x.mid_hi[0]))
        assert not (2.0 ** -400 <= m <= 2.0 ** 400 and float(x.rad[0]) <= m / 4)
        return
    n = xr * xr + xi * xi
    assert n != 0 and _holds(q, 0, xr / n, -xi / n)
    assert q.rad[0] <= 1e-28 * abs(complex(q.mid_hi[0])) + 2.1 * float(x.rad[0]) / max(abs(complex(x.mid_hi[0])), 1e-300) ** 2


def test_inv_refuses_a_disk_around_zero():
    with pytest.raises(RangeError):
        DD.from_parts([1e-3], [0], [2e-3]).inv()
    with pytest.raises(RangeError):
        DD.exact([0.0]).inv()


def test_range_is_checked():
    x = DD.exact([2.0 ** 499])
    with pytest.raises(RangeError):
        x.mul(x)


def test_scale_by_a_power_of_two():
    x = DD.from_parts([3 + 1j], [1e-17j], [1e-30])
    y = x.scale(0.5)
    assert _holds(y, 0, *(v / 2 for v in _exact(x, 0)))
    with pytest.raises(ValueError):
        x.scale(3.0)


@pytest.mark.parametrize("M", [1, 2, 4, 8, 16, 64, 1024])
def test_roots_of_unity_contain_the_roots(M):
    Z = roots_of_unity_dd(M)
    assert float(Z.rad.max()) <= 2.0 ** -104
    with ctx.workprec(320):
        for k in range(M):
            s, c = arb.sin_cos_pi_fmpq(fmpq(-2 * k, M))
            d = abs(acb(c, s) - acb(float(Z.rh[k]), float(Z.ih[k])) - acb(float(Z.rl[k]), float(Z.il[k])))
            assert d.upper() <= arb(float(Z.rad[k]))


def test_dd_of_balls_relative_radius():
    """Element-wise radii: from 1e-150 to 1e150 each within about 2^-100 of its own size."""
    with ctx.workprec(400):
        balls = [acb(arb(10) ** e / 3, arb(2).sqrt() * arb(10) ** e) for e in (-150, -20, 0, 20, 150)]
        x = dd_of_balls(balls, 400)
        for j, b in enumerate(balls):
            d = abs(b - acb(float(x.rh[j]), float(x.ih[j])) - acb(float(x.rl[j]), float(x.il[j])))
            assert d.upper() <= arb(float(x.rad[j]))
            assert float(x.rad[j]) <= 2.0 ** -100 * abs(complex(x.mid_hi[j]))


@st.composite
def normalized_pair(draw):
    from s4cert.arith.double_double import two_sum
    h = draw(st.one_of(st.floats(-1e6, 1e6), st.sampled_from([1e-150, -3e150, 1.0, 2.0 ** -1000])))
    l = h * draw(st.floats(-1, 1)) * 2.0 ** -53
    s, e = two_sum(np.array([h]), np.array([l]))
    return float(s[0]), float(e[0])


@settings(max_examples=300)
@given(normalized_pair(), normalized_pair())
def test_pair_kernels_within_the_a_priori_bounds(x, y):
    """mul_pairs within 8.1 u^2 |xh||yh| + 2^-949 (high part at most 1.001 |xh||yh|), add_pairs
    within 3.1 u^2 (|xh| + |yh|), both exactly checked, and both results normalized."""
    from s4cert.arith.double_double import add_pairs, mul_pairs
    (xh, xl), (yh, yl) = x, y
    u2 = Fraction(2) ** -106
    X, Y = Fraction(xh) + Fraction(xl), Fraction(yh) + Fraction(yl)
    zh, zl = (float(v[0]) for v in mul_pairs(*(np.array([v]) for v in (xh, xl, yh, yl))))
    P = abs(Fraction(xh) * Fraction(yh))
    assert abs(X * Y - Fraction(zh) - Fraction(zl)) <= Fraction(81, 10) * u2 * P + Fraction(2) ** -949
    assert abs(Fraction(zh)) <= Fraction(1001, 1000) * P + Fraction(2) ** -949 and abs(zl) <= 2.0 ** -53 * abs(zh)
    sh, sl = (float(v[0]) for v in add_pairs(*(np.array([v]) for v in (xh, xl, yh, yl))))
    assert abs(X + Y - Fraction(sh) - Fraction(sl)) <= Fraction(31, 10) * u2 * (abs(Fraction(xh)) + abs(Fraction(yh)))
    assert abs(sl) <= 2.0 ** -53 * abs(sh)


@st.composite
def any_pair(draw):
    """A (hi, lo) pair of floats, normalized or not: lows up to the high part's size, tiny,
    subnormal or zero parts, magnitudes 1e-300 to 1e150."""
    s = draw(st.sampled_from([1e-300, 1e-160, 1e-20, 1.0, 3.7, 1e40, 1e150]))
    h = draw(st.one_of(st.floats(-1, 1), st.sampled_from([0.0, 5e-324, -2.0 ** -1022]))) * s
    ratio = draw(st.sampled_from([0.0, 2.0 ** -53, 2.0 ** -30, 1.0]))
    return h, h * draw(st.floats(-1, 1)) * ratio


def _fr(*xs):
    return [Fraction(float(v)) for v in xs]


@settings(max_examples=300)
@given(any_pair(), any_pair(), any_pair(), any_pair())
def test_complex_pair_product_within_its_bound(xr, xi, yr, yi):
    """_cmul: |x y - (rh + rl) - i (ih + il)| <= err, checked exactly, for pairs normalized or
    not (Lemma 3); _csquare within _cmul's bound for y = x."""
    from s4cert.arith.double_double import _cmul, _csquare
    a = [np.array([v]) for v in (*xr, *xi, *yr, *yi)]
    X = (Fraction(xr[0]) + Fraction(xr[1]), Fraction(xi[0]) + Fraction(xi[1]))
    Y = (Fraction(yr[0]) + Fraction(yr[1]), Fraction(yi[0]) + Fraction(yi[1]))
    for out, (pr, pi) in ((_cmul(*a), (X[0] * Y[0] - X[1] * Y[1], X[0] * Y[1] + X[1] * Y[0])),
                          (_csquare(*a[:4]), (X[0] ** 2 - X[1] ** 2, 2 * X[0] * X[1]))):
        rh, rl, ih, il, err = (float(v[0]) if np.ndim(v) else float(v) for v in out)
        re, im = pr - Fraction(rh) - Fraction(rl), pi - Fraction(ih) - Fraction(il)
        assert abs(re) + abs(im) <= Fraction(err)
    # 0-d operands give 0-d results
    assert np.ndim(_cmul(*(np.float64(v) for v in (*xr, *xi, *yr, *yi)))[0]) == 0


def test_complex_pair_product_is_tight():
    """On normalized pairs of size about 1 the bound stays near 60 u^2, the error near u^2."""
    from s4cert.arith.double_double import _cmul
    g = np.random.default_rng(3)
    h = g.standard_normal((4, 64))
    l = h * g.uniform(-1, 1, (4, 64)) * 2.0 ** -53
    out = _cmul(h[0], l[0], h[1], l[1], h[2], l[2], h[3], l[3])
    Ah, Bh = np.abs(h[0]) + np.abs(h[1]), np.abs(h[2]) + np.abs(h[3])
    assert np.all(out[4] <= 45 * 2.0 ** -106 * Ah * Bh + 2.0 ** -900)
