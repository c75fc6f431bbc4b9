"""Exact numbers as JSON values, losslessly, and strict reading of JSON files.

The number encoding of the kernel file format (documented in
:mod:`s4cert.certs.io.kernel_file`): a rational is the string ``"p/q"`` (or ``"p"``) at
any size (:func:`rational_string`, :func:`parse_rational`); a number of a problem is a
pair of rationals or a ball with exact midpoint and radii (:func:`encode_number`,
:func:`decode_number`); a certificate or counts value is a JSON value that reads back
as the same number (:func:`json_value`).  :func:`exact_arb` builds the arb ball a stored
midpoint and radius denote.  :func:`read_json` reads a JSON file and refuses the
non-standard constants ``NaN`` and ``Infinity``; every failure is a one-line ValueError.
"""
from __future__ import annotations

import json
import math
import os
import re
from fractions import Fraction
from typing import Any

import numpy as np
from flint import acb, arb, ctx, fmpq, fmpz

from ...arith import exact_parts

_DIGITS = re.compile(r"[0-9]+")
_EXPONENT = re.compile(r"[eE]\s*([+-]?[0-9]*)")

#: the longest number string read, in characters (a kernel file of this package stays far below)
MAX_NUMBER_CHARS = 1_000_000
#: the largest decimal exponent read ("1e999999999" would be a billion-digit integer)
MAX_EXPONENT = 100_000
#: the deepest nesting of brackets and braces read from a JSON file
MAX_JSON_DEPTH = 64


def check_number_text(t: str, what: str, max_chars: int = MAX_NUMBER_CHARS) -> None:
    """ValueError (one line) for a number string longer than ``max_chars`` or with a decimal
    exponent beyond ``MAX_EXPONENT``, checked before any conversion is tried."""
    if len(t) > max_chars:
        raise ValueError(f"{what}: a number of {len(t)} characters (at most {max_chars} are read)")
    m = _EXPONENT.search(t)
    if m and (len(m.group(1)) > 8 or (m.group(1).lstrip("+-") and abs(int(m.group(1))) > MAX_EXPONENT)):
        raise ValueError(f"{what}: exponent {m.group(1)[:12]} too large (|exponent| <= {MAX_EXPONENT})")


# -- rationals <-> strings -------------------------------------------------------------

def rational_string(q: Fraction) -> str:
    """``"p/q"`` (or ``"p"``) in decimal, at any size (flint converts, without Python's
    limit on the digits of int/str conversions).

    >>> rational_string(Fraction(-3, 8))
    '-3/8'
    """
    p = str(fmpz(q.numerator))
    return p if q.denominator == 1 else f"{p}/{fmpz(q.denominator)}"


def _decimal_int(t: str) -> int | None:
    sign, body = (-1, t[1:]) if t[:1] == "-" else (1, t[1:] if t[:1] == "+" else t)
    return sign * int(fmpz(body)) if _DIGITS.fullmatch(body) else None


def parse_rational(s: Any, what: str) -> Fraction:
    """A lossless rational string (``"p/q"``, ``"p"``, or an exact decimal) as a Fraction.

    >>> parse_rational("-3/8", "x"), parse_rational("0.125", "x")
    (Fraction(-3, 8), Fraction(1, 8))
    """
    if not isinstance(s, str):
        raise ValueError(f"{what}: expected a rational string like \"p/q\", got {type(s).__name__} {s!r}")
    t = s.strip()
    check_number_text(t, what)
    num, sep, den = t.partition("/")
    n = _decimal_int(num)
    d = _decimal_int(den) if sep else 1
    if n is not None and d is not None and (not sep or _DIGITS.fullmatch(den)):
        if d == 0:
            raise ValueError(f"{what}: bad number string {s!r} (zero denominator)")
        return Fraction(n, d)
    try:
        return Fraction(t)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"{what}: bad number string {s[:80]!r}") from None


def parse_number(text: str, what: str, max_chars: int = MAX_NUMBER_CHARS) -> int | Fraction:
    """A number typed by a user, exactly: an integer, ``"p/q"`` or a decimal of any exponent
    (``"1e-400"`` is 10^-400 exactly); length and exponent are bounded before any conversion.

    >>> parse_number("1e-3", "x"), parse_number("12", "x")
    (Fraction(1, 1000), 12)
    """
    t = text.strip()
    check_number_text(t, what, max_chars)
    if "_" in t or not t:
        raise ValueError(f"{what}: bad number string {t[:40]!r}")
    q = parse_rational(t, what)
    return q.numerator if q.denominator == 1 else q


#: the most significant digits :func:`short_text` writes as an exact decimal
SHORT_DIGITS = 17


