"""Tests of the hierarchical-arc Cauchy sums (algorithms/cauchy/arcs/, proofs/fast_cauchy.md)."""
import cmath
import functools
import math
from fractions import Fraction

import numpy as np
import pytest
from flint import acb, arb, ctx, fmpq
from hypothesis import assume, given, settings, strategies as st

from s4cert.algorithms.cauchy.arcs.api import cauchy_fast, cauchy_fast_many
from s4cert.algorithms.cauchy.arcs.bounds import float64_allowance
from s4cert.algorithms.cauchy.arcs.geometry import ARC, INNER, NEAR, OUTER, ArcTree, expansion_orders
from s4cert.algorithms.cauchy.direct import cauchy_direct
from s4cert.arith import BallField, Counting, ExactField, Float64Field, Tracing
from tests.helpers import gaussian

REF = BallField(320)  # the independent reference: direct sums at a much higher precision
STEPS = [1e-4, 1e-3, 1e-2, 1e-1]


# -- problems -------------------------------------------------------------------------------

@st.composite
def pole(draw) -> complex:
    """A pole (an exact binary complex) from one of the regimes the method distinguishes."""
    kind = draw(st.sampled_from(["inner", "outer", "circle", "near_circle", "near_minus_one", "far"]))
    phi = draw(st.floats(0, 2 * math.pi))
    if kind == "inner":
        r = draw(st.floats(0, 0.49))
    elif kind == "outer":
        r = draw(st.floats(2.05, 6))
    elif kind == "circle":
        r = draw(st.floats(0.55, 1.9))
    elif kind == "near_circle":
        r = 1 + draw(st.sampled_from([-1, 1])) * draw(st.sampled_from([1e-9, 1e-7, 1e-4, 1e-2]))
    elif kind == "far":
        r = draw(st.floats(20, 1e4))
    else:  # next to z = -1, off the grid
        d = draw(st.sampled_from([1e-9, 1e-6, 1e-3]))
        return complex(-1 - draw(st.sampled_from([-1, 1])) * d, draw(st.sampled_from([-1, 1])) * d * 0.75)
    return r * cmath.exp(1j * phi)


def weights_strategy(n: int):
    """Weights 0 or of modulus in [1e-200, 10] (the float bounds are rounded upward, so
    below the normal range they cannot follow eps S_abs(k))."""
    w = st.one_of(st.just(0j), st.complex_numbers(min_magnitude=1e-200, max_magnitude=10,
                                                   allow_nan=False, allow_infinity=False))
    return st.lists(w, min_size=n, max_size=n)


def reference(poles: list, weights: list, M: int, omega_power: int = 1) -> list:
    """Direct sums at 320 bits of the given exact numbers (balls or floats)."""
    omega = None if omega_power == 1 else REF.root_of_unity(M, omega_power)
    r = cauchy_direct(REF, [REF.from_number(x) for x in poles], [REF.from_number(x) for x in weights], M, omega)
    assert r.ok
    return r.value


