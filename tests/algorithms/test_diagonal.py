"""Diagonal kernels (zoh, bilinear, dss): ball runs and float64 disks against mpmath.

The reference values are computed independently with mpmath at 200 bits from the same
exact inputs, by the formulas written out directly (no shared code)."""
from __future__ import annotations

import mpmath
import numpy as np
import pytest
from flint import arb, ctx
from hypothesis import given, strategies as st

from s4cert.algorithms.s4.diagonal import DSS_TAU, diagonal_kernel
from s4cert.algorithms.s4.diagonal_midrad import dd_powers, diagonal_terms_arrays, disks_of, vandermonde_midrad
from s4cert.arith import BallField, ExactField, Unsupported
from s4cert.arith.dd_field import DDArrayField


def reference(lam, dt, B, C, L, disc, re_positive=None, taps=None):
    """K_l by the formulas, in mpmath at 200 bits (at ``taps``, default all l < L)."""
    taps = list(range(L)) if taps is None else list(taps)
    with mpmath.workprec(200):
        out = {j: mpmath.mpf(0) for j in taps}
        for n, (l_, d_, b_, c_) in enumerate(zip(lam, dt, B, C)):
            l_, d_, b_, c_ = mpmath.mpc(l_), mpmath.mpf(d_), mpmath.mpc(b_), mpmath.mpc(c_)
            dl = d_ * l_
            if disc == "zoh":
                w, z, s, f = c_ * b_ * (mpmath.exp(dl) - 1) / l_, mpmath.exp(dl), 1, 2
            elif disc == "bilinear":
                w, z, s, f = c_ * b_ * d_ / (1 - dl / 2), (1 + dl / 2) / (1 - dl / 2), 1, 2
            else:
                pos = bool(re_positive and re_positive[n])
                mu = -dl if pos else dl
                x = (mpmath.exp(L * mu) - 1) * l_
                r = mpmath.conj(x) / (x * mpmath.conj(x) + mpmath.mpf(DSS_TAU))
                w, z, f = c_ * b_ * (mpmath.exp(mu) - 1) * r, mpmath.exp(dl), 1
                s = mpmath.exp(-(L - 1) * dl) if pos else 1
            for j in taps:
                out[j] += f * mpmath.re(w * s * z ** j)
        return [out[j] for j in taps] if len(taps) != L else [out[j] for j in range(L)]


def contains(x, v) -> bool:
    """Whether the ball x holds v (a 200-bit value, taken with a margin of 1e-50 for its
    own rounding, far below the ball's radius)."""
    with ctx.workprec(256):
        return bool(x.real.contains(arb(mpmath.nstr(v, 70)) + arb(0, 1e-50)))


MODEL = dict(lam=[complex(-0.5, 3.0), complex(-0.25, -1.0), complex(-1e-3, 40.0)],
             dt=[0.1, 0.05, 0.01], B=[complex(1, 2), 1.0, complex(0, -0.5)],
             C=[complex(0.5, -1), 2.0, complex(-1.5, 0.25)])


def as_balls(F, xs):
    return [F.from_number(x) for x in xs]


@pytest.mark.parametrize("disc", ["zoh", "bilinear", "dss"])
def test_ball_kernel_contains_the_exact_kernel(disc):
    F = BallField(120)
    m = MODEL
    r = diagonal_kernel(F, as_balls(F, m["lam"]), as_balls(F, m["dt"]), as_balls(F, m["B"]),
                        as_balls(F, m["C"]), 40, disc, [False] * 3)
    assert r.ok
    ref = reference(m["lam"], m["dt"], m["B"], m["C"], 40, disc)
    assert all(contains(x, v) for x, v in zip(r.value, ref))


