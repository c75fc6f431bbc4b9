"""One conformance suite, run against every field.

Every field is checked against exact arithmetic on the same inputs:
exact fields (and counting/tracing over them) agree exactly; ball fields and the disk
array fields (float64, double-double and triple-double disks) contain the exact result; the rounded field
is within u of the exact result of each operation on the values it holds; float64 is within
the standard-model bound of each operation.
The capabilities (matrix kernels, modulus bounds, enclose/add_error, sqrt/exp) are
checked the same way, choosing the expectation by the field's flags.
"""
from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np
import pytest
from flint import acb, arb, ctx, fmpq, fmpq_poly, fmpz
from hypothesis import given, strategies as st

from s4cert.arith import (BallField, Counting, DDArrayField, DiskArrayField, ExactField, Float64Field, MRArrayField,
                          RoundedField, TDArrayField, Tracing, Truth, Unsupported)
from s4cert.arith.midrad import RangeError
from tests.helpers import Q2, encloses, exact_equal, gaussian

REF = ExactField(32)
U64 = Fraction(1, 2**53)
# Float64 per-operation bounds, relative to the modulus of the exact result on the
# operands as held: add/sub round each part once (<= u|z|); the textbook complex
# product is within sqrt(5)u (Brent, Percival and Zimmermann 2007) <= 2.25u;
# CPython divides by Smith's method: to first order the numerator parts carry 3u
# relative to (|a| + |b||r|), giving 3*sqrt(2)u, plus 3u in the denominator and u in
# the final division, 8.25u in all; 10u leaves room for the second-order terms.
FLOAT_BOUND = {"input": 1, "add": 1, "sub": 1, "neg": 0, "conj": 0, "mul": Fraction(9, 4), "div": 10}

FIELDS = {
    "exact16": lambda: ExactField(16),
    "exact4": lambda: ExactField(4),
    "counting-exact": lambda: Counting(ExactField(16)),
    "tracing-exact": lambda: Tracing(ExactField(16)),
    "ball": lambda: BallField(97),
    "counting-ball": lambda: Counting(BallField(64)),
    "tracing-ball": lambda: Tracing(BallField(80)),
    "rounded": lambda: RoundedField(70),
    "float64": lambda: Float64Field(),
    "mr-arrays": lambda: MRArrayField(),
    "dd-arrays": lambda: DDArrayField(),
    "td-arrays": lambda: TDArrayField(),
}
#: the optional functions each field supplies (all others supply sqrt and exp)
FUNCTIONS = {"mr-arrays": set(), "dd-arrays": {"exp"}, "td-arrays": set()}
#: the disk fields' refusal above the largest magnitude they keep (2^400 for float64 disks,
#: 2^500 for double-double ones); e^q is certified at least up to q = 300 < 500 log 2
EXP_CERTIFIED = 300


def unwrap(F, x):
    while isinstance(F, (Counting, Tracing)):
        x, F = x.v, F.base
    return F, x


def as_q2(F, x) -> Q2:
    """The exact value a rounded or float64 element holds."""
    if isinstance(F, RoundedField):
        return Q2(*F.to_fractions(x))
    return Q2(Fraction(x.real), Fraction(x.imag))


def ref_of(q: Q2):
    return REF.from_number((q.re, q.im))


def agrees(F, x, exact_ref, op: str | None = None, operands: list | None = None) -> bool:
    """Whether element x of F is acceptable for the exact value ``exact_ref`` (in REF).

    For rounded and float64 fields ``operands`` (the Q2 values held) and ``op`` give the
    exact result to compare with; ``exact_ref`` is then unused."""
    F, x = unwrap(F, x)
    if isinstance(F, ExactField):
        return exact_equal(REF, _lift(F, x), exact_ref)
    if isinstance(F, BallField):
        return encloses(x, REF, exact_ref)
    if isinstance(F, DiskArrayField):
        return disk_holds(x, REF.to_acb(exact_ref, 4096))
    exact = _apply(op, operands)
    err2 = (as_q2(F, x) - exact).abs2()
    if isinstance(F, RoundedField):
        return err2 <= F.u * F.u
    bound = FLOAT_BOUND[op] * U64
    return err2 <= bound * bound * exact.abs2()


def _lift(F: ExactField, x):
    """x in Q(zeta_n) as an element of REF = Q(zeta_32): zeta_n = zeta_32^(32/n)."""
    step = REF.order // F.order
    coeffs = [0] * (REF.h)
    for e, c in enumerate(x.coeffs()):
        coeffs[e * step] = c
    return REF.from_number(fmpq_poly(coeffs))


