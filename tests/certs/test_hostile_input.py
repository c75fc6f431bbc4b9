"""Small hostile inputs: bounded numbers and nesting, unreadable archives, runs too large
to start, output paths and conflicting options, all refused before any work with one
line and exit 2."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from s4cert.certs.io.atomic import atomic_write
from tests.certs.cli_run import one_line_error, s4cert

GOOD = {"Lambda": [-1, -2], "P": [1, 1], "B": [1, 1], "C": [1, -1], "step": "1/2", "L": 8}


def _params(tmp_path, doc, name="p.json"):
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return str(path)


# -- numbers and nesting ------------------------------------------------------------------

@pytest.mark.parametrize("value", ["1e999999999", "1/1e99999999", "3e-999999999", "1" * 2_000_000])
def test_huge_numbers_in_a_parameter_file(tmp_path, value):
    line = one_line_error(s4cert("kernel", "--params", _params(tmp_path, {**GOOD, "step": value}), timeout=60))
    assert "step" in line and ("exponent" in line or "characters" in line)


def test_huge_numbers_in_a_kernel_file(tmp_path):
    out = tmp_path / "k.json"
    assert s4cert("kernel", "-N", "2", "-L", "4", "--out", str(out), "--quiet").returncode == 0
    doc = json.loads(out.read_text())
    doc["kernel"]["re"][1] = "1e999999999"
    out.write_text(json.dumps(doc))
    for command in ("audit", "plot"):
        args = [command, str(out)] + (["-o", str(tmp_path / "f.png")] if command == "plot" else [])
        p = s4cert(*args, timeout=60)
        assert p.returncode == 2 and "exponent" in p.stderr and "Traceback" not in p.stderr, p.stderr[-500:]


@pytest.mark.parametrize("eps,needle", [("1/1" + "0" * 5000, "characters"), ("1e-99999999999", "exponent"),
                                        ("1" * 5000, "characters")])
def test_huge_numbers_on_the_command_line(eps, needle):
    line = one_line_error(s4cert("kernel", "-N", "2", "-L", "4", "--eps", eps, timeout=60))
    assert needle in line and len(line) < 300


def test_deep_nesting_is_refused(tmp_path):
    path = _params(tmp_path, "[" * 100_000 + "]" * 100_000)
    assert "nested" in one_line_error(s4cert("kernel", "--params", path, timeout=60))
    kern = _params(tmp_path, '{"format": ' + "[" * 100_000 + "]" * 100_000 + "}", "k.json")
    assert "nested" in one_line_error(s4cert("audit", kern, timeout=60))


@pytest.mark.parametrize("content", [b"PK\x03\x04garbage", b"\x00" * 64, None])
def test_unreadable_npz_is_one_line(tmp_path, content):
    good = tmp_path / "good.npz"
    np.savez(good, Lambda=np.array([-1.0]), P=np.ones(1), C=np.ones(1))
    bad = tmp_path / "bad.npz"
    bad.write_bytes(good.read_bytes()[:len(good.read_bytes()) // 2] if content is None else content)
    one_line_error(s4cert("kernel", "--params", str(bad), timeout=60))
    out = tmp_path / "k.json"
    assert s4cert("kernel", "-N", "2", "-L", "4", "--out", str(out), "--quiet").returncode == 0
    one_line_error(s4cert("compare", str(out), str(bad), timeout=60))


# -- estimates ----------------------------------------------------------------------------

TOO_LARGE = [
    ["kernel", "-N", "5000"],
    ["kernel", "-N", "20000"],
    ["kernel", "--hippo", "legs", "-N", "100000"],
    ["kernel", "--mode", "a-priori", "--eps", "1e-300", "-L", "1024"],
    ["kernel", "--mode", "exact", "-L", "65536"],
    ["count", "-N", "1000000"],
    ["lmu-audit", "--memory-size", "100000", "--theta", "1", "--length", "100"],
]


@pytest.mark.parametrize("args", TOO_LARGE)
def test_runs_too_large_are_refused_with_the_estimate(args):
    """The installed command refuses with one line (the timeout only guards against a hang)."""
    line = one_line_error(s4cert(*args, timeout=60))
    assert "refused" in line and "about" in line and "--force" in line


@pytest.mark.parametrize("args", TOO_LARGE)
def test_runs_too_large_are_refused_before_any_work(args, capsys):
    """The refusal comes before any work: run in-process, the command calls no function of
    the arithmetic or the algorithms except the length's validation (check_length), so no
    model is built and no kernel, count or audit is started."""
    from s4cert.certs import cli
    package = os.path.dirname(os.path.dirname(cli.__file__))
    work = (os.path.join(package, "arith") + os.sep, os.path.join(package, "algorithms") + os.sep)
    called = set()

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(work):
            called.add(frame.f_code.co_name)
    sys.setprofile(profile)
    try:
        code = cli.main(args)
    finally:
        sys.setprofile(None)
    err = capsys.readouterr().err
    assert code == 2 and "refused" in err, err
    assert called <= {"check_length"}, sorted(called)


@pytest.mark.parametrize("mode", ["exact", "a-priori", "ball"])
def test_a_run_estimated_below_a_few_seconds_goes_ahead_without_an_estimate(mode):
    # the line above the threshold: test_cli_first_use.py::test_the_estimate_is_shown_above_the_threshold...
    p = s4cert("kernel", "-N", "2", "-L", "4", "--step", "1/2", "--eps", "1e-6", "--mode", mode)
    assert p.returncode == 0, p.stderr
    assert "s4cert: estimate" not in p.stderr


# -- output paths -------------------------------------------------------------------------

def test_out_equal_to_the_input_is_refused(tmp_path):
    path = _params(tmp_path, GOOD)
    before = open(path).read()
    assert "overwrite the input" in one_line_error(s4cert("kernel", "--params", path, "--out", path))
    assert open(path).read() == before


@pytest.mark.parametrize("extra,needle", [
    (["--out", "X.json", "--npz", "X.json"], "same file"),
    (["--out", ""], "empty"),
    (["--npz", ""], "empty"),
    (["--out", "/proc/s4cert-none/k.json"], "directory"),
    (["--out", "/proc/k.json"], "cannot write"),
    (["--out", "."], "directory"),
])
def test_bad_output_paths_exit_2_before_any_work(tmp_path, extra, needle):
    p = s4cert("kernel", "-N", "200", "-L", "64", *extra, cwd=tmp_path)
    assert needle in one_line_error(p) and p.stdout == ""
    assert sorted(os.listdir(tmp_path)) == []


def test_files_follow_the_umask(tmp_path):
    old = os.umask(0o027)
    try:
        atomic_write([(str(tmp_path / "a.json"), b"{}")])
    finally:
        os.umask(old)
    assert os.stat(tmp_path / "a.json").st_mode & 0o777 == 0o640


_KILLED_WRITER = """
import os, sys, time
from s4cert.certs.io import atomic
os.fsync = lambda fd: time.sleep(600)  # hold the temporary file open until killed
atomic.atomic_write([(sys.argv[1], b"x" * 1000)])
"""


def test_stale_temporary_files_are_removed_on_the_next_write(tmp_path):
    target = tmp_path / "k.json"
    writer = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, str(target)])
    try:
        deadline = time.time() + 60
        while not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")] and time.time() < deadline:
            time.sleep(0.05)
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=60)
    assert len([n for n in os.listdir(tmp_path) if n.endswith(".tmp")]) == 1
    atomic_write([(str(target), b"{}")])
    assert sorted(os.listdir(tmp_path)) == ["k.json"]


# -- options never ignored ------------------------------------------------------------------

@pytest.mark.parametrize("args,needle", [
    (["--theta", "2"], "--theta"),
    (["--hippo", "legs", "--theta", "2"], "--theta"),
    (["--params", "P", "-N", "4"], "-N conflicts with --params"),
    (["--conj-pairs"], "--conj-pairs"),
    (["--hippo", "legs", "--rank", "2"], "--rank conflicts with --hippo"),
    (["--params", "P", "--rank", "2"], "--rank conflicts with --params"),
    (["--params", "P", "--seed", "3"], "--seed conflicts with --params"),
    (["--hippo", "legt", "--seed", "3"], "--seed conflicts with --hippo"),
])
def test_ignored_options_are_conflicts(tmp_path, args, needle):
    path = _params(tmp_path, GOOD)
    args = [path if a == "P" else a for a in args]
    assert needle in one_line_error(s4cert("kernel", *args, "-L", "8", "--quiet"))
