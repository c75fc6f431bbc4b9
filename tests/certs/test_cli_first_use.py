"""What a new user meets first: numbers read as typed, messages naming the flag or the
file kind, exit codes, the estimate line, the Python API's conveniences, and --help."""
from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s4cert.certs.io.numbers import parse_number, short_text

from .cli_run import one_line_error, s4cert

# -- numbers read exactly as typed ------------------------------------------------------


@pytest.mark.parametrize("text, value", [("1e-400", Fraction(1, 10**400)), ("2.5E+3", 2500),
                                         ("-0.125", Fraction(-1, 8)), ("7/3", Fraction(7, 3)),
                                         ("1e400", 10**400), (" 12 ", 12), ("1.5e-13", Fraction(15, 10**14))])
def test_decimals_of_any_exponent_are_read_exactly(text, value):
    assert parse_number(text, "x") == value


@pytest.mark.parametrize("text", ["1e_3", "", "inf", "nan", "1e999999999", "1/0", "0x10"])
def test_bad_number_strings_are_one_line_value_errors(text):
    with pytest.raises(ValueError) as e:
        parse_number(text, "--eps")
    assert "\n" not in str(e.value) and "--eps" in str(e.value)


@given(st.integers(-(10**17 - 1), 10**17 - 1), st.integers(-500, 500))
def test_short_text_reads_back_exactly_and_is_short(m, k):
    q = Fraction(m) * Fraction(10) ** k
    text = short_text(q)
    assert Fraction(text) == q and len(text) <= 30, text


@given(st.fractions(max_denominator=10**6))
def test_short_text_of_any_small_rational_reads_back(q):
    assert Fraction(short_text(q)) == q


def test_short_text_of_a_long_rational_is_marked_approximate():
    text = short_text(Fraction(1, 3**100))
    assert text.startswith("~") and abs(Fraction(text[1:]) * 3**100 - 1) < Fraction(1, 10**5)


def test_kernel_eps_1e_400_is_certified_and_printed_short(tmp_path):
    from s4cert import load_kernel
    out = tmp_path / "k.json"
    p = s4cert("kernel", "-N", "2", "-L", "4", "--eps", "1e-400", "--quiet", "--out", str(out))
    assert p.returncode == 0, p.stderr[-2000:]
    first = p.stdout.splitlines()[0]
    assert first.endswith("eps=1e-400") and len(first) < 100, first
    assert "000000000" not in p.stdout
    k = load_kernel(out)
    assert k.eps == Fraction(1, 10**400)
    assert k.max_radius() <= Fraction(1, 10**400)
    assert len(k.rad) == 4


def test_step_decimals_still_name_a_float_and_refuse_one_below_its_range():
    line = one_line_error(s4cert("kernel", "--step", "1e-400", "--quiet"))
    assert "--step" in line and "float64" in line and "p/q" in line


def test_model_eps_below_the_float_range_names_the_flag(tmp_path):
    line = one_line_error(s4cert("model", str(tmp_path / "none.npz"), "--eps", "1e-400"))
    assert "--eps 1e-400" in line and "float64" in line


# -- messages that name the flag or the file kind -------------------------------------

DATA = __import__("pathlib").Path(__file__).resolve().parents[1] / "data" / "s4-checkpoints"


def test_exact_mode_on_a_hippo_model_says_what_to_do():
    line = one_line_error(s4cert("kernel", "--mode", "exact", "--hippo", "legs", "-N", "4", "-L", "4"))
    assert "--mode exact --hippo" in line and "--params" in line and "ball mode" in line
    assert "estimate" not in line


def test_kernel_precision_limit_names_max_prec():
    p = s4cert("kernel", "-N", "4", "-L", "8", "--eps", "1e-300", "--max-prec", "128", "--arithmetic", "ball",
               "--quiet")
    line = one_line_error(p, 1)
    assert "raise max_prec (--max-prec, now 128 bits)" in line


def test_counts_not_measured_names_the_flag():
    p = s4cert("kernel", "-N", "4", "-L", "5000", "--quiet")
    assert p.returncode == 0, p.stderr[-2000:]
    assert "counts: not measured (N + L > 4096; counts=True (--counts) measures them)" in p.stdout


def test_model_max_prec_is_passed_on_and_named():
    ckpt = str(DATA / "a05_s4d_minimal.pt")
    low = s4cert("model", ckpt, "-L", "16", "--eps", "1e-200", "--max-prec", "100", "--quiet")
    assert low.returncode == 1 and "precision limit of 100 bits; raise --max-prec" in low.stdout, low.stdout
    ok = s4cert("model", ckpt, "-L", "16", "--eps", "1e-200", "--max-prec", "1000", "--quiet")
    assert ok.returncode == 0 and "status ok" in ok.stdout, ok.stdout + ok.stderr[-2000:]


