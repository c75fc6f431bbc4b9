"""The ball route's sweeps: the fields' elementwise primitives, the product tree shared
by several weight sets, and the correction done at every root at once
(arith/base.py, arith/ball.py, algorithms/cauchy/tree.py, algorithms/s4/correction.py)."""
from __future__ import annotations

from fractions import Fraction

import pytest
from flint import acb, arb, ctx
from hypothesis import given, settings, strategies as st

from s4cert.algorithms.cauchy.tree import cauchy_on_roots, cauchy_on_roots_many
from s4cert.algorithms.dft import dft, idft
from s4cert.algorithms.s4 import correction
from s4cert.arith import BallField, Counting, ExactField, Float64Field, Truth
from tests.algorithms.test_generic_fields import FIELDS, REF, agrees
from tests.helpers import (AMPLE_PREC, all_enclose, all_exact_equal, assert_ball_run_agrees, encloses, gaussian,
                           seeded_gaussian)

E = ExactField(16)
VALUES = [1, (0.5, -2), -3, (0, 0.25), 7, (1.5, 1.5), -0.125, (2, 0)]


@pytest.fixture(params=sorted(FIELDS))
def field(request):
    return FIELDS[request.param]()


def test_vector_primitives_in_every_field(field):
    """Each sweep agrees with the exact operation entry by entry (equal in exact fields,
    enclosing in ball fields, close in the uncertified ones)."""
    F = field
    xs, ys = [F.from_number(v) for v in VALUES], [F.from_number(v) for v in VALUES[::-1]]
    xe, ye = [REF.from_number(v) for v in VALUES], [REF.from_number(v) for v in VALUES[::-1]]
    c, ce = F.from_number((0.5, 1)), REF.from_number((0.5, 1))
    cases = [(F.vec_add(xs, ys), [REF.add(x, y) for x, y in zip(xe, ye)]),
             (F.vec_sub(xs, ys), [REF.sub(x, y) for x, y in zip(xe, ye)]),
             (F.vec_mul(xs, ys), [REF.mul(x, y) for x, y in zip(xe, ye)]),
             (F.vec_scale(c, xs), [REF.mul(ce, x) for x in xe]),
             (F.vec_shift(c, xs), [REF.add(ce, x) for x in xe])]
    inv, zero, unknown = F.vec_inverses(xs)
    assert zero == [] and unknown == []
    cases.append((inv, [REF.div(REF.one(), x) for x in xe]))
    for got, want in cases:
        assert len(got) == len(want) and all(agrees(F, g, w) for g, w in zip(got, want))
    with pytest.raises(ValueError, match="lengths"):
        F.vec_mul(xs, ys[:-1])


@pytest.mark.parametrize("M", [1, 2, 4, 8, 16])
def test_roots_of_unity_in_every_field(field, M):
    got = field.roots_of_unity(M)
    assert len(got) == M
    assert all(agrees(field, g, REF.root_of_unity(M, k)) for k, g in enumerate(got))


def test_ball_grid_encloses_each_root_tightly():
    """BallField's grid (sines and cosines for k <= M/8, the rest by the symmetries)
    encloses every root with radii close to those of the roots taken one by one."""
    for prec in (53, 128, 300):
        F = BallField(prec)
        for M in (8, 16, 128, 1024):
            for k, z in enumerate(F.roots_of_unity(M)):
                w = F.root_of_unity(M, k)
                assert z.overlaps(w)
                assert F.radius(z) <= 4 * F.radius(w) + 2.0 ** -prec
        E8 = ExactField(16)
        assert all_enclose(F.roots_of_unity(16), E8, [E8.root_of_unity(16, k) for k in range(16)])
    with pytest.raises(ValueError):
        BallField(64).roots_of_unity(6)


