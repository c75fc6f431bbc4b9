import gc

from algorithms.dft import dft
from arith import Counting, ExactField, Float64Field


def test_counts_each_kind():
    C = Counting(Float64Field())
    x, y = C.from_number(2), C.from_number(3)
    C.add(x, y), C.sub(x, y), C.neg(x), C.mul(x, y), C.div(x, y), C.conj(x), C.is_zero(x)
    assert C.counts == {"add": 3, "mul": 1, "div": 1, "zero_test": 1, "conj": 1}
    assert C.word_reads == 2 + 2 + 1 + 2 + 2 + 1 + 1
    assert C.word_writes == 2 + 6


def test_live_and_peak_words_are_measured():
    C = Counting(Float64Field())
    base = C.live_words
    xs = [C.from_number(i) for i in range(10)]
    assert C.live_words == base + 10
    del xs
    gc.collect()
    assert C.live_words == base
    assert C.peak_words >= base + 10
    C.reset()
    assert C.peak_words == C.live_words and C.counts["add"] == 0


def test_dft_counts_match_the_recursion():
    """M/2 log2 M multiplications and M log2 M additions for the forward transform, and
    M divisions more for the inverse; live words stay O(M)."""
    for q in range(0, 8):
        M = 2**q
        C = Counting(ExactField(max(4, M)))
        a = [C.from_number(j) for j in range(M)]
        C.reset()
        dft(C, a)
        assert C.counts["mul"] == (M // 2) * q
        assert C.counts["add"] == M * q
        assert C.peak_words - M <= 4 * M  # input, roots, and at most 3M partial results


def test_counting_wraps_without_fast_primitives():
    from arith import BallField
    assert BallField(64).primitive("dft") is not None
    assert Counting(BallField(64)).primitive("dft") is None
