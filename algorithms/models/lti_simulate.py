"""Certified simulation of the continuous-time LTI model (proofs/lti_solution.md).

For every locally integrable input the unique solution is the variation-of-constants
formula

    x(t) = e^{A (t - t0)} x0 + int_{t0}^{t} e^{A (t - s)} B u(s) ds.

For an input that is constant (or linear) on each step, the integral is read off one
matrix exponential of an augmented matrix,

    exp([[A, B], [0, 0]] h) = [[e^{A h}, Gamma0], [0, I]],   Gamma0 = int_0^h e^{A s} ds B,

computed with python-flint's rigorous ``arb_mat.exp`` / ``acb_mat.exp``, so the
simulation returns balls that provably contain ``x(t_k)`` and ``y(t_k)``.

These are ball-only certified procedures, not generic ones: the matrix exponential
exists only as a FLINT ball operation, so they work on ``arb_mat``/``acb_mat`` directly
(real models stay in ``arb_mat`` for tighter balls).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from flint import acb, acb_mat, arb, arb_mat, ctx, fmpq

from ...arith import BallField
from .lti_model import LTIModel, check_shape, is_real_entry, read_matrix, read_real

HOLDS = ("constant", "linear")


# -- balls ----------------------------------------------------------------------

def _arb(q: Fraction) -> arb:
    return arb(fmpq(q.numerator, q.denominator))


def _ball(e: Any, real: bool) -> arb | acb:
    """The entry as an arb (real) or acb ball, at the current flint precision."""
    if isinstance(e, acb):
        return e.real if real else e
    if isinstance(e, arb):
        return e if real else acb(e)
    if real:
        return _arb(e[0])
    return acb(_arb(e[0]), _arb(e[1]))


def flint_matrix(rows: list[list], real: bool) -> arb_mat | acb_mat:
    """Rows of entries (exact pairs or balls) as an arb_mat (real) or acb_mat, at the
    current flint precision."""
    n, k = len(rows), len(rows[0])
    entries = [_ball(e, real) for r in rows for e in r]
    return arb_mat(n, k, entries) if real else acb_mat(n, k, entries)


def flint_matrices(model: LTIModel, real: bool | None = None) -> tuple:
    """``(A, B, C, D)`` as arb_mat (real) or acb_mat balls at the current flint precision
    (call inside ``ctx.workprec``); ``real`` defaults to ``model.is_real``."""
    real = model.is_real if real is None else real
    if real and not model.is_real:
        raise ValueError("the model has complex entries; it cannot be made real")
    return tuple(flint_matrix(M, real) for M in (model.A, model.B, model.C, model.D))


def _block(E: arb_mat | acb_mat, r0: int, r1: int, c0: int, c1: int) -> arb_mat | acb_mat:
    kind = arb_mat if isinstance(E, arb_mat) else acb_mat
    return kind(r1 - r0, c1 - c0, [E[i, j] for i in range(r0, r1) for j in range(c0, c1)])


def _column(x: arb_mat | acb_mat) -> list[acb]:
    return [acb(x[i, 0]) for i in range(x.nrows())]


def check_prec(prec: Any) -> int:
    if not isinstance(prec, int) or isinstance(prec, bool) or prec < 2:
        raise ValueError(f"prec must be an integer >= 2 bits, got {prec!r}")
    return prec


def augmented_exponential(A: arb_mat | acb_mat, B: arb_mat | acb_mat, h: Any,
                          hold: str = "constant") -> tuple:
    """Balls ``(Phi, Gamma0, Gamma1)`` from one exponential of an augmented matrix:
    ``Phi = e^{A h}``, ``Gamma0 = int_0^h e^{A (h-s)} B ds`` and, for ``hold="linear"``,
    ``Gamma1 = int_0^h e^{A (h-s)} B s ds`` (else None).  Runs at the current flint
    precision; call it inside ``ctx.workprec``.

    >>> with ctx.workprec(64):
    ...     Phi, G0, _ = augmented_exponential(arb_mat([[0]]), arb_mat([[1]]), Fraction(1, 2))
    >>> Phi[0, 0], G0[0, 0]
    (1.00000000000000, 0.500000000000000)
    """
    if hold not in HOLDS:
        raise ValueError(f"hold must be one of {HOLDS}, got {hold!r}")
    h = read_real(h, "h")
    N, m = A.nrows(), B.ncols()
    if A.ncols() != N or B.nrows() != N:
        raise ValueError(f"expected A of shape (N, N) and B of shape (N, m), got "
                         f"({N}, {A.ncols()}) and ({B.nrows()}, {m})")
    size = N + m * (2 if hold == "linear" else 1)
    kind = arb_mat if isinstance(A, arb_mat) and isinstance(B, arb_mat) else acb_mat
    M = kind(size, size)
    for i in range(N):
        for j in range(N):
            M[i, j] = A[i, j]
        for j in range(m):
            M[i, N + j] = B[i, j]
    if hold == "linear":  # v' = w: the input's slope drives the held value
        for j in range(m):
            M[N + j, N + m + j] = 1
    E = (M * _arb(h)).exp()
    Phi = _block(E, 0, N, 0, N)
    G0 = _block(E, 0, N, N, N + m)
    G1 = _block(E, 0, N, N + m, size) if hold == "linear" else None
    return Phi, G0, G1


# -- simulation -----------------------------------------------------------------

@dataclass
class Trajectory:
    """Balls at the sample times: ``x[k][i]`` contains ``x_i(t_k)``, ``y[k][i]`` contains
    ``y_i(t_k)``.  Entries are elements of ``BallField(prec)`` (acb)."""

    times: list[Fraction]
    x: list[list[acb]]
    y: list[list[acb]]
    prec: int
    real: bool

    @property
    def field(self) -> BallField:
        return BallField(self.prec)

    def _mid(self, rows: list[list[acb]]) -> np.ndarray:
        out = np.array([[complex(e.mid()) for e in r] for r in rows])
        return out.real.copy() if self.real else out

    def _rad(self, rows: list[list[acb]]) -> np.ndarray:
        F = self.field
        return np.array([[F.radius(e) for e in r] for r in rows])

    def x_midpoint(self) -> np.ndarray:
        return self._mid(self.x)

    def x_radius(self) -> np.ndarray:
        """Upper bounds on ``|x_i(t_k) - midpoint|``."""
        return self._rad(self.x)

    def y_midpoint(self) -> np.ndarray:
        return self._mid(self.y)

    def y_radius(self) -> np.ndarray:
        return self._rad(self.y)


def _times(model: LTIModel, times: Any) -> list[Fraction]:
    ts = [read_real(t, f"times[{k}]") for k, t in enumerate(_as_list(times, "times"))]
    if len(ts) < 2:
        raise ValueError("times: need at least two sample times t_0 < t_1")
    if ts[0] != model.t0:
        raise ValueError(f"times[0] must equal the model's t0 = {model.t0}, got {ts[0]}")
    for k in range(len(ts) - 1):
        if ts[k + 1] <= ts[k]:
            raise ValueError(f"times must be strictly increasing (step > 0); "
                             f"times[{k + 1}] = {ts[k + 1]} <= times[{k}] = {ts[k]}")
    return ts


def _as_list(x: Any, what: str) -> list:
    if isinstance(x, np.ndarray):
        if x.ndim != 1:
            raise ValueError(f"{what}: expected a 1-d array, got shape {x.shape}")
        return list(x)
    if isinstance(x, (list, tuple)):
        return list(x)
    raise ValueError(f"{what}: expected a list or 1-d array, got {type(x).__name__}")


def _inputs(model: LTIModel, u: Any, count: int, what: str = "inputs") -> list[list]:
    rows = read_matrix(u, what, "column")
    check_shape(rows, (count, model.m), what)
    return rows


def simulate(model: LTIModel, times: Any, inputs: Any, hold: str = "constant",
             prec: int = 128) -> Trajectory:
    """Certified samples of the solution at ``times = (t_0 = t0, t_1, ..., t_K)``.

    ``hold="constant"``: ``inputs`` has K rows, ``u = inputs[k]`` on ``[t_k, t_{k+1})``
    (right-continuous; ``u(t_K)`` is the last row).  ``hold="linear"``: ``inputs`` has
    K + 1 rows, the values at the knots, and ``u`` is linear in between.  Each
    distinct step costs one exponential of an augmented matrix at ``prec`` bits.

    >>> m = LTIModel([[0]], [1], [1])                  # x' = u
    >>> tr = simulate(m, [0, 1, 2], [[1], [2]])
    >>> tr.y_midpoint().ravel().tolist()
    [0.0, 1.0, 3.0]
    """
    if hold not in HOLDS:
        raise ValueError(f"hold must be one of {HOLDS}, got {hold!r}")
    check_prec(prec)
    ts = _times(model, times)
    K = len(ts) - 1
    U = _inputs(model, inputs, K if hold == "constant" else K + 1)
    real = model.is_real and all(is_real_entry(e) for r in U for e in r)
    with ctx.workprec(prec):
        A, B, C, D = flint_matrices(model, real)
        us = [flint_matrix([[e] for e in r], real) for r in U]
        x = flint_matrix([[e] for e in model.x0], real)
        cache: dict[Fraction, tuple] = {}
        xs = [x]
        for k in range(K):
            h = ts[k + 1] - ts[k]
            if h not in cache:
                cache[h] = augmented_exponential(A, B, h, hold)
            Phi, G0, G1 = cache[h]
            x = Phi * x + G0 * us[k]
            if hold == "linear":
                x = x + G1 * ((us[k + 1] - us[k]) * (1 / _arb(h)))
            xs.append(x)
        u_at = [us[min(k, K - 1)] for k in range(K + 1)] if hold == "constant" else us
        ys = [C * xk + D * uk for xk, uk in zip(xs, u_at)]
        return Trajectory(ts, [_column(v) for v in xs], [_column(v) for v in ys], prec, real)