def short_text(q: Fraction | int) -> str:
    """q in a short form that reads back exactly where one exists: an integer, a decimal
    ``m e k`` (``1e-400``, ``2.5e-13``) when q is one with at most ``SHORT_DIGITS`` digits,
    ``p/q`` up to 40 characters; else the nearest decimal with 6 digits, marked ``~``.

    >>> short_text(Fraction(1, 10**400)), short_text(Fraction(5, 2)), short_text(Fraction(1, 3))
    ('1e-400', '2.5', '1/3')
    """
    q = Fraction(q)
    if q.denominator == 1 and abs(q.numerator).bit_length() <= 60:
        return str(q.numerator)
    d, twos, fives = q.denominator, 0, 0
    while d % 2 == 0:
        d, twos = d // 2, twos + 1
    while d % 5 == 0:
        d, fives = d // 5, fives + 1
    if d == 1:
        k = max(twos, fives)  # q = m / 10^k exactly
        m = q.numerator * 2 ** (k - twos) * 5 ** (k - fives)
        while m % 10 == 0:
            m, k = m // 10, k - 1
        digits = str(abs(m))
        if len(digits) <= SHORT_DIGITS:
            return _plain_or_exp("-" if m < 0 else "", digits, len(digits) - 1 - k)
    text = rational_string(q)
    if len(text) <= 40:
        return text
    from decimal import Decimal, localcontext
    with localcontext() as c:
        c.prec = 6
        return f"~{Decimal(q.numerator) / Decimal(q.denominator):.5e}"


def _plain_or_exp(sign: str, digits: str, exp: int) -> str:
    """sign digits × 10^(exp - len(digits) + 1): positional for exponents -4..16, else
    scientific with one digit before the point."""
    if -4 <= exp < 0:
        return f"{sign}0.{'0' * (-exp - 1)}{digits}"
    if 0 <= exp < SHORT_DIGITS and len(digits) <= exp + 1:
        return f"{sign}{digits}{'0' * (exp + 1 - len(digits))}"
    if 0 <= exp < len(digits) - 1 and exp < SHORT_DIGITS:
        return f"{sign}{digits[:exp + 1]}.{digits[exp + 1:]}"
    return f"{sign}{digits[0]}{'.' + digits[1:] if len(digits) > 1 else ''}e{exp}"


# -- exact arb balls ---------------------------------------------------------------------

def _fq(q: Fraction) -> fmpq:
    return fmpq(q.numerator, q.denominator)


def arb_point(x: arb) -> Fraction:
    """The exact value of an exact arb point (a midpoint or a radius)."""
    man, exp = x.man_exp()
    man, exp = int(man), int(exp)
    return Fraction(man * 2 ** exp) if exp >= 0 else Fraction(man, 2 ** -exp)


def dyadic_bits(q: Fraction) -> int:
    """Bits an arb needs to hold q exactly (q dyadic), else a generous working size."""
    d = q.denominator
    if d & (d - 1) == 0:
        return max(2, abs(q.numerator).bit_length())
    return max(abs(q.numerator).bit_length(), d.bit_length())


def exact_arb(mid: Fraction, rad: Fraction = Fraction(0), prec: int | None = None) -> arb:
    """An arb ball containing [mid - rad, mid + rad]; the midpoint is exact when mid is
    dyadic (and prec is None or large enough), the radius is exact when it is a short
    dyadic (as every arb radius is)."""
    p = prec if prec is not None else dyadic_bits(mid) + 8
    with ctx.workprec(max(p, 64)):  # >= 64 bits: the radius converts exactly
        x = arb(_fq(mid))
        return _with_radius(x, rad) if rad else x


def _with_radius(x: arb, rad: Fraction) -> arb:
    """The ball x widened by rad.  flint rounds a requested radius up (by one unit in the
    30-bit radius mantissa); so first ask for one unit less and keep the result when its
    radius came out exactly rad, else ask for rad itself (which encloses)."""
    if x.rad() == 0 and rad.denominator & (rad.denominator - 1) == 0:
        man, exp = rad.numerator, -(rad.denominator.bit_length() - 1)
        while man % 2 == 0:
            man, exp = man // 2, exp + 1
        shift = 30 - man.bit_length()
        if shift >= 0:  # rad = man30 * 2^e30 with a 30-bit mantissa man30
            man30, e30 = man << shift, exp - shift
            if man30 == 1 << 29:  # one unit below lies in the binade below
                man30, e30 = 1 << 30, e30 - 1
            y = arb(x, _fq(Fraction(man30 - 1) * Fraction(2) ** e30))
            if arb_point(y.mid()) == arb_point(x.mid()) and arb_point(y.rad()) == rad:
                return y
    return arb(x, _fq(rad))


def arb_parts(x: arb, what: str) -> tuple[Fraction, Fraction]:
    """(midpoint, radius) of a finite arb, exactly; ValueError for a non-finite ball."""
    if not x.is_finite():
        raise ValueError(f"{what}: a ball that is not finite cannot be stored")
    return arb_point(x.mid()), arb_point(x.rad())


