"""Gaussian-rational matrices on flint: real forms and the Krylov recurrence."""
import random
from fractions import Fraction

from flint import fmpq_mat

from s4cert.arith.gaussian import fraction_of, krylov_values, matrix_power, real_column, real_matrix
from flint import fmpq


def _rand(rng):
    return Fraction(rng.randint(-9, 9), rng.randint(1, 7)), Fraction(rng.randint(-9, 9), rng.randint(1, 7))


def _cmul(a, b):
    return a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0]


def test_krylov_values_equal_direct_powers():
    rng = random.Random(5)
    for n, L in [(1, 6), (2, 3), (3, 20)]:
        X = [[_rand(rng) for _ in range(n)] for _ in range(n)]
        b = [_rand(rng) for _ in range(n)]
        w = [_rand(rng) for _ in range(n)]
        got = krylov_values(real_matrix(X), real_column(b), real_column(w), L)
        v = b
        for j in range(L):
            s = (Fraction(0), Fraction(0))
            for wi, vi in zip(w, v):
                p = _cmul((wi[0], -wi[1]), vi)
                s = (s[0] + p[0], s[1] + p[1])
            assert got[j] == s
            v = [tuple(map(sum, zip(*[_cmul(X[i][k], v[k]) for k in range(n)]))) for i in range(n)]


def test_matrix_power_and_fraction_of():
    X = fmpq_mat([[1, 2], [fmpq(1, 3), 0]])
    P = X
    for _ in range(4):
        P = P * X
    assert matrix_power(X, 5) == P
    assert fraction_of(fmpq(-6, 4)) == Fraction(-3, 2)
    assert fraction_of(fmpq(-6, 4)).denominator == 2


def test_power_times_a_column_equals_the_matrix_power_times_it():
    """X^M v by early-stopped squarings and column products equals (X^M) v exactly, for
    every M up to 70 (both parts of M = q 2^j + r exercised) and rational entries."""
    from s4cert.arith.gaussian import power_times
    X = fmpq_mat([[1, 2, 0], [fmpq(1, 3), 0, -1], [0, fmpq(5, 7), 2]])
    v = fmpq_mat([[1], [fmpq(-2, 5)], [3]])
    P = None
    for M in range(0, 71):
        P = fmpq_mat([[1, 0, 0], [0, 1, 0], [0, 0, 1]]) if P is None else P * X
        assert power_times(X, M, v) == P * v
