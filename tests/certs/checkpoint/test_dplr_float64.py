"""DPLR modules through the layer's float64 pass (certs/checkpoint/dplr_float64.py,
proofs/layer_pass.md): every kernel of a module in one pass, the fixtures' float64 kernels
contained, and the kernels the pass cannot take certified one at a time."""
from __future__ import annotations

import numpy as np
import pytest

from s4cert.certs.checkpoint import certify, dplr_float64 as fast
from s4cert.certs.checkpoint.model import certify_model
from tests.certs.checkpoint.test_model import DATA, FIXTURES, allowance, fixture, options_of

DPLR_FIXTURES = [n for n in FIXTURES if fixture(n)[0]["kernel"]["class_name"] == "SSMKernelDPLR"]
FLOAT64 = "float64 midpoint-radius"


def _no_single_kernels(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a kernel went through certify_kernel")
    monkeypatch.setattr(certify, "certify_kernel", refuse)


def test_there_are_dplr_fixtures():
    assert len(DPLR_FIXTURES) >= 4


@pytest.mark.parametrize("name", DPLR_FIXTURES)
def test_one_pass_contains_the_reference_float64_kernel(monkeypatch, name):
    """At eps = 1e-9 max|K| every kernel of the module (tied and untied steps, rank 2, two
    channels, n_ssm = 2, l_kernel 0, 96, 160, 256) comes from the layer's pass, none through
    certify_kernel, and the disks contain the reference's float64 kernel."""
    meta, ref = fixture(name)
    L = int(ref["L"])
    _no_single_kernels(monkeypatch)
    eps = 1e-9 * float(np.max(np.abs(ref["float64"])))
    k = certify_model(DATA / f"{name}.pt", L=L, eps=eps, **options_of(meta)).kernels[0]
    assert k.status == "ok" and k.info["arithmetic"] == [FLOAT64]
    assert k.max_rad <= eps
    assert np.all(np.abs(ref["float64"] - k.mid) <= k.rad + allowance(ref["float64"], k.disc))


def test_kernels_below_the_pass_reach_go_one_at_a_time(monkeypatch):
    """eps below the float64 radii: every kernel is certified by certify_kernel (on
    double-double disks), and the pass's midpoints gave the relative target."""
    name = DPLR_FIXTURES[0]
    meta, ref = fixture(name)
    L = int(ref["L"])
    calls = []
    real = certify.certify_kernel
    monkeypatch.setattr(certify, "certify_kernel", lambda *a, **kw: calls.append(kw) or real(*a, **kw))
    eps = 1e-20 * float(np.max(np.abs(ref["float64"])))
    k = certify_model(DATA / f"{name}.pt", L=L, eps=eps, **options_of(meta)).kernels[0]
    assert k.status == "ok" and FLOAT64 not in k.info["arithmetic"]
    assert len(calls) == k.channels * k.H
    assert np.all(np.abs(ref["float64"] - k.mid) <= k.rad + allowance(ref["float64"], k.disc))


def test_an_unfit_environment_skips_the_pass(monkeypatch):
    """When the floating-point probe fails the pass does not run (its proof assumes round
    to nearest); every kernel is certified one at a time."""
    from s4cert.arith import fpenv

    class Bad:
        ok, reason = False, "rounding toward zero"
    monkeypatch.setattr(fpenv, "probe", lambda: Bad())
    name = DPLR_FIXTURES[0]
    meta, ref = fixture(name)
    assert fast.dplr_float64([[None]], None, 4) is None
    k = certify_model(DATA / f"{name}.pt", L=int(ref["L"]), eps=1e-6, **options_of(meta)).kernels[0]
    assert k.status == "ok" and FLOAT64 not in k.info["arithmetic"]


def test_relative_target_from_the_pass_when_it_misses(monkeypatch):
    """eps not given and the relative target below the pass's radii: each kernel goes to
    certify_kernel with the target taken from the pass's midpoints (no float64 rerun to find
    the scale), and the disks reach it."""
    name = DPLR_FIXTURES[0]
    meta, ref = fixture(name)
    monkeypatch.setattr(certify, "DEFAULT_REL_EPS", 1e-20)
    calls = []
    real = certify.certify_kernel
    monkeypatch.setattr(certify, "certify_kernel", lambda *a, **kw: calls.append((a[3], kw)) or real(*a, **kw))
    k = certify_model(DATA / f"{name}.pt", L=int(ref["L"]), **options_of(meta)).kernels[0]
    assert k.status == "ok" and len(calls) == k.channels * k.H
    for (eps, kw), i in zip(calls, range(k.H)):
        assert kw.get("arithmetic") == "auto" and 0 < eps < 1e-19 * float(np.max(np.abs(ref["float64"])))
    # the double-double enclosures are kept losslessly: their radii reach the target, which
    # float64 midpoints could not hold
    assert k.rad_exact is not None and k.max_rad <= k.eps <= 1e-20 * float(np.max(np.abs(k.mid))) * (1 + 1e-9)


def test_ball_arithmetic_keeps_to_balls(monkeypatch):
    """arithmetic="ball": no float64 pass and every kernel certified in balls."""
    monkeypatch.setattr(certify, "dplr_float64_module", lambda *a, **k: (_ for _ in ()).throw(AssertionError("pass ran")))
    name = DPLR_FIXTURES[0]
    meta, ref = fixture(name)
    k = certify_model(DATA / f"{name}.pt", L=int(ref["L"]), eps=1e-10, arithmetic="ball", **options_of(meta)).kernels[0]
    assert k.status == "ok" and k.info["arithmetic"] == ["ball"]
    assert np.all(np.abs(ref["float64"] - k.mid) <= k.rad + allowance(ref["float64"], k.disc))


def _l_is_m(name: str) -> bool:
    """The fixture's C~ is stored for the grid's M points of its kernel length."""
    from s4cert.certs.checkpoint.reader import read_checkpoint
    meta, ref = fixture(name)
    L = int(ref["L"])
    lk = [v for k, v in read_checkpoint(DATA / f"{name}.pt").tensors.items() if k.endswith("l_kernel")]
    return len(lk) == 1 and int(np.asarray(lk[0]).reshape(-1)[0]) == 1 << max(0, (L - 1).bit_length())


def test_conjugate_closed_modules_are_set_up_on_arrays(monkeypatch):
    """Where C~ is stored for M points (ranks 1 and 2) no head is set up in balls: every
    kernel comes from the arrays' set-up (algorithms/s4/dplr_arrays.py) and contains the
    reference's float64 kernel; the other fixtures' heads are set up in balls."""
    calls = []
    real = fast.dplr_module
    monkeypatch.setattr(fast, "dplr_module", lambda *a, **k: calls.append(a[2]) or real(*a, **k))
    on_arrays = 0
    for name in DPLR_FIXTURES:
        meta, ref = fixture(name)
        calls.clear()
        eps = 1e-9 * float(np.max(np.abs(ref["float64"])))
        k = certify_model(DATA / f"{name}.pt", L=int(ref["L"]), eps=eps, **options_of(meta)).kernels[0]
        assert k.status == "ok" and k.max_rad <= eps
        assert np.all(np.abs(ref["float64"] - k.mid) <= k.rad + allowance(ref["float64"], k.disc))
        assert (calls == []) == _l_is_m(name)
        on_arrays += calls == []
    assert on_arrays >= 2


def test_heads_the_arrays_do_not_decide_are_set_up_in_balls(monkeypatch):
    """A head the arrays' set-up reports (here forced) is set up in balls, alone, and its
    kernels are still contained."""
    from s4cert.algorithms.s4 import dplr_arrays
    name = next(n for n in DPLR_FIXTURES if _l_is_m(n))
    meta, ref = fixture(name)
    real = dplr_arrays.setup_arrays

    def one_undecided(a, check_g):
        st = real(a, check_g)
        st.ok[0] = False
        st.why[0] = "forced"
        return st
    monkeypatch.setattr(dplr_arrays, "setup_arrays", one_undecided)
    calls = []
    real_module = fast.dplr_module
    monkeypatch.setattr(fast, "dplr_module", lambda *a, **k: calls.append(a[2]) or real_module(*a, **k))
    eps = 1e-9 * float(np.max(np.abs(ref["float64"])))
    k = certify_model(DATA / f"{name}.pt", L=int(ref["L"]), eps=eps, **options_of(meta)).kernels[0]
    assert calls == [[0]]
    assert k.status == "ok" and np.all(np.abs(ref["float64"] - k.mid) <= k.rad + allowance(ref["float64"], k.disc))


def test_a_module_the_arrays_cannot_read_is_set_up_in_balls(monkeypatch):
    """When the arrays refuse the module's tensors (a ValueError from their stricter shape
    checks), every head is set up in balls and the kernels are still contained; and only
    modules the arrays take are grouped as one vectorized pass."""
    from s4cert.certs.checkpoint.reader import read_checkpoint
    from s4cert.certs.checkpoint.layouts import find_kernel_modules
    name = next(n for n in DPLR_FIXTURES if _l_is_m(n))
    meta, ref = fixture(name)
    L = int(ref["L"])

    def refuse(*a, **k):
        raise ValueError("B: expected another shape")
    monkeypatch.setattr(fast, "dplr_arrays", refuse)
    eps = 1e-9 * float(np.max(np.abs(ref["float64"])))
    k = certify_model(DATA / f"{name}.pt", L=L, eps=eps, **options_of(meta)).kernels[0]
    assert k.status == "ok" and np.all(np.abs(ref["float64"] - k.mid) <= k.rad + allowance(ref["float64"], k.disc))
    for n in DPLR_FIXTURES:
        mod = find_kernel_modules(read_checkpoint(DATA / f"{n}.pt").tensors)[0]
        assert fast.arrays_apply(mod, int(fixture(n)[1]["L"])) == _l_is_m(n)
