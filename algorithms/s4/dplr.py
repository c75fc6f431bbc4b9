"""DPLR state-space models: their data, how entries and the step are read, and the
changes of state (proofs/spec.md §S13–§S14).

``A = Lambda - P Q*`` (Lambda diagonal, P, Q of shape N x r), input ``B``, output
``y = C* x``.  The discretization is in ``s4.bilinear`` (dense) and ``s4.solver``
(structured), the kernels in ``s4.kernels``, ``s4.filter`` and ``s4.midrad``.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from flint import acb, arb

from ...arith import exact_parts

from ..linalg import cdot, conj_transpose, dot
from ..result import zero_partition


def _scalar(x: Any, what: str) -> Any:
    """Validate a user scalar: Python/numpy numbers are read exactly (rejecting NaN/inf);
    other objects (balls, field elements) are kept as they are."""
    if isinstance(x, (int, float, complex, Fraction, np.number, tuple)):
        exact_parts(x, what)
    return x


def as_vector(x: Any, what: str) -> list:
    arr = x if isinstance(x, (list, tuple)) else np.asarray(x)
    if isinstance(arr, np.ndarray):
        if arr.ndim != 1:
            raise ValueError(f"{what}: expected a vector, got shape {arr.shape}")
        arr = arr.tolist()
    return [_scalar(v, f"{what}[{i}]") for i, v in enumerate(arr)]


def _columns(x: Any, N: int, what: str) -> list[list]:
    """An N x r matrix given as N rows (lists or arrays), or as a length-N vector (r = 1);
    a tuple is one (re, im) number, never a row."""
    if isinstance(x, np.ndarray):
        if x.ndim == 1:
            x = x.reshape(-1, 1)
        if x.ndim != 2:
            raise ValueError(f"{what}: expected shape (N,) or (N, r), got {x.shape}")
        rows = x.tolist()
    elif isinstance(x, (list, tuple)) and x and all(isinstance(r, (list, np.ndarray)) for r in x):
        rows = [list(r) for r in x]
    else:
        rows = [[v] for v in as_vector(x, what)]
    if len(rows) != N:
        raise ValueError(f"{what}: expected {N} rows (N = {N}), got {len(rows)}")
    r = len(rows[0])
    if r < 1 or any(len(row) != r for row in rows):
        raise ValueError(f"{what}: rows must all have the same length r >= 1")
    return [[_scalar(v, f"{what}[{i}][{k}]") for k, v in enumerate(row)] for i, row in enumerate(rows)]


@dataclass(init=False)
class DPLR:
    """A diagonal-plus-low-rank SISO model ``A = Lambda - P Q*``.

    Entries may be any numbers a field reads (int, float, complex, Fraction, (re, im),
    balls) or elements of the field used later.  Q defaults to P.

    >>> m = DPLR([-1, -2], [1, 1], B=[1, 0], C=[1, 1])
    >>> (m.N, m.r)
    (2, 1)
    """

    Lambda: list
    P: list[list]
    Q: list[list]
    B: list
    C: list

    def __init__(self, Lambda, P, B, C, Q=None):
        self.Lambda = as_vector(Lambda, "Lambda")
        N = len(self.Lambda)
        if N < 1:
            raise ValueError("Lambda: the model needs at least one state (N >= 1)")
        self.P = _columns(P, N, "P")
        self.Q = self.P if Q is None else _columns(Q, N, "Q")
        if len(self.Q[0]) != len(self.P[0]):
            raise ValueError(f"P and Q must have the same rank r, got {len(self.P[0])} and {len(self.Q[0])}")
        self.B = as_vector(B, "B")
        self.C = as_vector(C, "C")
        for name, v in (("B", self.B), ("C", self.C)):
            if len(v) != N:
                raise ValueError(f"{name}: expected {N} entries (N = {N}), got {len(v)}")

    @property
    def N(self) -> int:
        return len(self.Lambda)

    @property
    def r(self) -> int:
        return len(self.P[0])

    def dense_A(self, F) -> list[list]:
        """A = Lambda - P Q* as a dense matrix in F."""
        m = in_field(F, self)
        return [[F.sub(m.lam[i] if i == j else F.zero(), cdot(F, m.Q[j], m.P[i]))
                 for j in range(self.N)] for i in range(self.N)]


@dataclass
class FieldModel:
    """A model's entries as elements of one field."""

    lam: list
    P: list[list]
    Q: list[list]
    B: list
    C: list


