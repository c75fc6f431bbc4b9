"""Tests of the float64 route's rank-one quotient form and its tighter Cauchy sums
(algorithms/s4/midrad_quotient.py, algorithms/s4/midrad.py; proofs/midrad_filter.md,
Lemmas 8-13).

Every check is containment of a much tighter ball enclosure (320 bits and more) in the
disks, decided certainly; the stress cases put poles within 1e-12 of the unit circle,
next to -1 and in clusters."""
import math
from fractions import Fraction

import numpy as np
import pytest
from flint import acb, arb, ctx
from hypothesis import given, strategies as st

from s4cert.algorithms.cauchy.direct import cauchy_direct
from s4cert.algorithms.s4.dplr import DPLR
from s4cert.algorithms.models.hippo_float64 import dplr_float64
from s4cert.algorithms.s4.filter import filter_kernel, setup
from s4cert.algorithms.s4.midrad import cauchy_direct_midrad, filter_kernel_midrad
from s4cert.algorithms.s4.midrad_quotient import KEYS, cauchy_at_poles, quotient_weights
from s4cert.arith import BallField
from s4cert.arith.disk_convert import dd_of_balls, pairs_of_balls as dd_from_balls
from s4cert.arith.double_double import DD
from s4cert.arith.midrad import MR, U, on_grid, roots_of_unity_dd
from tests.algorithms.test_s4_midrad import REF, disk_holds_ball

F128 = BallField(128)


def dd_holds_ball(x: DD, k, b: acb) -> bool:
    """Every point of the ball b lies in the double-double disk k of x (certainly)."""
    with ctx.workprec(500):
        m = acb(arb(float(x.rh[k])) + arb(float(x.rl[k])), arb(float(x.ih[k])) + arb(float(x.il[k])))
        return bool(abs(b - m).upper() <= arb(float(x.rad[k])))


def float_model(lam, seed: int, q_is_p: bool = False) -> DPLR:
    """A rank-one model with the given Lambda and random complex P, Q, B, C (floats); with
    ``q_is_p`` Q = P (A = Lambda - P P*, dissipative when Re Lambda <= 0)."""
    g = np.random.default_rng(seed)
    n = len(lam)
    v = lambda: [complex(a, b) for a, b in zip(g.standard_normal(n), g.standard_normal(n))]
    P, B, C, Q = v(), v(), v(), v()
    return DPLR(list(lam), [[x] for x in P], B, C, Q=[[x] for x in (P if q_is_p else Q)])


# -- the partial fractions of N = x + beta D -------------------------------------------------

def _reference_quotient(model, step, M):
    """e_i, nu_i, n0 from the 320-bit set-up, directly by the defining sums (Lemma 12)."""
    st_ = setup(REF, model, step, M, None).value
    mu = st_.poles
    ax, au, av, aT = (st_.weights[k] for k in KEYS)
    n = len(mu)
    with ctx.workprec(400):
        e = []
        for i in range(n):
            s = acb(0)
            for j in range(n):
                if j != i:
                    c = ax[i] * aT[j] + ax[j] * aT[i] - au[i] * av[j] - au[j] * av[i]
                    s += c / (mu[i] - mu[j])
            e.append(s)
        nu = [ax[i] + e[i] * (1 + mu[i]) / 2 for i in range(n)]
        n0 = sum(e, acb(0)) / 2
    return st_, nu, n0


