"""Shared-parameter recurrent networks and their computation graphs
(proofs/spec.md §S8).

A network is a state map ``F(h, x; theta)``, an optional output map ``G(h, x; theta)``
and one parameter value ``theta`` shared by every time step:
``h_t = F(h_{t-1}, x_t; theta)`` and ``y_t = G(h_t, x_t; theta)`` for ``1 <= t <= T``.

Its *unrolling* for a horizon T is the finite acyclic graph whose vertices are the
inputs ``x_1..x_T``, the states ``h_0..h_T``, the outputs ``y_1..y_T`` (when G is
given), one vertex per evaluation ``F_t`` (and ``G_t``) and one vertex ``theta``; its
edges record which values each evaluation reads and which value it writes.  The
*folded* schematic has one vertex per value and map and a feedback edge ``h -> F``
(the state written by F is read back by F at the next time), so it has a cycle.

>>> net = linear_network(A=[[1, 1], [0, 1]], B=[[0], [1]], C=[[1, 0]])
>>> from s4cert.arith import ExactField
>>> E = ExactField(4)
>>> run = net.run(E, [0, 0], [[1], [1], [1]])
>>> [E.to_complex(y[0]).real for y in run.outputs]
[0.0, 1.0, 3.0]
>>> g = net.unroll(2)
>>> (len(g.vertices), len(g.edges))
(12, 16)
"""
from __future__ import annotations

import graphlib
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

import numpy as np

from ..linalg import matvec

#: edge kinds: a value read or written by an evaluation, the shared parameter read by
#: an evaluation, and (folded schematic only) the state fed back to the next step
DATA = "data"
PARAMETER = "parameter"
FEEDBACK = "feedback"

#: vertex kinds
INPUT, STATE, OUTPUT, MAP, PARAM = "input", "state", "output", "map", "parameter"


@dataclass(frozen=True)
class Vertex:
    """A vertex: ``id`` (used in DOT and TikZ), ``kind``, time index ``t`` (None for
    ``theta`` and for the folded schematic), TeX ``label`` and drawing position."""

    id: str
    kind: str
    t: int | None
    label: str
    pos: tuple[float, float]


class Edge(NamedTuple):
    src: str
    dst: str
    kind: str = DATA


