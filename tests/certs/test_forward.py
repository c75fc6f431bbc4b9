"""Certified outputs of trained S4 models (``certify_forward``, ``s4cert forward``).

Each fixture's ``NAME.outputs.npz`` holds the reference code's own forward outputs in
float32 and float64 on a seeded input, and its recurrent outputs over an input twice as
long.  The certified disks must contain the reference's float64 outputs up to the
reference's own float64 rounding, bounded as follows (``ssm_allowance``,
``TAIL_ROUNDING``).

* The SSM part: the reference computes ``irfft(rfft(v, n) rfft(k, n), n)[:T] + v D`` in
  float64 with its own float64 kernel k (n = l_kernel + T).  Against the exact
  ``K * v + D v`` that differs by (i) ``sum_j |k_j - K_j| |v_{t-j}|``, bounded with the
  certified kernel disks as ``sum_j (|k_j - mid_j| + rad_j) |v_{t-j}|``; (ii) the FFT
  convolution's rounding: each transform of length n has a normwise relative error of at
  most ``eta = 10 ceil(log2 n) u`` (Higham, Accuracy and Stability, Thm 24.2: ``log2 n
  (mu + gamma_4 (sqrt 2 + mu))`` for radix 2 with accurate twiddles, here with a factor of
  two for mixed radices), the product of the transforms adds u, so the computed
  convolution is within ``3 eta sqrt(n) |v|_2 |k|_2`` of the exact one in every entry
  (three transforms, ``|F x|_2 = sqrt(n) |x|_2``, the inverse's 1/n; for DSS, whose kernel
  the reference returns in float32, the kernel's transform runs in single precision, so its
  eta has u = 2^-24); (iii) ``2u |D v|``
  for the skip term and its addition; (iv) with a prenorm, the reference's LayerNorm
  rounding of the input, ``(2H + 16) u max|v|`` per entry, through ``sum_j |k_j|``.
* After the SSM part (activation, output linear layer, GLU, residual, LayerNorm): the
  certified layers (``block_tail``) applied to SSM disks widened by the allowance above
  hold the exact layers of the reference's float64 SSM part; the reference's own rounding
  in those layers is at most ``TAIL_ROUNDING max|y|``: at most 4 layers of at most 64
  roundings of relative size u each, amplified by the later layers' Lipschitz constants
  (GELU 1.13, GLU 1 + max|a|/4, a linear layer's row sums, a LayerNorm's
  ``|w| (2 + H) / sigma``; below 2^8 on these fixtures, checked in the test):
  ``4 * 64 * 2^8 * u = 2^-37``.
* Steps mode: the reference's recurrence accumulates its rounding over 2L steps of a dense
  N x N state matrix; the allowance is the kernel test's, 1e-12 max|y|
  (tests/certs/checkpoint/test_model.py).
"""
from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from s4cert.certs.forward import block_tail, certify_forward, read_input
from s4cert.certs.forward_conv import Disks, causal_conv
from s4cert.certs.forward_layers import gelu, glu, layer_norm, linear

from .cli_run import one_line_error, s4cert

DATA = Path(__file__).resolve().parents[1] / "data" / "s4-checkpoints"
FIXTURES = sorted(p.name[:-len(".outputs.npz")] for p in DATA.glob("a*.outputs.npz"))
STEPPED = [n for n in FIXTURES if n not in ("a05_s4d_minimal", "a10_fftconv_diag_dss_inv")]
OPTIONS = ("dt_transform", "real_transform", "imag_transform", "disc")
U = 2.0 ** -53
TAIL_ROUNDING = 2.0 ** -37


def options_of(name: str) -> dict:
    meta = json.loads((DATA / f"{name}.json").read_text())
    eff = meta["kernel"].get("effective_attributes", {})
    opts = {k: eff.get(k) for k in OPTIONS if isinstance(eff.get(k), str)}
    if meta["kernel"]["class_name"] != "SSMKernelDiag":
        opts.pop("disc", None)
    return opts


def checkpoint(name: str) -> Path:
    ckpt = DATA / f"{name}.ckpt"
    return ckpt if ckpt.exists() else DATA / f"{name}.pt"


def outputs(name: str) -> dict:
    with np.load(DATA / f"{name}.outputs.npz") as z:
        return {k: z[k] for k in z.files}


def time_last(a: np.ndarray, like: tuple) -> np.ndarray:
    """A fixture's SSM array (B, L, CH) for non-transposed modules, as (B, CH, L)."""
    return a if a.shape == like else np.swapaxes(a, 1, 2)


