"""The options every ``s4cert`` command that certifies shares, defined once: ``--eps``
(read exactly) with ``--relative``, ``--max-prec``, ``--arithmetic`` and ``--json``; the
readers of command-line numbers; and the certified scale a relative eps is taken of.

``--eps E --relative`` means E times max|K| per kernel (``kernel``, ``model``) or E times
max|y| per output array (``forward``).  The scale is a certified lower bound of that
maximum (:mod:`.relative_eps`), so every radius stays below E times the true maximum.
"""
from __future__ import annotations

import argparse
import textwrap
from fractions import Fraction
from typing import Any

from .io.numbers import check_number_text, parse_number
from .kernel import DEFAULT_MAX_PREC
from .relative_eps import float_below, max_abs_lower, relative_to

__all__ = ["MAX_ARG_CHARS", "add_arithmetic", "add_eps", "add_json", "add_max_prec", "exact_eps",
           "fit", "float_below", "max_abs_lower", "positive_eps", "positive_int", "relative_to"]

#: the longest number read from the command line, in characters
MAX_ARG_CHARS = 1000
#: the width of every human summary line
SUMMARY_COLUMNS = 100


def positive_int(text: str) -> int:
    """An integer >= 1 (argparse type)."""
    try:
        check_number_text(text, "value", MAX_ARG_CHARS)
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text[:40]!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {v}")
    return v


def positive_eps(text: str) -> str:
    """An eps kept as text and read exactly later (argparse type): integers, "p/q" and
    decimals of any exponent ("1e-400" is 10^-400)."""
    try:
        v = parse_number(text, "value", MAX_ARG_CHARS)
    except (ValueError, ZeroDivisionError) as e:
        raise argparse.ArgumentTypeError(str(e) if "exponent" in str(e) or "characters" in str(e)
                                         else f"expected a number, got {text[:40]!r}") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text[:40]}")
    return text


def add_json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the result as JSON on stdout (nothing else there)")


def add_eps(p: argparse.ArgumentParser, default: str | None, default_text: str, scale: str) -> None:
    """``--eps`` (exact decimal, integer or p/q) and ``--relative`` (eps times ``scale``)."""
    p.add_argument("--eps", type=positive_eps, default=default,
                   help="bound on every radius: integer, p/q or decimal of any exponent, read exactly; "
                        f"absolute, or with --relative times {scale} (default {default_text})")
    p.add_argument("--relative", action="store_true",
                   help=f"--eps is relative: eps times {scale} (a certified lower bound of it, so every "
                        f"radius is below eps times the true {scale.split(' per ')[0]})")


def add_max_prec(p: argparse.ArgumentParser, applies: str = "") -> None:
    """``--max-prec`` (``applies``: a prefix saying where it applies, e.g. "--checkpoint: ")."""
    p.add_argument("--max-prec", type=positive_int, default=DEFAULT_MAX_PREC,
                   help=f"{applies}ball precision limit in bits: runs stop at the precision eps needs, and are "
                        f"refused past this limit (default {DEFAULT_MAX_PREC})")


def add_arithmetic(p: argparse.ArgumentParser, choices: dict[str, str]) -> None:
    """``--arithmetic`` with every choice explained (``choices``: name -> what it does)."""
    text = "; ".join(f"{name}: {what}" for name, what in choices.items())
    p.add_argument("--arithmetic", choices=tuple(choices), default="auto", help=f"{text} (default auto)")


def exact_eps(args: Any) -> Fraction | None:
    """``--eps`` as the exact rational typed (None when not given); ``--relative`` without
    ``--eps`` is a usage mistake."""
    if args.eps is None:
        if getattr(args, "relative", False):
            raise ValueError("--relative needs --eps (the relative bound)")
        return None
    return parse_number(args.eps, "--eps", MAX_ARG_CHARS)


def fit(line: str, width: int = SUMMARY_COLUMNS) -> str:
    """A summary line wrapped to ``width`` columns (continuation lines indented; numbers
    and words never split).

    >>> print(fit("a " * 60, 20).splitlines()[1])
      a a a a a a a a a
    """
    return "\n".join(textwrap.wrap(line, width, subsequent_indent="  ", break_long_words=False,
                                   break_on_hyphens=False)) or line
