"""Discrete-time linear state-space systems and the bilinear discretization
(proofs/spec.md §S10–§S11).

The continuous model ``x' = A x + B u``, ``y = C x + D u`` and the reading of its data
are in :mod:`.lti_model`, its certified simulation in :mod:`.lti_simulate`, the
zero-order-hold discretization in :mod:`.zoh`.  Discretizations with step ``h`` use the
spec's indexing ``x_t = Abar x_{t-1} + Bbar u_t``, ``y_t = C x_t + D u_t``, ``x_{-1} = x0``:

* ZOH (:func:`~.zoh.zoh`): ``Abar = e^{A h}``, ``Bbar = int_0^h e^{A s} ds B``, exact at the
  sample times, certified as balls;
* bilinear (:func:`bilinear`): ``Abar = G^{-1} (I + h A / 2)``, ``Bbar = G^{-1} h B``,
  ``G = I - h A / 2``, exact in any field (second-order accurate).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..linalg import dot, matvec
from ..result import OK, Result
from ..s4.bilinear import discretize
from .lti_model import LTIModel, read_matrix, read_positive, read_vector


@dataclass
class DiscreteLTI:
    """``x_t = A x_{t-1} + B u_t``, ``y_t = C x_t + D u_t``, ``x_{-1} = x0``, with
    entries in the field ``F`` (lists of rows)."""

    F: Any
    A: list[list]
    B: list[list]
    C: list[list]
    D: list[list]
    x0: list
    step: Fraction

    def run(self, u: Any, x_init: Any = None) -> tuple[list[list], list[list]]:
        """States ``x_0 .. x_{T-1}`` and outputs ``y_0 .. y_{T-1}`` for inputs ``u``
        (T rows of m entries; a 1-d input when m = 1)."""
        F = self.F
        m = len(self.B[0])
        rows = read_matrix(u, "u", "column")
        if len(rows[0]) != m:
            raise ValueError(f"u: expected {m} entries per row, got {len(rows[0])}")
        x = self.x0 if x_init is None else [F.from_number(v) for v in read_vector(x_init, "x_init")]
        if len(x) != len(self.A):
            raise ValueError(f"x_init: expected {len(self.A)} entries, got {len(x)}")
        xs, ys = [], []
        for r in rows:
            ut = [F.from_number(v) for v in r]
            x = [F.add(a, b) for a, b in zip(matvec(F, self.A, x), matvec(F, self.B, ut))]
            xs.append(x)
            ys.append(output(F, self.C, self.D, x, ut))
        return xs, ys

    @classmethod
    def of_model(cls, F, model: LTIModel, A: list[list], B: list[list], step: Fraction) -> "DiscreteLTI":
        """The discretized ``(A, B)`` (elements of F) with the model's C, D and x0 read into F."""
        return cls(F, A, B, _in_field(F, model.C), _in_field(F, model.D),
                   [F.from_number(e) for e in model.x0], step)

    def to_numpy(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(A, B, C, D)`` as complex128 arrays (midpoints for balls; uncertified)."""
        F = self.F
        return tuple(np.array([[F.to_complex(e) for e in r] for r in M])
                     for M in (self.A, self.B, self.C, self.D))


def _in_field(F, rows: list[list]) -> list[list]:
    return [[F.from_number(e) for e in r] for r in rows]


def bilinear(F, model: LTIModel, step: Any) -> Result:
    """The bilinear discretization in the field ``F``, exactly as the field computes:
    ``G = I - (h/2) A``, ``Abar = G^{-1} (I + (h/2) A)``, ``Bbar = G^{-1} h B``.
    Status ``singular-bilinear-matrix`` when G is singular, ``undecided`` when a ball
    pivot test cannot decide.

    >>> from s4cert.arith import ExactField
    >>> F = ExactField(4)
    >>> d = bilinear(F, LTIModel([[0]], [1], [1]), 1).value
    >>> xs, ys = d.run([1, 2, 3])
    >>> [F.to_fractions(y[0])[0] for y in ys]
    [Fraction(1, 1), Fraction(3, 1), Fraction(6, 1)]
    """
    h = read_positive(step, "step")
    res = discretize(F, _in_field(F, model.A), _in_field(F, model.B), F.from_number(h))
    if not res.ok:
        return res
    Abar, Bbar = res.value
    return Result(OK, DiscreteLTI(F, Abar, Bbar, _in_field(F, model.C), _in_field(F, model.D),
                                  [F.from_number(e) for e in model.x0], h))


def output(F, C: list[list], D: list[list], x: list, u: list) -> list:
    """``y = C x + D u`` in the field F (the direct term added separately)."""
    return [F.add(dot(F, c, x), dot(F, d, u)) for c, d in zip(C, D)]