def ssm_allowance(report, name: str, v: np.ndarray) -> np.ndarray:
    """Bound on |reference float64 SSM part - exact| per entry, (B, C H, T) (module docstring);
    v: the module's input (B, H, T) in float64."""
    k = report.kernels[0]
    with np.load(DATA / f"{name}.kernels.npz") as z:
        ref_k = z["float64"].astype(np.float64)[..., :k.L]
    block = report.plan.blocks[0]
    B, H, T = v.shape
    C = k.mid.shape[0]
    dk = np.abs(ref_k - k.mid) + k.rad
    n = k.L + T
    eta = 10 * math.ceil(math.log2(n)) * U
    # DSS: the reference returns its kernel in float32, whose transform runs in single precision
    eta_k = eta * 2.0 ** 29 if k.disc == "dss" else eta
    av = np.abs(v)
    out = np.zeros((B, C, H, T))
    for j in range(min(k.L, T)):
        out[..., j:] += dk[None, :, :, j, None] * av[:, None, :, :T - j]
    fft = (2 * eta + eta_k) * math.sqrt(n) * np.linalg.norm(v, axis=-1)[:, None, :, None] * \
        np.linalg.norm(ref_k, axis=-1)[None, :, :, None]
    out += fft + 2 * U * np.abs(block.D[None, :, :, None] * v[:, None])
    if block.norm is not None and block.prenorm:
        out += (2 * H + 16) * U * float(av.max()) * np.sum(np.abs(ref_k), axis=-1)[None, :, :, None]
    return out.reshape(B, C * H, T) * (1 + 2.0 ** -20)


def lipschitz_premise(report) -> None:
    """The premise of TAIL_ROUNDING: the tail's Lipschitz constants stay below 2^8."""
    for block in report.plan.blocks:
        if block.out_linear is not None:
            W = block.out_linear[0]
            assert float(np.max(np.sum(np.abs(W), axis=1))) * 1.13 * 2 <= 2 ** 8


def test_every_fixture_has_outputs():
    assert len(FIXTURES) == 10 and len(STEPPED) == 8


@pytest.mark.parametrize("name", FIXTURES)
def test_convolution_outputs_contain_the_reference_float64_outputs(name):
    z = outputs(name)
    report = certify_forward(checkpoint(name), z["u_conv"], time_last=True, compare=z["out_conv_float32"],
                             **options_of(name))
    [block] = report.plan.blocks
    y = report.outputs["output"]
    ssm = report.outputs[f"{block.prefix}.ssm"]
    assert y.shape == z["out_conv_float64"].shape
    for n, d in report.outputs.items():
        assert d.max_rad() <= report.eps[n] <= 1e-13 * float(np.max(np.abs(d.mid))) * (1 + 1e-9)
    # the SSM part, then the layers on the widened SSM part
    u = z["u_conv"].astype(np.float64)
    v = u
    if block.norm is not None:
        v = np.swapaxes(layer_norm(Disks.exact(np.swapaxes(u, 1, 2)), *block.norm).mid, 1, 2)
    allow = ssm_allowance(report, name, v)
    ref_ssm = time_last(z["ssm_conv_float64"], ssm.shape)
    assert np.all(np.abs(ref_ssm - ssm.mid) <= ssm.rad + allow)
    lipschitz_premise(report)
    widened = Disks(ssm.mid, ssm.rad + allow)
    tail = block_tail(block, widened, Disks.exact(np.swapaxes(u, 1, 2)))
    if report.plan.final_norm is not None:
        tail = layer_norm(tail, *report.plan.final_norm)
    if report.plan.transposed:
        tail = Disks(np.swapaxes(tail.mid, 1, 2), np.swapaxes(tail.rad, 1, 2))
    ref = z["out_conv_float64"]
    slack = TAIL_ROUNDING * float(np.max(np.abs(ref)))
    assert np.all(np.abs(ref - tail.mid) <= tail.rad + slack)
    assert np.all(np.abs(ref - y.mid) <= y.rad + (tail.rad - y.rad).clip(0) + slack)
    # the certified interval for max|float32 - y| holds the measured gap to the float64 outputs
    lo, hi = report.compare["max_error"]
    seen = float(np.max(np.abs(z["out_conv_float32"].astype(np.float64) - ref)))
    bound = float(np.max(tail.rad)) + float(np.max(y.rad)) + slack
    assert lo - bound <= seen <= hi + bound
    assert hi - lo <= 2 * y.max_rad() + 1e-9 * hi


def test_the_disks_are_not_wide_enough_to_pass_a_wrong_layer():
    name = "a03_fftconv_diag_zoh_lin"
    z = outputs(name)
    wrong = certify_forward(checkpoint(name), z["u_conv"], activation="id", part="model", **options_of(name))
    y, ref = wrong.outputs["output"], z["out_conv_float64"]
    assert not np.all(np.abs(ref - y.mid) <= y.rad + 1e-6 * float(np.max(np.abs(ref))))


