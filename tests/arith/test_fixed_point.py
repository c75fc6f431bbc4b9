"""ShiftRoundedField gives RoundedField's results bit for bit."""
import random
from fractions import Fraction

from flint import acb, arb, ctx, fmpq

from s4cert.arith.fixed_point import ShiftRoundedField
from s4cert.arith.rounded import RoundedField
from s4cert.arith.tracing import trace
from s4cert.arith import BallField
from s4cert.algorithms.s4.filter import filter_kernel
from s4cert.certs.examples import example_model


def _same(a, b):
    return a.x == b.x and a.y == b.y


def test_operations_equal_rounded_field():
    rng = random.Random(1)
    for k in (1, 7, 64, 200):
        R, S = RoundedField(k), ShiftRoundedField(k)
        for _ in range(200):
            x = (Fraction(rng.randint(-10**6, 10**6), rng.randint(1, 999)), Fraction(rng.randint(-99, 99), rng.randint(1, 50)))
            y = (Fraction(rng.randint(-10**6, 10**6), rng.randint(1, 999)), Fraction(rng.randint(-99, 99), 3))
            a, b = R.from_number(x), R.from_number(y)
            assert _same(R.mul(a, b), S.mul(a, b))
            if b.x != 0 or b.y != 0:
                assert _same(R.div(a, b), S.div(a, b))
            assert R.to_fractions(a) == S.to_fractions(a)
            assert S.to_fractions(a)[0].denominator & (S.to_fractions(a)[0].denominator - 1) == 0
        for M, j in [(8, 1), (16, 3), (64, 5), (32, 31)]:
            assert _same(R.root_of_unity(M, j), S.root_of_unity(M, j))
        with ctx.workprec(k + 40):
            z = acb(arb(fmpq(-7, 3)), arb(fmpq(5, 11)))
        assert _same(R.from_number(z), S.from_number(z))


def test_real_operands_take_the_short_forms_with_the_same_results():
    """Products and quotients with a real factor, divisor or numerator (two products, or a
    quotient of the real divisor itself) give RoundedField's results bit for bit, for
    either sign of a real divisor and ties included."""
    rng = random.Random(2)
    for k in (1, 5, 64, 200):
        R, S = RoundedField(k), ShiftRoundedField(k)
        for _ in range(300):
            re = lambda: Fraction(rng.randint(-10**5, 10**5), rng.choice([1, 2, 3, 4, 7, 8, 999]))
            im = lambda: rng.choice([Fraction(0), re()])
            a, b = R.from_number((re(), im())), R.from_number((re(), im()))
            assert _same(R.mul(a, b), S.mul(a, b)) and _same(R.mul(b, a), S.mul(b, a))
            if b.x != 0 or b.y != 0:
                assert _same(R.div(a, b), S.div(a, b))
        half = R.from_number(Fraction(1, 2))
        for n in (-3, -1, 1, 3):  # n u / 2: a tie of the grid, for both signs of the divisor
            x = R.from_number(n * R.u)
            for d in (R.from_number(2), R.from_number(-2)):
                assert _same(R.div(x, d), S.div(x, d)) and _same(R.mul(x, half), S.mul(x, half))


def test_powers_of_two_take_shifts_with_the_same_results():
    """A factor or numerator that is a positive power of two on the grid (one, 1/2, 4, ...)
    is applied by a shift; the results are RoundedField's bit for bit."""
    rng = random.Random(3)
    for k in (1, 7, 64, 300):
        R, S = RoundedField(k), ShiftRoundedField(k)
        specials = [R.from_number(Fraction(2) ** e) for e in range(-3, 4)] + [R.from_number(-1), R.from_number(0)]
        for _ in range(60):
            y = (Fraction(rng.randint(-10**6, 10**6), rng.randint(1, 999)), Fraction(rng.randint(-99, 99), 7))
            b = R.from_number(y)
            for a in specials:
                assert _same(R.mul(a, b), S.mul(a, b)) and _same(R.mul(b, a), S.mul(b, a))
                if b.x != 0 or b.y != 0:
                    assert _same(R.div(a, b), S.div(a, b))


