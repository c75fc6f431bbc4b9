"""The continuous-time linear state-space model (spec: "Continuous-time linear
state-space model").

``x'(t) = A x(t) + B u(t)``, ``x(t0) = x0``, output ``y(t) = C x(t) + D u(t)``; the
direct term ``D u`` is kept separate from the state contribution ``C x``.  Matrices
are over R or C.  For every locally integrable input the unique solution is the
variation-of-constants formula (proofs/lti_solution.md)

    x(t) = e^{A (t - t0)} x0 + int_{t0}^{t} e^{A (t - s)} B u(s) ds.

For an input that is constant (or linear) on each step, the integral is read off one
matrix exponential of an augmented matrix,

    exp([[A, B], [0, 0]] h) = [[e^{A h}, Gamma0], [0, I]],   Gamma0 = int_0^h e^{A s} ds B,

computed with python-flint's rigorous ``arb_mat.exp`` / ``acb_mat.exp``, so the
simulation returns balls that provably contain ``x(t_k)`` and ``y(t_k)``.

Discretizations with step ``h`` use the spec's indexing
``x_t = Abar x_{t-1} + Bbar u_t``, ``y_t = C x_t + D u_t``, ``x_{-1} = x0``:

* ZOH: ``Abar = e^{A h}``, ``Bbar = Gamma0`` -- exact at the sample times
  (``x_t = x(t0 + (t+1) h)`` when ``u`` equals ``u_t`` on ``[t0 + t h, t0 + (t+1) h)``),
  certified as balls;
* bilinear: ``Abar = G^{-1} (I + h A / 2)``, ``Bbar = G^{-1} h B``, ``G = I - h A / 2``,
  exact in any field (second-order accurate).

Numbers given by a user are read exactly (a float is its binary value); entries may
also be arb/acb balls.  A tuple entry is one scalar ``(re, im)``; matrices are 2-d numpy
arrays or lists of row lists.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from flint import acb, acb_mat, arb, arb_mat, ctx, fmpq

from ...arith import BallField, exact_parts

from ..linalg import dot, lu, lu_solve, matvec
from ..result import OK, SINGULAR, SINGULAR_BILINEAR, Result

HOLDS = ("constant", "linear")
_ZERO = (Fraction(0), Fraction(0))


# -- reading user data ------------------------------------------------------

def _entry(x: Any, what: str) -> Any:
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


def _matrix(x: Any, what: str, vector_as: str | None = None) -> list[list]:
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
    return [[_entry(v, f"{what}[{i}][{j}]") for j, v in enumerate(r)] for i, r in enumerate(rows)]


def _vector(x: Any, what: str) -> list:
    if isinstance(x, np.ndarray):
        if x.ndim != 1:
            raise ValueError(f"{what}: expected a vector, got an array of shape {x.shape}")
        x = list(x)
    if not isinstance(x, list) or any(_is_row(v) for v in x):
        raise ValueError(f"{what}: expected a vector (list or 1-d array), got {type(x).__name__}")
    return [_entry(v, f"{what}[{i}]") for i, v in enumerate(x)]


def _real(x: Any, what: str) -> Fraction:
    """An exact real number (floats read exactly); balls are not accepted here."""
    if isinstance(x, np.ndarray) and x.ndim == 0:
        x = x.item()
    re, im = exact_parts(x, what)
    if im != 0:
        raise ValueError(f"{what}: expected a real number, got {x!r}")
    return re


def _positive(x: Any, what: str) -> Fraction:
    h = _real(x, what)
    if h <= 0:
        raise ValueError(f"{what} must be > 0, got {x!r}")
    return h


def _shape(rows: list[list], shape: tuple[int, int], what: str) -> None:
    got = (len(rows), len(rows[0]))
    if got != shape:
        raise ValueError(f"{what}: expected shape {shape}, got {got}")


def _is_real_entry(e: Any) -> bool:
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
        self.A = _matrix(A, "A")
        N = len(self.A)
        _shape(self.A, (N, N), "A")
        self.B = _matrix(B, "B", "column")
        if len(self.B) != N:
            raise ValueError(f"B: expected {N} rows (N = {N}), got {len(self.B)}")
        self.C = _matrix(C, "C", "row")
        if len(self.C[0]) != N:
            raise ValueError(f"C: expected {N} columns (N = {N}), got {len(self.C[0])}")
        m, p = len(self.B[0]), len(self.C)
        if D is None:
            self.D = [[_ZERO] * m for _ in range(p)]
        else:
            if not isinstance(D, (list, np.ndarray)) or (isinstance(D, np.ndarray) and D.ndim == 0):
                D = [[D]]
            self.D = _matrix(D, "D", "row" if p == 1 else "column")
            _shape(self.D, (p, m), "D")
        self.x0 = [_ZERO] * N if x0 is None else _vector(x0, "x0")
        if len(self.x0) != N:
            raise ValueError(f"x0: expected {N} entries, got {len(self.x0)}")
        self.t0 = _real(t0, "t0")

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
        return all(_is_real_entry(e) for M in (self.A, self.B, self.C, self.D, [self.x0]) for r in M for e in r)

    def __repr__(self) -> str:
        return f"LTIModel(N={self.N}, m={self.m}, p={self.p}, real={self.is_real}, t0={self.t0})"


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


def _flint(rows: list[list], real: bool) -> arb_mat | acb_mat:
    n, k = len(rows), len(rows[0])
    entries = [_ball(e, real) for r in rows for e in r]
    return arb_mat(n, k, entries) if real else acb_mat(n, k, entries)


def flint_matrices(model: LTIModel, real: bool | None = None) -> tuple:
    """``(A, B, C, D)`` as arb_mat (real) or acb_mat balls at the current flint precision
    (call inside ``ctx.workprec``); ``real`` defaults to ``model.is_real``."""
    real = model.is_real if real is None else real
    if real and not model.is_real:
        raise ValueError("the model has complex entries; it cannot be made real")
    return tuple(_flint(M, real) for M in (model.A, model.B, model.C, model.D))


def _block(E: arb_mat | acb_mat, r0: int, r1: int, c0: int, c1: int) -> arb_mat | acb_mat:
    kind = arb_mat if isinstance(E, arb_mat) else acb_mat
    return kind(r1 - r0, c1 - c0, [E[i, j] for i in range(r0, r1) for j in range(c0, c1)])


def _column(x: arb_mat | acb_mat) -> list[acb]:
    return [acb(x[i, 0]) for i in range(x.nrows())]


def _check_prec(prec: Any) -> int:
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
    h = _real(h, "h")
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
    ts = [_real(t, f"times[{k}]") for k, t in enumerate(_as_list(times, "times"))]
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
    rows = _matrix(u, what, "column")
    _shape(rows, (count, model.m), what)
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
    _check_prec(prec)
    ts = _times(model, times)
    K = len(ts) - 1
    U = _inputs(model, inputs, K if hold == "constant" else K + 1)
    real = model.is_real and all(_is_real_entry(e) for r in U for e in r)
    with ctx.workprec(prec):
        A, B, C, D = flint_matrices(model, real)
        us = [_flint([[e] for e in r], real) for r in U]
        x = _flint([[e] for e in model.x0], real)
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


# -- discretizations ------------------------------------------------------------------

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
        rows = _matrix(u, "u", "column")
        if len(rows[0]) != m:
            raise ValueError(f"u: expected {m} entries per row, got {len(rows[0])}")
        x = self.x0 if x_init is None else [F.from_number(v) for v in _vector(x_init, "x_init")]
        if len(x) != len(self.A):
            raise ValueError(f"x_init: expected {len(self.A)} entries, got {len(x)}")
        xs, ys = [], []
        for r in rows:
            ut = [F.from_number(v) for v in r]
            x = [F.add(a, b) for a, b in zip(matvec(F, self.A, x), matvec(F, self.B, ut))]
            xs.append(x)
            ys.append(output(F, self.C, self.D, x, ut))
        return xs, ys

    def to_numpy(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(A, B, C, D)`` as complex128 arrays (midpoints for balls; uncertified)."""
        F = self.F
        return tuple(np.array([[F.to_complex(e) for e in r] for r in M])
                     for M in (self.A, self.B, self.C, self.D))