class ComputationGraph:
    """A directed graph with marked edges, exportable to DOT and TikZ.

    >>> g = folded_graph()
    >>> g.is_acyclic()
    False
    >>> sorted(e[:2] for e in g.edges if e.kind == FEEDBACK)
    [('h', 'F')]
    """

    def __init__(self, vertices: list[Vertex], edges: list[Edge], name: str = "graph"):
        ids = [v.id for v in vertices]
        if len(set(ids)) != len(ids):
            raise ValueError("vertex ids must be distinct")
        known = set(ids)
        for e in edges:
            if e.src not in known or e.dst not in known:
                raise ValueError(f"edge {e.src} -> {e.dst} names an unknown vertex")
            if e.kind not in (DATA, PARAMETER, FEEDBACK):
                raise ValueError(f"unknown edge kind {e.kind!r}")
        if len(set((e.src, e.dst) for e in edges)) != len(edges):
            raise ValueError("an edge appears twice")
        self.vertices: tuple[Vertex, ...] = tuple(vertices)
        self.edges: tuple[Edge, ...] = tuple(edges)
        self.name = name
        self._by_id = {v.id: v for v in vertices}

    def vertex(self, vid: str) -> Vertex:
        return self._by_id[vid]

    def edge_set(self, kind: str | None = None) -> set[tuple[str, str]]:
        """The edges as (source, target) pairs, all of them or those of one kind."""
        return {(e.src, e.dst) for e in self.edges if kind is None or e.kind == kind}

    def predecessors(self, vid: str) -> list[str]:
        return [e.src for e in self.edges if e.dst == vid]

    def _sorter(self) -> graphlib.TopologicalSorter:
        preds: dict[str, list[str]] = {v.id: [] for v in self.vertices}
        for e in self.edges:
            preds[e.dst].append(e.src)
        return graphlib.TopologicalSorter(preds)

    def check_acyclic(self) -> None:
        """Raise ``graphlib.CycleError`` (a ValueError) naming a cycle, if there is one."""
        self._sorter().prepare()

    def is_acyclic(self) -> bool:
        try:
            self.check_acyclic()
        except graphlib.CycleError:
            return False
        return True

    def topological_order(self) -> list[str]:
        """Vertex ids, every edge pointing forward; raises CycleError on a cycle."""
        return list(self._sorter().static_order())

    def to_dot(self) -> str:
        """Graphviz DOT text: maps as boxes, values as ellipses, parameter edges dashed,
        feedback edges bold."""
        lines = [f'digraph "{self.name}" {{', "  rankdir=LR;"]
        for v in self.vertices:
            shape = "box" if v.kind == MAP else "ellipse"
            lines.append(f'  "{v.id}" [label=<{_html_label(v.label)}>, shape={shape}];')
        style = {DATA: "", PARAMETER: " [style=dashed]", FEEDBACK: " [style=bold, constraint=false]"}
        for e in self.edges:
            lines.append(f'  "{e.src}" -> "{e.dst}"{style[e.kind]};')
        lines.append("}")
        return "\n".join(lines) + "\n"

    def to_tikz(self) -> str:
        """A ``tikzpicture`` in the spec's style: parameter edges dashed, a feedback
        edge drawn as a bent arrow."""
        lines = [r"\begin{tikzpicture}[>=stealth, every node/.style={draw, rounded corners, inner sep=4pt}]"]
        for v in self.vertices:
            x, y = v.pos
            lines.append(rf"  \node ({v.id}) at ({_num(x)},{_num(y)}) {{${v.label}$}};")
        for e in self.edges:
            if e.kind == FEEDBACK:
                lines.append(rf"  \draw[->] ({e.src}) to[bend left=60] ({e.dst});")
            else:
                opts = "->, dashed" if e.kind == PARAMETER else "->"
                lines.append(rf"  \draw[{opts}] ({e.src}) -- ({e.dst});")
        lines.append(r"\end{tikzpicture}")
        return "\n".join(lines) + "\n"


def _num(x: float) -> str:
    """A TikZ coordinate: fixed point, no exponent, no trailing zeros."""
    text = f"{x:.3f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _html_label(tex: str) -> str:
    """``h_{12}`` -> ``h<sub>12</sub>``, ``\\theta`` -> ``&theta;`` (DOT HTML labels)."""
    if tex == r"\theta":
        return "&theta;"
    if "_" in tex:
        base, sub = tex.split("_", 1)
        return f"{base}<sub>{sub.strip('{}')}</sub>"
    return tex


class UnrolledGraph(ComputationGraph):
    """The unrolling for horizon ``T``; ``with_output`` says whether G is present."""

    def __init__(self, T: int, with_output: bool, vertices: list[Vertex], edges: list[Edge]):
        super().__init__(vertices, edges, name=f"unrolled_T{T}")
        self.T = T
        self.with_output = with_output

    def time_order(self) -> list[str]:
        """A topological order by time index: ``theta, h_0``, then for each t
        ``x_t, F_t, h_t`` (and ``G_t, y_t``)."""
        within = {INPUT: 0, STATE: 2, OUTPUT: 4}

        def key(v: Vertex) -> tuple[int, int]:
            if v.kind == PARAM:
                return (-1, 0)
            if v.kind == MAP:
                return (v.t, 1 if v.id.startswith("F") else 3)
            return (v.t, within[v.kind])

        return [v.id for v in sorted(self.vertices, key=key)]


def check_horizon(T: Any) -> int:
    if isinstance(T, (bool, np.bool_)) or not isinstance(T, (int, np.integer)):
        raise ValueError(f"horizon T must be a non-negative integer, got {T!r}")
    if T < 0:
        raise ValueError(f"horizon T must be a non-negative integer, got {T}")
    return int(T)


