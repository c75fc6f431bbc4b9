"""The capabilities of the field interface: flags, enclosure operations, vector and
matrix kernels, sqrt/exp, and how Counting and Tracing pass them through."""
from __future__ import annotations

import math
from fractions import Fraction

import pytest
from flint import acb, arb, ctx, fmpq
from hypothesis import given, strategies as st

from s4cert.arith import (BallField, Counting, ExactField, Field, Float64Field, RoundedField, Tracing,
                          Truth, Unsupported, trace)
from tests.helpers import Q2, encloses, exact_equal, fractions, gaussian

E = ExactField(4)


def matrices(rows: int, cols: int):
    return st.lists(st.lists(gaussian(), min_size=cols, max_size=cols), min_size=rows, max_size=rows)


def shapes():
    return st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4))


def exact_abs2(q: Q2) -> Fraction:
    return q.abs2()


# -- flags ----------------------------------------------------------------------------

@pytest.mark.parametrize("F,exact,encl,prec", [
    (ExactField(8), True, True, None), (BallField(77), False, True, 77),
    (Float64Field(), False, False, None), (RoundedField(40), False, False, None),
])
def test_flags_and_their_pass_through(F, exact, encl, prec):
    for G in (F, Counting(F), Tracing(F), Counting(Tracing(F))):
        assert (G.exact, G.encloses, G.prec) == (exact, encl, prec)


# -- BallField kernels contain the exact products --------------------------------------

@given(shape=shapes(), data=st.data(), prec=st.integers(10, 200))
def test_ball_matmul_matvec_dot_contain_exact(shape, data, prec):
    n, m, p = shape
    A = data.draw(matrices(n, m))
    B = data.draw(matrices(m, p))
    F = BallField(prec)
    FA, FB = F.matrix(A), F.matrix(B)
    EA, EB = E.matrix(A), E.matrix(B)
    got, want = F.matmul(FA, FB), E.matmul(EA, EB)
    assert len(got) == n and all(len(r) == p for r in got)
    assert all(encloses(g, E, w) for gr, wr in zip(got, want) for g, w in zip(gr, wr))
    x = [r[0] for r in B]
    assert all(encloses(g, E, w) for g, w in zip(F.matvec(FA, F.vector(x)), E.matvec(EA, E.vector(x))))
    assert encloses(F.dot(FA[0], F.vector(x)), E, E.dot(EA[0], E.vector(x)))


def test_ball_kernels_run_at_the_field_precision_and_restore_it():
    old = ctx.prec
    F = BallField(300)
    third = F.div(F.one(), F.from_number(3))
    y = F.dot([third, third], [F.one(), F.one()])
    assert ctx.prec == old
    assert F.radius(y) < 2.0 ** -290 and encloses(y, E, E.from_number(Fraction(2, 3)))


def test_kernels_of_empty_and_mismatched_shapes():
    for F in (BallField(64), E, Counting(BallField(64))):
        assert F.is_zero(F.dot([], [])) is Truth.TRUE
        assert F.matvec([], []) == [] and F.matmul([], []) == []
        with pytest.raises(ValueError):
            F.dot([F.one()], [])
        with pytest.raises(ValueError):
            F.matmul([[F.one(), F.one()]], [[F.one()]])


@given(a=gaussian(), b=gaussian())
def test_dot_is_the_classical_sum_in_exact_fields(a, b):
    x, y = E.from_number(a), E.from_number(b)
    assert exact_equal(E, E.dot([x, y], [y, x]), E.add(E.mul(x, y), E.mul(y, x)))


# -- add_error ----------------------------------------------------------------------

UNIT = [(Fraction(1), Fraction(0)), (Fraction(0), Fraction(-1)), (Fraction(3, 5), Fraction(4, 5)),
        (Fraction(-5, 13), Fraction(12, 13)), (Fraction(-1, 2), Fraction(-1, 3))]


@given(a=gaussian(), e=st.one_of(fractions(20, 1000).map(abs), st.floats(0, 10)),
       d=st.sampled_from(UNIT), prec=st.integers(10, 120))
