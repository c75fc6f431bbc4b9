"""Which mechanism handles each (pole, node) pair: the zones and the downward pass
(proofs/fast_cauchy.md §2, §5)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .geometry import INNER, OUTER, ArcTree, Geometry


@dataclass
class Plan:
    """Which mechanism handles each (pole, node) pair.

    ``inner``/``outer``/``circle``: pole indices by zone; ``mag[j]``: upper |mu_j| for
    inner poles, lower |mu_j| for outer ones; ``levels[l] = (j, b, lo, tb)``: the pairs
    expanded about arc (l, b), with a lower bound ``lo`` of |mu_j - c| and an upper bound
    ``tb`` of R_l / |mu_j - c| (both certified in the certified fields); ``near``: the
    (j, b) pairs summed directly on leaf b; ``tested``: how many (pole, arc) tests ran.
    """

    tree: ArcTree
    theta: float
    rho0: float
    certified: bool
    inner: list
    outer: list
    circle: list
    mag: np.ndarray
    levels: dict = field(default_factory=dict)
    near: tuple = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    tested: int = 0

    @property
    def expanded(self) -> int:
        """How many (pole, arc) pairs are expanded."""
        return int(sum(v[0].size for v in self.levels.values()))


def _zones(geom: Geometry, rho0: float) -> tuple[list, np.ndarray]:
    n = geom.mu.size
    zones, mag = [], np.full(n, math.nan)
    for j in range(n):
        z, m = geom.zone(j, rho0)
        zones.append(z)
        mag[j] = m
    return zones, mag


def plan_pairs(geom: Geometry, M: int, theta: float, rho0: float, tree: ArcTree) -> Plan:
    """Zones, then the downward pass: every circle pole meets the 2^l0 arcs of level
    l0; an admissible pair is expanded, an inadmissible one passes to the two children
    (or to the near list at the leaves)."""
    zones, mag = _zones(geom, rho0)
    n = len(zones)
    plan = Plan(tree, theta, rho0, geom.certified,
                [j for j in range(n) if zones[j] == INNER],
                [j for j in range(n) if zones[j] == OUTER],
                [j for j in range(n) if zones[j] == 0], mag)
    width = 1 << tree.l0
    js = np.repeat(np.array(plan.circle, dtype=np.int64), width)
    bs = np.tile(np.arange(width, dtype=np.int64), len(plan.circle))
    for l in range(tree.l0, tree.L + 1):
        plan.tested += js.size
        R = tree.radius(l)
        d = np.abs(geom.mu[js] - np.exp(-1j * np.pi * tree.centre_index(l, bs) / M))
        with np.errstate(divide="ignore", invalid="ignore"):
            cand = (d > 0) & (R <= theta * d)
        ci = np.flatnonzero(cand)
        if geom.certified:
            ok, lo, tb = geom.certify(tree, l, js[ci], bs[ci], theta)
            acc = ci[ok]
            lo, tb = lo[ok], tb[ok]
        else:
            acc = ci
            lo = d[acc]
            tb = R / lo
        mask = np.zeros(js.size, dtype=bool)
        mask[acc] = True
        order = np.lexsort((js[acc], bs[acc]))
        plan.levels[l] = (js[acc][order], bs[acc][order], lo[order], tb[order])
        js, bs = js[~mask], bs[~mask]
        if l < tree.L:
            js = np.repeat(js, 2)
            bs = (2 * bs[:, None] + np.array([0, 1])).reshape(-1)
    order = np.lexsort((js, bs))
    plan.near = (js[order], bs[order])
    return plan
