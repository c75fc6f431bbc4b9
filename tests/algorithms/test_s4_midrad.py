"""Tests of the filter on float64 disks (algorithms/s4_midrad.py, proofs/midrad_filter.md).

Every check is containment of an exact value, or of a much tighter ball enclosure, in
the float64 disks, decided exactly (floats are rationals)."""
import math
from fractions import Fraction

import numpy as np
import pytest
from flint import acb, arb, ctx, fmpq
from hypothesis import given, strategies as st

from s4cert.algorithms.cauchy.direct import cauchy_direct
from s4cert.algorithms.s4.dplr import DPLR
from s4cert.algorithms.models.hippo_float64 import dplr_float64
from s4cert.algorithms.s4.filter import filter_kernel
from s4cert.algorithms.s4.midrad import cauchy_direct_midrad, filter_kernel_midrad, idft_midrad
from s4cert.arith import BallField
from s4cert.arith.disk_convert import pairs_of_balls as dd_from_balls
from s4cert.arith.midrad import MR, RangeError, roots_of_unity, roots_of_unity_dd
from tests.helpers import dissipative_dplr, exact_kernel, pole_near_the_grid, random_dplr

REF = BallField(320)


def disk_holds_exact(mid: complex, rad: float, re: Fraction, im: Fraction) -> bool:
    """|re + i im - mid| <= rad, exactly."""
    dr, di = re - Fraction(mid.real), im - Fraction(mid.imag)
    return dr * dr + di * di <= Fraction(rad) ** 2


def disk_holds_ball(mid: complex, rad: float, b: acb) -> bool:
    """Every point of the ball b lies in the disk (certainly)."""
    with ctx.workprec(400):
        d = abs(b - acb(mid.real, mid.imag))
        return bool(d.upper() <= arb(rad))


def assert_kernel_contains_exact(res, exact):
    mid, rad = res.value
    assert len(mid) == len(exact)
    for m, r, (re, im) in zip(mid, rad, exact):
        assert disk_holds_exact(complex(m), float(r), re, im)


# -- the kernel against exact kernels ----------------------------------------------------------

@st.composite
def rational_problem(draw):
    N = draw(st.integers(1, 4))
    r = draw(st.integers(1, 2))
    step = draw(st.sampled_from([Fraction(1, 2), Fraction(1, 4), Fraction(1, 3)]))
    m = random_dplr(draw, N, r, step, draw(st.booleans()))
    L = draw(st.integers(1, 12))
    return m, step, L


@given(rational_problem())
def test_disks_contain_the_exact_kernel(problem):
    """Random Gaussian-rational models (r = 1, 2; some lambda_j = -2/step, the partition
    given exactly): the kernel's disks contain K_j = C* Abar^j Bbar computed exactly, or
    the route stops for a reason the exact problem has: a domain status of the 128-bit
    set-up (the exact status, proofs/ball_arithmetic.md), a pole within float64 reach of a
    root (Lemma 9 refuses only below about 5 R_0 <= 2^-100 here; checked as 2^-60), or an
    undecided pivot where W(z_k) is exactly singular."""
    from s4cert.certs.routing import exact_partition
    m, step, L = problem
    exc = exact_partition(m, step)
    res = filter_kernel_midrad(m, step, L, exceptional=exc)
    if not res.ok:
        assert refusal_is_justified(m, step, L, exc, res), (res.status, res.info)
        return
    assert_kernel_contains_exact(res, exact_kernel(m, step, L))


def refusal_is_justified(m: DPLR, step: Fraction, L: int, exc: list, res) -> bool:
    """Whether the float64 route's refusal of a Gaussian-rational model is one the exact
    problem calls for (see test_disks_contain_the_exact_kernel)."""
    from s4cert.algorithms.dft import next_power_of_two
    from s4cert.arith import ExactField
    if res.status.kind == "domain":
        return True
    if res.status != "undecided":
        return False
    M = next_power_of_two(L)
    if "pole" in res.info["reason"]:
        return pole_near_the_grid(m, step, M, exc)
    E = ExactField.for_length(2 * max(M, 8))
    return filter_kernel(E, m, step, L, exceptional=exc).status == "resonant-correction"


