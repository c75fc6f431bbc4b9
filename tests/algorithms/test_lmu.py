"""The LMU port: LegT matrices, certified ZOH and impulse response, the layers, the audit.

Floating-point comparisons use bounds derived in proofs/lmu_port.md; the exact
references are rational computations on the very float64 numbers the layers hold.
"""
from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from flint import arb, ctx, fmpq
from hypothesis import given
from hypothesis import strategies as st

from s4cert.algorithms.dft import dft, idft
from s4cert.algorithms.models.lmu import LMU, LMUFFT, LMUCell
from s4cert.algorithms.models.lmu_audit import (certified_impulse_response, error_bounds, float64_running_bound,
                                                lmu_audit)
from s4cert.algorithms.models.lmu_memory import (impulse_response, impulse_response_powers, legt_matrices,
                                                 legt_model, state_space_matrices, zoh_certified)
from s4cert.algorithms.models.lti_simulate import augmented_exponential, flint_matrices
from s4cert.arith import ExactField, Truth

U64 = Fraction(1, 2 ** 53)

thetas = st.one_of(st.integers(1, 40), st.builds(Fraction, st.integers(1, 60), st.integers(1, 7)))


def _q(x: Fraction) -> arb:
    return arb(fmpq(x.numerator, x.denominator))


def _gamma(k: int) -> Fraction:
    return k * U64 / (1 - k * U64)


# -- the LegT system -------------------------------------------------------------------

@given(st.integers(1, 9), thetas)
def test_legt_matrices_equal_spec_G_T_and_B(N, theta):
    """The reference's A is the spec's LegT generator G^T; B_n = (2n+1)(-1)^n / theta."""
    A, B = legt_matrices(N, theta)
    th = Fraction(theta)
    for n in range(N):
        for k in range(N):
            spec = -(2 * n + 1) * (-1) ** (n - k) / th if n >= k else -(2 * n + 1) / th
            assert A[n][k] == spec
        assert B[n] == (2 * n + 1) * (-1) ** n / th


@pytest.mark.parametrize("N,theta", [(1, 1), (5, 4), (12, 16), (7, 0.5)])
def test_legt_matrices_equal_the_reference_construction(N, theta):
    """The reference's numpy construction, retyped; theta a power of two makes every
    float64 entry exact, so equality is exact."""
    Q = np.arange(N, dtype=np.float64).reshape(-1, 1)
    R = (2 * Q + 1) / theta
    i, j = np.meshgrid(Q, Q, indexing="ij")
    A_ref = R * np.where(i < j, -1, (-1.0) ** (i - j + 1))
    B_ref = R * ((-1.0) ** Q)
    A, B = legt_matrices(N, theta)
    assert np.array_equal(A_ref, np.array([[float(a) for a in r] for r in A]))
    assert np.array_equal(B_ref.ravel(), np.array([float(b) for b in B]))
    m = legt_model(N, theta)
    assert (m.N, m.m, m.p) == (N, 1, 1)


@given(st.integers(1, 10), thetas)
def test_legt_lyapunov_identity(N, theta):
    """A W + W A^T = -(1/theta)(v v^T + c c^T), W = diag(2n+1), v_n = (2n+1)(-1)^n,
    c_n = 2n+1: so e^{At} does not increase ||x||_S^2 = x^T W^-1 x (proofs/lmu_port.md)."""
    A, _ = legt_matrices(N, theta)
    th = Fraction(theta)
    w = [2 * n + 1 for n in range(N)]
    v = [(2 * n + 1) * (-1) ** n for n in range(N)]
    for n in range(N):
        for k in range(N):
            assert A[n][k] * w[k] + w[n] * A[k][n] == -(v[n] * v[k] + w[n] * w[k]) / th


# -- certified ZOH and impulse response ----------------------------------------------------

def _mpf_to_arb(x) -> arb:
    sign, man, exp, _ = mpmath.mpf(x)._mpf_  # x = (-1)^sign man 2^exp, exactly
    return _q((-1) ** sign * Fraction(int(man)) * Fraction(2) ** int(exp))


