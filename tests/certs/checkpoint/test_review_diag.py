"""The diagonal modules' float64 pass, checked from outside the code it tests.

* the pass relies on round to nearest with subnormals (proofs/diagonal_kernels.md, statement
  3): when the floating-point probe fails it must not run, as the DPLR pass does not;
* DSS with the sign of Re lambda mixed per head and per mode: the terms are formed in two
  groups and put back in place (``diagonal_terms_arrays``), checked against mpmath at 200
  bits and, through the module, against the ball route;
* the vectorized acceptance of the pass's kernels keeps the per-kernel rule (``_target``):
  NaN rows, infinite radii, zero kernels, eps given or not;
* a NaN or infinite input of the Vandermonde sum never yields a finite radius.
"""
from __future__ import annotations

import mpmath
import numpy as np
import pytest

from s4cert.algorithms.s4.diagonal_midrad import dd_powers, diagonal_terms_arrays, disks_of, vandermonde_midrad
from s4cert.arith.dd_field import DDArrayField
from s4cert.arith.midrad import MR
from s4cert.certs.checkpoint import certify
from s4cert.certs.checkpoint.certify import FLOAT64_ARITHMETIC, _target, certify_module
from s4cert.certs.checkpoint.layouts import KernelModule
from tests.algorithms.test_diagonal import reference


def dss_module(disc: str = "dss") -> KernelModule:
    """An s4-v4-diag module, 2 channels, 2 heads (one SSM each), 3 modes, real_transform none:
    A_real of mixed signs (Re lambda = -A_real), different per head."""
    A_real = np.array([[0.25, -0.125, 0.5], [-0.0625, 0.375, -0.25]])
    A_imag = np.array([[1.0, 3.0, -2.0], [0.5, -1.5, 4.0]])
    B = np.array([[[[1.0, 0.5], [0.25, -1.0], [2.0, 0.0]], [[-0.5, 1.0], [1.0, 1.0], [0.0, 0.75]]]])
    C = np.array([[[[0.5, -1.0], [2.0, 0.0], [-1.5, 0.25]], [[1.0, 1.0], [-0.5, 0.5], [0.25, 2.0]]],
                  [[[0.0, 1.0], [1.0, -2.0], [0.5, 0.5]], [[-1.0, 0.0], [0.75, 0.25], [1.0, -1.0]]]])
    tensors = {"inv_dt": np.log(np.array([[0.1], [0.05]])), "A_real": A_real, "A_imag": A_imag, "B": B, "C": C}
    return KernelModule("k", "s4-v4-diag", tensors,
                        {"dt_transform": "exp", "real_transform": "none", "imag_transform": "none", "disc": disc})


def test_the_diagonal_pass_respects_the_floating_point_probe(monkeypatch):
    """With the probe failing (a directed rounding mode, flush-to-zero) the diagonal float64
    pass does not run: its bounds (Lemmas D1-D4, the double-double operations) assume round to
    nearest with gradual underflow; every kernel then comes from the ball route."""
    from s4cert.arith import fpenv

    class Bad:
        ok, failures, reason = False, ("subnormal_product",), "flush-to-zero is set"
    monkeypatch.setattr(fpenv, "probe", lambda: Bad())
    mod = dss_module("zoh")
    assert certify._diagonal_float64(mod, [0, 1], 2, 16) is None
    k = certify_module(mod, 16)
    assert k.status == "ok" and FLOAT64_ARITHMETIC not in k.info["arithmetic"]