#: models of the random family's sizes that are dissipative (tests.helpers.dissipative_dplr):
#: no pole within 1/400 of the circle, G invertible, W(z_k) regular at every root
DISSIPATIVE_CASES = [(seed, 1 + seed % 4, 1 + seed % 2, [Fraction(1, 2), Fraction(1, 4), Fraction(1, 3)][seed % 3],
                      seed % 3 == 0, 1 + (5 * seed) % 12) for seed in range(12)]


def test_every_dissipative_model_is_certified():
    """The route certifies every dissipative model of the random family's sizes (each one
    well inside its range: nothing for float64 disks to leave undecided), and the disks
    contain the exact kernels: all 12 of 12."""
    from s4cert.certs.routing import exact_partition
    certified = 0
    for seed, N, r, step, exceptional, L in DISSIPATIVE_CASES:
        m = dissipative_dplr(seed, N, r, step, exceptional)
        res = filter_kernel_midrad(m, step, L, exceptional=exact_partition(m, step))
        if res.ok:
            assert_kernel_contains_exact(res, exact_kernel(m, step, L))
            certified += 1
    assert certified == len(DISSIPATIVE_CASES) == 12


def test_exceptional_poles_and_rank_two():
    """lambda_j = -2/step (the partition's constant term) with r = 2, against the exact kernel."""
    step = Fraction(1, 2)
    m = DPLR([(-4, 0), (-1, 2), (Fraction(-1, 3), -1)], [[1, 0], [Fraction(1, 2), 1], [0, (0, 1)]],
             [1, (1, 1), 2], [(0, 1), 1, -1], Q=[[Fraction(1, 4), 0], [0, 1], [1, 1]])
    res = filter_kernel_midrad(m, step, 9)
    assert res.ok and res.info["exceptional"] == [0] and res.info["poles"] == 2
    assert_kernel_contains_exact(res, exact_kernel(m, step, 9))
    assert max(res.value[1]) < 1e-12


def test_supplied_c_tilde_is_used():
    """With C~ supplied the kernel is the filter of that C~ (checked against a ball run)."""
    m = DPLR([-1.0, -2.5], [0.5, 0.25], [1, 1], [1, -1])
    ct = [0.5 + 0.25j, -1.0]
    res = filter_kernel_midrad(m, 0.25, 16, c_tilde=ct)
    ref = filter_kernel(REF, m, 0.25, 16, c_tilde=ct, cauchy="direct")
    assert res.ok and ref.ok
    for mm, r, b in zip(*res.value, ref.value):
        assert disk_holds_ball(complex(mm), float(r), b)


@pytest.mark.parametrize("step", [1e-4, 1e-3, 1e-2, 1e-1])
@pytest.mark.parametrize("N", [8, 32])
def test_legs_kernels_contain_high_precision_runs(N, step):
    """LegS float64 models at every step: the disks contain the 320-bit direct-sum run,
    and are tight (radius far below 1e-9 of max |K|)."""
    m = dplr_float64("legs", N)
    L = 256
    res = filter_kernel_midrad(m, step, L, c_tilde=m.C)
    ref = filter_kernel(REF, m, step, L, c_tilde=m.C, cauchy="direct")
    assert res.ok and ref.ok
    mid, rad = res.value
    for mm, r, b in zip(mid, rad, ref.value):
        assert disk_holds_ball(complex(mm), float(r), b)
    assert float(rad.max()) < 1e-9 * float(np.abs(mid).max())


def test_pole_next_to_minus_one():
    """A pole mu about 1e-9 outside z = -1 (mu = -1 + delta for lambda = a (2/delta - 1)):
    containment against the 320-bit run."""
    step = 0.5
    a = 2 / step
    lam = [a * (2 / -1e-9 - 1), -1.0 + 0.5j]
    m = DPLR(lam, [0.25, 0.5], [1, 1j], [1, 2])
    res = filter_kernel_midrad(m, step, 64)
    ref = filter_kernel(REF, m, step, 64, cauchy="direct")
    assert res.ok and ref.ok
    for mm, r, b in zip(*res.value, ref.value):
        assert disk_holds_ball(complex(mm), float(r), b)