def abs_sums(poles: list, weights: list, M: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Upper bounds of S_abs(k), S2(k), and a lower bound of min |z_k - mu_j|, in arb."""
    S1, S2, dmin = [], [], math.inf
    with ctx.workprec(128):
        mus = [acb(x) for x in poles]
        aa = [abs(acb(a)) for a in weights]
        for k in range(M):
            z = acb.exp_pi_i(acb(fmpq(-2 * k, M)))
            s1 = s2 = arb(0)
            for mu, a in zip(mus, aa):
                d = abs(z - mu)
                s1 += a / d
                s2 += a / (d * d)
                dmin = min(dmin, float(d.lower()))
            S1.append(float(s1.upper()))
            S2.append(float(s2.upper()))
    return np.array(S1), np.array(S2), dmin


def s4_poles(F, lam: list, step: float) -> list:
    """mu_j = (a - lambda_j)/(a + lambda_j), a = 2/step, formed in F from exact lambda_j."""
    a = F.div(F.const(2), F.from_number(step))
    out = []
    for l in lam:
        x = F.from_number(l)
        out.append(F.div(F.sub(a, x), F.add(a, x)))
    return out


def legs_like(N: int) -> list:
    return [complex(-0.5, math.pi * j) for j in range(N)]


@functools.lru_cache(maxsize=None)
def legs_eigenvalues(N: int) -> tuple:
    from s4cert.algorithms.models.hippo_dplr import dplr
    return tuple(complex(l.mid()) for l in dplr("legs", N).Lambda)


def check_encloses(values: list, ref: list) -> None:
    assert len(values) == len(ref)
    for k, (v, r) in enumerate(zip(values, ref)):
        assert v.contains(r), (k, v, r)


def ratio_factor(theta: float, rho0: float) -> float:
    """E_k <= this * eps * S_abs(k) (proof, section 3)."""
    return max((1 + theta) / (1 - theta), (1 + rho0) / (1 - rho0))


# -- containment (BallField) ----------------------------------------------------------------------

@given(M=st.sampled_from([1, 2, 4, 16, 64, 256]), eps=st.sampled_from([1e-3, 1e-8, 1e-13]),
       theta=st.sampled_from([0.3, 0.4, 0.5]), prec=st.sampled_from([64, 100]), data=st.data())
def test_ball_encloses_direct_sums(M, eps, theta, prec, data):
    """Random poles in every regime: the balls contain the 320-bit direct sums, and the
    truncation bound added to them obeys E_k <= c eps S_abs(k)."""
    poles = data.draw(st.lists(pole(), min_size=1, max_size=24))
    weights = data.draw(weights_strategy(len(poles)))
    B = BallField(prec)
    r = cauchy_fast(B, poles, weights, M, eps, theta=theta)
    assert r.ok and r.info["certified"] and r.info["error_added"]
    check_encloses(r.value, reference(poles, weights, M))
    S1, _, _ = abs_sums(poles, weights, M)
    assert np.all(np.array(r.info["bound"]) <= ratio_factor(theta, 0.5) * eps * S1 * (1 + 1e-9))


@settings(max_examples=10)
@given(M=st.sampled_from([16, 256]), data=st.data())
def test_ball_work_is_carried_at_the_field_precision(M, data):
    """At 300 bits with eps = 1e-60 every radius stays below 1e-40 (S_abs(k) + S2(k)): the
    truncation bound is ~1e-60 S_abs(k) and the rounding ~2^-300; any step done at
    flint's default 53 bits would leave radii near 1e-16 |y_k|."""
    poles = data.draw(st.lists(pole(), min_size=1, max_size=10))
    weights = data.draw(weights_strategy(len(poles)))
    B = BallField(300)
    r = cauchy_fast(B, poles, weights, M, 1e-60)
    assert r.ok
    S1, S2, _ = abs_sums(poles, weights, M)
    assert all(B.radius(v) <= 1e-40 * (a + b) for v, a, b in zip(r.value, S1, S2))


@settings(max_examples=8)
@given(N=st.sampled_from([16, 64, 256]), step=st.sampled_from(STEPS), M=st.sampled_from([64, 256, 512]),
       eps=st.sampled_from([1e-6, 1e-12]), data=st.data())
def test_ball_encloses_s4_like(N, step, M, eps, data):
    """LegS-like poles mu_j = (a - lambda_j)/(a + lambda_j), lambda_j = -1/2 + i pi j, formed
    as balls: the result contains the direct sums of the exact poles."""
    lam = legs_like(N)
    weights = data.draw(st.lists(gaussian(6, 4), min_size=N, max_size=N))
    B = BallField(100)
    r = cauchy_fast(B, s4_poles(B, lam, step), weights, M, eps)
    assert r.ok
    check_encloses(r.value, reference(s4_poles(REF, lam, step), weights, M))


@pytest.mark.parametrize("step", [1e-4, 1e-1])
def test_ball_encloses_s4_like_n_1024(step):
    """N = 1024 LegS-like poles (the issue's largest size) on a short grid."""
    lam = legs_like(1024)
    weights = [(1, (j % 7) - 3) for j in range(1024)]
    B = BallField(100)
    r = cauchy_fast(B, s4_poles(B, lam, step), weights, 32, 1e-10)
    assert r.ok
    check_encloses(r.value, reference(s4_poles(REF, lam, step), weights, 32))


@pytest.mark.parametrize("step", STEPS)
def test_ball_encloses_legs_eigenvalue_poles(step):
    """Poles from the LegS N = 64 eigenvalues (midpoints of dplr("legs", 64))."""
    lam = list(legs_eigenvalues(64))
    weights = [complex(1, (-1) ** j) for j in range(64)]
    B, M = BallField(90), 512
    r = cauchy_fast(B, s4_poles(B, lam, step), weights, M, 1e-10)
    assert r.ok
    check_encloses(r.value, reference(s4_poles(REF, lam, step), weights, M))


@settings(max_examples=10)
@given(M=st.sampled_from([64, 512]), data=st.data())
def test_ball_encloses_poles_on_the_edge(M, data):
    """Poles within 1e-9 of the circle (between nodes and next to them) and next to z = -1."""
    n = data.draw(st.integers(1, 12))
    poles = []
    for _ in range(n):
        k = data.draw(st.integers(0, M - 1))
        frac = data.draw(st.sampled_from([0.0, 1e-6, 0.5, 0.999]))
        r = 1 + data.draw(st.sampled_from([-1e-9, 1e-9, 3e-10]))
        poles.append(r * cmath.exp(-2j * math.pi * (k + frac) / M))
    poles.append(complex(-1 - 1e-9, 2e-9))
    poles.append(complex(-1 + 1e-9, -1e-12))
    weights = data.draw(weights_strategy(len(poles)))
    B = BallField(100)
    r = cauchy_fast(B, poles, weights, M, 1e-12)
    assert r.ok
    check_encloses(r.value, reference(poles, weights, M))


def exact_problem(data, M: int) -> tuple[ExactField, list, list]:
    E = ExactField(2 * M)
    n = data.draw(st.integers(1, 6))
    poles = [E.from_number(x) for x in data.draw(st.lists(gaussian(12, 5), min_size=n, max_size=n))]
    weights = [E.from_number(x) for x in data.draw(st.lists(gaussian(6, 3), min_size=n, max_size=n))]
    return E, poles, weights


@settings(max_examples=12)
@given(leaf=st.sampled_from([1, 2, 4]), eps=st.sampled_from([1e-1, 1e-2]), data=st.data())
def test_exact_truncation_within_bounds(leaf, eps, data):
    """ExactField (no rounding at all): the truncated sums differ from the exact sums by at
    most E_k and by at most eps S_abs(k); BallField encloses the exact sums."""
    M = 16
    E, poles, weights = exact_problem(data, M)
    want = cauchy_direct(E, poles, weights, M)
    got = cauchy_fast(E, poles, weights, M, eps, leaf=leaf)
    assert got.status == want.status
    if not want.ok:
        return
    S1, _, _ = abs_sums([E.to_complex(x) for x in poles], [E.to_complex(x) for x in weights], M)
    for k in range(M):
        err = abs(E.to_acb(E.sub(got.value[k], want.value[k]), 256))
        assert err <= arb(got.info["bound"][k])
        assert err <= arb(eps) * arb(S1[k]) * arb(1 + 1e-9)  # S1 upper bound of a float-rounded S_abs
    B = BallField(80)
    ball = cauchy_fast(B, [E.to_acb(x, 100) for x in poles], [E.to_acb(x, 100) for x in weights], M, eps,
                       leaf=leaf)
    assert ball.ok
    for v, x in zip(ball.value, want.value):
        assert v.contains(E.to_acb(x, 400))


def test_exact_truncation_deeper_tree():
    """A fixed exact case with two arc levels and all three mechanisms in use."""
    M = 32
    E = ExactField(2 * M)
    pts = [((13, 10), (1, 7)), ((-2, 3), (9, 10)), ((1, 1000), (-1001, 1000)), ((-999, 1000), (1, 50)),
           ((3, 1), (-1, 2)), ((1, 5), (0, 1)), ((0, 1), (-11, 10))]
    poles = [E.from_number((Fraction(*a), Fraction(*b))) for a, b in pts]
    weights = [E.from_number((Fraction(j + 1), Fraction(-j, 3))) for j in range(len(pts))]
    got = cauchy_fast(E, poles, weights, M, 1e-2, leaf=2, trace_pairs=True)
    want = cauchy_direct(E, poles, weights, M)
    codes = set(np.unique(got.info["trace"]["mechanism"]).tolist())
    assert {INNER, OUTER, NEAR} <= codes and any(c >= ARC for c in codes)
    for k in range(M):
        assert abs(E.to_acb(E.sub(got.value[k], want.value[k]), 256)) <= arb(got.info["bound"][k])


# -- float64: E_k plus the proof's rounding allowance ------------------------------------------------

def check_float_run(poles: list, weights: list, M: int, eps: float, theta: float = 0.4) -> None:
    r = cauchy_fast(Float64Field(), poles, weights, M, eps, theta=theta)
    assert r.ok and not r.info["certified"]
    S1, S2, dmin = abs_sums(poles, weights, M)
    allow = float64_allowance(r.info, len(poles), M, S1, S2, dmin)
    assert np.all(np.isfinite(allow))
    ref = reference(poles, weights, M)
    with ctx.workprec(128):
        for k in range(M):
            err = abs(acb(r.value[k]) - ref[k])
            assert err <= arb(r.info["bound"][k]) + arb(allow[k]), (k, err, r.info["bound"][k], allow[k])


@settings(max_examples=15)
@given(M=st.sampled_from([4, 64, 256]), eps=st.sampled_from([1e-4, 1e-8, 1e-12, 1e-15]),
       theta=st.sampled_from([0.3, 0.4]), data=st.data())
def test_float64_error_within_bound_and_allowance(M, eps, theta, data):
    poles = data.draw(st.lists(pole(), min_size=1, max_size=20))
    # the allowance is finite only away from the nodes (the proof's smallness condition)
    assume(np.abs(np.exp(-2j * np.pi * np.arange(M) / M)[:, None] - np.array(poles)[None, :]).min() > 1e-9)
    weights = data.draw(weights_strategy(len(poles)))
    check_float_run(poles, weights, M, eps, theta)


@pytest.mark.parametrize("step", STEPS)
def test_float64_s4_like_within_bound_and_allowance(step):
    N, M = 128, 256
    a = 2 / step
    poles = [(a - l) / (a + l) for l in legs_like(N)]
    weights = [complex(1, j % 3) for j in range(N)]
    check_float_run(poles, weights, M, 1e-12)


# -- statuses -------------------------------------------------------------------------------------

@settings(max_examples=15)
@given(M=st.sampled_from([4, 16]), data=st.data())
def test_collision_status_agrees_with_direct(M, data):
    """A pole on the grid: 'collision' with the same roots as cauchy_direct, in ExactField,
    BallField (exact quarter roots) and Float64Field (the field's own node values)."""
    E, poles, weights = exact_problem(data, M)
    ks = data.draw(st.lists(st.integers(0, M - 1), min_size=1, max_size=3))
    P = poles + [E.root_of_unity(M, k) for k in ks]
    A = weights + [E.one()] * len(ks)
    for F, conv in [(E, lambda x: x), (Float64Field(), E.to_complex)]:
        if F is not E:  # float poles on the float nodes
            P2 = [conv(x) for x in poles] + [F.root_of_unity(M, k) for k in ks]
        else:
            P2 = P
        A2 = [conv(x) for x in A]
        got, want = cauchy_fast(F, P2, A2, M, 1e-6), cauchy_direct(F, [F.from_number(x) for x in P2],
                                                                   [F.from_number(x) for x in A2], M)
        assert got.status == want.status == "collision"
        assert got.info["roots"] == want.info["roots"] and set(ks) <= set(got.info["roots"])
    B = BallField(80)
    quarter = [k for k in ks if (4 * k) % M == 0]
    if quarter:
        Pb = [E.to_acb(x, 100) for x in poles] + [B.root_of_unity(M, k) for k in quarter]
        Ab = [E.to_acb(x, 100) for x in weights] + [acb(1)] * len(quarter)
        got, want = cauchy_fast(B, Pb, Ab, M, 1e-6), cauchy_direct(B, Pb, Ab, M)
        assert got.status == want.status == "collision" and got.info["roots"] == want.info["roots"]


def test_undecided_when_a_pole_ball_meets_a_node():
    B = BallField(80)
    fuzzy = acb(arb(0, 1e-30), arb(1, 1e-30))  # contains i = z_3 for M = 4, not exactly
    got = cauchy_fast(B, [acb(3), fuzzy], [acb(1), acb(1)], 4, 1e-6)
    assert got.status == cauchy_direct(B, [acb(3), fuzzy], [acb(1), acb(1)], 4).status == "undecided"


def test_omega_reindexing_and_collision_roots():
    M = 16
    E = ExactField(2 * M)
    poles = [E.from_number(x) for x in [(Fraction(5, 4), Fraction(1, 3)), (Fraction(-1, 3), 0), (0, Fraction(7, 6))]]
    weights = [E.from_number(x) for x in [1, (2, -1), (0, 3)]]
    for s in (1, 3, 7, 13):
        om = E.root_of_unity(M, s)
        got = cauchy_fast(E, poles, weights, M, 1e-2, omega=om, leaf=2)
        want = cauchy_direct(E, poles, weights, M, om)
        for x, y, e in zip(got.value, want.value, got.info["bound"]):
            assert abs(E.to_acb(E.sub(x, y), 200)) <= arb(e)
        B = BallField(90)
        ball = cauchy_fast(B, [E.to_acb(x, 100) for x in poles], [E.to_acb(x, 100) for x in weights], M, 1e-8,
                           omega=B.root_of_unity(M, s))
        assert all(v.contains(E.to_acb(y, 300)) for v, y in zip(ball.value, want.value))
        on_grid = poles + [E.root_of_unity(M, 5)]
        got = cauchy_fast(E, on_grid, weights + [E.one()], M, 1e-2, omega=om)
        assert got.info["roots"] == cauchy_direct(E, on_grid, weights + [E.one()], M, om).info["roots"]


# -- the exactly-once covering ---------------------------------------------------------------------

@given(M=st.sampled_from([1, 4, 32, 128]), eps=st.sampled_from([1e-2, 1e-6, 1e-12]),
       theta=st.sampled_from([0.25, 0.4, 0.6]), leaf=st.sampled_from([None, 1, 4]), data=st.data())
def test_pairs_covered_exactly_once(M, eps, theta, leaf, data):
    """Every (pole, node) pair is handled by exactly one mechanism; the records agree
    between BallField and Counting over it (the wrapper passes the enclosures through);
    every expansion taken in BallField satisfies the ratio bound (checked independently
    at 200 bits), root-zone poles lie in their discs, and float64 makes the same kind of
    partition."""
    if leaf is not None and leaf > M:
        leaf = M
    poles = data.draw(st.lists(pole(), min_size=1, max_size=20))
    weights = [1.0] * len(poles)
    B = BallField(64)
    runs = [cauchy_fast(F, poles, weights, M, eps, theta=theta, leaf=leaf, trace_pairs=True)
            for F in [B, Counting(BallField(64)), Float64Field()]]
    for r in runs:
        assert r.ok
        assert np.all(r.info["trace"]["count"] == 1)
    t0, t1 = runs[0].info["trace"], runs[1].info["trace"]
    assert np.array_equal(t0["mechanism"], t1["mechanism"]) and sorted(t0["arcs"]) == sorted(t1["arcs"])
    tree = ArcTree(M, runs[0].info["leaf"])
    with ctx.workprec(200):
        for j, l, b in t0["arcs"]:
            s = tree.size(l)
            c = acb.exp_pi_i(acb(fmpq(-(2 * b * s + s - 1), M)))
            R = 2 * arb.sin_pi(arb(fmpq(s - 1, 2 * M)))
            assert R <= arb(theta) * abs(acb(poles[j]) - c)
            for k in range(b * s, (b + 1) * s):  # R really is the largest node distance
                assert abs(acb.exp_pi_i(acb(fmpq(-2 * k, M))) - c) <= R + arb(2.0 ** -150)
        mech = t0["mechanism"]
        for j, mu in enumerate(poles):
            if mech[j, 0] == INNER:
                assert abs(acb(mu)) <= arb(0.5)
            elif mech[j, 0] == OUTER:
                assert abs(acb(mu)) >= arb(2)
            if np.any(mech[j] == NEAR):  # near pairs only where no admissible arc was found
                assert set(np.unique(mech[j]).tolist()) - {NEAR} <= {ARC + l for l in range(tree.L + 1)}


# -- counts ---------------------------------------------------------------------------------------------

def counted(f, n: int, M: int, eps: float) -> tuple[dict, dict, int]:
    C = Counting(Float64Field())
    a = 2 / 1e-2
    poles = [C.from_number((a - l) / (a + l)) for l in legs_like(n)]
    weights = [C.from_number(complex(1, j % 3)) for j in range(n)]
    C.reset()
    r = f(C, poles, weights, M, eps) if f is cauchy_fast else f(C, poles, weights, M)
    assert r.ok
    return C.summary(), r.info, C.peak_words - 2 * n


def operation_bound(info: dict, M: int) -> float:
    """The operation accounting of the phases (one weight set; products are classical:
    an entry of an (a x g)(g x b) product costs g multiplications and g - 1 additions).
    Per expanded pair, with ``h = a q + t``, ``q = ceil(sqrt(p))``, ``r = ceil(p / q)``: a
    subtraction, a division, w, the q - 1 powers w^2 .. w^q, the weight times 1/d and its
    r - 1 multiples by w^(aq), and its share of the block's product (at most 2 r q), plus
    per block of pairs m_A and the p additions of the coefficients the arc holds; per
    child of a shift at most p(2p - 1) (the column blocks skip part of the zeros); two
    shift matrices per level, each at most p^2 + 2p + 3 with alpha and beta; leaf
    variables (4 each) and their powers, (p + 2)s; evaluation s(2p - 1) per leaf; per
    near pair a subtraction, a zero test and a reciprocal per node and its row of the
    leaf's product, plus the leaf's values (at most 6s); per root pole the powers, its
    products and accumulation (4 p0), and one radix-two DFT of 1.5 M log2 M."""
    p, p0, s = info["p"], info["p0"], info["leaf"]
    l0, L = info["levels"]
    X, N = info["pairs"]["expanded"], info["pairs"]["near"]
    roots = info["zones"]["inner"] + info["zones"]["outer"]
    q = math.isqrt(p - 1) + 1
    r = -(-p // q)
    return ((q + r + 2 + 2 * r * q + p + 1) * X + p * (2 * p - 1) * 2 * M / s + 2 * (L - l0) * (p * p + 2 * p + 3)
            + (p + 2) * s + M * (2 * p - 1) + 6 * s * N + 4 * p0 * roots
            + ((1.5 * math.log2(M) + 1) * M if roots else 0))


def pair_bound(info: dict, M: int, theta: float) -> tuple[float, float]:
    """(tested, near) pair bounds of the proof's section 6: per circle pole, 2^l0 tests at
    the first level and twice the inadmissible arcs of the level above at the others;
    at most floor(1 + pi (1 + delta)/(2 theta)) inadmissible arcs at a level with
    (1 + delta) R_l < theta, delta = 1e-6."""
    tree = ArcTree(M, info["leaf"])
    nc = info["zones"]["circle"]

    def inadmissible(l: int) -> float:
        delta = 1e-6
        if (1 + delta) * tree.radius_upper(l) < theta:
            return min(2 ** l, math.floor(1 + math.pi * (1 + delta) / (2 * theta)))
        return 2 ** l

    tested = 2 ** tree.l0 + sum(2 * inadmissible(l - 1) for l in range(tree.l0 + 1, tree.L + 1))
    return nc * tested, nc * inadmissible(tree.L)


def ratio_limit(info: dict, lam: float, theta: float) -> float:
    """The constant of proofs/fast_cauchy.md section 9 for n = M circle poles: the
    operation count (``operation_bound``'s terms) with Lemma 9.1's pair bounds, divided by
    (n+M) log2(n+M) p = 2 M lam p, at the smallest size lam = log2(n + M) tested.  Lemma
    9.1: K = floor(1 + pi (1 + delta)/(2 theta)) refused arcs per level where
    (1 + delta) R_l < theta; at the other levels R_l < pi / 2^l gives 2^l < pi (1 + delta)/theta,
    so 2^l <= K there too (theta <= pi/2): X <= n (2^l0 + 2K (L - l0)) <= n (4 + 2K lam) and
    N <= K n.  Every term but the expansions' c1 K / p carries a factor 1/lam or 1/M, so the
    value at the smallest size bounds every larger one: no extra log factor is allowed."""
    p, s = info["p"], info["leaf"]
    q = math.isqrt(p - 1) + 1
    r = -(-p // q)
    c1 = q + r + 2 + 2 * r * q + p + 1       # per expanded pair, as operation_bound (above section 9's 2p + 3)
    K = math.floor(1 + math.pi * (1 + 1e-6) / (2 * theta))
    M = 2 ** (lam - 1)
    per_pair = c1 * (4 + 2 * K * lam) * M + 6 * s * K * M   # expansions and near pairs, n = M
    rest = p * (2 * p - 1) * 2 * M / s + 2 * lam * (p * p + 2 * p + 3) + (p + 2) * s + M * (2 * p - 1)
    return (per_pair + rest) / (2 * M * lam * p)


def test_counts_scale_as_n_plus_m_log_times_p():
    """Counting(Float64Field()), n = M, LegS-like poles (step 1e-2), eps = 1e-8: the
    operations obey the accounting bound; pair numbers obey the geometric bound (Lemma
    9.1); ops / ((n+M) log2(n+M) p) stays below section 9's constant for every size (its
    O(p (n+M) log(n+M)) with the constant made explicit, ``ratio_limit``); fewer operations
    than cauchy_direct from n = 256 on; peak words O(n + M)."""
    for q in range(8, 13):  # n + M = 256 ... 4096
        n = M = 2 ** (q - 1)
        summary, info, words = counted(cauchy_fast, n, M, 1e-8)
        ops = summary["ops"]
        assert ops <= operation_bound(info, M)
        tested, near = pair_bound(info, M, 0.4)
        assert info["pairs"]["tested"] <= tested and info["pairs"]["near"] <= near
        assert info["zones"]["circle"] == n and info["leaf"] < 2 * info["p"]   # the constant's premises
        assert ops / ((n + M) * math.log2(n + M) * info["p"]) <= ratio_limit(info, 8, 0.4)
        assert words <= 4 * (n + M)
        if n in (256, 512):
            assert ops < counted(cauchy_direct, n, M, 1e-8)[0]["ops"]


def test_fewer_operations_than_direct_for_n_256_and_large_m():
    """cauchy_direct does n M subtractions, zero tests, divisions and additions (4 n M
    operations, measured at n = M = 256); cauchy_fast at n = 256, M = 4096, eps = 1e-12
    needs fewer than a quarter of that."""
    assert counted(cauchy_direct, 256, 256, 1e-12)[0]["ops"] == 4 * 256 * 256
    summary, _, _ = counted(cauchy_fast, 256, 4096, 1e-12)
    assert 4 * summary["ops"] < 4 * 256 * 4096


# -- orders, several weight sets, bad input ----------------------------------------------------------

def test_orders():
    for eps in (1e-1, 1e-8, 1e-12, 1e-15, 2.0 ** -40):
        for q in (0.25, 0.4, 0.5, 0.6):
            p = expansion_orders(eps, q, q)[0]
            assert Fraction(q) ** p <= Fraction(eps) < Fraction(q) ** (p - 1) or p == 1
            assert p == math.ceil(math.log(eps) / math.log(q)) or abs(math.log(eps) / math.log(q) - round(
                math.log(eps) / math.log(q))) < 1e-9
    assert expansion_orders(0.4 ** 3, 0.4, 0.5) == (3, 4)


#: poles in every zone (inner, outer, circle, within 1e-9 of the circle and of z = -1)
MIXED_POLES = [0.3 + 0.1j, 1.0000001, -1.2j, 0.9 * cmath.exp(0.3j), 3 + 0j, 1.5 * cmath.exp(2j),
               (1 - 1e-9) * cmath.exp(-2j * math.pi * 7.5 / 256), -1 - 1e-9 + 1e-9j, 0.7 * cmath.exp(-1j),
               1.05 * cmath.exp(2.5j), 25 + 3j, 0.995j]
MIXED_WEIGHTS = [[complex(j + 1, -j) for j in range(12)], [1j ** j for j in range(12)], [0.5] * 12]


def test_several_weight_sets_match_single_runs():
    """cauchy_fast_many (shared plan; per-arc and per-leaf products over the weight sets)
    encloses the direct sums of every set, covers every pair once, and in float64 gives
    each set's single-run bounds and its values up to rounding."""
    M, poles, sets = 256, MIXED_POLES, MIXED_WEIGHTS
    B = BallField(80)
    many = cauchy_fast_many(B, poles, sets, M, 1e-6, trace_pairs=True)
    assert many.ok and np.all(many.info["trace"]["count"] == 1) and many.info["pairs"]["expanded"] > 0
    for i, w in enumerate(sets):
        check_encloses(many.value[i], reference(poles, w, M))
    flt = cauchy_fast_many(Float64Field(), poles, sets, M, 1e-6)
    for i, w in enumerate(sets):
        one = cauchy_fast(Float64Field(), poles, w, M, 1e-6)
        S1, _, _ = abs_sums(poles, w, M)  # one set splits the powers differently: rounding apart
        assert np.all(np.abs(np.array(flt.value[i]) - np.array(one.value)) <= 1e-12 * S1)
        assert flt.info["bound"][i] == one.info["bound"]


@pytest.mark.parametrize("wrap", [Tracing, Counting])
def test_wrapped_ball_field_encloses_exact_sums(wrap):
    """Tracing and Counting over BallField(128) pass ``encloses`` through: the
    truncation bound is added to the values (the case ``cauchy_fast(Tracing(BallField(128)),
    poles, w, 64, 1e-3)`` once returned balls of radius ~1e-36 that missed every exact
    sum), and the balls contain the exact sums, computed directly in ExactField."""
    M, eps = 64, 1e-3
    F = wrap(BallField(128))
    r = cauchy_fast(F, MIXED_POLES, MIXED_WEIGHTS[0], M, eps)
    assert r.ok and r.info["certified"] and r.info["error_added"]
    E = ExactField(M)
    exact = cauchy_direct(E, [E.from_number(x) for x in MIXED_POLES], [E.from_number(x) for x in MIXED_WEIGHTS[0]], M)
    assert exact.ok
    B = BallField(128)
    for k, (v, y) in enumerate(zip(r.value, exact.value)):
        ball = v.v  # the ball inside the wrapper's element
        assert ball.contains(E.to_acb(y, 400)), k
        assert B.radius(ball) >= r.info["bound"][k]  # the truncation bound is in the radius
    many = cauchy_fast_many(F, MIXED_POLES, MIXED_WEIGHTS, M, eps)
    assert many.ok
    for w, values in zip(MIXED_WEIGHTS, many.value):
        want = cauchy_direct(E, [E.from_number(x) for x in MIXED_POLES], [E.from_number(x) for x in w], M)
        assert all(v.v.contains(E.to_acb(y, 400)) for v, y in zip(values, want.value))


def test_bad_input():
    B = BallField(64)
    with pytest.raises(ValueError):
        cauchy_fast(B, [2], [1, 1], 4, 1e-6)
    with pytest.raises(ValueError):
        cauchy_fast(B, [2], [1], 6, 1e-6)
    for eps in (0, 1, -1e-3, 2.0):
        with pytest.raises(ValueError):
            cauchy_fast(B, [2], [1], 4, eps)
    with pytest.raises(ValueError):
        cauchy_fast(B, [2], [1], 4, 1e-6, theta=1.0)
    with pytest.raises(ValueError):
        cauchy_fast(B, [2], [1], 4, 1e-6, rho0=0)
    with pytest.raises(ValueError):
        cauchy_fast(B, [2], [1], 8, 1e-6, leaf=3)
    with pytest.raises(ValueError):
        cauchy_fast(B, [2], [1], 8, 1e-6, leaf=16)
    with pytest.raises(ValueError):  # the arc centres need the 2M-th roots
        cauchy_fast(ExactField(8), [2], [1], 8, 1e-6)
    with pytest.raises(ValueError):  # omega is no primitive root
        cauchy_fast(B, [2], [1], 4, 1e-6, omega=B.one())


def test_no_poles():
    r = cauchy_fast(Float64Field(), [], [], 8, 1e-6)
    assert r.ok and r.value == [0j] * 8 and r.info["bound"] == [0.0] * 8
