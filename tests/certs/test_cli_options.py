"""One vocabulary of options (certs/cli_options.py, certs/relative_eps.py): one max_prec
default, --eps read exactly with --relative, --json, --arithmetic and --max-prec on the
commands that certify; s4cert forward's --eps and --convolution; the root modules
s4cert.examples and s4cert.hippo; ModelReport's attributes; reasons worded at the source;
a checkpoint's description given as a checkpoint."""
from __future__ import annotations

import inspect
import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import s4cert
from s4cert import CertificationError, certify_kernel, certify_model
from s4cert.certs.cli_options import float_below
from s4cert.certs.examples import example_model
from s4cert.certs.kernel import DEFAULT_MAX_PREC
from s4cert.certs.relative_eps import max_abs_lower

from .cli_run import one_line_error, s4cert as run

DATA = Path(__file__).resolve().parents[1] / "data" / "s4-checkpoints"
A05 = DATA / "a05_s4d_minimal.pt"
A01 = DATA / "a01_s4block_nplr_legs_nssm1"


# -- one max_prec default ---------------------------------------------------------------

def test_one_max_prec_default_for_both_apis_and_every_command():
    for f in (certify_kernel, certify_model):
        assert inspect.signature(f).parameters["max_prec"].default == DEFAULT_MAX_PREC
    for command in ("kernel", "model"):
        p = run(command, "--help")
        assert p.returncode == 0 and f"(default {DEFAULT_MAX_PREC})" in " ".join(p.stdout.split()), p.stdout


def test_every_arithmetic_and_cauchy_choice_is_explained_in_help():
    text = " ".join(run("kernel", "--help").stdout.split())
    for choice in ("auto:", "ball:", "float64:", "double-double:", "triple-double:", "tree (", "direct (",
                   "fast ("):
        assert choice in text, choice
    model = " ".join(run("model", "--help").stdout.split())
    assert "auto:" in model and "ball: balls only" in model and "--relative" in model and "--json" in model


# -- the certified scale of a relative eps ----------------------------------------------

@given(st.lists(st.tuples(st.floats(-1e6, 1e6), st.floats(-1e6, 1e6), st.floats(0, 1e6)), min_size=1,
                max_size=8))
def test_max_abs_lower_is_below_every_modulus_the_disks_allow(entries):
    mid = np.array([complex(a, b) for a, b, _ in entries])
    rad = np.array([r for _, _, r in entries])
    lower = max_abs_lower(mid, rad)
    assert lower >= 0
    if lower > 0:  # some disk lies outside the circle of radius lower: (lower + r)^2 <= |mid|^2, exactly
        assert any((lower + Fraction(r)) ** 2 <= Fraction(a) ** 2 + Fraction(b) ** 2 for a, b, r in entries)


def test_float_below_never_rounds_up_and_refuses_outside_the_range():
    for q in (Fraction(1, 10**13), Fraction(1, 3), Fraction(10**300 + 1)):
        assert Fraction(float_below(q)) <= q
    for q in (Fraction(1, 10**400), Fraction(10**400)):
        with pytest.raises(ValueError, match="float64 range"):
            float_below(q)


def test_kernel_relative_eps_is_eps_times_a_certified_lower_bound_of_max_K(tmp_path):
    out = tmp_path / "k.npz"
    p = run("kernel", "-N", "8", "-L", "64", "--eps", "1e-20", "--relative", "--out", str(out), "--quiet")
    assert p.returncode == 0, p.stderr[-2000:]
    kf = s4cert.load_kernel(out)
    eps = Fraction(kf.eps)
    # an independent certification at 1e-30 bounds max|K| from both sides
    truth = certify_kernel(example_model(8), 0.01, 64, 1e-30, arithmetic="ball", counts=False)
    upper = Fraction(float(np.max(np.abs(truth.mid)))) + Fraction(float(truth.rad.max())) * 2
    lower = max_abs_lower(truth.mid, truth.rad)
    assert eps <= Fraction(1, 10**20) * upper          # never above 1e-20 max|K|
    assert eps >= Fraction(1, 10**20) * lower * Fraction(999, 1000)  # and not needlessly small
    assert Fraction(kf.max_radius()) <= eps


