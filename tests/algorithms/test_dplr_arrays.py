"""Tests of the layer pass's set-up on double-double arrays (algorithms/s4/dplr_arrays.py,
proofs/layer_pass.md, Lemma 5): every kernel's disks contain its exact kernel (exact
dyadic inputs, the full conjugate-closed model in rationals), and the heads the arrays
cannot decide (an exceptional index, G not certified) are reported, never computed wrong."""
from fractions import Fraction

import numpy as np
from hypothesis import given, strategies as st

from s4cert.algorithms.s4.dplr import DPLR
from s4cert.algorithms.s4.dplr_arrays import DPLRArrays, filter_kernels_arrays, setup_arrays
from s4cert.arith.double_double import DD
from tests.algorithms.test_layer_pass import _rows_hold_exact_kernels

DYADIC = st.builds(lambda n, e: Fraction(n, 2 ** e), st.integers(-24, 24), st.integers(0, 3))
POINT = st.tuples(DYADIC, DYADIC)


def _c(x) -> complex:
    return complex(float(x[0]), float(x[1]))


def _arrays(heads: list, r: int) -> DPLRArrays:
    """The arrays of heads given as (lam, B, P, Q, Cts) first halves of (re, im) pairs."""
    lam = DD.exact([[_c(x) for x in h[0]] for h in heads])
    B = DD.exact([[_c(x) for x in h[1]] for h in heads])
    P = [DD.exact([[_c(row[i]) for row in h[2]] for h in heads]) for i in range(r)]
    Q = [DD.exact([[_c(row[i]) for row in h[3]] for h in heads]) for i in range(r)]
    channels = len(heads[0][4])
    Ct = DD.exact([[[_c(x) for x in h[4][c]] for h in heads] for c in range(channels)])
    return DPLRArrays(lam, B, P, Q, Ct)


def _full(v: list) -> list:
    return v + [(re, -im) for re, im in v]


def _model(h, r: int) -> tuple:
    """The full conjugate-closed model (exact) and its C~s, as the rows check takes them."""
    lam, B, P, Q, cts = h
    full_rows = lambda X: [list(row) for row in zip(*[_full([row[i] for row in X]) for i in range(r)])]
    m = DPLR(_full(lam), full_rows(P), _full(B), _full(cts[0]), Q=full_rows(Q))
    return m, [_full(ct) for ct in cts]


@st.composite
def closed_heads(draw, r: int | None = None, exceptional: bool = True):
    r = draw(st.integers(1, 2)) if r is None else r
    n, channels = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    heads = []
    for _ in range(draw(st.integers(1, 3))):
        vec = lambda: [draw(POINT) for _ in range(n)]
        lam = vec()
        if exceptional and draw(st.booleans()):
            lam[0] = (Fraction(-2), Fraction(0))      # lambda_j = -2/step exactly (step 1)
        heads.append((lam, vec(), [[draw(POINT) for _ in range(r)] for _ in range(n)],
                      [[draw(POINT) for _ in range(r)] for _ in range(n)], [vec() for _ in range(channels)]))
    return heads, r, draw(st.integers(3, 24))


@given(closed_heads())
def test_every_kernel_is_contained_or_its_head_reported(problem):
    """Random conjugate-closed heads, ranks 1 and 2, some with lambda_j = -2: each kernel's
    disks contain its exact kernel; a head with an exceptional index is reported."""
    heads, r, L = problem
    mid, rad, failed = filter_kernels_arrays(_arrays(heads, r), L)
    channels = len(heads[0][4])
    for h, head in enumerate(heads):
        if head[0][0] == (Fraction(-2), Fraction(0)):
            assert all("exceptional" in failed[h * channels + c] for c in range(channels))
    _rows_hold_exact_kernels([_model(h, r) for h in heads], 1, L, mid, rad, failed)


