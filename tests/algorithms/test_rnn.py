"""Shared-parameter RNNs: the unrolled graph, the folded schematic, running in a field."""
from __future__ import annotations

import graphlib
import re
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from s4cert.algorithms.models.rnn import (DATA, FEEDBACK, PARAMETER, ComputationGraph, Edge, SharedParameterRNN,
                            folded_graph, linear_network, unrolled_graph)
from s4cert.arith import BallField, ExactField
from tests.helpers import encloses, exact_equal, fractions

SPEC_T2_EDGES = {("h0", "F1"), ("x1", "F1"), ("F1", "h1"), ("h1", "F2"), ("x2", "F2"),
                 ("F2", "h2"), ("theta", "F1"), ("theta", "F2")}
SPEC_T2_DASHED = {("theta", "F1"), ("theta", "F2")}
# node positions of the spec's TikZ figure
SPEC_T2_POS = {"h0": (0, 0), "x1": (0, -1.1), "F1": (2, -0.55), "h1": (4, -0.55),
               "x2": (4, -1.65), "F2": (6, -1.1), "h2": (8, -1.1), "theta": (4, 1)}


def test_spec_figure_edges_T2():
    g = unrolled_graph(2)
    assert g.edge_set() == SPEC_T2_EDGES
    assert g.edge_set(PARAMETER) == SPEC_T2_DASHED
    assert g.edge_set(DATA) == SPEC_T2_EDGES - SPEC_T2_DASHED
    assert g.edge_set(FEEDBACK) == set()
    assert {v.id for v in g.vertices} == {"h0", "h1", "h2", "x1", "x2", "F1", "F2", "theta"}
    net = SharedParameterRNN(lambda Fld, h, x, th: h, theta=None)
    assert net.unroll(2).edge_set() == SPEC_T2_EDGES


def test_spec_figure_layout_T2():
    nodes, _ = parse_tikz(unrolled_graph(2).to_tikz())
    assert {k: pos for k, (pos, _) in nodes.items()} == SPEC_T2_POS
    assert nodes["theta"][1] == r"$\theta$" and nodes["F2"][1] == "$F_{2}$"


@given(st.integers(0, 60), st.booleans())
def test_vertex_and_edge_counts(T, with_output):
    g = unrolled_graph(T, with_output)
    kinds = [v.kind for v in g.vertices]
    assert len(g.vertices) == (5 * T + 2 if with_output else 3 * T + 2)
    assert len(g.edges) == (8 * T if with_output else 4 * T)
    assert kinds.count("input") == T and kinds.count("state") == T + 1
    assert kinds.count("output") == (T if with_output else 0)
    assert kinds.count("map") == (2 * T if with_output else T) and kinds.count("parameter") == 1
    assert len(g.edge_set(PARAMETER)) == (2 * T if with_output else T)
    for t in range(1, T + 1):
        assert sorted(g.predecessors(f"F{t}")) == sorted([f"h{t - 1}", f"x{t}", "theta"])
        assert g.predecessors(f"h{t}") == [f"F{t}"]
        if with_output:
            assert sorted(g.predecessors(f"G{t}")) == sorted([f"h{t}", f"x{t}", "theta"])
            assert g.predecessors(f"y{t}") == [f"G{t}"]


def _is_topological(g, order):
    pos = {v: k for k, v in enumerate(order)}
    return sorted(order) == sorted(v.id for v in g.vertices) and all(pos[a] < pos[b] for a, b in g.edge_set())


@given(st.integers(0, 150), st.booleans())
def test_unrolled_graph_is_a_dag(T, with_output):
    g = unrolled_graph(T, with_output)
    g.check_acyclic()
    assert g.is_acyclic()
    assert _is_topological(g, g.topological_order())
    assert _is_topological(g, g.time_order())


def test_time_order_small():
    assert unrolled_graph(2, True).time_order() == [
        "theta", "h0", "x1", "F1", "h1", "G1", "y1", "x2", "F2", "h2", "G2", "y2"]


@given(st.integers(1, 30), st.data())
def test_cycle_check_raises_when_a_cycle_is_added(T, data):
    g = unrolled_graph(T)
    s = data.draw(st.integers(1, T))
    t = data.draw(st.integers(0, s - 1))
    # h_s depends on F_{t+1}; an edge h_s -> F_{t+1} closes a cycle
    bad = ComputationGraph(list(g.vertices), list(g.edges) + [Edge(f"h{s}", f"F{t + 1}")])
    assert not bad.is_acyclic()
    with pytest.raises(graphlib.CycleError):
        bad.check_acyclic()
    with pytest.raises(ValueError):
        bad.topological_order()


