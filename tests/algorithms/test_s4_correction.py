"""The filter's correction W(z) = I + beta T and transfer value H, and the rows of the
filter constants b and w (algorithms/s4/correction.py, algorithms/s4/constants.py)."""
import math
import numpy as np
from fractions import Fraction

from hypothesis import given, settings, strategies as st

from s4cert.algorithms.s4 import correction
from s4cert.algorithms.s4.constants import b_rows, filter_bounds, norm_terms
from s4cert.algorithms.s4.dplr import DPLR, in_field
from s4cert.algorithms.s4.filter import correction_at, filter_kernel
from s4cert.algorithms.s4.midrad import filter_kernel_midrad
from s4cert.arith import BallField, ExactField, Truth
from tests.helpers import all_exact_equal, random_dplr


def resolvent_form(E, model, step, z):
    """W(z) = I + Q* (s I - Lambda)^-1 P with s = a (1 - z)/(1 + z), a = 2/step: the
    correction written with the resolvent, an independent formula for the same matrix."""
    m = in_field(E, model)
    a = E.div(E.const(2), E.from_number(step))
    s = E.div(E.mul(a, E.sub(E.one(), z)), E.add(E.one(), z))
    R = [E.div(E.one(), E.sub(s, lam)) for lam in m.lam]
    r = model.r
    W = [[E.one() if i == c else E.zero() for c in range(r)] for i in range(r)]
    for j in range(model.N):
        for i in range(r):
            for c in range(r):
                W[i][c] = E.add(W[i][c], E.mul(E.mul(E.conj(m.Q[j][i]), R[j]), m.P[j][c]))
    return W


@st.composite
def problems(draw):
    N = draw(st.integers(1, 4))
    r = draw(st.integers(1, 2))
    step = draw(st.sampled_from([Fraction(1, 2), Fraction(1), Fraction(2, 3)]))
    return random_dplr(draw, N, r, step, draw(st.booleans())), step


@settings(max_examples=30, deadline=None)
@given(problems(), st.sampled_from([(8, 0), (8, 1), (8, 3), (4, 1), (8, 7)]))
def test_correction_at_equals_resolvent_form(problem, root):
    """The blocks' W(z) (Cauchy sums, exceptional indices through their constants) is the
    resolvent's I + Q* R(s) P exactly, at roots z != -1 of Q(zeta_8)."""
    m, step = problem
    E = ExactField(8)
    z = E.root_of_unity(*root)
    try:
        want = resolvent_form(E, m, step, z)
    except ZeroDivisionError:  # s is an eigenvalue: a pole on the point
        return
    got = correction_at(E, m, step, z)
    assert got.ok
    assert all(all_exact_equal(E, g, w) for g, w in zip(got.value, want))


def test_singular_correction_decided_exactly_and_met_by_the_filter():
    """lambda = 1, p = q = 1 at z = 1 (s = 0): W = 1 + 1/(0 - 1) = 0."""
    m = DPLR([1, -3], [[1], [0]], B=[1, 1], C=[1, 2])
    E = ExactField(8)
    W = correction_at(E, m, Fraction(1, 2), E.one()).value
    assert correction.is_singular(E, W) is Truth.TRUE
    assert correction.is_singular(E, correction_at(E, m, Fraction(1, 2), E.root_of_unity(8, 1)).value) is Truth.FALSE
    res = filter_kernel(E, m, Fraction(1, 2), 8, c_tilde=[1, 1])
    assert res.status == "resonant-correction" and res.info == {"root": 0}
    assert correction.inverse(E, W).status == "singular"


def test_is_singular_unknown_with_balls():
    B = BallField(64)
    W = [[B.add_error(B.zero(), 1e-30)]]  # a ball around 0: neither singular nor regular for sure
    assert correction.is_singular(B, W) is Truth.UNKNOWN


def test_value_at_equals_solving_with_the_inverse():
    """H from one elimination and H from the inverse agree exactly (the float64 route
    uses the inverse, the field route the solve)."""
    E = ExactField(8)
    n = E.from_number
    blocks = {("C", "B"): n((1, 2)), ("C", 0): n(3), ("C", 1): n((0, -1)), (0, "B"): n(2), (1, "B"): n((1, 1)),
              (0, 0): n(1), (0, 1): n((2, -1)), (1, 0): n(Fraction(1, 3)), (1, 1): n(-4)}
    b = correction.beta(E, E.root_of_unity(8, 1))
    H = correction.value_at(E, blocks, b, 2)
    inv = correction.inverse(E, correction.matrix(E, blocks, b, 2)).value
    X = [E.add(E.mul(inv[i][0], blocks[(0, "B")]), E.mul(inv[i][1], blocks[(1, "B")])) for i in range(2)]
    assert all_exact_equal(E, [H.value], [correction.transfer(E, blocks, b, X, 2)])


def test_b_rows_layout():
    blocks = {("C", "B"): "x", ("C", 0): "u0", ("C", 1): "u1", (0, "B"): "v0", (1, "B"): "v1",
              (0, 0): "t00", (0, 1): "t01", (1, 0): "t10", (1, 1): "t11"}
    assert b_rows(blocks, 2) == [["x"], ["u0", "u1"], ["v0"], ["v1"], ["t00", "t01"], ["t10", "t11"]]


