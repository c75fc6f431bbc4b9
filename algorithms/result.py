"""Results of procedures: a status and a value (statuses are values, not exceptions)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..arith import Truth

OK = "ok"
COLLISION = "collision"
RESONANT_DIAGONAL = "resonant-diagonal"
RESONANT_CORRECTION = "resonant-correction"
SINGULAR_BILINEAR = "singular-bilinear-matrix"
UNDECIDED = "undecided"
#: linear-algebra helpers (dense solve, Woodbury) report a singular system with this
SINGULAR = "singular"


@dataclass
class Result:
    """``status`` is ``"ok"`` or names why the procedure stopped; ``value`` is set when ok."""

    status: str
    value: Any = None
    info: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == OK


def undecided(why: str) -> Result:
    return Result(UNDECIDED, info={"reason": why})


def zero_partition(F, xs) -> tuple[list[int], list[int], bool]:
    """Indices of certainly-zero and certainly-nonzero entries, and whether any was undecided."""
    zero, nonzero, unknown = [], [], False
    for j, x in enumerate(xs):
        t = F.is_zero(x)
        if t is Truth.TRUE:
            zero.append(j)
        elif t is Truth.FALSE:
            nonzero.append(j)
        else:
            unknown = True
    return zero, nonzero, unknown
