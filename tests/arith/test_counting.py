import gc

from s4cert.algorithms.dft import dft, idft, next_power_of_two, polymul
from s4cert.arith import Counting, ExactField, Float64Field

#: the kinds a rational procedure never uses
NO_EXTRA = {"sqrt": 0, "exp": 0, "add_error": 0}


def test_counts_each_kind():
    C = Counting(Float64Field())
    x, y = C.from_number(2), C.from_number(3)
    C.add(x, y), C.sub(x, y), C.neg(x), C.mul(x, y), C.div(x, y), C.conj(x), C.is_zero(x)
    assert C.counts == {"add": 3, "mul": 1, "div": 1, "zero_test": 1, "conj": 1, **NO_EXTRA}
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
        assert C.counts["div"] == C.counts["zero_test"] == C.counts["conj"] == 0
        # M input words, M/2 twiddles and at most 2M + 2 words of the recursion
        assert 2 * C.peak_words <= 7 * M + 4


def test_idft_counts_match_the_recursion():
    """The inverse runs the same recursion with conjugate roots, then exactly M
    divisions by the constant M; at most M + M/2 + 2M + 2 words are alive."""
    for q in range(0, 8):
        M = 2**q
        C = Counting(ExactField(max(4, M)))
        a = [C.from_number(j) for j in range(M)]
        C.reset()
        idft(C, a)
        assert C.counts == {"add": M * q, "mul": (M // 2) * q, "div": M, "zero_test": 0, "conj": 0, **NO_EXTRA}
        assert 2 * C.peak_words <= 7 * M + 4


def test_polymul_counts():
    """Two forward transforms, M products and one inverse of length M, the least power
    of two >= s + t - 1: 1.5 M log2 M + M multiplications, 3 M log2 M additions, M
    divisions; O(M) words beyond the inputs (at most 3.5 M + 3: the shared zero, one
    transform's output and products, and one transform's working words)."""
    for s, t in [(1, 1), (1, 2), (2, 1), (2, 2), (3, 5), (5, 4), (8, 9), (9, 8), (17, 16), (20, 45), (1, 64)]:
        n = s + t - 1
        M = next_power_of_two(n)
        q = M.bit_length() - 1
        assert M >= n and (M == 1 or M < 2 * n)
        C = Counting(ExactField(max(4, M)))
        p = [C.from_number(j + 1) for j in range(s)]
        r = [C.from_number((j, -1)) for j in range(t)]
        C.reset()
        out = polymul(C, p, r)
        assert len(out) == n
        assert C.counts == {"add": 3 * M * q, "mul": 3 * (M // 2) * q + M, "div": M, "zero_test": 0, "conj": 0, **NO_EXTRA}
        assert 2 * (C.peak_words - (s + t)) <= 7 * M + 6
    C = Counting(ExactField(4))
    assert polymul(C, [], [C.one()]) == [] and C.counts["mul"] == 0


def test_counting_wraps_without_fast_primitives():
    from s4cert.arith import BallField
    assert BallField(64).primitive("dft") is not None
    assert Counting(BallField(64)).primitive("dft") is None