@pytest.mark.parametrize("disc", ["dss", "zoh", "bilinear"])
def test_mixed_signs_per_head_and_mode_as_arrays_against_mpmath(disc):
    """diagonal_terms_arrays on a (2, 3) array whose sign flags differ along both axes: each
    entry gets the terms of its own flag (a swap of the groups' places would show)."""
    lam = np.array([[0.3 + 2.0j, -0.2 + 1.0j, 0.1 - 3.0j], [-0.4 + 0.5j, 0.25 + 4.0j, -0.05 - 1.0j]])
    flags = lam.real > 0 if disc == "dss" else np.zeros(lam.shape, dtype=bool)
    dt = np.array([[0.1, 0.05, 0.2], [0.02, 0.1, 0.3]])
    B = np.array([[1.0, 0.5 - 1.0j, 2.0], [1.0j, 1.0, -0.5]])
    C = np.array([[0.5 - 1.0j, 2.0, -1.5 + 0.25j], [1.0, 1.0 + 1.0j, 0.25]])
    L = 37
    F = DDArrayField()
    t = diagonal_terms_arrays(F, F.from_array(lam), F.from_array(dt), F.from_array(B), F.from_array(C), L,
                              disc, flags)
    assert t.ok
    W, S, z, factor = t.value
    mid, rad = vandermonde_midrad(disks_of(W), disks_of(S), dd_powers(z), L, factor)
    for row in range(2):
        ref = reference(list(lam[row]), list(dt[row]), list(B[row]), list(C[row]), L, disc, list(flags[row]))
        with mpmath.workprec(200):
            assert all(abs(mpmath.mpf(float(mid[row, j])) - ref[j]) <= rad[row, j] for j in range(L))
        assert float(rad[row].max()) < 1e-12 * max(abs(float(v)) for v in ref)


def test_mixed_sign_dss_module_float64_pass_agrees_with_balls():
    """The module route (diagonal_arrays, the (head, channel) batch order, the regrouping by
    flag) on float64 disks against the ball route at eps 1e-30: both contain the kernel, so
    they must meet, kernel by kernel and tap by tap."""
    mod = dss_module()
    fast = certify_module(mod, 50)
    assert fast.status == "ok" and fast.info["arithmetic"] == [FLOAT64_ARITHMETIC]
    ball = certify_module(mod, 50, eps=1e-30, arithmetic="ball")
    assert ball.status == "ok"
    assert np.all(np.abs(fast.mid - ball.mid) <= fast.rad + ball.rad)
    assert float(fast.rad.max()) < 1e-12 * float(np.abs(ball.mid).max())


def _old_rule(eps, fmid, frad):
    """The per-kernel rule before the sweep (accepted iff max rad <= _target(eps, mid)), and
    every midpoint finite (a NaN midpoint is never taken, whatever its radius)."""
    acc = np.zeros(fmid.shape[:2], dtype=bool)
    targets = []
    for c in range(fmid.shape[0]):
        for i in range(fmid.shape[1]):
            t = _target(eps, fmid[c, i])
            acc[c, i] = float(np.max(frad[c, i])) <= t and bool(np.all(np.isfinite(fmid[c, i])))
            if acc[c, i]:
                targets.append(t)
    return acc, targets


@pytest.mark.parametrize("eps", [None, 1e-9])
def test_vectorized_acceptance_keeps_the_per_kernel_rule(monkeypatch, eps):
    """A pass returning a NaN row, an infinite radius, a radius just above its target and
    ordinary kernels (midpoints moved by 0.5 so that they can be told from the ball route's):
    the kernels the per-kernel rule accepts (with finite midpoints) are taken as given, the
    others certified in balls, and the module's eps is at least every target used."""
    mod = dss_module("zoh")
    L = 8
    ball = certify_module(mod, L, eps=1e-30, arithmetic="ball")
    fmid, frad = ball.mid + 0.5, np.full(ball.rad.shape, 1e-15)
    fmid[0, 0, 3] = np.nan                                  # a NaN midpoint (radius finite)
    frad[1, 0, 5] = np.inf                                  # an infinite radius
    frad[0, 1] = np.nextafter(_target(eps, fmid[0, 1]), np.inf)   # just above its target
    monkeypatch.setattr(certify, "_diagonal_float64", lambda *a: (fmid.copy(), frad.copy()))
    got = certify_module(mod, L, eps=eps)
    acc, targets = _old_rule(eps, fmid, frad)
    assert not acc[1, 0] and not acc[0, 1] and acc[1, 1]
    assert got.status == "ok"
    for c in range(2):
        for i in range(2):
            taken = np.array_equal(got.mid[c, i], fmid[c, i], equal_nan=True) and \
                np.array_equal(got.rad[c, i], frad[c, i])
            assert taken == bool(acc[c, i]), (c, i)
            if not acc[c, i]:   # certified again in balls: meeting the 1e-30 enclosure
                assert np.all(np.abs(got.mid[c, i] - ball.mid[c, i]) <= got.rad[c, i] + ball.rad[c, i])
    assert got.eps >= max(targets)


