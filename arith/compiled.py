"""What the project's compiled loops share (numba, the optional extra ``fast``): the compiler
settings, the switch ``S4CERT_COMPILED`` and the bitwise comparison their probes use.

Every loop is compiled by :func:`jit`: no fast-math flags (LLVM then neither contracts a
product and a sum into a fused multiply-add nor reassociates), numpy's error model (a
division by zero gives inf or NaN as numpy's does), cached in numba's cache where it can
write.  ``S4CERT_COMPILED``: "0" never runs a loop, "1" runs one on any size, anything else
from the loop's own size threshold on (:func:`wanted`).
"""
from __future__ import annotations

import os

import numpy as np


def installed() -> bool:
    """Whether numba can be imported."""
    try:
        import numba
    except ImportError:
        return False
    return numba is not None


def jit(f):
    """``f`` compiled by numba with the project's settings (numba must be installed)."""
    import numba
    try:     # cached where numba can write (the package's __pycache__, else the user's cache)
        return numba.njit(cache=True, nogil=True, error_model="numpy")(f)
    except RuntimeError:
        return numba.njit(nogil=True, error_model="numpy")(f)


def wanted(size: int, minimum: int) -> bool:
    """Whether a compiled loop is asked for on a problem of ``size`` (its threshold
    ``minimum``); the caller then checks the loop's own probe."""
    mode = os.environ.get("S4CERT_COMPILED", "auto")
    return mode != "0" and (size >= minimum or mode == "1")


def same_floats(a: np.ndarray, b: np.ndarray) -> bool:
    """Bitwise equal, except that any NaN equals any NaN (a NaN's payload depends on the
    order of the operands, not on the rounding)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return False
    na, nb = np.isnan(a), np.isnan(b)
    return bool(np.array_equal(na, nb) and np.array_equal(a[~na].view(np.uint64), b[~nb].view(np.uint64)))
