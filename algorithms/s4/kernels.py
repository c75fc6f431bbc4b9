"""Reference kernels ``K_j = C* Abar^j Bbar`` by powers of the discretized matrix: of a
DPLR model through its structured solver, and of a dense system by elimination."""
from __future__ import annotations

from typing import Any

from ..linalg import cdot, dot
from ..result import Result, Status
from .bilinear import factor
from .dplr import DPLR, check_length, in_field, read_step
from .solver import bilinear


def kernel_by_powers(F, model: DPLR, step, L: int) -> Result:
    """K_j = C* Abar^j Bbar for 0 <= j < L, by repeated dense products (Abar from the
    structured solver).  Statuses as in ``solver.bilinear``."""
    L = check_length(L)
    res = bilinear(F, model, step)
    if not res.ok:
        return res
    Abar, v = res.value
    C = in_field(F, model).C
    K = []
    for j in range(L):
        K.append(cdot(F, C, v))
        if j + 1 < L:
            v = [dot(F, row, v) for row in Abar]
    return Result(Status.OK, K)


def dense_kernel(F, A: list[list], B: list, C: list, step: Any, L: int) -> Result:
    """``K_j = C* Abar^j Bbar`` (0 <= j < L) of a dense system by elimination:
    ``Abar = (I - alpha A)^-1 (I + alpha A)``, ``Bbar = (I - alpha A)^-1 step B``,
    ``alpha = step/2`` (``s4.bilinear``).  Status ``singular-bilinear-matrix`` when
    ``I - alpha A`` is singular, ``undecided`` when a pivot is undecided.

    >>> from s4cert.arith import ExactField
    >>> F = ExactField(4)
    >>> r = dense_kernel(F, [[-1]], [1], [1], 1, 2)
    >>> [F.to_fractions(k)[0] for k in r.value]
    [Fraction(2, 3), Fraction(2, 9)]
    """
    L = check_length(L)
    N = len(A)
    if N < 1 or any(len(row) != N for row in A) or len(B) != N or len(C) != N:
        raise ValueError(f"dense_kernel: need A N x N, B and C of length N, got {N} rows, "
                         f"{len(B)} and {len(C)} entries")
    A = [[F.from_number(x) for x in row] for row in A]
    B = [F.from_number(x) for x in B]
    C = [F.from_number(x) for x in C]
    f = factor(F, A, read_step(F, step))
    if not f.ok:
        return f
    G = f.value
    v = G.input_map(F, B)
    K = []
    for j in range(L):
        K.append(cdot(F, C, v))
        if j + 1 < L:
            v = G.step(F, v)
    return Result(Status.OK, K)
