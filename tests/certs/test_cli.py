"""The s4cert command end to end (subprocess), and its exit codes."""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


def s4cert(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """The installed command, run away from the source tree (as a user would)."""
    return subprocess.run([sys.executable, "-m", "s4cert", *args], capture_output=True, text=True,
                          cwd=cwd or tempfile.gettempdir(), timeout=300)


def test_no_arguments_runs_the_built_in_example():
    p = s4cert()
    assert p.returncode == 0, p.stderr
    assert "status ok" in p.stdout and "max radius" in p.stdout and "counts:" in p.stdout


def test_kernel_modes_and_files(tmp_path):
    out, npz = tmp_path / "k.json", tmp_path / "k.npz"
    p = s4cert("kernel", "-N", "3", "-L", "16", "--step", "0.1", "--eps", "1e-14", "--out", str(out),
               "--npz", str(npz), "--quiet")
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text())
    assert doc["format"] == "s4cert.kernel/1"
    arrays = np.load(npz)
    assert arrays["mid"].shape == (16,) and float(arrays["rad"].max()) <= 1e-14
    for mode in ("a-priori", "exact"):
        p = s4cert("kernel", "-N", "2", "-L", "4", "--step", "1/2", "--eps", "1e-6", "--mode", mode)
        assert p.returncode == 0, p.stderr
        assert f"mode {mode}" in p.stdout
    a = s4cert("audit", str(out))
    assert a.returncode == 0, a.stdout + a.stderr
    assert "audit passed" in a.stdout


def test_npz_alone(tmp_path):
    npz = tmp_path / "k.npz"
    p = s4cert("kernel", "-N", "2", "-L", "8", "--npz", str(npz), "--quiet")
    assert p.returncode == 0, p.stderr
    assert f"wrote {npz}" in p.stdout and sorted(p.name for p in tmp_path.iterdir()) == ["k.npz"]
    with np.load(npz) as arrays:
        assert sorted(arrays.files) == ["mid", "rad"] and float(arrays["rad"].max()) <= 1e-12


def test_audit_fails_on_a_tampered_file(tmp_path):
    out = tmp_path / "k.json"
    assert s4cert("kernel", "-N", "2", "-L", "8", "--out", str(out)).returncode == 0
    text = out.read_text()
    doc = json.loads(text)
    doc["certificate"]["kappa"] = doc["certificate"]["kappa"] / 2
    out.write_text(json.dumps(doc))
    p = s4cert("audit", str(out))
    assert p.returncode == 1 and "audit failed" in p.stderr


def test_compare(tmp_path):
    out = tmp_path / "k.json"
    assert s4cert("kernel", "-N", "4", "-L", "32", "--out", str(out), "--npz", str(tmp_path / "k.npz")).returncode == 0
    mid = np.load(tmp_path / "k.npz")["mid"]
    np.save(tmp_path / "f32.npy", mid.astype(np.complex64))
    p = s4cert("compare", str(out), str(tmp_path / "f32.npy"))
    assert p.returncode == 0, p.stderr
    assert "abs" in p.stdout.lower()


def test_count_table():
    p = s4cert("count", "-N", "4,8", "-L", "16")
    assert p.returncode == 0, p.stderr
    rows = [line for line in p.stdout.splitlines()[1:] if line.strip()]
    assert len(rows) == 2


def test_hippo_and_lmu_audit():
    p = s4cert("kernel", "--hippo", "legs", "-N", "4", "-L", "32", "--quiet")
    assert p.returncode == 0, p.stderr
    p = s4cert("kernel", "--hippo", "legt", "-N", "2", "--theta", "2", "-L", "16", "--quiet")
    assert p.returncode == 0, p.stderr
    p = s4cert("lmu-audit", "--memory-size", "4", "--theta", "4", "--length", "16")
    assert p.returncode == 0, p.stderr
    assert "reference_float32" in p.stdout


@pytest.mark.parametrize("args,needle", [
    (["kernel", "-L", "0"], "-L"),
    (["kernel", "--eps", "0"], "--eps"),
    (["kernel", "--eps", "nan"], "--eps"),
    (["kernel", "--step", "-1"], "--step"),
    (["kernel", "--params", "/nonexistent/file.npz"], "file"),
    (["kernel", "--mode", "fast"], "--mode"),
    (["kernel", "--hippo", "legs", "--theta", "2"], "theta"),
    (["audit", "/nonexistent/k.json"], "k.json"),
    (["count", "-N", "a,b"], "-N"),
    (["lmu-audit", "--memory-size", "4"], "required"),
    (["kernel", "--arithmetic", "float64", "--mode", "exact"], "arithmetic"),
    (["kernel", "--arithmetic", "double"], "--arithmetic"),
])
def test_user_mistakes_exit_2_with_one_line(args, needle):
    p = s4cert(*args)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in p.stderr


def test_certification_failure_exits_1(tmp_path):
    params = tmp_path / "p.json"
    params.write_text(json.dumps({"Lambda": [0], "P": [0], "B": [1], "C": [1], "step": 1, "L": 4}))
    p = s4cert("kernel", "--params", str(params))
    assert p.returncode == 1 and "resonant-diagonal" in p.stderr and "Traceback" not in p.stderr


def test_params_file_bad_inputs_exit_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"Lambda": [-1, -2], "P": [1], "B": [1, 1], "C": [1, 1]}))
    p = s4cert("kernel", "--params", str(bad))
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
    nan = tmp_path / "nan.npz"
    np.savez(nan, Lambda=np.array([np.nan]), P=np.ones(1), B=np.ones(1), C=np.ones(1))
    p = s4cert("kernel", "--params", str(nan))
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1


def test_review_cli_cases():
    p = s4cert("kernel", "--hippo", "legt", "-N", "3", "-L", "16")  # LegT odd N: mu = 1 exactly
    assert p.returncode == 1 and "resonant-diagonal" in p.stderr
    p = s4cert("kernel", "--hippo", "legs", "-N", "3", "-L", "8", "--mode", "a-priori")
    assert p.returncode == 1 and "a-priori" in p.stderr and "Traceback" not in p.stderr
    p = s4cert("kernel", "-L", "100000000000")
    assert p.returncode == 2 and "maximum" in p.stderr


def test_arithmetic_choice(tmp_path):
    """--arithmetic float64 certifies on float64 disks (and says so), ball runs balls, and
    a float64 request that cannot reach eps exits 1 with the reason."""
    base = ["kernel", "--hippo", "legs", "-N", "8", "-L", "64", "--step", "0.05", "--eps", "1e-11", "--quiet"]
    p = s4cert(*base, "--arithmetic", "float64")
    assert p.returncode == 0, p.stderr
    assert "float64 midpoint-radius" in p.stdout and "precision 53 bits" in p.stdout
    p = s4cert(*base, "--arithmetic", "ball")
    assert p.returncode == 0, p.stderr
    assert "midpoint-radius" not in p.stdout
    p = s4cert("kernel", "-N", "3", "-L", "8", "--eps", "1e-40", "--arithmetic", "float64", "--quiet")
    assert p.returncode == 1 and "float64 disks" in p.stderr