def test_ball_inverses_sort_the_zero_tests():
    """The sweep falls back to the entry-by-entry tests when a ball meets 0: exact zeros
    go to ``zero``, balls around 0 (and non-finite balls) to ``unknown``, the rest are
    inverted."""
    F = BallField(100)
    xs = [acb(2), acb(0), acb(arb(0, 1e-3)), acb(1, 1), acb("nan"), acb(3, arb(0, 0.5))]
    inv, zero, unknown = F.vec_inverses(xs)
    assert zero == [1] and unknown == [2, 4]
    assert inv[1] is None and inv[2] is None and inv[4] is None
    assert inv[0].contains(acb(0.5)) and inv[3].contains(acb(0.5, -0.5))
    assert inv[5].contains(acb(Fraction(1, 3).numerator) / 3)
    C = Counting(ExactField(4))
    c_xs = [C.from_number(v) for v in (2, 0, (1, 1))]
    C.reset()
    _, zero, unknown = C.vec_inverses(c_xs)
    assert zero == [1] and unknown == [] and C.counts["zero_test"] == 3 and C.counts["div"] == 2


def test_ball_dft_at_the_inputs_accuracy_encloses():
    """The transform at a precision reduced to the inputs' accuracy still encloses the
    exact transform of every point of the inputs (checked on exact binary midpoints and on
    balls widened around exact values)."""
    F = BallField(400, -8)
    vals = [REF.from_number(v) for v in VALUES]
    with ctx.workprec(400):
        wide = [acb(REF.to_acb(v, 400).real + arb(0, 2.0 ** -90), REF.to_acb(v, 400).imag) for v in vals]
    for inverse in (False, True):
        want = (idft if inverse else dft)(REF, vals)
        got = F.primitive("dft")(wide, inverse)
        assert all_enclose(got, REF, want)
        # rounded 8 bits below the inputs' accuracy: radii within a few hundred times theirs
        assert max(F.radius(g) for g in got) < 2.0 ** -72
        tight = BallField(400).primitive("dft")(wide, inverse)  # the default keeps 32 bits to spare
        assert all_enclose(tight, REF, want) and max(F.radius(g) for g in tight) < 2.0 ** -84
        exact = F.primitive("dft")([REF.to_acb(v, 400) for v in vals], inverse)  # exact inputs: 400 bits
        assert all_enclose(exact, REF, want) and max(F.radius(g) for g in exact) < 2.0 ** -380


# -- the shared product tree -----------------------------------------------------------

@settings(max_examples=15)
@given(M=st.sampled_from([1, 2, 4, 8]), data=st.data())
def test_many_sets_equal_one_set_at_a_time_exactly(M, data):
    n = data.draw(st.integers(0, 5))
    poles = [E.from_number(p) for p in data.draw(st.lists(gaussian(), min_size=n, max_size=n))]
    sets = [[E.from_number(w) for w in data.draw(st.lists(gaussian(), min_size=n, max_size=n))]
            for _ in range(data.draw(st.integers(1, 3)))]
    many = cauchy_on_roots_many(E, poles, sets, M)
    ones = [cauchy_on_roots(E, poles, w, M) for w in sets]
    assert many.status == ones[0].status and many.info == ones[0].info
    if many.ok:
        for got, one in zip(many.value, ones):
            assert all_exact_equal(E, got, one.value)


