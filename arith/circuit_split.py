"""A circuit run in two processes: the same values, on two cores.

A traced filter is mostly independent work (the sums at each root) joined at the end
(the transform), and its costly gates are k-bit products and quotients.  ``plan_split``
picks *targets*: nodes whose ancestor sets (cones) together hold about half of the
costly gates and overlap the rest of the circuit little.  A helper process computes the
targets' cones and sends each target's value as soon as it has it; the main process
computes the rest of the circuit and takes the targets' values when it reaches a gate
that reads one.  Shared ancestors are computed by both.

Every node is made by the same field operation on the same operand values as in a
one-process run, and the leaves (inputs, constants, roots of unity) are all made first,
in the main process, in instruction order, the order a one-process run requests them
(a field's table of roots may depend on that order), so every value, the outputs
included, is the one-process run's (``rational_circuit.md`` §7b).
"""
from __future__ import annotations

import math
import os
import pickle
import signal
import subprocess
import sys
from dataclasses import dataclass
from typing import Any, Callable

from .tracing import GATES, Circuit

#: relative cost of the costly gates (a k-bit complex product, a complex quotient)
COSTS = {"mul": 1.0, "div": 2.0}
#: leaves: made in the main process first, in instruction order
LEAVES = ("input", "const", "root")


@dataclass
class SplitPlan:
    """``targets``: the nodes the helper sends, in order; ``helper``: the nodes it makes
    (the targets' cones), in order; ``main``: the non-leaf nodes the main process makes,
    in order; ``predicted``: the predicted time of the two-process run over the
    one-process run's (costs ``COSTS``, leaves and cheap gates free)."""

    targets: list[int]
    helper: list[int]
    main: list[int]
    predicted: float


def _operands(ins: tuple) -> tuple[int, ...]:
    return tuple(ins[1:]) if ins[0] in GATES else ()


def plan_split(circuit: Circuit, max_costly: int = 25_000, thetas=(64, 32, 16, 8, 4),
               shares=(0.45, 0.5, 0.55)) -> SplitPlan | None:
    """The best plan found (least predicted time), or None when the circuit has a step
    that is not a leaf or a rational gate, more than ``max_costly`` costly gates (the
    cone bitsets grow as their square), or no plan predicted below 0.8.

    Candidates: for each threshold W/theta (W the total cost), the *frontier* nodes, whose
    cone costs at most W/theta while a node reading them (or the output list) needs more;
    targets are taken from the frontier in order while the targets' cones together cost
    at most share W.  Each candidate's two runs are simulated in instruction order, the
    main process waiting for a target until the helper has made it."""
    ins = circuit.instructions
    if any(x[0] not in GATES and x[0] not in LEAVES for x in ins):
        return None
    costly = [i for i, x in enumerate(ins) if x[0] in COSTS]
    if not costly or len(costly) > max_costly:
        return None
    n = len(ins)
    cost = [COSTS.get(x[0], 0.0) for x in ins]
    bit = {i: 1 << j for j, i in enumerate(costly)}
    div_mask = sum(bit[i] for i in costly if ins[i][0] == "div")
    cone = [0] * n
    for i, x in enumerate(ins):
        b = bit.get(i, 0)
        for a in _operands(x):
            b |= cone[a]
        cone[i] = b

    def cone_cost(b: int) -> float:
        return b.bit_count() + (COSTS["div"] - COSTS["mul"]) * (b & div_mask).bit_count()

    W = sum(cost)
    ccost = [cone_cost(b) for b in cone]
    readers: list[list[int]] = [[] for _ in range(n)]
    for i, x in enumerate(ins):
        for a in _operands(x):
            readers[a].append(i)
    outputs = set(circuit.outputs)
    gates = [g for g in range(n) if ins[g][0] in GATES]
    # a gate is on the frontier of a limit when its cone is within it and some reader's is not
    reader_max = [math.inf if g in outputs else max((ccost[h] for h in readers[g]), default=-1.0)
                  for g in range(n)]
    best = None
    for theta in thetas:
        limit = W / theta
        frontier = [g for g in gates if ccost[g] <= limit < reader_max[g]]
        for share in shares:
            targets, union = [], 0
            for g in frontier:
                u = union | cone[g]
                if cone_cost(u) <= share * W:
                    targets.append(g)
                    union = u
            if not targets:
                continue
            plan = _plan(circuit, targets, cost)
            if best is None or plan.predicted < best.predicted:
                best = plan
    return best if best is not None and best.predicted < 0.8 else None


def _closure(ins: list[tuple], roots, stop: set[int]) -> list[int]:
    """The non-leaf nodes among ``roots`` and their ancestors, not entering ``stop``
    (whose members are kept but not expanded), in order."""
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        g = stack.pop()
        if g in seen:
            continue
        seen.add(g)
        if g in stop:
            continue
        stack.extend(_operands(ins[g]))
    return sorted(g for g in seen if ins[g][0] not in LEAVES)


def _plan(circuit: Circuit, targets: list[int], cost: list[float]) -> SplitPlan:
    ins = circuit.instructions
    tset = set(targets)
    main = [g for g in _closure(ins, circuit.outputs, tset) if g not in tset]
    # only the targets the main process reads (or returns): the others' cones are dead work
    read = {a for g in main for a in _operands(ins[g])} | set(circuit.outputs)
    targets = [g for g in targets if g in read]
    tset = set(targets)
    helper = _closure(ins, targets, set())
    t, ready = 0.0, {}
    for g in helper:
        t += cost[g]
        if g in tset:
            ready[g] = t
    t = 0.0
    for g in main:
        for a in _operands(ins[g]):
            if a in ready:
                t = max(t, ready[a])
        t += cost[g]
    for g in circuit.outputs:
        t = max(t, ready.get(g, 0.0))
    return SplitPlan(sorted(targets), helper, main, t / sum(cost))


