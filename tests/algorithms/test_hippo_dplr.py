"""The certified unitary diagonalization and DPLR model of the HiPPO systems, the dense
reference kernel and the float64 model."""
from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np
import pytest
from flint import acb, acb_mat, arb, ctx, fmpq
from hypothesis import given, strategies as st

from s4cert.algorithms.models.hippo import check_kind, field_sqrt, hippo_kernel
from s4cert.algorithms.models.hippo_dplr import (VERIFIED_MAX_PREC, dplr, dplr_with_route, split_model,
                                                 split_vectors, structured_skew, unitary_diagonalization)
from s4cert.algorithms.models.hippo_verified_eig import VerificationFailed, eigendecomposition, verify
from s4cert.algorithms.models.hippo_float64 import FloatModelDistance, dplr_float64, float_model_distance
from s4cert.algorithms.models.hippo_nplr import nplr
from s4cert.algorithms.result import SINGULAR_BILINEAR
from s4cert.algorithms.s4.filter import filter_kernel
from s4cert.algorithms.s4.kernels import dense_kernel, kernel_by_powers
from s4cert.arith import BallField, Float64Field
from s4cert.arith.triple_double import TD
from tests.algorithms.hippo_refs import CASES, E4, TIGHT, encl, rational, tight
from tests.helpers import encloses


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
        dplr("legs", 8, prec=8, route="ball")


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
    ones = dense_kernel(E4, [[0]], [1], [1], 1, 5)   # proofs/spec.md §S41: A = 0, B = C = 1, step 1
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


# -- the verified fast route against the ball route ----------------------------------------

REF_PREC = 256


@lru_cache(maxsize=None)
def ball_reference(kind, theta, N):
    """The ball route's model at 256 bits (radii far below the verified route's)."""
    m, route = dplr_with_route(kind, N, theta, prec=REF_PREC, route="ball")
    assert route == "ball"
    return m


def invariants(m):
    """The products that no unitary change within eigenspaces (phases) alters, per index:
    conj(C'_i) B'_i, conj(C'_i) P_ia, conj(Q_ia) B'_i, conj(Q_ia) P_ib (proofs/unitary_dplr.md §5)."""
    with ctx.workprec(REF_PREC):
        out = []
        for i in range(m.N):
            c, b, p, q = m.C[i].conjugate(), m.B[i], m.P[i], [x.conjugate() for x in m.Q[i]]
            out.append([c * b] + [c * x for x in p] + [y * b for y in q] + [y * x for y in q for x in p])
        return out


@pytest.mark.parametrize("kind,theta", CASES)
@pytest.mark.parametrize("N", [8, 16, 32])
def test_verified_model_contains_the_ball_model(kind, theta, N):
    fast, route = dplr_with_route(kind, N, theta)
    assert route == "verified"
    ref = ball_reference(kind, theta, N)
    c = tight(Fraction(0) if kind == "legt" else Fraction(-1, 2))
    assert all(l.real.is_exact() and l.real.contains(c) for l in fast.Lambda)
    assert sum(1 for l in fast.Lambda if l.imag.is_zero()) == N % 2     # the skew part's zero, exactly
    assert all(encl(x, y) for x, y in zip(fast.Lambda, ref.Lambda))      # both sorted by Im
    for a, b in zip(invariants(fast), invariants(ref)):
        assert len(a) == len(b) and all(x.contains(y) for x, y in zip(a, b))
    worst = max(max(float(x.real.rad()), float(x.imag.rad())) for x in fast.Lambda + fast.B + fast.C)
    assert worst < 2.0 ** -110                                          # as the float64 disk route reads them


@pytest.mark.parametrize("kind,theta,N", [("legs", None, 16), ("legt", Fraction(5, 2), 16), ("lagt", None, 15)])
def test_verified_kernel_contains_the_ball_kernel(kind, theta, N):
    step, L = Fraction(1, 64), 16
    F = BallField(128)
    fast = kernel_by_powers(F, dplr(kind, N, theta), step, L)
    ref = kernel_by_powers(BallField(REF_PREC), ball_reference(kind, theta, N), step, L)
    assert fast.ok and ref.ok
    assert all(k.contains(r) for k, r in zip(fast.value, ref.value))
    assert max(F.radius(k) for k in fast.value) < 2.0 ** -60


def test_eigenvector_bound_covers_the_distance_to_the_ball_eigenvectors():
    """||w_i - x_i|| <= beta_i with w_i the ball route's unit eigenvector, its phase chosen
    so that w_i* x_i >= 0 (the sin-theta bound and the norm defect, proofs/verified_eig.md)."""
    N = 12
    v = eigendecomposition(structured_skew("legs", N, None, 128))
    sp = nplr(BallField(REF_PREC), "legs", N)
    lam, W = unitary_diagonalization(sp.H, REF_PREC, shift=sp.shift)
    checked = 0
    with ctx.workprec(REF_PREC):
        for i in range(N):
            x = [acb(sum((arb(float(p[k, i].real)) for p in v.X), arb(0)),
                     sum((arb(float(p[k, i].imag)) for p in v.X), arb(0))) for k in range(N)]
            w = [W[k][i] for k in range(N)]
            dot = sum((a.conjugate() * b for a, b in zip(w, x)), acb(0))
            phase = dot / abs(dot)
            dist = sum((abs(a * phase - b) ** 2 for a, b in zip(w, x)), arb(0)).sqrt()
            assert arb(float(v.beta[i])) >= dist
            omega = sum((arb(float(p[i])) for p in v.omega), arb(0)) + arb(0, float(v.rho[i]))
            assert omega.contains(lam[i].imag)
            checked += 1
    assert checked == N and float(np.max(v.beta)) < 2.0 ** -110


