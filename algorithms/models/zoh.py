"""The zero-order-hold discretization of the continuous-time LTI model, certified
(proofs/lti_solution.md).

With step ``h`` and the spec's indexing ``x_t = Abar x_{t-1} + Bbar u_t``:
``Abar = e^{A h}``, ``Bbar = Gamma0 = int_0^h e^{A s} ds B`` -- exact at the sample times
(``x_t = x(t0 + (t+1) h)`` when ``u`` equals ``u_t`` on ``[t0 + t h, t0 + (t+1) h)``).
Both come from one augmented exponential (:func:`~.lti_simulate.augmented_exponential`),
a ball-only certified procedure, so the result is over ``BallField``.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from flint import acb, ctx

from ...arith import BallField
from .lti_model import LTIModel, read_positive
from .lti_simulate import augmented_exponential, check_prec, flint_matrix
from .ssm import DiscreteLTI


def zoh(model: LTIModel, step: Any, prec: int = 128) -> DiscreteLTI:
    """The zero-order-hold discretization as balls in ``BallField(prec)``:
    ``A = e^{A h}``, ``B = int_0^h e^{A s} ds B`` (one augmented exponential).

    >>> from s4cert.algorithms.models.lti_model import LTIModel
    >>> d = zoh(LTIModel([[0]], [1], [1]), 1)
    >>> xs, ys = d.run([1, 2, 3])
    >>> [d.F.midpoint(y[0]).real for y in ys]
    [1.0, 3.0, 6.0]
    """
    check_prec(prec)
    h = read_positive(step, "step")
    real = model.is_real
    F = BallField(prec)
    with ctx.workprec(prec):
        Phi, G0, _ = augmented_exponential(flint_matrix(model.A, real), flint_matrix(model.B, real), h)
        Ad = [[acb(Phi[i, j]) for j in range(model.N)] for i in range(model.N)]
        Bd = [[acb(G0[i, j]) for j in range(model.m)] for i in range(model.N)]
    return DiscreteLTI.of_model(F, model, Ad, Bd, h)


def zoh_float64(model: LTIModel, step: Any, prec: int = 128) -> tuple[np.ndarray, np.ndarray]:
    """``(Abar, Bbar)`` of the ZOH discretization as float64 (real models) or
    complex128 arrays: the certified balls' midpoints rounded to nearest."""
    d = zoh(model, step, prec)
    Ad, Bd, _, _ = d.to_numpy()
    return (Ad.real.copy(), Bd.real.copy()) if model.is_real else (Ad, Bd)
