"""Rough time and memory estimates, made before a command starts.

A run whose estimate is above :data:`MAX_SECONDS` or above half the machine's memory is
refused (``TooLarge``, a ValueError: one line, exit 2) with the estimate and the option
that overrides it; otherwise the run goes ahead, and the estimate is shown first when it
is above :data:`SHOW_SECONDS` (after the inputs are checked).

The constants were calibrated on one core of a 2-core x86-64 machine (python-flint 0.6,
numpy 1.26) with a few runs each (wall time, peak resident memory):

* ``kernel`` (ball mode, built-in model, L = 64): N = 100: 1.5 s, 70 MB; N = 200: 3.6 s,
  114 MB; N = 400: 18 s, 297 MB.  N = 16, L = 16384: 0.9 s, 65 MB.  So about
  18 s (N/400)^2.3 and 1.5 kB per N^2 above 70 MB; the length adds little.  The cost is
  taken as linear in the precision eps asks for beyond 64 bits (not measured).
* ``--hippo legs`` model construction: by the ball route (``dplr`` above
  ``VERIFIED_MAX_PREC`` bits) N = 50: 0.5 s; 100: 1.8 s; 200: 13.9 s, so 14 s (N/200)^3; by
  the verified route (the precisions eps down to about 2^-48 ask for) N = 128: 0.5 s;
  256: 0.4 s; 1024: 4 s and 340 MB peak, so 0.3 s + 5 s (N/1024)^3 and 250 bytes N^2.
* ``--mode exact``, the powers route (the default): N = 8, L = 64: 0.3 s; L = 512: 17 s;
  L = 1024: 31-42 s and 226 MB; N = 16, L = 64: 1 s; L = 256: 6.4-9.8 s and 76 MB; so
  0.3 s ((N/8)(L/64))^1.8 and 30 kB N L.  The filter route (``--exact-route filter``,
  float inputs): N = 2, L = 16: 0.1 s; L = 32: 4.6 s (the exact rationals grow with every
  step), so 4.6 s (N/2)^2 (M/32)^5.
* ``--mode a-priori`` (the circuit run in two processes above a few seconds): the circuit
  has about T0 = M (10.3 N + 19) gates (N = 8, M = 64: 6,490; N = 14: 10,444; N = 8,
  M = 128: 13,018) and its run costs about T0 k with k about 36 T0 bits: N = 8, L = 64:
  10 s and 178 MB; N = 14, L = 64: 18 s and 120 MB (eps 1e-12), so 1 s + 1.7e-7 s T0^2 and
  1 byte T0^2 above the base.
* ``count``: N = 256, L = 256: 1.2 s; N = 1024: 6.9 s; N = 64, L = 4096: 2.0 s, so
  1.2 s (N/256)^1.25 + 2 s (L/4096)^1.1.
* ``lmu-audit`` (length 64): memory size 16: 0.05 s; 32: 0.13 s; 64: 0.38 s, so
  0.38 s (D/64)^1.5 (length/64), the length taken as linear (not measured).

They are meant to be right within a factor of a few, which is enough to tell a run of
seconds from one of days.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from fractions import Fraction

#: runs estimated above this many seconds are refused unless forced
MAX_SECONDS = 600.0
#: the estimate is shown only for runs estimated above this many seconds
SHOW_SECONDS = 5.0
_BASE_BYTES = 70e6


class TooLarge(ValueError):
    """A run refused on its estimate (one line: the estimate and the overriding option)."""


@dataclass
class Estimate:
    """About ``seconds`` of wall time and ``bytes`` of peak memory for ``what``."""

    what: str
    seconds: float
    bytes: float

    def worth_showing(self) -> bool:
        """Whether the run is estimated long enough (above SHOW_SECONDS) to say so first."""
        return self.seconds > SHOW_SECONDS

    def text(self) -> str:
        return f"{self.what}: about {_duration(self.seconds)} and {_size(self.bytes)} of memory"


def _duration(s: float) -> str:
    if s < 60:
        return f"{max(s, 0.1):.1f} s"
    if s > 3.15e9:
        return "more than a century"
    for unit, n in (("min", 60), ("h", 3600), ("days", 86400), ("years", 3.15e7)):
        if s < 100 * n or unit == "years":
            return f"{s / n:.3g} {unit}"
    raise AssertionError("unreachable")


def _size(b: float) -> str:
    for unit, n in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if b >= n:
            return f"{b / n:.3g} {unit}"
    return f"{b / 1e3:.3g} kB"


def memory_bytes() -> float:
    """The machine's physical memory (inf when it cannot be read)."""
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return math.inf