@pytest.mark.parametrize("N,theta", [(4, 4), (7, Fraction(5, 2)), (12, 30)])
def test_zoh_balls_contain_an_independent_expm(N, theta):
    """mpmath's expm (its own algorithm, 400 bits) of the augmented matrix [[A, B], [0, 0]]
    lies inside the 128-bit certified balls of Abar = e^A and Bbar = int_0^1 e^{As} ds B."""
    A, B = legt_matrices(N, theta)
    Ad, Bd = zoh_certified(N, theta, prec=128)
    with mpmath.workprec(400):
        M = mpmath.zeros(N + 1, N + 1)
        for i in range(N):
            for j in range(N):
                M[i, j] = mpmath.mpf(A[i][j].numerator) / A[i][j].denominator
            M[i, N] = mpmath.mpf(B[i].numerator) / B[i].denominator
        E = mpmath.expm(M)
        with ctx.workprec(1024):
            for i in range(N):
                assert bool(Bd[i, 0].contains(_mpf_to_arb(E[i, N])))
                for j in range(N):
                    assert bool(Ad[i, j].contains(_mpf_to_arb(E[i, j])))
    with ctx.workprec(128):
        assert all(bool(x.rad() < arb(2) ** -100) for x in Ad.entries() + Bd.entries())


def test_float64_matrices_are_the_rounded_midpoints():
    Ad, Bd = zoh_certified(9, 7)
    A, B = state_space_matrices(9, 7)
    assert A.shape == (9, 9) and B.shape == (9, 1) and A.dtype == np.float64
    assert all(A[i, j] == float(Ad[i, j].mid()) for i in range(9) for j in range(9))
    assert all(B[i, 0] == float(Bd[i, 0].mid()) for i in range(9))
    cell = LMUCell(1, 1, 9, 7, seed=0)
    assert np.array_equal(cell.A, A) and np.array_equal(cell.B, B)


@pytest.mark.parametrize("N,theta,L,prec", [(6, 5, 40, 128), (16, Fraction(33, 2), 120, 128),
                                            (16, Fraction(33, 2), 400, 40), (30, 7, 300, 36)])