def test_the_ssm_part_against_the_reference_float32_one():
    name = "a06_fftconv_s4_channels2_nssm2"          # two channels, two SSMs over four heads
    z = outputs(name)
    r = certify_forward(checkpoint(name), z["u_conv"], part="ssm", compare=z["ssm_conv_float32"], against="ssm")
    ssm = r.outputs["kernel.ssm"]
    assert ssm.shape == (2, 8, 96) and r.compare["array"] == "kernel.ssm"
    lo, hi = r.compare["max_error"]
    allow = float(np.max(ssm_allowance(r, name, z["u_conv"].astype(np.float64))))
    seen = float(np.max(np.abs(z["ssm_conv_float32"].astype(np.float64) - z["ssm_conv_float64"])))
    assert lo - allow <= seen <= hi + allow and hi - lo <= 1e-3 * hi
    with pytest.raises(ValueError, match="--against output compares an array that --part ssm"):
        certify_forward(checkpoint(name), z["u_conv"], part="ssm", compare=z["ssm_conv_float32"])


@pytest.mark.parametrize("name", STEPPED)
def test_step_outputs_contain_the_reference_float64_steps(name):
    z = outputs(name)
    report = certify_forward(checkpoint(name), z["u_step"], time_last=True, steps=True, **options_of(name))
    y = report.outputs["output"]
    ref = z["out_step_float64"]
    assert report.mode == "steps" and y.shape == ref.shape and report.options["l_kernel"] == ref.shape[-1]
    allow = 1e-12 * float(np.max(np.abs(ref)))
    assert np.all(np.abs(ref - y.mid) <= y.rad + allow)
    [ssm] = [d for n, d in report.outputs.items() if n != "output"]
    assert np.all(np.abs(z["ssm_step_float64"] - ssm.mid) <= ssm.rad + 1e-12 * float(np.max(np.abs(ssm.mid))))


def test_steps_go_on_past_the_kernel_length():
    """t >= l_kernel: the recurrence is not the convolution with the kernel cut at l_max
    (certainly different there), and equals it before."""
    name = "a09_fftconv_nplr_lkernel0"           # l_max = 64, the step input is 128 long
    z = outputs(name)
    steps = certify_forward(checkpoint(name), z["u_step"], time_last=True, steps=True, part="ssm")
    conv = certify_forward(checkpoint(name), z["u_step"], time_last=True, part="ssm", l_max=64)
    assert conv.options["l_kernel"] == 64 and steps.options["l_kernel"] == 128
    a, b = steps.outputs["kernel.ssm"], conv.outputs["kernel.ssm"]
    apart = np.abs(a.mid - b.mid) > a.rad + b.rad
    assert not apart[..., :64].any()
    assert apart[..., 64:].mean() > 0.5


def running_sum_checkpoint(path: Path) -> Path:
    """The seed's example as a diagonal checkpoint: A = 0, B = 1, C = 1/2 (one mode of a
    conjugate pair: 2 Re C), step 1, bilinear, D = 0."""
    np.savez(path, **{"kernel.inv_dt": np.ones((1, 1), np.float32), "kernel.A_real": np.zeros((1, 1), np.float32),
                      "kernel.A_imag": np.zeros((1, 1), np.float32),
                      "kernel.B": np.array([[[[1.0, 0.0]]]], np.float32),
                      "kernel.C": np.array([[[[0.5, 0.0]]]], np.float32), "D": np.zeros((1, 1), np.float32)})
    return path


def test_the_running_sum_example_exactly(tmp_path):
    u = np.array([[[3.0, -1.0, 4.0, 1.0, -5.0, 9.0, 2.0, -6.0, 5.0, 3.0]]])
    exact = np.cumsum(u, axis=-1)
    # the convolution alone, on exact disks
    y = causal_conv(Disks.exact(np.ones((1, 1, 10))), np.zeros((1, 1)), Disks.exact(u))
    assert np.array_equal(y.mid[:, 0], exact) and np.all(y.rad <= 4 * U * np.abs(exact) + 1e-300)
    # through a checkpoint, in both modes (the kernel of ones certified, not given)
    ck = running_sum_checkpoint(tmp_path / "rs.npz")
    opts = dict(activation="id", disc="bilinear", dt_transform="none", real_transform="none")
    for steps in (False, True):
        r = certify_forward(ck, u, steps=steps, l_max=None, **opts)
        out = r.outputs["output"]
        assert np.array_equal(out.mid, exact) and out.max_rad() <= 1e-12
    # the convolution with l_max = 4 sums the last four inputs only
    r = certify_forward(ck, u, l_max=4, **opts)
    window = np.array([[sum(u[0, 0, max(0, t - 3):t + 1]) for t in range(10)]])
    assert np.array_equal(r.outputs["output"].mid, window[None])


def _exact_conv(K, D: np.ndarray, v, h: int, t: int) -> Fraction:
    """The exact convolution at (h, t) of the points K(h, j), v(h, t) (Fractions)."""
    s = Fraction(D[0, h]) * v(h, t)
    for j in range(min(K.lags, t + 1)):
        s += K(h, j) * v(h, t - j)
    return s


magnitudes = st.sampled_from([1.0, 1e-30, 1e30, 2.0 ** -380, 2.0 ** 380])


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(1, 6), st.integers(1, 9), magnitudes, magnitudes,
       st.booleans())
