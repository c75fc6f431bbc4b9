import cmath
import math
from fractions import Fraction

import pytest
from flint import acb, arb
from hypothesis import given, strategies as st

from s4cert.algorithms.cauchy.direct import cauchy_direct
from s4cert.algorithms.cauchy.grid import root_index
from s4cert.algorithms.cauchy.tree import cauchy_on_roots
from s4cert.arith import BallField, Counting, ExactField, Float64Field, Truth
from tests.helpers import AMPLE_PREC, all_enclose, all_exact_equal, gaussian, seeded_gaussian

E = ExactField(32)


def problem(data, M):
    n = data.draw(st.integers(0, 8))
    poles = [E.from_number(v) for v in data.draw(st.lists(gaussian(), min_size=n, max_size=n))]
    if n and M >= 2 and data.draw(st.booleans()):
        # a pole on the grid now and then
        poles[0] = E.root_of_unity(M, data.draw(st.integers(0, M - 1)))
    weights = [E.from_number(v) for v in data.draw(st.lists(gaussian(), min_size=n, max_size=n))]
    return poles, weights


@given(M=st.sampled_from([1, 2, 4, 8, 16]), data=st.data())
def test_tree_equals_direct_exactly(M, data):
    poles, weights = problem(data, M)
    omega = None
    if data.draw(st.booleans()) and M > 1:
        omega = E.root_of_unity(M, data.draw(st.sampled_from(range(1, M, 2))))
    a = cauchy_on_roots(E, poles, weights, M, omega)
    b = cauchy_direct(E, poles, weights, M, omega)
    assert a.status == b.status
    if a.ok:
        assert all_exact_equal(E, a.value, b.value)
    else:
        assert a.status == "collision"


def test_definition_small_case():
    # y_k = 1/(w^k - 2) + 3/(w^k + 1/2) on M = 4, w = exp(-2 pi i/4)
    poles = [E.from_number(2), E.from_number(Fraction(-1, 2))]
    weights = [E.one(), E.from_number(3)]
    res = cauchy_on_roots(E, poles, weights, 4)
    for k, y in enumerate(res.value):
        z = E.root_of_unity(4, k)
        want = E.add(E.div(weights[0], E.sub(z, poles[0])), E.div(weights[1], E.sub(z, poles[1])))
        assert all_exact_equal(E, [y], [want])


def test_no_poles_gives_zero_vector():
    res = cauchy_on_roots(E, [], [], 8)
    assert res.ok and all_exact_equal(E, res.value, [E.zero()] * 8)


def test_collision_reported():
    poles = [E.from_number(3), E.root_of_unity(8, 5)]
    for f in (cauchy_on_roots, cauchy_direct):
        res = f(E, poles, [E.one(), E.one()], 8)
        assert res.status == "collision" and res.info["roots"] == [5]


def test_repeated_poles_and_more_poles_than_roots():
    poles = [E.from_number(Fraction(1, 3))] * 5 + [E.from_number(7)] * 4
    weights = [E.from_number(j + 1) for j in range(9)]
    a = cauchy_on_roots(E, poles, weights, 2)
    b = cauchy_direct(E, poles, weights, 2)
    assert a.ok and all_exact_equal(E, a.value, b.value)


@given(prec=st.integers(30, 300), M=st.sampled_from([1, 2, 4, 8, 16]), data=st.data())
def test_ball_contains_exact(prec, M, data):
    poles, weights = problem(data, M)
    exact = cauchy_direct(E, poles, weights, M)
    B = BallField(prec)
    to_ball = lambda xs: [E.to_acb(x, prec + 10) for x in xs]
    got = cauchy_on_roots(B, to_ball(poles), to_ball(weights), M)
    if exact.ok:
        assert got.status in ("ok", "undecided")
        if got.ok:
            assert all_enclose(got.value, E, exact.value)
    else:
        assert got.status in ("collision", "undecided")


def test_ball_sums_decide_at_ample_precision():
    """At AMPLE_PREC bits the ball product tree certifies every collision-free problem of a
    fixed list (random Gaussian-rational poles and weights, M = 1 ... 16), with enclosures:
    7 of 7; the 3 with a pole on the grid are never ok (a collision with an inexact root
    ball cannot be proved, so undecided is their right answer)."""
    import random
    decided = 0
    for seed in range(10):
        rng, M = random.Random(seed), [1, 2, 4, 8, 16][seed % 5]
        n = 1 + seed % 8
        poles = [E.from_number(seeded_gaussian(rng)) for _ in range(n)]
        weights = [E.from_number(seeded_gaussian(rng)) for _ in range(n)]
        if seed % 3 == 0 and M >= 2:
            poles[0] = E.root_of_unity(M, seed % M)            # a collision now and then
        exact = cauchy_direct(E, poles, weights, M)
        B = BallField(AMPLE_PREC)
        got = cauchy_on_roots(B, [E.to_acb(x, AMPLE_PREC + 10) for x in poles],
                              [E.to_acb(x, AMPLE_PREC + 10) for x in weights], M)
        if exact.ok:
            decided += got.ok and all_enclose(got.value, E, exact.value)
        else:
            assert exact.status == "collision" and got.status in ("collision", "undecided")
    assert decided == 7


def test_bad_input():
    with pytest.raises(ValueError):
        cauchy_on_roots(E, [E.one()], [], 4)
    with pytest.raises(ValueError):
        cauchy_on_roots(E, [E.one()], [E.one()], 6)
    with pytest.raises(ValueError):  # omega = 1 is not a primitive 4th root
        cauchy_on_roots(E, [E.from_number(3)], [E.one()], 4, omega=E.one())