# -- problem numbers ---------------------------------------------------------------------

def encode_number(x: Any, what: str = "number") -> list | dict:
    """A problem number as lossless strings: ``["re", "im"]`` for an exact number,
    ``{"mid": [...], "rad": [...]}`` for a ball.

    >>> encode_number(0.5 - 2j)
    ['1/2', '-2']
    """
    if isinstance(x, acb):
        (mr, rr), (mi, ri) = arb_parts(x.real, what), arb_parts(x.imag, what)
        return {"mid": [rational_string(mr), rational_string(mi)], "rad": [rational_string(rr), rational_string(ri)]}
    if isinstance(x, arb):
        m, r = arb_parts(x, what)
        return {"mid": [rational_string(m), "0"], "rad": [rational_string(r), "0"]}
    re, im = exact_parts(x, what)
    return [rational_string(re), rational_string(im)]


def decode_number(v: Any, what: str = "number") -> Any:
    """The inverse of :func:`encode_number`: ``(Fraction, Fraction)`` or an exact acb."""
    if isinstance(v, list):
        if len(v) != 2:
            raise ValueError(f"{what}: a number is a pair [re, im], got {len(v)} entries")
        return parse_rational(v[0], f"{what} (re)"), parse_rational(v[1], f"{what} (im)")
    if isinstance(v, dict):
        for k in ("mid", "rad"):
            if not isinstance(v.get(k), list) or len(v[k]) != 2:
                raise ValueError(f"{what}: a ball needs \"{k}\": [re, im]")
        mr, mi = (parse_rational(s, f"{what} (mid)") for s in v["mid"])
        rr, ri = (parse_rational(s, f"{what} (rad)") for s in v["rad"])
        if rr < 0 or ri < 0:
            raise ValueError(f"{what}: negative radius")
        return acb(exact_arb(mr, rr), exact_arb(mi, ri))
    raise ValueError(f"{what}: expected [re, im] strings or a ball object, got {type(v).__name__}")


def json_value(x: Any, what: str) -> Any:
    """A certificate or counts value as a JSON value, losslessly.

    >>> json_value({"b": Fraction(1, 3), "w": float("inf"), "n": [1, 0.5]}, "c")
    {'b': '1/3', 'w': 'inf', 'n': [1, 0.5]}
    """
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        f = float(x)
        return f if math.isfinite(f) else ("nan" if f != f else ("inf" if f > 0 else "-inf"))
    if isinstance(x, Fraction):
        return rational_string(x)
    if isinstance(x, dict):
        return {str(k): json_value(v, f"{what}.{k}") for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_value(v, what) for v in x]
    raise ValueError(f"{what}: cannot store a {type(x).__name__} losslessly")


# -- reading JSON ----------------------------------------------------------------------------

def read_json(path: Any) -> Any:
    """The JSON value in the file at ``path``; ValueError (one line, naming the file) for a
    missing file, text that is not UTF-8 or not JSON, or a ``NaN``/``Infinity`` literal."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ValueError(f"{path}: no such file")
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
        if json_depth(raw) > MAX_JSON_DEPTH:
            raise ValueError(f"nested more than {MAX_JSON_DEPTH} levels deep")
        return json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a JSON file (not UTF-8 text)") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON ({e.msg} at line {e.lineno})") from None
    except ValueError as e:  # a NaN or Infinity literal
        raise ValueError(f"{path}: {e}") from None


def json_depth(raw: bytes) -> int:
    """The deepest nesting of ``[``/``{`` in JSON text, strings skipped (linear time, no
    recursion: Python's parser would raise RecursionError on 100,000 brackets)."""
    b = np.frombuffer(raw, dtype=np.uint8)
    if b.size == 0:
        return 0
    quote = b == ord('"')
    if quote.any():  # a quote escaped by an odd run of backslashes does not end a string
        back = (b == ord("\\")).astype(np.int64)
        idx = np.arange(b.size)
        last_non = np.maximum.accumulate(np.where(back == 0, idx, -1))
        run = idx - 1 - np.concatenate(([-1], last_non[:-1]))  # backslashes just before each byte
        quote &= (run % 2 == 0)
    inside = (np.cumsum(quote) - quote) % 2 == 1
    step = np.where(inside, 0, (np.isin(b, (ord("["), ord("{"))).astype(np.int64)
                                - np.isin(b, (ord("]"), ord("}"))).astype(np.int64)))
    return int(np.cumsum(step).max())


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-finite JSON constant {name}")


def json_int(v: Any, what: str, low: int = 1) -> int:
    """v itself when it is an integer >= low (a JSON bool is not), else ValueError."""
    if isinstance(v, bool) or not isinstance(v, int) or v < low:
        raise ValueError(f"{what}: expected an integer >= {low}, got {v!r}")
    return v
