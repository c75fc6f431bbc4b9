"""The phases of the arc method on field operations (proofs/fast_cauchy.md §3, §4, §6).

Written once for every field: the blocks of work are matrix products ``F.matmul``
(the root power sums, the expansions about an arc, the shifts of a level, the leaf
evaluation, the near sums of a leaf), which a field may supply with fast kernels
(BallField: acb_mat).  Accumulators start as None, so a first contribution costs no
addition.
"""
from __future__ import annotations

import math
from itertools import groupby

import numpy as np

from ...dft import dft
from .constants import Constants, powers
from .geometry import ARC, INNER, NEAR, OUTER, ArcTree
from .plan import Plan
from ....arith import Truth


class Trace:
    """Which mechanism reached each (pole, node) pair, and how often (``trace_pairs``)."""

    def __init__(self, n: int, M: int):
        self.count = np.zeros((n, M), dtype=np.int32)
        self.mechanism = np.zeros((n, M), dtype=np.int32)
        self.arcs: list = []

    def mark(self, j: int, lo: int, hi: int, code: int) -> None:
        self.count[j, lo:hi] += 1
        self.mechanism[j, lo:hi] = code

    def as_dict(self) -> dict:
        return {"count": self.count, "mechanism": self.mechanism, "arcs": self.arcs}


def _record_roots(trace: Trace | None, plan: Plan) -> None:
    if trace is not None:
        for j in plan.inner:
            trace.mark(j, 0, plan.tree.M, INNER)
        for j in plan.outer:
            trace.mark(j, 0, plan.tree.M, OUTER)


def _record_arc(trace: Trace | None, tree: ArcTree, l: int, j: int, b: int) -> None:
    if trace is not None:
        s = tree.size(l)
        trace.mark(j, b * s, (b + 1) * s, ARC + l)
        trace.arcs.append((j, l, b))


def _accumulate(F, vec: list, i: int, v) -> None:
    vec[i] = v if vec[i] is None else F.add(vec[i], v)


def _blocks(items: list, size: int):
    for lo in range(0, len(items), size):
        yield items[lo:lo + size]


#: the most pairs of one arc or leaf taken into one product (bounds the words alive)
BLOCK = 16


def _pair_blocks(js: np.ndarray, bs: np.ndarray):
    """``(b, [j, ...])`` for the pairs sorted by arc b, at most BLOCK poles at a time."""
    for b, group in groupby(zip(js.tolist(), bs.tolist()), key=lambda jb: jb[1]):
        for block in _blocks([j for j, _ in group], BLOCK):
            yield b, block


# -- P1: the root zones ---------------------------------------------------------------------

