"""The continuous-time linear state-space model and the reading of its data
(proofs/spec.md §S10).

``x'(t) = A x(t) + B u(t)``, ``x(t0) = x0``, output ``y(t) = C x(t) + D u(t)``; the
direct term ``D u`` is kept separate from the state contribution ``C x``.  Matrices
are over R or C.

Numbers given by a user are read exactly (a float is its binary value); entries may
also be arb/acb balls.  A tuple entry is one scalar ``(re, im)``; matrices are 2-d numpy
arrays or lists of row lists.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
from flint import acb, arb

from ...arith import exact_parts

ZERO = (Fraction(0), Fraction(0))


# -- reading user data ------------------------------------------------------

def read_entry(x: Any, what: str) -> Any:
    """An exact ``(re, im)`` pair of Fractions, or a finite arb/acb ball kept as it is."""
    if isinstance(x, (arb, acb)):
        if not x.is_finite():
            raise ValueError(f"{what}: non-finite ball {x}")
        return x
    if isinstance(x, np.ndarray) and x.ndim == 0:
        x = x.item()
    return exact_parts(x, what)


def _is_row(r: Any) -> bool:
    return isinstance(r, (list, np.ndarray))


def read_matrix(x: Any, what: str, vector_as: str | None = None) -> list[list]:
    """A matrix as a list of rows of entries.  ``vector_as`` says how a 1-d input is
    read: ``"column"`` (N x 1), ``"row"`` (1 x N), or None (rejected)."""
    if isinstance(x, np.ndarray):
        if x.ndim == 1 and vector_as is not None:
            x = x.reshape(-1, 1) if vector_as == "column" else x.reshape(1, -1)
        if x.ndim != 2:
            raise ValueError(f"{what}: expected a matrix, got an array of shape {x.shape}")
        rows = [list(r) for r in x]
    elif isinstance(x, list) and x and all(_is_row(r) for r in x):
        rows = [list(r) for r in x]
    elif isinstance(x, list) and x and vector_as is not None and not any(_is_row(r) for r in x):
        rows = [[v] for v in x] if vector_as == "column" else [list(x)]
    else:
        raise ValueError(f"{what}: expected a non-empty matrix (2-d array or list of row lists), "
                         f"got {type(x).__name__}")
    if not rows[0] or any(len(r) != len(rows[0]) for r in rows):
        raise ValueError(f"{what}: rows must be non-empty and of equal length")
    return [[read_entry(v, f"{what}[{i}][{j}]") for j, v in enumerate(r)] for i, r in enumerate(rows)]


def read_vector(x: Any, what: str) -> list:
    """A vector (list or 1-d array) as a list of entries."""
    if isinstance(x, np.ndarray):
        if x.ndim != 1:
            raise ValueError(f"{what}: expected a vector, got an array of shape {x.shape}")
        x = list(x)
    if not isinstance(x, list) or any(_is_row(v) for v in x):
        raise ValueError(f"{what}: expected a vector (list or 1-d array), got {type(x).__name__}")
    return [read_entry(v, f"{what}[{i}]") for i, v in enumerate(x)]


def read_real(x: Any, what: str) -> Fraction:
    """An exact real number (floats read exactly); balls are not accepted here."""
    if isinstance(x, np.ndarray) and x.ndim == 0:
        x = x.item()
    re, im = exact_parts(x, what)
    if im != 0:
        raise ValueError(f"{what}: expected a real number, got {x!r}")
    return re


def read_positive(x: Any, what: str) -> Fraction:
    """An exact real number > 0."""
    h = read_real(x, what)
    if h <= 0:
        raise ValueError(f"{what} must be > 0, got {x!r}")
    return h


def check_shape(rows: list[list], shape: tuple[int, int], what: str) -> None:
    got = (len(rows), len(rows[0]))
    if got != shape:
        raise ValueError(f"{what}: expected shape {shape}, got {got}")


def is_real_entry(e: Any) -> bool:
    """Whether an entry (exact pair or ball) is real."""
    if isinstance(e, arb):
        return True
    if isinstance(e, acb):
        return bool(e.imag.is_zero())
    return e[1] == 0


# -- the model ----------------------------------------------------------------

class LTIModel:
    """``x' = A x + B u``, ``x(t0) = x0``, ``y = C x + D u`` over R or C.

    ``A`` is N x N, ``B`` N x m (a 1-d B is one column), ``C`` p x N (a 1-d C is one
    row), ``D`` p x m (default zero), ``x0`` of length N (default zero), ``t0`` real
    (default 0).

    >>> m = LTIModel([[0]], [1], [1])
    >>> (m.N, m.m, m.p, m.is_real)
    (1, 1, 1, True)
    """

    def __init__(self, A: Any, B: Any, C: Any, D: Any = None, x0: Any = None, t0: Any = 0):
        self.A = read_matrix(A, "A")
        N = len(self.A)
        check_shape(self.A, (N, N), "A")
        self.B = read_matrix(B, "B", "column")
        if len(self.B) != N:
            raise ValueError(f"B: expected {N} rows (N = {N}), got {len(self.B)}")
        self.C = read_matrix(C, "C", "row")
        if len(self.C[0]) != N:
            raise ValueError(f"C: expected {N} columns (N = {N}), got {len(self.C[0])}")
        m, p = len(self.B[0]), len(self.C)
        if D is None:
            self.D = [[ZERO] * m for _ in range(p)]
        else:
            if not isinstance(D, (list, np.ndarray)) or (isinstance(D, np.ndarray) and D.ndim == 0):
                D = [[D]]
            self.D = read_matrix(D, "D", "row" if p == 1 else "column")
            check_shape(self.D, (p, m), "D")
        self.x0 = [ZERO] * N if x0 is None else read_vector(x0, "x0")
        if len(self.x0) != N:
            raise ValueError(f"x0: expected {N} entries, got {len(self.x0)}")
        self.t0 = read_real(t0, "t0")

    @property
    def N(self) -> int:
        return len(self.A)

    @property
    def m(self) -> int:
        return len(self.B[0])

    @property
    def p(self) -> int:
        return len(self.C)

    @property
    def is_real(self) -> bool:
        return all(is_real_entry(e) for M in (self.A, self.B, self.C, self.D, [self.x0]) for r in M for e in r)

    def __repr__(self) -> str:
        return f"LTIModel(N={self.N}, m={self.m}, p={self.p}, real={self.is_real}, t0={self.t0})"