def test_the_convolution_contains_every_point_of_its_disks(seed, Lk, T, ks, vs, cancel):
    """Red team: wide magnitudes, cancellation (kernels that alternate), radii on both
    operands; the exact convolution of the disks' corners lies in the output disks."""
    rng = np.random.default_rng(seed)
    K = rng.standard_normal((1, 2, Lk)) * ks
    if cancel:
        K[..., 1::2] = -K[..., ::2][..., :K[..., 1::2].shape[-1]] * (1 + 2.0 ** -40)
    v = rng.standard_normal((1, 2, T)) * vs
    kr = np.abs(K) * rng.choice([0.0, 1e-10], K.shape)
    vr = np.abs(v) * rng.choice([0.0, 1e-12], v.shape)
    D = rng.standard_normal((1, 2))
    out = causal_conv(Disks(K, kr), D, Disks(v, vr))
    certified = 0
    for sk in (-1, 1):
        for sv in (-1, 1):
            Kp = lambda h, j: Fraction(K[0, h, j]) + sk * Fraction(kr[0, h, j])    # the disks' corners, exactly
            Kp.lags = Lk
            vp = lambda h, t: Fraction(v[0, h, t]) + sv * Fraction(vr[0, h, t])
            for h in range(2):
                for t in range(T):
                    e = _exact_conv(Kp, D, vp, h, t)
                    assert abs(e - Fraction(float(out.mid[0, 0, h, t]))) <= Fraction(float(out.rad[0, 0, h, t]))
                    certified += 1
    assert certified == 8 * T


def test_the_compiled_sums_are_the_numpy_sums_bitwise(monkeypatch):
    """The compiled loop (numba) runs the same operations in the same order: its disks are the
    numpy form's, bit for bit (so the proof of the numpy form covers it)."""
    from s4cert.arith.compiled import installed
    from s4cert.certs import forward_conv
    if not installed():
        assert not forward_conv.GATE.open()
        return
    assert forward_conv.GATE.open()
    rng = np.random.default_rng(5)
    K = Disks(rng.standard_normal((2, 3, 40)), np.abs(rng.standard_normal((2, 3, 40))) * 1e-14)
    v = Disks(rng.standard_normal((2, 3, 64)), np.abs(rng.standard_normal((2, 3, 64))) * 1e-15)
    D = rng.standard_normal((2, 3))
    forms = []
    for mode in ("0", "1"):
        monkeypatch.setenv("S4CERT_COMPILED", mode)
        forms.append(causal_conv(K, D, v))
    assert np.array_equal(forms[0].mid, forms[1].mid) and np.array_equal(forms[0].rad, forms[1].rad)


def test_tiny_and_huge_values():
    y = causal_conv(Disks.exact(np.array([[[1e-300, 1.0]]])), np.zeros((1, 1)), Disks.exact(np.ones((1, 1, 3))))
    assert np.all(np.abs(y.mid[0, 0, 0] - np.array([1e-300, 1 + 1e-300, 1 + 1e-300])) <= y.rad[0, 0, 0])
    with pytest.raises(ValueError, match="exceeds 2\\^400"):
        causal_conv(Disks.exact(np.array([[[1e200]]])), np.zeros((1, 1)), Disks.exact(np.ones((1, 1, 2))))


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), magnitudes)
def test_the_layers_contain_the_exact_results(seed, scale):
    """linear against Fractions at the disks' corners; GELU, GLU and LayerNorm against FLINT
    at 300 bits at the disks' ends and midpoints."""
    from flint import arb, ctx
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 3)) * min(scale, 1e30)
    r = np.abs(x) * 1e-12
    W, b = rng.standard_normal((4, 3)), rng.standard_normal(4)
    out = linear(Disks(x, r), W, b)
    for s in (-1, 1):
        for i in range(2):
            for o in range(4):
                e = sum((Fraction(x[i, k]) + s * Fraction(r[i, k])) * Fraction(W[o, k]) for k in range(3)) \
                    + Fraction(b[o])
                assert abs(e - Fraction(float(out.mid[i, o]))) <= Fraction(float(out.rad[i, o]))
    z = rng.standard_normal((2, 4)) * 3
    zr = np.abs(z) * 1e-9
    g, q = gelu(Disks(z, zr)), glu(Disks(z, zr))
    w, bb = rng.standard_normal(4), rng.standard_normal(4)
    ln = layer_norm(Disks(z, zr), w, bb)
    with ctx.workprec(300):
        for s in (-1, 0, 1):
            p = [[arb(float(z[i, k])) + s * arb(float(zr[i, k])) for k in range(4)] for i in range(2)]
            for i in range(2):
                mean = sum(p[i], arb(0)) / 4
                var = sum(((a - mean) ** 2 for a in p[i]), arb(0)) / 4
                for k in range(4):
                    a = p[i][k]
                    inside = lambda d, e, idx: bool(abs(e - arb(float(d.mid[idx]))) <= arb(float(d.rad[idx])))
                    assert inside(g, a * (1 + (a / arb(2).sqrt()).erf()) / 2, (i, k))
                    if k < 2:
                        assert inside(q, a / (1 + (-p[i][k + 2]).exp()), (i, k))
                    assert inside(ln, (a - mean) / (var + arb(1e-5)).sqrt() * arb(float(w[k])) + arb(float(bb[k])),
                                  (i, k))


