"""epsilon-accurate Cauchy sums on the root grid by hierarchical arcs.

``y_k = sum_j a_j / (z_k - mu_j)``, ``z_k = w^k``, ``0 <= k < M``, ``w = exp(-2*pi*i/M)``
(or a given primitive M-th root), to relative accuracy ``eps``:
``|y^_k - y_k| <= eps * S_abs(k) + rounding``, ``S_abs(k) = sum_j |a_j| / |z_k - mu_j|``.

Poles with ``|mu| <= rho0`` (inner root zone) and ``|mu| >= 1/rho0`` (outer root zone) are
summed by truncated power series and one DFT; the others descend a tree of arcs of the
circle (:mod:`.geometry`).  A pole is expanded about the first arc with
``R_l / |mu - c| <= theta`` (pole-to-local, P2L); expansions move to the children by
exact re-centring (local-to-local, L2L), are evaluated at the leaves (L2P), and a pole
admissible for no arc down to a leaf is summed there directly (near field).  Every
(pole, node) pair is handled by exactly one mechanism (proofs/fast_cauchy.md).

The truncation remainder of each expansion is known exactly, and its bound ``E_k`` is
computed from certified enclosures where the field's elements enclose their values
(``F.encloses``).  Where they can also carry an error (enclosing and not exact), it is
added to the results (``F.add_error``), so the returned balls contain the exact sums;
every field reports ``E_k`` in ``info["bound"]`` (certified in enclosing fields,
uncertified in floats).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ....arith import check_power_of_two
from ...result import OK, Result
from ..grid import grid_index, grid_status, permutation
from .bounds import truncation_bounds
from .geometry import Geometry, check_unit, least_order, make_tree
from .phases import Trace, run
from .plan import plan_pairs


def _read(F, poles: Any, weight_sets: list) -> tuple[list, list]:
    poles = [F.from_number(x) for x in poles]
    W = [[F.from_number(x) for x in a] for a in weight_sets]
    for i, a in enumerate(W):
        if len(a) != len(poles):
            raise ValueError(f"weight set {i}: {len(a)} weights but {len(poles)} poles")
    return poles, W


def _check_centres(F, M: int) -> None:
    try:
        F.root_of_unity(2 * M, 1)
    except ValueError as e:
        raise ValueError(f"cauchy_fast needs the {2 * M}-th roots of unity in the field (arc centres): {e}")


def cauchy_fast_many(F, poles: Any, weight_sets: list, M: int, eps: float, omega=None,
                     theta: float = 0.4, rho0: float = 0.5, leaf: int | None = None, *,
                     trace_pairs: bool = False) -> Result:
    """:func:`cauchy_fast` for several weight vectors sharing the poles (the geometry,
    the shifts and the pole powers are formed once).  ``value[i]`` is the sum vector of
    ``weight_sets[i]``.  ``info`` as :func:`cauchy_fast`, except that ``"bound"``,
    ``"B_in"`` and ``"B_out"`` hold one entry per weight set."""
    check_power_of_two(M)
    eps = check_unit(eps, "eps")
    theta = check_unit(theta, "theta")
    rho0 = check_unit(rho0, "rho0")
    poles, W = _read(F, poles, weight_sets)
    _check_centres(F, M)
    found = grid_index(F, omega, M)
    if not found.ok:
        return found
    s_omega = found.value
    p, p0 = least_order(eps, theta), least_order(eps, rho0)
    tree = make_tree(M, leaf, p)
    geom = Geometry(F, poles)
    plan = plan_pairs(geom, M, theta, rho0, tree)
    trace = Trace(len(poles), M) if trace_pairs else None
    absw = np.array([[geom.weight_upper(x) for x in a] for a in W], dtype=float).reshape(len(W), len(poles))
    E, B_in, B_out = truncation_bounds(plan, absw, p, p0)
    carries = F.encloses and not F.exact  # the bound joins the values
    y, zero, unknown = run(F, plan, poles, W, p, p0, trace, E if carries else None)
    stop = grid_status(zero, unknown, s_omega, M)
    if stop is not None:
        return stop
    if s_omega != 1:
        perm = permutation(s_omega, M)
        y = [[row[k] for k in perm] for row in y]
        E = E[:, perm]
    info = {"p": p, "p0": p0, "theta": theta, "rho0": rho0, "leaf": tree.leaf,
            "levels": (tree.l0, tree.L), "certified": geom.certified, "error_added": carries,
            "zones": {"inner": len(plan.inner), "outer": len(plan.outer), "circle": len(plan.circle)},
            "pairs": {"tested": plan.tested, "expanded": plan.expanded, "near": int(plan.near[0].size)},
            "bound": [e.tolist() for e in E], "B_in": B_in.tolist(), "B_out": B_out.tolist()}
    if trace is not None:
        info["trace"] = trace.as_dict()
    return Result(OK, y, info)


def cauchy_fast(F, poles: Any, weights: Any, M: int, eps: float, omega=None,
                theta: float = 0.4, rho0: float = 0.5, leaf: int | None = None, *,
                trace_pairs: bool = False) -> Result:
    """``y_k = sum_j a_j / (w^k - mu_j)`` on the M roots to relative accuracy eps:
    ``|y^_k - y_k| <= eps * S_abs(k)`` plus rounding, by root-zone power sums and
    hierarchical arcs with admissibility ratio ``theta`` (module docstring).

    Orders: ``p = ceil(ln eps / ln theta)`` for the arcs, ``p0 = ceil(ln eps / ln rho0)``
    for the root zones; ``leaf`` nodes per leaf arc (default the least power of two
    >= p).  Where F encloses and can carry an error (BallField, and Counting or Tracing
    over it) the truncation bound ``E_k`` is added to each value, so the results contain
    the exact sums; elsewhere ``value`` is the truncated sum (within ``E_k`` of the exact
    sum in ExactField; in float fields ``E_k`` is an estimate that ignores rounding).
    The zones and admissibility are decided on enclosures where F encloses, on the float
    values ``F.to_complex`` elsewhere.

    Statuses as :func:`cauchy_direct`: ``"collision"`` (``info["roots"]``) when a pole is
    certainly a node, ``"undecided"`` when a near-field difference may be zero or omega's
    index is undecided.

    ``info`` on ``ok``: ``"p"``, ``"p0"`` (orders), ``"theta"``, ``"rho0"``, ``"leaf"``,
    ``"levels"`` (``(l0, L)``, the coarsest and the leaf level), ``"certified"`` (the
    decisions and bounds are certified: F encloses), ``"error_added"`` (the bounds are in
    the values), ``"zones"`` (``{"inner", "outer", "circle"}``: poles per zone),
    ``"pairs"`` (``{"tested", "expanded", "near"}``: (pole, arc) tests, expansions and
    near (pole, leaf) pairs), ``"bound"`` (the M bounds ``E_k``), ``"B_in"``, ``"B_out"``
    (the root-zone parts of every ``E_k``), and with ``trace_pairs`` ``"trace"``:
    ``{"count", "mechanism"}`` (n x M arrays: how often and by which mechanism code each
    (pole, node) pair was reached, nodes indexed on the grid exp(-2 pi i k/M)) and
    ``"arcs"`` (the expanded (pole, level, arc) triples).

    >>> from fractions import Fraction
    >>> from s4cert.arith import BallField
    >>> F = BallField(80)
    >>> r = cauchy_fast(F, [F.from_number(2), F.from_number(0.25)], [F.one(), F.one()], 4, 1e-6)
    >>> r.ok, r.value[0].contains(F.from_number(Fraction(1, 3)))  # 1/(1-2) + 1/(1-1/4)
    (True, True)
    """
    res = cauchy_fast_many(F, poles, [weights], M, eps, omega, theta, rho0, leaf, trace_pairs=trace_pairs)
    if not res.ok:
        return res
    info = dict(res.info)
    info["bound"] = info["bound"][0]
    info["B_in"], info["B_out"] = info["B_in"][0], info["B_out"][0]
    return Result(OK, res.value[0], info)
