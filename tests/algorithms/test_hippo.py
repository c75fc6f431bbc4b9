"""HiPPO generators, their NPLR splits, the certified DPLR model and the float64 model."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from flint import acb, acb_mat, arb, ctx, fmpq
from hypothesis import given, strategies as st

from s4cert.algorithms.s4.kernels import dense_kernel, kernel_by_powers
from s4cert.algorithms.models.hippo import field_sqrt, generator, hippo_kernel, lagt, legs, legt, similarity
from s4cert.algorithms.models.hippo_dplr import dplr, unitary_diagonalization
from s4cert.algorithms.models.hippo_float64 import FloatModelDistance, dplr_float64, float_model_distance
from s4cert.algorithms.models.hippo_nplr import nplr
from s4cert.algorithms.result import SINGULAR_BILINEAR
from s4cert.algorithms.s4.filter import filter_kernel
from s4cert.arith import BallField, Counting, ExactField, Float64Field, RoundedField, Tracing
from tests.helpers import encloses, exact_equal

E4 = ExactField(4)
TIGHT = 400  # bits of the independent reference enclosures


def rational(F, x) -> Fraction:
    re, im = F.to_fractions(x)
    assert im == 0
    return re


def tight(x) -> arb:
    """A 400-bit enclosure of an exact rational or of sqrt(q) given as ("sqrt", q)."""
    with ctx.workprec(TIGHT):
        if isinstance(x, tuple):
            q = Fraction(x[1])
            return arb(fmpq(q.numerator, q.denominator)).sqrt()
        q = Fraction(x)
        return arb(fmpq(q.numerator, q.denominator))


def encl(ball, ref) -> bool:
    """The module's ball holds the value that the much tighter ``ref`` encloses (an exact
    ball must then lie in ``ref``)."""
    ref = acb(ref)
    return bool(ref.contains(ball)) if ball.is_exact() else bool(ball.contains(ref))


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


CASES = [("legs", None), ("legt", Fraction(5, 2)), ("legt", 0.75), ("lagt", None)]


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


# -- certified unitary diagonalization --------------------------------------------------

def identity_acb(N):
    return acb_mat(N, N, [acb(int(i == j)) for i in range(N) for j in range(N)])


@pytest.mark.parametrize("kind,theta", CASES)
@pytest.mark.parametrize("N", [1, 2, 5, 8])
def test_unitary_diagonalization(kind, theta, N):
    F = BallField(128)
    sp = nplr(F, kind, N, theta)
    lam, W = unitary_diagonalization(sp.H, 128, shift=sp.shift)
    with ctx.workprec(128):
        Wm, Hm = acb_mat(W), acb_mat(sp.H)
        Ws = Wm.conjugate().transpose()
        D = acb_mat(N, N)
        for i in range(N):
            D[i, i] = lam[i]
        assert (Ws * Wm).contains(identity_acb(N))
        assert (Wm * D * Ws).contains(Hm)
        for l in lam:                                  # each is an eigenvalue: det(H - l I) ∋ 0
            assert (Hm - l * identity_acb(N)).det().contains(0)
        assert sum(lam, acb(0)).contains(tight(N * sp.shift))
    c = tight(sp.shift)
    assert all(l.real.is_exact() and l.real.contains(c) for l in lam)
    exact_c = [l for l in lam if l.imag.is_zero()]
    assert len(exact_c) == N % 2                       # the zero of the skew part, exactly
    if kind == "lagt":                                 # -1/2 + (i/2) cot((2j-1) pi/(2N))
        with ctx.workprec(TIGHT):
            ims = [arb.cot(arb.pi() * (2 * j - 1) / (2 * N)) / 2 for j in range(1, N + 1)]
        assert all(any(encl(acb(l.imag), y) for l in lam) for y in ims)


def test_unitary_diagonalization_refuses():
    with pytest.raises(ValueError, match="not normal"):
        unitary_diagonalization([[1, 1], [0, 2]], 128)
    with pytest.raises(ValueError, match="prec"):
        unitary_diagonalization([[1, 0], [0, 1]], 128)      # a double eigenvalue
    with pytest.raises(ValueError, match="raise prec"):
        dplr("legs", 8, prec=8)


def test_rump_algorithm_gives_the_same_model():
    a = dplr("legs", 4, algorithm="rump")
    b = dplr("legs", 4)
    assert all(x.overlaps(y) for x, y in zip(a.Lambda, b.Lambda))


# -- the certified DPLR model encloses the true kernel ----------------------------------

@pytest.mark.parametrize("kind,theta", [("lagt", None), ("legt", Fraction(3, 2)), ("legt", 4)])
@pytest.mark.parametrize("N", [1, 2, 4, 6])
@pytest.mark.parametrize("step", [Fraction(1, 4), 0.1])
def test_dplr_kernel_contains_the_exact_kernel(kind, theta, N, step):
    L = 8
    exact = hippo_kernel(E4, kind, N, step, L, theta)
    assert exact.ok
    model = dplr(kind, N, theta)
    F = BallField(128)
    by_powers = kernel_by_powers(F, model, step, L)
    assert by_powers.ok and all(encloses(k, E4, x) for k, x in zip(by_powers.value, exact.value))
    if kind == "lagt" or N % 2 == 0:   # LegT with odd N has lambda = 0: a pole at z = 1
        filt = filter_kernel(F, model, step, L)
        assert filt.ok and all(encloses(k, E4, x) for k, x in zip(filt.value, exact.value))


@given(C=st.lists(st.builds(Fraction, st.integers(-9, 9), st.integers(1, 5)), min_size=4, max_size=4),
       kind=st.sampled_from(["lagt", "legt"]))
def test_dplr_maps_the_output_vector(C, kind):
    theta = 2 if kind == "legt" else None
    exact = hippo_kernel(E4, kind, 4, Fraction(1, 2), 6, theta, C=C)
    model = dplr(kind, 4, theta, C=C)
    got = kernel_by_powers(BallField(128), model, Fraction(1, 2), 6)
    assert all(encloses(k, E4, x) for k, x in zip(got.value, exact.value))


@pytest.mark.parametrize("N", [1, 2, 3, 5, 8])
def test_dplr_legs_kernel_overlaps_the_dense_reference(N):
    step, L = Fraction(1, 16), 8
    ref = hippo_kernel(BallField(TIGHT), "legs", N, step, L)
    F = BallField(128)
    model = dplr("legs", N)
    for res in (kernel_by_powers(F, model, step, L), filter_kernel(F, model, step, L)):
        assert res.ok
        assert all(k.overlaps(r) for k, r in zip(res.value, ref.value))
    assert max(BallField(TIGHT).radius(r) for r in ref.value) < 2.0 ** -300


def test_dplr_default_C_is_all_ones():
    a, b = dplr("legt", 3, 2), dplr("legt", 3, 2, C=np.ones(3))
    assert all(x.overlaps(y) for x, y in zip(a.C, b.C))


# -- dense kernels ---------------------------------------------------------------------

def test_dense_kernel_small_cases():
    ones = dense_kernel(E4, [[0]], [1], [1], 1, 5)   # examples.md: A = 0, B = C = 1, step 1
    assert [rational(E4, k) for k in ones.value] == [1] * 5
    assert dense_kernel(E4, [[2]], [1], [1], 1, 3).status == SINGULAR_BILINEAR
    with pytest.raises(ValueError):
        dense_kernel(E4, [[1, 2]], [1], [1], 1, 3)
    with pytest.raises(ValueError):
        dense_kernel(E4, [[1]], [1], [1], 1, 0)


# -- the float64 model -------------------------------------------------------------------

@pytest.mark.parametrize("kind,theta", [("legs", None), ("legt", 2.5), ("lagt", None)])
def test_float64_model_is_made_of_floats(kind, theta):
    m = dplr_float64(kind, 6, theta)
    c = -0.5 if kind != "legt" else 0.0
    assert all(type(l) is complex and l.real == c for l in m.Lambda)
    assert m.r == (2 if kind == "legt" else 1)
    assert all(type(x) is complex for row in m.P + m.Q for x in row)


@pytest.mark.parametrize("kind,theta", [("lagt", None), ("legt", 2)])
def test_float_model_distance_is_a_sound_and_close_bound(kind, theta):
    N, step, L = 4, Fraction(1, 8), 6
    d = float_model_distance(kind, N, theta, step=step, L=L)
    assert isinstance(d, FloatModelDistance)
    true = hippo_kernel(E4, kind, N, step, L, theta).value
    flt = dplr_float64(kind, N, theta)
    exact_float_model = kernel_by_powers(E4, flt, step, L).value    # its numbers are exact
    in_float64 = kernel_by_powers(Float64Field(), flt, step, L).value

    def dist2(xs) -> Fraction:
        """max_j |x_j - K_j|^2, exactly."""
        parts = (E4.to_fractions(E4.sub(E4.from_number(x), t)) for x, t in zip(xs, true))
        return max(re * re + im * im for re, im in parts)

    with ctx.workprec(200):
        for bound, xs in ((d.kernel, exact_float_model), (d.kernel_float64, in_float64)):
            q = dist2(xs)
            dist = arb(fmpq(q.numerator, q.denominator)).sqrt()
            assert arb(bound) >= dist                                   # sound
            assert arb(bound) <= dist * (1 + arb(2) ** -40) + arb(2) ** -90   # and close
        scale = max(abs(E4.to_complex(t)) for t in true)
        assert d.kernel_scale >= scale
    assert d.eigenvalues < math.inf and d.weights < math.inf
    if kind == "lagt":   # eigenvalue bound covers the distance to the closed-form spectrum
        with ctx.workprec(TIGHT):
            ims = [arb.cot(arb.pi() * (2 * j - 1) / (2 * N)) / 2 for j in range(1, N + 1)]
        for l in flt.Lambda:
            with ctx.workprec(TIGHT):
                assert any(arb(d.eigenvalues) >= abs(acb(-0.5, y) - acb(l)) for y in ims)


@pytest.mark.parametrize("kind,theta", [("legs", None), ("legt", 0.5), ("lagt", None)])
def test_float64_spectrum_is_within_the_backward_error_bound(kind, theta):
    """eigh is backward stable: each computed eigenvalue of the Hermitian -iK lies within
    p(N) eps ||K||_2 of an exact one (Weyl); p(N) = 8 N is a generous such factor."""
    N = 8
    K = np.array(nplr(Float64Field(), kind, N, theta).H)
    K = K - np.diag(np.diag(K))                    # the skew part
    d = float_model_distance(kind, N, theta, step=Fraction(1, 8), L=4)
    assert d.eigenvalues <= 8 * N * 2.0 ** -52 * np.linalg.norm(K, "fro")
    # the float model is a model of the same system: its parameters carry errors of order
    # N eps cond (below 2^-40 here, the spectra being well separated); a wrong pairing of
    # eigenvalues and eigenvectors would be off by order one
    assert d.kernel <= 2.0 ** -40 * d.kernel_scale and d.weights <= 2.0 ** -30


def test_flint_precision_is_left_unchanged():
    before = ctx.prec
    dplr("legt", 3, 2, prec=200)
    float_model_distance("lagt", 2, step=1, L=2, prec=90)
    field_sqrt(BallField(300), 7)
    assert ctx.prec == before