def test_circuit_runs_identically_with_live_wires_only():
    t = trace(BallField(128), filter_kernel, example_model(2), 0.25, 8,
              c_tilde=[1, (Fraction(1, 3), 2)])
    c = t.circuit
    full = c.run(ShiftRoundedField(300))
    live = c.run(ShiftRoundedField(300), live_only=True)
    ref = c.evaluate(RoundedField(300))
    assert [(full[i].x, full[i].y) for i in c.outputs] == [(live[i].x, live[i].y) for i in c.outputs]
    assert [(v.x, v.y) for v in ref] == [(live[i].x, live[i].y) for i in c.outputs]
    dropped = sum(v is None for v in live)
    assert dropped > len(live) // 2
    assert all(live[i] is not None for i in c.outputs)


def test_truncated_quotient_is_the_exact_rounding():
    """``_nearest_quotient`` equals floor((2n + d)/(2d)) for n = a 2^e, d > 0, whatever the
    cut and the guard bits; numerators next to a tie are left undecided by the cut (the
    exact formula answers), others are decided by it."""
    import s4cert.arith.fixed_point as fp
    from flint import fmpz
    rng = random.Random(4)
    for _ in range(4000):
        kb = rng.randint(1, 300)
        a = fmpz(rng.getrandbits(rng.randint(1, 2 * kb))) * rng.choice([1, -1])
        e = rng.randint(0, kb)
        d = fmpz(rng.getrandbits(rng.randint(1, 3 * kb))) + 1
        g = rng.choice([1, 2, 3, 8, 64])
        assert fp._nearest_quotient(a, e, d, guard=g, min_cut=0) == (2 * (a << e) + d) // (2 * d)
    decided = undecided = 0
    for _ in range(300):
        d = 2 * (fmpz(rng.getrandbits(400)) + 1)
        q = fmpz(rng.getrandbits(100)) * rng.choice([1, -1])
        for t in (-2, -1, 0, 1, 2, d // 5, -(d // 3)):  # ties (t = 0 goes upward) and near them
            n = q * d + d // 2 + t
            exact = (2 * n + d) // (2 * d)
            assert fp._nearest_quotient(n, 0, d, guard=8, min_cut=0) == exact
            c = fp._cut_quotient(n, 0, d, 200, 8)
            if c is None:
                undecided += 1
            else:
                decided += 1
                assert c == exact
            if abs(t) <= 2:
                assert c is None
    assert decided and undecided
    # cuts that leave d1 short against a large quotient: the error term E is then above 1
    # and must count |z| (a wrong E gives wrong answers here)
    big_err = 0
    for _ in range(3000):
        d = fmpz(rng.getrandbits(rng.randint(20, 120))) | 1
        q = fmpz(rng.getrandbits(rng.randint(1, 200))) * rng.choice([1, -1])
        n = q * d + d // 2 + rng.randint(-3, 3) if rng.random() < 0.5 else q * d + fmpz(rng.getrandbits(d.bit_length()))
        s = rng.randint(1, d.bit_length() - 2)
        g = rng.choice([1, 4, 16, 64])
        c = fp._cut_quotient(n, 0, d, s, g)
        assert c is None or c == (2 * n + d) // (2 * d)
        d1 = d >> s
        big_err += ((fmpz(1) << g) + abs((n >> s << g) // d1) + 1) // d1 + 1 > 1
    assert big_err > 1000
    a, d = fmpz(rng.getrandbits(5000)), fmpz(rng.getrandbits(9000)) + 1
    assert fp._nearest_quotient(a, 2500, d) == (2 * (a << 2500) + d) // (2 * d)


def test_long_quotients_equal_rounded_field():
    """At k = 3000 a complex divisor's quotient is formed by the cut (``MIN_CUT`` is below
    the cut there); RoundedField's quotients bit for bit."""
    import s4cert.arith.fixed_point as fp
    k = 3000
    R, S = RoundedField(k), ShiftRoundedField(k)
    rng = random.Random(6)
    den_bits = 2 * k
    assert den_bits - (k + fp.GUARD + 4) >= fp.MIN_CUT
    for _ in range(25):
        x = (Fraction(rng.randint(-10**9, 10**9), rng.randint(1, 10**6)), Fraction(rng.randint(-99, 99), 7))
        y = (Fraction(rng.randint(-10**9, 10**9), rng.randint(1, 10**6)), Fraction(rng.randint(1, 10**5), 13))
        a, b = R.from_number(x), R.from_number(y)
        assert _same(R.div(a, b), S.div(a, b))
        one = R.from_number(1)
        assert _same(R.div(one, b), S.div(one, b))