def test_a_zero_kernel_is_accepted_only_with_radius_below_2_to_the_minus_1000(monkeypatch):
    """A kernel whose midpoints are all 0 has the relative target 2^-1000 (the old rule): a
    radius 0 is accepted, a radius 1e-300 is not."""
    mod = dss_module("zoh")
    L = 4
    fmid = np.zeros((2, 2, L))
    frad = np.zeros((2, 2, L))
    frad[1, 1] = 1e-300
    monkeypatch.setattr(certify, "_diagonal_float64", lambda *a: (fmid.copy(), frad.copy()))
    monkeypatch.setattr(certify, "_diagonal_kernel", lambda mod, h, c, L, eps, mp: (
        np.full(L, 7.0), np.full(L, 1.0), 1.0, 64, None))
    got = certify_module(mod, L)
    assert np.all(got.mid[:, 0] == 0) and np.all(got.mid[0, 1] == 0)
    assert np.all(got.mid[1, 1] == 7.0)   # refused by the pass, taken from the (stubbed) ball route


@pytest.mark.parametrize("where", ["W mid nan", "W mid inf", "W rad nan", "W rad inf", "z mid nan", "z rad nan"])
@pytest.mark.parametrize("L", [1, 2, 10])
def test_non_finite_inputs_never_give_a_finite_radius(where, L):
    """vandermonde_midrad either refuses (ArithmeticError) or returns an infinite radius at
    every tap whose midpoint or radius is not finite, never a finite radius there, and the
    rows without a bad entry keep finite radii."""
    z = np.array([[0.9 + 0.1j, 0.5j], [0.3, -0.99]])
    W = MR(np.ones((2, 2), complex), np.full((2, 2), 1e-16))
    part, which = where.split()[0], where.split()[1:]
    bad = np.nan if which[-1] == "nan" else np.inf
    if part == "W":
        if which[0] == "mid":
            W.mid[0, 0] = bad
        else:
            W.rad[0, 0] = bad

    used = [part == "W"]

    def power(e):
        mid, rad = z ** e, np.full(z.shape, 1e-16)
        if part == "z":
            (mid if which[0] == "mid" else rad)[0, 1] = bad
            used[0] = True
        return MR(mid, rad)
    S = MR(np.ones((2, 2), complex), np.zeros((2, 2)))
    with np.errstate(all="ignore"):
        try:
            mid, rad = vandermonde_midrad(W, S, power, L, 2)
        except ArithmeticError:
            return
    if used[0]:
        assert not np.any(np.isfinite(rad[0]))
    assert np.all(np.isfinite(rad[1]) & np.isfinite(mid[1]))


def _dplr_fixtures():
    from tests.certs.checkpoint.test_model import FIXTURES, fixture
    return [n for n in FIXTURES if fixture(n)[0]["kernel"]["class_name"] == "SSMKernelDPLR"]