def test_info_bounds_hold_against_the_ball_constants():
    """b, w (upper) and d (lower) of the float64 route bound the 320-bit ball values."""
    from s4cert.certs.constants import filter_constants, sum_key as _key
    m = dplr_float64("legs", 8)
    res = filter_kernel_midrad(m, 0.1, 64, c_tilde=m.C)
    ref = filter_kernel(REF, m, 0.1, 64, c_tilde=m.C, cauchy="direct", keep_blocks=True)
    c = filter_constants(REF, ref.info, m.r)
    info = res.info
    # the ball constants are themselves upper (b, w) / lower (d) bounds, tight at 320 bits
    assert info["b"] >= c["b"] * (1 - 1e-12) and info["w"] >= c["w"] * (1 - 1e-12)
    assert info["d"] <= c["d"] * (1 + 1e-12)
    for key, v in info["A_wt"].items():
        assert v >= c["A_wt"][_key(key)] * (1 - 1e-12)


# -- the Cauchy sums and the inverse transform ------------------------------------------------

@st.composite
def poles_and_weights(draw):
    n = draw(st.integers(1, 40))
    poles, weights = [], []
    for _ in range(n):
        kind = draw(st.sampled_from(["near_circle", "inside", "outside", "near_minus_one"]))
        phi = draw(st.floats(0, 2 * math.pi))
        if kind == "near_circle":
            r = 1 + draw(st.sampled_from([-1, 1])) * draw(st.sampled_from([1e-9, 1e-6, 1e-3]))
        elif kind == "inside":
            r = draw(st.floats(0, 0.95))
        elif kind == "outside":
            r = draw(st.floats(1.05, 50))
        else:
            r, phi = 1 + draw(st.sampled_from([1e-9, -1e-9, 1e-5])), math.pi + draw(st.sampled_from([0.0, 1e-7, -1e-4]))
        poles.append(complex(r * math.cos(phi), r * math.sin(phi)))
        weights.append(complex(draw(st.floats(-4, 4)), draw(st.floats(-4, 4))))
    M = draw(st.sampled_from([1, 2, 8, 64, 256]))
    return poles, weights, M


@given(poles_and_weights())
def test_cauchy_disks_contain_the_exact_sums(problem):
    """Direct sums of a_j/(z_k - mu_j) over random poles (next to the circle, next to -1,
    inside, outside): the disks contain the 320-bit enclosures; the separation bound
    is below every |z_k - mu_j|.  Every example is certified: each pole's modulus differs
    from 1 by at least about 1e-9, so |z_k - mu_j| >= 1e-9 / 2, far above the 4 R_0 (R_0 of
    order u^2 here, proofs/midrad_filter.md, Lemmas 8-9) below which the route refuses."""
    poles, weights, M = problem
    pb = [acb(p.real, p.imag) for p in poles]
    wd = MR.exact(np.array(weights))
    sums, sep = cauchy_direct_midrad(roots_of_unity_dd(M), dd_from_balls(pb), [wd])
    ref = cauchy_direct(REF, [REF.from_number(p) for p in poles], [REF.from_number(w) for w in weights], M)
    assert ref.ok
    S = sums[0]
    for k in range(M):
        assert disk_holds_ball(complex(S.mid[k]), float(S.rad[k]), ref.value[k])
    with ctx.workprec(200):
        for k in range(M):
            z = REF.root_of_unity(M, k)
            for p in pb:
                assert abs(z - p) >= arb(sep)


def test_cauchy_refuses_a_pole_on_the_grid():
    """mu = 1 = z_0: no disk separates them; RangeError (the caller reports undecided)."""
    with pytest.raises(RangeError):
        cauchy_direct_midrad(roots_of_unity_dd(8), dd_from_balls([acb(1)]), [MR.exact(np.ones(1))])


def test_cauchy_weight_radii_are_carried():
    """Weights with radii: every sum of any weights in the disks lies in the result (the
    extreme points a_j + rad_j e^{i t} checked exactly at the 320-bit level)."""
    poles = [0.5 + 0.1j, -0.3j, 1.5]
    w = MR.from_parts(np.array([1 + 1j, -2.0, 0.5j]), np.array([1e-3, 0.0, 2e-2]))
    sums, _ = cauchy_direct_midrad(roots_of_unity_dd(16), dd_from_balls([acb(p.real, p.imag) for p in poles]), [w])
    for shift in (1, -1, 1j, -1j):  # extreme points of the weight disks, exactly
        pts = [REF.add(REF.from_number(complex(w.mid[j])), REF.from_number(complex(shift * w.rad[j] / 1.0000001)))
               for j in range(3)]
        ref = cauchy_direct(REF, [REF.from_number(p) for p in poles], pts, 16)
        for k in range(16):
            assert disk_holds_ball(complex(sums[0].mid[k]), float(sums[0].rad[k]), ref.value[k])


