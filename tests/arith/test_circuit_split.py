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
    targets and the leaves close the outputs; no node is made twice in a process.  The
    prediction is what SplitPlan defines (no proof bounds it): the simulated two-process
    time over the one-process cost W, so at least each process's own cost over W (the main
    process waits for the last target the helper makes) and at most their sum over W (all
    waiting serial); below 0.8 by plan_split's contract."""
    from s4cert.arith.circuit_split import COSTS
    plan = plan_split(circuit)
    assert plan is not None and plan.targets
    ins = circuit.instructions
    cost = lambda nodes: sum(COSTS.get(ins[g][0], 0.0) for g in nodes)
    W = cost(range(len(ins)))
    # integer costs: the sums are exact and t / W is one rounding, monotone in t
    assert max(cost(plan.main), cost(plan.helper)) / W <= plan.predicted <= (cost(plan.main) + cost(plan.helper)) / W
    assert plan.predicted < 0.8
    assert set(plan.targets) <= set(plan.helper)
    assert plan.helper == _closure(ins, plan.targets, set())
    made = set(plan.main) | set(plan.targets)
    for g in plan.main:
        assert all(a in made or ins[a][0] in ("input", "const", "root") for a in _operands(ins[g]))
    assert set(circuit.outputs) <= made | {i for i, x in enumerate(ins) if x[0] in ("input", "const", "root")}
    assert len(set(plan.main)) == len(plan.main) and not set(plan.main) & set(plan.targets)
    shared = set(plan.main) & set(plan.helper)
    assert len(shared) < len(plan.helper) // 4
    read = {a for g in plan.main for a in _operands(ins[g])} | set(circuit.outputs)
    assert set(plan.targets) <= read          # no target whose cone is dead work


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


def test_a_helper_that_cannot_work_raises_and_the_mode_falls_back(circuit, monkeypatch):
    """A helper that ends at once (before reading its work) gives RuntimeError, never a
    hang; the a-priori mode then runs the circuit in one process, with the same values."""
    import sys
    import math
    import s4cert.arith.circuit_split as cs
    import s4cert.certs.apriori as apriori
    from s4cert.certs.kernel import certify_kernel
    monkeypatch.setattr(cs, "_HELPER", [sys.executable, "-c", "pass"])
    with pytest.raises(RuntimeError, match="helper process ended"):
        run_split(circuit, ShiftRoundedField(5000), partial(ShiftRoundedField, 5000), plan_split(circuit))
    m, eps = example_model(3, seed=2), Fraction(1, 10**12)
    monkeypatch.setattr(apriori, "_cores", lambda: 2)
    monkeypatch.setattr(apriori, "SPLIT_SECONDS", 0.0)
    msgs = []
    fell_back = certify_kernel(m, 0.01, 16, eps, mode="a-priori", progress=msgs.append)
    assert any("running the circuit in one process" in s for s in msgs)
    monkeypatch.setattr(apriori, "SPLIT_SECONDS", math.inf)
    assert fell_back.exact == certify_kernel(m, 0.01, 16, eps, mode="a-priori").exact


SCRIPT = """
import sys
from fractions import Fraction
from functools import partial
from s4cert.algorithms.s4.filter import filter_kernel
from s4cert.arith import BallField, trace
from s4cert.arith.circuit_split import plan_split, run_split
from s4cert.arith.fixed_point import ShiftRoundedField
from s4cert.certs.examples import example_model
print("top level ran", file=sys.stderr)
c = trace(BallField(128), filter_kernel, example_model(2), 0.01, 8, cauchy="direct").circuit
one = c.evaluate(ShiftRoundedField(300), live_only=True)
two = run_split(c, ShiftRoundedField(300), partial(ShiftRoundedField, 300), plan_split(c))
print("same" if [(v.x, v.y) for v in one] == [(v.x, v.y) for v in two] else "different")
"""


def test_a_script_without_a_main_guard(tmp_path):
    """The helper is a new interpreter that never imports the caller's main module: a
    script that splits a run at its top level finishes, and its top level runs once."""
    import subprocess
    import sys
    path = tmp_path / "script.py"
    path.write_text(SCRIPT)
    p = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "same"
    assert p.stderr.count("top level ran") == 1
