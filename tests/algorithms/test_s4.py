from fractions import Fraction

import pytest
from flint import acb, arb
from hypothesis import given, strategies as st

from s4cert.algorithms.dft import next_power_of_two
from s4cert.algorithms.s4.dplr import DPLR
from s4cert.algorithms.s4.c_tilde import c_tilde
from s4cert.algorithms.s4.kernels import kernel_by_powers
from s4cert.algorithms.s4.solver import bilinear, recurrent
from s4cert.algorithms.linalg import cdot
from s4cert.algorithms.s4.filter import convolve, filter_kernel
from s4cert.arith import BallField, ExactField, Truth, exact_parts
from tests.algorithms.test_linalg import cofactor_det
from tests.helpers import (AMPLE_PREC, all_enclose, all_exact_equal, assert_ball_run_agrees, dissipative_dplr,
                           exact_equal, gaussian, random_dplr)


@st.composite
def problems(draw):
    N = draw(st.integers(1, 6))
    r = draw(st.integers(1, 2))
    step = draw(st.builds(Fraction, st.integers(1, 8), st.integers(1, 4)))
    L = draw(st.integers(1, 20))
    m = random_dplr(draw, N, r, step, exceptional=draw(st.booleans()))
    return m, step, L


def field_for(L: int) -> ExactField:
    """Holds the roots of the filter's grid and of the product tree's transforms (N <= 6)."""
    return ExactField.for_length(2 * max(next_power_of_two(L), 8))


@given(p=problems())
def test_filter_equals_powers_exactly(p):
    m, step, L = p
    E = field_for(L)
    K = kernel_by_powers(E, m, step, L)
    f = filter_kernel(E, m, step, L)
    if f.status in ("resonant-diagonal", "resonant-correction"):
        # the filter cannot evaluate there (rare for random rationals; tested below): the
        # resonance itself is confirmed independently
        assert resonance_confirmed(E, m, step, next_power_of_two(L), f)
        return
    assert f.status == K.status
    if K.ok:
        assert all_exact_equal(E, f.value, K.value)
        assert all_exact_equal(E, filter_kernel(E, m, step, L, cauchy="direct").value, K.value)


def resonance_confirmed(E, m, step, M: int, f) -> bool:
    """The filter's resonance, decided from the definitions: resonant-diagonal, some pole
    mu_j = (a - lambda_j)/(a + lambda_j) (lambda_j != -a) with mu_j^M = 1; resonant-correction,
    s(z_k) I - A singular at the reported root z_k != -1 (det(sI - A) = det(sI - Lambda) det W)."""
    if f.status == "resonant-diagonal":
        a = E.div(E.const(2), E.from_number(step))
        for lam in m.Lambda:
            den = E.add(a, E.from_number(lam))
            if E.is_zero(den) is Truth.TRUE:
                continue
            mu, p = E.div(E.sub(a, E.from_number(lam)), den), E.one()
            for _ in range(M):
                p = E.mul(p, mu)
            if E.is_zero(E.sub(p, E.one())) is Truth.TRUE:
                return True
        return False
    z = E.root_of_unity(M, f.info["root"])
    G = dense_resolvents(E, m, step, z)
    return len(G) == 2 and E.is_zero(cofactor_det(E, G[1])) is Truth.TRUE


@given(p=problems(), data=st.data())
def test_kernel_convolution_equals_recurrent(p, data):
    m, step, L = p
    E = field_for(L)
    f = filter_kernel(E, m, step, L)
    if not f.ok:   # a resonance confirmed from the definitions, or the powers' own refusal
        assert (resonance_confirmed(E, m, step, next_power_of_two(L), f) if f.status.startswith("resonant")
                else f.status == kernel_by_powers(E, m, step, L).status)
        return
    u = [E.from_number(v) for v in data.draw(st.lists(gaussian(), min_size=L, max_size=L))]
    y = recurrent(E, m, step, u)
    assert all_exact_equal(E, convolve(E, f.value, u), y.value)


