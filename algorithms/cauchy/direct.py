"""Cauchy sums on the root grid by direct summation: the O(nM) reference."""
from __future__ import annotations

from ..result import OK, Result, zero_partition
from .grid import check_sums, grid_status, nodes


def cauchy_direct(F, poles: list, weights: list, M: int, omega=None) -> Result:
    """``y_k = sum_j a_j / (w^k - mu_j)`` with every term summed directly, nodes w^k
    formed as in :func:`grid.nodes`.  ``value``: the M sums.  Statuses: ``"collision"``
    with ``info["roots"]`` (the k with some difference certainly zero), ``"undecided"``
    when a difference may be zero; ``info`` is empty on ``ok``."""
    check_sums(poles, weights, M)
    zero, unknown, out = [], False, []
    for k, z in enumerate(nodes(F, M, omega)):
        row = [F.sub(z, mu) for mu in poles]
        z_, _, u = zero_partition(F, row)
        if z_:
            zero.append(k)
        unknown = unknown or u
        if zero or unknown:
            continue
        acc = F.zero()
        for a, d in zip(weights, row):
            acc = F.add(acc, F.div(a, d))
        out.append(acc)
    return grid_status(zero, unknown) or Result(OK, out)


def cauchy_direct_many(F, poles: list, weight_sets: list[list], M: int, omega=None) -> Result:
    """``cauchy_direct`` for several weight sets on the same poles: at each node the
    reciprocals ``1/(w^k - mu_j)`` are formed once and every set's sum is
    ``sum_j a_j (1/(w^k - mu_j))`` (one division per (node, pole) in place of one per set;
    in a rounded field each reciprocal and product is one operation within u).
    ``value``: one list of M sums per set.  Statuses as ``cauchy_direct``'s."""
    for weights in weight_sets:
        check_sums(poles, weights, M)
    zero, unknown = [], False
    out: list[list] = [[] for _ in weight_sets]
    one = F.one()
    for k, z in enumerate(nodes(F, M, omega)):
        row = [F.sub(z, mu) for mu in poles]
        z_, _, u = zero_partition(F, row)
        if z_:
            zero.append(k)
        unknown = unknown or u
        if zero or unknown:
            continue
        inv = [F.div(one, d) for d in row]
        for s, weights in enumerate(weight_sets):
            acc = F.zero()
            for a, t in zip(weights, inv):
                acc = F.add(acc, F.mul(a, t))
            out[s].append(acc)
    return grid_status(zero, unknown) or Result(OK, out)
