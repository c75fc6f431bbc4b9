"""Recording a run as a straight-line program (a rational circuit).

``trace(F, algorithm, *args)`` runs ``algorithm(T, *args)`` on a tracing field
``T`` over ``F``: every element carries its value in ``F`` and the index of the
instruction that made it.  The result is a :class:`Circuit`: inputs (every
``from_number``), supplied constants (rational literals and roots of unity), gates,
the zero tests taken with their outcomes, and outputs.  ``circuit.evaluate(G)``
replays the same instructions in any field ``G``.

Beyond the rational gates, three kinds of step are recorded so that a replay
repeats them: ``sqrt``/``exp`` of a number (``("sqrt_const", q)``, ``("exp_const",
q)``) are supplied constants, like roots of unity; ``sqrt``/``exp`` of a node
(``("sqrt", a)``, ``("exp", a)``) and ``add_error`` (``("add_error", a, e)``, the bound
e kept as given) are steps of their own kinds.  None of them is an arithmetic gate
(``Circuit.gates`` counts the rational gates only); a replay in a field that cannot
perform one raises :class:`~.base.Unsupported`.  ``abs_upper``, ``abs_lower`` and
``enclose`` read a value out of the base field and record nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, field as dc_field
from fractions import Fraction
from typing import Any, Callable, Iterator

from .base import Field, WrappedField
from .truth import Truth

GATES = ("add", "sub", "neg", "mul", "div", "conj")
#: supplied constants beyond rational literals and roots of unity: (kind, number)
CONST_FUNCTIONS = {"sqrt_const": "sqrt", "exp_const": "exp"}
#: non-rational steps on one node: (kind, node)
FUNCTIONS = ("sqrt", "exp")


class _Node:
    __slots__ = ("i", "v")

    def __init__(self, i: int, v: Any):
        self.i = i
        self.v = v

    def __repr__(self) -> str:
        return f"<node {self.i}: {self.v!r}>"


@dataclass
class Circuit:
    """A straight-line program.  ``instructions[i]`` makes node ``i``:
    ``("input", j)``, ``("const", Fraction)``, ``("root", M, k)``,
    ``(gate, a[, b])`` with ``gate`` in ``GATES``, ``("sqrt_const", q)``,
    ``("exp_const", q)``, ``("sqrt", a)``, ``("exp", a)`` or ``("add_error", a, e)``.  ``decisions`` lists the zero tests
    taken as ``(node, outcome)`` in order; ``outputs`` are node indices."""

    instructions: list[tuple] = dc_field(default_factory=list)
    input_values: list[Any] = dc_field(default_factory=list)
    decisions: list[tuple[int, Truth]] = dc_field(default_factory=list)
    outputs: list[int] = dc_field(default_factory=list)

    @property
    def gates(self) -> int:
        """T0: the number of arithmetic gates."""
        return sum(1 for ins in self.instructions if ins[0] in GATES)

    @property
    def n_inputs(self) -> int:
        return len(self.input_values)

    def non_rational_steps(self) -> list[int]:
        """Nodes made by ``sqrt``/``exp`` of a node or by ``add_error``: steps outside the
        rational-circuit model (its error analysis covers inputs, supplied constants and
        the rational gates only), so a certificate built on that model must see none."""
        return [i for i, ins in enumerate(self.instructions) if ins[0] in FUNCTIONS or ins[0] == "add_error"]

    def divisors(self) -> list[int]:
        """Nodes used as divisors."""
        return [ins[2] for ins in self.instructions if ins[0] == "div"]

    def operands(self, i: int) -> tuple[int, ...]:
        """The nodes instruction i reads."""
        ins = self.instructions[i]
        if ins[0] in GATES:
            return tuple(ins[1:])
        if ins[0] in FUNCTIONS or ins[0] == "add_error":
            return (ins[1],)
        return ()

    def frees(self) -> list[list[int]]:
        """``frees()[i]``: the nodes last read by instruction i (outputs excluded), whose
        values a run may drop once node i is made."""
        last: dict[int, int] = {}
        for i in range(len(self.instructions)):
            for a in self.operands(i):
                last[a] = i
        keep = set(self.outputs)
        out: list[list[int]] = [[] for _ in self.instructions]
        for a, i in last.items():
            if a not in keep:
                out[i].append(a)
        return out

    def run(self, F: Field, inputs: list | None = None, live_only: bool = False) -> list:
        """Every node's value in F (inputs default to the recorded ones).  With
        ``live_only`` a value is dropped (``None``) after its last use, so memory follows
        the live wires, and only the outputs survive the run."""
        if inputs is None:
            inputs = self.input_values
        if len(inputs) != self.n_inputs:
            raise ValueError(f"circuit has {self.n_inputs} inputs, got {len(inputs)}")
        vals: list = []
        ops = {g: getattr(F, g) for g in GATES}
        frees = self.frees() if live_only else None
        for i, ins in enumerate(self.instructions):
            if frees is not None and i:
                for a in frees[i - 1]:
                    vals[a] = None
            kind = ins[0]
            if kind == "input":
                vals.append(F.from_number(inputs[ins[1]]))
            elif kind == "const":
                vals.append(F.const(ins[1]))
            elif kind == "root":
                vals.append(F.root_of_unity(ins[1], ins[2]))
            elif kind in CONST_FUNCTIONS:
                vals.append(getattr(F, CONST_FUNCTIONS[kind])(ins[1]))
            elif kind in FUNCTIONS:
                vals.append(getattr(F, kind)(vals[ins[1]]))
            elif kind == "add_error":
                vals.append(F.add_error(vals[ins[1]], ins[2]))
            elif len(ins) == 2:
                vals.append(ops[kind](vals[ins[1]]))
            else:
                vals.append(ops[kind](vals[ins[1]], vals[ins[2]]))
        return vals

    def evaluate(self, F: Field, inputs: list | None = None, live_only: bool = False) -> list:
        """The outputs in F (``live_only`` as in ``run``)."""
        vals = self.run(F, inputs, live_only)
        return [vals[i] for i in self.outputs]

    def decisions_hold(self, F: Field, inputs: list | None = None) -> Truth:
        """Whether F's zero tests on the replayed values agree with the recorded ones:
        TRUE if all agree, FALSE if one certainly differs, UNKNOWN otherwise."""
        vals = self.run(F, inputs)
        answer = Truth.TRUE
        for node, outcome in self.decisions:
            t = F.is_zero(vals[node])
            if t is Truth.UNKNOWN:
                answer = Truth.UNKNOWN
            elif t is not outcome:
                return Truth.FALSE
        return answer


class Tracing(WrappedField):
    """A field over ``base`` that records every step into ``self.circuit``."""

    def __init__(self, base: Field):
        super().__init__(base)
        self.name = f"tracing({base.name})"
        self.circuit = Circuit()

    def _new(self, ins: tuple, v: Any) -> _Node:
        self.circuit.instructions.append(ins)
        return _Node(len(self.circuit.instructions) - 1, v)

    def from_number(self, x):
        if isinstance(x, _Node):
            return x
        v = self.base.from_number(x)
        self.circuit.input_values.append(x)
        return self._new(("input", len(self.circuit.input_values) - 1), v)

    def const(self, q):
        q = Fraction(q)
        return self._new(("const", q), self.base.const(q))

    def root_of_unity(self, M, k):
        return self._new(("root", M, k % M), self.base.root_of_unity(M, k))

    def add(self, a, b):
        return self._new(("add", a.i, b.i), self.base.add(a.v, b.v))

    def sub(self, a, b):
        return self._new(("sub", a.i, b.i), self.base.sub(a.v, b.v))

    def neg(self, a):
        return self._new(("neg", a.i), self.base.neg(a.v))

    def mul(self, a, b):
        return self._new(("mul", a.i, b.i), self.base.mul(a.v, b.v))

    def div(self, a, b):
        return self._new(("div", a.i, b.i), self.base.div(a.v, b.v))

    def conj(self, a):
        return self._new(("conj", a.i), self.base.conj(a.v))

    def is_zero(self, a) -> Truth:
        t = self.base.is_zero(a.v)
        self.circuit.decisions.append((a.i, t))
        return t

    def sqrt(self, x):
        if isinstance(x, _Node):
            return self._new(("sqrt", x.i), self.base.sqrt(x.v))
        return self._new(("sqrt_const", x), self.base.sqrt(x))

    def exp(self, x):
        if isinstance(x, _Node):
            return self._new(("exp", x.i), self.base.exp(x.v))
        return self._new(("exp_const", x), self.base.exp(x))

    def add_error(self, x, e):
        return self._new(("add_error", x.i, e), self.base.add_error(x.v, e))



def _nodes(x: Any) -> Iterator[_Node]:
    if isinstance(x, _Node):
        yield x
    elif isinstance(x, (list, tuple)):
        for y in x:
            yield from _nodes(y)


def _unwrap(x: Any) -> Any:
    if isinstance(x, _Node):
        return x.v
    if isinstance(x, list):
        return [_unwrap(y) for y in x]
    if isinstance(x, tuple):
        return tuple(_unwrap(y) for y in x)
    return x


@dataclass
class TraceResult:
    value: Any       # the algorithm's value with elements of the base field
    status: str | None
    circuit: Circuit


def trace(F: Field, algorithm: Callable, *args, **kwargs) -> TraceResult:
    """Run ``algorithm(T, *args, **kwargs)`` on a tracing field over F.

    The algorithm's result (or its ``.value`` when it has one) gives the outputs,
    in flattened order.
    """
    T = Tracing(F)
    res = algorithm(T, *args, **kwargs)
    status = getattr(res, "status", None)
    value = res.value if hasattr(res, "value") else res
    T.circuit.outputs = [n.i for n in _nodes(value)]
    return TraceResult(_unwrap(value), status, T.circuit)
