"""C~ of a dissipative model by float64 squarings with a certified 2-norm bound
(algorithms/s4/c_tilde_contractive.py, proofs/c_tilde_contractive.md)."""
import random
from fractions import Fraction

import numpy as np
import pytest
from flint import acb, arb
from hypothesis import given, settings, strategies as st

from s4cert.algorithms.models.hippo_dplr import dplr_with_route
from s4cert.algorithms.s4 import c_tilde_contractive as cc
from s4cert.algorithms.s4.c_tilde import c_tilde
from s4cert.algorithms.s4.dplr import DPLR
from s4cert.arith import BallField
from tests.helpers import dissipative_dplr

F = BallField(128)
#: the independent enclosure: the dense ball route at 400 bits
REF = BallField(400)


def _exact(z: complex) -> Fraction:
    return Fraction(z.real) ** 2 + Fraction(z.imag) ** 2


def _random_matrix(rng: np.random.Generator, n: int, m: int, scale: float) -> np.ndarray:
    X = (rng.standard_normal((n, m)) + 1j * rng.standard_normal((n, m))) * scale
    X[rng.random((n, m)) < 0.2] *= 2.0 ** -1060           # some subnormal entries
    return X


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10 ** 6), n=st.integers(1, 9), m=st.integers(1, 9),
       scale=st.sampled_from([1.0, 1e-150, 1e150, 2.0 ** -1000]))
def test_fro_upper_and_matmul_error_bound_the_exact_values(seed, n, m, scale):
    rng = np.random.default_rng(seed)
    A, B = _random_matrix(rng, n, m, scale), _random_matrix(rng, m, n, 1.0)
    fro2 = sum(_exact(z) for z in A.ravel().tolist())
    assert Fraction(cc.fro_upper(A)) ** 2 >= fro2
    Cf = A @ B
    err2 = Fraction(0)
    for i in range(n):
        for j in range(n):
            exact_re = sum(Fraction(A[i, k].real) * Fraction(B[k, j].real) - Fraction(A[i, k].imag) * Fraction(B[k, j].imag)
                           for k in range(m))
            exact_im = sum(Fraction(A[i, k].real) * Fraction(B[k, j].imag) + Fraction(A[i, k].imag) * Fraction(B[k, j].real)
                           for k in range(m))
            err2 += (Fraction(Cf[i, j].real) - exact_re) ** 2 + (Fraction(Cf[i, j].imag) - exact_im) ** 2
    assert Fraction(cc.matmul_error(A, B)) ** 2 >= err2


def _contains_reference(ours: list, model: DPLR, step, M: int, ref_field: BallField = REF) -> bool:
    ref = c_tilde(ref_field, model, step, M, method="dense-squaring")
    assert ref.ok
    return all(a.contains(b) for a, b in zip(ours, ref.value))


@pytest.mark.parametrize("N", [4, 16])
@pytest.mark.parametrize("M", [1, 2, 64, 4096, 65536])
@pytest.mark.parametrize("step", [Fraction(1, 1000), Fraction(1, 10)])
def test_legs_c_tilde_contains_the_400_bit_dense_balls(N, M, step):
    model = dplr_with_route("legs", N, prec=208)[0]
    ct = cc.contractive_c_tilde(F, model, step, M, 1.0)
    assert ct is not None                                 # LegS is dissipative: certified every time
    assert _contains_reference(ct, model, step, M)


def test_random_dissipative_models_contained_or_refused():
    certified = 0
    for seed in range(12):
        step = Fraction(1, 1 + seed % 4)
        model = dissipative_dplr(seed, 1 + seed % 6, 1 + seed % 2, step)
        M = 2 ** (seed % 9)
        ct = cc.contractive_c_tilde(F, model, step, M, 1.0)
        if ct is not None:
            certified += 1
            assert _contains_reference(ct, model, step, M)
    assert certified == 12                               # all dissipative, radii far below 1