@pytest.mark.parametrize("name, steps", [("a07_seqmodel_nplr_lightning", False), ("a04_s4block_s4d_bilinear_legs_dtuntied", True)])
def test_an_eps_below_float64_goes_to_balls(name, steps):
    """eps = 1e-30 max|y|: every array certified in balls (lossless strings within eps), and
    their enclosures meet the float64 route's disks entry by entry."""
    z = outputs(name)
    u = z["u_step" if steps else "u_conv"]
    f64 = certify_forward(checkpoint(name), u, time_last=True, steps=steps, **options_of(name))
    scale = min(float(np.max(np.abs(d.mid))) for d in f64.outputs.values())
    deep = certify_forward(checkpoint(name), u, time_last=True, steps=steps, eps=1e-30 * scale, **options_of(name))
    assert set(deep.exact) == set(deep.outputs) == set(f64.outputs)
    for n, (mids, rads, worst) in deep.exact.items():
        assert worst <= 1e-30 * scale and deep.max_rad(n) == worst
        a = f64.outputs[n]
        m = np.vectorize(lambda x: float(Fraction(x)))(mids)
        assert np.all(np.abs(m - a.mid) <= a.rad + 1e-29 * scale)
        b = deep.outputs[n]                      # the balls' float64 disks hold them too
        assert np.all(np.abs(m - b.mid) <= b.rad)
    doc = deep.document()
    assert all(o["arithmetic"] == "ball" for o in doc["outputs"].values())


def test_refusals(tmp_path):
    z = outputs("a05_s4d_minimal")
    with pytest.raises(ValueError, match="minimal S4D .* no step mode"):
        certify_forward(DATA / "a05_s4d_minimal.pt", z["u_step"], time_last=True, steps=True)
    z = outputs("a10_fftconv_diag_dss_inv")
    with pytest.raises(ValueError, match="no step mode for DSS"):
        certify_forward(DATA / "a10_fftconv_diag_dss_inv.pt", z["u_step"], time_last=True, steps=True, disc="dss")
    from s4cert.certs.checkpoint.reader import read_checkpoint
    sd = dict(read_checkpoint(DATA / "a02_fftconv_dplr_rank2_dtuntied.pt").tensors)
    u = outputs("a02_fftconv_dplr_rank2_dtuntied")["u_conv"]
    np.savez(tmp_path / "gate.npz", **sd, **{"input_gate.0.weight": np.ones((3, 3), np.float32)})
    with pytest.raises(ValueError, match="unsupported module or parameter in the checkpoint: input_gate.0.weight"):
        certify_forward(tmp_path / "gate.npz", u)
    np.savez(tmp_path / "three.npz", **{**sd, "kernel.C": np.concatenate([sd["kernel.C"]] * 3)})
    with pytest.raises(ValueError, match="1 channels against the kernel's 3"):
        certify_forward(tmp_path / "three.npz", u)
    with pytest.raises(ValueError, match="expected shape"):
        certify_forward(DATA / "a02_fftconv_dplr_rank2_dtuntied.pt", u[:, :2])


def test_a_bidirectional_fftconv_is_the_reference_formula(tmp_path):
    """The reference's bidirectional kernel (k0 padded after, the flipped k1 before) through a
    numpy FFT convolution of the certified kernels' midpoints, within that computation's own
    rounding (the module docstring's FFT bound) and the kernels' radii."""
    from s4cert.certs.checkpoint.reader import read_checkpoint
    name = "a02_fftconv_dplr_rank2_dtuntied"
    sd = dict(read_checkpoint(DATA / f"{name}.pt").tensors)
    C = sd["kernel.C"]
    sd["kernel.C"] = np.concatenate([C, C[..., ::-1, :] * np.float32(0.5)])
    np.savez(tmp_path / "bi.npz", **sd)
    x = outputs(name)["u_conv"].astype(np.float64)[:, :, :40]
    r = certify_forward(tmp_path / "bi.npz", x, part="ssm", l_max=None, dt_transform="softplus")
    assert r.plan.blocks[0].bidirectional
    k = r.kernels[0]
    T = x.shape[-1]
    k0, k1 = k.mid[:1], k.mid[1:]
    full = np.concatenate([k0, np.zeros_like(k0)], -1) + np.concatenate([np.zeros_like(k1), k1[..., ::-1]], -1)
    n = 2 * T
    y = np.fft.irfft(np.fft.rfft(x, n)[:, None] * np.fft.rfft(full, n)[None], n)[..., :T] + x[:, None] * sd["D"][None, :, :, None]
    eta = 10 * math.ceil(math.log2(n)) * U
    ax = np.abs(x)
    allow = 3 * eta * math.sqrt(n) * np.linalg.norm(x, axis=-1)[:, None, :, None] * \
        np.linalg.norm(full, axis=-1)[None, :, :, None] + 2 * U * np.abs(x[:, None] * sd["D"][None, :, :, None])
    allow += float(k.rad.max()) * np.sum(ax, axis=-1)[:, None, :, None] * 2
    ssm = r.outputs["kernel.ssm"]
    assert np.all(np.abs(y.reshape(ssm.shape) - ssm.mid) <= ssm.rad + allow.reshape(ssm.shape))
    causal = np.fft.irfft(np.fft.rfft(x, n)[:, None] * np.fft.rfft(k0, n)[None], n)[..., :T]
    assert np.max(np.abs(causal.reshape(ssm.shape) + (x[:, None] * sd["D"][None, :, :, None]).reshape(ssm.shape)
                         - ssm.mid)) > 1e-3
    with pytest.raises(ValueError, match="bidirectional FFTConv has no step mode"):
        certify_forward(tmp_path / "bi.npz", x, steps=True, dt_transform="softplus")