@given(st.sampled_from([1, 2, 4, 32, 512]), st.integers(0, 2 ** 32 - 1), st.sampled_from([0.0, 1e-12, 1e-3]))
def test_inverse_dft_bound(M, seed, radius):
    """(1/M) sum_k H_k conj(z_k)^j: the midpoints and the one radius R contain the
    exact inverse transform of every H in the input disks (checked for the midpoints
    and for the midpoints shifted by the radii)."""
    g = np.random.default_rng(seed)
    h = (g.standard_normal(M) + 1j * g.standard_normal(M)) * 2.0 ** g.integers(-20, 20, M)
    H = MR.from_parts(h, np.full(M, radius))
    mid, R = idft_midrad(H, roots_of_unity(M))
    for shift in (0.0, radius / 1.0000001):  # the shifted points exactly, as 320-bit balls
        pts = [REF.add(REF.from_number(complex(x)), REF.from_number(shift)) for x in h]
        ref = REF.primitive("dft")(pts, True)
        for j in range(M):
            assert disk_holds_ball(complex(mid[j]), R, ref[j])


@given(st.sampled_from([2, 8, 64, 1024]), st.integers(0, 2 ** 32 - 1), st.sampled_from([0.0, 1e-9]))
def test_inverse_dft_bound_per_entry(M, seed, radius):
    """Lemma 11 per entry: each entry's bound R_j contains the 320-bit transform of the
    midpoints and of the midpoints shifted by the radii; the row's single bound is the
    largest of them."""
    g = np.random.default_rng(seed)
    h = (g.standard_normal(M) + 1j * g.standard_normal(M)) * 2.0 ** g.integers(-30, 30, M)
    H = MR.from_parts(h, np.full(M, radius))
    mid, R = idft_midrad(H, roots_of_unity(M), per_entry=True)
    _, R1 = idft_midrad(H, roots_of_unity(M))
    assert R.shape == (M,) and np.all(R <= R1) and float(np.max(R)) == R1
    for shift in (0.0, radius / 1.0000001):
        pts = [REF.add(REF.from_number(complex(x)), REF.from_number(shift)) for x in h]
        ref = REF.primitive("dft")(pts, True)
        for j in range(M):
            assert disk_holds_ball(complex(mid[j]), float(R[j]), ref[j])


def test_undecided_when_a_ball_input_is_too_wide():
    """A ball entry of Lambda too wide for a double-float pole: the route stops undecided
    (a caller then runs ball arithmetic)."""
    with ctx.workprec(64):
        wide = acb(-1, 0) + acb(arb(0, 1e-10))
    m = DPLR([wide, -2.0], [0.5, 0.25], [1, 1], [1, -1])
    res = filter_kernel_midrad(m, 0.5, 8)
    assert res.status == "undecided" and "float64" in res.info["reason"]


def test_far_poles_double_float_radius():
    """Double-float pairs of poles far from the circle (|mu| up to 2^17): the returned
    radius bounds |mu - hi - lo| for 128-bit balls, and the Cauchy disks contain the
    320-bit sums."""
    with ctx.workprec(128):
        balls = [acb(arb(fmpq(10 ** 5 + j, 3)), arb(fmpq(-7 * 2 ** 16 + j, 11))) for j in range(8)]
        balls += [acb(arb(fmpq(2 ** 17, 3)), 0), acb(arb(1) / 3, arb(2) / 7)]
    hi, lo, R = dd_from_balls(balls)
    with ctx.workprec(400):
        for b, h, l in zip(balls, hi, lo):
            d = b - acb(h.real, h.imag) - acb(l.real, l.imag)
            assert abs(d) <= arb(R)
    w = MR.exact(np.linspace(-1, 1, len(balls)) + 0.5j)
    sums, _ = cauchy_direct_midrad(roots_of_unity_dd(32), (hi, lo, R), [w])
    ref = cauchy_direct(REF, balls, [REF.from_number(complex(x)) for x in w.mid], 32)
    for k in range(32):
        assert disk_holds_ball(complex(sums[0].mid[k]), float(sums[0].rad[k]), ref.value[k])