def _apply(op, xs):
    if op in ("add", "sub", "mul"):
        return {"add": xs[0] + xs[1], "sub": xs[0] - xs[1], "mul": xs[0] * xs[1]}[op]
    if op == "div":
        return xs[0] / xs[1]
    if op == "neg":
        return -xs[0]
    if op == "conj":
        return xs[0].conj()
    return xs[0]  # "input": the conversion itself


def midpoint_balls(x) -> list:
    """The midpoints of a disk array as exact balls (sums of floats at 4096 bits are exact):
    ``mid`` for float64 disks, the sums of the parts ``r*`` and ``i*`` for multi-float ones."""
    names = [f.name for f in dataclasses.fields(x) if f.name != "rad"]
    with ctx.workprec(4096):
        if names == ["mid"]:
            return [acb(float(v.real), float(v.imag)) for v in np.ravel(x.mid)]
        re = [np.ravel(getattr(x, n)) for n in names if n.startswith("r")]
        im = [np.ravel(getattr(x, n)) for n in names if n.startswith("i")]
        return [acb(sum((arb(float(p[k])) for p in re), arb(0)), sum((arb(float(p[k])) for p in im), arb(0)))
                for k in range(re[0].size)]


def disk_holds(x, value: acb) -> bool:
    """Every entry's disk certainly contains the ball ``value``: upper(|value - mid|) <= rad,
    decided at 4096 bits."""
    with ctx.workprec(4096):
        return all(abs(value - m).upper() <= arb(float(r)) for m, r in zip(midpoint_balls(x), np.ravel(x.rad)))


def held(F, x) -> Q2:
    G, y = unwrap(F, x)
    return as_q2(G, y)


fields = pytest.mark.parametrize("name", sorted(FIELDS))


OPS = ["add", "sub", "mul", "div", "neg", "conj"]


@fields
@pytest.mark.parametrize("op", OPS)
@given(a=gaussian(), b=gaussian())
def test_each_operation_against_exact(name, op, a, b):
    F = FIELDS[name]()
    if op == "div" and a[0] == 0 and a[1] == 0 and b[0] == 0 and b[1] == 0:
        return
    x, y = F.from_number(a), F.from_number(b)
    if op == "div" and F.is_zero(y) is not Truth.FALSE:
        return
    ex, ey = REF.from_number(a), REF.from_number(b)
    got = getattr(F, op)(x, y) if op in ("add", "sub", "mul", "div") else getattr(F, op)(x)
    want = getattr(REF, op)(ex, ey) if op in ("add", "sub", "mul", "div") else getattr(REF, op)(ex)
    G, _ = unwrap(F, x)
    operands = [held(F, x), held(F, y)] if isinstance(G, (RoundedField, Float64Field)) else None
    assert agrees(F, got, want, op, operands)


@fields
@given(a=gaussian(), b=gaussian(), c=gaussian())
def test_ring_axioms(name, a, b, c):
    """Both sides of each axiom agree with the exact value (exactly, or by containment)."""
    F = FIELDS[name]()
    G, _ = unwrap(F, F.one())
    if isinstance(G, (RoundedField, Float64Field)):
        return  # rounding fields are checked operation by operation above
    x, y, z = (F.from_number(v) for v in (a, b, c))
    ex, ey, ez = (REF.from_number(v) for v in (a, b, c))
    E = REF
    cases = [
        (F.add(x, y), F.add(y, x), E.add(ex, ey)),
        (F.mul(x, y), F.mul(y, x), E.mul(ex, ey)),
        (F.add(F.add(x, y), z), F.add(x, F.add(y, z)), E.add(E.add(ex, ey), ez)),
        (F.mul(F.mul(x, y), z), F.mul(x, F.mul(y, z)), E.mul(E.mul(ex, ey), ez)),
        (F.mul(x, F.add(y, z)), F.add(F.mul(x, y), F.mul(x, z)), E.mul(ex, E.add(ey, ez))),
        (F.add(x, F.zero()), F.mul(x, F.one()), ex),
        (F.add(x, F.neg(x)), F.sub(x, x), E.zero()),
        (F.conj(F.mul(x, y)), F.mul(F.conj(x), F.conj(y)), E.conj(E.mul(ex, ey))),
        (F.conj(F.conj(x)), x, ex),
    ]
    for lhs, rhs, want in cases:
        assert agrees(F, lhs, want) and agrees(F, rhs, want)
    if F.is_zero(y) is Truth.FALSE:
        assert agrees(F, F.mul(F.div(x, y), y), ex)