def test_dss_with_a_growing_mode_shifts_by_L_minus_1():
    F = BallField(120)
    lam = [complex(0.3, 2.0), complex(-0.2, 1.0)]
    args = (as_balls(F, lam), as_balls(F, [0.1, 0.1]), as_balls(F, [1.0, 1.0]), as_balls(F, [1.0, 0.5]))
    r = diagonal_kernel(F, *args, 30, "dss", [True, False])
    ref = reference(lam, [0.1, 0.1], [1.0, 1.0], [1.0, 0.5], 30, "dss", [True, False])
    assert r.ok and all(contains(x, v) for x, v in zip(r.value, ref))


def test_zero_mode_is_refused_for_zoh_and_exact_fields_cannot_exponentiate():
    F = BallField(64)
    r = diagonal_kernel(F, [F.zero()], [F.one()], [F.one()], [F.one()], 4, "zoh")
    assert r.status == "singular"
    E = ExactField(4)
    with pytest.raises(Unsupported):
        diagonal_kernel(E, [E.from_number(-1)], [E.one()], [E.one()], [E.one()], 4, "zoh")


def float64_route(lam, dt, B, C, L, disc, re_positive=None):
    """The production float64 route: double-double weights and nodes for all modes at once,
    double-double squarings for the powers, float64 disks for the sum."""
    F = DDArrayField()
    arr = lambda xs: F.from_array(np.asarray(xs, dtype=complex)[None])
    flags = np.zeros((1, len(lam)), dtype=bool) if re_positive is None else np.asarray([re_positive])
    t = diagonal_terms_arrays(F, arr(lam), arr(dt), arr(B), arr(C), L, disc, flags)
    assert t.ok
    W, S, z, factor = t.value
    return vandermonde_midrad(disks_of(W), disks_of(S), dd_powers(z), L, factor)


@pytest.mark.parametrize("disc", ["zoh", "bilinear", "dss"])
@pytest.mark.parametrize("L", [1, 2, 7, 64, 300])
def test_float64_disks_contain_the_exact_kernel(disc, L):
    m = MODEL
    mid, rad = float64_route(m["lam"], m["dt"], m["B"], m["C"], L, disc)
    ref = reference(m["lam"], m["dt"], m["B"], m["C"], L, disc)
    with mpmath.workprec(200):
        assert all(abs(mpmath.mpf(float(mid[0, j])) - ref[j]) <= rad[0, j] for j in range(L))
    scale = max(abs(float(v)) for v in ref)
    assert float(rad.max()) < 1e-13 * scale   # and the disks are tight


@given(st.lists(st.tuples(st.floats(-3, -1e-3), st.floats(-50, 50), st.floats(1e-4, 0.2),
                          st.floats(-2, 2), st.floats(-2, 2)), min_size=1, max_size=6),
       st.integers(1, 200), st.sampled_from(["zoh", "bilinear", "dss"]))
def test_float64_disks_contain_random_kernels(modes, L, disc):
    lam = [complex(a, b) for a, b, _, _, _ in modes]
    dt = [d for _, _, d, _, _ in modes]
    B = [complex(1.0, c) for _, _, _, c, _ in modes]
    C = [complex(e, 0.5) for _, _, _, _, e in modes]
    mid, rad = float64_route(lam, dt, B, C, L, disc)
    ref = reference(lam, dt, B, C, L, disc)
    with mpmath.workprec(200):
        assert all(abs(mpmath.mpf(float(mid[0, j])) - ref[j]) <= rad[0, j] for j in range(L))


def test_modes_next_to_the_unit_circle_keep_tight_disks_at_long_lengths():
    lam, dt = [complex(-1e-9, 0.3), complex(-1e-7, -2.0)], [1e-3, 1e-3]
    B, C = [1.0, 1.0], [1.0, complex(0, 1)]
    L = 20000
    mid, rad = float64_route(lam, dt, B, C, L, "zoh")
    taps = range(0, L, 97)
    ref = reference(lam, dt, B, C, L, "zoh", taps=taps)
    with mpmath.workprec(200):
        worst = max(float(abs(mpmath.mpf(float(mid[0, j])) - v) - rad[0, j]) for j, v in zip(taps, ref))
    assert worst <= 0
    assert float(rad.max()) < 1e-12 * float(np.max(np.abs(mid)))
