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