@pytest.mark.parametrize("kind", ["spread", "clustered", "near_circle", "legs"])
def test_quotient_weights_contain_the_defining_sums(kind):
    """Lemma 13: nu_i and n0 formed in double-double from the 128-bit set-up contain the
    320-bit values of a^x_i + (1 + mu_i)/2 sum_{j != i} c_ij / (mu_i - mu_j) and
    sum_i e_i / 2, for poles spread out, clustered (1e-7 apart), 1e-12 from the circle,
    and LegS (where e = 0 exactly)."""
    step = 0.01
    a = 2 / step
    g = np.random.default_rng(7)
    if kind == "spread":
        model = float_model(-g.uniform(0.1, 5, 12) + 1j * g.uniform(-300, 300, 12), 1)
    elif kind == "clustered":
        model = float_model([-0.5 + 1j * (40 + 1e-7 * k) for k in range(6)] + [-1.0 - 3j, -2.0 + 90j], 2)
    elif kind == "near_circle":
        model = float_model([-a * 5e-13 + 1j * t for t in (3.0, -70.0, 250.0)] + [-0.5 + 10j], 3)
    else:
        model = dplr_float64("legs", 16)
    M = 64
    st_ = setup(F128, model, step, M, None).value
    mu = DD.from_parts(*dd_from_balls(st_.poles))
    w = [dd_of_balls([F128.enclose(x) for x in st_.weights[k]]) for k in st_.weights]
    nu, n0 = quotient_weights(st_, mu, w)
    _, nu_ref, n0_ref = _reference_quotient(model, step, M)
    for i, b in enumerate(nu_ref):
        assert dd_holds_ball(nu, i, b)
    assert dd_holds_ball(n0, 0, n0_ref)


def test_numerator_is_x_plus_beta_d():
    """The identity behind Lemma 12: at points z off the poles, N(z) = n0 + sum_i nu_i /
    (z - mu_i) equals x + beta (x T - u v) (both sides at 320 bits; the difference's ball
    contains 0 and is tiny)."""
    model = float_model([-0.3 + 2j, -1.0 - 5j, -0.2 + 40j, -4.0], 5)
    st_, nu, n0 = _reference_quotient(model, 0.1, 8)
    with ctx.workprec(400):
        for z in (acb(0.3, 0.9), acb(-0.99, 0.01), acb(2, -1)):
            s = {k: sum((w / (z - m) for w, m in zip(st_.weights[k], st_.poles)), acb(0)) for k in KEYS}
            x, u, v, T = (s[k] for k in KEYS)
            beta = (1 + z) / 2
            N = n0 + sum((w / (z - m) for w, m in zip(nu, st_.poles)), acb(0))
            d = N - (x + beta * (x * T - u * v))
            assert d.contains(0) and abs(d).upper() < arb(2) ** -250


@given(st.integers(1, 9), st.integers(1, 4), st.integers(0, 2 ** 32 - 1))
def test_cauchy_at_poles_contains_the_sums(n, K, seed):
    """Lemma 13's sums S'_ic = sum_j E_ij a_jc over pair disks with magnitudes 2^-40..2^40
    and radii: the result holds the 320-bit sums at the centres and at the centres of E
    moved by (almost) their radii."""
    g = np.random.default_rng(seed)
    cplx = lambda *s: (g.standard_normal(s) + 1j * g.standard_normal(s)) * 2.0 ** g.integers(-40, 40, s)
    Eh = cplx(n, n)
    E = DD.from_parts(Eh, Eh * g.uniform(-2.0 ** -53, 2.0 ** -53, (n, n)), np.abs(Eh) * 2.0 ** -90)
    Ah = cplx(n, K)
    A = DD.from_parts(Ah, Ah * g.uniform(-2.0 ** -53, 2.0 ** -53, (n, K)), np.zeros((n, K)))
    S = cauchy_at_poles(E, A)
    with ctx.workprec(500):
        val = lambda X, i, j: acb(arb(float(X.rh[i, j])) + arb(float(X.rl[i, j])),
                                  arb(float(X.ih[i, j])) + arb(float(X.il[i, j])))
        for shift in (0.0, 1 / 1.0000001):
            for i in range(n):
                for c in range(K):
                    ref = sum(((val(E, i, j) + shift * float(E.rad[i, j])) * val(A, j, c) for j in range(n)), acb(0))
                    m = acb(arb(float(S.rh[i, c])) + arb(float(S.rl[i, c])),
                            arb(float(S.ih[i, c])) + arb(float(S.il[i, c])))
                    assert abs(ref - m).upper() <= arb(float(S.rad[i, c]))