def in_field(F, model: DPLR) -> FieldModel:
    fm = F.from_number
    return FieldModel([fm(x) for x in model.Lambda], [[fm(x) for x in row] for row in model.P],
                      [[fm(x) for x in row] for row in model.Q], [fm(x) for x in model.B],
                      [fm(x) for x in model.C])


def read_step(F, step: Any):
    """Delta as an element, after checking Delta > 0 (exactly for numbers)."""
    if isinstance(step, (int, float, Fraction, np.number, tuple, complex)):
        re, im = exact_parts(step, "step")
        if im != 0 or re <= 0:
            raise ValueError(f"step must be a real number > 0, got {step!r}")
        return F.from_number(step)
    if isinstance(step, arb) and step > 0:
        return F.from_number(step)
    if isinstance(step, acb) and step.imag.is_zero() and step.real > 0:
        return F.from_number(step)
    raise ValueError(f"step must be a real number certainly > 0, got {step!r}")


# -- state changes ---------------------------------------------------------

def state_change(F, model: DPLR, s: list) -> DPLR:
    """x = S x~ with S = diag(s): Lambda stays, P -> S^-1 P, Q -> S* Q,
    B -> S^-1 B, C -> S* C.  Entries of the result are elements of F."""
    m = in_field(F, model)
    s = [F.from_number(x) for x in as_vector(s, "S")]
    if len(s) != model.N:
        raise ValueError(f"S: expected {model.N} diagonal entries, got {len(s)}")
    zero, _, unknown = zero_partition(F, s)
    if zero or unknown:
        raise ValueError("S must be invertible (a diagonal entry is zero or undecided)")
    inv = lambda v: [F.div(x, sj) for x, sj in zip(v, s)]
    star = lambda v: [F.mul(F.conj(sj), x) for x, sj in zip(v, s)]
    P = [[F.div(x, sj) for x in row] for row, sj in zip(m.P, s)]
    Q = [[F.mul(F.conj(sj), x) for x in row] for row, sj in zip(m.Q, s)]
    return DPLR(m.lam, P, inv(m.B), star(m.C), Q=Q)


def nplr_to_dplr(F, V: list[list], Lambda: list, P: Any, B: list, C: list, Q: Any = None) -> DPLR:
    """A = V Lambda V* - P Q* with V unitary becomes DPLR in x~ = V* x:
    P~ = V* P, Q~ = V* Q, B~ = V* B, C~ = V* C."""
    N = len(Lambda)
    Vs = conj_transpose(F, [[F.from_number(x) for x in row] for row in V])
    if len(Vs) != N or any(len(row) != N for row in Vs):
        raise ValueError(f"V must be {N} x {N}")
    Pm = [[F.from_number(x) for x in row] for row in _columns(P, N, "P")]
    Qm = Pm if Q is None else [[F.from_number(x) for x in row] for row in _columns(Q, N, "Q")]
    times = lambda M_: [[dot(F, row, [M_[j][k] for j in range(N)]) for k in range(len(M_[0]))] for row in Vs]
    vec = lambda v: [dot(F, row, [F.from_number(x) for x in v]) for row in Vs]
    return DPLR(list(Lambda), times(Pm), vec(B), vec(C), Q=times(Qm))


#: kernels longer than this are refused (their M-point grids would not fit in memory)
MAX_LENGTH = 1 << 26


def check_length(L: Any) -> int:
    """L as a Python int, after checking 1 <= L <= MAX_LENGTH."""
    if not isinstance(L, (int, np.integer)) or isinstance(L, (bool, np.bool_)) or L < 1:
        raise ValueError(f"L must be an integer >= 1, got {L!r}")
    if L > MAX_LENGTH:
        raise ValueError(f"L = {L} is above the supported maximum {MAX_LENGTH}")
    return int(L)
