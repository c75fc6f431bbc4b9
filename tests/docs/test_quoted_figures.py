"""The figures the documentation quotes from a command are the ones the command prints.

The checkpoint page quotes the certified compare intervals of the a01 fixture against the
reference's float64 kernel, with and without tightening; the run is deterministic (the same
floats on every machine that passes the environment probe), so the quoted text must appear
in its output."""
from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "s4-checkpoints"
PAGE = " ".join((ROOT / "docs" / "checkpoints.md").read_text(encoding="utf-8").split())


def _intervals(args: list[str]) -> list[str]:
    run = subprocess.run([sys.executable, "-m", "s4cert", *args], capture_output=True, text=True,
                         cwd=tempfile.gettempdir(), timeout=300)
    assert run.returncode == 0, run.stderr
    return re.findall(r"\[[-+0-9.e]+, [-+0-9.e]+\]", run.stdout)


def test_the_checkpoint_page_quotes_what_model_compare_prints():
    base = ["model", str(DATA / "a01_s4block_nplr_legs_nssm1.pt"), "--compare",
            str(DATA / "a01_s4block_nplr_legs_nssm1.kernels.npz"), "--key", "float64", "--quiet"]
    tight, loose = _intervals(base), _intervals(base + ["--no-tighten"])
    assert len(tight) == 2 and len(loose) == 2
    for text in tight + loose[:1]:
        assert text in PAGE, f"docs/checkpoints.md does not quote {text}"