def test_hostile_inputs(tmp_path):
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match="float32 or float64"):
        read_input(tmp_path / "obj.npy", None)
    np.savez(tmp_path / "ints.npz", u=np.ones((1, 3, 4), np.int64))
    with pytest.raises(ValueError, match="float32 or float64"):
        read_input(tmp_path / "ints.npz", "u")
    np.savez(tmp_path / "two.npz", u=np.ones((2, 3)), w=np.ones((1, 3, 4)))
    with pytest.raises(ValueError, match="3 axes"):
        read_input(tmp_path / "two.npz", "u")
    with pytest.raises(ValueError, match="choose one"):
        read_input(tmp_path / "two.npz", None)
    (tmp_path / "junk.npz").write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(ValueError, match="cannot read"):
        read_input(tmp_path / "junk.npz", "u")
    np.savez(tmp_path / "nan.npz", u=np.full((1, 3, 4), np.nan))
    with pytest.raises(ValueError, match="non-finite"):
        certify_forward(DATA / "a02_fftconv_dplr_rank2_dtuntied.pt", tmp_path / "nan.npz", key="u")


def test_cli_forward_files_and_compare(tmp_path):
    name = "a01_s4block_nplr_legs_nssm1"
    src = DATA / f"{name}.outputs.npz"
    y, rep = tmp_path / "y.npz", tmp_path / "r.json"
    p = s4cert("forward", str(DATA / f"{name}.pt"), "--input", str(src), "--key", "u_conv", "--outputs", str(y),
               "--out", str(rep), "--compare", str(src), "--key", "out_conv_float32", "--quiet")
    assert p.returncode == 0, p.stderr
    assert "compare output: max|other - y| in [" in p.stdout
    doc = json.loads(rep.read_text())
    assert doc["format"] == "s4cert.forward-report/1" and doc["compare"]["key"] == "out_conv_float32"
    lo, hi = doc["compare"]["max_error"]
    with np.load(src) as z, np.load(y) as out:
        assert set(out.files) == {"output.mid", "output.rad", "layer.kernel.ssm.mid", "layer.kernel.ssm.rad"}
        gap = float(np.max(np.abs(z["out_conv_float32"].astype(np.float64) - out["output.mid"])))
        assert lo <= gap + float(out["output.rad"].max()) and gap - float(out["output.rad"].max()) <= hi
        assert doc["outputs"]["output"]["max_rad"] == float(out["output.rad"].max())


def test_cli_refusals_are_one_line(tmp_path):
    src = str(DATA / "a05_s4d_minimal.outputs.npz")
    line = one_line_error(s4cert("forward", str(DATA / "a05_s4d_minimal.pt"), "--input", src, "--key", "u_step",
                                 "--steps", "--quiet"))
    assert "no step mode" in line
    line = one_line_error(s4cert("forward", str(DATA / "a05_s4d_minimal.pt"), "--input", src, "--key", "nope",
                                 "--quiet"))
    assert "no array 'nope'" in line
    p = s4cert("forward", str(DATA / "a05_s4d_minimal.pt"), "--input", src, "--key", "u_conv", "--eps", "1e-30",
               "--outputs", str(tmp_path / "y.npz"), "--quiet")
    assert p.returncode == 0, p.stderr
    with np.load(tmp_path / "y.npz") as z:
        assert {"output.mid_exact", "output.rad_exact", "kernel.ssm.mid_exact"} <= set(z.files)
        assert max(Fraction(r) for r in z["output.rad_exact"].reshape(-1)) <= Fraction(1e-30)


# -- the FFT convolution (certs/forward_fft.py; proofs/outputs.md, section 7) ---------------