def test_ball_add_error_contains_the_disk(a, e, d, prec):
    """Every z within e of a point of x is in add_error(x, e); for e = 1/3 the radius
    must be rounded up, not to the nearest float."""
    F = BallField(prec)
    x = F.from_number(a)
    y = F.add_error(x, e)
    q = Fraction(e)
    z = (a[0] + q * d[0], a[1] + q * d[1])  # |z - a| <= e: a point of the disk
    assert encloses(y, E, E.from_number(z))
    # not much wider than needed (radii are 30-bit magnitudes, rounded up)
    slack = 2.0 ** (-prec + 8) * (1 + abs(F.midpoint(x)))
    assert F.radius(y) <= 2 * float(q) * (1 + 2**-26) + 2 * F.radius(x) + slack


def test_add_error_rounds_a_rational_bound_up():
    F = BallField(200)
    y = F.add_error(F.zero(), Fraction(1, 3))
    assert encloses(y, E, E.from_number(Fraction(1, 3))) and encloses(y, E, E.from_number((0, Fraction(-1, 3))))
    with pytest.raises(ValueError):
        F.add_error(F.zero(), -1)
    with pytest.raises(ValueError):
        F.add_error(F.zero(), float("nan"))
    assert F.abs_upper(F.add_error(F.one(), math.inf)) == math.inf


@pytest.mark.parametrize("F", [ExactField(4), Float64Field(), RoundedField(30), Counting(Float64Field()),
                               Tracing(ExactField(4))])
def test_add_error_unsupported_where_elements_carry_no_error(F):
    with pytest.raises(Unsupported):
        F.add_error(F.one(), 0.5)
    assert issubclass(Unsupported, ValueError)


# -- modulus bounds ---------------------------------------------------------------------

BOUND_FIELDS = [ExactField(8), BallField(30), BallField(200), Float64Field(), RoundedField(20),
                Counting(BallField(60)), Tracing(ExactField(4))]


def held_value(F, x) -> Q2:
    """The exact value a point element holds (exact, float64, rounded)."""
    while isinstance(F, (Counting, Tracing)):
        F, x = F.base, x.v
    if isinstance(F, RoundedField):
        return Q2(*F.to_fractions(x))
    if isinstance(F, Float64Field):
        return Q2(Fraction(x.real), Fraction(x.imag))
    return None


@pytest.mark.parametrize("F", BOUND_FIELDS, ids=repr)
@given(a=gaussian(10**6, 10**6))
def test_abs_bounds_are_certain(F, a):
    x = F.from_number(a)
    up, low = F.abs_upper(x), F.abs_lower(x)
    assert isinstance(up, float) and isinstance(low, float) and 0.0 <= low <= up
    held = held_value(F, x)
    v = held if held is not None else Q2(*a)  # enclosing fields contain the input itself
    assert Fraction(low) ** 2 <= v.abs2() <= Fraction(up) ** 2
    if F.exact and (a[0] or a[1]):
        assert low > 0.0


def test_abs_bounds_of_wide_and_unbounded_balls():
    F = BallField(64)
    x = F.add_error(F.one(), 2)
    assert F.abs_lower(x) == 0.0 and F.abs_upper(x) >= 3.0
    nan = acb(arb("nan"))
    assert F.abs_upper(nan) == math.inf and F.abs_lower(nan) == 0.0


def test_exact_abs_lower_of_a_tiny_nonzero_element():
    F = ExactField(8)
    x = F.sub(F.root_of_unity(8, 1), F.from_number(Fraction(1, 10**30)))
    x = F.sub(x, F.root_of_unity(8, 1))
    assert 0.0 < F.abs_lower(x) <= 1e-30 <= F.abs_upper(x)


# -- enclose ----------------------------------------------------------------------------

def test_enclose():
    B = BallField(90)
    x = B.from_number(Fraction(1, 3))
    assert B.enclose(x) is x and Counting(B).enclose(Counting(B).from_number(x)) is x
    F = ExactField(16)
    w = F.root_of_unity(16, 3)
    z = F.enclose(w, 300)
    assert z.rad() < 2.0 ** -290
    with ctx.workprec(400):
        assert z.contains(acb.exp_pi_i(acb(fmpq(-6, 16))).mid())
    assert F.enclose(w).rad() < 2.0 ** -120
    for G in (Float64Field(), RoundedField(20), Tracing(Float64Field())):
        with pytest.raises(Unsupported):
            G.enclose(G.one())


# -- sqrt and exp -------------------------------------------------------------------------