@given(p=problems())
def test_supplied_c_tilde(p):
    m, step, L = p
    E = field_for(L)
    ct = c_tilde(E, m, step, next_power_of_two(L))
    if not ct.ok:
        return
    a = filter_kernel(E, m, step, L, c_tilde=ct.value)
    b = filter_kernel(E, m, step, L)
    assert a.status == b.status
    if a.ok:
        assert all_exact_equal(E, a.value, b.value)


@given(prec=st.integers(30, 300), p=problems())
def test_ball_filter_contains_exact(prec, p):
    m, step, L = p
    E = field_for(L)
    ref = filter_kernel(E, m, step, L)
    got = filter_kernel(BallField(prec), m, step, L)
    assert_ball_run_agrees(got, ref, E)


def test_ball_filter_decides_at_ample_precision():
    """At AMPLE_PREC bits the ball filter certifies every dissipative model (no resonance,
    G invertible: tests.helpers.dissipative_dplr) of the random family's sizes, some with
    an exceptional index (at dyadic steps only: with step 1/3 the ball 2/step is not exact,
    so whether 2/step + lambda_j = 0 cannot be decided), with enclosures of the exact
    kernels: all 10 of 10."""
    certified = 0
    for seed in range(10):
        step = [Fraction(1, 2), Fraction(1, 3), Fraction(1, 4)][seed % 3]
        exceptional = seed % 2 == 1 and step.denominator != 3
        m, L = dissipative_dplr(seed, 1 + seed % 4, 1 + seed % 2, step, exceptional), 1 + (7 * seed) % 12
        E = field_for(L)
        certified += assert_ball_run_agrees(filter_kernel(BallField(AMPLE_PREC), m, step, L),
                                            filter_kernel(E, m, step, L), E)
    assert certified == 10


def test_spec_example_is_resonant_diagonal():
    """A = 0, step 1: the pole mu = (2 - 0)/(2 + 0) = 1 is the root z_0."""
    m = DPLR([0], [0], [1], [1])
    E = ExactField(16)
    for L in (1, 3, 8):
        assert filter_kernel(E, m, 1, L).status == "resonant-diagonal"


def dense_resolvents(E, m, step, z):
    """I - Abar z and, for z != -1, s(z) I - A with s(z) = a (1 - z)/(1 + z), a = 2/step,
    as dense matrices (a list of one or two)."""
    N = m.N
    Abar = bilinear(E, m, step).value[0]
    eye = lambda i, j: E.one() if i == j else E.zero()
    out = [[[E.sub(eye(i, j), E.mul(Abar[i][j], z)) for j in range(N)] for i in range(N)]]
    if E.is_zero(E.add(E.one(), z)) is Truth.FALSE:
        A = m.dense_A(E)
        a = E.div(E.const(2), E.from_number(step))
        s = E.div(E.mul(a, E.sub(E.one(), z)), E.add(E.one(), z))
        out.append([[E.sub(E.mul(s, eye(i, j)), A[i][j]) for j in range(N)] for i in range(N)])
    return out


def test_resonant_correction():
    """lambda = 1, P = 1, Q = 1 + i, step 2: A = 1 - (1 - i) = i = s(z) at z = -i (k = 1, M = 4),
    while s(z) - lambda != 0 at every root.  At the reported root, I - Abar z_k and
    s(z_k) I - A are singular (cofactor determinants, exactly); the same with a second,
    uncoupled state."""
    E = ExactField(8)
    for m in (DPLR([1], [1], [1], [1], Q=[(1, 1)]),
              DPLR([1, Fraction(-1, 2)], [1, 0], [1, 3], [1, (2, -1)], Q=[(1, 1), 0])):
        res = filter_kernel(E, m, 2, 4)
        assert res.status == "resonant-correction" and res.info["root"] == 1
        assert kernel_by_powers(E, m, 2, 4).ok  # the kernel exists; only the filter route is blocked
        for k in range(4):  # singular at the reported root only (z_2 = -1: I - Abar z only)
            tests = [E.is_zero(cofactor_det(E, G)) for G in dense_resolvents(E, m, 2, E.root_of_unity(4, k))]
            assert tests == [Truth.TRUE] * 2 if k == 1 else tests == [Truth.FALSE] * (1 if k == 2 else 2)