def test_many_sets_statuses_and_balls():
    """A pole on the grid is a collision whatever the weights; ball runs enclose the exact
    sums or stop as the exact run does (or undecided); omega reindexes as for one set."""
    poles = [E.from_number(p) for p in [(0, -1), 2, (0.5, 0.5)]]
    sets = [[E.from_number(w) for w in ws] for ws in ([1, 2, 3], [(0, 1), -1, 0.5])]
    res = cauchy_on_roots_many(E, poles, sets, 8)
    assert res.status == "collision" and res.info["roots"] == [2]
    poles[0] = E.from_number((0.25, -1))
    omega = E.root_of_unity(8, 3)
    ref = cauchy_on_roots_many(E, poles, sets, 8, omega)
    for i, w in enumerate(sets):
        assert all_exact_equal(E, ref.value[i], cauchy_on_roots(E, poles, w, 8, omega).value)
    plain = cauchy_on_roots_many(E, poles, sets, 8)
    for prec in (20, 60, 200):
        B = BallField(prec)
        got = cauchy_on_roots_many(B, [B.from_number(E.to_fractions(p)) for p in poles],
                                   [[B.from_number(E.to_fractions(w)) for w in ws] for ws in sets], 8)
        # every pole at least 1/4 from every root: decided from 60 bits on (20 bits may not be)
        assert got.status in ("ok", "undecided") and (got.ok or prec == 20)
        if got.ok:
            for g, r in zip(got.value, plain.value):
                assert all_enclose(g, E, r)
    with pytest.raises(ValueError):
        cauchy_on_roots_many(E, poles, [[E.one()]], 8)
    assert cauchy_on_roots_many(E, [], [[], []], 4).value == [[E.zero()] * 4] * 2


# -- the correction at every root ------------------------------------------------------

def _blocks(F, r: int, M: int, values) -> dict:
    keys = [("C", "B")] + [("C", i) for i in range(r)] + [(i, "B") for i in range(r)] + \
           [(i, c) for i in range(r) for c in range(r)]
    return {key: [F.from_number(values(key, k)) for k in range(M)] for key in keys}


def _per_root(F, blocks, M, r, minus_one):
    out = []
    for k in range(M):
        if k == correction.minus_one_index(M):
            out.append(minus_one)
            continue
        h = correction.value_at(F, correction.at(blocks, k), correction.beta(F, F.root_of_unity(M, k)), r)
        if not h.ok:
            h.info["root"] = k
            return h
        out.append(h.value)
    return out


@settings(max_examples=20)
@given(r=st.integers(0, 3), M=st.sampled_from([1, 2, 4, 8]), data=st.data())
def test_transfer_all_equals_root_by_root_exactly(r, M, data):
    """H at every root, and W^-1, equal the per-root elimination exactly; where a diagonal
    pivot is zero the root is done alone (row pivoting), and a singular W stops at the
    first such root with the same status."""
    vals = data.draw(st.lists(gaussian(4, 2), min_size=200, max_size=200))
    zeroed = data.draw(st.sets(st.integers(0, 199), max_size=120))
    table = {}

    def values(key, k):
        i = len(table)
        table[key, k] = (0, 0) if i in zeroed else vals[i % len(vals)]
        return table[key, k]
    blocks = _blocks(E, r, M, values)
    m1 = E.from_number(7)
    got = correction.transfer_all(E, blocks, M, r, m1)
    ref = _per_root(E, blocks, M, r, m1)
    if isinstance(ref, list):
        assert got.ok and all_exact_equal(E, got.value, ref)
        for k in range(M):
            if k == correction.minus_one_index(M):
                continue
            W = correction.matrix(E, correction.at(blocks, k), correction.beta(E, E.root_of_unity(M, k)), r)
            want = correction.inverse(E, W).value
            assert all(all_exact_equal(E, [got.info["inverse"][i][c][k] for c in range(r)], want[i])
                       for i in range(r))
    else:
        assert got.status == ref.status and got.info["root"] == ref.info["root"]


