"""Every shell command the README shows runs and exits 0.

The ``sh`` blocks hold the commands of each job; they run in order, one shell each,
under a timeout, from a temporary folder in which ``tests/data`` is the repository's
(so the checkpoint examples read the same fixtures).  The ``text`` blocks hold the
set-up and documentation commands, which install packages and run the whole suite:
those are checked to be the very lines ``.ci/run`` executes, which runs them.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
TIMEOUT = 120  # seconds per command


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.S)


def commands(language: str) -> list[str]:
    return [line.strip() for block in blocks(language) for line in block.splitlines()
            if line.strip() and not line.strip().startswith("#")]


def test_readme_fits_on_a_few_screens():
    assert len(README.splitlines()) <= 150


def test_readme_shows_a_command_for_each_job():
    first_words = {" ".join(shlex.split(c)[:2]) for c in commands("sh")}
    for job in ("s4cert kernel", "s4cert model", "s4cert audit", "s4cert compare", "s4cert forward",
                "s4cert count"):
        assert job in first_words, job


def test_setup_commands_are_the_ones_ci_runs():
    setup = commands("text")
    assert 'pip install ".[test,dask,plot,fast]"' in setup
    assert "python -m pytest -q tests arith algorithms certs --durations=15" in setup
    ci_lines = {line.strip() for line in CI.splitlines()}
    for command in setup:
        pip = command.replace("pip install ", "python -m pip install --quiet ", 1)
        assert command in ci_lines or pip in ci_lines, f"README set-up line not run by .ci/run: {command}"


def test_readme_commands_run(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "data").symlink_to(ROOT / "tests" / "data", target_is_directory=True)
    bin_dir = str(Path(sys.executable).parent)  # the s4cert and python of this environment
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
    ran = 0
    for command in commands("sh"):
        p = subprocess.run(command, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=TIMEOUT, stdin=subprocess.DEVNULL)
        assert p.returncode == 0, f"{command}\nexit {p.returncode}\n{p.stderr[-2000:]}"
        ran += 1
    assert ran >= 8
    assert (tmp_path / "k.json").is_file() and (tmp_path / "report.json").is_file()