def test_tiny_powers_end_the_squarings_with_zero():
    """A model whose powers underflow the norm bound: Abar^M enclosed as 0, C~ as C plus a
    tiny ball, which holds the 8000-bit C~ (radius far below ours)."""
    step = Fraction(1, 2)
    model = DPLR([(-4, 0), (-2, 1)], [[(0, 0)], [(0, 0)]], [(1, 0), (1, 0)], [(1, 0), (2, 1)])
    M = 2 ** 12                                          # |mu|^M = 3^-4096 < TINY
    ct = cc.contractive_c_tilde(F, model, step, M, 1.0)
    assert ct is not None and _contains_reference(ct, model, step, M, BallField(8000))
    assert max(F.radius(x) for x in ct) < 1e-100


def test_refusals_fall_back_to_dense_squaring():
    step = Fraction(1, 4)
    good = dissipative_dplr(3, 4, 1, step)
    unstable = DPLR([(Fraction(1, 8), 0)] + list(good.Lambda[1:]), good.P, good.B, good.C, Q=good.Q)
    far_q = DPLR(good.Lambda, good.P, good.B, good.C, Q=[[(x[0] * 0 + 40, 0) for x in row] for row in good.P])
    assert cc.contractive_c_tilde(F, unstable, step, 8, 1.0) is None          # Re lambda > 0
    assert cc.contractive_c_tilde(F, far_q, step, 8, 1.0) is None             # P, Q far apart
    assert cc.contractive_c_tilde(F, good, (Fraction(1, 4), Fraction(1, 8)), 8, 1.0) is None  # complex step
    assert cc.contractive_c_tilde(F, good, Fraction(-1, 4), 8, 1.0) is None   # negative step
    assert cc.contractive_c_tilde(F, good, step, 8, 0.0) is None              # radius above max_radius
    for model in (unstable, far_q):
        res = c_tilde(F, model, step, 8, method="contractive-squaring")
        dense = c_tilde(F, model, step, 8, method="dense-squaring")
        assert res.info["method"] == "dense-squaring"
        assert [str(x) for x in res.value] == [str(x) for x in dense.value]
    ok = c_tilde(F, good, step, 8, method="contractive-squaring", max_radius=1.0)
    assert ok.info["method"] == "contractive-squaring"
    with pytest.raises(ValueError):
        cc.contractive_c_tilde(F, good, step, 6, 1.0)


def test_method_needs_a_ball_field():
    from s4cert.arith import ExactField
    with pytest.raises(ValueError, match="ball field"):
        c_tilde(ExactField(4), dissipative_dplr(1, 2, 1, Fraction(1, 2)), Fraction(1, 2), 4,
                method="contractive-squaring")


def test_kernel_radius_budget():
    model = dplr_with_route("legs", 8, prec=128)[0]
    b = cc.kernel_radius_budget(model, Fraction(1, 1000), Fraction(1, 10 ** 12), 128)
    norm_b = sum(abs(complex(F.from_number(x).mid())) ** 2 for x in model.B) ** 0.5
    assert b == pytest.approx(1e-12 / (16 * 4 * 1e-3 * norm_b))
    assert cc.kernel_radius_budget(model, Fraction(1, 1000), Fraction(1, 10 ** 80), 128) == 2.0 ** -128


def test_seeded_random_hippo_sizes():
    """LegS and LegT at a random size and length: contained in the 400-bit dense balls."""
    rng = random.Random(7)
    for kind in ("legs", "legt"):
        N, M = rng.randint(2, 12), 2 ** rng.randint(0, 14)
        model = dplr_with_route(kind, N, theta=Fraction(1) if kind == "legt" else None, prec=208)[0]
        ct = cc.contractive_c_tilde(F, model, Fraction(1, 100), M, 1.0)
        if ct is not None:
            assert _contains_reference(ct, model, Fraction(1, 100), M)
        elif kind == "legs":
            raise AssertionError("LegS refused")


