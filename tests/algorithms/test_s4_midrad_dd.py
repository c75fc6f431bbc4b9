"""Tests of the filter on double-double disks (algorithms/s4/midrad_dd.py,
proofs/double_double_filter.md): containment of 400-bit ball runs (more than twice the
route's 106 bits) in the disks, on the cases that stress the float64 route.  A case may
end ``undecided`` (the route refuses); it must never return a disk that misses."""
import math
from fractions import Fraction

import numpy as np
import pytest
from flint import acb, arb, ctx, fmpq
from hypothesis import given, settings, strategies as st

from s4cert.algorithms.s4.dplr import DPLR
from s4cert.algorithms.s4.filter import filter_kernel
from s4cert.algorithms.s4.midrad_dd import cauchy_direct_dd, filter_kernel_dd, idft_dd
from s4cert.algorithms.models.hippo_float64 import dplr_float64
from s4cert.arith import BallField
from s4cert.arith.disk_convert import dd_of_balls
from s4cert.arith.double_double import DD, roots_of_unity_dd
from tests.algorithms.test_s4_midrad import _legs_numpy, rational_problem
from tests.helpers import exact_kernel

REF = BallField(400)


def _dd_holds_ball(h: complex, l: complex, r: float, b: acb) -> bool:
    with ctx.workprec(600):
        d = abs(b - acb(h.real, h.imag) - acb(l.real, l.imag))
        return bool(d.upper() <= arb(r))


def assert_contains(res, ref_values):
    hi, lo, rad = res.info["dd"]
    mid, frad = res.value
    assert len(hi) == len(ref_values)
    for j, b in enumerate(ref_values):
        assert _dd_holds_ball(complex(hi[j]), complex(lo[j]), float(rad[j]), b)
        assert _dd_holds_ball(complex(mid[j]), 0j, float(frad[j]), b)  # the rounded disks too


def check(m, step, L, c_tilde=None, refuse_ok=False):
    res = filter_kernel_dd(m, step, L, c_tilde=c_tilde)
    if refuse_ok and res.status == "undecided":
        return res
    assert res.ok, res.info
    ref = filter_kernel(REF, m, step, L, c_tilde=c_tilde, cauchy="direct")
    assert ref.ok
    assert_contains(res, ref.value)
    return res


def _lam_for_pole(mu: complex, step: float) -> complex:
    """lambda with (a - lambda)/(a + lambda) = mu (a = 2/step), rounded to a float."""
    a = 2 / step
    return a * (1 - mu) / (1 + mu)


@settings(max_examples=25, deadline=None)
@given(rational_problem())
def test_disks_contain_the_exact_kernel(problem):
    """Random Gaussian-rational models (r = 1, 2, exceptional indices): the disks contain
    the exact kernel, or the route stops undecided."""
    from s4cert.certs.routing import exact_partition
    m, step, L = problem
    res = filter_kernel_dd(m, step, L, exceptional=exact_partition(m, step))
    if not res.ok:
        assert res.status in ("undecided", "resonant-diagonal", "resonant-correction", "singular-bilinear-matrix")
        return
    assert_contains_exact(res, exact_kernel(m, step, L))


def assert_contains_exact(res, kernel: list) -> None:
    """Each double-double disk |K_j - hi_j - lo_j| <= rad_j contains the exact (re, im) entry
    (a rational check)."""
    hi, lo, rad = res.info["dd"]
    for j, (re, im) in enumerate(kernel):
        dr = re - Fraction(float(hi[j].real)) - Fraction(float(lo[j].real))
        di = im - Fraction(float(hi[j].imag)) - Fraction(float(lo[j].imag))
        assert dr * dr + di * di <= Fraction(float(rad[j])) ** 2


@pytest.mark.parametrize("N", [8, 32])
def test_legs_contains_the_ball_run_and_is_tight(N):
    m = dplr_float64("legs", N)
    res = check(m, 1e-2, 128, c_tilde=m.C)
    hi, lo, rad = res.info["dd"]
    assert float(rad.max()) < 1e-27 * float(np.abs(hi).max())


