"""The audit accepts what s4cert writes and rejects (or names as not verified) every
stored claim it cannot confirm; compare and save_kernel refuse what does not belong."""
from __future__ import annotations

import json

import numpy as np
import pytest

from s4cert.algorithms.models.hippo_dplr import dplr as hippo_dplr
from s4cert.algorithms.s4.dplr import DPLR
from s4cert.certs.audit.report import audit_kernel_file
from s4cert.certs.compare import compare_with
from s4cert.certs.io.kernel_file import file_digest, save_kernel
from s4cert.certs.kernel import certify_kernel

MODEL = DPLR([-1.0, -2.0 + 1j, -0.5 - 3j], [0.5, 0.25j, 1], [1, 2, 1j], [1, -1, 3])
STEP = 0.5


@pytest.fixture(scope="module")
def ball_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("claims") / "k.json"
    save_kernel(path, certify_kernel(MODEL, STEP, 16, 1e-12), MODEL, STEP)
    return path


@pytest.mark.parametrize("measure", ["legs", "legt"])
def test_fresh_hippo_file_passes(tmp_path, measure):
    """A HiPPO model holds balls: the dense powers of Abar widen their radii like the
    entrywise |Abar|^j (no precision helps), so the kernel check must take the filter."""
    model, step = hippo_dplr(measure, 16, theta=1 if measure == "legt" else None), 1 / 256
    path = tmp_path / "h.json"
    save_kernel(path, certify_kernel(model, step, 256, 1e-12), model, step)
    rep = audit_kernel_file(path)
    assert rep.ok, rep.summary()


def _redigested(src, dst, edit):
    doc = json.loads(src.read_text())
    edit(doc)
    doc["sha256"] = file_digest(doc)
    dst.write_text(json.dumps(doc))
    return dst


ALTERED = {
    "max_radius": (lambda d: d["certificate"].__setitem__("max_radius", 1e-30), "max_radius"),
    "ops x1000": (lambda d: d["counts"].__setitem__("ops", d["counts"]["ops"] * 1000), "counts"),
    "peak_words": (lambda d: d["counts"].__setitem__("peak_words", 1), "counts"),
    "M": (lambda d: d["problem"].__setitem__("M", 3), "problem"),
    "c_tilde_supplied": (lambda d: d["problem"].__setitem__("c_tilde_supplied", True), "problem"),
    "exact_inputs": (lambda d: d["problem"].__setitem__("exact_inputs", False), "problem"),
}


@pytest.mark.parametrize("what", sorted(ALTERED))
def test_altered_claim_with_recomputed_digest_fails(ball_file, tmp_path, what):
    edit, check = ALTERED[what]
    rep = audit_kernel_file(_redigested(ball_file, tmp_path / "t.json", edit))
    assert not rep.ok and rep.failed() == [check], rep.summary()


def test_fresh_file_verifies_its_counts_and_names_the_rest(ball_file):
    rep = audit_kernel_file(ball_file)
    assert rep.ok, rep.summary()
    details = {n: d for n, _, d in rep.checks}
    assert "measured again" in details["counts"]
    assert "seconds" in details["not verified"] and ("certificate", details["not verified"][13:]) in rep.unverified


def test_counts_not_measured_are_named_not_verified(tmp_path):
    path = tmp_path / "k.json"
    save_kernel(path, certify_kernel(MODEL, STEP, 16, 1e-12, counts=False), MODEL, STEP)
    rep = audit_kernel_file(path)
    assert rep.ok and "counts" not in {n for n, _, _ in rep.checks}
    assert any(name == "counts" for name, _ in rep.unverified)


def test_counts_on_the_arcs_are_measured_again(tmp_path):
    model = hippo_dplr("legs", 8)
    path = tmp_path / "k.json"
    save_kernel(path, certify_kernel(model, 1 / 64, 64, 1e-12, arithmetic="ball", cauchy="fast"), model, 1 / 64)
    rep = audit_kernel_file(path)
    assert rep.ok and "measured again" in {n: d for n, _, d in rep.checks}["counts"], rep.summary()


def test_compare_refuses_a_stale_digest(ball_file, tmp_path):
    doc = json.loads(ball_file.read_text())
    doc["kernel"]["rad"] = ["1/1000"] * 16
    path = tmp_path / "stale.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="digest"):
        compare_with(path, np.zeros(16, dtype=complex))


@pytest.mark.parametrize("other", ["model", "step", "c_tilde"])
def test_save_kernel_refuses_another_problem_of_the_same_size(tmp_path, other):
    ck = certify_kernel(MODEL, STEP, 16, 1e-12)
    model, step = MODEL, STEP
    if other == "model":
        model = DPLR([-1.0, -2.0 + 1j, -0.5 - 2j], [0.5, 0.25j, 1], [1, 2, 1j], [1, -1, 3])
    elif other == "step":
        step = 0.25
    ct = [1, 2, 3]
    if other == "c_tilde":
        ck = certify_kernel(MODEL, STEP, 16, 1e-12, c_tilde=ct)
        ct = [1, 2, 4]
    with pytest.raises(ValueError, match="another model"):
        save_kernel(tmp_path / "k.json", ck, model, step, c_tilde=ct if other == "c_tilde" else None)
    assert not (tmp_path / "k.json").exists()