def test_certified_impulse_contains_independent_integral(N, theta, L, prec):
    """The impulse response identity Abar^t Bbar = int_t^{t+1} e^{As} ds B = Gamma(t+1) - Gamma(t),
    Gamma(tau) = int_0^tau e^{As} ds B, each Gamma from one exponential at 400 bits (no
    steps, no wrapping): these tight balls lie inside the certified ones.  At low working
    precision the step residuals dominate the radii, so their accumulation is exercised."""
    enc = certified_impulse_response(N, theta, L, prec=prec)
    assert enc.max_radius() < (1e-25 if prec >= 128 else 1e-2)  # informative balls
    model = legt_model(N, theta)
    with ctx.workprec(400):
        A, B, _, _ = flint_matrices(model)
        for t in sorted({0, 1, 2, L // 3, L // 2, L - 2, L - 1}):
            G1 = augmented_exponential(A, B, Fraction(t + 1))[1]
            G0 = augmented_exponential(A, B, Fraction(t))[1] if t else None
            for i in range(N):
                indep = G1[i, 0] - G0[i, 0] if t else G1[i, 0]
                assert bool(enc.balls[i, t].contains(indep))


@pytest.mark.parametrize("N,theta,L", [(6, 5, 60), (24, 24, 200)])
def test_float64_impulse_within_derived_bound(N, theta, L):
    """H computed in float64 by matrix-vector steps from the float64 midpoints is within the
    derived running bound of the exact H; the certified balls show it entry by entry:
    the certified lower bound of |H64 - H| never exceeds the derived bound."""
    enc = certified_impulse_response(N, theta, L)
    A, B = state_space_matrices(N, theta)
    H = impulse_response(A, B, L)
    bound = float64_running_bound(enc, A, B, H)
    with ctx.workprec(enc.prec):
        for i in range(N):
            for t in range(L):
                d = arb(float(H[i, t])) - enc.balls[i, t]
                assert bool(d.abs_lower() <= arb(float(bound[i, t])))
    # the bound is informative: far below the size of H itself
    assert bound.max() < 1e-8 * np.abs(H).max()


def test_impulse_response_ways_agree_exactly_in_exact_arithmetic():
    """Matrix-vector steps and matrix powers are the same numbers A^t B when every operation
    is exact: dyadic A, B with few bits keep float64 exact for a few steps."""
    A = np.array([[0.5, -0.25], [0.125, 0.75]])
    B = np.array([[1.0], [-0.5]])
    H1, H2 = impulse_response(A, B, 6), impulse_response_powers(A, B, 6)
    exact = [np.array([Fraction(1), Fraction(-1, 2)])]
    Aq = [[Fraction(a) for a in r] for r in A]
    for _ in range(5):
        v = exact[-1]
        exact.append(np.array([sum(Aq[i][k] * v[k] for k in range(2)) for i in range(2)]))
    ex = np.array([[float(e) for e in col] for col in exact]).T
    assert np.array_equal(H1, ex) and np.array_equal(H2, ex)


# -- the memory: recurrence, convolution, FFT ---------------------------------------------

def _exact_recurrence(A: np.ndarray, B: np.ndarray, u: np.ndarray) -> list[list[Fraction]]:
    """m_t = A m_{t-1} + B u_t, m_{-1} = 0, exactly on the float64 data."""
    N = A.shape[0]
    Aq = [[Fraction(a) for a in r] for r in A]
    Bq = [Fraction(b) for b in B.ravel()]
    m = [Fraction(0)] * N
    out = []
    for ut in u:
        uq = Fraction(ut)
        m = [sum(Aq[i][k] * m[k] for k in range(N)) + Bq[i] * uq for i in range(N)]
        out.append(m)
    return out


def _exact_convolution(H: np.ndarray, u: np.ndarray) -> list[list[Fraction]]:
    N = H.shape[0]
    Hq = [[Fraction(h) for h in r] for r in H]
    uq = [Fraction(x) for x in u]
    return [[sum(Hq[i][j] * uq[t - j] for j in range(t + 1)) for i in range(N)] for t in range(len(u))]


@pytest.mark.parametrize("T", [8, 5])
def test_fft_convolution_equals_recurrence_exactly(T):
    """The LMUFFT recipe in exact arithmetic (Q(zeta_16)): zero-pad u (length T) and each
    H_i (length seq_len = 8) to n = 16, multiply the DFTs, invert, keep T entries; this is
    exactly the recurrence m_t = A m_{t-1} + B u_t with H_t = A^t B."""
    S, N = 8, 4
    A, B = state_space_matrices(N, 6)
    rng = np.random.default_rng(1)
    u = rng.standard_normal(T)
    E = ExactField(16)
    Aq = [[Fraction(a) for a in r] for r in A]
    Hq = [[Fraction(b) for b in B.ravel()]]
    for _ in range(S - 1):
        Hq.append([sum(Aq[i][k] * Hq[-1][k] for k in range(N)) for i in range(N)])
    n = 2 * S
    pad = lambda xs: [E.from_number(x) for x in xs] + [E.zero()] * (n - len(xs))
    fu = dft(E, pad(list(u)))
    rec = _exact_recurrence(A, B, u)
    for i in range(N):
        fh = dft(E, pad([Hq[t][i] for t in range(S)]))
        m = idft(E, [E.mul(a, b) for a, b in zip(fu, fh)])[:T]
        for t in range(T):
            assert E.is_zero(E.sub(m[t], E.from_number(rec[t][i]))) is Truth.TRUE


def _fft_model_bound(u: np.ndarray, h: np.ndarray, n: int) -> arb:
    """proofs/lmu_port.md, "FFT path": ||c_computed - u * h||_2 under the FFT error model
    (Higham, Thm 24.2, radix 2, twiddle error mu <= 4u)."""
    with ctx.workprec(64):
        uu = _q(U64)
        k = n.bit_length() - 1
        mu = 4 * uu
        g2, g4 = 2 * uu / (1 - 2 * uu), 4 * uu / (1 - 4 * uu)
        eta = mu + g4 * (arb(2).sqrt() + mu)
        eps = k * eta / (1 - k * eta)
        kappa = arb(2).sqrt() * g2
        rn = arb(n).sqrt()
        a2 = sum((_q(Fraction(x)) ** 2 for x in u), arb(0)).sqrt()
        a1 = sum((abs(_q(Fraction(x))) for x in u), arb(0))
        b2 = sum((_q(Fraction(x)) ** 2 for x in h), arb(0)).sqrt()
        b1 = sum((abs(_q(Fraction(x))) for x in h), arb(0))
        dp = (eps * rn * (a2 * b1 + a1 * b2) + eps ** 2 * n * a2 * b2
              + kappa * (1 + eps) * rn * a2 * (b1 + eps * rn * b2))
        p = rn * a2 * b1
        return ((2 / arb(n)).sqrt() * (dp * (1 + eps) + eps * p)).upper()


@pytest.mark.parametrize("T", [16, 11])
def test_cell_memory_equals_lmufft_memory(T):
    """e_h = e_m = 0, e_x = W_u = (1, 0), bias 0, x[..., 0] >= 0: both layers drive the
    memory with u_t = x_t[0] (exactly).  Against the exact recurrence on the float64 A, B:
    the cell path is within its rigorous running bound (gamma_{N+2}); the FFT path is within
    the FFT-model bound of the exact convolution of the layer's H, and that H differs from
    A^t B by an exactly computed amount; so the two memories agree within the sum."""
    S, N = 16, 6
    cell = LMUCell(2, 3, N, theta=9, seed=2)
    cell.e_x = [[1.0, 0.0]]
    cell.e_h = np.zeros((1, 3))
    cell.e_m = np.zeros((1, N))
    fft = LMUFFT(2, 3, N, seq_len=S, theta=9, seed=3)
    fft.W_u.weight = [[1.0, 0.0]]
    fft.W_u.bias = [0.0]
    assert np.array_equal(cell.A, fft.A) and np.array_equal(cell.B, fft.B)
    rng = np.random.default_rng(4)
    x = np.stack([rng.uniform(0, 1, (2, T)), rng.standard_normal((2, T))], axis=-1)

    h, m = np.zeros((2, 3)), np.zeros((2, N))
    m_cell = []
    for t in range(T):
        h, m = cell(x[:, t, :], (h, m))
        m_cell.append(m)
    m_cell = np.stack(m_cell, axis=1)
    u = np.maximum(fft.W_u(x), 0)[:, :, 0]
    assert np.array_equal(u, x[:, :, 0])
    m_fft = fft.memory(u)
    assert m_fft.shape == (2, T, N)

    A, B = cell.A, cell.B
    absA = [[abs(Fraction(a)) for a in r] for r in A]
    absB = [abs(Fraction(b)) for b in B.ravel()]
    g = _gamma(N + 2)
    for b in range(2):
        rec = _exact_recurrence(A, B, u[b])
        conv = _exact_convolution(fft.H, u[b])
        # cell: e_t <= |A| e_{t-1} + gamma_{N+2} (|A| |m_{t-1}| + |B| |u_t|), exactly
        e = [Fraction(0)] * N
        prev = [Fraction(0)] * N
        cell_bound = []
        for t in range(T):
            ut = abs(Fraction(u[b, t]))
            e = [sum(absA[i][k] * e[k] for k in range(N))
                 + g * (sum(absA[i][k] * abs(prev[k]) for k in range(N)) + absB[i] * ut) for i in range(N)]
            prev = [Fraction(v) for v in m_cell[b, t]]
            cell_bound.append(e)
            assert all(abs(Fraction(m_cell[b, t, i]) - rec[t][i]) <= e[i] for i in range(N))
        for i in range(N):
            fb = _fft_model_bound(u[b], fft.H[i], 2 * S)
            with ctx.workprec(64):
                err2 = sum((_q(Fraction(m_fft[b, t, i]) - conv[t][i]) ** 2 for t in range(T)), arb(0))
                assert bool(err2 <= fb * fb)
                for t in range(T):
                    gap = abs(Fraction(m_cell[b, t, i]) - Fraction(m_fft[b, t, i]))
                    allowed = (_q(cell_bound[t][i]) + fb + _q(abs(conv[t][i] - rec[t][i]))).upper()
                    assert bool(_q(gap) <= allowed)


# -- the layers ---------------------------------------------------------------------------

def test_lmu_layer_is_the_cell_loop():
    lmu = LMU(3, 4, 5, theta=6, seed=7)
    x = np.random.default_rng(0).standard_normal((2, 9, 3))
    out, (h_n, m_n) = lmu(x)
    h, m = np.zeros((2, 4)), np.zeros((2, 5))
    for t in range(9):
        h, m = lmu.cell(x[:, t, :], (h, m))
        assert np.array_equal(out[:, t, :], h)
    assert np.array_equal(h_n, h) and np.array_equal(m_n, m)
    out2, _ = lmu(x, state=(np.zeros((2, 4)), np.zeros((2, 5))))
    assert np.array_equal(out, out2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_state_and_outputs_follow_the_input_dtype(dtype):
    x = np.ones((2, 4, 3), dtype=dtype)
    out, (h, m) = LMU(3, 4, 5, theta=6, seed=0)(x)
    assert out.dtype == h.dtype == m.dtype == dtype
    hf, hn = LMUFFT(3, 4, 5, seq_len=8, theta=6, seed=0)(x)
    assert hf.dtype == hn.dtype == dtype


def test_lmufft_forward_matches_its_definition():
    """h = relu(W_h [m; x] + b_h) with m the memory of u = relu(W_u x + b_u), h_n = h[:, -1]."""
    f = LMUFFT(3, 4, 5, seq_len=10, theta=8, seed=5)
    x = np.random.default_rng(2).standard_normal((2, 7, 3))
    h, h_n = f(x)
    u = np.maximum(x @ f.W_u.weight.T + f.W_u.bias, 0)[:, :, 0]
    m = f.memory(u)
    assert np.array_equal(h, np.maximum(np.concatenate((m, x), -1) @ f.W_h.weight.T + f.W_h.bias, 0))
    assert np.array_equal(h_n, h[:, -1, :])
    assert f.H.shape == (5, 10) and f.fft_H.shape == (5, 11)
    assert np.array_equal(f.H, impulse_response(f.A, f.B, 10))


def test_initialisation_follows_the_reference():
    cell = LMUCell(3, 5, 7, theta=4, seed=11)
    assert cell.e_x.shape == (1, 3) and cell.e_h.shape == (1, 5) and cell.e_m.shape == (1, 7)
    assert cell.W_x.shape == (5, 3) and cell.W_h.shape == (5, 5) and cell.W_m.shape == (5, 7)
    assert np.all(np.abs(cell.e_x) <= math.sqrt(3 / 3)) and np.all(np.abs(cell.e_h) <= math.sqrt(3 / 5))
    assert not np.any(cell.e_m)
    again = LMUCell(3, 5, 7, theta=4, seed=11)
    for name in ("e_x", "e_h", "W_x", "W_h", "W_m"):
        assert np.array_equal(getattr(cell, name), getattr(again, name))
    f = LMUFFT(3, 5, 7, seq_len=4, theta=4, seed=np.random.default_rng(3))
    assert f.W_u.weight.shape == (1, 3) and f.W_u.bias.shape == (1,)
    assert f.W_h.weight.shape == (5, 10) and f.W_h.bias.shape == (5,)
    assert np.all(np.abs(f.W_u.weight) <= 1 / math.sqrt(3)) and np.all(np.abs(f.W_h.bias) <= 1 / math.sqrt(10))


def test_weights_are_settable_and_checked():
    cell = LMUCell(2, 3, 4, theta=4, seed=0)
    cell.W_m = np.ones((3, 4))
    assert np.array_equal(cell.W_m, np.ones((3, 4)))
    for name, bad in (("W_m", np.ones((4, 3))), ("e_x", [[np.nan, 0.0]]), ("e_h", [[1j, 0, 0]])):
        with pytest.raises(ValueError):
            setattr(cell, name, bad)
    f = LMUFFT(2, 3, 4, seq_len=6, theta=4, seed=0)
    f.A = np.eye(4) / 2
    assert np.array_equal(f.H[:, 1], f.B[:, 0] / 2)
    with pytest.raises(ValueError):
        f.B = np.ones((3, 1))


@pytest.mark.parametrize("call", [
    lambda: LMU(2, 3, 4, theta=4)(np.ones((2, 5))),                  # not [batch, time, features]
    lambda: LMU(2, 3, 4, theta=4)(np.ones((2, 5, 3))),               # wrong feature count
    lambda: LMU(2, 3, 4, theta=4)(np.full((1, 2, 2), np.inf)),
    lambda: LMU(2, 3, 4, theta=4)(np.ones((1, 2, 2), complex)),
    lambda: LMU(2, 3, 4, theta=4)(np.ones((1, 0, 2))),
    lambda: LMU(2, 3, 4, theta=4)(np.ones((1, 2, 2)), state=(np.zeros((1, 3)), np.zeros((1, 5)))),
    lambda: LMUFFT(2, 3, 4, seq_len=5, theta=4)(np.ones((1, 6, 2))),  # longer than seq_len
    lambda: LMUCell(0, 3, 4, theta=4),
    lambda: LMUCell(2, 3, 4, theta=0),
    lambda: LMUCell(2, 3, 4, theta=float("nan")),
    lambda: LMUFFT(2, 3, 4, seq_len=0, theta=4),
    lambda: legt_matrices(3, -1),
    lambda: certified_impulse_response(3, 3, 0),
    lambda: lmu_audit(3, 3, 4, prec=8),
])
def test_validation(call):
    with pytest.raises(ValueError):
        call()


# -- the audit ------------------------------------------------------------------------------

def test_lmu_audit_bounds_are_certified_and_consistent():
    """For each construction: 0 <= lower <= upper < inf, and upper - lower is at most twice
    the largest certified radius plus the outward float rounding (each entry's bounds are
    |d| -+ radius, d = H - ball computed at >= 128 bits with |d| < 1, so its own rounding
    is below 2^-100); ours_float64 has lower <= the derived running bound (both bound the
    same true error); a second run at another precision gives overlapping intervals."""
    a = lmu_audit(48, 48, 300)
    b = lmu_audit(48, 48, 300, prec=160)
    assert (a["memory_size"], a["length"], a["theta"]) == (48, 300, 48.0)
    rad = a["certified_max_radius"]
    assert rad < 1e-25
    names = ("reference_float32", "reference_float64", "ours_float32", "ours_float64")
    assert set(a["errors"]) == set(names)
    for name in names:
        e, f = a["errors"][name], b["errors"][name]
        assert 0 <= e["lower"] <= e["upper"] < math.inf
        assert e["upper"] - e["lower"] <= 2 * rad + 2 * np.spacing(e["upper"]) + 2.0 ** -100
        assert max(e["lower"], f["lower"]) <= min(e["upper"], f["upper"])
    o = a["errors"]["ours_float64"]
    assert o["lower"] <= o["running_bound"]


def test_error_bounds_of_the_exact_midpoints_are_tiny():
    """error_bounds of an array equal to the rounded midpoints: the upper bound is at most
    half an ulp of the largest entry plus the radius, since the float64 rounding of each
    midpoint moves it by at most half an ulp."""
    enc = certified_impulse_response(5, 5, 30)
    H = enc.midpoint()
    r = error_bounds(enc, H)
    assert 0 <= r["lower"] <= r["upper"] <= np.spacing(np.abs(H).max()) / 2 + enc.max_radius() * 2
    with pytest.raises(ValueError):
        error_bounds(enc, H[:, :5])