@pytest.mark.parametrize("with_output", [False, True])
def test_folded_schematic_has_the_feedback_cycle(with_output):
    g = folded_graph(with_output)
    assert g.edge_set(FEEDBACK) == {("h", "F")}
    assert {("F", "h"), ("x", "F"), ("theta", "F")} <= g.edge_set()
    assert g.edge_set(PARAMETER) == ({("theta", "F"), ("theta", "G")} if with_output else {("theta", "F")})
    with pytest.raises(graphlib.CycleError) as info:
        g.check_acyclic()
    assert {"h", "F"} <= set(info.value.args[1])
    cut = ComputationGraph(list(g.vertices), [e for e in g.edges if e.kind != FEEDBACK])
    assert cut.is_acyclic()
    net = SharedParameterRNN(lambda Fld, h, x, th: h, None, (lambda Fld, h, x, th: h) if with_output else None)
    assert net.folded().edge_set() == g.edge_set()


# -- running -----------------------------------------------------------------

def _F(Fld, h, x, th):
    """A rational state map of a 2-dimensional state and 1-dimensional input."""
    a, b = Fld.from_number(th["a"]), Fld.from_number(th["b"])
    num = Fld.add(Fld.mul(a, h[0]), x[0])
    den = Fld.add(Fld.one(), Fld.mul(h[1], h[1]))
    return [Fld.div(num, den), Fld.sub(Fld.mul(b, h[0]), Fld.mul(h[1], x[0]))]


def _G(Fld, h, x, th):
    return [Fld.add(h[0], Fld.mul(Fld.from_number(th["a"]), h[1])), Fld.mul(h[1], x[0])]


def _hand_loop(th, h0, xs):
    a, b = th["a"], th["b"]
    h, states, outputs = list(h0), [list(h0)], []
    for (x,) in xs:
        h = [(a * h[0] + x) / (1 + h[1] * h[1]), b * h[0] - h[1] * x]
        states.append(h)
        outputs.append([h[0] + a * h[1], h[1] * x])
    return states, outputs


@given(fractions(), fractions(), st.tuples(fractions(), fractions()), st.lists(fractions(), max_size=6))
def test_run_equals_a_hand_written_loop(a, b, h0, xs):
    E = ExactField(4)
    th = {"a": a, "b": b}
    seen = []

    def F_spy(Fld, h, x, theta):
        seen.append(theta)
        return _F(Fld, h, x, theta)

    run = SharedParameterRNN(F_spy, th, _G).run(E, list(h0), [[x] for x in xs])
    states, outputs = _hand_loop(th, h0, [[x] for x in xs])
    assert len(run.states) == len(xs) + 1 and len(run.outputs) == len(xs)
    for got, want in zip(run.states + run.outputs, states + outputs):
        assert all(exact_equal(E, g, E.from_number(w)) for g, w in zip(got, want))
    assert all(s is th for s in seen) and len(seen) == len(xs)   # one shared theta
    assert SharedParameterRNN(_F, th).run(E, list(h0), [[x] for x in xs]).outputs is None


@given(fractions(), fractions(), st.tuples(fractions(), fractions()), st.lists(fractions(), max_size=5))
def test_run_in_ball_field_encloses_the_exact_run(a, b, h0, xs):
    E, B = ExactField(4), BallField(80)
    net = SharedParameterRNN(_F, {"a": a, "b": b}, _G)
    exact = net.run(E, list(h0), [[x] for x in xs])
    balls = net.run(B, list(h0), [[x] for x in xs])
    for got, want in zip(balls.states + balls.outputs, exact.states + exact.outputs):
        assert all(encloses(g, E, w) for g, w in zip(got, want))


@given(st.lists(st.lists(fractions(), min_size=2, max_size=2), max_size=6))
def test_linear_network_matches_a_hand_loop(xs):
    A, Bm, C = [[1, Fraction(1, 2)], [-2, 3]], [[1, 0], [Fraction(1, 3), 1]], [[1, -1]]
    E = ExactField(4)
    run = linear_network(A, Bm, C).run(E, np.array([1.0, -0.5]), xs)
    h = [Fraction(1), Fraction(-1, 2)]
    for t, x in enumerate(xs, start=1):
        h = [sum(A[i][k] * h[k] for k in range(2)) + sum(Bm[i][k] * x[k] for k in range(2)) for i in range(2)]
        assert all(exact_equal(E, g, E.from_number(w)) for g, w in zip(run.states[t], h))
        assert exact_equal(E, run.outputs[t - 1][0], E.from_number(h[0] - h[1]))


# -- export --------------------------------------------------------------------

_DOT_NODE = re.compile(r'^"(\w+)" \[label=<([^>]*(?:<sub>\w+</sub>)?)>, shape=(box|ellipse)\];$')
_DOT_EDGE = re.compile(r'^"(\w+)" -> "(\w+)"(?: \[(.*)\])?;$')


def parse_dot(text):
    """A strict reader for the DOT subset written: returns nodes and {edge: attributes}."""
    lines = [ln.strip() for ln in text.strip().splitlines()]
    assert re.fullmatch(r'digraph "\w+" \{', lines[0]) and lines[-1] == "}"
    assert text.count("{") == text.count("}") == 1
    nodes, edges = {}, {}
    for ln in lines[1:-1]:
        if ln == "rankdir=LR;":
            continue
        if m := _DOT_NODE.match(ln):
            nodes[m.group(1)] = m.group(3)
        elif m := _DOT_EDGE.match(ln):
            assert m.group(1) in nodes and m.group(2) in nodes, ln
            assert (m.group(1), m.group(2)) not in edges
            edges[(m.group(1), m.group(2))] = m.group(3) or ""
        else:
            raise AssertionError(f"unparsed DOT line: {ln}")
    return nodes, edges


