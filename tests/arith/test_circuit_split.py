"""A circuit run in two processes gives the one-process run's values."""
from fractions import Fraction
from functools import partial

import pytest

from s4cert.algorithms.s4.filter import filter_kernel
from s4cert.arith import BallField, RoundedField, trace
from s4cert.arith.circuit_split import SplitPlan, _closure, _operands, plan_split, run_split
from s4cert.arith.fixed_point import ShiftRoundedField
from s4cert.arith.tracing import Circuit
from s4cert.certs.examples import example_model


@pytest.fixture(scope="module")
def circuit():
    t = trace(BallField(128), filter_kernel, example_model(4), 0.01, 16, cauchy="direct")
    assert t.status == "ok"
    return t.circuit


def test_plan_covers_the_circuit_once_each_side(circuit):
    """The helper's nodes are its targets' cones; the main process's nodes with the
    targets and the leaves close the outputs; no node is made twice in a process; the
    plan predicts a gain."""
    plan = plan_split(circuit)
    assert plan is not None and plan.predicted < 0.8 and plan.targets
    ins = circuit.instructions
    assert set(plan.targets) <= set(plan.helper)
    assert plan.helper == _closure(ins, plan.targets, set())
    made = set(plan.main) | set(plan.targets)
    for g in plan.main:
        assert all(a in made or ins[a][0] in ("input", "const", "root") for a in _operands(ins[g]))
    assert set(circuit.outputs) <= made | {i for i, x in enumerate(ins) if x[0] in ("input", "const", "root")}
    assert len(set(plan.main)) == len(plan.main) and not set(plan.main) & set(plan.targets)
    shared = set(plan.main) & set(plan.helper)
    assert len(shared) < len(plan.helper) // 4


@pytest.mark.parametrize("k", [300, 5000])
def test_two_processes_give_the_same_integers(circuit, k):
    """The split run's outputs are the one-process run's, bit for bit, in RoundedField
    and in ShiftRoundedField (whose quotients take the cut at k = 5000)."""
    plan = plan_split(circuit)
    for field in (RoundedField, ShiftRoundedField):
        one = circuit.evaluate(field(k), live_only=True)
        two = run_split(circuit, field(k), partial(field, k), plan)
        assert [(v.x, v.y) for v in one] == [(v.x, v.y) for v in two]


def test_a_failure_in_the_helper_is_raised():
    """A zero divisor met by the helper process ends the run with RuntimeError naming it."""
    c = Circuit(instructions=[("input", 0), ("input", 1), ("div", 0, 1), ("add", 2, 0)],
                input_values=[Fraction(1), Fraction(0)], outputs=[3])
    plan = SplitPlan(targets=[2], helper=[2], main=[3], predicted=0.5)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        run_split(c, RoundedField(10), partial(RoundedField, 10), plan)


def test_steps_outside_the_rational_gates_are_not_split():
    c = Circuit(instructions=[("input", 0), ("sqrt", 0), ("mul", 1, 1)], input_values=[Fraction(2)], outputs=[2])
    assert plan_split(c) is None
