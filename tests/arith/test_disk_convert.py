"""The conversions between balls and disks (arith/disk_convert.py).

Each conversion is checked for containment against FLINT at 400 bits: every corner of each
ball (or every point on the circle of each disk, in eight directions) lies in the disk it
was converted to, decided by ``upper(|point - mid|) <= rad``.  The places that used to hold
a copy of a rule now give bitwise its result."""
from __future__ import annotations

import math

import numpy as np
import pytest
from flint import acb, arb, ctx

from s4cert.arith import disk_convert as dc
from s4cert.arith.double_double import DD
from s4cert.arith.midrad import MR, RangeError

PREC = 400


def sample_balls(seed: int, n: int = 40, span: int = 100) -> list[acb]:
    """Balls with midpoints over 10^-span..10^span and radii from 0 to wide (one tiny)."""
    rng = np.random.default_rng(seed)
    out = []
    with ctx.workprec(128):
        for k in range(n):
            m = complex(*(rng.standard_normal(2) * 10.0 ** rng.integers(-span, span, 2)))
            r = [0.0, 1e-40, 1e-3, 2.0 ** -1070, 1e-25][k % 5]
            out.append(acb(arb(m.real, r * abs(m.real)), arb(m.imag, r)) / 3)
    return out


def corners(b: acb) -> list[acb]:
    re, im = b.real, b.imag
    with ctx.workprec(4 * PREC):                            # exact sums of the balls' floats
        return [acb(cr, ci) for cr in (re.mid() + re.rad(), re.mid() - re.rad())
                for ci in (im.mid() + im.rad(), im.mid() - im.rad())]


def within(point: acb, mid: acb, rad: float) -> bool:
    with ctx.workprec(4 * PREC):
        return bool(abs(point - mid).upper() <= arb(rad))


def dd_mid(x: DD, i: int) -> acb:
    with ctx.workprec(PREC):
        return acb(arb(float(x.rh[i])) + arb(float(x.rl[i])), arb(float(x.ih[i])) + arb(float(x.il[i])))


def circle(mid: acb, rad: float) -> list[acb]:
    """The midpoint and eight points of the circle pulled inwards by a factor 1 - 2^-100 (so
    that the balls of the points, formed at 4 PREC bits, lie inside)."""
    with ctx.workprec(4 * PREC):
        shrink = 1 - arb(2) ** -100
        return [mid] + [mid + acb.exp_pi_i(acb(k) / 4) * shrink * arb(rad) for k in range(8)]


@pytest.mark.parametrize("nearest", [True, False])
def test_mr_of_balls_holds_every_corner(nearest):
    balls = sample_balls(5) + [acb(arb(0, 2.0 ** -1074), arb(1) / 7)]
    d = dc.mr_of_balls(balls, nearest=nearest)
    for b, m, r in zip(balls, d.mid, d.rad):
        assert all(within(c, acb(float(m.real), float(m.imag)), float(r)) for c in corners(b))
    assert dc.midpoints_round_to_nearest()
    wide = dc.mr_of_balls(balls, nearest=False)
    assert np.all(wide.rad >= d.rad) and np.array_equal(wide.mid, d.mid)
    with pytest.raises(RangeError):
        dc.mr_of_balls([acb(1), acb(arb(0, math.inf))])


def test_midrad_arrays_of_balls_hold_every_corner():
    balls = sample_balls(6) + [acb(0), acb(2.0 ** -1060) / 3, acb(arb(1, 1e300)) * 1e10]
    mid, rad = dc.midrad_arrays_of_balls(balls, 128)
    for b, m, r in zip(balls, mid, rad):
        assert all(within(c, acb(float(m.real), float(m.imag)), float(r)) for c in corners(b))
    assert rad[-3] == 0.0 and 0 < rad[-2] < 2.0 ** -1100 + 2.0 ** -1074 * 4
    mid, rad = dc.midrad_arrays_of_balls([acb(arb(0, math.inf))], 128)
    assert rad[0] == math.inf
    assert dc.midrad_arrays_of_balls([], 64)[0].shape == (0,)


def test_real_disk_of_ball_holds_the_real_part():
    for b in sample_balls(7, 20):
        m, r = dc.real_disk_of_ball(b)
        for c in corners(b):
            assert within(acb(c.real), acb(m), r)
    assert dc.real_disk_of_ball(acb(arb(0, math.inf)))[1] == math.inf
    m, r = dc.real_disk_of_ball(acb(arb(2) ** 2000))
    assert r == math.inf