def eps_bits(eps: Fraction) -> int:
    """About log2(1/eps), exactly enough for an estimate and without converting to a float."""
    return max(0, eps.denominator.bit_length() - eps.numerator.bit_length())


def kernel_estimate(N: int, L: int, eps: Fraction, mode: str, hippo: bool = False,
                    exact_route: str = "auto") -> Estimate:
    """The kernel command's estimate (see the module docstring for the calibration)."""
    M = 1 << max(0, (L - 1).bit_length())
    if mode == "exact" and exact_route == "filter":
        s, b = 4.6 * (N / 2) ** 2 * (M / 32) ** 5, _BASE_BYTES
    elif mode == "exact":
        s, b = 0.3 * (N / 8 * L / 64) ** 1.8, _BASE_BYTES + 30e3 * N * L
    elif mode == "a-priori":
        T0 = M * (10.3 * N + 19)
        s, b = 1.0 + 1.7e-7 * T0 ** 2 * (1 + eps_bits(eps) / 1000), _BASE_BYTES + T0 ** 2
    else:
        s = (1.0 + 18 * (N / 400) ** 2.3 + 0.9 * L / 16384) * max(1.0, eps_bits(eps) / 64)
        b = _BASE_BYTES + 1.5e3 * N * N + 300 * L
    if hippo:
        s_model, b_model = hippo_setup_estimate(N, eps)
        s, b = s + s_model, max(b, _BASE_BYTES + b_model)
    return Estimate(f"{mode} mode, N = {N}, L = {L}", s, b)


def hippo_setup_estimate(N: int, eps: Fraction) -> tuple[float, float]:
    """(seconds, bytes) of the ``--hippo`` model at the precision the command asks for eps
    (``max(128, 2 (64 + eps_bits))``): the verified route up to ``VERIFIED_MAX_PREC`` bits,
    the ball route above."""
    from ..algorithms.models.hippo_dplr import VERIFIED_MAX_PREC

    if max(128, 2 * (64 + eps_bits(eps))) <= VERIFIED_MAX_PREC:
        return 0.3 + 5 * (N / 1024) ** 3, 250.0 * N * N
    return 14 * (N / 200) ** 3, 0.0


def count_estimate(Ns: list[int], Ls: list[int]) -> Estimate:
    """The count command's estimate, summed over the table."""
    s = sum(1.2 * (N / 256) ** 1.25 + 2.0 * (L / 4096) ** 1.1 for N in Ns for L in Ls)
    b = _BASE_BYTES + 1.5e3 * max(Ns) + 300 * max(Ls)
    return Estimate(f"count, {len(Ns) * len(Ls)} runs", s, b)


def lmu_estimate(D: int, length: int) -> Estimate:
    """The lmu-audit command's estimate."""
    return Estimate(f"lmu-audit, memory size {D}", 0.38 * (D / 64) ** 1.5 * (length / 64),
                    _BASE_BYTES + 64.0 * D * D)


def check(est: Estimate, force: bool, option: str = "--force") -> None:
    """Refuse (TooLarge) a run estimated above MAX_SECONDS or half the memory, unless forced."""
    if force:
        return
    if est.seconds > MAX_SECONDS or est.bytes > memory_bytes() / 2:
        raise TooLarge(f"refused: {est.text()}; {option} runs it anyway")