@pytest.mark.parametrize("kind,theta", CASES)
@pytest.mark.parametrize("N", [1, 6, 7])
def test_structured_skew_is_the_split_skew_part(kind, theta, N):
    _, th = check_kind(kind, theta)
    op = structured_skew(kind, N, th, 256)
    KX = op.apply(TD.exact(np.eye(N) + 0j))
    sp = nplr(BallField(TIGHT), kind, N, theta)
    with ctx.workprec(TIGHT):
        for n in range(N):
            for k in range(N):
                ref = sp.H[n][k] - (tight(sp.shift) if n == k else 0)
                mid = acb(arb(float(KX.r0[n, k])) + arb(float(KX.r1[n, k])) + arb(float(KX.r2[n, k])),
                          arb(float(KX.i0[n, k])) + arb(float(KX.i1[n, k])) + arb(float(KX.i2[n, k])))
                assert arb(float(KX.rad[n, k])) >= abs(mid - ref)
    F = BallField(128)
    U, V, B, S = split_vectors(F, kind, N, th)
    sp = nplr(F, kind, N, theta)
    for got, want in ((U, sp.U), (V, sp.V), ([B], [sp.B]), ([S], [sp.S])):
        assert all(x.overlaps(y) for a, b in zip(got, want) for x, y in zip(a, b))


def householder(v):
    """I - 2 v v^T / (v^T v): a rational orthogonal matrix."""
    n, s = len(v), sum(x * x for x in v)
    return [[Fraction(int(i == j)) - Fraction(2 * v[i] * v[j], s) for j in range(n)] for i in range(n)]


def rotated_skew(a, b, c):
    """c I + Q^T (a J + b J) Q, J = [[0, 1], [-1, 0]] blocks: real skew part with
    eigenvalues +-ia, +-ib, Q a rational Householder reflection."""
    K0 = [[0, a, 0, 0], [-a, 0, 0, 0], [0, 0, 0, b], [0, 0, -b, 0]]
    Q = householder([1, 2, 2, 3])
    K = [[sum(Q[k][i] * K0[k][l] * Q[l][j] for k in range(4) for l in range(4)) for j in range(4)] for i in range(4)]
    return [[K[i][j] + (c if i == j else 0) for j in range(4)] for i in range(4)]


def test_dense_verified_route_and_the_fallback_on_a_cluster():
    c = Fraction(-1, 2)
    U = [[Fraction(1, k + 1)] for k in range(4)]
    B, Ct = [1, 2, 3, 4], [1, -1, 1, 1]
    spread, route = split_model(rotated_skew(1, 2, c), c, U, U, B, Ct, prec=200)
    assert route == "verified"
    cluster = rotated_skew(1, 1 + Fraction(1, 2 ** 70), c)          # +-i twice, 2^-70 apart
    with pytest.raises(ValueError, match="verified diagonalization failed"):
        split_model(cluster, c, U, U, B, Ct, prec=200, route="verified")
    model, route = split_model(cluster, c, U, U, B, Ct, prec=200)
    assert route == "ball"
    with ctx.workprec(TIGHT):
        eig = [acb(tight(c), s * y) for s in (-1, 1) for y in (tight(1), tight(1 + Fraction(1, 2 ** 70)))]
    assert all(sum(1 for l in model.Lambda if l.contains(e)) == 1 for e in eig)
    for m, H in ((spread, rotated_skew(1, 2, c)), (model, cluster)):
        A = [[H[i][j] - U[i][0] * U[j][0] for j in range(4)] for i in range(4)]    # G~ = H - U U^T
        exact = dense_kernel(E4, A, B, Ct, Fraction(1, 4), 6)
        kern = kernel_by_powers(BallField(200), m, Fraction(1, 4), 6)
        assert exact.ok and kern.ok and all(encloses(k, E4, x) for k, x in zip(kern.value, exact.value))


def test_verify_refuses_pairs_that_are_not_eigenpairs():
    op = structured_skew("legs", 6, None, 128)
    K = op.dense_float()
    omega, X = np.linalg.eigh(-1j * K)
    z, w = np.zeros_like(X), [omega, np.zeros(6)]
    v = verify(op, w, [X, z])                                # float64 pairs: verified, coarser
    assert float(np.max(v.beta)) < 2.0 ** -30
    with pytest.raises(VerificationFailed):
        verify(op, w, [np.eye(6) + 0j, z])                   # not eigenvectors
    with pytest.raises(VerificationFailed):
        verify(op, w, [2 * X, z])                            # not unit columns
    with pytest.raises(VerificationFailed):
        verify(op, [omega[::-1].copy(), np.zeros(6)], [X[:, ::-1].copy(), z])   # not in increasing order


def test_route_choice_and_refusals():
    assert dplr_with_route("legs", 4, prec=VERIFIED_MAX_PREC)[1] == "verified"
    assert dplr_with_route("legs", 4, prec=VERIFIED_MAX_PREC + 1)[1] == "ball"
    assert dplr_with_route("legs", 4, algorithm="rump")[1] == "ball"
    with pytest.raises(ValueError, match="route"):
        dplr("legs", 4, route="fast")
    with pytest.raises(ValueError, match="ball route only"):
        dplr("legs", 4, algorithm="rump", route="verified")