def test_resonant_diagonal_with_invertible_resolvent():
    """Lambda = 0, P = Q = 1, step 1: mu = 1 = z_0, so the status is resonant-diagonal,
    yet s(z_0) I - A = 1 and I - Abar = 2/3 are invertible and the kernel
    (2/3)(1/3)^j exists (bilinear_filter.md, section 6)."""
    m = DPLR([0], [1], [1], [1])
    E = ExactField(16)
    for L in (1, 4, 8):
        assert filter_kernel(E, m, 1, L).status == "resonant-diagonal"
    K = kernel_by_powers(E, m, 1, 8)
    assert K.ok and all_exact_equal(E, K.value, [E.from_number(Fraction(2, 3) * Fraction(1, 3)**j) for j in range(8)])
    G1, G2 = dense_resolvents(E, m, 1, E.one())  # z_0 = 1
    assert exact_equal(E, G1[0][0], E.from_number(Fraction(2, 3))) and exact_equal(E, G2[0][0], E.one())


def test_cauchy_sums_at_minus_one():
    """At z = -1 (not used by the filter) every S_uv equals (step/2) u* v (end of
    bilinear_filter.md section 3), exceptional indices included."""
    step = Fraction(1, 2)
    m = DPLR([-4, Fraction(-1, 3), (-1, 2)], [[1, 2], [Fraction(1, 2), 0], [(0, 1), -1]], [1, 2, 3],
             [1, (1, -1), 2], Q=[[(1, 1), 0], [1, 3], [2, (0, -1)]])
    E = ExactField(16)
    res = filter_kernel(E, m, step, 7, keep_blocks=True)
    assert res.ok and res.info["exceptional"] == [0]
    M = res.info["M"]
    f = E.from_number
    Ct = res.info["c_tilde"]
    B = [f(x) for x in m.B]
    Pc = [[f(row[i]) for row in m.P] for i in range(m.r)]
    Qc = [[f(row[i]) for row in m.Q] for i in range(m.r)]
    vec = {"C": Ct, "B": B}
    half = f(step / 2)
    for (ku, kv), vals in res.info["blocks"].items():
        u = vec[ku] if ku == "C" else Qc[ku]
        v = vec[kv] if kv == "B" else Pc[kv]
        assert exact_equal(E, vals[M // 2], E.mul(half, cdot(E, u, v)))


def test_ok_implies_invertible_resolvents():
    """Statement 3, second half: after an ok run, I - Abar z_k is invertible at every
    root (cofactor determinants, exactly), z_k = -1 included."""
    E = ExactField(16)
    models = [(DPLR([-4, Fraction(-1, 3), (-1, 2)], [[1], [Fraction(1, 2)], [(0, 1)]], [1, 2, 3], [1, (1, -1), 2]),
               Fraction(1, 2), 7),
              (DPLR([-1, (0, 1)], [[1], [2]], [1, 1], [1, -1], Q=[[(1, 1)], [Fraction(1, 3)]]), 1, 4)]
    for m, step, L in models:
        res = filter_kernel(E, m, step, L)
        assert res.ok
        for k in range(res.info["M"]):
            G = dense_resolvents(E, m, step, E.root_of_unity(res.info["M"], k))[0]
            assert E.is_zero(cofactor_det(E, G)) is Truth.FALSE


@st.composite
def small_problems(draw):
    N = draw(st.integers(1, 4))
    step = draw(st.builds(Fraction, st.integers(1, 8), st.integers(1, 4)))
    m = random_dplr(draw, N, draw(st.integers(1, 2)), step, exceptional=draw(st.booleans()))
    return m, step, draw(st.integers(1, 8))


@given(p=small_problems())
def test_supplied_exceptional_partition(p):
    """Supplying the exact partition (lambda_j = -2/step, found here with fractions)
    gives the same status and kernel as the run that decides it."""
    m, step, L = p
    E = field_for(L)
    exc = [j for j, l in enumerate(m.Lambda) if exact_parts(l) == (-2 / step, 0)]
    a = filter_kernel(E, m, step, L, exceptional=exc)
    b = filter_kernel(E, m, step, L)
    assert a.status == b.status
    if a.ok:
        assert a.info["exceptional"] == b.info["exceptional"] == exc
        assert all_exact_equal(E, a.value, b.value)


def test_supplied_exceptional_partition_with_balls():
    """lambda_0 given as a ball around -2/step (the partition cannot be decided in the
    ball field): with the exact partition supplied the run is ok and its kernel encloses
    the exact kernel of lambda_0 = -2/step.  Indices out of range raise."""
    rest = dict(P=[[1], [Fraction(1, 2)]], B=[1, 2], C=[1, (1, -1)], Q=[[(0, 1)], [1]])
    exact_model = DPLR([-2, Fraction(-1, 2)], **rest)
    ball_model = DPLR([acb(arb(-2, 1e-40)), Fraction(-1, 2)], **rest)
    E = field_for(5)
    want = filter_kernel(E, exact_model, 1, 5)
    assert want.ok and want.info["exceptional"] == [0]
    Bf = BallField(128)
    assert filter_kernel(Bf, ball_model, 1, 5).status == "undecided"
    got = filter_kernel(Bf, ball_model, 1, 5, exceptional=[0])
    assert got.ok and all_enclose(got.value, E, want.value)
    for bad in ([2], [-1], [0, 5]):
        with pytest.raises(ValueError, match="exceptional"):
            filter_kernel(E, exact_model, 1, 5, exceptional=bad)


def test_exceptional_partition_and_minus_one_root():
    """lambda = -2/step exactly is handled by its constant term; z = -1 by its finite value."""
    step = Fraction(1, 2)
    m = DPLR([-4, Fraction(-1, 3), (-1, 2)], [[1], [Fraction(1, 2)], [(0, 1)]], [1, 2, 3], [1, (1, -1), 2])
    E = ExactField(16)
    res = filter_kernel(E, m, step, 7)
    assert res.ok and res.info["exceptional"] == [0]
    assert all_exact_equal(E, res.value, kernel_by_powers(E, m, step, 7).value)


def test_collision_off_the_exceptional_set():
    # mu = (a - lambda)/(a + lambda) = -i = z_1 for M = 4 with a = 2 (step 1): lambda = 2i
    m = DPLR([(0, 2)], [0], [1], [1])
    assert filter_kernel(ExactField(8), m, 1, 4).status == "resonant-diagonal"


def test_undecided_partition_with_balls():
    lam = acb(arb(-2, 1e-40))  # contains -2/step but is not exactly it
    m = DPLR([lam], [0], [1], [1])
    assert filter_kernel(BallField(128), m, 1, 4, c_tilde=[1]).status == "undecided"


def test_bad_input():
    E = ExactField(8)
    m = DPLR([-1], [1], [1], [1])
    with pytest.raises(ValueError, match="L"):
        filter_kernel(E, m, 1, 0)
    with pytest.raises(ValueError, match="step"):
        filter_kernel(E, m, -1, 4)
    with pytest.raises(ValueError, match="cauchy"):
        filter_kernel(E, m, 1, 4, cauchy="magic")
    with pytest.raises(ValueError, match="c_tilde"):
        filter_kernel(E, m, 1, 4, c_tilde=[1, 2])