@fields
@given(a=gaussian())
def test_zero_tests(name, a):
    F = field = FIELDS[name]()
    x = F.from_number(a)
    t = F.is_zero(x)
    if a[0] == 0 and a[1] == 0:
        assert t is Truth.TRUE
    else:
        assert t is Truth.FALSE or (t is Truth.UNKNOWN and not field.exact)
    assert F.is_zero(F.sub(x, x)) in (Truth.TRUE, Truth.UNKNOWN)
    if field.exact:
        assert F.is_zero(F.sub(x, x)) is Truth.TRUE
    with pytest.raises(TypeError):
        bool(t)


@fields
@pytest.mark.parametrize("M", [1, 2, 4, 8, 16, 32])
def test_roots_of_unity(name, M):
    F = FIELDS[name]()
    G, _ = unwrap(F, F.one())
    if isinstance(G, ExactField) and G.order % M:
        with pytest.raises(ValueError):
            F.root_of_unity(M, 1)
        return
    for k in range(-M, 2 * M):
        w = F.root_of_unity(M, k)
        want = REF.root_of_unity(M, k)
        G, v = unwrap(F, w)
        if isinstance(G, ExactField):
            assert exact_equal(REF, _lift(G, v), want)
        elif isinstance(G, BallField):
            assert encloses(v, REF, want)
        elif isinstance(G, DiskArrayField):
            assert disk_holds(v, REF.to_acb(want, 4096))
        else:
            # rounded: u; float64: the angle 2*pi*k/M carries <= 2u|angle| <= 4*pi*u and
            # libm's exp within one ulp per part adds ~2u: 16u is a safe bound
            bound = G.u if isinstance(G, RoundedField) else 16 * U64
            with ctx.workprec(400):
                got = acb(arb(fmpq(*_nd(held(F, w).re))), arb(fmpq(*_nd(held(F, w).im))))
                assert abs(got - REF.to_acb(want, 400)) < arb(fmpq(*_nd(bound)))
        if (4 * k) % M == 0:  # quarter points are exact in every field
            assert held_exact(F, w, want)


def _nd(q: Fraction):
    return q.numerator, q.denominator


def held_exact(F, w, want) -> bool:
    G, v = unwrap(F, w)
    if isinstance(G, ExactField):
        return exact_equal(REF, _lift(G, v), want)
    if isinstance(G, BallField):
        return v.is_exact() and encloses(v, REF, want)
    if isinstance(G, DiskArrayField):
        return bool(np.all(v.rad == 0)) and disk_holds(v, REF.to_acb(want, 4096))
    re, im = REF.to_fractions(want)
    h = held(F, w)
    return h.re == re and h.im == im


INPUTS = [
    (3, Q2(3)), (-7, Q2(-7)), (0.5, Q2(Fraction(1, 2))), (0.1, Q2(Fraction(0.1))),
    (1.5 - 2.25j, Q2(Fraction(3, 2), Fraction(-9, 4))), (Fraction(1, 3), Q2(Fraction(1, 3))),
    (fmpq(2, 7), Q2(Fraction(2, 7))), (fmpz(5), Q2(5)), ((Fraction(1, 3), 2), Q2(Fraction(1, 3), 2)),
    (np.float32(0.1), Q2(Fraction(float(np.float32(0.1))))), (np.int64(4), Q2(4)),
    (np.complex128(2 + 1j), Q2(2, 1)),
]


@pytest.mark.parametrize("number,value", INPUTS, ids=[repr(i[0]) for i in INPUTS])
@fields
def test_conversions_in(name, number, value):
    F = FIELDS[name]()
    x = F.from_number(number)
    assert agrees(F, x, ref_of(value), "input", [value])
    assert F.from_number(x) is x  # own elements pass through


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), complex(1, float("nan")), "1", True, [1], (1, 2, 3)])
@fields
def test_bad_numbers_rejected(name, bad):
    with pytest.raises(ValueError):
        FIELDS[name]().from_number(bad)


@fields
def test_vectors_and_matrices(name):
    F = FIELDS[name]()
    v = F.vector(np.array([1.0, 2.5, -3.0]))
    assert len(v) == 3 and agrees(F, v[1], ref_of(Q2(Fraction(5, 2))), "input", [Q2(Fraction(5, 2))])
    m = F.matrix([[1, 2], [3, 4]])
    assert len(m) == 2 and agrees(F, m[1][0], ref_of(Q2(3)), "input", [Q2(3)])
    m2 = F.matrix(np.eye(2, dtype=complex))
    assert agrees(F, m2[0][0], ref_of(Q2(1)), "input", [Q2(1)])
    with pytest.raises(ValueError):
        F.vector(np.zeros((2, 2)))
    with pytest.raises(ValueError):
        F.matrix([[1, 2], [3]])


