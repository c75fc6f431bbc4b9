"""Results of procedures: a status and a value (statuses are values, not exceptions).

A :class:`Status` has a kind, after FLINT's ``GR_SUCCESS`` / ``GR_DOMAIN`` /
``GR_UNABLE``: ``"ok"``; ``"domain"`` when the problem itself is outside the
procedure's domain (a collision, a resonance, a singular matrix), which an exact
run would report too; ``"unable"`` when this arithmetic could not decide
(an undecided zero test, a precision limit), which more precision may cure.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from ..arith import Truth


class Status(str, enum.Enum):
    """A procedure's status.  Members are strings: ``Status.OK == "ok"``, and they
    print and serialise (JSON) as their value.

    >>> Status.COLLISION.kind, Status.UNDECIDED.kind, f"{Status.OK}"
    ('domain', 'unable', 'ok')
    """

    OK = "ok"
    COLLISION = "collision"
    RESONANT_DIAGONAL = "resonant-diagonal"
    RESONANT_CORRECTION = "resonant-correction"
    SINGULAR_BILINEAR = "singular-bilinear-matrix"
    #: linear-algebra helpers (dense solve, Woodbury) report a singular system with this
    SINGULAR = "singular"
    UNDECIDED = "undecided"
    PRECISION_LIMIT = "precision-limit"

    @property
    def kind(self) -> str:
        """``"ok"``, ``"domain"`` or ``"unable"``."""
        if self is Status.OK:
            return "ok"
        if self in (Status.UNDECIDED, Status.PRECISION_LIMIT):
            return "unable"
        return "domain"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    # equal to its string, so it must hash as that string (Enum hashes the member name)
    def __hash__(self) -> int:
        return hash(self.value)


OK = Status.OK
COLLISION = Status.COLLISION
RESONANT_DIAGONAL = Status.RESONANT_DIAGONAL
RESONANT_CORRECTION = Status.RESONANT_CORRECTION
SINGULAR_BILINEAR = Status.SINGULAR_BILINEAR
SINGULAR = Status.SINGULAR
UNDECIDED = Status.UNDECIDED
PRECISION_LIMIT = Status.PRECISION_LIMIT


@dataclass
class Result:
    """``status`` is :data:`OK` or names why the procedure stopped; ``value`` is set when
    ok; ``reason`` says in words why an unable status was returned; ``info`` holds the
    procedure's documented details.  A status given as its string is read as the member.
    """

    status: Status
    value: Any = None
    info: dict = field(default_factory=dict)
    reason: str = ""

    def __post_init__(self) -> None:
        self.status = Status(self.status)  # ValueError for a name that is not a status

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    @property
    def kind(self) -> str:
        """The status's kind: ``"ok"``, ``"domain"`` or ``"unable"``."""
        return self.status.kind


def undecided(why: str) -> Result:
    """An ``undecided`` result; ``why`` is its ``reason`` (also kept as ``info["reason"]``)."""
    return Result(UNDECIDED, info={"reason": why}, reason=why)


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