@pytest.mark.parametrize("gap", [1e-6, 1e-12])
def test_poles_next_to_the_unit_circle(gap):
    """Poles at |mu| = 1 - gap, between roots and next to one."""
    step, M = 0.5, 64
    mus = [(1 - gap) * complex(math.cos(t), math.sin(t)) for t in (0.3, 2 * math.pi / M * 1.5, 2.0)]
    m = DPLR([_lam_for_pole(mu, step) for mu in mus], [0.25, 0.5, -0.5j], [1, 1j, 2], [1, 2, 1 - 1j])
    check(m, step, M)


def test_pole_next_to_minus_one():
    step = 0.5
    a = 2 / step
    m = DPLR([a * (2 / -1e-9 - 1), -1.0 + 0.5j], [0.25, 0.5], [1, 1j], [1, 2])
    check(m, step, 64)


def test_clustered_poles():
    """Eight poles within 1e-10 of each other, near the circle."""
    step = 0.25
    base = 0.999 * complex(math.cos(1.0), math.sin(1.0))
    mus = [base + 1e-10 * complex(math.cos(k), math.sin(k)) for k in range(8)]
    g = np.random.default_rng(3)
    P = (g.standard_normal(8) + 1j * g.standard_normal(8)) / 4
    m = DPLR([_lam_for_pole(mu, step) for mu in mus], P.tolist(), g.standard_normal(8).tolist(),
             g.standard_normal(8).tolist())
    check(m, step, 32)


def test_weights_from_1e_minus_150_to_1e150():
    step = 0.1
    exps = [-75, -40, 0, 40, 75]
    lam = [complex(-0.5 - 0.1 * k, 3.0 * k) for k in range(5)]
    B = [10.0 ** e for e in exps]
    C = [10.0 ** e * (1 + 0.5j) for e in exps]
    m = DPLR(lam, [0.1, 0.2j, 0.3, 0.1, 0.2], B, C)
    check(m, step, 32, c_tilde=C)


def test_subnormal_inputs():
    """Subnormal and tiny entries: contained, or refused."""
    step = 0.1
    m = DPLR([-1.0 + 1j, -2.0, -0.5 + 3j], [5e-324, 1e-310, 0.5], [1e-320, 1.0, 2.0 ** -1060], [1.0, 5e-324j, 1.0])
    check(m, step, 16, refuse_ok=True)


def test_legs_1024_contains_the_ball_run():
    m = _legs_numpy(1024)
    check(m, 1e-3, 8, c_tilde=m.C)


def test_cauchy_refuses_a_pole_on_the_grid():
    from s4cert.arith.midrad import RangeError
    Z = roots_of_unity_dd(8)
    with pytest.raises(RangeError):
        cauchy_direct_dd(Z, DD.exact([1.0]), [DD.exact([1.0])])


