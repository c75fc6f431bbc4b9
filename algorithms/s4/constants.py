"""The filter constants b and w of proofs/spec.md §S31, from the scaled blocks
of a filter run (``filter_kernel(..., keep_blocks=True)``; ``proofs/filter_constants.md``).

Over the roots z != -1, with x, u, v, T and W = I + beta T as in ``s4.correction``:

* b >= 1 bounds |x|, ||u||_inf (u is a row: its absolute row sum), ||v||_inf (v is a
  column: its largest entry) and ||T||_inf (max absolute row sum);
* w >= 1 bounds ||W^-1||_inf.

Which entries enter which norm is fixed here once (``b_rows``, ``norm_terms``); how a
modulus is bounded is the caller's: ``filter_bounds`` takes the field's ``abs_upper``
(or any callable); on disk arrays (every root at once, the disk routes' last step besides the
transform; proofs/midrad_filter.md, section 5) ``constant_bounds`` applies the same rows.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Callable

import numpy as np

from ...arith.midrad import MR, RangeError, up
from .correction import each_root, inverse, matrix


def b_rows(blocks: Mapping, r: int) -> list[list]:
    """The rows whose absolute sums b must bound, at one root: [x], u, each [v_i], each
    row of T."""
    return ([[blocks[("C", "B")]], [blocks[("C", i)] for i in range(r)]]
            + [[blocks[(i, "B")]] for i in range(r)]
            + [[blocks[(i, c)] for c in range(r)] for i in range(r)])


def norm_terms(F, blocks: Mapping, M: int, r: int) -> list[tuple[int, list[list], list[list] | None]]:
    """For every root k != -1: (k, ``b_rows`` there, the rows of W(z_k)^-1 or None when
    elimination could not invert W there (singular or undecided))."""
    def one_root(k, bk, b):
        inv = inverse(F, matrix(F, bk, b, r))
        return k, b_rows(bk, r), inv.value if inv.ok else None
    return each_root(F, blocks, M, r, one_root)


def _sum_up(values) -> float:
    """An upper bound of the sum of nonnegative floats (each addition rounded up)."""
    acc = 0.0
    for v in values:
        acc = math.nextafter(acc + v, math.inf) if acc else v
    return acc


def row_norm_upper(rows: list[list], abs_upper: Callable[[Any], float]) -> float:
    """max_i sum_k abs_upper(rows[i][k]), rounded up (inf when a bound is not finite)."""
    out = 0.0
    for row in rows:
        t = _sum_up(abs_upper(x) for x in row)
        if not t <= math.inf:  # NaN bounds nothing
            return math.inf
        out = max(out, t)
    return out


def filter_bounds(F, blocks: Mapping, M: int, r: int,
                  abs_upper: Callable[[Any], float] | None = None) -> dict:
    """``{"b": b, "w": w}`` as floats >= 1, from blocks enclosing the exact ones, with
    moduli bounded by ``abs_upper`` (default ``F.abs_upper``).  w is inf when W could not
    be inverted at some root."""
    bound = abs_upper if abs_upper is not None else F.abs_upper
    b = w = 1.0
    for _, rows, inv in norm_terms(F, blocks, M, r):
        b = max(b, row_norm_upper(rows, bound))
        w = max(w, row_norm_upper(inv, bound) if inv is not None else math.inf)
    return {"b": b, "w": w}


class Bound(MR):
    """Disks centred at the exact 0: sums held only as bounds (|x| <= rad)."""


def constant_bounds(blocks: dict, Winv: list, mask: np.ndarray, r: int) -> dict:
    """b >= 1 bounding |x|, ||u||_inf, ||v||_inf, ||T||_inf and w >= 1 bounding
    ||W^-1||_inf over the roots z != -1: the rows of ``s4.constants.b_rows`` and of W^-1,
    their absolute sums bounded per root on the disk arrays, then the largest over the
    roots in ``mask``."""
    if not mask.any():
        return {"b": 1.0, "w": 1.0}

    def abs_upper(x: MR) -> np.ndarray:
        # a disk centred at the exact 0 (a bound only): |x| <= rad
        return up(x.rad) if isinstance(x, Bound) else x.abs_upper()

    def row_sum(row):
        acc = abs_upper(row[0])
        for x in row[1:]:
            acc = up(acc + abs_upper(x))
        return acc

    skip = np.flatnonzero(~mask)
    largest = lambda v: float(np.max(v if not len(skip) else np.where(mask, v, 0.0)))
    bs = [largest(row_sum(row)) for row in b_rows(blocks, r)]
    ws = [largest(row_sum(Winv[i])) for i in range(r)]
    if not all(math.isfinite(v) for v in bs + ws):  # NaN compares False in max: refuse it first
        raise RangeError("a bound of b or w is not finite")
    b, w = max([1.0] + bs), max([1.0] + ws)
    return {"b": b, "w": w}
