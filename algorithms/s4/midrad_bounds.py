"""The filter constants' bounds b and w on float64 disk arrays (the disk routes' last
step besides the transform; proofs/midrad_filter.md, section 5)."""
from __future__ import annotations

import math

import numpy as np

from ...arith.midrad import MR, RangeError, up
from .constants import b_rows


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