def test_pairs_of_balls_within_one_radius():
    balls = sample_balls(8, 30, 15)
    with ctx.workprec(200):
        balls = [acb(b.mid()) / 7 for b in balls]          # narrow: 200-bit balls
    hi, lo, R = dc.pairs_of_balls(balls)
    for b, h, l in zip(balls, hi, lo):
        with ctx.workprec(PREC):
            pair = acb(arb(float(h.real)) + arb(float(l.real)), arb(float(h.imag)) + arb(float(l.imag)))
        assert all(within(c, pair, R) for c in corners(b))
    with pytest.raises(RangeError):
        dc.pairs_of_balls([acb(arb(1, 1e-20))])              # too wide for a pair
    with pytest.raises(RangeError):
        dc.pairs_of_balls([acb(arb(0, math.inf))])


def test_dd_of_balls_holds_every_corner():
    balls = sample_balls(9)
    x = dc.dd_of_balls(balls, 256)
    for i, b in enumerate(balls):
        assert all(within(c, dd_mid(x, i), float(x.rad[i])) for c in corners(b))
    with pytest.raises(RangeError):
        dc.dd_of_balls([acb(arb(0, math.inf))])


def wide_pairs(seed: int) -> DD:
    """Double-double disks whose low parts are far from normalized (|lo| up to |hi|)."""
    rng = np.random.default_rng(seed)
    n = 12
    hi = (rng.standard_normal(n) + 1j * rng.standard_normal(n)) * 10.0 ** rng.integers(-30, 30, n)
    lo = hi * rng.choice([0.0, 2.0 ** -60, 1e-5, 0.7], n)
    return DD.from_parts(hi, lo, np.abs(hi) * rng.choice([0.0, 1e-30, 1e-10], n))


@pytest.mark.parametrize("convert", ["mr_of_dd", "mr_of_dd_unnormalized", "mr_pairs_of_dd"])
def test_double_double_to_float64_disks_hold_every_point(convert):
    x = wide_pairs(10)
    out = getattr(dc, convert)(x)
    d, lo = out if convert == "mr_pairs_of_dd" else (out, np.zeros(len(x), complex))
    for i in range(len(x)):
        with ctx.workprec(PREC):
            m = acb(arb(float(d.mid[i].real)) + arb(float(lo[i].real)), arb(float(d.mid[i].imag)) + arb(float(lo[i].imag)))
        assert all(within(p, m, float(d.rad[i])) for p in circle(dd_mid(x, i), float(x.rad[i])))


def test_disks_to_balls_hold_every_point():
    x = wide_pairs(11)
    balls = dc.balls_of_disks(dc.dd_midpoints(x, PREC), x.rad, 128)
    for i, b in enumerate(balls):
        assert all(b.contains(p) for p in circle(dd_mid(x, i), float(x.rad[i])))
    y = MR.from_parts([1 + 1j, -2.5e-100, 3e100j], [0.0, 1e-110, 1e80])
    balls = dc.balls_of_disks(dc.mr_midpoints(y), y.rad, 64)
    for i, b in enumerate(balls):
        m = acb(float(y.mid[i].real), float(y.mid[i].imag))
        assert all(b.contains(p) for p in circle(m, float(y.rad[i])))
    with pytest.raises(ValueError):
        dc.balls_of_disks(dc.mr_midpoints(y), y.rad[:2], 64)


def test_the_old_places_give_bitwise_the_conversions():
    """The names kept where the rules used to be written give bitwise the same results."""
    from s4cert.algorithms.s4 import midrad as s4_midrad
    from s4cert.algorithms.s4 import midrad_quotient
    from s4cert.algorithms.s4.diagonal_midrad import disks_of
    from s4cert.arith import BallField

    balls = sample_balls(12, 20)
    F = BallField(128)
    a, b = s4_midrad._disks(F, balls), dc.mr_of_balls(balls)
    assert a.mid.tobytes() == b.mid.tobytes() and a.rad.tobytes() == b.rad.tobytes()
    assert midrad_quotient.mr_of_dd is dc.mr_of_dd and midrad_quotient.mr_pairs is dc.mr_pairs_of_dd
    w = wide_pairs(13)
    u, v = disks_of(w), dc.mr_of_dd_unnormalized(w)
    assert u.mid.tobytes() == v.mid.tobytes() and u.rad.tobytes() == v.rad.tobytes()