def unrolled_graph(T: int, with_output: bool = False) -> UnrolledGraph:
    """The computation graph of a shared-parameter RNN unrolled over ``T`` steps.

    Vertices ``theta``, ``h0..hT``, ``x1..xT``, ``F1..FT`` (and ``G1..GT``,
    ``y1..yT`` with an output map); edges ``h{t-1} -> Ft``, ``xt -> Ft``,
    ``theta -> Ft`` (parameter), ``Ft -> ht`` (and ``ht -> Gt``, ``xt -> Gt``,
    ``theta -> Gt`` (parameter), ``Gt -> yt``).  The result is checked to be acyclic.

    >>> g = unrolled_graph(1)
    >>> sorted(g.edge_set())
    [('F1', 'h1'), ('h0', 'F1'), ('theta', 'F1'), ('x1', 'F1')]
    >>> g.time_order()
    ['theta', 'h0', 'x1', 'F1', 'h1']
    """
    T = check_horizon(T)
    # the spec figure's layout: h_t at (4t, -0.55t), F_t halfway, x_t below h_{t-1}
    top = 1.0 if not with_output else 1.6
    V = [Vertex("theta", PARAM, None, r"\theta", (2.0 * T, top)),
         Vertex("h0", STATE, 0, "h_{0}", (0.0, 0.0))]
    E: list[Edge] = []
    for t in range(1, T + 1):
        y0 = -0.55 * t
        V += [Vertex(f"x{t}", INPUT, t, f"x_{{{t}}}", (4.0 * (t - 1), y0 - 0.55)),
              Vertex(f"F{t}", MAP, t, f"F_{{{t}}}", (4.0 * t - 2, y0)),
              Vertex(f"h{t}", STATE, t, f"h_{{{t}}}", (4.0 * t, y0))]
        E += [Edge(f"h{t - 1}", f"F{t}"), Edge(f"x{t}", f"F{t}"),
              Edge("theta", f"F{t}", PARAMETER), Edge(f"F{t}", f"h{t}")]
        if with_output:
            V += [Vertex(f"G{t}", MAP, t, f"G_{{{t}}}", (4.0 * t + 1.5, y0 - 2.6)),
                  Vertex(f"y{t}", OUTPUT, t, f"y_{{{t}}}", (4.0 * t + 1.5, y0 - 3.7))]
            E += [Edge(f"h{t}", f"G{t}"), Edge(f"x{t}", f"G{t}"),
                  Edge("theta", f"G{t}", PARAMETER), Edge(f"G{t}", f"y{t}")]
    g = UnrolledGraph(T, with_output, V, E)
    g.check_acyclic()
    return g


def folded_graph(with_output: bool = False) -> ComputationGraph:
    """The folded schematic: one vertex per value and map, with the feedback edge
    ``h -> F`` closing the cycle ``h -> F -> h``."""
    V = [Vertex("x", INPUT, None, "x", (0.0, -0.8)), Vertex("F", MAP, None, "F", (2.0, 0.0)),
         Vertex("h", STATE, None, "h", (4.0, 0.0)), Vertex("theta", PARAM, None, r"\theta", (3.0, 1.4))]
    E = [Edge("x", "F"), Edge("theta", "F", PARAMETER), Edge("F", "h"), Edge("h", "F", FEEDBACK)]
    if with_output:
        V += [Vertex("G", MAP, None, "G", (6.0, -0.8)), Vertex("y", OUTPUT, None, "y", (8.0, -0.8))]
        E += [Edge("h", "G"), Edge("x", "G"), Edge("theta", "G", PARAMETER), Edge("G", "y")]
    return ComputationGraph(V, E, name="folded")


class RNNRun(NamedTuple):
    """``states = [h_0, ..., h_T]``; ``outputs = [y_1, ..., y_T]`` (None without G)."""

    states: list[list]
    outputs: list[list] | None


MapFn = Callable[[Any, list, list, Any], list]