@given(q=fractions(10**4, 10**3).map(abs), prec=st.integers(20, 200))
def test_ball_sqrt_and_exp_contain_the_values(q, prec):
    F = BallField(prec)
    with ctx.workprec(prec + 100):
        r_true, e_true = arb(fmpq(q.numerator, q.denominator)).sqrt(), arb(fmpq(q.numerator, q.denominator)).exp()
    for arg in (q, F.from_number(q)):
        r = F.sqrt(arg)
        assert r.imag.is_zero() and r.real.contains(r_true.mid())
        assert F.exp(arg).real.contains(e_true.mid())


def test_ball_sqrt_at_the_branch_cut():
    F = BallField(64)
    assert F.sqrt(-4).contains(acb(0, 2))  # the principal root of a point on the cut
    with ctx.workprec(64):
        straddle = acb(arb(-1, 0.1), arb(0, 0.01))
    r = F.sqrt(straddle)  # holds the roots of points just above and just below the cut
    assert r.contains(acb(0, 1)) and r.contains(acb(0, -1))


def test_float64_sqrt_exp():
    F = Float64Field()
    assert F.sqrt(2) == complex(math.sqrt(2)) and F.sqrt(F.from_number(-4)) == 2j
    assert F.exp(1) == complex(math.e) and F.exp(0) == 1


@given(q=fractions(10**6, 10**3).map(abs), k=st.integers(1, 80))
def test_rounded_sqrt_within_u(q, k):
    R = RoundedField(k)
    re, im = R.to_fractions(R.sqrt(q))
    assert im == 0
    with ctx.workprec(k + 200):  # |re - sqrt(q)| <= u  <=>  (re - u)^2 <= q <= (re + u)^2 (re >= u)
        s = arb(fmpq(q.numerator, q.denominator)).sqrt()
        assert abs(arb(fmpq(re.numerator, re.denominator)) - s) <= arb(fmpq(1, 2**k))
    x = R.from_number(Fraction(9, 4))
    assert R.to_fractions(R.sqrt(x)) == (Fraction(3, 2), 0)


def test_exact_sqrt_only_of_rational_squares():
    F = ExactField(4)
    assert F.to_fractions(F.sqrt(Fraction(9, 4))) == (Fraction(3, 2), 0)
    assert F.to_fractions(F.sqrt(F.from_number(16))) == (4, 0)
    assert F.to_fractions(F.exp(0)) == (1, 0)
    for bad in (2, -4, (0, 1), F.root_of_unity(4, 1)):
        with pytest.raises(Unsupported, match="irrational"):
            F.sqrt(bad)
    with pytest.raises(Unsupported):
        F.exp(1)


def test_unsupported_by_default():
    class Bare(Field):
        pass

    F = Bare()
    for op, args in [("sqrt", (2,)), ("exp", (1,)), ("enclose", (1,)), ("add_error", (1, 0.1)),
                     ("abs_upper", (1,)), ("abs_lower", (1,))]:
        with pytest.raises(Unsupported):
            getattr(F, op)(*args)
    R = RoundedField(10)
    for bad in (-1, (1, 1)):
        with pytest.raises(Unsupported):
            R.sqrt(bad)
    with pytest.raises(Unsupported):
        R.exp(1)


# -- Counting -----------------------------------------------------------------------------

@pytest.mark.parametrize("n,m,p", [(1, 1, 1), (2, 3, 4), (4, 4, 2)])
def test_counting_counts_the_classical_matmul(n, m, p):
    C = Counting(BallField(64))
    A = C.matrix([[i + j for j in range(m)] for i in range(n)])
    B = C.matrix([[i * j + 1 for j in range(p)] for i in range(m)])
    C.reset()
    out = C.matmul(A, B)
    assert C.counts["mul"] == n * m * p and C.counts["add"] == n * (m - 1) * p
    assert C.word_writes == n * p * (2 * m - 1)
    want = BallField(64).matmul([[C.unwrap(x) for x in r] for r in A], [[C.unwrap(x) for x in r] for r in B])
    assert all(C.unwrap(g).overlaps(w) for gr, wr in zip(out, want) for g, w in zip(gr, wr))
    C.reset()
    C.matvec(A, B[0][:m] if p >= m else [C.one()] * m)
    assert C.counts["mul"] == n * m and C.counts["add"] == n * (m - 1)


