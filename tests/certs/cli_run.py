"""Running the installed ``s4cert`` command in a subprocess, always under a timeout."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

#: no command line test may run longer than this (a hang fails the test, never the suite)
TIMEOUT = 120


def s4cert(*args: str, cwd: Path | None = None, timeout: float = TIMEOUT,
           env: dict | None = None) -> subprocess.CompletedProcess:
    """``python -m s4cert ARGS`` away from the source tree, with a timeout."""
    full_env = None if env is None else {**os.environ, **env}
    return subprocess.run([sys.executable, "-m", "s4cert", *args], capture_output=True, text=True,
                          cwd=cwd or tempfile.gettempdir(), timeout=timeout, env=full_env)


def one_line_error(p: subprocess.CompletedProcess, code: int = 2) -> str:
    """The single stderr line of a refused command (asserting the exit code and no traceback)."""
    assert p.returncode == code, (p.returncode, p.stdout[-500:], p.stderr[-2000:])
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr[-2000:]
    return lines[0]
