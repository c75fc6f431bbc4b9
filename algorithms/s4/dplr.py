"""DPLR state-space models, bilinear discretization and the recurrent solver
(spec: "DPLR structured state-space parameterization").

``A = Lambda - P Q*`` (Lambda diagonal, P, Q of shape N x r), input ``B``, output
``y = C* x``.  With ``alpha = step/2`` and ``G = I - alpha A``:
``Abar = G^-1 (I + alpha A)``, ``Bbar = G^-1 step B``, ``K_j = C* Abar^j Bbar``.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from flint import acb, arb

from ...arith import check_power_of_two, exact_parts

from .. import woodbury
from ..linalg import cdot, conj_transpose, dot, lu, lu_solve
from ..result import OK, SINGULAR, SINGULAR_BILINEAR, Result, undecided, zero_partition


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


# -- the solver for G x = b --------------------------------------------------

@dataclass
class _Bordered:
    J: list[int]
    Z: list[int]
    dJ: dict
    lu: Any


class BilinearSolver:
    """Solves G x = b, G = I - alpha (Lambda - P Q*), as the spec's recurrent solver:
    Woodbury when no d_j = 1 - alpha lambda_j is zero, the bordered system when
    0 < |Z| <= r."""

    def __init__(self, F, lam, P, Q, alpha, kind, data):
        self.F, self.lam, self.P, self.Q, self.alpha = F, lam, P, Q, alpha
        self.kind, self.data = kind, data

    @classmethod
    def prepare(cls, F, lam: list, P: list[list], Q: list[list], alpha) -> Result:
        d = [F.sub(F.one(), F.mul(alpha, l)) for l in lam]
        Z, J, unknown = zero_partition(F, d)
        if unknown:
            return undecided("whether some 1 - alpha*lambda_j is zero")
        r = len(P[0])
        if not Z:
            U = [[F.mul(alpha, x) for x in row] for row in P]
            w = woodbury.prepare(F, d, U, Q)
            if not w.ok:
                return w if w.status != "singular" else Result(SINGULAR_BILINEAR, info=w.info)
            return Result(OK, cls(F, lam, P, Q, alpha, "woodbury", w.value))
        if len(Z) > r:
            return Result(SINGULAR_BILINEAR, info={"reason": f"{len(Z)} zero diagonal entries exceed r = {r}"})
        dJ = {j: d[j] for j in J}
        n = r + len(Z)
        M = [[F.zero()] * n for _ in range(n)]
        for i in range(r):
            for k in range(r):
                acc = F.one() if i == k else F.zero()
                for j in J:  # + alpha Q_J* D_J^-1 P_J
                    acc = F.add(acc, F.div(F.mul(alpha, F.mul(F.conj(Q[j][i]), P[j][k])), dJ[j]))
                M[i][k] = acc
            for c, j in enumerate(Z):
                M[i][r + c] = F.neg(F.conj(Q[j][i]))
        for c, j in enumerate(Z):
            for k in range(r):
                M[r + c][k] = F.mul(alpha, P[j][k])
        f = lu(F, M)
        if not f.ok:
            return f if f.status != "singular" else Result(SINGULAR_BILINEAR, info={"reason": "bordered system is singular"})
        return Result(OK, cls(F, lam, P, Q, alpha, "bordered", _Bordered(J, Z, dJ, f.value)))

    def solve(self, b: list) -> list:
        F = self.F
        if self.kind == "woodbury":
            return self.data.solve(F, b)
        J, Z, dJ = self.data.J, self.data.Z, self.data.dJ
        r = len(self.P[0])
        y = {j: F.div(b[j], dJ[j]) for j in J}
        rhs = [F.zero()] * r
        for i in range(r):
            acc = F.zero()
            for j in J:
                acc = F.add(acc, F.mul(F.conj(self.Q[j][i]), y[j]))
            rhs[i] = acc
        sol = lu_solve(F, self.data.lu, rhs + [b[j] for j in Z])
        z, xZ = sol[:r], sol[r:]
        x = [None] * len(b)
        for j in J:
            x[j] = F.sub(y[j], F.div(F.mul(self.alpha, dot(F, self.P[j], z)), dJ[j]))
        for c, j in enumerate(Z):
            x[j] = xZ[c]
        return x

    def apply_plus(self, x: list) -> list:
        """(I + alpha A) x = x + alpha (Lambda x - P (Q* x))."""
        F = self.F
        r = len(self.P[0])
        q = [cdot(F, [row[i] for row in self.Q], x) for i in range(r)]
        return [F.add(xj, F.mul(self.alpha, F.sub(F.mul(l, xj), dot(F, row, q))))
                for xj, l, row in zip(x, self.lam, self.P)]


def _solver(F, model: DPLR, step, adjoint: bool = False) -> tuple[Result, FieldModel, Any]:
    m = in_field(F, model)
    delta = read_step(F, step)
    alpha = F.div(delta, F.const(2))
    if adjoint:  # A* = conj(Lambda) - Q P*
        res = BilinearSolver.prepare(F, [F.conj(l) for l in m.lam], m.Q, m.P, alpha)
    else:
        res = BilinearSolver.prepare(F, m.lam, m.P, m.Q, alpha)
    return res, m, delta


def recurrent(F, model: DPLR, step, u: list, x0: list | None = None) -> Result:
    """The recurrent mode: b_t = (I + alpha A) x_{t-1} + step B u_t, G x_t = b_t,
    y_t = C* x_t.  ``value`` is the list of outputs; ``info["state"]`` the last state."""
    res, m, delta = _solver(F, model, step)
    if not res.ok:
        return res
    S = res.value
    x = [F.zero()] * model.N if x0 is None else [F.from_number(v) for v in as_vector(x0, "x0")]
    if len(x) != model.N:
        raise ValueError(f"x0: expected {model.N} entries, got {len(x)}")
    dB = [F.mul(delta, b) for b in m.B]
    ys = []
    for ut in as_vector(u, "u"):
        ut = F.from_number(ut)
        b = [F.add(p, F.mul(db, ut)) for p, db in zip(S.apply_plus(x), dB)]
        x = S.solve(b)
        ys.append(cdot(F, m.C, x))
    return Result(OK, ys, {"state": x})


def bilinear(F, model: DPLR, step) -> Result:
    """Dense (Abar, Bbar), column by column through the structured solver."""
    res, m, delta = _solver(F, model, step)
    if not res.ok:
        return res
    S = res.value
    N = model.N
    cols = []
    for j in range(N):
        e = [F.one() if i == j else F.zero() for i in range(N)]
        cols.append(S.solve(S.apply_plus(e)))
    Abar = [[cols[j][i] for j in range(N)] for i in range(N)]
    Bbar = S.solve([F.mul(delta, b) for b in m.B])
    return Result(OK, (Abar, Bbar))


def kernel_by_powers(F, model: DPLR, step, L: int) -> Result:
    """K_j = C* Abar^j Bbar for 0 <= j < L, by repeated dense products."""
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
    return Result(OK, K)


def c_tilde(F, model: DPLR, step, M: int) -> Result:
    """C~ = (I - Abar^M)* C = C - (Abar*)^M C, with Abar* c = (I + alpha A*) G*^-1 c
    applied M times through the structured solver of the adjoint."""
    check_power_of_two(M)
    res, m, _ = _solver(F, model, step, adjoint=True)
    if not res.ok:
        return res
    S = res.value
    v = m.C
    for _ in range(M):
        v = S.apply_plus(S.solve(v))
    return Result(OK, [F.sub(c, x) for c, x in zip(m.C, v)])


#: kernels longer than this are refused (their M-point grids would not fit in memory)
MAX_LENGTH = 1 << 26


def check_length(L: Any) -> int:
    """L as a Python int, after checking 1 <= L <= MAX_LENGTH."""
    if not isinstance(L, (int, np.integer)) or isinstance(L, (bool, np.bool_)) or L < 1:
        raise ValueError(f"L must be an integer >= 1, got {L!r}")
    if L > MAX_LENGTH:
        raise ValueError(f"L = {L} is above the supported maximum {MAX_LENGTH}")
    return int(L)


def dense_kernel(F, A: list[list], B: list, C: list, step: Any, L: int) -> Result:
    """``K_j = C* Abar^j Bbar`` (0 <= j < L) of a dense system by elimination:
    ``Abar = (I - alpha A)^-1 (I + alpha A)``, ``Bbar = (I - alpha A)^-1 step B``,
    ``alpha = step/2``.  Status ``singular-bilinear-matrix`` when ``I - alpha A`` is singular.

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
    delta = read_step(F, step)
    alpha = F.div(delta, F.const(2))
    M = [[F.sub(F.one() if i == j else F.zero(), F.mul(alpha, A[i][j])) for j in range(N)]
         for i in range(N)]
    f = lu(F, M)
    if not f.ok:
        return Result(SINGULAR_BILINEAR, info=f.info) if f.status == SINGULAR else f
    v = lu_solve(F, f.value, [F.mul(delta, b) for b in B])
    K = []
    for j in range(L):
        K.append(cdot(F, C, v))
        if j + 1 < L:
            v = lu_solve(F, f.value, [F.add(x, F.mul(alpha, dot(F, row, v))) for x, row in zip(v, A)])
    return Result(OK, K)
