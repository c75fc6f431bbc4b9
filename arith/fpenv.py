"""A cheap run-time probe of the floating-point environment.

The float64 routes' rounding bounds (``Float64Field``, the midpoint-radius disks) assume
IEEE binary64 arithmetic rounding to nearest, ties to even, with gradual underflow.  A
process in which some library set flush-to-zero / denormals-are-zero, or another
rounding mode, breaks them silently.  ``probe`` runs a few numpy operations whose
results under those assumptions are known exactly:

* ``subnormal_product``: 2^-1000 * 2^-60 = 2^-1060, a subnormal (0 under flush-to-zero);
* ``subnormal_input``: 2^-1060 * 2^60 = 2^-1000 (0 under denormals-are-zero);
* ``tie_down`` / ``tie_up``: 1 + 2^-53 = 1 and 1 + 3 2^-53 = 1 + 2^-51 (round to
  nearest, ties to even; any directed rounding gets one of them wrong);
* ``directed_pair``: (-1)/3 = -(1/3) (rounding symmetric about 0, as nearest is and
  upward or downward rounding is not).

The inputs are numpy arrays built at run time, so nothing is folded at compile time,
and the operations go through numpy's compiled loops, as the routes' do.

The matrix products on BLAS run in its worker threads, whose floating-point state is the
one they were started with, not the caller's (OpenBLAS syncs it only when built so).  Three
products large enough to be split across the workers check them too, their results exact
under the same assumptions in any summation order (``blas_results``, once per process):

* ``blas_rounding``: rows (1, 2^-60, ...) and (-1, -2^-60, ...) against ones sum to
  1 + 63 2^-60 and its negative, which round to 1 and -1 (upward or downward rounding
  moves one of them); a row (1, 3 2^-54, 0, ...) gives 1 + 2^-52 (rounding toward zero
  gives 1);
* ``blas_subnormal_product``: 2^-1000 times 2^-60, 64 times: 2^-1054 (0 under flush-to-zero);
* ``blas_subnormal_input``: 2^-1060 times 2^60, 64 times: 2^-994 (0 under denormals-are-zero).

Each value is the number of entries that differ from the exact result.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

#: what each probe must return under IEEE round-to-nearest with subnormals
#: (read from hexadecimal: exact, whatever the environment)
EXPECTED = {"subnormal_product": float.fromhex("0x1p-1060"), "subnormal_input": float.fromhex("0x1p-1000"),
            "tie_down": 1.0, "tie_up": float.fromhex("0x1.0000000000002p0"), "directed_pair": 0.0,
            "blas_rounding": 0.0, "blas_subnormal_product": 0.0, "blas_subnormal_input": 0.0}
WHY = {"subnormal_product": "a subnormal product flushes to zero (flush-to-zero is set)",
       "subnormal_input": "a subnormal input reads as zero (denormals-are-zero is set)",
       "tie_down": "1 + 2^-53 does not round to 1 (the rounding mode is not to nearest)",
       "tie_up": "1 + 3 2^-53 does not round to 1 + 2^-51 (the rounding mode is not to nearest)",
       "directed_pair": "(-1)/3 differs from -(1/3) (a directed rounding mode is set)",
       "blas_rounding": "a BLAS matrix product does not round to nearest (in its worker threads)",
       "blas_subnormal_product": "a BLAS matrix product flushes subnormals to zero (in its worker threads)",
       "blas_subnormal_input": "a BLAS matrix product reads subnormal inputs as zero (in its worker threads)"}


@dataclass(frozen=True)
class FPEnv:
    """The probe's verdict: ``ok`` when every result is the IEEE round-to-nearest one;
    ``failures`` names the probes that differed and ``reason`` says what that means."""

    ok: bool
    failures: tuple[str, ...] = ()

    @property
    def reason(self) -> str:
        return "; ".join(WHY[f] for f in self.failures)


def measure() -> dict[str, float]:
    """The probes' results in the current environment (numpy float64 operations)."""
    one = np.array([float.fromhex(h) for h in ("0x1p0", "0x1p-1000", "0x1p-60", "0x1p60", "0x1p-53", "0x1.8p1")])
    x, tiny, small, big, half_ulp, three = (one[i:i + 1] for i in range(6))
    sub = np.ldexp(x, -1060)  # 2^-1060 without arithmetic rounding (ldexp is exact)
    third = x / three
    return {"subnormal_product": float((tiny * small)[0]), "subnormal_input": float((sub * big)[0]),
            "tie_down": float((x + half_ulp)[0]), "tie_up": float((x + three * half_ulp)[0]),
            "directed_pair": float(((-x) / three + third)[0]), **blas_results()}


@lru_cache(maxsize=1)
def blas_results(rows: int = 256, k: int = 64, cols: int = 256) -> dict[str, float]:
    """The BLAS probes (module docstring): how many entries of each product differ from
    the exact result.  Once per process: the workers' state is fixed when they start."""
    a = np.zeros((rows, k))
    a[0::3, 0], a[0::3, 1:] = 1.0, 2.0 ** -60
    a[1::3, 0], a[1::3, 1:] = -1.0, -(2.0 ** -60)
    a[2::3, 0], a[2::3, 1] = 1.0, 3 * 2.0 ** -54
    want = np.zeros((rows, 1))
    want[0::3], want[1::3], want[2::3] = 1.0, -1.0, 1.0 + 2.0 ** -52
    rounding = np.count_nonzero(a @ np.ones((k, cols)) != want)
    tiny = np.ldexp(np.ones((rows, k)), -1000) @ np.ldexp(np.ones((k, cols)), -60)
    sub = np.ldexp(np.ones((rows, k)), -1060) @ np.ldexp(np.ones((k, cols)), 60)
    return {"blas_rounding": float(rounding),
            "blas_subnormal_product": float(np.count_nonzero(tiny != 2.0 ** -1054)),
            "blas_subnormal_input": float(np.count_nonzero(sub != 2.0 ** -994))}


def judge(results: dict[str, float]) -> FPEnv:
    """The verdict on probe results (a function of the numbers only, so it can be tested
    on the results an altered environment gives)."""
    failures = tuple(k for k, want in EXPECTED.items() if results.get(k) != want)
    return FPEnv(not failures, failures)


def probe() -> FPEnv:
    """Probe the current floating-point environment (a few microseconds; the BLAS products,
    a few milliseconds, once per process)."""
    return judge(measure())


__all__ = ["FPEnv", "probe", "judge", "measure"]
