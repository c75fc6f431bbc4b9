"""Tests of the per-pair work of the float64 Cauchy sums (algorithms/s4/cauchy_f64_rows.py):
the compiled loop reproduces the numpy passes bitwise (so Lemmas 8-10 of
proofs/midrad_filter.md cover it), the check before its first use refuses a loop that
rounds differently, and the sums on either form contain 300-bit ball sums."""
import math

import numpy as np
import pytest
from flint import acb, arb, ctx
from hypothesis import given, strategies as st

from s4cert.algorithms.s4 import cauchy_f64_rows as R
from s4cert.algorithms.s4.midrad import cauchy_direct_midrad
from s4cert.arith.midrad import MR, roots_of_unity_dd

numba = pytest.importorskip("numba", reason="the compiled loop needs the 'fast' extra (numba)")


def _problem(seed: int, w: int, n: int, close: bool):
    rng = np.random.default_rng(seed)
    z = [rng.standard_normal(w) for _ in range(2)] + [rng.standard_normal(w) * 2.0 ** -55 for _ in range(2)]
    p = [rng.standard_normal(n) for _ in range(2)] + [rng.standard_normal(n) * 2.0 ** -55 for _ in range(2)]
    if close:   # a pole next to a root: inv spans many binades within the block
        p[0][0], p[1][0] = z[0][w // 2] + 2.0 ** -30, z[1][w // 2]
    return [np.ascontiguousarray(x) for x in z], [np.ascontiguousarray(x) for x in p]


def _compare(z, p, s, e, beta):
    rows, T, vmax, tau = R.fused_numpy(z, p, s, e, beta)
    n = len(p[0])
    out = np.full((e - s + 5, 5 * n), np.pi)
    Q1, Q2, T2, vmax2, tau2 = R.fused(R._loops(), z, p, s, e, beta, out)
    return [R.same_floats(a, b) for a, b in ((rows[:2 * n], Q1), (rows[2 * n:], Q2), (T, T2), (vmax, vmax2), (tau, tau2))]


@given(seed=st.integers(0, 2 ** 32 - 1), w=st.integers(1, 40), n=st.integers(1, 70), close=st.booleans(),
       beta=st.integers(18, 26))
def test_compiled_loop_is_bitwise_the_numpy_passes(seed, w, n, close, beta):
    z, p = _problem(seed, w + 3, n, close)
    assert all(_compare(z, p, 2, w + 3, beta))


def test_compiled_loop_on_special_values():
    """Zero distances, subnormal squares, NaN and infinite operands: the same bits (NaN as NaN)."""
    z, p, w, n = R._probe_problem()
    p[0][4] = np.inf
    z[1][7] = -np.inf
    assert all(_compare(z, p, 0, w, 21))


def test_probe_accepts_the_loop_and_refuses_one_that_rounds_otherwise():
    assert R._agree(R._loops())

    def fma_like(zr, zi, zlr, zli, pr, pi, plr, pli, s, e, ctc, out, vmax, tau):
        R._loops()(zr, zi, zlr, zli, pr, pi, plr, pli, s, e, ctc, out, vmax, tau)
        n = len(pr)
        out[:e - s, 4 * n:] = np.nextafter(out[:e - s, 4 * n:], np.inf)   # one ulp off in T

    assert not R._agree(fma_like)


def test_no_fused_multiply_add_in_the_compiled_loop():
    """The loop's machine code has no fused multiply-add (numba without fast-math flags)."""
    fn = numba.njit(error_model="numpy")(R._loops().py_func)
    z, p, w, n = R._probe_problem()
    fn(*z, *p, 0, w, 3.0, np.empty((w, 5 * n)), np.empty(w), np.empty(w))
    asm = "\n".join(fn.inspect_asm().values()).lower()
    assert "vfmadd" not in asm and "vfmsub" not in asm and "vfnmadd" not in asm and "vfnmsub" not in asm


def test_selection(monkeypatch):
    monkeypatch.setenv("S4CERT_COMPILED", "0")
    assert R.compiled(1 << 30) is None
    monkeypatch.setenv("S4CERT_COMPILED", "auto")
    assert R.compiled(R.MIN_PAIRS - 1) is None
    assert R.compiled(R.MIN_PAIRS) is not None
    monkeypatch.setenv("S4CERT_COMPILED", "1")
    assert R.compiled(10) is not None


def _ball_sums(M: int, poles: list, weights: list) -> list:
    with ctx.workprec(300):
        zs = [acb(arb(-2 * k) / M).exp_pi_i() for k in range(M)]
        return [[sum((a / (z - mu) for a, mu in zip(w, poles)), acb(0)) for z in zs] for w in weights]


@pytest.mark.parametrize("mode", ["0", "1"])
def test_sums_contain_ball_sums_on_either_form(monkeypatch, mode):
    """The whole sums (numpy passes, block tau; compiled loop, tau per root) contain
    300-bit ball sums of the exact weights and poles, a pole close to the circle among them."""
    monkeypatch.setenv("S4CERT_COMPILED", mode)
    M, n = 64, 9
    rng = np.random.default_rng(7)
    mus = [complex(0.999 * math.cos(0.3 + k), 0.999 * math.sin(0.3 + k)) for k in range(n - 1)] + [0.9999999 + 0.0001j]
    ws = [rng.standard_normal(n) + 1j * rng.standard_normal(n) for _ in range(3)]
    ph = np.array(mus)
    sums, _ = cauchy_direct_midrad(roots_of_unity_dd(M), (ph, np.zeros(n, complex), 0.0),
                                   [MR(w, np.zeros(n)) for w in ws])
    ref = _ball_sums(M, [acb(m) for m in mus], [[acb(x) for x in w] for w in ws])
    with ctx.workprec(300):
        for s, r in zip(sums, ref):
            for k in range(M):
                assert abs(acb(s.mid[k]) - r[k]) <= arb(s.rad[k])   # certainly inside


@given(seed=st.integers(0, 2 ** 32 - 1), K=st.integers(1, 5), w=st.integers(1, 50))
def test_compiled_radius_is_bitwise_the_numpy_passes(seed, K, w):
    """The block's sums and radii (Lemma 10, items 2-4) by the compiled loop: the same bits."""
    fn = R.radius_compiled()
    assert fn is not None
    rng = np.random.default_rng(seed)
    GTb = rng.random((K, w)) * 10.0 ** rng.integers(-30, 30, (K, w))
    G = rng.standard_normal((2 * K, w)) * 10.0 ** rng.integers(-30, 30, (2 * K, w))
    rank1, tau = rng.random(K), 2.0 ** rng.integers(-40, 40, w).astype(np.float64)
    outs = []
    for f in (R.radius_numpy, fn):
        mid, rad = np.zeros((K, w + 3), dtype=np.complex128), np.zeros((K, w + 3))
        f(GTb.copy(), G, rank1, tau, 1.0 + 130 * 2.0 ** -53, 2.0 ** -1062, 2.0 ** -1066, mid, rad, 3)
        outs.append((mid.real, mid.imag, rad))
    assert all(R.same_floats(a, b) for a, b in zip(*outs))