@fields
@given(a=gaussian())
def test_to_complex(name, a):
    F = FIELDS[name]()
    z = F.to_complex(F.from_number(a))
    assert isinstance(z, complex)
    want = complex(float(a[0]), float(a[1]))
    # every field holds the input within 2^-53 relative (float64 rounding) or u (rounded)
    assert abs(z - want) <= 4 * 2**-53 * abs(want) + 2**-60


@pytest.mark.parametrize("op", OPS)
@given(prec=st.integers(30, 300), a=gaussian(10**6, 10**6), b=gaussian(10**6, 10**6))
def test_ball_contains_exact_at_random_precision(op, prec, a, b):
    F = BallField(prec)
    x, y = F.from_number(a), F.from_number(b)
    if op == "div" and a[0] == 0 and a[1] == 0 and b[0] == 0 and b[1] == 0:
        return
    ex, ey = REF.from_number(a), REF.from_number(b)
    if op in ("add", "sub", "mul", "div"):
        if op == "div" and REF.is_zero(ey) is Truth.TRUE:
            return
        got, want = getattr(F, op)(x, y), getattr(REF, op)(ex, ey)
    else:
        got, want = getattr(F, op)(x), getattr(REF, op)(ex)
    assert encloses(got, REF, want)
    # the field's precision is applied: the radius is prec bits below the operands' scale
    ax, ay = abs(F.midpoint(x)), abs(F.midpoint(y))
    scale = (1 + ax) * (1 + ay) * ((1 + 1 / ay) ** 2 if op == "div" else 1)
    assert F.radius(got) <= 2.0 ** (-prec + 8) * scale


def test_long_double_read_exactly():
    x = np.longdouble(1) / 3
    z = np.clongdouble(x) + 1j * np.clongdouble(x) / 7
    from s4cert.arith import exact_parts
    assert exact_parts(x)[0] == Fraction(*x.as_integer_ratio())
    re, im = exact_parts(z)
    assert re == Fraction(*z.real.as_integer_ratio()) and im == Fraction(*z.imag.as_integer_ratio())


# -- the capabilities of the interface, for every field ----------------------------------

def exact_value(F, x, a) -> Q2:
    """The value element x (made from input a) stands for: the input itself where the field
    encloses, else the point the field holds."""
    return Q2(*a) if F.encloses else held(F, x)


@fields
@given(data=st.data(), n=st.integers(1, 3), m=st.integers(1, 4), p=st.integers(1, 3))
def test_matrix_kernels_against_exact(name, data, n, m, p):
    """dot, matvec and matmul: exact in exact fields, containing in ball fields; in rounded
    fields each product errs by at most u and sums are exact (m u in all, on the held
    values); in float64 the classical sum errs by at most (m + 3) u sum |x_i y_i|."""
    F = FIELDS[name]()
    A = data.draw(st.lists(st.lists(gaussian(), min_size=m, max_size=m), min_size=n, max_size=n))
    B = data.draw(st.lists(st.lists(gaussian(), min_size=p, max_size=p), min_size=m, max_size=m))
    FA, FB = F.matrix(A), F.matrix(B)
    col = [r[0] for r in FB]
    outs = [(F.matmul(FA, FB), [[(A[i], [r[j] for r in B], FA[i], [r[j] for r in FB]) for j in range(p)]
                                for i in range(n)]),
            ([F.matvec(FA, col)], [[(A[i], [r[0] for r in B], FA[i], col) for i in range(n)]]),
            ([[F.dot(FA[0], col)]], [[(A[0], [r[0] for r in B], FA[0], col)]])]
    for got, args in outs:
        assert [len(r) for r in got] == [len(r) for r in args]
        for g, (xs, ys, fx, fy) in zip((g for r in got for g in r), (a for r in args for a in r)):
            G, _ = unwrap(F, g)
            if F.encloses:
                want = REF.from_number((0, 0))
                for x, y in zip(xs, ys):
                    want = REF.add(want, REF.mul(REF.from_number(x), REF.from_number(y)))
                assert agrees(F, g, want)
                continue
            terms = [held(F, x) * held(F, y) for x, y in zip(fx, fy)]
            err2 = (held(F, g) - sum(terms[1:], terms[0])).abs2()
            if isinstance(G, RoundedField):
                assert err2 <= (m * G.u) ** 2
            else:
                bound = (m + 3) * U64 * sum(Fraction(math.sqrt(t.abs2())) * (1 + U64) for t in terms)
                assert err2 <= bound * bound