# -- the Cauchy sums: grid, low parts, bounded sets ------------------------------------------

@given(st.integers(0, 2 ** 32 - 1), st.sampled_from([2.0 ** -50, 2.0 ** -48, 1.0, 2.0 ** 10]))
def test_on_grid_is_exact(seed, g):
    """Lemma 8's rebasing: hi' on the grid g, hi - hi' exact, and hi + lo - hi' - lo' within
    u |lo'| per part (checked in rationals)."""
    r = np.random.default_rng(seed)
    hi = (r.standard_normal(50) + 1j * r.standard_normal(50)) * 2.0 ** r.integers(-60, 12, 50)
    lo = hi * r.uniform(-2.0 ** -53, 2.0 ** -53, 50)
    h2, l2, e = on_grid(hi, lo, g)
    for a, b, c, d in zip(hi, lo, h2, l2):
        for x, y, x2, y2 in ((a.real, b.real, c.real, d.real), (a.imag, b.imag, c.imag, d.imag)):
            assert Fraction(x2) / Fraction(g) == int(Fraction(x2) / Fraction(g))
            assert abs(Fraction(x) + Fraction(y) - Fraction(x2) - Fraction(y2)) <= Fraction(U) * abs(Fraction(y2))
            assert Fraction(U) * abs(Fraction(y2)) <= Fraction(e)


def _stress_poles(draw):
    n = draw(st.integers(1, 24))
    poles = []
    for _ in range(n):
        kind = draw(st.sampled_from(["circle_1e-12", "near_minus_one", "cluster", "far"]))
        phi = draw(st.floats(0, 2 * math.pi))
        if kind == "circle_1e-12":
            r = 1 + draw(st.sampled_from([-1, 1])) * draw(st.sampled_from([1e-12, 3e-12, 1e-9]))
        elif kind == "near_minus_one":
            r, phi = 1 + draw(st.sampled_from([1e-12, -1e-9, 1e-6])), math.pi + draw(st.sampled_from([0.0, 1e-9, -1e-6]))
        elif kind == "cluster":
            r, phi = 1.001, 0.5 + draw(st.integers(0, 5)) * 1e-9
        else:
            r = draw(st.floats(2, 2.0 ** 17))
        poles.append(complex(r * math.cos(phi), r * math.sin(phi)))
    return poles


@st.composite
def stress_sums(draw):
    poles = _stress_poles(draw)
    seed = draw(st.integers(0, 2 ** 32 - 1))
    M = draw(st.sampled_from([4, 64, 512]))
    return poles, seed, M


@given(stress_sums())
def test_sums_with_low_parts_and_bounds_contain_the_exact_sums(problem):
    """Lemmas 8-10 with weights carrying low parts (magnitudes 2^-30..2^30) and a bounded
    set: the disks contain the 320-bit sums of mid + lo, the bounds are above their
    moduli, for poles 1e-12 from the circle, next to -1, clustered and far.  Every example
    is certified: each pole's modulus differs from 1 by at least about 1e-12, so
    |z_k - mu_j| >= 1e-12 / 2, far above the 4 R_0 below which Lemma 9 refuses (R_0 of order
    u^2 B_0 <= 2^-86 for |mu_j| <= 2^17, Lemma 8)."""
    poles, seed, M = problem
    g = np.random.default_rng(seed)
    n = len(poles)
    hi = (g.standard_normal(n) + 1j * g.standard_normal(n)) * 2.0 ** g.integers(-30, 30, n)
    lo = hi * g.uniform(-2.0 ** -53, 2.0 ** -53, n)
    pb = [acb(p.real, p.imag) for p in poles]
    sums, sep, ubs = cauchy_direct_midrad(roots_of_unity_dd(M), dd_from_balls(pb), [MR.exact(hi)], [lo],
                                          [MR.exact(hi)])
    with ctx.workprec(300):
        w = [REF.add(REF.from_number(complex(a)), REF.from_number(complex(b))) for a, b in zip(hi, lo)]
    ref = cauchy_direct(REF, [REF.from_number(p) for p in poles], w, M)
    ref_hi = cauchy_direct(REF, [REF.from_number(p) for p in poles], [REF.from_number(complex(a)) for a in hi], M)
    assert ref.ok and ref_hi.ok
    for k in range(M):
        assert disk_holds_ball(complex(sums[0].mid[k]), float(sums[0].rad[k]), ref.value[k])
        with ctx.workprec(400):
            assert abs(ref_hi.value[k]).upper() <= arb(float(ubs[0][k]))


