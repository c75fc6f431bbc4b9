"""HiPPO generators and their NPLR splits (the certified DPLR model and the float64 model:
test_hippo_dplr.py)."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from flint import acb, ctx
from hypothesis import given, strategies as st

from s4cert.algorithms.models.hippo import field_sqrt, generator, lagt, legs, legt, similarity
from s4cert.algorithms.models.hippo_dplr import dplr, unitary_diagonalization
from s4cert.algorithms.models.hippo_float64 import dplr_float64
from s4cert.algorithms.models.hippo_nplr import nplr
from s4cert.arith import BallField, Counting, Float64Field, RoundedField, Tracing
from tests.algorithms.hippo_refs import CASES, E4, TIGHT, encl, rational, tight
from tests.helpers import encloses, exact_equal


def signs(N):
    return [1 if n % 2 == 0 else -1 for n in range(N)]


thetas = st.builds(Fraction, st.integers(1, 40), st.integers(1, 12))
sizes = st.integers(1, 8)


# -- generators ----------------------------------------------------------------------

def test_legt_generator_is_the_lmu_matrix():
    # the LMU's continuous (A, B), as its reference code forms them, with theta = 4
    N, theta = 7, 4.0
    Q = np.arange(N, dtype=np.float64).reshape(-1, 1)
    R = (2 * Q + 1) / theta
    i, j = np.meshgrid(Q, Q, indexing="ij")
    A = R * np.where(i < j, -1, (-1.0) ** (i - j + 1))
    Bv = (R * ((-1.0) ** Q)).ravel()
    G, B = legt(E4, N, theta)
    assert [[rational(E4, x) for x in row] for row in G] == [[Fraction(float(a)) for a in row] for row in A]
    assert [rational(E4, x) for x in B] == [Fraction(float(b)) for b in Bv]


@given(N=sizes, theta=thetas)
def test_rational_generators_match_the_definitions(N, theta):
    G, B = legt(E4, N, theta)
    for n in range(N):
        assert rational(E4, B[n]) == (2 * n + 1) * (-1) ** n / theta
        for k in range(N):
            want = -(2 * n + 1) * ((-1) ** (n - k) if n >= k else 1) / theta
            assert rational(E4, G[n][k]) == want
    G, B = lagt(E4, N)
    assert all(rational(E4, b) == 1 for b in B)
    assert all(rational(E4, G[n][k]) == (-1 if n >= k else 0) for n in range(N) for k in range(N))


def test_legs_generator_encloses_the_definition():
    F = BallField(128)
    N = 8
    G, B = legs(F, N)
    with ctx.workprec(TIGHT):   # reference arithmetic at the reference precision
        for n in range(N):
            assert encl(B[n], tight(("sqrt", 2 * n + 1)))
            for k in range(N):
                if n > k:
                    assert encl(G[n][k], -tight(("sqrt", (2 * n + 1) * (2 * k + 1))))
                else:
                    assert G[n][k].is_exact() and G[n][k].contains(-(n + 1) if n == k else 0)


def test_generator_dispatch_and_similarity():
    G1, B1 = generator(E4, "legt", 3, 2)
    G2, B2 = legt(E4, 3, 2)
    assert all(exact_equal(E4, a, b) for r1, r2 in zip(G1, G2) for a, b in zip(r1, r2))
    assert all(rational(E4, s) == 1 for s in similarity(E4, "lagt", 4))
    F = BallField(100)
    S = similarity(F, "legt", 5)
    with ctx.workprec(TIGHT):
        assert all(encl(s, e * tight(("sqrt", 2 * n + 1))) for n, (s, e) in enumerate(zip(S, signs(5))))


# -- square roots --------------------------------------------------------------------

@given(q=st.builds(Fraction, st.integers(0, 10**6), st.integers(1, 10**3)))
def test_field_sqrt_in_every_field(q):
    ref = tight(("sqrt", q))
    assert field_sqrt(BallField(90), q).contains(ref)
    R = RoundedField(50)
    re, im = R.to_fractions(field_sqrt(R, q))
    with ctx.workprec(TIGHT):
        assert im == 0 and abs(tight(re) - ref) <= tight(R.u)
    assert field_sqrt(Float64Field(), q) == complex(math.sqrt(q))
    C = Counting(BallField(90))
    assert C.unwrap(field_sqrt(C, q)).contains(ref)
    exact = Fraction(math.isqrt(q.numerator), math.isqrt(q.denominator))
    if exact * exact == q:
        assert rational(E4, field_sqrt(E4, q)) == exact
        assert rational(E4, field_sqrt(Tracing(E4), q).v) == exact
    else:
        with pytest.raises(ValueError, match="irrational"):
            field_sqrt(E4, q)


def test_field_sqrt_rejects_negative_and_complex():
    with pytest.raises(ValueError):
        field_sqrt(BallField(64), -1)
    with pytest.raises(ValueError):
        field_sqrt(BallField(64), (1, 1))


# -- bad input -----------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: legs(E4, 0), lambda: lagt(E4, -2), lambda: legs(E4, 2.0), lambda: lagt(E4, True),
    lambda: legt(E4, 3, 0), lambda: legt(E4, 3, -1), lambda: legt(E4, 3, None),
    lambda: legt(E4, 3, 1j), lambda: legt(E4, 3, float("nan")), lambda: legt(E4, 3, float("inf")),
    lambda: nplr(E4, "legs", 3, theta=1), lambda: nplr(E4, "legq", 3),
    lambda: nplr(E4, "legt", 3), lambda: dplr("legs", 0), lambda: dplr("legt", 4, theta=0),
    lambda: dplr("lagt", 3, C=[1, 1]), lambda: dplr_float64("legs", 3, theta=2),
    lambda: dplr("legs", 3, prec=1), lambda: similarity(E4, "nope", 2),
    lambda: unitary_diagonalization([[1, 2]], 64), lambda: dplr("lagt", 3, algorithm="qr"),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


# -- the splits: exact checks ---------------------------------------------------------

def mat_exact(rows):
    return [[rational(E4, x) for x in row] for row in rows]


def fmul(A, B):
    return [[sum(A[i][t] * B[t][j] for t in range(len(B))) for j in range(len(B[0]))] for i in range(len(A))]


def ftr(A):
    return [list(c) for c in zip(*A)]


@pytest.mark.parametrize("N", range(1, 9))
def test_lagt_split_is_exact(N):
    sp = nplr(E4, "lagt", N)
    H, U, V, G = mat_exact(sp.H), mat_exact(sp.U), mat_exact(sp.V), mat_exact(sp.G)
    assert sp.rank == 1 and len(U[0]) == len(V[0]) == 1
    assert G == mat_exact(lagt(E4, N)[0]) and [rational(E4, b) for b in sp.B] == [1] * N
    assert all(G[n][k] == H[n][k] - U[n][0] * V[k][0] for n in range(N) for k in range(N))
    assert fmul(ftr(H), H) == fmul(H, ftr(H))                      # H* H = H H* (H is real)
    assert all(H[n][k] + H[k][n] == (-1 if n == k else 0) for n in range(N) for k in range(N))


@given(N=sizes, theta=thetas)
def test_legt_split_exact_on_the_rational_core(N, theta):
    """With D = diag(sqrt(2n+1)), S0 = D E: G~ = D g D, g = E D^-2 G E rational, and the
    design's H = D h D, h = g + (1/(2 theta))(1 1^T + e e^T).  H is normal iff
    h^T D^2 h = h D^2 h^T; H is skew iff h is."""
    G = mat_exact(legt(E4, N, theta)[0])
    e = signs(N)
    d2 = [2 * n + 1 for n in range(N)]
    g = [[e[n] * G[n][k] * e[k] / d2[n] for k in range(N)] for n in range(N)]
    h = [[g[n][k] + (1 + e[n] * e[k]) / (2 * theta) for k in range(N)] for n in range(N)]
    assert all(h[n][k] == -h[k][n] for n in range(N) for k in range(N))          # skew
    assert all(h[n][k] == 0 for n in range(N) for k in range(N) if (n + k) % 2 == 0)
    D2 = [[d2[n] if n == k else 0 for k in range(N)] for n in range(N)]
    assert fmul(fmul(ftr(h), D2), h) == fmul(fmul(h, D2), ftr(h))
    # the module's H is D h D: compare with 400-bit enclosures
    F = BallField(128)
    sp = nplr(F, "legt", N, theta)
    with ctx.workprec(TIGHT):
        for n in range(N):
            for k in range(N):
                assert encl(sp.H[n][k], tight(h[n][k]) * tight(("sqrt", d2[n] * d2[k])))


@pytest.mark.parametrize("N", range(1, 9))
def test_legs_split_exact_on_the_rational_core(N):
    """G^S = D g D with g rational (-1 below, -(n+1)/(2n+1) on the diagonal); p p^T = D (1/2) D;
    H = D h D, h = g + 1/2: normal iff h^T D^2 h = h D^2 h^T; H + H^T = -I."""
    d2 = [2 * n + 1 for n in range(N)]
    g = [[Fraction(-1) if n > k else Fraction(-(n + 1), 2 * n + 1) if n == k else Fraction(0)
          for k in range(N)] for n in range(N)]
    h = [[g[n][k] + Fraction(1, 2) for k in range(N)] for n in range(N)]
    D2 = [[d2[n] if n == k else 0 for k in range(N)] for n in range(N)]
    assert fmul(fmul(ftr(h), D2), h) == fmul(fmul(h, D2), ftr(h))
    assert all((h[n][k] + h[k][n]) * d2[n] == (-1 if n == k else 0) for n in range(N) for k in range(N))
    F = BallField(128)
    G, _ = legs(F, N)
    sp = nplr(F, "legs", N)
    with ctx.workprec(TIGHT):
        for n in range(N):
            for k in range(N):
                w = tight(("sqrt", d2[n] * d2[k]))
                assert encl(G[n][k], tight(g[n][k]) * w)
                assert encl(sp.H[n][k], tight(h[n][k]) * w)


def test_exact_field_holds_only_rational_splits():
    sp = nplr(E4, "legt", 1, 3)                     # sqrt(1) = 1 throughout
    assert mat_exact(sp.H) == [[0]] and mat_exact(sp.G) == [[Fraction(-1, 3)]]
    with pytest.raises(ValueError, match="irrational"):
        nplr(E4, "legt", 2, 3)
    with pytest.raises(ValueError, match="irrational"):
        nplr(E4, "legs", 1)                         # p_0 = sqrt(1/2)


# -- the splits: ball checks ----------------------------------------------------------

def bmat(F, A, B):
    """A B in the ball field F."""
    out = []
    for row in A:
        out.append([])
        for j in range(len(B[0])):
            acc = F.zero()
            for t, a in enumerate(row):
                acc = F.add(acc, F.mul(a, B[t][j]))
            out[-1].append(acc)
    return out


def bstar(F, A):
    return [[F.conj(A[i][j]) for i in range(len(A))] for j in range(len(A[0]))]




@pytest.mark.parametrize("kind,theta", CASES)
@pytest.mark.parametrize("N", [1, 2, 3, 6, 8])
def test_split_encloses_the_theorem(kind, theta, N):
    F = BallField(128)
    sp = nplr(F, kind, N, theta)
    with ctx.workprec(TIGHT):   # reference arithmetic at the reference precision
        check_similarity(F, sp, kind, theta, N)
        check_split(F, sp, kind, theta, N)


def check_similarity(F, sp, kind, theta, N):
    """G~ = S^-1 G S and B~ = S^-1 B against 400-bit enclosures of the exact values:
    unchanged for LegS and LagT; for LegT G~_nk = e_n e_k sqrt((2k+1)/(2n+1)) G_nk and
    B~_n = sqrt(2n+1)/theta."""
    if kind != "legt":
        G, B = generator(F, kind, N)
        assert all(a.overlaps(b) for ra, rb in zip(sp.G, G) for a, b in zip(ra, rb))
        assert all(a.overlaps(b) for a, b in zip(sp.B, B))
        return
    th, e = Fraction(theta), signs(N)
    for n in range(N):
        assert encl(sp.B[n], tight(("sqrt", 2 * n + 1)) / tight(th))
        for k in range(N):
            g = -(2 * n + 1) * ((-1) ** (n - k) if n >= k else 1) / th
            want = tight(g * e[n] * e[k]) * tight(("sqrt", Fraction(2 * k + 1, 2 * n + 1)))
            assert encl(sp.G[n][k], want)


def check_split(F, sp, kind, theta, N):
    """G~ = H - U V*, H* H = H H*, H + H* = 2c I, and U V* is the explicit term."""
    zero = acb(0)
    UV = bmat(F, sp.U, bstar(F, sp.V))
    HsH, HHs = bmat(F, bstar(F, sp.H), sp.H), bmat(F, sp.H, bstar(F, sp.H))
    e = signs(N)
    for n in range(N):
        for k in range(N):
            assert F.sub(sp.G[n][k], F.sub(sp.H[n][k], UV[n][k])).contains(zero)
            assert F.sub(HsH[n][k], HHs[n][k]).contains(zero)
            assert F.add(sp.H[n][k], F.conj(sp.H[k][n])).contains(tight(2 * sp.shift if n == k else 0))
            w = tight(("sqrt", (2 * n + 1) * (2 * k + 1)))
            if kind == "legs":                     # p p^T, p_n = sqrt(n + 1/2)
                explicit = w / 2
            elif kind == "lagt":                   # (1/2) 1 1^T
                explicit = tight(Fraction(1, 2))
            else:                                  # (s s^T + (s.e)(s.e)^T) / (2 theta)
                explicit = w * (1 + e[n] * e[k]) / (2 * tight(Fraction(theta)))
            assert encl(UV[n][k], explicit)
    assert sp.rank == (2 if kind == "legt" else 1)


def test_split_in_float64_and_counting_fields():
    sp = nplr(Float64Field(), "legs", 5)
    K = np.array(sp.H) + 0.5 * np.eye(5)
    assert np.array_equal(K, -K.T)                  # exactly skew in floats too
    C = Counting(BallField(96))
    spc = nplr(C, "legt", 4, 2)
    spb = nplr(BallField(96), "legt", 4, 2)
    assert C.counts["mul"] > 0
    assert all(C.unwrap(a).overlaps(b) for ra, rb in zip(spc.H, spb.H) for a, b in zip(ra, rb))
