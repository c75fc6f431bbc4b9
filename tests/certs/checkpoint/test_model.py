"""Certified kernels of real S4-family checkpoints against the reference's own kernels.

Each fixture in tests/data/s4-checkpoints was written by PyTorch from the reference
implementation, with the kernels that the reference computes from it in float32 and
float64.  The certified disks must contain the reference's float64 kernel up to the
reference's own float64 rounding (1e-12 max|K|; DSS, which the reference returns in
float32, 1e-5 max|K|), and the certified interval for max|float32 - K| must contain
max|float32 - float64| within the same allowance.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from s4cert.certs.checkpoint.layouts import find_kernel_modules
from s4cert.certs.checkpoint.model import certify_model

DATA = Path(__file__).resolve().parents[2] / "data" / "s4-checkpoints"
FIXTURES = sorted(p.name[:-len(".json")] for p in DATA.glob("a*.json") if not p.name.endswith(".outputs.json"))
OPTIONS = ("dt_transform", "real_transform", "imag_transform", "disc")


def fixture(name: str) -> tuple[dict, dict]:
    meta = json.loads((DATA / f"{name}.json").read_text())
    with np.load(DATA / f"{name}.kernels.npz") as z:
        ref = {k: z[k] for k in z.files}
    return meta, ref


def options_of(meta: dict) -> dict:
    """The settings the fixture says were used, as certify_model options."""
    eff = meta["kernel"].get("effective_attributes", {})
    opts = {k: eff.get(k) for k in OPTIONS if isinstance(eff.get(k), str)}
    if meta["kernel"]["class_name"] != "SSMKernelDiag":
        opts.pop("disc", None)
    return opts


def allowance(ref64: np.ndarray, disc: str) -> float:
    return (1e-5 if disc == "dss" else 1e-12) * float(np.max(np.abs(ref64)))


def test_every_fixture_is_here():
    assert len(FIXTURES) == 10


@pytest.mark.parametrize("name", FIXTURES)
def test_certified_disks_contain_the_reference_float64_kernel(name):
    meta, ref = fixture(name)
    L = int(ref["L"])
    report = certify_model(DATA / f"{name}.pt", L=L, compare=ref["float32"], **options_of(meta))
    assert report.ok and len(report.kernels) == 1
    k = report.kernels[0]
    assert k.mid.shape == ref["float64"].shape == k.rad.shape
    assert k.max_rad <= k.eps
    allow = allowance(ref["float64"], k.disc)
    assert np.all(np.abs(ref["float64"] - k.mid) <= k.rad + allow)
    # the certified interval for max |float32 - K| holds the reference's own difference
    lo, hi = k.info["compare"]["max_error"]
    seen = float(np.max(np.abs(ref["float32"].astype(np.float64) - ref["float64"])))
    assert lo - allow <= seen <= hi + allow
    assert hi - lo <= 2 * k.max_rad + 1e-9 * hi


def test_the_disks_are_not_wide_enough_to_pass_a_wrong_kernel():
    meta, ref = fixture("a03_fftconv_diag_zoh_lin")
    wrong = certify_model(DATA / "a03_fftconv_diag_zoh_lin.pt", L=512, disc="bilinear").kernels[0]
    allow = allowance(ref["float64"], "zoh")
    assert not np.all(np.abs(ref["float64"] - wrong.mid) <= wrong.rad + allow)


def test_a_lightning_checkpoint_records_its_settings():
    meta, ref = fixture("a07_seqmodel_nplr_lightning")
    report = certify_model(DATA / "a07_seqmodel_nplr_lightning.ckpt")  # no options, no L
    k = report.kernels[0]
    assert k.prefix == "model.layers.0.layer.layer.kernel"
    assert k.settings["dt_transform"] == "softplus" and "dt_transform" not in k.assumed
    assert k.L == 256
    assert np.all(np.abs(ref["float64"] - k.mid) <= k.rad + allowance(ref["float64"], "bilinear"))


def test_settings_not_in_the_file_are_listed_as_assumed():
    report = certify_model(DATA / "a03_fftconv_diag_zoh_lin.pt", L=64)
    assert report.kernels[0].assumed == {"dt_transform": "exp", "real_transform": "exp",
                                         "imag_transform": "none", "disc": "zoh"}


def test_an_option_that_contradicts_the_checkpoint_is_refused():
    with pytest.raises(ValueError, match="--dt-transform exp contradicts the checkpoint"):
        certify_model(DATA / "a07_seqmodel_nplr_lightning.ckpt", dt_transform="exp")


def test_a_diagonal_kernel_without_a_recorded_length_needs_L():
    with pytest.raises(ValueError, match="give -L"):
        certify_model(DATA / "a03_fftconv_diag_zoh_lin.pt")


def test_a_dplr_module_is_always_bilinear():
    with pytest.raises(ValueError, match="always bilinear"):
        certify_model(DATA / "a01_s4block_nplr_legs_nssm1.pt", disc="zoh")


def test_the_kernel_at_a_shorter_length_is_a_prefix(tmp_path):
    # DPLR: K_j does not depend on L (C~ is turned back into C)
    full = certify_model(DATA / "a08_fftconv_nplr_lmaxnone_doubled.pt", L=150).kernels[0]
    short = certify_model(DATA / "a08_fftconv_nplr_lmaxnone_doubled.pt", L=37).kernels[0]
    lo = np.maximum(full.mid[..., :37] - full.rad[..., :37], short.mid - short.rad)
    hi = np.minimum(full.mid[..., :37] + full.rad[..., :37], short.mid + short.rad)
    assert np.all(lo <= hi)


def v3_state_dict(name: str) -> dict:
    """A V4 DPLR state dict written back under the V3 names (the V3 -> V4 conversion inverted)."""
    from s4cert.certs.checkpoint.reader import read_checkpoint

    sd = read_checkpoint(DATA / f"{name}.pt").tensors
    out = {}
    for key, v in sd.items():
        prefix, _, local = key.rpartition(".")
        if not prefix.endswith("kernel"):
            out[key] = v
            continue
        new = {"inv_dt": "log_dt", "A_real": "inv_w_real", "A_imag": "w_imag", "l_kernel": "L"}.get(local, local)
        if local == "inv_dt":
            v = v[:, 0]
        if local == "A_imag":
            v = -v
        out[f"{prefix}.kernel.{new}"] = v
    return out


def test_v3_names_give_the_same_kernels(tmp_path):
    sd = v3_state_dict("a01_s4block_nplr_legs_nssm1")
    np.savez(tmp_path / "v3.npz", **sd)
    [mod] = find_kernel_modules(sd)
    assert mod.layout == "s4-v3-dplr" and mod.prefix == "layer.kernel.kernel"
    v3 = certify_model(tmp_path / "v3.npz").kernels[0]
    v4 = certify_model(DATA / "a01_s4block_nplr_legs_nssm1.pt").kernels[0]
    assert np.all(np.abs(v3.mid - v4.mid) <= v3.rad + v4.rad)


def test_an_unknown_layout_is_refused(tmp_path):
    np.savez(tmp_path / "x.npz", weight=np.zeros((3, 3)), bias=np.zeros(3))
    with pytest.raises(ValueError, match="no S4-family kernel module"):
        certify_model(tmp_path / "x.npz", L=8)


def test_workers_give_the_same_result(tmp_path):
    one = certify_model(DATA / "a06_fftconv_s4_channels2_nssm2.pt")
    two = certify_model(DATA / "a06_fftconv_s4_channels2_nssm2.pt", workers=2)
    assert np.array_equal(one.kernels[0].mid, two.kernels[0].mid)
    assert np.array_equal(one.kernels[0].rad, two.kernels[0].rad)


def test_v3_diagonal_names_give_the_v4_kernels(tmp_path):
    """A V3 diagonal module (A = -exp(inv_A_real) + i A_imag, bilinear by default) written from
    the V4 diagonal fixture: the same kernels as the V4 module with --disc bilinear."""
    from s4cert.certs.checkpoint.reader import read_checkpoint

    sd = read_checkpoint(DATA / "a03_fftconv_diag_zoh_lin.pt").tensors
    v3 = {"kernel.kernel.log_dt": sd["kernel.inv_dt"][:, 0], "kernel.kernel.inv_A_real": sd["kernel.A_real"],
          "kernel.kernel.A_imag": -sd["kernel.A_imag"], "kernel.kernel.B": sd["kernel.B"],
          "kernel.kernel.C": sd["kernel.C"]}
    np.savez(tmp_path / "v3.npz", **v3)
    [mod] = find_kernel_modules(v3)
    assert mod.layout == "s4-v3-diag"
    a = certify_model(tmp_path / "v3.npz", L=64).kernels[0]
    b = certify_model(DATA / "a03_fftconv_diag_zoh_lin.pt", L=64, disc="bilinear").kernels[0]
    assert a.disc == "bilinear" and np.all(np.abs(a.mid - b.mid) <= a.rad + b.rad)