def _roots(F, plan: Plan, poles: list, W: list, p0: int) -> list:
    """y_k = sum_r x_r w^(-k r) with ``x_r = sum_{m+1 = r mod M} S_m - sum_{-m = r mod M} T_m``,
    ``S = W_inner (mu_j^m)``, ``T = W_outer (mu_j^(-m-1))`` as products over blocks of
    poles (at most max(BLOCK, M/p0) power rows alive)."""
    M, nw = plan.tree.M, len(W)
    if not (plan.inner or plan.outer):
        return [[None] * M for _ in range(nw)]
    x = [[None] * M for _ in range(nw)]
    size = max(BLOCK, M // p0)
    for block in _blocks(plan.inner, size):
        S = F.matmul([[a[j] for j in block] for a in W], [powers(F, poles[j], p0) for j in block])
        for i in range(nw):
            for m in range(p0):
                _accumulate(F, x[i], (m + 1) % M, S[i][m])
    for block in _blocks(plan.outer, size):
        V = [powers(F, F.div(F.one(), poles[j]), p0 + 1)[1:] for j in block]
        T = F.matmul([[a[j] for j in block] for a in W], V)
        for i in range(nw):
            for m in range(p0):
                r = (-m) % M
                x[i][r] = F.neg(T[i][m]) if x[i][r] is None else F.sub(x[i][r], T[i][m])
    out = []
    for row in x:
        X = dft(F, [F.zero() if v is None else v for v in row])
        out.append([X[(-k) % M] for k in range(M)])
    return out


# -- P2L, L2L, L2P: the arcs ----------------------------------------------------------------------

def _plus(F, C: list, V: list, S: list | None) -> list:
    """``C V + S`` as one product ``[C | I] [V ; S]`` (S: a row per row of C, or None):
    the sum is formed inside the product, not entry by entry."""
    if S is None:
        return F.matmul(C, V)
    one, zero = F.one(), F.zero()
    Cx = [list(c) + [one if i == k else zero for k in range(len(C))] for i, c in enumerate(C)]
    return F.matmul(Cx, list(V) + list(S))


def _orders(p: int, nw: int) -> tuple[int, int]:
    """``(q, r)``, ``q r >= p``: one weight set splits ``h = a q + t`` with
    ``q = ceil(sqrt(p))``; several take all p powers per pair (q = p, r = 1)."""
    q = math.isqrt(p - 1) + 1 if nw == 1 else p
    return q, -(-p // q)


def _p2l(F, plan: Plan, l: int, poles: list, W: list, p: int, consts: Constants, coeffs: dict,
         trace: Trace | None) -> None:
    """The expansions about the arcs of level l added to ``coeffs[b]`` (arc b: a row of
    p coefficients per weight set): ``L_h += c_ij w_j^h``, ``c_ij = a_ij / d_j``,
    ``d_j = c - mu_j``, ``w_j = m_arc / d_j``.  With ``h = a q + t`` (:func:`_orders`),
    ``L_(aq+t) = sum_j (c_ij w_j^(aq)) w_j^t``: per block of pairs one product
    ``(c_ij w_j^(aq))_(ia, j) (w_j^t)_(j, t)``, so a pair needs about q + nw r
    multiplications of its own.  The coefficients L the arc holds are added; when r = 1
    inside the product, as ``[C | I] [V ; L]``."""
    js, bs, _, _ = plan.levels[l]
    nw = len(W)
    q, r = _orders(p, nw)
    for b, block in _pair_blocks(js, bs):
        left, right = [[] for _ in range(nw * r)], []
        for j in block:
            inv = F.div(F.one(), F.sub(consts.centre(l, b), poles[j]))
            small = powers(F, F.mul(consts.m_arc(l, b), inv), q + (r > 1))
            right.append(small[:q])
            for i, a in enumerate(W):
                x = F.mul(a[j], inv)
                left[i * r].append(x)
                for k in range(1, r):
                    x = F.mul(x, small[q])
                    left[i * r + k].append(x)
            _record_arc(trace, plan.tree, l, j, b)
        held = coeffs.get(b)
        if r == 1:  # the rows of the product are coefficient rows: the held ones join it
            coeffs[b] = _plus(F, left, right, held)
            continue
        R = F.matmul(left, right)
        new = [[v for row in R[i * r:(i + 1) * r] for v in row][:p] for i in range(nw)]
        coeffs[b] = new if held is None else [[F.add(u, v) for u, v in zip(h, n)] for h, n in zip(held, new)]


#: column blocks of a shift: the triangles' zeros outside the blocks are skipped
SHIFT_BLOCKS = 8


def _l2l(F, consts: Constants, l: int, p: int, coeffs: dict) -> dict:
    """The expansions of level l re-centred on both children at once (exact shifts,
    Lemma 4.1): for each block of columns ``[lo, hi)`` one product of the rows' entries
    ``lo..p-1`` by the rows ``lo..p-1`` of ``[T_0 | T_1]`` (the triangles are zero above
    their diagonals)."""
    arcs = sorted(coeffs)
    rows = [row for b in arcs for row in coeffs[b]]
    T = consts.shifts(l, p)
    width = -(-p // SHIFT_BLOCKS)
    kids: list = [[[], []] for _ in rows]
    for lo in range(0, p, width):
        hi = min(p, lo + width)
        part = F.matmul([row[lo:] for row in rows], consts.shift_block(l, p, lo, hi, T))
        for kid, r in zip(kids, part):
            kid[0] += r[:hi - lo]
            kid[1] += r[hi - lo:]
    nw = len(coeffs[arcs[0]])
    out: dict = {}
    for n, b in enumerate(arcs):
        block = kids[n * nw:(n + 1) * nw]
        out[2 * b] = [k[0] for k in block]
        out[2 * b + 1] = [k[1] for k in block]
    return out


def _arcs(F, plan: Plan, poles: list, W: list, p: int, consts: Constants, trace: Trace | None,
          E: np.ndarray | None) -> dict:
    """P2L, L2L and L2P: ``{leaf b: the s values of each weight set}``.  With bounds E
    (constant on each leaf) they enter the leaf coefficients L_0, which the evaluation
    carries with weight u^0 = 1 to every node of the leaf."""
    tree = plan.tree
    coeffs: dict = {}
    for l in range(tree.l0, tree.L + 1):
        if l > tree.l0 and coeffs:
            coeffs = _l2l(F, consts, l - 1, p, coeffs)
        _p2l(F, plan, l, poles, W, p, consts, coeffs, trace)
    if not coeffs:
        return {}
    s, leaves, nw = tree.leaf, sorted(coeffs), len(W)
    if E is not None:
        for b in leaves:
            for i, row in enumerate(coeffs[b]):
                row[0] = F.add_error(row[0], float(E[i, b * s]))
    rows = [row for b in leaves for row in coeffs[b]]
    del coeffs
    Y = F.matmul(rows, consts.leaf_powers(p))
    return {b: Y[n * nw:(n + 1) * nw] for n, b in enumerate(leaves)}


# -- P5: the near field ----------------------------------------------------------------------

def _near(F, plan: Plan, poles: list, W: list, leaves: dict, trace: Trace | None) -> tuple[list, bool]:
    """Direct sums over the near pairs added to ``leaves``, leaf by leaf: one product
    (sets x poles)(poles x reciprocals of z_k - mu_j) per leaf.  A difference that is
    not certainly nonzero is left out and reported (collision if certainly zero, else
    undecided)."""
    s, M = plan.tree.leaf, plan.tree.M
    zero, unknown = set(), False
    one, nil = F.one(), F.zero()
    z, zb = [], None
    for b, block in _pair_blocks(*plan.near):
        if b != zb:
            z, zb = [F.root_of_unity(M, k) for k in range(b * s, (b + 1) * s)], b
        C, inv = [[] for _ in W], []
        for j in block:
            row = []
            for t in range(s):
                d = F.sub(z[t], poles[j])
                found = F.is_zero(d)
                if found is Truth.FALSE:
                    row.append(F.div(one, d))
                else:
                    row.append(nil)
                    if found is Truth.TRUE:
                        zero.add(b * s + t)
                    unknown = unknown or found is Truth.UNKNOWN
            inv.append(row)
            for c, a in zip(C, W):
                c.append(a[j])
            if trace is not None:
                trace.mark(j, b * s, (b + 1) * s, NEAR)
        if not (zero or unknown):
            leaves[b] = _plus(F, C, inv, leaves.get(b))
    return sorted(zero), unknown


# -- the run ------------------------------------------------------------------------------------

def run(F, plan: Plan, poles: list, W: list, p: int, p0: int, trace: Trace | None,
        E: np.ndarray | None) -> tuple[list, list, bool]:
    """``(y, zero, unknown)``: the truncated sums of every weight set (with the bounds E
    added when given), the grid indices certainly on a pole and whether a near
    difference was undecided."""
    consts = Constants(F, plan.tree)
    y = _roots(F, plan, poles, W, p0)
    _record_roots(trace, plan)
    leaves = _arcs(F, plan, poles, W, p, consts, trace, E)
    carried = set(leaves)
    zero, unknown = _near(F, plan, poles, W, leaves, trace)
    if zero or unknown:
        return y, zero, unknown
    s = plan.tree.leaf
    for b, rows in leaves.items():
        for yi, row in zip(y, rows):
            for t in range(s):
                _accumulate(F, yi, b * s + t, row[t])
    y = [[F.zero() if v is None else v for v in row] for row in y]
    if E is not None:
        for b in range(plan.tree.M // s):
            if b not in carried:
                for i, row in enumerate(y):
                    for k in range(b * s, (b + 1) * s):
                        row[k] = F.add_error(row[k], float(E[i, k]))
    return y, zero, unknown