@pytest.mark.parametrize("suffix", [".json", ".npz"])
def test_model_on_a_kernel_file_names_the_kind_and_the_command(tmp_path, suffix):
    k = tmp_path / f"k{suffix}"
    assert s4cert("kernel", "-N", "2", "-L", "4", "--quiet", "--out", str(k)).returncode == 0
    line = one_line_error(s4cert("model", str(k)))
    assert "an s4cert kernel file" in line and "not a checkpoint" in line and f"s4cert audit {k}" in line


def test_model_on_its_own_report_says_so(tmp_path):
    report = tmp_path / "r.json"
    p = s4cert("model", str(DATA / "a05_s4d_minimal.pt"), "-L", "16", "--quiet", "--out", str(report))
    assert p.returncode == 0, p.stderr[-2000:]
    line = one_line_error(s4cert("model", str(report)))
    assert "an s4cert model report" in line and "give the checkpoint" in line


@pytest.mark.parametrize("command, option, name", [
    (["kernel", "-N", "2", "-L", "4"], "--out", "k.npy"), (["kernel", "-N", "2", "-L", "4"], "--npz", "k.json"),
    (["model", "MISSING.pt"], "--out", "r.npz"), (["model", "MISSING.pt"], "--kernels", "k.json"),
    (["lmu-audit", "--checkpoint", "MISSING.pt"], "--out", "r.npz"),
    (["forward", "MISSING.pt", "--input", "u.npy"], "--out", "r.npz")])
def test_an_output_name_of_another_format_is_refused_before_any_work(tmp_path, command, option, name):
    target = tmp_path / name
    line = one_line_error(s4cert(*command, option, str(target), cwd=tmp_path))
    assert line.startswith(f"s4cert: error: {option} {target}: {option} writes") and "not ." in line
    assert not target.exists() and list(tmp_path.iterdir()) == []


def test_compare_on_an_npz_of_several_arrays_names_key(tmp_path):
    import numpy as np
    k = tmp_path / "k.json"
    assert s4cert("kernel", "-N", "2", "-L", "4", "--quiet", "--out", str(k)).returncode == 0
    np.savez(tmp_path / "o.npz", a=np.zeros(4), b=np.ones(4))
    line = one_line_error(s4cert("compare", str(k), str(tmp_path / "o.npz")))
    assert "--key" in line and "'a'" in line and "'b'" in line


# -- exit codes and --help ------------------------------------------------------------

def _with_closed_stdout(*args: str):
    """The command with a stdout pipe whose reader has already gone (as after ``| head``)."""
    import os
    import subprocess
    import sys
    import tempfile
    from .cli_run import TIMEOUT
    r, w = os.pipe()
    os.close(r)
    try:
        return subprocess.run([sys.executable, "-m", "s4cert", *args], stdout=w, stderr=subprocess.PIPE,
                              text=True, cwd=tempfile.gettempdir(), timeout=TIMEOUT)
    finally:
        os.close(w)


@pytest.mark.parametrize("args", [("kernel", "--quiet", "-N", "2", "-L", "4"),
                                  ("count", "-N", "4", "-L", "8", "--quiet")])
def test_a_broken_pipe_ends_quietly_with_141(args):
    p = _with_closed_stdout(*args)
    assert p.returncode == 141 and p.stderr == "", (p.returncode, p.stderr[-2000:])


SUBCOMMANDS = ["kernel", "audit", "compare", "count", "lmu-audit", "plot", "model", "forward"]


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_each_help_has_examples_and_only_its_exit_codes(command):
    from s4cert.certs.cli_help import EXAMPLES
    p = s4cert(command, "--help")
    assert p.returncode == 0, p.stderr
    text = " ".join(p.stdout.split())
    assert "examples:" in p.stdout and all(e in p.stdout for e in EXAMPLES[command])
    codes = text.split("exit codes:")[1]
    assert "2 usage mistake" in codes and "130 interrupted" in codes and "141 stdout closed" in codes
    certifies = command in ("kernel", "model", "forward", "lmu-audit")
    assert ("not certified" in codes) == certifies
    assert ("audit passed" in codes) == (command == "audit")
    assert max(len(line) for line in p.stdout.splitlines()) <= 100


@pytest.mark.parametrize("command, needle", [("audit", "trusting none of its numbers"),
                                             ("count", "Count"), ("lmu-audit", "reference_float32")])