def _scaled(x: float) -> int:
    """x * 2^1100 exactly (every float is a multiple of 2^-1074)."""
    f = Fraction(float(x))
    return f.numerator * (2 ** 1100 // f.denominator)


def _exact_causal(K: np.ndarray, D: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The exact causal sums plus D v, times 2^2200, as Python integers (B, C, H, T): FLINT's
    exact integer polynomial products of the scaled rows."""
    from flint import fmpz_poly
    (C, H, _), (B, _, T) = K.shape, v.shape
    out = np.empty((B, C, H, T), dtype=object)
    for b in range(B):
        for c in range(C):
            for h in range(H):
                p = (fmpz_poly([_scaled(a) for a in K[c, h]]) * fmpz_poly([_scaled(a) for a in v[b, h]])).coeffs()
                p = [int(x) for x in p] + [0] * T
                d = _scaled(D[c, h])
                for t in range(T):
                    out[b, c, h, t] = p[t] + d * _scaled(v[b, h, t])
    return out


def _contained(exact: np.ndarray, y: Disks) -> int:
    """How many entries of ``exact`` (scaled by 2^2200) lie in the disks; asserts all do."""
    n = 0
    for idx in np.ndindex(exact.shape):
        assert abs(exact[idx] - _scaled(y.mid[idx]) * 2 ** 1100) <= _scaled(y.rad[idx]) * 2 ** 1100, idx
        n += 1
    return n


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(1, 8), st.integers(1, 12), magnitudes, magnitudes,
       st.booleans())
def test_the_fft_convolution_contains_every_point_of_its_disks(seed, Lk, T, ks, vs, cancel):
    """Red team for the FFT route: wide magnitudes (2^-380 to 2^380, and both within a row),
    cancellation, radii on both operands, kernels longer than the input; the exact
    convolution at the disks' corners lies in the output disks."""
    from s4cert.certs.forward_fft import fft_conv
    rng = np.random.default_rng(seed)
    K = rng.standard_normal((2, 2, Lk)) * ks
    K[1] *= 2.0 ** rng.integers(-12, 12, (2, Lk))
    if cancel:
        K[..., 1::2] = -K[..., ::2][..., :K[..., 1::2].shape[-1]] * (1 + 2.0 ** -40)
    v = rng.standard_normal((1, 2, T)) * vs
    kr = np.abs(K) * rng.choice([0.0, 1e-10], K.shape)
    vr = np.abs(v) * rng.choice([0.0, 1e-12], v.shape)
    D = rng.standard_normal((2, 2))
    out = fft_conv(Disks(K, kr), D, Disks(v, vr))
    certified = 0
    for sk in (-1, 1):
        for sv in (-1, 1):
            Kc = [[[Fraction(K[c, h, j]) + sk * Fraction(kr[c, h, j]) for j in range(Lk)] for h in range(2)]
                  for c in range(2)]
            for c in range(2):
                for h in range(2):
                    for t in range(T):
                        e = Fraction(D[c, h]) * (Fraction(v[0, h, t]) + sv * Fraction(vr[0, h, t]))
                        for j in range(min(Lk, t + 1)):
                            e += Kc[c][h][j] * (Fraction(v[0, h, t - j]) + sv * Fraction(vr[0, h, t - j]))
                        assert abs(e - Fraction(float(out.mid[0, c, h, t]))) <= Fraction(float(out.rad[0, c, h, t]))
                        certified += 1
    assert certified == 16 * T


def _stress(kind: str, rng) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Kernels (1, 2, 300) and inputs (2, 2, 400): decaying S4-like kernels, entries from
    1e-30 to 1e30 within a row, a cancelling kernel on a constant input, or 2^380 / 2^-380."""
    j = np.arange(300)
    K = rng.standard_normal((1, 2, 300)) * np.exp(-j / 60)
    v = rng.standard_normal((2, 2, 400))
    if kind == "wide":
        K *= 10.0 ** rng.integers(-30, 30, K.shape)
        v *= 10.0 ** rng.integers(-30, 30, v.shape)
    elif kind == "cancel":
        K[..., 1::2] = -K[..., ::2] * (1 + 2.0 ** -45)
        v[:] = 3.0
    elif kind == "extreme":
        K *= 2.0 ** 380
        v *= 2.0 ** -380
    return K, rng.standard_normal((1, 2)), v


@pytest.mark.parametrize("kind", ["s4", "wide", "cancel", "extreme"])
def test_the_fft_convolution_against_exact_polynomial_products(kind):
    """At T = 400, l_kernel = 300 (M = 1024): every entry of the FFT route's disks holds the
    exact sums (FLINT's integer polynomial products); on the S4-like kernels its radius is
    within the default eps of 1e-13 max|y|."""
    from s4cert.certs.forward_fft import fft_conv
    K, D, v = _stress(kind, np.random.default_rng(7))
    y = fft_conv(Disks.exact(K), D, Disks.exact(v))
    assert _contained(_exact_causal(K, D, v), y) == 2 * 2 * 400
    if kind == "s4":
        assert y.max_rad() <= 1e-13 * float(np.max(np.abs(y.mid)))


def test_the_fft_and_direct_routes_agree():
    """Both routes on the same disks (radii on kernel and input): their disks intersect
    everywhere, and the FFT's midpoints differ from the compensated sums' by far less than
    the default eps."""
    from s4cert.certs.forward_fft import fft_conv
    rng = np.random.default_rng(11)
    K, D, v = _stress("s4", rng)
    Kd = Disks(K, np.abs(K) * 1e-15)
    vd = Disks(v, np.full(v.shape, 1e-16))
    f, d = fft_conv(Kd, D, vd), causal_conv(Kd, D, vd)
    assert np.all(np.abs(f.mid - d.mid) <= f.rad + d.rad)
    assert float(np.max(np.abs(f.mid - d.mid))) <= 1e-14 * float(np.max(np.abs(d.mid)))


def test_the_choice_rule(monkeypatch):
    """By cost: the direct sums at fixture sizes, the FFT at the goal's; the FFT where it is
    cheaper and meets the bound; the direct sums where its radius misses the bound or its
    integers cannot be rounded; the routes recorded."""
    from s4cert.certs import forward_fft as ff
    assert ff.direct_cost(2, 1, 4, 256, 256) < ff.fft_cost(2, 1, 4, 256, 256)
    assert ff.direct_cost(2, 1, 256, 16384, 16384) > 10 * ff.fft_cost(2, 1, 256, 16384, 16384)
    assert ff.fft_size(400, 300) == 1024 and ff.fft_size(1, 1) == 1 and ff.fft_size(512, 1) == 512
    K, D, v = _stress("s4", np.random.default_rng(3))
    Kd, vd = Disks.exact(K), Disks.exact(v)
    ff.ROUTES.clear()
    d = ff.convolve(Kd, D, vd)
    assert ff.ROUTES[-1]["route"] == "direct" and ff.ROUTES[-1]["why"] == "cheaper"
    monkeypatch.setattr(ff, "DIRECT_PER_PAIR", 100.0)
    f = ff.convolve(Kd, D, vd)
    assert ff.ROUTES[-1]["route"] == "fft" and ff.ROUTES[-1]["relative_radius"] <= 1e-13
    assert np.array_equal(f.mid, ff.fft_conv(Kd, D, vd).mid)
    g = ff.convolve(Kd, D, vd, eps=1e-300)          # no FFT disk is that tight: the direct sums
    assert ff.ROUTES[-1]["route"] == "direct" and "missed" in ff.ROUTES[-1]["why"]
    assert np.array_equal(g.mid, d.mid) and np.array_equal(g.rad, d.rad)
    with pytest.raises(ff.Miss):                    # 2^40-bit integers: their sums cannot be rounded
        ff.fft_conv(Kd, D, vd, bits=40)
    monkeypatch.setattr(ff, "BITS", 40)
    monkeypatch.setattr(ff, "FEWER_BITS", 40)
    ff.convolve(Kd, D, vd)
    assert ff.ROUTES[-1]["route"] == "direct" and "could not be rounded" in ff.ROUTES[-1]["why"]
    with pytest.raises(ff.Miss):
        ff.convolve(Kd, D, vd, route="fft")
    with pytest.raises(ValueError, match="route must be"):
        ff.convolve(Kd, D, vd, route="fast")


def test_certify_forward_by_the_fft_contains_the_reference_outputs():
    """A fixture through the FFT route: its disks hold the reference's float64 SSM part (with
    the reference's own rounding allowance) and intersect the direct route's; the report says
    which route ran."""
    name = FIXTURES[0]
    z = outputs(name)
    reports = {c: certify_forward(checkpoint(name), z["u_conv"], time_last=True, part="ssm", convolution=c,
                                  **options_of(name)) for c in ("fft", "direct")}
    [block] = reports["fft"].plan.blocks
    n = f"{block.prefix}.ssm"
    f, d = reports["fft"].outputs[n], reports["direct"].outputs[n]
    assert np.all(np.abs(f.mid - d.mid) <= f.rad + d.rad)
    assert f.max_rad() <= reports["fft"].eps[n]
    routes = reports["fft"].document()["convolution"]
    assert routes and all(r["route"] == "fft" for r in routes)
    assert all(r["route"] == "direct" for r in reports["direct"].document()["convolution"])
    u = z["u_conv"].astype(np.float64)
    v = u if block.norm is None else np.swapaxes(layer_norm(Disks.exact(np.swapaxes(u, 1, 2)), *block.norm).mid, 1, 2)
    ref = time_last(z["ssm_conv_float64"], f.shape)
    assert np.all(np.abs(ref - f.mid) <= f.rad + ssm_allowance(reports["fft"], name, v))
    with pytest.raises(ValueError, match="convolution must be"):
        certify_forward(checkpoint(name), z["u_conv"], time_last=True, convolution="fast")
