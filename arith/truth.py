"""Three-valued answers of predicates (zero tests)."""
from __future__ import annotations

import enum


class Truth(enum.Enum):
    """The answer of a predicate: certainly true, certainly false, or not decided.

    Exact fields only answer ``TRUE`` or ``FALSE``; ball fields answer ``UNKNOWN``
    when the enclosure does not decide.  A ``Truth`` has no truth value of its own,
    so ``if F.is_zero(x):`` raises instead of silently treating ``UNKNOWN`` as true.
    """

    TRUE = "true"
    FALSE = "false"
    UNKNOWN = "unknown"

    def __bool__(self) -> bool:
        raise TypeError("a Truth is three-valued: compare it with Truth.TRUE / FALSE / UNKNOWN")
