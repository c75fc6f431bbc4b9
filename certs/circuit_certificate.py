"""The a-priori mode's certificate alone (``s4cert kernel --mode a-priori --certificate-only``).

The same steps as ``certify_kernel(mode="a-priori")`` up to the circuit: the exact
partition and collisions, the certifying ball run (whose precision is the a-posteriori
route's, ``a_posteriori_bits``), then ``apriori.apriori_certificate``: each route's
circuit traced and bounded as it runs, so T0, V0, D0, K0 and u are those of the full mode
without the run at u and in memory of the live wires only.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable

from ..algorithms.dft import next_power_of_two
from ..algorithms.s4.dplr import DPLR, check_length, read_step
from ..arith import Float64Field, exact_parts

from . import ball_run, routing
from .apriori import apriori_certificate
from .errors import CertificationError

#: u needs at most this many bits before the route choice prefers another (as the full mode)
DEFAULT_LIMIT = 1 << 24


def _eps(eps: Any) -> Fraction:
    re, im = exact_parts(eps, "eps")
    if im != 0 or re <= 0:
        raise ValueError(f"eps must be a real number > 0, got {eps!r}")
    return re


def certify_circuit(model: DPLR, step: Any, L: int, eps: Any, c_tilde: Any = None, *, cauchy: str = "auto",
                    max_prec: int = 1 << 16, limit: int = DEFAULT_LIMIT,
                    progress: Callable[[str], None] | None = None) -> dict:
    """The rational-circuit certificate of the a-priori mode for ``model`` at ``step``,
    length L and accuracy eps: ``T0``, ``V0``, ``D0``, ``log2_K0``, ``log2_u``,
    ``precision_bits`` (= -log2 u), ``circuit_cauchy``, ``routes``, and
    ``a_posteriori_bits`` (the ball run's precision for the same eps, the Cauchy route
    ``cauchy`` as in ``certify_kernel``).  The same values as the full a-priori run's
    certificate.  ValueError for bad input, CertificationError when it cannot be made."""
    if not isinstance(model, DPLR):
        raise ValueError("model must be an algorithms.dplr.DPLR")
    L = check_length(L)
    eps_q = _eps(eps)
    read_step(Float64Field(), step)
    progress = progress or (lambda msg: None)
    if c_tilde is not None:
        c_tilde = list(c_tilde)
        if len(c_tilde) != model.N:
            raise ValueError(f"c_tilde: expected {model.N} entries, got {len(c_tilde)}")
    route = ball_run.choose_route(cauchy, model.N)
    M = next_power_of_two(L)
    exact = routing.exact_inputs(model, step, c_tilde)
    exceptional = None
    if routing.step_is_exact(step):
        exceptional = routing.exact_partition(model, step)
        if exceptional is None:
            raise CertificationError("undecided: a ball entry of Lambda contains -2/step; give it more precisely")
        hit = routing.exact_collisions(model, step, M, exceptional)
        if hit:
            raise CertificationError(f"resonant-diagonal: pole mu_{hit[0]} lies on the root grid (decided exactly)")
    if c_tilde is not None and (why := routing.g_not_invertible(model, step, exact)):
        raise CertificationError(why)
    run = ball_run.ball_filter(model, step, L, eps_q, c_tilde, exceptional, exact, max_prec, progress, route)
    if run.status != "ok":
        raise CertificationError(f"{run.status}: {run.reason}", status=run.status)
    cert = apriori_certificate(model, step, L, eps_q, c_tilde, run.result.info["exceptional"], run.F, limit,
                               progress)
    return {**cert, "a_posteriori_bits": run.prec, "a_posteriori_cauchy": run.result.info["cauchy"]["route"]}
