"""The continuous-time LTI model: certified simulation, ZOH and bilinear steps.

Independent evaluations are closed forms in a diagonalizing basis with rational
eigen-data (``A = V diag(lambda) V^-1``, V unimodular), computed with scalar
exponentials in high-precision acb arithmetic -- no matrix exponential involved.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from flint import acb, arb, arb_mat, ctx, fmpq
from hypothesis import given
from hypothesis import strategies as st

from s4cert.algorithms.linalg import solve
from s4cert.algorithms.result import SINGULAR_BILINEAR
from s4cert.algorithms.models.lti_model import LTIModel
from s4cert.algorithms.models.lti_simulate import augmented_exponential, flint_matrices, simulate
from s4cert.algorithms.models.ssm import DiscreteLTI, bilinear
from s4cert.algorithms.models.zoh import zoh, zoh_float64
from s4cert.arith import BallField, ExactField, Truth
from tests.helpers import fractions

HIGH = 1024  # bits of the independent evaluations


def _q(x: Fraction) -> arb:
    return arb(fmpq(x.numerator, x.denominator))


def _c(x) -> acb:
    """An exact number (Fraction or (re, im) pair of Fractions) as an acb, at the current precision."""
    if isinstance(x, tuple):
        return acb(_q(x[0]), _q(x[1]))
    return acb(_q(Fraction(x)))


def _contains(ball: acb, value: acb) -> bool:
    """The certified ``ball`` contains the tight independent enclosure ``value``; when the
    ball is an exact point (radius 0), the point must lie in ``value`` instead."""
    if bool(ball.contains(value)):
        return True
    return ball.real.rad().is_zero() and ball.imag.rad().is_zero() and bool(value.contains(ball))


# -- diagonalizable models with rational eigen-data -----------------------------------

def _unimodular(lower: list[int], upper: list[int], n: int) -> tuple[list[list[int]], list[list[int]]]:
    """V = L U with unit triangular integer factors, and V^-1 (integer, exact)."""
    L = [[1 if i == j else (lower.pop() if i > j else 0) for j in range(n)] for i in range(n)]
    U = [[1 if i == j else (upper.pop() if i < j else 0) for j in range(n)] for i in range(n)]
    V = [[sum(L[i][k] * U[k][j] for k in range(n)) for j in range(n)] for i in range(n)]
    E = ExactField(4)
    cols = []
    for j in range(n):
        e = [E.one() if i == j else E.zero() for i in range(n)]
        cols.append([E.to_fractions(x)[0] for x in solve(E, E.matrix(V), e).value])
    Vinv = [[cols[j][i] for j in range(n)] for i in range(n)]
    return V, Vinv


class Diagonal:
    """``A = V diag(lam) V^-1`` exactly (Gaussian rationals) and the closed-form solution."""

    def __init__(self, V, Vinv, lam, B, C, D, x0):
        E = ExactField(4)
        n = len(V)
        Ve, Vie, lame = E.matrix(V), E.matrix(Vinv), [E.from_number(l) for l in lam]
        A = [[E.to_fractions(_dot(E, [E.mul(Ve[i][k], lame[k]) for k in range(n)], [Vie[k][j] for k in range(n)]))
              for j in range(n)] for i in range(n)]
        self.V, self.Vinv, self.lam, self.B, self.C, self.D, self.x0 = V, Vinv, lam, B, C, D, x0
        self.model = LTIModel([[_pair(a) for a in r] for r in A], [[b] for b in B], [C], D=[[D]],
                              x0=[_pair(x) for x in x0])

    def states(self, steps: list[Fraction], u: list[Fraction], hold: str) -> list[list[acb]]:
        """x(t_k) for the knots t_k = sum of the first k steps, per mode:
        z <- e^{lam h} z + (e^{lam h} - 1)/lam b u_k [+ (e^{lam h} - 1 - lam h)/lam^2 b slope]."""
        n = len(self.V)
        with ctx.workprec(HIGH):
            lam = [_c(l) for l in self.lam]
            z = [sum((_c(self.Vinv[i][k]) * _c(self.x0[k]) for k in range(n)), acb(0)) for i in range(n)]
            b = [sum((_c(self.Vinv[i][k]) * _c(self.B[k]) for k in range(n)), acb(0)) for i in range(n)]
            out = [self._x(z)]
            for k, h in enumerate(steps):
                hh = _c(h)
                for i in range(n):
                    e = (lam[i] * hh).exp()
                    z[i] = e * z[i] + (e - 1) / lam[i] * b[i] * _c(u[k])
                    if hold == "linear":
                        slope = (_c(u[k + 1]) - _c(u[k])) / hh
                        z[i] += (e - 1 - lam[i] * hh) / lam[i] ** 2 * b[i] * slope
                out.append(self._x(z))
            return out

    def _x(self, z: list[acb]) -> list[acb]:
        n = len(self.V)
        return [sum((_c(self.V[i][k]) * z[k] for k in range(n)), acb(0)) for i in range(n)]

    def output(self, x: list[acb], u: Fraction) -> acb:
        with ctx.workprec(HIGH):
            return sum((_c(c) * xi for c, xi in zip(self.C, x)), acb(0)) + _c(self.D) * _c(u)


def _dot(E, xs, ys):
    acc = E.zero()
    for a, b in zip(xs, ys):
        acc = E.add(acc, E.mul(a, b))
    return acc


def _pair(x) -> tuple[Fraction, Fraction]:
    return x if isinstance(x, tuple) else (Fraction(x), Fraction(0))


nonzero = fractions(12, 6).filter(lambda q: q != 0)
real_eigen = st.lists(fractions(12, 4).filter(lambda q: q != 0), min_size=1, max_size=3)


@st.composite
def diagonal_models(draw, complex_eigen: bool = False):
    n = draw(st.integers(1, 3))
    ints = st.integers(-2, 2)
    V, Vinv = _unimodular(draw(st.lists(ints, min_size=3, max_size=3)),
                          draw(st.lists(ints, min_size=3, max_size=3)), n)
    if complex_eigen:
        lam = [draw(st.tuples(fractions(8, 4), fractions(8, 4)).filter(lambda z: z != (0, 0))) for _ in range(n)]
    else:
        lam = [draw(fractions(8, 4).filter(lambda q: q != 0)) for _ in range(n)]
    vec = st.lists(fractions(6, 4), min_size=n, max_size=n)
    return Diagonal(V, Vinv, lam, draw(vec), draw(vec), draw(fractions(6, 4)), draw(vec))


steps_st = st.lists(st.sampled_from([Fraction(1, 4), Fraction(1, 3), Fraction(1, 2), Fraction(3, 4)]),
                    min_size=1, max_size=5)


# -- the spec's scalar example ----------------------------------------------------

SCALAR = dict(A=[[0]], B=[1], C=[1], D=0)


@given(st.lists(fractions(50, 9), min_size=1, max_size=12))
def test_scalar_example_bilinear_gives_cumulative_sums(u):
    """proofs/spec.md §S41: A = 0, B = C = 1, D = 0, step 1: Abar = Bbar = 1 and y_t = sum_{s<=t} u_s."""
    F = ExactField(4)
    res = bilinear(F, LTIModel(**SCALAR), 1)
    assert res.ok
    d = res.value
    assert F.to_fractions(d.A[0][0]) == (1, 0) and F.to_fractions(d.B[0][0]) == (1, 0)
    _, ys = d.run(u)
    assert [F.to_fractions(y[0]) for y in ys] == [(sum(u[: t + 1]), 0) for t in range(len(u))]


@given(st.lists(fractions(50, 9), min_size=1, max_size=12))
def test_scalar_example_zoh_gives_cumulative_sums(u):
    """The ZOH step of the same model is Abar = e^0 = 1, Bbar = int_0^1 ds = 1: the certified
    balls contain 1 and the cumulative sums."""
    d = zoh(LTIModel(**SCALAR), 1, prec=96)
    with ctx.workprec(HIGH):
        assert _contains(d.A[0][0], acb(1)) and _contains(d.B[0][0], acb(1))
        _, ys = d.run(u)
        assert all(_contains(y[0], _c(sum(u[: t + 1]))) for t, y in enumerate(ys))
    # and the continuous model sampled at the integers, with u_t held on [t, t+1)
    tr = simulate(LTIModel(**SCALAR), list(range(len(u) + 1)), [[v] for v in u], prec=96)
    with ctx.workprec(HIGH):
        assert all(_contains(tr.x[t + 1][0], _c(sum(u[: t + 1]))) for t in range(len(u)))


# -- ZOH and simulation against closed forms --------------------------------------------

@given(diagonal_models(), st.lists(fractions(9, 4), min_size=6, max_size=6),
       st.sampled_from([Fraction(1, 2), Fraction(1, 3), Fraction(1)]))
def test_zoh_samples_equal_the_continuous_solution(D, u, h):
    """x_t = Abar x_{t-1} + Bbar u_t with x_{-1} = x(0) is x((t+1) h) for u = u_t on
    [t h, (t+1) h): the ZOH balls contain the closed-form solution at the sample times."""
    d = zoh(D.model, h)
    xs, ys = d.run([[v] for v in u])
    exact = D.states([h] * len(u), u, "constant")
    for t in range(len(u)):
        assert all(_contains(b, e) for b, e in zip(xs[t], exact[t + 1]))
        assert _contains(ys[t][0], D.output(exact[t + 1], u[t]))


@given(diagonal_models(complex_eigen=True), st.lists(fractions(9, 4), min_size=1, max_size=5), steps_st)
def test_simulate_constant_hold_contains_closed_form(D, u, steps):
    k = min(len(u), len(steps))
    u, steps = u[:k], steps[:k]
    times = [sum(steps[:j], Fraction(0)) for j in range(k + 1)]
    tr = simulate(D.model, times, [[v] for v in u])
    exact = D.states(steps, u, "constant")
    for j in range(k + 1):
        assert all(_contains(b, e) for b, e in zip(tr.x[j], exact[j]))
        # right-continuous input; the last sample uses the last piece
        assert _contains(tr.y[j][0], D.output(exact[j], u[min(j, k - 1)]))


@given(diagonal_models(complex_eigen=True), st.lists(fractions(9, 4), min_size=2, max_size=5), steps_st)
def test_simulate_linear_hold_contains_closed_form(D, u, steps):
    k = min(len(u) - 1, len(steps))
    u, steps = u[: k + 1], steps[:k]
    times = [sum(steps[:j], Fraction(0)) for j in range(k + 1)]
    tr = simulate(D.model, times, [[v] for v in u], hold="linear")
    exact = D.states(steps, u, "linear")
    for j in range(k + 1):
        assert all(_contains(b, e) for b, e in zip(tr.x[j], exact[j]))
        assert _contains(tr.y[j][0], D.output(exact[j], u[j]))


def test_simulate_from_nonzero_t0_and_numpy_input():
    """t0 != 0, numpy float input (read exactly), and a model with m = 2 inputs, p = 2 outputs."""
    A = np.array([[-1.0, 0.0], [0.0, -0.5]])
    B = np.array([[1.0, 0.5], [0.0, 1.0]])
    C = np.eye(2)
    Dm = np.array([[0.0, 1.0], [1.0, 0.0]])
    m = LTIModel(A, B, C, D=Dm, x0=[1.0, 2.0], t0=0.5)
    u = np.array([[1.0, -1.0], [0.25, 2.0]])
    tr = simulate(m, np.array([0.5, 1.0, 1.75]), u)
    # x1' = -x1 + u1 + u2/2, x2' = -x2/2 + u2, one step at a time in closed form
    with ctx.workprec(HIGH):
        lam = [acb(-1), acb(-1) / 2]
        x = [acb(1), acb(2)]
        for (u1, u2), h in zip(u, [Fraction(1, 2), Fraction(3, 4)]):
            b = [_c(Fraction(u1)) + _c(Fraction(u2)) / 2, _c(Fraction(u2))]
            e = [(l * _c(h)).exp() for l in lam]
            x = [e[i] * x[i] + (e[i] - 1) / lam[i] * b[i] for i in range(2)]
        assert _contains(tr.x[2][0], x[0]) and _contains(tr.x[2][1], x[1])
        # y = C x + D u with the last input piece at the final time
        assert _contains(tr.y[2][0], x[0] + _c(Fraction(u[1][1])))
        assert _contains(tr.y[2][1], x[1] + _c(Fraction(u[1][0])))
    assert tr.x_midpoint().shape == (3, 2) and tr.x_midpoint().dtype == np.float64
    assert np.all(tr.x_radius() < 1e-30)


@given(st.lists(st.lists(fractions(6, 3), min_size=3, max_size=3), min_size=3, max_size=3),
       st.lists(fractions(6, 3), min_size=4, max_size=4))
def test_simulate_and_zoh_agree_for_any_matrix(A, u):
    """Two certified enclosures of the same x(t_k) (one exponential per step size in
    both; different products) must overlap -- for matrices that need not be diagonalizable."""
    m = LTIModel([list(r) for r in A], [1, 0, 1], [1, 1, 1], x0=[1, 0, 0])
    h = Fraction(1, 2)
    tr = simulate(m, [h * k for k in range(len(u) + 1)], [[v] for v in u])
    xs, _ = zoh(m, h).run([[v] for v in u])
    assert all(bool(a.overlaps(b)) for t in range(len(u)) for a, b in zip(tr.x[t + 1], xs[t]))


@given(st.lists(st.lists(fractions(6, 3), min_size=2, max_size=2), min_size=2, max_size=2),
       st.sampled_from([Fraction(1, 3), Fraction(1), Fraction(5, 2)]))
def test_augmented_exponential_identities(A, h):
    """With Phi = e^{Ah}, Gamma0 = int_0^h e^{A(h-s)} B ds, Gamma1 = int_0^h e^{A(h-s)} B s ds:
    A Gamma0 = (Phi - I) B and A Gamma1 = Gamma0 - h B (proofs/lti_solution.md); the
    residual balls must contain 0."""
    m = LTIModel(A, [[1, 0], [Fraction(1, 2), 1]], [1, 1])
    with ctx.workprec(128):
        Am, Bm, _, _ = flint_matrices(m)
        Phi, G0, G1 = augmented_exponential(Am, Bm, h, "linear")
        I = arb_mat([[1, 0], [0, 1]])
        r1 = Am * G0 - (Phi - I) * Bm
        r2 = Am * G1 - (G0 - Bm * _q(h))
        assert all(bool(x.contains(0)) for x in r1.entries() + r2.entries())
        Phi0, G00, _ = augmented_exponential(Am, Bm, h)
        assert all(bool(a.overlaps(b)) for a, b in zip(Phi.entries() + G0.entries(), Phi0.entries() + G00.entries()))


def test_zoh_float64_is_the_rounded_midpoint():
    m = LTIModel([[-1, 2], [0, -3]], [1, 1], [1, 0])
    Ad, Bd = zoh_float64(m, Fraction(1, 10))
    d = zoh(m, Fraction(1, 10))
    assert Ad.dtype == np.float64 and Bd.shape == (2, 1)
    for i in range(2):
        for j in range(2):
            assert Ad[i, j] == float(d.A[i][j].real.mid())  # rounded to nearest
            assert d.A[i][j].rad() < 1e-30 and d.A[i][j].imag.is_zero()


# -- bilinear ---------------------------------------------------------------------------

@given(diagonal_models(complex_eigen=True), st.sampled_from([Fraction(1, 2), Fraction(1, 3)]))
def test_bilinear_exact_matches_ball_and_definition(D, h):
    """Bilinear in Q(i) is exact: (I - hA/2) Abar = I + hA/2 and (I - hA/2) Bbar = h B hold
    exactly; the same procedure in BallField(128) gives balls containing the exact entries."""
    E = ExactField(4)
    res = bilinear(E, D.model, h)
    if not res.ok:  # G singular happens only when 2/h is an eigenvalue
        assert res.status == SINGULAR_BILINEAR and any(Fraction(2) / h == _pair(l)[0] and _pair(l)[1] == 0
                                                         for l in D.lam)
        return
    d = res.value
    n = D.model.N
    A = E.matrix(D.model.A)
    hh = E.from_number(h)
    for i in range(n):
        for j in range(n):
            lhs = _dot(E, [E.sub(E.one() if i == k else E.zero(), E.mul(E.div(hh, E.const(2)), A[i][k]))
                           for k in range(n)], [d.A[k][j] for k in range(n)])
            rhs = E.add(E.one() if i == j else E.zero(), E.mul(E.div(hh, E.const(2)), A[i][j]))
            assert E.is_zero(E.sub(lhs, rhs)) is Truth.TRUE
    ball = bilinear(BallField(128), D.model, h)
    assert ball.ok
    for i in range(n):
        for j in range(n):
            assert bool(ball.value.A[i][j].contains(E.to_acb(d.A[i][j], HIGH)))


def test_bilinear_singular_status():
    """G = I - (h/2) A is singular when 2/h is an eigenvalue of A."""
    assert bilinear(ExactField(4), LTIModel([[4]], [1], [1]), Fraction(1, 2)).status == SINGULAR_BILINEAR


def test_bilinear_is_second_order():
    """Certified step-halving test of second-order accuracy.

    Data: A = V diag(-1, -2) V^-1 = [[0, -1], [2, -3]] (V = [[1, 1], [1, 2]]), B = (1, 0),
    C = (1, 1), x0 = (1, 1), u = 1 on [0, 1], T = 1.  For h = 1/n the bilinear recurrence
    runs in Q(i) (exact); y(1) is the closed form in 1024-bit balls, so e(h) = y_n - y(1)
    is a ball of radius ~2^-1000 around the exact error.  proofs/lti_solution.md
    (Theorem 5) gives e(h) = sum_j g_j (r_j^n - e^{lam_j}), r_j = (1 + h lam_j/2)/(1 - h lam_j/2),
    g_j = (CV)_j (z_j + b_j/lam_j), and e(h) = c2 h^2 + c4 h^4 + O(h^6) with
    c2 = (1/12) sum_j g_j lam_j^3 e^{lam_j}, c4 = sum_j g_j e^{lam_j} (lam_j^5/80 + lam_j^6/288),
    so e(h)/e(h/2) = 4 + kappa h^2 + O(h^4), kappa = 3 c4/c2.  The test certifies:
    every error ball excludes 0 and overlaps the exact formula; c2 != 0; and each ratio
    ball lies in [4 - 2 h^2, 4 + 2 h^2] and, sharper, within h^4 of 4 + kappa h^2.
    """
    D = Diagonal([[1, 1], [1, 2]], [[2, -1], [-1, 1]], [-1, -2], [1, 0], [1, 1], 0, [1, 1])
    E = ExactField(4)
    y_true = D.output(D.states([Fraction(1)], [Fraction(1)], "constant")[1], Fraction(0))
    # per mode: (CV)_j, lam_j, z_j = (V^-1 x0)_j, b_j = (V^-1 B u)_j
    modes = ((2, -1, 1, 2), (3, -2, 0, -1))
    errors = {}
    for n in (4, 8, 16, 32, 64, 128):
        d = bilinear(E, D.model, Fraction(1, n)).value
        _, ys = d.run([1] * n)
        with ctx.workprec(HIGH):
            e = E.to_acb(ys[-1][0], HIGH) - y_true
            assert not bool(e.contains(0))  # a certified, nonzero error
            h = acb(1) / n
            formula = acb(0)
            for cv, lam, z, b in modes:
                r = (1 + h * lam / 2) / (1 - h * lam / 2)
                formula += cv * (r ** n - acb(lam).exp()) * (z + acb(b) / lam)
            assert bool(e.overlaps(formula))
        errors[n] = e
    with ctx.workprec(HIGH):
        g = [(cv * (z + arb(b) / lam), arb(lam)) for cv, lam, z, b in modes]
        c2 = sum((gj * lam ** 3 * lam.exp() for gj, lam in g), arb(0)) / 12
        c4 = sum((gj * lam.exp() * (lam ** 5 / 80 + lam ** 6 / 288) for gj, lam in g), arb(0))
        assert not bool(c2.contains(0))
        kappa = 3 * c4 / c2
        for n in (4, 8, 16, 32, 64):
            ratio = (errors[n] / errors[2 * n]).real
            h2 = arb(1) / (n * n)
            assert bool(ratio.lower() >= 4 - 2 * h2) and bool(ratio.upper() <= 4 + 2 * h2)
            predicted = 4 + kappa * h2
            assert bool(abs(ratio - predicted).upper() <= h2 * h2)


# -- validation ---------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda: LTIModel([[1, 2]], [1], [1]),                       # A not square
    lambda: LTIModel([[1, 0], [0, 1]], [1], [1, 1]),            # B has 1 row, N = 2
    lambda: LTIModel([[1]], [1], [1, 2]),                       # C has 2 columns
    lambda: LTIModel([[1]], [1], [1], D=[[1, 2]]),              # D shape
    lambda: LTIModel([[1]], [1], [1], x0=[1, 2]),               # x0 length
    lambda: LTIModel([[float("nan")]], [1], [1]),               # non-finite
    lambda: LTIModel([[1]], [float("inf")], [1]),
    lambda: LTIModel([[1]], [1], [1], t0=(0, 1)),               # complex t0
    lambda: LTIModel([], [1], [1]),                             # empty
    lambda: LTIModel("A", [1], [1]),
])
def test_model_validation(make):
    with pytest.raises(ValueError):
        make()


@pytest.mark.parametrize("call", [
    lambda m: zoh(m, 0),
    lambda m: zoh(m, -1),
    lambda m: zoh(m, float("nan")),
    lambda m: bilinear(ExactField(4), m, 0),
    lambda m: simulate(m, [0, 1, 1], [1, 2]),                   # step 0
    lambda m: simulate(m, [0, 2, 1], [1, 2]),                   # decreasing
    lambda m: simulate(m, [1, 2], [1]),                         # times[0] != t0
    lambda m: simulate(m, [0], []),                             # a single time
    lambda m: simulate(m, [0, 1], [1, 2]),                      # too many inputs
    lambda m: simulate(m, [0, 1], [1], hold="linear"),          # linear hold needs K + 1 values
    lambda m: simulate(m, [0, 1], [1], hold="cubic"),
    lambda m: simulate(m, [0, 1], [float("inf")]),
    lambda m: simulate(m, [0, 1], [1], prec=1),
    lambda m: zoh(m, 1).run([[1, 2]]),                          # m = 1 input
])
def test_call_validation(call):
    with pytest.raises(ValueError):
        call(LTIModel([[-1]], [1], [1]))


def test_discrete_model_is_usable_in_float64():
    """In Float64Field the 1 x 1 bilinear step is one correctly rounded division each:
    Abar = 0.75 / 1.25 and Bbar = 0.5 / 1.25 are the floats nearest 3/5 and 2/5."""
    from s4cert.arith import Float64Field
    F = Float64Field()
    d = bilinear(F, LTIModel([[-1]], [1], [1]), 0.5).value
    assert isinstance(d, DiscreteLTI)
    A, B, C, Dm = d.to_numpy()
    assert A[0, 0] == 3 / 5 and B[0, 0] == 2 / 5 and C[0, 0] == 1 and Dm[0, 0] == 0
