"""``s4cert compare`` against a float64 kernel: a file certified on float64 disks has
radii within 100x of the float64 kernel's error, so the kernel is certified again from the
file's inputs on the next tighter route and the interval for max|float64 - K| becomes
sharp, absolute and relative to max|K|.

The float64 kernel is the numpy S4 kernel of benchmarks/kernel_vs_float64.py on a small
LegS model; every interval is checked to contain the true value, enclosed independently
by a ball run at about 1e-40 max|K|.
"""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from flint import acb, arb, ctx

from s4cert import certify_kernel
from s4cert.algorithms.models.hippo_float64 import dplr_float64
from s4cert.certs import compare
from s4cert.certs.compare import compare_with
from s4cert.certs.errors import CertificationError
from s4cert.certs.io.kernel_file import load_kernel, save_kernel

ROOT = Path(__file__).resolve().parents[2]
N, L, STEP = 8, 256, 0.01


def s4cert(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "s4cert", *args], capture_output=True, text=True,
                          cwd=tempfile.gettempdir(), timeout=120)


def _benchmark():
    spec = importlib.util.spec_from_file_location("kernel_vs_float64", ROOT / "benchmarks" / "kernel_vs_float64.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _problem():
    """(model, step, L, C~) of the LegS problem, C~ supplied as S4 learns it."""
    m = dplr_float64("legs", N)
    return m, STEP, L, list(np.array(m.C, dtype=complex))


@pytest.fixture(scope="module")
def legs(tmp_path_factory):
    """(kernel file certified on float64 disks at 1e-12 max|K|, the numpy float64 kernel's
    .npy, the true max|o - K| and max|K| as arb enclosures from a 1e-40 ball run)."""
    m, _, _, ct = _problem()
    arrays = [np.array(x, dtype=complex) for x in (m.Lambda, m.P, m.Q, m.B)]
    K64 = _benchmark().float64_kernel(*arrays, np.array(ct), STEP, L)
    scale = float(np.abs(K64).max())
    ck = certify_kernel(m, STEP, L, 1e-12 * scale, c_tilde=ct, counts=False, arithmetic="float64")
    d = tmp_path_factory.mktemp("tighten")
    path, other = d / "legs.json", d / "legs_f64.npy"
    save_kernel(str(path), ck, m, STEP, c_tilde=ct)
    np.save(other, K64)
    truth = certify_kernel(m, STEP, L, 1e-40 * scale, c_tilde=ct, counts=False, arithmetic="ball")
    with ctx.workprec(256):
        err = [abs(acb(complex(o).real, complex(o).imag) - b) for o, b in zip(K64, truth.balls)]
        mod = [abs(b) for b in truth.balls]
        E = arb(max(e.lower() for e in err)).union(max(e.upper() for e in err))
        K = arb(max(x.lower() for x in mod)).union(max(x.upper() for x in mod))
    return path, other, E, K


def _holds(bounds: tuple[float, float], x: arb) -> bool:
    """Every point of the enclosure x lies in [lo, hi]."""
    return bool(arb(bounds[0]) <= x.lower()) and bool(x.upper() <= arb(bounds[1]))


def _check_contains(rep, E: arb, K: arb) -> None:
    assert _holds(rep.abs_error_bounds, E)
    assert _holds(rep.kernel_max_bounds, K)
    with ctx.workprec(256):
        assert _holds(rep.rel_error_bounds, E / K)


def test_a_float64_kernel_gets_a_sharp_certified_interval(legs):
    path, other, E, K = legs
    before = Path(path).read_bytes()
    rep = compare_with(path, other)
    t = rep.tightened
    assert t["from"]["arithmetic"] == "float64 midpoint-radius"
    assert t["from"]["max_radius"] * 100 > t["error"] > 0          # within 100x: too wide
    assert t["to"]["eps"] == pytest.approx(t["error"] / 1000)
    assert t["to"]["arithmetic"] != t["from"]["arithmetic"] and t["to"]["max_radius"] <= t["to"]["eps"]
    _check_contains(rep, E, K)
    lo, hi = rep.abs_error_bounds
    assert 0 < lo <= hi < 1e-13 * rep.kernel_max_bounds[0]
    assert hi - lo <= 0.1 * hi
    rlo, rhi = rep.rel_error_bounds
    assert 0 < rlo <= rhi < 1e-13 and rhi - rlo <= 0.1 * rhi
    assert Path(path).read_bytes() == before                     # the user's file is not rewritten


def test_the_file_alone_is_too_wide_to_say_anything_sharp(legs):
    path, other, E, K = legs
    rep = compare_with(path, other, tighten=False)
    assert rep.tightened is None
    _check_contains(rep, E, K)
    lo, hi = rep.abs_error_bounds
    assert hi - lo > 0.1 * hi


def test_an_error_far_above_the_radius_is_not_tightened(legs, tmp_path):
    path, other, E, K = legs
    np.save(tmp_path / "f32.npy", np.load(other).astype(np.complex64))
    rep = compare_with(path, tmp_path / "f32.npy")
    assert rep.tightened is None and rep.abs_error_bounds[0] > 1e-10


def test_a_failed_certification_keeps_the_file_bounds(legs, monkeypatch):
    path, other, E, K = legs

    def refuse(kf, eps, **options):
        raise CertificationError("precision limit reached")
    monkeypatch.setattr(compare, "certify_kernel_again", refuse)
    rep = compare_with(path, other)
    assert rep.tightened["reason"] == "precision limit reached" and "to" not in rep.tightened
    assert rep.abs_error_bounds == compare_with(path, other, tighten=False).abs_error_bounds
    assert "not certified again" in compare.tightened_text(rep.tightened)


def test_the_midpoints_themselves_are_certified_again_at_a_smaller_radius(legs, tmp_path):
    """The file's own float64 midpoints as the other kernel: the estimate is 0, so the
    radius is the only bound; the kernel is certified again at radius / 1000."""
    path, other, E, K = legs
    mid, _ = load_kernel(path).to_numpy()
    np.save(tmp_path / "mid.npy", mid)
    m, step, length, ct = _problem()
    truth = certify_kernel(m, step, length, 1e-41, c_tilde=ct, counts=False, arithmetic="ball")
    with ctx.workprec(256):
        err = [abs(acb(complex(o).real, complex(o).imag) - b) for o, b in zip(mid, truth.balls)]
        E0 = arb(max(e.lower() for e in err)).union(max(e.upper() for e in err))
    rep = compare_with(path, tmp_path / "mid.npy")
    t = rep.tightened
    assert t["error"] == 0 and t["to"]["eps"] == pytest.approx(t["from"]["max_radius"] / 1000)
    assert "is the certified midpoints" in compare.tightened_text(t)
    _check_contains(rep, E0, K)
    lo, hi = rep.abs_error_bounds
    assert 0 < lo and hi - lo <= 0.1 * hi


def test_the_command_says_it_certified_again(legs):
    path, other, E, K = legs
    p = s4cert("compare", str(path), str(other), "--json")
    assert p.returncode == 0, p.stderr
    assert "certified again" in p.stderr and "double-double" in p.stderr
    r = json.loads(p.stdout)
    lo, hi = r["abs_error_bounds"]
    assert r["tightened"]["from"]["arithmetic"] == "float64 midpoint-radius"
    assert hi < 1e-13 * r["kernel_max_bounds"][0] and hi - lo <= 0.1 * hi
    p = s4cert("compare", str(path), str(other), "--no-tighten")
    assert p.returncode == 0 and p.stderr == "" and "relative to max|K|" in p.stdout