_TIKZ_NODE = re.compile(r"^\\node \((\w+)\) at \((-?[\d.]+),(-?[\d.]+)\) \{(\$[^$]+\$)\};$")
_TIKZ_EDGE = re.compile(r"^\\draw\[([^\]]*)\] \((\w+)\) (--|to\[bend left=60\]) \((\w+)\);$")


def parse_tikz(text):
    lines = [ln.strip() for ln in text.strip().splitlines()]
    assert lines[0].startswith(r"\begin{tikzpicture}[>=stealth") and lines[-1] == r"\end{tikzpicture}"
    nodes, edges = {}, {}
    for ln in lines[1:-1]:
        if m := _TIKZ_NODE.match(ln):
            nodes[m.group(1)] = ((float(m.group(2)), float(m.group(3))), m.group(4))
        elif m := _TIKZ_EDGE.match(ln):
            assert m.group(2) in nodes and m.group(4) in nodes, ln
            edges[(m.group(2), m.group(4))] = (m.group(1), m.group(3))
        else:
            raise AssertionError(f"unparsed TikZ line: {ln}")
    return nodes, edges


# T = 2600 puts coordinates past 10^4, where a careless number format would write 1e+04
GRAPHS = [unrolled_graph(0), unrolled_graph(1), unrolled_graph(2), unrolled_graph(7),
          unrolled_graph(2600), unrolled_graph(3, True), folded_graph(), folded_graph(True)]


@pytest.mark.parametrize("g", GRAPHS, ids=lambda g: g.name + str(len(g.vertices)))
def test_dot_export_parses_with_every_edge(g):
    nodes, edges = parse_dot(g.to_dot())
    assert set(nodes) == {v.id for v in g.vertices}
    assert all(nodes[v.id] == ("box" if v.kind == "map" else "ellipse") for v in g.vertices)
    assert set(edges) == g.edge_set()
    assert {e for e, a in edges.items() if a == "style=dashed"} == g.edge_set(PARAMETER)
    assert {e for e, a in edges.items() if a.startswith("style=bold")} == g.edge_set(FEEDBACK)
    assert {e for e, a in edges.items() if a == ""} == g.edge_set(DATA)


@pytest.mark.parametrize("g", GRAPHS, ids=lambda g: g.name + str(len(g.vertices)))
def test_tikz_export_contains_every_edge(g):
    nodes, edges = parse_tikz(g.to_tikz())
    assert set(nodes) == {v.id for v in g.vertices}
    assert set(edges) == g.edge_set()
    assert {e for e, (o, _) in edges.items() if o == "->, dashed"} == g.edge_set(PARAMETER)
    assert {e for e, (o, how) in edges.items() if how.startswith("to")} == g.edge_set(FEEDBACK)
    assert {e for e, (o, how) in edges.items() if o == "->" and how == "--"} == g.edge_set(DATA)
    assert len({pos for pos, _ in nodes.values()}) == len(nodes)   # no two nodes on one spot


# -- bad input -------------------------------------------------------------------

@pytest.mark.parametrize("T", [-1, -7, 2.0, 2.5, "3", None, True, [2]])
def test_bad_horizon_raises(T):
    with pytest.raises(ValueError, match="horizon T"):
        unrolled_graph(T)
    with pytest.raises(ValueError, match="horizon T"):
        SharedParameterRNN(_F, {"a": 1, "b": 1}).unroll(T)


def test_bad_network_input_raises():
    E = ExactField(4)
    net = SharedParameterRNN(_F, {"a": 1, "b": 1})
    with pytest.raises(ValueError, match="F_map"):
        SharedParameterRNN(3, None)
    with pytest.raises(ValueError, match="G_map"):
        SharedParameterRNN(_F, None, "G")
    with pytest.raises(ValueError, match="same length"):
        net.run(E, [0, 0], [[1], [1, 2]])
    with pytest.raises(ValueError, match="xs"):
        net.run(E, [0, 0], np.zeros((2, 1, 1)))
    with pytest.raises(ValueError, match="h0"):
        net.run(E, [], [[1]])
    with pytest.raises(ValueError, match="F_map at t=1"):
        SharedParameterRNN(lambda Fld, h, x, th: h + h, None).run(E, [0], [[1]])
    calls = []

    def G_growing(Fld, h, x, th):   # one more output entry at every call
        calls.append(t := len(calls) + 1)
        return [x[0]] * t

    with pytest.raises(ValueError, match="G_map at t=2"):
        SharedParameterRNN(lambda Fld, h, x, th: h, None, G_growing).run(E, [0], [[1], [2]])
    with pytest.raises(ValueError, match="A must be"):
        linear_network([[1, 0]], [[1]]).run(E, [0], [[1]])