def test_relative_without_eps_and_with_certificate_only_are_usage_mistakes():
    assert "--relative needs --eps" in one_line_error(run("model", str(A05), "--relative"))
    assert "--relative" in one_line_error(run("kernel", "--eps", "1e-12", "--relative", "--certificate-only"))


def test_model_relative_and_json(tmp_path):
    base, rel = tmp_path / "base.npz", tmp_path / "rel.npz"
    assert run("model", str(A05), "-L", "16", "--kernels", str(base), "--quiet").returncode == 0
    p = run("model", str(A05), "-L", "16", "--eps", "1e-25", "--relative", "--json", "--kernels", str(rel),
            "--quiet")
    assert p.returncode == 0, p.stderr[-2000:]
    doc = json.loads(p.stdout)
    assert doc["format"] == "s4cert.model-report/1" and doc["options"]["relative_eps"] == "1e-25"
    b, r = np.load(base), np.load(rel)
    name = [k for k in r.files if k.endswith(".rad")][0]
    mid0, rad0 = b[name.replace(".rad", ".mid")], b[name]
    rad = r[name.replace(".rad", ".rad_exact")] if name.replace(".rad", ".rad_exact") in r.files else r[name]
    certified = 0
    for c in range(mid0.shape[0]):
        for h in range(mid0.shape[1]):
            scale = max_abs_lower(mid0[c, h], rad0[c, h])  # from the other run: a lower bound of max|K|
            assert max(Fraction(str(x)) for x in rad[c, h]) <= Fraction(1, 10**25) * scale
            certified += 1
    assert certified == mid0.shape[0] * mid0.shape[1] == 3
    assert doc["kernels"][0]["status"] == "ok"


# -- s4cert forward ----------------------------------------------------------------------

def _forward(*extra: str) -> "object":
    return run("forward", f"{A01}.pt", "--input", f"{A01}.outputs.npz", "--key", "u_conv", "--quiet", *extra,
               timeout=300)


def test_forward_reads_eps_exactly_and_names_the_float64_range():
    line = one_line_error(_forward("--eps", "1e-400"))
    assert "--eps 1e-400" in line and "float64 range" in line


def test_forward_convolution_option_and_json():
    p = _forward("--convolution", "direct", "--json")
    assert p.returncode == 0, p.stderr[-2000:]
    doc = json.loads(p.stdout)
    assert doc["convolution"] and all(r["route"] == "direct" for r in doc["convolution"])
    bad = one_line_error(_forward("--convolution", "slow"))
    assert "--convolution" in bad


def test_forward_relative_eps_is_below_eps_times_max_y(tmp_path):
    out = tmp_path / "y.npz"
    p = _forward("--eps", "1e-11", "--relative", "--outputs", str(out))
    assert p.returncode == 0, p.stderr[-2000:]
    y = np.load(out)
    for name in ("output", "layer.kernel.ssm"):
        mid, rad = y[f"{name}.mid"], y[f"{name}.rad"]
        assert Fraction(float(rad.max())) <= Fraction(1, 10**11) * max_abs_lower(mid, rad) * 2


# -- the Python API ----------------------------------------------------------------------

def test_root_modules_examples_and_hippo():
    from s4cert import examples, hippo
    assert s4cert.examples is examples and s4cert.hippo is hippo
    assert examples.example_model(4).N == 4
    m = hippo.legt(3, theta=2)
    ref = hippo.dplr("legt", 3, theta=2)
    assert [str(a) for a in m.Lambda] == [str(a) for a in ref.Lambda]
    assert hippo.legs(3).N == hippo.lagt(3).N == hippo.dplr_float64("legs", 3).N == 3
    assert certify_kernel(hippo.legs(4), 0.01, 8, 1e-12, counts=False).status == "ok"


