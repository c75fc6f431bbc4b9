"""``C~ = (I - Abar^M)* C`` (proofs/spec.md §S15), the output vector the filter uses, by
named methods.

* ``"adjoint-steps"``: ``C - (Abar*)^M C`` with ``Abar* c = (I + alpha A*) G*^-1 c``
  applied M times through the structured solver of the adjoint (``s4.solver``).
  Exact in exact arithmetic and cheapest there; with balls the radii grow with M.
* ``"structured-squaring"``: Abar column by column through the structured solver, then
  ``log2 M`` squarings (``F.matmul``), then ``C - (Abar^M)* C``.
* ``"dense-squaring"``: Abar by elimination on the dense ``G = I - alpha A``
  (``s4.bilinear``; the field's ``"solve"`` primitive when it offers one), then the
  same squarings.
* ``"contractive-squaring"`` (ball fields): for a dissipative model, float64 squarings on
  BLAS with a certified 2-norm error bound (``s4.c_tilde_contractive``,
  proofs/c_tilde_contractive.md), offered when the radius it adds is at most ``max_radius``
  (default ``2^-prec``); otherwise, or when an assumption fails, ``"dense-squaring"``.

The two squaring methods share every stage but how Abar is solved for, so a check of one
by the other is a check of that solve.  ``c_from_c_tilde`` inverts the relation: the C
whose C~ is a given vector.
"""
from __future__ import annotations

from typing import Any

from ...arith import BallField, check_power_of_two
from ..linalg import conj_transpose, solve
from ..result import Result, Status, undecided
from .bilinear_map import half_step
from .c_tilde_contractive import contractive_c_tilde, kernel_radius_budget
from .dplr import DPLR, in_field, read_step
from .solver import bilinear, structured_solver

METHODS = ("adjoint-steps", "structured-squaring", "dense-squaring")
#: the methods for ball fields only
BALL_METHODS = ("contractive-squaring",)
#: the methods that form Abar^M as a matrix (``abar_power``)
POWER_METHODS = ("structured-squaring", "dense-squaring")


def _abar(F, model: DPLR, step, method: str) -> Result:
    """Abar as a dense matrix (rows) by the method's solve."""
    if method == "structured-squaring":
        res = bilinear(F, model, step)
        return Result(Status.OK, res.value[0]) if res.ok else res
    fast = F.primitive("solve")
    if fast is None:
        res = bilinear(F, model, step, method="dense")
        return Result(Status.OK, res.value[0]) if res.ok else res
    A = model.dense_A(F)
    alpha = half_step(F, read_step(F, step))
    N = model.N
    one, zero = F.one(), F.zero()
    G = [[F.sub(one if i == j else zero, F.mul(alpha, A[i][j])) for j in range(N)] for i in range(N)]
    plus = [[F.add(one if i == j else zero, F.mul(alpha, A[i][j])) for j in range(N)] for i in range(N)]
    X = fast(G, plus)
    return Result(Status.OK, X) if X is not None else undecided("G = I - (step/2) A not certified invertible")


def abar_power(F, model: DPLR, step, M: int, method: str = "structured-squaring") -> Result:
    """``Abar^M`` for any integer ``M >= 1`` by repeated squaring of Abar formed by ``method``
    (``"structured-squaring"`` or ``"dense-squaring"``): ``log2 M`` squarings, and one more
    product per further bit of M (a power of two takes the squarings alone; S4 checkpoints
    store C~ for lengths that are not).  Statuses of forming Abar:
    ``singular-bilinear-matrix``, ``undecided`` (``info["reason"]``)."""
    if not isinstance(M, int) or isinstance(M, bool) or M < 1:
        raise ValueError(f"M must be an integer >= 1, got {M!r}")
    if method not in POWER_METHODS:
        raise ValueError(f"abar_power: method must be one of {POWER_METHODS}, got {method!r}")
    res = _abar(F, model, step, method)
    if not res.ok:
        return res
    square, P = res.value, None
    for bit in range(M.bit_length()):
        if bit:
            square = F.matmul(square, square)
        if M >> bit & 1:
            P = square if P is None else F.matmul(P, square)
    return Result(Status.OK, P)


def c_tilde(F, model: DPLR, step, M: int, method: str = "adjoint-steps", max_radius: float | None = None,
            kernel_eps: Any = None) -> Result:
    """``C~ = (I - Abar^M)* C`` of the model's C by ``method`` (see the module).
    ``value``: the N entries of C~; ``info["method"]`` the method that formed it.  Statuses:
    ``singular-bilinear-matrix`` (G singular), ``undecided`` (``info["reason"]``: a decision
    the field could not make).  ``max_radius``: see ``"contractive-squaring"``; without it,
    ``kernel_eps`` (the eps the kernel is to be certified to) sets it by
    ``c_tilde_contractive.kernel_radius_budget``."""
    check_power_of_two(M)
    if method not in METHODS + BALL_METHODS:
        raise ValueError(f"c_tilde: method must be one of {METHODS + BALL_METHODS}, got {method!r}")
    if method == "contractive-squaring":
        if not isinstance(F, BallField):
            raise ValueError("c_tilde: the method 'contractive-squaring' needs a ball field")
        if max_radius is not None:
            limit = float(max_radius)
        elif kernel_eps is not None:
            limit = kernel_radius_budget(model, step, kernel_eps, F.prec)
        else:
            limit = 2.0 ** -F.prec
        ct = contractive_c_tilde(F, model, step, M, limit)
        if ct is not None:
            return Result(Status.OK, ct, {"method": method})
        method = "dense-squaring"
    if method == "adjoint-steps":
        res, m, _ = structured_solver(F, model, step, adjoint=True)
        if not res.ok:
            return res
        S = res.value
        v = m.C
        for _ in range(M):
            v = S.apply_plus(S.solve(v))
        return Result(Status.OK, [F.sub(c, x) for c, x in zip(m.C, v)], {"method": method})
    res = abar_power(F, model, step, M, method)
    if not res.ok:
        return res
    C = in_field(F, model).C
    return Result(Status.OK, [F.sub(c, x) for c, x in zip(C, F.matvec(conj_transpose(F, res.value), C))],
                  {"method": method})


def c_from_c_tilde(F, model: DPLR, step, M: int, c_tilde: list,
                   method: str = "structured-squaring") -> Result:
    """The C with ``(I - Abar^M)* C = c_tilde``, solved by elimination; Abar^M by
    ``abar_power(method)``.  Statuses: those of ``abar_power``, and ``singular`` /
    ``undecided`` of the solve (``linalg.solve``)."""
    res = abar_power(F, model, step, M, method)
    if not res.ok:
        return res
    P, N = res.value, model.N
    G = [[F.sub(F.one() if i == j else F.zero(), F.conj(P[j][i])) for j in range(N)] for i in range(N)]
    return solve(F, G, [F.from_number(x) for x in c_tilde])
