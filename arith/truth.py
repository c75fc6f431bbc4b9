"""Three-valued answers of predicates (zero tests), with Kleene's logic."""
from __future__ import annotations

import enum
from typing import Iterable


class Truth(enum.Enum):
    """The answer of a predicate: certainly true, certainly false, or not decided.

    Exact fields only answer ``TRUE`` or ``FALSE``; ball fields answer ``UNKNOWN``
    when the enclosure does not decide.  A ``Truth`` has no truth value of its own,
    so ``if F.is_zero(x):`` raises instead of silently treating ``UNKNOWN`` as true.
    ``&``, ``|`` and ``~`` are Kleene's strong three-valued connectives: an answer is
    decided whenever the decided operands already fix it.

    >>> Truth.TRUE & Truth.UNKNOWN, Truth.FALSE & Truth.UNKNOWN
    (<Truth.UNKNOWN: 'unknown'>, <Truth.FALSE: 'false'>)
    >>> Truth.all([]), Truth.any([Truth.UNKNOWN, Truth.TRUE])
    (<Truth.TRUE: 'true'>, <Truth.TRUE: 'true'>)
    """

    TRUE = "true"
    FALSE = "false"
    UNKNOWN = "unknown"

    def __bool__(self) -> bool:
        raise TypeError("a Truth is three-valued: compare it with Truth.TRUE / FALSE / UNKNOWN")

    @classmethod
    def of(cls, b: bool) -> "Truth":
        """A decided answer from a certain Python bool."""
        if not isinstance(b, bool):
            raise TypeError(f"Truth.of expects a bool, got {type(b).__name__}")
        return cls.TRUE if b else cls.FALSE

    def __and__(self, other: "Truth") -> "Truth":
        if not isinstance(other, Truth):
            return NotImplemented
        if self is Truth.FALSE or other is Truth.FALSE:
            return Truth.FALSE
        if self is Truth.TRUE and other is Truth.TRUE:
            return Truth.TRUE
        return Truth.UNKNOWN

    def __or__(self, other: "Truth") -> "Truth":
        if not isinstance(other, Truth):
            return NotImplemented
        if self is Truth.TRUE or other is Truth.TRUE:
            return Truth.TRUE
        if self is Truth.FALSE and other is Truth.FALSE:
            return Truth.FALSE
        return Truth.UNKNOWN

    def __invert__(self) -> "Truth":
        return {Truth.TRUE: Truth.FALSE, Truth.FALSE: Truth.TRUE}.get(self, Truth.UNKNOWN)

    @classmethod
    def all(cls, answers: Iterable["Truth"]) -> "Truth":
        """The conjunction of the answers (``TRUE`` for none); stops at the first ``FALSE``."""
        out = cls.TRUE
        for t in answers:
            out = out & t
            if out is cls.FALSE:
                break
        return out

    @classmethod
    def any(cls, answers: Iterable["Truth"]) -> "Truth":
        """The disjunction of the answers (``FALSE`` for none); stops at the first ``TRUE``."""
        out = cls.FALSE
        for t in answers:
            out = out | t
            if out is cls.TRUE:
                break
        return out
