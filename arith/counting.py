"""A field wrapper that counts what an algorithm really does.

``Counting(F)`` behaves as ``F`` but wraps each element in a small word object.
It counts operations by kind, operand reads and result writes, and the number of
scalar words alive at once: a word is born when an operation, conversion or
constant produces it and dies when the algorithm drops its last reference (CPython
frees objects at that moment), so ``peak_words`` is measured, not estimated.
It never offers the base field's fast primitives and runs the classical ``dot``,
``matvec`` and ``matmul`` on its own operations, so generic procedures run (and are
counted) in full.  Flags, ``sqrt``/``exp`` and the enclosure operations pass through
to the base field: ``sqrt``/``exp`` of an element and ``add_error`` are counted as
their own kinds; of a number (a supplied constant) they are not counted, like
``const``; the bounds ``abs_upper``/``abs_lower`` and ``enclose`` read a word out.
"""
from __future__ import annotations

from typing import Any

from .base import Field, WrappedField
from .truth import Truth

KINDS = ("add", "mul", "div", "zero_test", "conj", "sqrt", "exp", "add_error")
#: kinds a rational procedure never uses: reported by summary() only when they occur
_EXTRA = ("sqrt", "exp", "add_error")


class _Word:
    __slots__ = ("v", "meter")

    def __init__(self, v: Any, meter: "Counting"):
        self.v = v
        self.meter = meter
        meter.word_writes += 1
        meter.live_words += 1
        if meter.live_words > meter.peak_words:
            meter.peak_words = meter.live_words

    def __del__(self):
        self.meter.live_words -= 1

    def __repr__(self) -> str:
        return f"<word {self.v!r}>"


class Counting(WrappedField):
    """Counts additions (subtractions and negations included), multiplications,
    divisions, zero tests, conjugations, square roots, exponentials and error
    enlargements in ``.counts``; ``word_reads``,
    ``word_writes``; ``live_words`` now and ``peak_words`` since the last reset.

    >>> from s4cert.arith import Float64Field
    >>> C = Counting(Float64Field())
    >>> x = C.mul(C.from_number(2), C.from_number(3))
    >>> C.counts["mul"], C.word_reads, C.word_writes
    (1, 2, 3)
    """

    def __init__(self, base: Field):
        super().__init__(base)
        self.name = f"counting({base.name})"
        self.live_words = 0
        self.reset()

    def __repr__(self) -> str:
        return f"Counting({self.base!r})"

    def reset(self) -> None:
        """Zero the counters; peak words restart from the words alive now."""
        self.counts = {k: 0 for k in KINDS}
        self.word_reads = 0
        self.word_writes = 0
        self.peak_words = self.live_words

    def summary(self) -> dict:
        counts = {k: n for k, n in self.counts.items() if n or k not in _EXTRA}
        return {**counts, "ops": sum(self.counts.values()), "word_reads": self.word_reads,
                "word_writes": self.word_writes, "peak_words": self.peak_words}

    def unwrap(self, a: _Word) -> Any:
        return a.v

    def _op(self, kind: str, reads: int, v: Any) -> _Word:
        self.counts[kind] += 1
        self.word_reads += reads
        return _Word(v, self)

    def from_number(self, x):
        if isinstance(x, _Word):
            return x
        return _Word(self.base.from_number(x), self)

    def const(self, q):
        return _Word(self.base.const(q), self)

    def root_of_unity(self, M, k):
        return _Word(self.base.root_of_unity(M, k), self)

    def add(self, a, b):
        return self._op("add", 2, self.base.add(a.v, b.v))

    def sub(self, a, b):
        return self._op("add", 2, self.base.sub(a.v, b.v))

    def neg(self, a):
        return self._op("add", 1, self.base.neg(a.v))

    def mul(self, a, b):
        return self._op("mul", 2, self.base.mul(a.v, b.v))

    def div(self, a, b):
        return self._op("div", 2, self.base.div(a.v, b.v))

    def conj(self, a):
        return self._op("conj", 1, self.base.conj(a.v))

    def is_zero(self, a) -> Truth:
        self.counts["zero_test"] += 1
        self.word_reads += 1
        return self.base.is_zero(a.v)

    def sqrt(self, x):
        if isinstance(x, _Word):
            return self._op("sqrt", 1, self.base.sqrt(x.v))
        return _Word(self.base.sqrt(x), self)

    def exp(self, x):
        if isinstance(x, _Word):
            return self._op("exp", 1, self.base.exp(x.v))
        return _Word(self.base.exp(x), self)

    def add_error(self, x, e):
        return self._op("add_error", 1, self.base.add_error(x.v, e))