@pytest.mark.parametrize("name", _dplr_fixtures())
@pytest.mark.parametrize("L", [None, 37, 5])
def test_half_the_roots_meet_all_the_roots_on_the_fixtures(name, L):
    """The DPLR pass with conjugate_pairs (the reference's full state) against the same pass on
    all M roots, at the fixture's length and at shorter ones (so C~ for l_kernel points is
    turned into C~ for another M): wherever both certify, the disks meet, and the half route
    certifies every kernel the full one does."""
    from s4cert.certs.checkpoint.dplr_float64 import dplr_float64
    from s4cert.certs.checkpoint.layouts import find_kernel_modules, resolve_settings
    from s4cert.certs.checkpoint.reader import read_checkpoint
    from s4cert.certs.checkpoint.semantics import dplr_module
    from tests.certs.checkpoint.test_model import DATA, fixture, options_of

    meta, ref = fixture(name)
    L = int(ref["L"]) if L is None else L
    ck = read_checkpoint(DATA / f"{name}.pt")
    [mod] = find_kernel_modules(ck.tensors)
    resolve_settings(mod, options_of(meta), ck.hyper_parameters)
    dm = dplr_module(mod, 128)
    assert dm.conjugate_pairs
    half = dplr_float64(dm.models, dm.l_kernel, L, conjugate_pairs=True)
    full = dplr_float64(dm.models, dm.l_kernel, L, conjugate_pairs=False)
    both = np.isfinite(half[1]) & np.isfinite(full[1])
    assert both.any() and np.array_equal(np.isfinite(half[1]), np.isfinite(full[1]))
    assert np.all(np.abs(half[0] - full[0])[both] <= (half[1] + full[1])[both])


def _scaled_channels_module(factor: float):
    """The two-channel DPLR fixture with channel 1's C multiplied by ``factor`` (exact: a
    power of two), so that its kernels are ``factor`` times those of channel 0."""
    from s4cert.certs.checkpoint.layouts import find_kernel_modules, resolve_settings
    from s4cert.certs.checkpoint.reader import read_checkpoint
    from tests.certs.checkpoint.test_model import DATA, fixture, options_of

    name = "a06_fftconv_s4_channels2_nssm2"
    meta, ref = fixture(name)
    ck = read_checkpoint(DATA / f"{name}.pt")
    [mod] = find_kernel_modules(ck.tensors)
    resolve_settings(mod, options_of(meta), ck.hyper_parameters)
    C = np.array(mod.tensors["C"], dtype=np.float64)
    C[1] *= factor
    mod.tensors["C"] = C
    return mod, int(ref["L"])


def test_pairing_kernels_of_different_scales_keeps_each_kernels_relative_radius():
    """Channel 1's kernels 16 times channel 0's: on half the roots, with two kernels per inverse
    transform, each kernel's radius relative to its own max|K| stays within twice what the pass
    on all roots (one kernel per transform) gives: the smaller row of a pair is scaled by a
    power of two to the larger one's size before packing, so the shared rounding, scaled back,
    stays relative to each kernel."""
    from s4cert.certs.checkpoint.dplr_float64 import dplr_float64
    from s4cert.certs.checkpoint.semantics import dplr_module

    mod, L = _scaled_channels_module(16.0)
    dm = dplr_module(mod, 128)
    rel = {}
    for cp in (False, True):
        m, r = dplr_float64(dm.models, dm.l_kernel, L, conjugate_pairs=cp)
        rel[cp] = np.max(r, axis=2) / np.max(np.abs(m), axis=2)
    assert np.all(rel[True] <= 2 * rel[False])


def test_kernels_16_times_apart_stay_in_the_one_pass_at_the_default_eps(monkeypatch):
    """At the default (relative) eps, with channel 1's kernels 16 times channel 0's, every kernel
    still comes from the layer's pass (none through certify_kernel)."""
    def refuse(*args, **kwargs):
        raise AssertionError("a kernel went through certify_kernel")
    monkeypatch.setattr(certify, "certify_kernel", refuse)
    mod, L = _scaled_channels_module(16.0)
    k = certify_module(mod, L)
    assert k.status == "ok" and k.info["arithmetic"] == [FLOAT64_ARITHMETIC]