@fields
@given(a=gaussian(10**4, 10**4))
def test_modulus_bounds(name, a):
    F = FIELDS[name]()
    x = F.from_number(a)
    low, up = F.abs_lower(x), F.abs_upper(x)
    assert isinstance(low, float) and isinstance(up, float) and 0.0 <= low <= up
    assert Fraction(low) ** 2 <= exact_value(F, x, a).abs2() <= Fraction(up) ** 2
    if F.exact and (a[0] or a[1]):
        assert low > 0.0


@fields
@given(a=gaussian(), e=st.sampled_from([0, Fraction(1, 3), 0.25, 7]))
def test_enclose_and_add_error(name, a, e):
    """Enclosing fields enclose their elements in balls; only fields whose elements are
    not exact points can enlarge them by an error bound."""
    F = FIELDS[name]()
    x = F.from_number(a)
    if F.encloses:
        assert encloses(F.enclose(x), REF, REF.from_number(a))
    else:
        with pytest.raises(Unsupported):
            F.enclose(x)
    if F.encloses and not F.exact:
        y = F.add_error(x, e)
        q = Fraction(e)
        for d in [(1, 0), (0, -1), (Fraction(3, 5), Fraction(-4, 5))]:
            assert agrees(F, y, REF.from_number((a[0] + q * d[0], a[1] + q * d[1])))
    else:
        with pytest.raises(Unsupported):
            F.add_error(x, e)


@fields
@given(q=st.builds(Fraction, st.integers(0, 400), st.integers(1, 20)))
def test_sqrt_and_exp(name, q):
    """sqrt of a rational q >= 0 (given as a number or an element): exact fields hold
    rational roots only; enclosing fields contain the root; RoundedField is within u of
    sqrt(q); float64 within 2u relative.  exp: enclosing fields contain it (the disk fields
    up to their range, refused beyond it), float64 close.  A field that does not supply a
    function (FUNCTIONS) raises Unsupported."""
    F = FIELDS[name]()
    G, _ = unwrap(F, F.one())
    with ctx.workprec(300):
        root, ex = arb(fmpq(q.numerator, q.denominator)).sqrt(), arb(fmpq(q.numerator, q.denominator)).exp()
    is_square = Fraction(math.isqrt(q.numerator), math.isqrt(q.denominator)) ** 2 == q
    supplied = FUNCTIONS.get(name, {"sqrt", "exp"})
    for arg in (q, F.from_number(q)):
        if "sqrt" not in supplied:
            with pytest.raises(Unsupported):
                F.sqrt(arg)
            continue
        if F.exact and not is_square:
            with pytest.raises(Unsupported, match="irrational"):
                F.sqrt(arg)
            continue
        r = F.sqrt(arg)
        if F.exact:
            want = Fraction(math.isqrt(q.numerator), math.isqrt(q.denominator))
            assert agrees(F, r, REF.from_number(want))
        elif F.encloses:
            assert F.enclose(r).real.contains(root.mid())
        else:
            h = held(F, r)
            tol = G.u if isinstance(G, RoundedField) else 2 * U64 * float(root.mid())
            with ctx.workprec(300):
                assert h.im == 0 and abs(arb(fmpq(*_nd(h.re))) - root) <= arb(fmpq(*_nd(Fraction(tol))))
    if "exp" not in supplied:
        with pytest.raises(Unsupported):
            F.exp(q)
    elif isinstance(G, DiskArrayField):
        try:
            e = F.exp(q)
        except RangeError:
            assert q > EXP_CERTIFIED
        else:
            assert disk_holds(e, acb(ex))
    elif F.encloses and not F.exact:
        assert unwrap(F, F.exp(q))[1].real.contains(ex.mid())
    elif isinstance(G, Float64Field):  # exp of the float q holds, within a few ulps
        with ctx.workprec(300):
            ex = arb(float(q)).exp()
        assert abs(F.exp(q) - float(ex.mid())) <= 4 * U64 * float(ex.mid())
    elif F.exact and not q:
        assert agrees(F, F.exp(q), REF.one())
    else:
        with pytest.raises(Unsupported):
            F.exp(q)