def _counted_run(n: int, M: int, with_omega: bool):
    """cauchy_on_roots under Counting(Float64Field()): operation total and peak words
    beyond the 2n input words (both are independent of the values on an ok run)."""
    C = Counting(Float64Field())
    poles = [C.from_number(0.5 * cmath.exp(1j * (0.7 + 2.3 * j))) for j in range(n)]
    weights = [C.from_number(complex(1, j % 3)) for j in range(n)]
    omega = C.root_of_unity(M, 3) if with_omega else None
    C.reset()
    res = cauchy_on_roots(C, poles, weights, M, omega)
    assert res.ok
    return sum(C.counts.values()), C.peak_words - 2 * n - (1 if with_omega else 0)


def _operation_bound(n: int, M: int, with_omega: bool) -> float:
    """The explicit bound of cauchy_product_tree.md section 6: h depths of at most
    6*13*n*log2(2n+2) + n operations, n leaf negations, 2n folding additions, two
    transforms (3 M log2 M), M zero tests, M divisions, and M for the root search."""
    h = (n - 1).bit_length()  # ceil(log2 n)
    q = M.bit_length() - 1
    return h * (6 * 13 * n * math.log2(2 * n + 2) + n) + n + 2 * n + 3 * M * q + 2 * M + (M if with_omega else 0)


def _word_bound(n: int, M: int) -> int:
    """Peak words beyond the inputs, with cauchy_product_tree.md section 7's pieces made
    explicit: in the tree phase the pending first children (2n + h), the current node's
    children (2m + 2) and partial products and sum (3m + 1), and one polymul of output
    length <= m + 1 (polymul.md section 3: its M_p < 2(m + 1); the two transforms' outputs
    plus one transform's working words, M_p / 2 twiddles and 2 M_p + 2 by dft.md section 5,
    plus the shared zero: 4.5 M_p + 3 <= 9m + 12), with m <= n; afterwards the tree's
    result (2n + 1), the folded lists (2M), one transform's output (M) while the next runs
    (M/2 + 2M + 2), the M quotients, and omega.  Both phases counted as if alive at once."""
    h = (n - 1).bit_length()
    return (2 * n + h + 14 * n + 15) + (2 * n + 1 + 2 * M + M + (M // 2 + 2 * M + 2) + M + 1)


def test_tree_counts_and_words():
    """Statement 4: operations within the explicit O((n+M) log^2(2+n+M)) bound of section 6,
    and peak words within section 7's O(n + M), its constant made explicit (``_word_bound``)."""
    series = [[(2**j, 2**j) for j in range(1, 8)],      # n = M
              [(2**j, 4) for j in range(1, 9)],         # n >> M
              [(4, 2**j) for j in range(1, 10)],        # M >> n
              [(3 * 2**j, 2**j) for j in range(0, 6)]]  # n = 3M, folding
    for sizes in series:
        for n, M in sizes:
            with_omega = M >= 4 and n == M
            ops, words = _counted_run(n, M, with_omega)
            assert ops <= _operation_bound(n, M, with_omega)
            assert words <= _word_bound(n, M), (n, M, words)


def test_root_index_in_ball_field():
    """A ball around omega_0^s (odd s) that leaves exactly that candidate undecided
    gives s; a ball wide enough to leave two candidates undecided gives
    'undecided'; an exact point gives s by an exact zero test; a point that is no
    primitive root raises."""
    B = BallField(100)
    for M, s in [(4, 3), (8, 5), (16, 1), (16, 7)]:
        exact = E.root_of_unity(M, s)
        mid = E.to_acb(exact, 120)
        fuzzy = acb(arb(mid.real.mid(), 1e-3), arb(mid.imag.mid(), 1e-3))
        assert fuzzy.contains(mid)
        t = B.is_zero(B.sub(fuzzy, B.root_of_unity(M, s)))
        assert t is Truth.UNKNOWN  # the TRUE shortcut is not taken
        assert root_index(B, fuzzy, M).value == s
        poles = [E.from_number((2, 1)), E.from_number(Fraction(-1, 3))]
        weights = [E.one(), E.from_number((0, 5))]
        got = cauchy_on_roots(B, [E.to_acb(x, 120) for x in poles], [E.to_acb(x, 120) for x in weights], M, fuzzy)
        want = cauchy_direct(E, poles, weights, M, exact)
        assert got.ok and want.ok and all_enclose(got.value, E, want.value)
        wide = acb(arb(mid.real.mid(), 2.5), arb(mid.imag.mid(), 2.5))  # covers every candidate
        assert root_index(B, wide, M).status == "undecided"
        assert cauchy_on_roots(B, [E.to_acb(x, 120) for x in poles], [E.to_acb(x, 120) for x in weights], M,
                               wide).status == "undecided"
    # exactly two candidates undecided: omega_0^1 and omega_0^3 for M = 8, not 5 and 7
    between = acb(arb(0, 0.75), arb(-0.7071, 0.01))
    assert [B.is_zero(B.sub(between, B.root_of_unity(8, s))) for s in (1, 3, 5, 7)] == \
        [Truth.UNKNOWN, Truth.UNKNOWN, Truth.FALSE, Truth.FALSE]
    assert root_index(B, between, 8).status == "undecided"
    assert root_index(B, acb(0, 1), 4).value == 3  # i = omega_0^3 exactly
    with pytest.raises(ValueError):  # 1 is not a primitive 4th root
        root_index(B, acb(1), 4)
