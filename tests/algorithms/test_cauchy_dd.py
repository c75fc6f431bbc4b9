"""Tests of the double-double Cauchy sums on BLAS (algorithms/s4/cauchy_dd.py,
proofs/double_double_filter.md section 6): the disks contain 400-bit ball sums (more than
twice the 106 bits of the route) on the cases that stress the float64 route, or the
kernel refuses (RangeError); never a disk that misses."""
import math

import numpy as np
import pytest
from flint import acb, arb, ctx
from hypothesis import given, settings, strategies as st

from s4cert.algorithms.s4 import cauchy_dd as CP
from s4cert.arith.double_double import DD, roots_of_unity_dd
from s4cert.arith.midrad import RangeError

PREC = 400


def _ball(h: float, l: float) -> arb:
    return arb(h) + arb(l)


def _point(x: DD, k: int) -> acb:
    return acb(_ball(float(x.rh[k]), float(x.rl[k])), _ball(float(x.ih[k]), float(x.il[k])))


def reference(Z: DD, poles: DD, w: DD, sign: float) -> list:
    """400-bit sums at every root with the weights moved by sign * 0.999999 rad (toward
    the disks' edges) and the roots and poles at their double-double midpoints moved by
    their radii the same way."""
    out = []
    with ctx.workprec(PREC):
        mus = [_point(poles, j) + sign * 0.999999 * float(poles.rad[j]) for j in range(len(poles))]
        ws = [_point(w, j) + sign * 0.999999 * float(w.rad[j]) for j in range(len(w))]
        for k in range(len(Z)):
            z = _point(Z, k)
            s = acb(0)
            for m, a in zip(mus, ws):
                s += a / (z - m)
            out.append(s)
    return out


def assert_contains(S: DD, ref: list) -> None:
    with ctx.workprec(PREC + 200):
        for k, b in enumerate(ref):
            d = abs(b - _point(S, k))
            assert d.upper() <= arb(float(S.rad[k])), (k, d, S.rad[k])


def _poles(g, n: int, kind: str, M: int) -> np.ndarray:
    ang = 2 * math.pi * g.random(n)
    if kind == "circle":       # within 1e-12 of the unit circle, one next to a root
        mus = (1 + g.choice([-1, 1], n) * 1e-12 * g.random(n)) * np.exp(1j * ang)
        mus[0] = np.exp(-2j * math.pi / M) * (1 + 1e-12)
    elif kind == "minus_one":  # next to -1
        mus = -1 + 1e-9 * (g.standard_normal(n) + 1j * g.standard_normal(n))
    elif kind == "cluster":    # within 1e-10 of each other
        mus = 0.999 * np.exp(1j * ang[0]) + 1e-10 * np.exp(1j * ang)
    else:                      # spread: inside, outside, far
        mus = np.exp(g.uniform(-3, 7, n)) * np.exp(1j * ang)
    return mus


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from(["circle", "minus_one", "cluster", "spread"]),
       st.sampled_from([(0, 0), (-150, 150), (-40, 40)]))
def test_pairs_contain_the_ball_sums(seed, kind, span):
    """Random poles of each stressing kind, weights from 10^lo to 10^hi with radii, two
    weight sets: both sets' disks contain the 400-bit sums for weights (and poles) moved
    toward the edges of their disks, in both directions."""
    g = np.random.default_rng(seed)
    M, n = 32, 9
    mus = _poles(g, n, kind, M)
    sets = []
    for _ in range(2):
        w = (g.standard_normal(n) + 1j * g.standard_normal(n)) * 10.0 ** g.integers(span[0], span[1] + 1, n)
        sets.append(DD.from_parts(w, w * 2.0 ** -60, np.abs(w) * 1e-27))
    poles = DD.from_parts(mus, np.zeros(n), np.full(n, 1e-33))
    Z = roots_of_unity_dd(M)
    try:
        sums, sep = CP.cauchy_sums_dd(Z, poles, sets)
    except RangeError:
        # refused only where the sums may leave the double-double range (weights near 1e150
        # against a pole close to a root): below 2^480 every sum, term and radius stays far
        # under 2^500, and every pole is at least about 1e-12 from every root, far beyond
        # double-double reach, so those are always certified
        z = np.exp(-2j * np.pi * np.arange(M) / M)
        reach = max(float(np.max(np.abs(x.rh) + np.abs(x.ih))) for x in sets) * n \
            / float(np.min(np.abs(z[:, None] - mus[None, :])))
        assert reach >= 2.0 ** 480, (kind, reach)
        return
    for S, w in zip(sums, sets):
        for sign in (1.0, -1.0):
            assert_contains(S, reference(Z, poles, w, sign))
    with ctx.workprec(PREC):                                 # sep is below every distance
        for k in range(M):
            for j in range(n):
                assert abs(_point(Z, k) - _point(poles, j)).lower() >= arb(sep)


