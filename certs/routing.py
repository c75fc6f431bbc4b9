"""Routing decisions made exactly from exact inputs.

Floats and rationals given by a user are exact Gaussian rationals, so the filter's
decisions can be taken in exact arithmetic instead of with balls:

* the partition lambda_j = -2/step, by rational arithmetic;
* pole/grid collisions: mu_j = (a - lambda_j)/(a + lambda_j) is a Gaussian rational, and
  the only Gaussian-rational roots of unity are 1, -1, i, -i; so mu_j lies on the grid of
  M points exactly when it is 1, or -1 (M >= 2), or +-i (M >= 4);
* a singular G = I - (step/2) A (``g_not_invertible``: the structured solver, exactly);
* a singular correction W(z_k) at one root, by the filter's correction in exact
  arithmetic in Q(zeta_m), m the order of z_k (used only where balls could not decide).
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any


from flint import acb, arb, ctx, fmpq

from ..algorithms.s4.bilinear_map import NUMBERS, rate
from ..algorithms.s4.correction import is_singular
from ..algorithms.s4.dplr import DPLR
from ..algorithms.s4.filter import correction_at
from ..algorithms.s4.solver import structured_solver
from ..arith import BallField, ExactField, Truth, exact_parts
from ..arith.convert import BINARY64

from .io.numbers import arb_point

Q2 = tuple[Fraction, Fraction]


def _is_exact(x: Any) -> bool:
    """``_parts(x) is not None``, without forming Fractions for finite binary64 scalars."""
    if type(x) in BINARY64 and math.isfinite(x.real) and math.isfinite(x.imag):
        return True
    return _parts(x) is not None


def _parts(x: Any) -> Q2 | None:
    """Exact parts of a number, or of a ball of radius 0; None for a proper ball;
    ValueError for anything else (not a number)."""
    if isinstance(x, (arb, acb)):
        z = acb(x)
        if z.is_exact():
            return arb_point(z.real.mid()), arb_point(z.imag.mid())
        return None
    return exact_parts(x)


def _entries(model: DPLR, step: Any, c_tilde: Any) -> list:
    entries = list(model.Lambda) + model.B + model.C + [x for row in model.P + model.Q for x in row] + [step]
    return entries + (list(c_tilde) if c_tilde is not None else [])


def exact_inputs(model: DPLR, step: Any, c_tilde: Any = None) -> bool:
    """Whether every number of the problem is exact (numbers, or balls of radius 0)."""
    return all(_is_exact(x) for x in _entries(model, step, c_tilde))


def input_bits(model: DPLR, step: Any, c_tilde: Any = None) -> int | None:
    """The relative accuracy of the least accurate ball input, in bits (None: no balls).
    Beyond about this precision, raising the working precision cannot sharpen a result."""
    bits = [acb(x).rel_accuracy_bits() for x in _entries(model, step, c_tilde)
            if isinstance(x, (arb, acb)) and not acb(x).is_exact()]
    return max(0, min(bits)) if bits else None


def step_is_exact(step: Any) -> bool:
    """Whether the step is exact (a number, or a ball of radius 0)."""
    return _parts(step) is not None


def exact_partition(model: DPLR, step: Any) -> list[int] | None:
    """The j with lambda_j = -2/step: exactly for exact entries, by the ball itself for a
    ball entry (which can only be certainly different); None when a ball entry contains
    -2/step, so its input precision cannot decide.  The step must be exact."""
    a = rate(NUMBERS, _parts(step)[0])
    out = []
    for j, lam in enumerate(model.Lambda):
        if type(lam) in BINARY64 and math.isfinite(lam.real) and math.isfinite(lam.imag) and lam.imag != 0:
            continue  # exact, and not real: not -2/step
        parts = _parts(lam)
        if parts is not None:
            if parts[0] + a == 0 and parts[1] == 0:
                out.append(j)
            continue
        z = acb(lam)
        with ctx.workprec(max(128, z.rel_accuracy_bits() + 64)):  # rounding far below z's own radius
            shifted = z + arb(fmpq(a.numerator, a.denominator))
        if shifted.contains(0):
            return None
    return out


def exact_collisions(model: DPLR, step: Any, M: int, exceptional: list[int]) -> list[int]:
    """The regular j whose pole mu_j = (a - lambda_j)/(a + lambda_j) lies on the grid of M
    roots of unity, exactly.  The grid's Gaussian-rational points are 1, -1 (M >= 2) and
    +-i (M >= 4), and mu = 1 iff lambda = 0, mu = -1 never (a != 0), mu = i iff
    lambda = -i a, mu = -i iff lambda = i a."""
    a = rate(NUMBERS, _parts(step)[0])
    out = []
    skip = set(exceptional)
    for j, lam in enumerate(model.Lambda):
        if j in skip or (type(lam) in BINARY64 and math.isfinite(lam.real) and math.isfinite(lam.imag)
                          and lam.real != 0):
            continue  # exact with a nonzero real part: no collision
        parts = _parts(lam)
        if parts is None:  # ball entries: decided by the ball run
            continue
        re, im = parts
        if re == 0 and (im == 0 or (M >= 4 and abs(im) == a)):
            out.append(j)
    return out


def correction_singular_at(model: DPLR, step: Any, M: int, k: int) -> bool:
    """Whether W(z_k) = I + beta S_QP(z_k) is singular, decided exactly in Q(zeta_m), m the
    order of z_k (z_k != -1, no diagonal resonance at z_k): the filter's correction
    (``algorithms.s4.filter.correction_at``) in the exact field."""
    m = M
    while m > 1 and k % 2 == 0 and k:
        k //= 2
        m //= 2
    if k == 0:
        m, k = 1, 0
    E = ExactField(max(4, m))
    W = correction_at(E, model, step, E.root_of_unity(m, k))
    if not W.ok:
        raise ArithmeticError(f"the exact correction at z_{k} returned {W.status}")
    return is_singular(E, W.value) is Truth.TRUE


def g_not_invertible(model: DPLR, step: Any, exact: bool) -> str:
    """Why G = I - (step/2) A is not known invertible ("" when it is): decided exactly by
    the structured (Woodbury/bordered) solver for exact inputs (O(N r^2) operations), in
    balls a little past the inputs' accuracy otherwise.  With a supplied C~ nothing else
    forms Abar, so a singular G (no kernel) must be caught here."""
    if exact:
        # balls certify an invertible G cheaply in the usual case; only an undecided or
        # singular answer is settled exactly
        with ctx.workprec(128):  # the field's operations then skip their precision switches
            if structured_solver(BallField(128), model, step)[0].ok:
                return ""
        res = structured_solver(ExactField(4), model, step)[0]
        return "" if res.ok else f"{res.status}: G = I - (step/2) A is singular (decided exactly): no kernel exists"
    bits = input_bits(model, step)
    res = structured_solver(BallField(max(128, (bits or 0) + 64)), model, step)[0]
    return "" if res.ok else (f"undecided: G = I - (step/2) A is not certified invertible from the ball inputs "
                              f"({res.status}); give them more precisely")