def _in_field(F, rows: list[list]) -> list[list]:
    return [[F.from_number(e) for e in r] for r in rows]


def zoh(model: LTIModel, step: Any, prec: int = 128) -> DiscreteLTI:
    """The zero-order-hold discretization as balls in ``BallField(prec)``:
    ``A = e^{A h}``, ``B = int_0^h e^{A s} ds B`` (one augmented exponential).

    >>> d = zoh(LTIModel([[0]], [1], [1]), 1)
    >>> xs, ys = d.run([1, 2, 3])
    >>> [d.F.midpoint(y[0]).real for y in ys]
    [1.0, 3.0, 6.0]
    """
    _check_prec(prec)
    h = _positive(step, "step")
    real = model.is_real
    F = BallField(prec)
    with ctx.workprec(prec):
        Phi, G0, _ = augmented_exponential(_flint(model.A, real), _flint(model.B, real), h)
        Ad = [[acb(Phi[i, j]) for j in range(model.N)] for i in range(model.N)]
        Bd = [[acb(G0[i, j]) for j in range(model.m)] for i in range(model.N)]
    return DiscreteLTI(F, Ad, Bd, _in_field(F, model.C), _in_field(F, model.D),
                       [F.from_number(e) for e in model.x0], h)


def zoh_float64(model: LTIModel, step: Any, prec: int = 128) -> tuple[np.ndarray, np.ndarray]:
    """``(Abar, Bbar)`` of the ZOH discretization as float64 (real models) or
    complex128 arrays: the certified balls' midpoints rounded to nearest."""
    d = zoh(model, step, prec)
    Ad, Bd, _, _ = d.to_numpy()
    return (Ad.real.copy(), Bd.real.copy()) if model.is_real else (Ad, Bd)


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
    h = _positive(step, "step")
    A = _in_field(F, model.A)
    N = model.N
    hF = F.from_number(h)
    alpha = F.div(hF, F.const(2))
    aA = [[F.mul(alpha, a) for a in r] for r in A]
    one, zero = F.one(), F.zero()
    G = [[F.sub(one if i == j else zero, aA[i][j]) for j in range(N)] for i in range(N)]
    P = [[F.add(one if i == j else zero, aA[i][j]) for j in range(N)] for i in range(N)]
    f = lu(F, G)
    if not f.ok:
        return Result(SINGULAR_BILINEAR, info=f.info) if f.status == SINGULAR else f
    hB = [[F.mul(hF, b) for b in r] for r in _in_field(F, model.B)]
    Abar = _solve_columns(F, f.value, P)
    Bbar = _solve_columns(F, f.value, hB)
    return Result(OK, DiscreteLTI(F, Abar, Bbar, _in_field(F, model.C), _in_field(F, model.D),
                                  [F.from_number(e) for e in model.x0], h))


def _solve_columns(F, factor, rhs: list[list]) -> list[list]:
    cols = [lu_solve(F, factor, [r[j] for r in rhs]) for j in range(len(rhs[0]))]
    return [[c[i] for c in cols] for i in range(len(rhs))]


def output(F, C: list[list], D: list[list], x: list, u: list) -> list:
    """``y = C x + D u`` in the field F (the direct term added separately)."""
    return [F.add(dot(F, c, x), dot(F, d, u)) for c, d in zip(C, D)]