def test_many_poles_and_small_blocks(monkeypatch):
    """1024 poles (beta = 20, every product of inner dimension 2 n): contained; blocks of one
    root give disks that contain the same sums (the products' order, and so their
    rounding, differs with the block), no wider (the slices' scale is the block's)."""
    g = np.random.default_rng(7)
    M, n = 8, 1024
    mus = (1 + 0.01 * g.random(n)) * np.exp(2j * math.pi * g.random(n))
    w = (g.standard_normal(n) + 1j * g.standard_normal(n)) / n
    poles, W = DD.exact(mus), DD.from_parts(w, np.zeros(n), np.zeros(n))
    Z = roots_of_unity_dd(M)
    (S,), _ = CP.cauchy_sums_dd(Z, poles, [W])
    assert_contains(S, reference(Z, poles, W, 1.0))
    monkeypatch.setattr(CP, "BLOCK_PAIRS", 1)
    (S1,), _ = CP.cauchy_sums_dd(Z, poles, [W])
    assert_contains(S1, reference(Z, poles, W, -1.0))
    assert np.all(S1.rad <= 2 * S.rad)


def test_radius_follows_the_terms():
    """The radius stays within 2^-88 of sum_j |a_j| / |z_k - mu_j| (the rounding bounds
    are relative to the terms actually summed, not to the largest one)."""
    g = np.random.default_rng(11)
    M, n = 64, 40
    mus = (1 + 0.005 * g.random(n)) * np.exp(2j * math.pi * g.random(n))
    w = (g.standard_normal(n) + 1j * g.standard_normal(n)) * 10.0 ** g.integers(-3, 3, n)
    Z = roots_of_unity_dd(M)
    (S,), _ = CP.cauchy_sums_dd(Z, DD.exact(mus), [DD.exact(w)])
    z = Z.rh + 1j * Z.ih
    terms = (np.abs(w)[None, :] / np.abs(z[:, None] - mus[None, :])).sum(axis=1)
    assert np.all(S.rad <= 2.0 ** -88 * terms)


def test_tiny_and_subnormal_parts():
    """Poles and weights with tiny and subnormal parts: certified (every pole at least 0.3
    from every root, every part below 2), and contained."""
    mus = np.array([1.5 + 5e-324j, 2.0 ** -1060 + 0.5j, -0.7 + 1e-310j])
    w = np.array([1.0 + 0j, 5e-324 + 1j, 1e-300])
    Z = roots_of_unity_dd(16)
    poles, W = DD.exact(mus), DD.exact(w)
    (S,), _ = CP.cauchy_sums_dd(Z, poles, [W])
    assert_contains(S, reference(Z, poles, W, 1.0))


def test_refuses_a_pole_on_the_grid_and_huge_poles():
    Z = roots_of_unity_dd(8)
    with pytest.raises(RangeError):
        CP.cauchy_sums_dd(Z, DD.exact([1.0]), [DD.exact([1.0])])
    with pytest.raises(RangeError):
        CP.cauchy_sums_dd(Z, DD.exact([2.0 ** 101]), [DD.exact([1.0])])


def test_no_poles():
    sums, sep = CP.cauchy_sums_dd(roots_of_unity_dd(4), DD.exact(np.zeros(0)), [DD.exact(np.zeros(0))])
    assert sep == math.inf and np.all(sums[0].rh == 0) and np.all(sums[0].rad == 0)