def test_sum_radius_is_about_five_u_of_the_absolute_sum():
    """The sums' rounding constant (Lemmas 8-9: u for the difference, 4u for 1/d): a pole
    1e-6 from a root, the radius within 5.2 u sum |a_j| / |z - mu_j| (+ u |S|)."""
    M = 256
    z0 = complex(math.cos(2 * math.pi * 3 / M), -math.sin(2 * math.pi * 3 / M))
    poles = [z0 * (1 + 1e-6), 0.3 + 0.2j, -1.7j]
    a = np.array([1.0 + 0.5j, -2.0, 0.25j])
    sums, _ = cauchy_direct_midrad(roots_of_unity_dd(M), dd_from_balls([acb(p.real, p.imag) for p in poles]),
                                   [MR.exact(a)])
    z = np.exp(-2j * np.pi * np.arange(M) / M)
    absum = np.abs(a)[None, :] / np.abs(z[:, None] - np.array(poles)[None, :])
    bound = 5.2 * U * absum.sum(axis=1) + 1.5 * U * np.abs(sums[0].mid)
    assert np.all(sums[0].rad <= bound)


# -- the kernel ---------------------------------------------------------------------------------

STRESS_MODELS = {
    # lambda with Re = -a 5e-13: |mu| - 1 about 1e-12 (a = 2/step)
    "near_circle": lambda a: [-a * 5e-13 + 1j * t for t in (0.7, -25.0, 160.0)] + [-0.5 + 3j],
    # lambda = a (2/delta - 1): mu = -1 + delta
    "near_minus_one": lambda a: [a * (2 / -1e-9 - 1), a * (2 / -1e-6 - 1) + 1e-3j, -1.0 + 0.5j],
    "clustered": lambda a: [-0.5 + 1j * (20 + 1e-8 * k) for k in range(5)] + [-2.0 + 1j],
    "repeated": lambda a: [-0.5 + 7j, -0.5 + 7j, -1.0 - 2j],
}


@pytest.mark.parametrize("force", [False, True])
@pytest.mark.parametrize("kind", list(STRESS_MODELS))
def test_stress_kernels_contain_the_ball_run(monkeypatch, kind, force):
    """The statement on stress models (rank one, A = Lambda - P P*): the disks contain the
    320-bit ball run, with the transfer the route chooses and with the quotient forced
    wherever it applies (repeated poles always take the correction: the quotient needs
    distinct poles).  Every case is certified: Re lambda_j < 0 and Q = P make A strictly
    dissipative (no resonance, G invertible) and every pole is at least about 1e-12 from
    every root, within the route's range (Lemmas 8-9)."""
    from s4cert.algorithms.s4 import midrad_quotient
    if force:
        monkeypatch.setattr(midrad_quotient, "QUOTIENT_RATIO", math.inf)
        monkeypatch.setattr(midrad_quotient, "ROOTS_PER_POLE", 0)
    step, L = 0.1, 128
    model = float_model(STRESS_MODELS[kind](2 / step), 11, q_is_p=True)
    res = filter_kernel_midrad(model, step, L)
    ref = filter_kernel(REF, model, step, L, cauchy="direct")
    assert ref.ok and res.ok, (res.status, res.info)
    if kind == "repeated":
        assert res.info["transfer"] == "correction"
    elif force:
        assert res.info["transfer"] == "quotient"
    for mm, r, b in zip(*res.value, ref.value):
        assert disk_holds_ball(complex(mm), float(r), b)