def _last_uses(ins: list[tuple], order: list[int], keep: set[int]) -> dict[int, list[int]]:
    """For each node of ``order``, the operands it reads last in that order (not in keep)."""
    last: dict[int, int] = {}
    for g in order:
        for a in _operands(ins[g]):
            last[a] = g
    out: dict[int, list[int]] = {}
    for a, g in last.items():
        if a not in keep:
            out.setdefault(g, []).append(a)
    return out


def _make(F, ops: dict, vals: dict, x: tuple):
    if len(x) == 2:
        return ops[x[0]](vals[x[1]])
    return ops[x[0]](vals[x[1]], vals[x[2]])


def _serve() -> None:
    """The helper process (``python -c "...; _serve()"``): read (field factory, steps,
    leaves, targets) from stdin, make ``steps`` (node, instruction) in order, and write
    (node, value) for each target when made to the protocol stream; ("error", text) on a
    failure.  The process's own stdout goes to its stderr, so that nothing else can
    enter the stream; Ctrl-C is left to the main process, which ends this one."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    try:
        try:
            field_factory, steps, leaves, targets = pickle.load(sys.stdin.buffer)
            F = field_factory()
            ops = {g: getattr(F, g) for g in GATES}
            vals = dict(leaves)
            tset = set(targets)
            ins = {g: x for g, x in steps}
            frees = _last_uses(ins, [g for g, _ in steps], set())
            for g, x in steps:
                vals[g] = _make(F, ops, vals, x)
                if g in tset:
                    pickle.dump((g, vals[g]), out, protocol=pickle.HIGHEST_PROTOCOL)
                    out.flush()
                for a in frees.get(g, ()):
                    vals.pop(a, None)
        except (BrokenPipeError, EOFError):
            raise
        except Exception as e:  # reported to the main process
            pickle.dump(("error", f"{type(e).__name__}: {e}"), out)
        out.close()
    except (BrokenPipeError, EOFError, OSError):
        pass  # the main process has gone or stopped reading: nothing to report
    finally:
        os._exit(0)


#: the helper's command: a fresh interpreter that imports only this module's package
_HELPER = [sys.executable, "-c", "from s4cert.arith.circuit_split import _serve; _serve()"]


def run_split(circuit: Circuit, F, field_factory: Callable[[], Any], plan: SplitPlan,
              inputs: list | None = None) -> list:
    """The circuit's outputs in F, by ``plan`` in two processes (see the module).
    ``field_factory`` (picklable) makes, in the helper, a field whose operations are F's.
    The helper is a new interpreter (never the caller's main module), fed through a
    pipe.  RuntimeError when the helper cannot start, fails (a zero divisor, say) or ends
    before sending what the main process needs; the caller may then run the circuit in
    one process, which gives the same values."""
    if inputs is None:
        inputs = circuit.input_values
    if len(inputs) != circuit.n_inputs:
        raise ValueError(f"circuit has {circuit.n_inputs} inputs, got {len(inputs)}")
    ins = circuit.instructions
    leaves = {}
    for g, x in enumerate(ins):  # every leaf, in the one-process run's order
        if x[0] == "input":
            leaves[g] = F.from_number(inputs[x[1]])
        elif x[0] == "const":
            leaves[g] = F.const(x[1])
        elif x[0] == "root":
            leaves[g] = F.root_of_unity(x[1], x[2])
    helper_leaves = {a: leaves[a] for g in plan.helper for a in _operands(ins[g]) if a in leaves}
    keep = set(circuit.outputs)
    read = {a for g in plan.main for a in _operands(ins[g])} | keep
    main_leaves = {a: v for a, v in leaves.items() if a in read}
    del leaves
    try:
        proc = subprocess.Popen(_HELPER, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)
    except OSError as e:
        raise RuntimeError(f"circuit run: the helper process could not start: {e}") from None
    try:
        try:
            pickle.dump((field_factory, [(g, ins[g]) for g in plan.helper], helper_leaves, plan.targets),
                        proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            proc.stdin.close()
        except OSError:
            raise RuntimeError("circuit run: the helper process ended before reading its work") from None
        del helper_leaves
        return _main_part(circuit, F, plan, main_leaves, proc.stdout)
    finally:
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def _main_part(circuit: Circuit, F, plan: SplitPlan, vals: dict, receive) -> list:
    ins = circuit.instructions
    ops = {g: getattr(F, g) for g in GATES}
    keep = set(circuit.outputs)
    frees = _last_uses(ins, plan.main, keep)
    for g in plan.main:
        for a in _operands(ins[g]):
            while a not in vals:
                _receive(receive, vals)
        vals[g] = _make(F, ops, vals, ins[g])
        for a in frees.get(g, ()):
            if a not in keep:
                vals.pop(a, None)
    for g in circuit.outputs:
        while g not in vals:
            _receive(receive, vals)
    return [vals[g] for g in circuit.outputs]


def _receive(receive, vals: dict) -> None:
    try:
        g, v = pickle.load(receive)
    except (EOFError, OSError, pickle.UnpicklingError):
        raise RuntimeError("circuit run: the helper process ended before sending its values") from None
    if g == "error":
        raise RuntimeError(f"circuit run: the helper process failed: {v}")
    vals[g] = v
