"""What the user sees: the first values, the file's radius beside eps, --help for every
option, the exit codes, --version, --json, a moving progress clock."""
from __future__ import annotations

import argparse
import io
import json
import time
from fractions import Fraction
from importlib.metadata import version

import numpy as np
import pytest

from s4cert.certs.cli import build_parser
from s4cert.certs.progress import Progress
from tests.certs.cli_run import s4cert


def test_the_first_values_and_how_to_get_them_all():
    p = s4cert("kernel", "-N", "3", "-L", "16", "--quiet")
    assert p.returncode == 0, p.stderr
    assert "K[0] = " in p.stdout and "K[4] = " in p.stdout and "K[5] = " not in p.stdout
    assert "--npz" in p.stdout and "of 16 values" in p.stdout


def test_the_printed_radius_is_the_files_with_eps_beside_it(tmp_path):
    """eps below what float64 midpoints can hold: the file's disks (full-precision
    midpoints) meet eps, and that is the radius printed."""
    out = tmp_path / "k.json"
    p = s4cert("kernel", "-N", "3", "-L", "8", "--eps", "1e-30", "--out", str(out), "--quiet")
    assert p.returncode == 0, p.stderr
    line = next(x for x in p.stdout.splitlines() if x.startswith("certified radius: max radius"))
    printed = float(line.split()[4])
    assert "eps 1e-30" in line
    rad = max(Fraction(r) for r in json.loads(out.read_text())["kernel"]["rad"])
    assert Fraction(printed) >= rad and printed <= 1e-30 and printed <= float(rad) * (1 + 1e-2)


def _all_parsers(parser: argparse.ArgumentParser):
    yield "s4cert", parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield name, sub


def test_help_has_text_for_every_option_and_the_exit_codes():
    parsers = list(_all_parsers(build_parser()))
    assert {"kernel", "audit", "compare", "count", "lmu-audit", "plot", "model"} <= {n for n, _ in parsers}
    for name, sub in parsers:
        for action in sub._actions:
            if isinstance(action, argparse._SubParsersAction):
                continue
            assert action.help and action.help.strip(), (name, action.option_strings or action.dest)
        text = sub.format_help()
        assert "exit codes" in text and "130" in text and "2 usage" in text, name
    p = s4cert("kernel", "--help")
    assert p.returncode == 0 and "--mode" in p.stdout and "exact rationals" in p.stdout


def test_version():
    p = s4cert("--version")
    assert p.returncode == 0 and p.stdout.strip() == f"s4cert {version('s4cert')}"


def test_json_output(tmp_path):
    out = tmp_path / "k.json"
    p = s4cert("kernel", "-N", "2", "-L", "8", "--json", "--out", str(out))
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["format"] == "s4cert.kernel/1" and doc == json.loads(out.read_text())
    p = s4cert("audit", str(out), "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["ok"] is True
    np.save(tmp_path / "o.npy", np.zeros(8))
    p = s4cert("compare", str(out), str(tmp_path / "o.npy"), "--json")
    r = json.loads(p.stdout)
    assert p.returncode == 0 and r["L"] == 8 and r["abs_error_bounds"][0] <= r["abs_error"] <= r["abs_error_bounds"][1]
    p = s4cert("count", "-N", "4", "-L", "8,16", "--json")
    assert p.returncode == 0 and [(row["N"], row["L"]) for row in json.loads(p.stdout)["rows"]] == [(4, 8), (4, 16)]
    p = s4cert("lmu-audit", "--memory-size", "4", "--theta", "4", "--length", "16", "--json")
    assert p.returncode == 0 and "reference_float32" in json.loads(p.stdout)["errors"]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_clock_moves_inside_a_stage():
    stream = _Terminal()
    progress = Progress(stream=stream, tick=0.02)
    progress("a long stage")
    time.sleep(0.3)
    drawn = stream.getvalue().split("\r")
    clocks = {d.split("]")[0] for d in drawn if d.startswith("[s4cert")}
    assert len(clocks) >= 3  # redrawn with a later time while the caller was busy
    progress.done()
    after = stream.getvalue()
    assert after.endswith("\r") and progress._thread is None
    time.sleep(0.1)
    assert stream.getvalue() == after  # stopped: nothing drawn after done()


def test_no_progress_thread_when_not_a_terminal():
    progress = Progress(stream=io.StringIO(), tick=0.01)
    progress("stage")
    assert progress._thread is None
    progress.done()


@pytest.mark.parametrize("mode", ["exact", "a-priori"])
def test_a_run_estimated_at_a_second_prints_no_estimate(mode):
    p = s4cert("kernel", "-N", "2", "-L", "4", "--step", "1/2", "--eps", "1e-6", "--mode", mode)
    assert p.returncode == 0 and "estimate" not in p.stderr, p.stderr


@pytest.mark.parametrize("q", [Fraction(1, 3), Fraction(9995, 10000), Fraction(1, 10**400), Fraction(2) ** -1074,
                               Fraction(2309281589270965609, 5846006549323611672814739330865132078623730171904)])
def test_printed_radii_are_upper_bounds(q):
    from s4cert.certs.cli import _up
    for digits in (2, 3):
        text = _up(q, digits)
        assert Fraction(text) >= q and Fraction(text) <= q * (1 + Fraction(2, 10**digits))