def test_model_report_attributes_and_compare_object():
    rep = certify_model(A05, L=128, compare=DATA / "a05_s4d_minimal.kernels.npz", key="float64")
    assert isinstance(rep.document, dict) and rep.document["format"] == "s4cert.model-report/1"
    assert set(rep.kernel_arrays) >= {f"{rep.kernels[0].prefix or 'kernel'}.mid"}
    (prefix, c), = rep.compare.items()
    assert prefix == rep.kernels[0].prefix
    assert c.max_error[0] <= c.error <= c.max_error[1] and c.relative[0] <= c.relative[1]
    assert c.max_abs_K[0] > 0 and c.key == "float64"


# -- reasons worded at the source ---------------------------------------------------------

def test_reasons_name_the_argument_and_the_option_at_the_source():
    with pytest.raises(CertificationError) as e:
        certify_kernel(example_model(4), 0.01, 8, Fraction(1, 10**300), max_prec=128, arithmetic="ball",
                       counts=False)
    assert "raise max_prec (--max-prec)" in str(e.value)
    ck = certify_kernel(example_model(2), 0.01, 4095, 1e-6)
    assert "counts=True (--counts) measures them" in ck.counts["reason"]


# -- a checkpoint's description given as a checkpoint ------------------------------------

@pytest.mark.parametrize("name", ["a01_s4block_nplr_legs_nssm1.json", "a01_s4block_nplr_legs_nssm1.outputs.json"])
def test_model_names_a_checkpoint_description_and_its_checkpoint(name):
    line = one_line_error(run("model", str(DATA / name)))
    assert "not a checkpoint" in line and "description" in line and "a01_s4block_nplr_legs_nssm1.pt" in line


def test_a_json_checkpoint_of_arrays_is_still_read(tmp_path):
    f = tmp_path / "arrays.json"
    f.write_text(json.dumps({"w": [[1.0, 2.0]]}))
    line = one_line_error(run("model", str(f)))
    assert "description" not in line


# -- the human summary ---------------------------------------------------------------------

def test_summaries_fit_100_columns_and_label_their_figures(tmp_path):
    k = run("kernel", "--quiet")
    rel = run("kernel", "-N", "4", "-L", "16", "--eps", "1e-13", "--relative", "--mode", "a-priori", "--quiet")
    model = run("model", f"{A01}.pt", "--compare", f"{A01}.kernels.npz", "--key", "float32", "--quiet")
    out = tmp_path / "k.json"
    assert run("kernel", "-L", "64", "--out", str(out), "--quiet").returncode == 0
    np.save(tmp_path / "o.npy", s4cert.load_kernel(out).to_numpy()[0] + 1e-9)
    comp = run("compare", str(out), str(tmp_path / "o.npy"), "--no-tighten")
    for p in (k, rel, model, comp):
        assert p.returncode == 0, p.stderr[-2000:]
        assert max(len(line) for line in p.stdout.splitlines()) <= 100, p.stdout
    assert "filter constants (see docs): b " in k.stdout and "certified radius: max radius" in k.stdout
    assert "constants: b=" not in k.stdout and "arithmetic: float64 midpoint-radius" in k.stdout
    assert rel.stdout.splitlines()[0].endswith("eps=1e-13 x max|K|") and "absolute" in rel.stdout
    assert "certified max radius" in model.stdout and "max |other - K| in [" in model.stdout


def test_compare_passes_max_prec_to_the_tightening_run(tmp_path, monkeypatch):
    from s4cert.certs import compare
    out = tmp_path / "k.json"
    assert run("kernel", "-L", "64", "--out", str(out), "--quiet").returncode == 0
    mid = s4cert.load_kernel(out).to_numpy()[0]
    seen = []

    def again(kf, eps, max_prec=DEFAULT_MAX_PREC):
        seen.append(max_prec)
        raise CertificationError("stop")
    monkeypatch.setattr(compare, "certify_kernel_again", again)
    rep = compare.compare_with(out, mid, max_prec=321)   # the midpoints themselves: the radius bounds the error
    assert seen == [321] and rep.tightened["reason"] == "stop"
    assert "--max-prec" in " ".join(run("compare", "--help").stdout.split())