@given(st.integers(0, 2 ** 32 - 1), st.integers(1, 10))
def test_random_rank_one_kernels_contain_the_ball_run(seed, n):
    """Random rank-one float models (Re lambda in [-3, 0), |Im| up to 100): the disks of
    both transfers (the quotient forced wherever it applies, and the correction) contain
    the 320-bit ball run."""
    from s4cert.algorithms.s4 import midrad_quotient
    saved = midrad_quotient.QUOTIENT_RATIO, midrad_quotient.ROOTS_PER_POLE
    midrad_quotient.QUOTIENT_RATIO, midrad_quotient.ROOTS_PER_POLE = math.inf, 0
    try:
        _random_rank_one(seed, n)
    finally:
        midrad_quotient.QUOTIENT_RATIO, midrad_quotient.ROOTS_PER_POLE = saved


def _random_rank_one(seed: int, n: int) -> None:
    g = np.random.default_rng(seed)
    model = float_model(-g.uniform(0.01, 3, n) + 1j * g.uniform(-100, 100, n), seed)
    step, L = 0.05, 64
    res = filter_kernel_midrad(model, step, L)
    old = filter_kernel_midrad(model, step, L, quotient=False)
    ref = filter_kernel(REF, model, step, L, cauchy="direct")
    assert res.ok and ref.ok and res.info["transfer"] == "quotient" and old.info["transfer"] == "correction"
    for out in (res, old):
        for mm, r, b in zip(*out.value, ref.value):
            assert disk_holds_ball(complex(mm), float(r), b)


def test_legs_benchmark_radius_within_twenty_times_the_float64_error():
    """LegS N = 64, L = 16384, step 0.01 (the benchmark model): the route takes the quotient,
    its disks hold the double-double route's, and the largest radius is at most 20 times
    the real error of the float64 S4 kernel (measured against the double-double route)."""
    from s4cert.algorithms.s4.midrad_dd import filter_kernel_dd
    m = dplr_float64("legs", 64)
    Ct = list(np.array(m.C, dtype=complex))
    L = 16384
    res = filter_kernel_midrad(m, 0.01, L, c_tilde=Ct)
    dd = filter_kernel_dd(m, 0.01, L, c_tilde=Ct)
    assert res.ok and dd.ok and res.info["transfer"] == "quotient"
    hi, lo, rad_dd = dd.info["dd"]
    mid, rad = res.value
    assert np.all(np.abs(mid - (hi + lo)) + rad_dd <= rad * (1 - 1e-12))
    # the float64 S4 kernel: Cauchy matrix times the weights, Woodbury, ifft
    lam, P, Q, B = (np.array(x, dtype=complex) for x in (m.Lambda, m.P, m.Q, m.B))
    M, a = L, 2 / 0.01
    z = np.exp(-2j * np.pi * np.arange(M) / M)
    mu, gain = (a - lam) / (a + lam), -2 / (a + lam)
    cau = 1 / (z[:, None] - mu[None, :])
    S = lambda u, v: cau @ (gain * np.conj(u) * v)
    x, u_, v_, T = S(np.array(Ct), B), S(np.array(Ct), P[:, 0]), S(Q[:, 0], B), S(Q[:, 0], P[:, 0])
    beta = (1 + z) / 2
    H = x - beta * u_ * v_ / (1 + beta * T)
    H[M // 2] = 0.005 * np.vdot(np.array(Ct), B)
    err = float(np.max(np.abs(np.fft.ifft(H) - (hi + lo)) + rad_dd))
    assert float(rad.max()) <= 20 * err