def test_transfer_all_pivoting_and_resonance():
    """r = 2 with W = [[0, 1], [1, 0]] at z_0 (beta = 1): the diagonal pivot is 0, the
    root is done alone and agrees; with W singular at z_1 the status is
    resonant-correction at root 1."""
    M, r = 4, 2
    base = {("C", "B"): 1, ("C", 0): 1, ("C", 1): 2, (0, "B"): 3, (1, "B"): 1}

    def swap(key, k):  # T = [[-1, 1], [1, -1]] at z_0: W = I + T = [[0, 1], [1, 0]]
        if key in base:
            return base[key]
        return (-1 if key[0] == key[1] else 1) if k == 0 else (key[0] + key[1] + 1, k)
    blocks = _blocks(E, r, M, swap)
    got = correction.transfer_all(E, blocks, M, r, E.zero())
    assert got.ok and all_exact_equal(E, got.value, _per_root(E, blocks, M, r, E.zero()))
    # beta(z_1) = (1 - i)/2; T = -(1/beta) I makes W = 0 at z_1
    b1 = REF.div(REF.add(REF.one(), REF.root_of_unity(M, 1)), REF.const(2))
    t1 = E.to_fractions(REF.neg(REF.div(REF.one(), b1)))

    def singular(key, k):
        if key in base:
            return base[key]
        return (t1 if key[0] == key[1] else 0) if k == 1 else (2 if key[0] == key[1] else 0)
    blocks = _blocks(E, r, M, singular)
    got = correction.transfer_all(E, blocks, M, r, E.zero())
    assert got.status == "resonant-correction" and got.info["root"] == 1
    B = BallField(80)
    bb = {key: [B.from_number(E.to_fractions(v)) for v in vals] for key, vals in blocks.items()}
    bad = correction.transfer_all(B, bb, M, r, B.zero())
    assert bad.status in ("resonant-correction", "undecided") and bad.info["root"] == 1


@settings(max_examples=10)
@given(prec=st.sampled_from([30, 80, 200]), data=st.data())
def test_transfer_all_in_balls_encloses(prec, data):
    r, M = data.draw(st.integers(1, 2)), 8
    vals = data.draw(st.lists(gaussian(4, 3), min_size=80, max_size=80))
    it = iter(range(10 ** 6))
    blocks = _blocks(E, r, M, lambda key, k: vals[next(it) % len(vals)])
    ref = correction.transfer_all(E, blocks, M, r, E.one())
    B = BallField(prec)
    bb = {key: [B.from_number(E.to_fractions(v)) for v in vs] for key, vs in blocks.items()}
    assert_ball_run_agrees(correction.transfer_all(B, bb, M, r, B.one()), ref, E)


def test_transfer_all_in_balls_decides_at_ample_precision():
    """At AMPLE_PREC bits the ball transfer certifies every exactly regular case of a fixed
    list of random blocks (ranks 1 and 2, M = 8), with enclosures: as many as the exact run
    certifies, and at least one."""
    import random
    certified, regular = 0, 0
    for seed in range(8):
        rng, r, M = random.Random(seed), 1 + seed % 2, 8
        vals = [seeded_gaussian(rng, 4, 3) for _ in range(80)]
        it = iter(range(10 ** 6))
        blocks = _blocks(E, r, M, lambda key, k: vals[next(it) % len(vals)])
        ref = correction.transfer_all(E, blocks, M, r, E.one())
        B = BallField(AMPLE_PREC)
        bb = {key: [B.from_number(E.to_fractions(v)) for v in vs] for key, vs in blocks.items()}
        got = correction.transfer_all(B, bb, M, r, B.one())
        assert_ball_run_agrees(got, ref, E)
        certified += got.ok
        regular += ref.ok
    assert certified == regular >= 1


def test_transfer_all_in_float64_and_counted():
    """The uncertified field runs the same sweeps; Counting sees every scalar operation."""
    vals = lambda key, k: (1 + k, len(str(key)))
    F, C = Float64Field(), Counting(Float64Field())
    got = correction.transfer_all(F, _blocks(F, 1, 8, vals), 8, 1, 0.0)
    ref = correction.transfer_all(E, _blocks(E, 1, 8, vals), 8, 1, E.zero())
    assert all(abs(g - E.to_complex(w)) <= 1e-12 * (1 + abs(E.to_complex(w))) for g, w in zip(got.value, ref.value))
    blocks = _blocks(C, 1, 8, vals)
    C.reset()
    correction.transfer_all(C, blocks, 8, 1, C.zero())
    assert C.counts["div"] == 8 and C.counts["zero_test"] == 8 and C.counts["mul"] >= 5 * 8
    assert encloses(BallField(60).vec_inverses([acb(4)])[0][0], E, E.from_number(0.25))