def test_inverse_dft_disks_contain_the_transform():
    g = np.random.default_rng(5)
    M = 32
    h = g.standard_normal(M) + 1j * g.standard_normal(M)
    H = DD.from_parts(h, h * 2.0 ** -60, np.full(M, 1e-30))
    K = idft_dd(H, M)
    with ctx.workprec(400):
        pts = [acb(float(x.real), float(x.imag)) + acb(float(y.real), float(y.imag)) for x, y in zip(h, h * 2.0 ** -60)]
        ref = REF.primitive("dft")(pts, True)
        for j in range(M):
            assert _dd_holds_ball(complex(K.rh[j], K.ih[j]), complex(K.rl[j], K.il[j]), float(K.rad[j]), ref[j])
            # the inputs' radii are carried (the mean of 1e-30), the rounding stays near u^2 |h|
            assert 1e-30 <= float(K.rad[j]) <= 1e-30 + 1e-29


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from([1e-3, 1e-8, 1e-12]))
def test_cauchy_disks_contain_the_exact_sums(seed, gap):
    """Random poles, some a gap away from a root, weights with radii: the disks contain the
    400-bit sums for weights moved to the edge of their disks (both directions)."""
    from s4cert.algorithms.cauchy.direct import cauchy_direct
    g = np.random.default_rng(seed)
    M, n = 32, 11
    ang = 2 * math.pi * g.random(n)
    mus = (1 + g.choice([-1, 1], n) * gap * g.random(n)) * np.exp(1j * ang)
    mus[0] = complex(math.cos(2 * math.pi / M), -math.sin(2 * math.pi / M)) * (1 + gap)
    w = (g.standard_normal(n) + 1j * g.standard_normal(n)) * 10.0 ** g.integers(-20, 20, n)
    rad = np.abs(w) * 1e-26
    W = DD.from_parts(w, np.zeros(n), rad)
    sums, sep = cauchy_direct_dd(roots_of_unity_dd(M), DD.exact(mus), [W])
    S = sums[0]
    poles = [REF.from_number(complex(m)) for m in mus]
    for sign in (1, -1):
        pts = [REF.add(REF.from_number(complex(x)), REF.from_number(complex(sign * r * 0.999999))) for x, r in zip(w, rad)]
        ref = cauchy_direct(REF, poles, pts, M).value
        for k in range(M):
            assert _dd_holds_ball(complex(S.rh[k], S.ih[k]), complex(S.rl[k], S.il[k]), float(S.rad[k]), ref[k])
    with ctx.workprec(400):
        for k in range(M):
            for m in mus:
                s, c = arb.sin_cos_pi_fmpq(fmpq(-2 * k, M))
                assert abs(acb(c, s) - acb(m.real, m.imag)).lower() >= arb(sep)


@pytest.mark.parametrize("M,scale", [(1, 1.0), (2, 1e-150), (4, 1.0), (8, 1e140), (16, 1.0), (64, 1e-300),
                                     (128, 1.0), (512, 3.0), (2048, 1.0)])
def test_inverse_dft_every_layout(M, scale):
    """idft_dd with its first stages on the transposed layout (all of them for M <= 8, part of
    them above): the disks contain the 400-bit transform of the pair values, for lows up to
    2^-53 of the highs and magnitudes from 1e-300 to 1e140 (Lemma 13)."""
    g = np.random.default_rng(M)
    h = (g.standard_normal(M) + 1j * g.standard_normal(M)) * scale
    l = (g.uniform(-1, 1, M) * h.real + 1j * g.uniform(-1, 1, M) * h.imag) * 2.0 ** -53
    H = DD.from_parts(h, l, np.zeros(M))
    K = idft_dd(H, M)
    with ctx.workprec(400):
        pts = [acb(x.real, x.imag) + acb(y.real, y.imag) for x, y in zip(h, l)]
        ref = REF.primitive("dft")(pts, True) if M > 1 else pts
        for j in range(M):
            assert _dd_holds_ball(complex(K.rh[j], K.ih[j]), complex(K.rl[j], K.il[j]), float(K.rad[j]), ref[j])
        if scale >= 1e-150:                              # the rounding stays near u^2 |h| per stage
            assert float(K.rad.max()) <= 2.0 ** -100 * scale * max(1, math.log2(M))


def test_every_dissipative_model_is_certified():
    """The dissipative models of the random family's sizes (tests.helpers.dissipative_dplr:
    well inside the route's range, ranks 1 and 2, some with an exceptional index) are all
    certified on double-double disks, and the disks contain the exact kernels: 12 of 12."""
    from s4cert.certs.routing import exact_partition
    from tests.algorithms.test_s4_midrad import DISSIPATIVE_CASES
    from tests.helpers import dissipative_dplr
    certified = 0
    for seed, N, r, step, exceptional, L in DISSIPATIVE_CASES:
        m = dissipative_dplr(seed, N, r, step, exceptional)
        res = filter_kernel_dd(m, step, L, exceptional=exact_partition(m, step))
        if not res.ok:
            continue
        assert_contains_exact(res, exact_kernel(m, step, L))
        certified += 1
    assert certified == len(DISSIPATIVE_CASES) == 12