def test_kernel_eps_sets_the_budget_and_falls_back_below_reach():
    model = dplr_with_route("legs", 8, prec=208)[0]
    step, M = Fraction(1, 1000), 65536                             # Abar^M decayed: a small bound
    fast = c_tilde(F, model, step, M, method="contractive-squaring", kernel_eps=Fraction(1, 10 ** 12))
    assert fast.info["method"] == "contractive-squaring" and _contains_reference(fast.value, model, step, M)
    deep = c_tilde(F, model, step, M, method="contractive-squaring", kernel_eps=Fraction(1, 10 ** 60))
    assert deep.info["method"] == "dense-squaring"                   # 2^-128 is below its reach


def test_float64_route_kernel_with_the_contractive_c_tilde_holds_the_ball_kernel():
    """The certifier's float64 route, C~ formed here by the contractive squarings: each of its
    disks holds the ball route's disk at eps 1e-24 (C~ by the dense ball route there)."""
    from s4cert.certs.kernel import certify_kernel
    model = dplr_with_route("legs", 6, prec=208)[0]
    step, L = Fraction(1, 100), 8192                                # step L = 82: Abar^M decayed
    ck = certify_kernel(model, step, L, Fraction(1, 10 ** 10), arithmetic="float64", counts=False)
    assert ck.status == "ok"
    budget = cc.kernel_radius_budget(model, step, Fraction(1, 10 ** 10), 128)
    assert c_tilde(F, model, step, L, method="contractive-squaring", max_radius=budget).info["method"] \
        == "contractive-squaring"                                   # the route took this method
    ref = certify_kernel(model, step, L, Fraction(1, 10 ** 24), arithmetic="ball", counts=False)
    assert ref.status == "ok"
    for m, r, mb, rb in zip(ck.mid.tolist(), ck.rad.tolist(), ref.mid.tolist(), ref.rad.tolist()):
        assert (abs(acb(mb) - acb(m)) + arb(rb)).upper() <= arb(r)  # the ball disk inside ours


def test_a_broken_floating_point_environment_falls_back(monkeypatch):
    """Where the probe finds another rounding mode or flushed subnormals, the float64 bounds
    do not hold: the method refuses and the dense ball route forms C~."""
    from s4cert.arith import fpenv
    step = Fraction(1, 4)
    good = dissipative_dplr(3, 4, 1, step)
    assert cc.contractive_c_tilde(F, good, step, 8, 1.0) is not None
    monkeypatch.setattr(fpenv, "probe", lambda: fpenv.FPEnv(False, ("tie_down",)))
    assert cc.contractive_c_tilde(F, good, step, 8, 1.0) is None
    res = c_tilde(F, good, step, 8, method="contractive-squaring", max_radius=1.0)
    assert res.info["method"] == "dense-squaring"


def test_dissipative_models_with_p_unlike_q_contained():
    """P != Q: A + A* <= (2 max Re lambda + ||P - Q||_F^2 / 2) I, so a model whose real parts
    lie below -||P - Q||_F^2 / 4 is dissipative and certified; 12 such models, all certified
    and contained in the dense route's balls at 2000 bits (tight enough to lie inside)."""
    certified = 0
    for seed in range(12):
        rng = random.Random(seed)
        step = Fraction(1, 1 + seed % 4)
        base = dissipative_dplr(seed, 2 + seed % 5, 1 + seed % 2, step)
        Q = [[(re + Fraction(rng.randint(-4, 4), 8), im + Fraction(rng.randint(-4, 4), 8)) for re, im in row]
             for row in base.P]
        d2 = sum((p[0] - q[0]) ** 2 + (p[1] - q[1]) ** 2 for rp, rq in zip(base.P, Q) for p, q in zip(rp, rq))
        lam = [(re - d2 / 4 - Fraction(1, 8), im) for re, im in base.Lambda]
        model = DPLR(lam, base.P, base.B, base.C, Q=Q)
        M = 2 ** (seed % 7)
        ct = cc.contractive_c_tilde(F, model, step, M, 1.0)
        if ct is not None:
            certified += 1
            assert _contains_reference(ct, model, step, M, BallField(2000))
    assert certified == 12
