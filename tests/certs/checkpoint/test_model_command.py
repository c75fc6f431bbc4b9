"""``s4cert model`` end to end (subprocess, under a timeout): files, exit codes, one-line errors."""
from __future__ import annotations

import io
import json
import os
import pickle
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "data" / "s4-checkpoints"


def s4cert(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "s4cert", *args], capture_output=True, text=True,
                          cwd=cwd or tempfile.gettempdir(), timeout=300)


def test_model_writes_the_report_and_the_kernels(tmp_path):
    out, ker = tmp_path / "r.json", tmp_path / "k.npz"
    p = s4cert("model", str(DATA / "a10_fftconv_diag_dss_inv.pt"), "-L", "64", "--disc", "dss",
               "--out", str(out), "--kernels", str(ker), "--compare",
               str(DATA / "a10_fftconv_diag_dss_inv.kernels.npz"), "--key", "float32", "--quiet")
    assert p.returncode == 0, p.stderr
    assert "status ok" in p.stdout and "max |other - K| in [" in p.stdout
    # settings not in the file are said on stderr
    assert "assumed dt_transform = exp" in p.stderr and "assumed disc" not in p.stderr
    doc = json.loads(out.read_text())
    assert doc["format"] == "s4cert.model-report/1"
    [entry] = doc["kernels"]
    for key in ("prefix", "layout", "kind", "disc", "channels", "H", "N", "L", "assumed", "status", "max_rad"):
        assert key in entry
    assert entry["prefix"] == "kernel" and entry["layout"] == "s4-v4-diag" and entry["disc"] == "dss"
    assert entry["compare"]["key"] == "float32" and len(entry["compare"]["max_error"]) == 2
    with np.load(ker) as z:
        assert set(z.files) == {"kernel.mid", "kernel.rad"}
        ref = np.load(DATA / "a10_fftconv_diag_dss_inv.kernels.npz")["float64"]
        assert z["kernel.mid"].shape == ref.shape
        assert np.all(np.abs(ref - z["kernel.mid"]) <= z["kernel.rad"] + 1e-5 * np.abs(ref).max())


def test_the_minimal_s4d_gets_a_leading_axis(tmp_path):
    ker = tmp_path / "k.npz"
    p = s4cert("model", str(DATA / "a05_s4d_minimal.pt"), "-L", "128", "--kernels", str(ker), "--quiet")
    assert p.returncode == 0, p.stderr
    with np.load(ker) as z:
        assert z["kernel.mid"].shape == (1, 3, 128)


def one_line_exit_2(p: subprocess.CompletedProcess) -> str:
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("s4cert: error:"), p.stderr
    return lines[0]


def torch_zip(payload: bytes) -> bytes:
    """A torch.save-shaped archive whose data.pkl is the given pickle."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", payload)
        z.writestr("archive/byteorder", "little")
        z.writestr("archive/version", "3\n")
    return buf.getvalue()


class _Evil:
    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_a_pickle_naming_os_system_is_refused_and_nothing_runs(tmp_path):
    marker = tmp_path / "ran"
    evil = tmp_path / "evil.pt"
    evil.write_bytes(torch_zip(pickle.dumps({"x": _Evil(str(marker))}, protocol=2)))
    out = tmp_path / "r.json"
    line = one_line_exit_2(s4cert("model", str(evil), "-L", "8", "--out", str(out)))
    assert "system" in line
    assert not marker.exists() and not out.exists()


def test_truncated_and_unknown_files_exit_2_with_one_line(tmp_path):
    data = (DATA / "a01_s4block_nplr_legs_nssm1.pt").read_bytes()
    cut = tmp_path / "cut.pt"
    cut.write_bytes(data[: len(data) // 2])
    one_line_exit_2(s4cert("model", str(cut)))
    np.savez(tmp_path / "other.npz", weight=np.zeros(3))
    assert "no S4-family kernel module" in one_line_exit_2(s4cert("model", str(tmp_path / "other.npz"), "-L", "4"))
    assert "give -L" in one_line_exit_2(s4cert("model", str(DATA / "a03_fftconv_diag_zoh_lin.pt")))
    one_line_exit_2(s4cert("model", str(tmp_path / "missing.pt")))


def test_output_paths_are_checked_before_any_work(tmp_path):
    pt = str(DATA / "a05_s4d_minimal.pt")
    assert "same file" in one_line_exit_2(s4cert("model", pt, "-L", "8", "--out", str(tmp_path / "x"),
                                                 "--kernels", str(tmp_path / "x")))
    assert "--key goes with --compare" in one_line_exit_2(s4cert("model", pt, "-L", "8", "--key", "float32"))
