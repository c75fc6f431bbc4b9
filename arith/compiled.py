"""What the project's compiled loops share (numba, the optional extra ``fast``): the compiler
settings, the switch ``S4CERT_COMPILED``, the bitwise comparison their probes use, and the
gate each loop is taken through.

Every loop is compiled by :func:`jit`: no fast-math flags (LLVM then neither contracts a
product and a sum into a fused multiply-add nor reassociates), numpy's error model (a
division by zero gives inf or NaN as numpy's does), cached in numba's cache where it can
write.  ``S4CERT_COMPILED``: "0" never runs a loop, "1" runs one on any size, anything else
from the loop's own size threshold on (:func:`wanted`).

A loop is used only through its :class:`Gate`: the module of the loop declares one with the
loop's size threshold and its probe (both forms run on inputs where a fused multiply-add, a
flushed subnormal or a mishandled NaN would show; true when every output agrees bitwise,
:func:`same_floats`), and callers ask ``gate.use(size)``.  :func:`gates` lists every gate
declared so far.
"""
from __future__ import annotations

import os
from typing import Callable

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


_GATES: dict[str, "Gate"] = {}


class Gate:
    """When one compiled loop runs: ``use(size)`` is true when ``S4CERT_COMPILED`` asks for
    it on ``size`` (from ``minimum`` on, or always with "1"; never with "0") and the loop is
    ``open()``: numba is installed, every gate of ``requires`` is open, and ``probe()`` (the
    loop against its numpy form, bitwise) returned true.  The verdict of ``open()`` is
    taken once per process; the probe runs with floating-point warnings off (probes divide
    by zero and make NaNs on purpose).  Declaring a gate registers it under ``name``."""

    def __init__(self, name: str, minimum: int, probe: Callable[[], bool], requires: tuple = ()):
        if not name or not isinstance(minimum, int) or minimum < 0:
            raise ValueError(f"a gate needs a name and a size threshold >= 0, got {name!r}, {minimum!r}")
        self.name, self.minimum, self.probe, self.requires = name, minimum, probe, tuple(requires)
        self._verdict: bool | None = None
        _GATES[name] = self

    def open(self) -> bool:
        """Whether the loop may run in this process (numba, the gates required, the probe)."""
        if self._verdict is None:
            ok = installed() and all(g.open() for g in self.requires)
            if ok:
                with np.errstate(all="ignore"):
                    ok = bool(self.probe())
            self._verdict = ok
        return self._verdict

    def use(self, size: int) -> bool:
        """Whether to run the loop on a problem of ``size``."""
        return wanted(size, self.minimum) and self.open()

    def __repr__(self) -> str:
        return f"Gate({self.name!r}, minimum={self.minimum})"


def gates() -> tuple[Gate, ...]:
    """Every gate declared by the modules imported so far."""
    return tuple(_GATES.values())