def test_audit_count_and_lmu_audit_are_described(command, needle):
    p = s4cert(command, "--help")
    assert needle in " ".join(p.stdout.split())
    if command == "lmu-audit":
        assert "ours_float32" in p.stdout and "matrix powers" in p.stdout


def test_every_example_parses():
    from s4cert.certs.cli import build_parser
    from s4cert.certs.cli_help import EXAMPLES
    parser = build_parser()
    for command, examples in EXAMPLES.items():
        for e in examples:
            args = parser.parse_args(e.split()[1:])
            assert args.command == command


# -- the estimate line -------------------------------------------------------------------

def test_the_estimate_is_shown_above_the_threshold_and_after_the_inputs_are_checked(monkeypatch, capsys, tmp_path):
    from s4cert.certs import cli, limits
    assert limits.kernel_estimate(8, 64, Fraction(1, 10**12), "ball").worth_showing() is False
    assert limits.kernel_estimate(16, 256, Fraction(1, 10**12), "exact").worth_showing() is True
    monkeypatch.setattr(limits, "SHOW_SECONDS", 0.0)
    assert cli.main(["kernel", "-N", "2", "-L", "4", "--mode", "exact", "--step", "1/2"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("s4cert: estimate: exact mode, N = 2, L = 4")
    for bad in (["--mode", "exact", "--hippo", "legs"], ["--params", str(tmp_path / "none.npz")],
                ["--out", str(tmp_path / "k.npy")], ["--theta", "2"]):
        assert cli.main(["kernel", "-N", "2", "-L", "4", *bad]) == 2
        err = capsys.readouterr().err
        assert "s4cert: estimate" not in err and err.startswith("s4cert: error:"), err


# -- the Python API takes what a user holds --------------------------------------------

def _small_kernel():
    from s4cert import DPLR, certify_kernel
    m = DPLR(Lambda=[-0.5 + 1j, -1.0], P=[0.5, 0.25], B=[1.0, 2.0], C=[1.0, -1.0])
    return m, certify_kernel(m, step=0.1, L=8, eps=1e-12)


def test_certification_error_has_status_and_reason():
    from s4cert import CertificationError, certify_kernel
    m, _ = _small_kernel()
    with pytest.raises(CertificationError) as e:
        certify_kernel(m, step=0.1, L=8, eps=Fraction(1, 10**300), max_prec=100, arithmetic="ball")
    assert e.value.status == "precision-limit"
    assert str(e.value) == f"precision-limit: {e.value.reason}" and not e.value.reason.startswith("precision")
    plain = CertificationError("no status here")
    assert plain.status is None and plain.reason == "no status here"


def test_save_kernel_from_what_the_kernel_records(tmp_path):
    from s4cert import load_kernel, save_kernel
    m, ck = _small_kernel()
    for name in ("k.json", "k.npz"):
        save_kernel(tmp_path / name, ck)
        k = load_kernel(tmp_path / name)
        assert k.digest_ok and k.L == 8 and k.step == Fraction(0.1)
        assert all(Fraction(r) <= Fraction(1e-12) for r in k.rad)
    with pytest.raises(ValueError, match="both model and step, or neither"):
        save_kernel(tmp_path / "x.json", ck, m)


def test_compare_with_takes_the_certified_kernel_itself(tmp_path):
    import numpy as np
    from s4cert import compare_with, save_kernel
    _, ck = _small_kernel()
    other = np.asarray(ck.mid, dtype=complex) + 1e-9
    direct = compare_with(ck, other)
    save_kernel(tmp_path / "k.npz", ck)
    np.save(tmp_path / "o.npy", other)
    via_files = compare_with(tmp_path / "k.npz", tmp_path / "o.npy")
    assert direct.path == "<CertifiedKernel>"
    assert direct.abs_error_bounds == via_files.abs_error_bounds
    lo, hi = direct.abs_error_bounds
    # |other_j - K_j| is 1e-9 up to the rounding of mid_j + 1e-9 (|mid_j| <= 3: below 1e-15) and rad_j <= 1e-12
    assert lo <= 1e-9 + 2e-12 and hi >= 1e-9 - 2e-12 and hi - lo < 1e-11


def test_kernel_file_repr_is_one_short_line(tmp_path):
    from s4cert import load_kernel, save_kernel
    _, ck = _small_kernel()
    save_kernel(tmp_path / "k.json", ck)
    text = repr(load_kernel(tmp_path / "k.json"))
    assert "\n" not in text and len(text) < 200 and "Fraction" not in text
    assert "N=2" in text and "L=8" in text and "eps=1e-12" in text and "status='ok'" in text