def _exact(x) -> "Fraction":
    from fractions import Fraction
    return Fraction(float(x))


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2 ** 32 - 1))
def test_three_parts_and_differences(seed):
    """Lemma 10 in exact rationals: the three parts lie on their grids with |x3| <= g2/2 and
    represent h + l within 0.7 u g2 + 2^-200; the differences' high parts lie on the grid g2,
    their low parts within (1 + u)(u |dh| + g2), and the pairs within R_0 - rad + 1.45 u^2 |dh|
    of the differences of the represented values (high parts equal, components equal, tiny
    and large low parts, the root 1 at |h| = S/2)."""
    from fractions import Fraction
    g = np.random.default_rng(seed)
    u = Fraction(1, 2 ** 53)
    n, M = 7, 8
    Z = roots_of_unity_dd(M)
    re = np.concatenate([g.uniform(-1, 1, n - 3), [Z.rh[1], Z.rh[2], 0.5]])
    im = np.concatenate([g.uniform(-1, 1, n - 3), [Z.ih[1], 0.3, Z.ih[3]]])
    lo = g.standard_normal((2, n)) * 2.0 ** g.integers(-230, -52, (2, n)).astype(float)
    poles = DD(re, lo[0], im, lo[1], np.zeros(n))
    big = max(float(np.max(np.abs(p))) for p in (Z.rh, Z.ih, poles.rh, poles.ih))
    S = float(CP._pow2_at_least(np.array(2.0 * max(big, 1.0))))
    g1, g2 = Fraction(S) / 2 ** 52, Fraction(S) / 2 ** 103
    parts = []
    for h, l in ((Z.rh, Z.rl), (Z.ih, Z.il), (poles.rh, poles.rl), (poles.ih, poles.il)):
        h0, l0 = CP._tiny_to_zero(h), CP._tiny_to_zero(l)
        x1, x2, x3 = CP._three_parts(h0, l0, S)
        for i in range(len(h)):
            a, b, c = _exact(x1[i]), _exact(x2[i]), _exact(x3[i])
            assert (a / g1).denominator == 1 and (b / g2).denominator == 1 and abs(c) <= g2 / 2
            assert c == 0 or abs(c) >= Fraction(2) ** -200
            assert abs(_exact(h0[i]) + _exact(l0[i]) - a - b - c) <= Fraction(7, 10) * u * g2 + Fraction(2) ** -200
        parts.append((x1, x2, x3))
    Zp, Pp = CP._factors(parts)
    dh, dl = CP._differences(CP._Work(M, n), Zp, Pp)
    for c in range(2):
        for j in range(n):
            for k in range(M):
                zc = sum(_exact(parts[c][i][k]) for i in range(3))
                pc = sum(_exact(parts[2 + c][i][j]) for i in range(3))
                h, l = _exact(dh[c, j, k]), _exact(dl[c, j, k])
                assert (h / g2).denominator == 1 and abs(l) <= (1 + u) * (u * abs(h) + g2)
                assert abs(zc - pc - h - l) <= 3 * u * g2 + Fraction(101, 100) * u * u * abs(h)


def test_root_factors_are_reused_only_for_the_same_roots():
    """The roots' factors kept from the last call are used only when the roots' parts are
    bitwise the same: the sums then equal a fresh computation, and a root changed in its
    last bit is recomputed."""
    g = np.random.default_rng(5)
    M, n = 16, 5
    poles = DD.exact(1.5 * np.exp(2j * math.pi * g.random(n)))
    W = DD.exact(g.standard_normal(n) + 1j * g.standard_normal(n))
    Z = roots_of_unity_dd(M)
    CP._ROOT_CACHE.clear()
    (fresh,), _ = CP.cauchy_sums_dd(Z, poles, [W])
    (again,), _ = CP.cauchy_sums_dd(roots_of_unity_dd(M), poles, [W])
    for f in ("rh", "rl", "ih", "il", "rad"):
        assert np.array_equal(getattr(fresh, f), getattr(again, f))
    Z2 = roots_of_unity_dd(M)
    Z2.rl[3] = np.nextafter(Z2.rl[3], 1.0)
    (moved,), _ = CP.cauchy_sums_dd(Z2, poles, [W])
    assert np.array_equal(CP._ROOT_CACHE[0][1][1], Z2.rl)          # recomputed, not reused
    CP._ROOT_CACHE.clear()
    (moved_fresh,), _ = CP.cauchy_sums_dd(Z2, poles, [W])
    for f in ("rh", "rl", "ih", "il", "rad"):
        assert np.array_equal(getattr(moved, f), getattr(moved_fresh, f))