class SharedParameterRNN:
    """``h_t = F(h_{t-1}, x_t; theta)``, ``y_t = G(h_t, x_t; theta)`` with one shared theta.

    The maps are called as ``F_map(Fld, h, x, theta)`` and ``G_map(Fld, h, x, theta)``
    with lists of elements of the field ``Fld`` and must return lists of elements;
    they read theta themselves (``Fld.from_number`` passes elements through).
    """

    def __init__(self, F_map: MapFn, theta: Any, G_map: MapFn | None = None):
        if not callable(F_map):
            raise ValueError("F_map must be callable as F_map(Fld, h, x, theta)")
        if G_map is not None and not callable(G_map):
            raise ValueError("G_map must be callable as G_map(Fld, h, x, theta) or None")
        self.F_map = F_map
        self.G_map = G_map
        self.theta = theta

    def run(self, Fld, h0: Any, xs: Any) -> RNNRun:
        """Run over the inputs ``xs = [x_1, ..., x_T]`` (a list of vectors or a
        T x d_x array) from ``h0``, in the field ``Fld``."""
        h = Fld.vector(h0, "h0")
        if not h:
            raise ValueError("h0: the state needs at least one entry (d_h >= 1)")
        inputs = _read_inputs(Fld, xs)
        states, outputs = [h], ([] if self.G_map is not None else None)
        d_y = None
        for t, x in enumerate(inputs, start=1):
            h = _checked(self.F_map(Fld, list(h), list(x), self.theta), len(states[0]), f"F_map at t={t}")
            states.append(h)
            if self.G_map is not None:
                y = _checked(self.G_map(Fld, list(h), list(x), self.theta), d_y, f"G_map at t={t}")
                d_y = len(y)
                outputs.append(y)
        return RNNRun(states, outputs)

    def unroll(self, T: int) -> UnrolledGraph:
        """The computation graph over T steps (with G's vertices when G is given)."""
        return unrolled_graph(T, with_output=self.G_map is not None)

    def folded(self) -> ComputationGraph:
        return folded_graph(with_output=self.G_map is not None)


def _read_inputs(Fld, xs: Any) -> list[list]:
    if isinstance(xs, np.ndarray):
        if xs.ndim != 2:
            raise ValueError(f"xs: expected a T x d_x array, got shape {xs.shape}")
        xs = list(xs)
    if not isinstance(xs, (list, tuple)):
        raise ValueError(f"xs: expected a sequence of input vectors, got {type(xs).__name__}")
    inputs = [Fld.vector(x, f"x_{t}") for t, x in enumerate(xs, start=1)]
    if inputs and (len(inputs[0]) == 0 or any(len(x) != len(inputs[0]) for x in inputs)):
        raise ValueError("xs: every input x_t must have the same length d_x >= 1")
    return inputs


def _checked(v: Any, n: int | None, what: str) -> list:
    if not isinstance(v, (list, tuple)):
        raise ValueError(f"{what}: expected a list of elements, got {type(v).__name__}")
    if len(v) == 0 or (n is not None and len(v) != n):
        raise ValueError(f"{what}: returned {len(v)} entries, expected {n if n else 'at least 1'}")
    return list(v)


def linear_network(A: Any, B: Any, C: Any = None) -> SharedParameterRNN:
    """The linear network ``h_t = A h_{t-1} + B x_t`` (and ``y_t = C h_t`` when C is
    given), ``theta = (A, B, C)``; entries are read exactly by the field."""
    theta = (A, B, C)

    def F_map(Fld, h: list, x: list, th: tuple) -> list:
        A_, B_ = Fld.matrix(th[0], "A"), Fld.matrix(th[1], "B")
        if len(A_) != len(h) or any(len(r) != len(h) for r in A_) or len(B_) != len(h) \
                or any(len(r) != len(x) for r in B_):
            raise ValueError(f"A must be {len(h)} x {len(h)} and B {len(h)} x {len(x)}")
        return [Fld.add(a, b) for a, b in zip(matvec(Fld, A_, h), matvec(Fld, B_, x))]

    def G_map(Fld, h: list, x: list, th: tuple) -> list:
        C_ = Fld.matrix(th[2], "C")
        if any(len(r) != len(h) for r in C_):
            raise ValueError(f"C must have {len(h)} columns")
        return matvec(Fld, C_, h)

    return SharedParameterRNN(F_map, theta, G_map if C is not None else None)
