"""The LMU's memory: the LegT system, its certified ZOH discretization and the float
impulse responses (the LMU reference of proofs/spec.md §S19; proofs/lmu_port.md).

The memory is the LegT state-space system (``theta`` = window length in steps)

    A[i, j] = (2i+1)/theta * (-1 if i < j else (-1)^(i-j+1)),   B[i] = (2i+1) (-1)^i / theta,

which is exactly the spec's LegT generator ``G^T`` (:func:`~.hippo.legt`), discretized by
zero-order hold with step 1: ``Abar = e^A``, ``Bbar = int_0^1 e^{A s} ds B``.  Here the
discretization is certified (balls from one augmented matrix exponential, see
:mod:`.lti_simulate`); the float64 matrices the layers use are the balls' midpoints.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
from flint import arb_mat, ctx

from .hippo import check_size, legt_rational, read_theta
from .lti_model import LTIModel
from .lti_simulate import augmented_exponential, flint_matrices


def legt_matrices(memory_size: int, theta: Any) -> tuple[list[list[Fraction]], list[Fraction]]:
    """The continuous LegT ``(A, B)`` of the reference, exactly (``theta`` read exactly).

    >>> A, B = legt_matrices(2, 1)
    >>> [[int(a) for a in r] for r in A], [int(b) for b in B]
    ([[-1, -1], [3, -3]], [1, -3])
    """
    return legt_rational(check_size(memory_size, "memory_size"), read_theta(theta))


def legt_model(memory_size: int, theta: Any) -> LTIModel:
    """The reference's continuous system ``(A, B, C = 1^T, D = 0)`` as an :class:`LTIModel`."""
    A, B = legt_matrices(memory_size, theta)
    return LTIModel(A, B, [Fraction(1)] * len(B))


def _check_prec(prec: Any) -> int:
    if not isinstance(prec, int) or isinstance(prec, bool) or prec < 32:
        raise ValueError(f"prec must be an integer >= 32 bits, got {prec!r}")
    return prec


def zoh_certified(memory_size: int, theta: Any, prec: int = 128) -> tuple[arb_mat, arb_mat]:
    """Balls ``(Abar, Bbar)`` (N x N and N x 1 arb_mat) containing the exact ZOH
    discretization with step 1 of the exact LegT system.  Ball-only (the augmented matrix
    exponential), kept as real ``arb_mat`` for the audit's matrix-level bounds."""
    _check_prec(prec)
    model = legt_model(memory_size, theta)
    with ctx.workprec(prec):
        A, B, _, _ = flint_matrices(model, True)
        Ad, Bd, _ = augmented_exponential(A, B, Fraction(1))
    return Ad, Bd


def state_space_matrices(memory_size: int, theta: Any, prec: int = 128) -> tuple[np.ndarray, np.ndarray]:
    """The discretized ``(A, B)`` as float64 arrays of shapes [N, N] and [N, 1]: the
    certified balls' midpoints, rounded to nearest.

    >>> A, B = state_space_matrices(4, 4)
    >>> A.shape, B.shape, A.dtype
    ((4, 4), (4, 1), dtype('float64'))
    """
    Ad, Bd = zoh_certified(memory_size, theta, prec)
    return mid_array(Ad), mid_array(Bd)


def mid_array(M: arb_mat) -> np.ndarray:
    """The midpoints of a ball matrix, rounded to float64."""
    return np.array([[float(M[i, j].mid()) for j in range(M.ncols())] for i in range(M.nrows())])


# -- impulse responses in float arithmetic ------------------------------------------------

def check_ab(A: np.ndarray, B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Finite ``A`` [N, N] and ``B`` [N, 1] (or [N]); B returned flat."""
    A, B = np.asarray(A), np.asarray(B)
    if A.ndim != 2 or A.shape[0] != A.shape[1] or B.shape not in ((A.shape[0], 1), (A.shape[0],)):
        raise ValueError(f"expected A of shape [N, N] and B of shape [N, 1], got {A.shape} and {B.shape}")
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(B))):
        raise ValueError("A and B must be finite")
    return A, B.reshape(-1)


def impulse_response(A: np.ndarray, B: np.ndarray, length: int) -> np.ndarray:
    """``H[:, t] = A^t B`` for ``0 <= t < length`` by matrix-vector steps
    ``h <- A h``, in the dtype of ``A`` (shape [N, length])."""
    A, b = check_ab(A, B)
    L = check_size(length, "length")
    H = np.empty((A.shape[0], L), dtype=np.result_type(A, b))
    h = b.astype(H.dtype)
    for t in range(L):
        H[:, t] = h
        if t + 1 < L:
            h = A @ h
    return H


def impulse_response_powers(A: np.ndarray, B: np.ndarray, length: int) -> np.ndarray:
    """The reference's construction: ``A_0 = I``, ``H[:, t] = A_t B``,
    ``A_{t+1} = A A_t`` (matrix powers), in the dtype of ``A``."""
    A, b = check_ab(A, B)
    L = check_size(length, "length")
    dt = np.result_type(A, b)
    Ai = np.eye(A.shape[0], dtype=dt)
    B2 = b.astype(dt).reshape(-1, 1)
    cols = []
    for _ in range(L):
        cols.append(Ai @ B2)
        Ai = A @ Ai
    return np.concatenate(cols, axis=1)