def _legs_numpy(N: int) -> DPLR:
    """The LegS DPLR model as S4 codes build it (numpy only): A = -(tril + diag(n+1)),
    A + P P^T = -I/2 + skew, diagonalized by eigh; C random."""
    n = np.arange(N)
    r = np.sqrt(2 * n + 1.0)
    A = -(np.tril(np.outer(r, r), -1) + np.diag(n + 1.0))
    P = np.sqrt(n + 0.5)
    S = A + np.outer(P, P) + 0.5 * np.eye(N)
    w, V = np.linalg.eigh(-1j * S)
    Vs = V.conj().T
    C = np.random.default_rng(N).standard_normal(N)
    return DPLR([complex(-0.5, x) for x in w], (Vs @ P).tolist(), (Vs @ r).tolist(), (Vs @ C).tolist())


def test_legs_1024_contains_the_high_precision_run():
    """LegS N = 1024 (256 pole groups, tree depth 8) at step 1e-3, a short kernel: the
    disks contain the 320-bit direct-sum run."""
    m = _legs_numpy(1024)
    res = filter_kernel_midrad(m, 1e-3, 16, c_tilde=m.C)
    ref = filter_kernel(REF, m, 1e-3, 16, c_tilde=m.C, cauchy="direct")
    assert res.ok and ref.ok
    for mm, r, b in zip(*res.value, ref.value):
        assert disk_holds_ball(complex(mm), float(r), b)


@pytest.mark.parametrize("gap", [1e-6, 1e-9, 1e-12])
def test_radius_stays_relative_next_to_a_root(gap):
    """A pole at distance ~gap from the root z_1: the sum there is ~1/gap, and its radius
    stays within 1e-13 of it (double-float differences: O(u |d|) per term, not the
    O(u / |d|^2) a float64 difference would give, which here is ~1e-16/gap^2)."""
    M = 64
    z1 = complex(math.cos(2 * math.pi / M), -math.sin(2 * math.pi / M))
    mu = z1 * (1 + gap)
    pb = [acb(mu.real, mu.imag)]
    sums, _ = cauchy_direct_midrad(roots_of_unity_dd(M), dd_from_balls(pb), [MR.exact(np.ones(1))])
    S = sums[0]
    assert abs(S.mid[1]) > 0.5 / gap
    assert S.rad[1] <= 1e-13 * abs(S.mid[1])
    ref = cauchy_direct(REF, [REF.from_number(mu)], [REF.one()], M)
    assert disk_holds_ball(complex(S.mid[1]), float(S.rad[1]), ref.value[1])


@pytest.mark.parametrize("nearest", [True, False])
def test_disks_of_balls_contain_every_point(nearest, monkeypatch):
    """``_disks``: the float64 disk of each ball (midpoints of every size, radii from 0 to
    wide, one below the normal range) contains the ball's corners, decided at 400 bits, with
    the midpoints' rounding taken as to nearest (as checked) and as only faithful."""
    import s4cert.algorithms.s4.midrad as MD
    from s4cert.algorithms.s4.midrad import _disks
    assert MD._midpoints_round_to_nearest()          # python-flint converts to nearest
    monkeypatch.setattr(MD, "_midpoints_round_to_nearest", lambda: nearest)
    rng = np.random.default_rng(5)
    F = BallField(128)
    balls = []
    with ctx.workprec(128):
        for k in range(60):
            m = complex(*(rng.standard_normal(2) * 10.0 ** rng.integers(-110, 110, 2)))   # MR keeps |x| <= 2^400
            r = [0.0, 1e-40, 1e-3, 2.0 ** -1070][k % 4]
            balls.append(acb(arb(m.real, r * abs(m.real)), arb(m.imag, r)) / 3)
        balls.append(acb(arb(0, 2.0 ** -1074), arb(1) / 7))
    d = _disks(F, balls)
    with ctx.workprec(400):
        for b, m, r in zip(balls, d.mid, d.rad):
            for cr in (b.real.mid() + b.real.rad(), b.real.mid() - b.real.rad()):
                for ci in (b.imag.mid() + b.imag.rad(), b.imag.mid() - b.imag.rad()):
                    assert abs(acb(cr, ci) - acb(float(m.real), float(m.imag))).upper() <= arb(float(r))
