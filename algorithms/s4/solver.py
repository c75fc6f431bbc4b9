"""The recurrent solver of proofs/spec.md §S21 for ``G x = b``, ``G = I - alpha (Lambda - P Q*)``, and
what is built on it: the recurrent mode and the structured discretization.

Woodbury when no ``d_j = 1 - alpha lambda_j`` is zero; the bordered system of size
``r + |Z|`` when ``0 < |Z| <= r``; status ``singular-bilinear-matrix`` when ``|Z| > r``
or a correction is singular (``proofs/woodbury.md``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import woodbury
from ..linalg import cdot, dot, lu, lu_solve
from ..result import Result, Status, undecided, zero_partition
from .bilinear import discretize
from .bilinear_map import half_step
from .dplr import DPLR, FieldModel, as_vector, in_field, read_step


@dataclass
class _Bordered:
    J: list[int]
    Z: list[int]
    dJ: dict
    lu: Any


class BilinearSolver:
    """Solves G x = b, G = I - alpha (Lambda - P Q*), as the recurrent solver of proofs/spec.md §S21:
    Woodbury when no d_j = 1 - alpha lambda_j is zero, the bordered system when
    0 < |Z| <= r."""

    def __init__(self, F, lam, P, Q, alpha, kind, data):
        self.F, self.lam, self.P, self.Q, self.alpha = F, lam, P, Q, alpha
        self.kind, self.data = kind, data

    @classmethod
    def prepare(cls, F, lam: list, P: list[list], Q: list[list], alpha) -> Result:
        """The solver of G = I - alpha (diag(lam) - P Q*).  Statuses:
        ``singular-bilinear-matrix`` (more than r zero d_j, or a singular correction /
        bordered system; ``info`` from the elimination, or ``"reason"``) and
        ``undecided`` (``info["reason"]``: a zero test F could not decide)."""
        d = [F.sub(F.one(), F.mul(alpha, l)) for l in lam]
        Z, J, unknown = zero_partition(F, d)
        if unknown:
            return undecided("whether some 1 - alpha*lambda_j is zero")
        r = len(P[0])
        if not Z:
            U = [[F.mul(alpha, x) for x in row] for row in P]
            w = woodbury.prepare(F, d, U, Q)
            if not w.ok:
                return w if w.status != Status.SINGULAR else Result(Status.SINGULAR_BILINEAR, info=w.info)
            return Result(Status.OK, cls(F, lam, P, Q, alpha, "woodbury", w.value))
        if len(Z) > r:
            return Result(Status.SINGULAR_BILINEAR, info={"reason": f"{len(Z)} zero diagonal entries exceed r = {r}"})
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
            return f if f.status != Status.SINGULAR else Result(Status.SINGULAR_BILINEAR, info={"reason": "bordered system is singular"})
        return Result(Status.OK, cls(F, lam, P, Q, alpha, "bordered", _Bordered(J, Z, dJ, f.value)))

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


def structured_solver(F, model: DPLR, step, adjoint: bool = False) -> tuple[Result, FieldModel, Any]:
    """(the prepared :class:`BilinearSolver` of the model's G, or of G* with ``adjoint``,
    as a Result; the model in F; the step in F).  Statuses as in ``BilinearSolver.prepare``."""
    m = in_field(F, model)
    delta = read_step(F, step)
    alpha = half_step(F, delta)
    if adjoint:  # A* = conj(Lambda) - Q P*
        res = BilinearSolver.prepare(F, [F.conj(l) for l in m.lam], m.Q, m.P, alpha)
    else:
        res = BilinearSolver.prepare(F, m.lam, m.P, m.Q, alpha)
    return res, m, delta


def recurrent(F, model: DPLR, step, u: list, x0: list | None = None) -> Result:
    """The recurrent mode: b_t = (I + alpha A) x_{t-1} + step B u_t, G x_t = b_t,
    y_t = C* x_t.  ``value`` is the list of outputs; ``info["state"]`` the last state.
    Statuses as in ``BilinearSolver.prepare``."""
    res, m, delta = structured_solver(F, model, step)
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
    return Result(Status.OK, ys, {"state": x})


def bilinear(F, model: DPLR, step, method: str = "structured") -> Result:
    """Dense ``(Abar, Bbar)`` of the model (Bbar a vector).  ``method="structured"``:
    column by column through the structured solver; ``"dense"``: elimination on the
    dense ``G = I - alpha A`` (``s4.bilinear``).  Statuses: ``singular-bilinear-matrix``,
    ``undecided`` (``info["reason"]``)."""
    if method == "dense":
        res = discretize(F, model.dense_A(F), [[b] for b in in_field(F, model).B], read_step(F, step))
        if not res.ok:
            return res
        Abar, Bbar = res.value
        return Result(Status.OK, (Abar, [row[0] for row in Bbar]))
    if method != "structured":
        raise ValueError(f"bilinear: method must be 'structured' or 'dense', got {method!r}")
    res, m, delta = structured_solver(F, model, step)
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
    return Result(Status.OK, (Abar, Bbar))
