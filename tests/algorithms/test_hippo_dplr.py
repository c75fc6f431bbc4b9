"""The certified unitary diagonalization and DPLR model of the HiPPO systems, the dense
reference kernel and the float64 model."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from flint import acb, acb_mat, arb, ctx, fmpq
from hypothesis import given, strategies as st

from s4cert.algorithms.models.hippo import field_sqrt, hippo_kernel
from s4cert.algorithms.models.hippo_dplr import dplr, unitary_diagonalization
from s4cert.algorithms.models.hippo_float64 import FloatModelDistance, dplr_float64, float_model_distance
from s4cert.algorithms.models.hippo_nplr import nplr
from s4cert.algorithms.result import SINGULAR_BILINEAR
from s4cert.algorithms.s4.filter import filter_kernel
from s4cert.algorithms.s4.kernels import dense_kernel, kernel_by_powers
from s4cert.arith import BallField, Float64Field
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
