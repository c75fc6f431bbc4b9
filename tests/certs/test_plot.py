"""``s4cert plot``: a picture of a kernel file and of another kernel's certified errors;
without matplotlib, exit 2 naming the extra."""
from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

from tests.certs.cli_run import one_line_error, s4cert


@pytest.fixture(scope="module")
def kernel_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("plot")
    out, npz = d / "k.json", d / "k.npz"
    assert s4cert("kernel", "-N", "4", "-L", "32", "--out", str(out), "--npz", str(npz), "--quiet").returncode == 0
    with np.load(npz) as z:
        np.save(d / "f32.npy", z["mid"].astype(np.complex64))
    return d, out, d / "f32.npy"


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="matplotlib is not installed")
def test_plot_kernel_and_comparison(kernel_files):
    d, out, other = kernel_files
    fig = d / "k.png"
    p = s4cert("plot", str(out), "--compare", str(other), "-o", str(fig))
    assert p.returncode == 0, p.stderr
    assert fig.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and fig.stat().st_size > 10_000
    assert "max abs error" in p.stdout
    p = s4cert("plot", str(out), "-o", str(d / "k.svg"))
    assert p.returncode == 0 and (d / "k.svg").read_text().lstrip().startswith("<?xml")


def test_tap_errors_are_certified(kernel_files):
    from s4cert.certs.io.kernel_file import load_kernel
    from s4cert.certs.plot import tap_errors
    _, out, other = kernel_files
    kf = load_kernel(out)
    o = np.load(other)
    lo, hi = tap_errors(kf, o)
    mid, rad = kf.to_numpy()
    est = np.abs(o.astype(np.complex128) - mid)
    assert np.all(lo <= est + rad) and np.all(est - rad <= hi) and np.all(lo <= hi) and np.all(hi > 0)


def test_without_matplotlib_exit_2_naming_the_extra(kernel_files, tmp_path):
    d, out, _ = kernel_files
    shim = tmp_path / "shim" / "matplotlib"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("raise ImportError('matplotlib hidden by the test')\n")
    p = s4cert("plot", str(out), "-o", str(tmp_path / "k.png"), env={"PYTHONPATH": os.pathsep.join(
        [str(tmp_path / "shim")] + [x for x in os.environ.get("PYTHONPATH", "").split(os.pathsep) if x])})
    line = one_line_error(p)
    assert 's4cert[plot]' in line and "matplotlib" in line and not (tmp_path / "k.png").exists()


@pytest.mark.parametrize("name", ["k.json", "k.txt", ""])
def test_plot_output_checked_first(kernel_files, name):
    d, out, _ = kernel_files
    target = str(out) if name == "k.json" else (str(d / name) if name else "")
    one_line_error(s4cert("plot", str(out), "-o", target))