def test_filter_bounds_against_exact_norms_and_the_float64_route():
    """b and w from a ball run bound the exact norms (computed in an exact run) and are
    close to them; the float64 route's b and w (same rows on disks, moduli bounded by
    |re| + |im|) bound them too, within a factor sqrt(2)."""
    m = DPLR([-1.0, -2.5, (-0.5, 3.0)], [[0.5, 0.1], [0.25, -0.3], [0.1, 0.2]], [1, 1, (0, 1)], [1, -1, 0.5])
    step, L, ct = 0.5, 16, [1.0, (0.5, -0.5), 2.0]
    B = BallField(128)
    run = filter_kernel(B, m, step, L, c_tilde=ct, cauchy="direct", keep_blocks=True)
    got = filter_bounds(B, run.info["blocks"], run.info["M"], m.r)
    E = ExactField.for_length(16)
    ex = filter_kernel(E, m, step, L, c_tilde=ct, cauchy="direct", keep_blocks=True)
    want_b = want_w = 1.0
    for k, rows, inv in norm_terms(E, ex.info["blocks"], ex.info["M"], m.r):
        norm = lambda rs: max(sum(abs(E.to_complex(x)) for x in row) for row in rs)
        want_b, want_w = max(want_b, norm(rows)), max(want_w, norm(inv))
    assert want_b <= got["b"] <= want_b * (1 + 1e-12)
    assert want_w <= got["w"] <= want_w * (1 + 1e-12)
    f64 = filter_kernel_midrad(m, step, L, c_tilde=ct).info
    for name, want in (("b", want_b), ("w", want_w)):
        assert want <= f64[name] <= math.sqrt(2) * want * (1 + 1e-9)


# -- G = I - (step/2) A from the set-up's W(0) (proofs/ball_mode.md, Lemma G) -----------------

@settings(max_examples=40, deadline=None)
@given(st.data(), st.sampled_from([Fraction(1, 2), Fraction(1, 4)]), st.integers(1, 2), st.booleans())
def test_g_from_the_setup_agrees_with_the_exact_solver(data, step, r, exceptional):
    """Where the set-up's W(0) says G is certainly invertible, the exact structured solver
    agrees; and wherever G is invertible with no pole at 0, it does say so (so the check is
    not vacuous: 128-bit balls decide these small problems)."""
    from s4cert.algorithms.s4.filter import setup
    from s4cert.algorithms.s4.solver import structured_solver
    m = random_dplr(data.draw, 4, r, step, exceptional)
    exact_ok = structured_solver(ExactField(4), m, step)[0].ok
    F, E = BallField(128), ExactField(4)
    st_ = setup(F, m, step, 8, [F.zero()] * m.N).value
    ok = correction.g_certainly_invertible(F, st_.poles, st_.weights, st_.offsets, r)
    pole_at_zero = any(E.is_zero(mu) is Truth.TRUE for mu in setup(E, m, step, 8, [E.zero()] * m.N).value.poles)
    assert ok == (exact_ok and not pole_at_zero)


def test_g_from_the_setup_on_singular_and_pole_at_zero():
    """W(0) = 0 exactly (G singular, D invertible), and a pole at 0 (D singular): neither is
    certified invertible; a generic model is."""
    from s4cert.algorithms.s4.filter import setup
    F = BallField(128)
    # step 1/2, h = 1/4: G = 1 - h(lambda - p conj(q)) = 1 - (1/4)(-1 + 5) = 0
    for m in (DPLR([-1], [[-5]], [1], [1], Q=[[1]]), DPLR([4, -1], [[1], [0]], [1, 1], [1, 1], Q=[[1], [1]]),
              DPLR([-1, -2], [[1], [2]], [1, 1], [1, 1], Q=[[1], [1]])):
        st_ = setup(F, m, Fraction(1, 2), 8, [F.zero()] * m.N).value
        ok = correction.g_certainly_invertible(F, st_.poles, st_.weights, st_.offsets, 1)
        assert ok is (m.Lambda[0] == -1 and len(m.Lambda) == 2)


def test_one_w0_decision_over_a_field_and_over_heads():
    """``w_certainly_nonsingular`` decides W(0) in a field (a bool) and over heads as an array
    axis (a mask): exactly singular heads are never certified, the others all are, and each
    head's answer is the one its own 128-bit ball run gives."""
    from s4cert.arith.array_field import DDArrayField
    from s4cert.arith.double_double import DD
    rng = np.random.default_rng(3)
    for r in (1, 2):
        W = rng.standard_normal((r, r, 12)) + 1j * rng.standard_normal((r, r, 12))
        W[..., :3] = 0.0                                   # three heads exactly singular
        if r == 2:
            W[0, 0, 3], W[0, 1, 3], W[1, 0, 3], W[1, 1, 3] = 2.0, 4.0, 1.0, 2.0   # det = 0, W != 0
        mask = correction.w_certainly_nonsingular(DDArrayField(), [[DD.exact(W[i, k]) for k in range(r)]
                                                                   for i in range(r)], r)
        F = BallField(128)
        each = [correction.w_certainly_nonsingular(F, [[F.from_number(complex(W[i, k, h])) for k in range(r)]
                                                       for i in range(r)], r) for h in range(12)]
        singular = 3 if r == 1 else 4
        assert list(mask) == each == [False] * singular + [True] * (12 - singular)
