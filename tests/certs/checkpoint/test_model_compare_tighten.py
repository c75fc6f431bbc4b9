"""``s4cert model --compare`` against the reference's own float64 kernels: the kernels
whose radius is within 100x of the float64 error are certified again on a tighter route,
and the certified interval for max|float64 - K| is sharp, absolute and relative to
max|K|.  Every interval is checked to contain the true value, enclosed independently by
ball runs (``certify_kernel(arithmetic="ball")`` at about 1e-40 max|K|) of the same
models."""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from flint import acb, arb, ctx

from s4cert import certify_kernel
from s4cert.certs.checkpoint.layouts import find_kernel_modules, resolve_settings
from s4cert.certs.checkpoint.model import certify_model
from s4cert.certs.checkpoint.reader import read_checkpoint
from s4cert.certs.checkpoint.semantics import dplr_module

DATA = Path(__file__).resolve().parents[2] / "data" / "s4-checkpoints"
NAME = "a01_s4block_nplr_legs_nssm1"
OPTIONS = {"dt_transform": "exp", "real_transform": "exp", "imag_transform": "none"}  # the fixture's .json


def s4cert(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "s4cert", *args], capture_output=True, text=True,
                          cwd=tempfile.gettempdir(), timeout=120)


@pytest.fixture(scope="module")
def truth():
    """(the float64 kernels, enclosures of max|float64 - K| and of max|K|) from ball runs."""
    meta = json.loads((DATA / f"{NAME}.json").read_text())
    assert all(meta["kernel"]["effective_attributes"][k] == v for k, v in OPTIONS.items())
    with np.load(DATA / f"{NAME}.kernels.npz") as z:
        ref, L = z["float64"], int(z["L"])
    ck = read_checkpoint(DATA / f"{NAME}.pt")
    [mod] = find_kernel_modules(ck.tensors)
    resolve_settings(mod, OPTIONS, ck.hyper_parameters)
    dm = dplr_module(mod, 256)
    assert dm.l_kernel == L == 256                       # the stored C is C~ for L points
    balls = np.empty((dm.channels, dm.H, L), dtype=object)
    for c in range(dm.channels):
        for h in range(dm.H):
            model = dm.models[c][h]
            k = certify_kernel(model, 1, L, 1e-40, c_tilde=model.C, counts=False, arithmetic="ball")
            balls[c, h] = [b.real for b in k.balls]      # the module's kernel is the real part
    return ref, L, _max_enclosure(ref, balls), _max_enclosure(np.zeros_like(ref), balls), balls


def _max_enclosure(other: np.ndarray, balls: np.ndarray) -> arb:
    """An enclosure of max |other - K| from enclosures of every K."""
    with ctx.workprec(256):
        err = [abs(arb(float(o)) - b) for o, b in zip(other.reshape(-1), balls.reshape(-1))]
        return arb(max(e.lower() for e in err)).union(max(e.upper() for e in err))


def _holds(bounds, x: arb) -> bool:
    return bool(arb(bounds[0]) <= x.lower()) and bool(x.upper() <= arb(bounds[1]))


def _check(entry: dict, E: arb, K: arb) -> None:
    assert _holds(entry["max_error"], E) and _holds(entry["max_abs_K"], K)
    with ctx.workprec(256):
        assert _holds(entry["relative"], E / K)


def test_the_float64_kernels_get_a_sharp_certified_interval(truth, tmp_path):
    ref, L, E, K, _ = truth
    out = tmp_path / "r.json"
    p = s4cert("model", str(DATA / f"{NAME}.pt"), "--compare", str(DATA / f"{NAME}.kernels.npz"),
               "--key", "float64", "--out", str(out), "--quiet")
    assert p.returncode == 0, p.stderr
    assert "certified again" in p.stderr and "relative to max|K| in [" in p.stdout
    [entry] = json.loads(out.read_text())["kernels"]
    c = entry["compare"]
    _check(c, E, K)
    lo, hi = c["max_error"]
    assert 0 < lo <= hi < 1e-13 * c["max_abs_K"][0]
    assert hi - lo <= 0.1 * hi
    t = c["tightened"]
    assert t["from"]["max_radius"] * 100 > t["error"] and t["to"]["eps"] == pytest.approx(t["error"] / 1000)


def test_only_the_kernels_too_wide_are_certified_again(truth):
    ref, L, E, K, _ = truth
    plain = certify_model(DATA / f"{NAME}.pt", compare=ref, tighten=False, **OPTIONS).kernels[0]
    assert "tightened" not in plain.info["compare"]
    _check(plain.info["compare"], E, K)
    lo, hi = plain.info["compare"]["max_error"]
    assert hi - lo > 0.1 * hi                            # the disks alone say little about float64
    k = certify_model(DATA / f"{NAME}.pt", compare=ref, **OPTIONS).kernels[0]
    t = k.info["compare"]["tightened"]
    error = float(np.max(np.abs(ref - plain.mid)))
    wide = sorted({int(h) for h in np.nonzero(np.max(plain.rad, axis=2) * 100 > error)[1]})
    assert t["error"] == error and t["to"]["heads"] == wide
    np.testing.assert_array_equal(k.mid, plain.mid)      # the reported kernels stay as certified
    _check(k.info["compare"], E, K)


def test_the_midpoints_themselves_are_certified_again(truth):
    """The module's own float64 midpoints as the other kernels: the estimate is 0, the
    radius the only bound, so every head is certified again at radius / 1000."""
    ref, L, E, K, balls = truth
    plain = certify_model(DATA / f"{NAME}.pt", compare=ref, tighten=False, **OPTIONS).kernels[0]
    k = certify_model(DATA / f"{NAME}.pt", compare=plain.mid, **OPTIONS).kernels[0]
    _check(k.info["compare"], _max_enclosure(plain.mid, balls), K)
    t = k.info["compare"]["tightened"]
    assert t["error"] == 0 and t["to"]["heads"] == list(range(plain.H))
    assert t["to"]["eps"] == pytest.approx(float(plain.rad.max()) / 1000)
    lo, hi = k.info["compare"]["max_error"]
    assert hi < float(plain.rad.max()) / 10             # the float64 radius is some 60-80 times the real error


def test_no_tighten_goes_with_compare():
    p = s4cert("model", str(DATA / f"{NAME}.pt"), "--no-tighten")
    assert p.returncode == 2 and "--no-tighten goes with --compare" in p.stderr


def test_a_non_finite_other_kernel_is_refused(truth):
    ref = truth[0].copy()
    ref[0, 1, 7] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        certify_model(DATA / f"{NAME}.pt", compare=ref, **OPTIONS)