@given(closed_heads(exceptional=False))
def test_ranks_one_and_two_with_g_checked(problem):
    """check_g (C~ supplied): the heads whose G the arrays certify are computed and
    contained; the others are reported with the reason."""
    heads, r, L = problem
    mid, rad, failed = filter_kernels_arrays(_arrays(heads, r), L, check_g=True)
    assert all("G" in why or "float64 disks" in why for why in failed.values())
    _rows_hold_exact_kernels([_model(h, r) for h in heads], 1, L, mid, rad, failed)


def _dissipative_heads(seed: int, r: int) -> list:
    """Two conjugate-closed heads of one size with dyadic entries, Q = P and Re lambda_j in [-12, -1/4]:
    A = Lambda - P P* with A + A* <= -I/2 (as tests.helpers.dissipative_dplr), so G is
    invertible, I - Abar^M and every W(z_k) are regular and every pole mu_j (step 1, a = 2)
    has |mu_j|^2 - 1 >= 2 / 19^2, far beyond float64 reach of the roots."""
    import random
    rng = random.Random(seed)
    dy = lambda: Fraction(rng.randint(-24, 24), 2 ** rng.randint(0, 3))
    pt = lambda: (dy(), dy())
    heads, n = [], rng.randint(1, 3)
    for _ in range(2):
        lam = [(-Fraction(rng.randint(1, 48), 4), dy()) for _ in range(n)]
        P = [[pt() for _ in range(r)] for _ in range(n)]
        heads.append((lam, [pt() for _ in range(n)], P, [list(row) for row in P],
                      [[pt() for _ in range(n)] for _ in range(2)]))
    return heads


def test_every_dissipative_kernel_is_certified():
    """Dissipative heads, ranks 1 and 2, with and without check_g: no head is reported and
    every kernel contains its exact kernel: all 16 of 16."""
    certified, rows = 0, 0
    for seed in range(4):
        r, check_g = 1 + seed % 2, seed >= 2
        heads = _dissipative_heads(seed, r)
        mid, rad, failed = filter_kernels_arrays(_arrays(heads, r), 12, check_g=check_g)
        certified += _rows_hold_exact_kernels([_model(h, r) for h in heads], 1, 12, mid, rad, failed)
        rows += len(mid)
    assert certified == rows == 16


def test_singular_g_is_reported():
    """W(0) = 0 exactly (lambda = 0, Q = 1, P = -1: G = I - A/2 is singular): with check_g the
    head is reported, naming W(0); a regular head beside it is computed."""
    one = (Fraction(1), Fraction(0))
    singular = ([(Fraction(0), Fraction(0))], [one], [[(Fraction(-1), Fraction(0))]], [[one]], [[one]])
    regular = ([(Fraction(-1, 2), Fraction(1))], [one], [[(Fraction(1, 4), Fraction(0))]], [[one]], [[one]])
    st_ = setup_arrays(_arrays([singular, regular], 1), check_g=True)
    assert st_.ok.tolist() == [False, True] and "W(0)" in st_.why[0]
    mid, rad, failed = filter_kernels_arrays(_arrays([singular, regular], 1), 16, check_g=True)
    assert list(failed) == [0] and np.all(np.isfinite(rad[1]))
    _rows_hold_exact_kernels([_model(h, 1) for h in (singular, regular)], 1, 16, mid, rad, failed)


def test_singular_g_at_rank_two_and_rank_three_left_to_the_balls():
    """Rank two with W(0) singular (the two columns of P equal, and of Q: rank one in
    disguise, with W(0)'s determinant 0) is reported; rank three is left to the balls."""
    one, m1 = (Fraction(1), Fraction(0)), (Fraction(-1, 2), Fraction(0))
    head = ([(Fraction(0), Fraction(0))], [one], [[m1, m1]], [[one, one]], [[one]])
    st_ = setup_arrays(_arrays([head], 2), check_g=True)
    assert not st_.ok.any() and "W(0)" in st_.why[0]
    head3 = ([(Fraction(-1), Fraction(1))], [one], [[m1] * 3], [[one] * 3], [[one]])
    st_ = setup_arrays(_arrays([head3], 3), check_g=True)
    assert not st_.ok.any() and "ranks one and two" in st_.why[0]
