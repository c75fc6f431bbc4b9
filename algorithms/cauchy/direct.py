"""Cauchy sums on the root grid by direct summation: the O(nM) reference."""
from __future__ import annotations

from ..result import OK, Result, zero_partition
from .grid import check_sums, grid_status, nodes


def _node_sums(F, poles: list, M: int, omega, sums_at) -> Result:
    """The loop both direct routes share: at each node w^k the differences w^k - mu_j, their
    zero tests, and ``sums_at(row)`` (the node's values) while no difference is zero or
    undecided.  ``value``: the per-node values in order; statuses as ``cauchy_direct``'s."""
    zero, unknown, out = [], False, []
    for k, z in enumerate(nodes(F, M, omega)):
        row = [F.sub(z, mu) for mu in poles]
        z_, _, u = zero_partition(F, row)
        if z_:
            zero.append(k)
        unknown = unknown or u
        if zero or unknown:
            continue
        out.append(sums_at(row))
    return grid_status(zero, unknown) or Result(OK, out)


def cauchy_direct(F, poles: list, weights: list, M: int, omega=None) -> Result:
    """``y_k = sum_j a_j / (w^k - mu_j)`` with every term summed directly, nodes w^k
    formed as in :func:`grid.nodes`.  ``value``: the M sums.  Statuses: ``"collision"``
    with ``info["roots"]`` (the k with some difference certainly zero), ``"undecided"``
    when a difference may be zero; ``info`` is empty on ``ok``."""
    check_sums(poles, weights, M)

    def sums_at(row):
        acc = F.zero()
        for a, d in zip(weights, row):
            acc = F.add(acc, F.div(a, d))
        return acc
    return _node_sums(F, poles, M, omega, sums_at)


def cauchy_direct_many(F, poles: list, weight_sets: list[list], M: int, omega=None) -> Result:
    """``cauchy_direct`` for several weight sets on the same poles: at each node the
    reciprocals ``1/(w^k - mu_j)`` are formed once and every set's sum is
    ``sum_j a_j (1/(w^k - mu_j))`` (one division per (node, pole) in place of one per set;
    in a rounded field each reciprocal and product is one operation within u).
    ``value``: one list of M sums per set.  Statuses as ``cauchy_direct``'s."""
    for weights in weight_sets:
        check_sums(poles, weights, M)
    one = F.one()

    def sums_at(row):
        inv = [F.div(one, d) for d in row]
        out = []
        for weights in weight_sets:
            acc = F.zero()
            for a, t in zip(weights, inv):
                acc = F.add(acc, F.mul(a, t))
            out.append(acc)
        return out
    res = _node_sums(F, poles, M, omega, sums_at)
    if not res.ok:
        return res
    return Result(OK, [[node[s] for node in res.value] for s in range(len(weight_sets))])