def test_counting_counts_the_new_kinds():
    C = Counting(BallField(64))
    x = C.from_number(2)
    C.reset()
    C.sqrt(x), C.exp(x), C.add_error(x, 0.5)
    assert (C.counts["sqrt"], C.counts["exp"], C.counts["add_error"]) == (1, 1, 1)
    assert C.summary()["ops"] == 3 and C.summary()["sqrt"] == 1
    C.reset()
    r = C.sqrt(2)  # of a number: a supplied constant, like const
    assert sum(C.counts.values()) == 0 and C.word_writes == 1 and (C.unwrap(r) ** 2).contains(2)
    assert "sqrt" not in C.summary()  # kinds never used stay out of the summary
    C.abs_upper(x), C.abs_lower(x), C.enclose(x)
    assert sum(C.counts.values()) == 0


# -- Tracing --------------------------------------------------------------------------------

def _enlarged(F, a, b):
    x, y = F.from_number(a), F.from_number(b)
    s = F.add_error(F.mul(x, y), Fraction(1, 3))
    return [s, F.add(s, F.sqrt(x)), F.sqrt(2)]


def test_tracing_records_and_replays_add_error_and_sqrt():
    B = BallField(100)
    t = trace(B, _enlarged, 4, Fraction(1, 7))
    kinds = [ins[0] for ins in t.circuit.instructions]
    assert kinds == ["input", "input", "mul", "add_error", "sqrt", "add", "sqrt_const"]
    assert t.circuit.gates == 2  # mul and add; add_error and the roots are not rational gates
    assert t.circuit.instructions[3] == ("add_error", 2, Fraction(1, 3))
    assert t.circuit.non_rational_steps() == [3, 4]  # the supplied constant sqrt(2) is within the model
    for G in (BallField(100), BallField(300)):
        out = t.circuit.evaluate(G)
        # 4/7 + 1/3 lies in the enlarged product; 4/7 + 1/3 + 2 in the second output
        assert encloses(out[0], E, E.from_number(Fraction(4, 7) + Fraction(1, 3)))
        assert encloses(out[1], E, E.from_number(Fraction(4, 7) - Fraction(1, 3) + 2))
        assert (out[2] ** 2).contains(2)
    out = t.circuit.evaluate(B, [9, 1])  # new inputs, same steps
    assert encloses(out[1], E, E.from_number(9 + 3 + Fraction(1, 3)))
    for G in (ExactField(4), Float64Field(), RoundedField(40)):  # fields that cannot carry an error
        with pytest.raises(Unsupported):
            t.circuit.evaluate(G)


def test_tracing_replays_exp_and_reads_bounds_without_recording():
    T = Tracing(BallField(80))
    x = T.from_number(1)
    y, z = T.exp(x), T.exp(0)
    n = len(T.circuit.instructions)
    assert T.abs_upper(y) >= math.e >= T.abs_lower(y) > 2.7 and T.enclose(z).contains(1)
    assert len(T.circuit.instructions) == n
    assert [ins[0] for ins in T.circuit.instructions] == ["input", "exp", "exp_const"]
    out = T.circuit.run(Float64Field())
    assert out[1] == complex(math.e) and out[2] == 1


def test_ball_solve_primitive_encloses_the_exact_solution_or_says_none():
    from fractions import Fraction

    from s4cert.arith import BallField, ExactField

    F, E = BallField(100), ExactField(4)
    A = [[Fraction(2), Fraction(1, 3)], [Fraction(-1, 7), Fraction(5)]]
    B = [[Fraction(1)], [Fraction(-2, 9)]]
    X = F.primitive("solve")([[F.from_number(x) for x in r] for r in A], [[F.from_number(x) for x in r] for r in B])
    det = A[0][0] * A[1][1] - A[0][1] * A[1][0]
    exact = [(A[1][1] * B[0][0] - A[0][1] * B[1][0]) / det, (A[0][0] * B[1][0] - A[1][0] * B[0][0]) / det]
    for row, q in zip(X, exact):
        assert row[0].contains(F.from_number(q))
    singular = [[F.one(), F.one()], [F.one(), F.one()]]
    assert F.primitive("solve")(singular, [[F.one()], [F.one()]]) is None
    assert E.primitive("solve") is None
