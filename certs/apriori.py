"""The a-priori mode: the rational-circuit certificate of the spec's theorem.

The filter is traced into a straight-line program (T0 gates), once with each Cauchy
route of ``CIRCUIT_ROUTES``.  A ball evaluation of each circuit bounds every exact
intermediate modulus from above (V0 >= 1) and every exact divisor modulus from below
(0 < D0 <= 1).  With K0 = 64 (V0+1)^2 / D0^2 the theorem
asks for u <= min(1, D0/2, eps/2) / (2 K0^(T0+1)); the circuit is then run in
RoundedField at u = 2^-k, every input, constant and operation within u, and the theorem
bounds the output error by eps.  Work is in log2: k may be in the millions.  The run's
cost grows like T0 k, and k like T0 log2 K0, so the circuit run is the one of least
(products + 3 quotients) k: the direct sums' divisors are the distances z_k - mu_j, where
the product tree divides by whole products of them (at N = 8, L = 64: log2 K0 36 against
145 bits, so k is four times smaller for the same T0).  The certificate names the route
(``circuit_cauchy``), and the audit re-traces that circuit.
"""
from __future__ import annotations

import math
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from functools import partial
from typing import Any, Callable

import numpy as np
from flint import acb, arb, ctx, fmpq, fmpz

from ..algorithms.s4.c_tilde import c_tilde as form_c_tilde
from ..algorithms.s4.filter import FILTER_VERSION, filter_kernel
from ..algorithms.s4.exact_route import exact_c_tilde
from ..arith import BallField, trace
from ..arith.tracing import GATES, Tracing, _Node
from ..arith.circuit_split import plan_split, run_split
from ..arith.fixed_point import ShiftRoundedField
from ..arith.ball import float_upper

from .ball_run import C_TILDE_METHOD
from . import routing
from .io.numbers import arb_point
from .errors import CertificationError


@dataclass
class APrioriResult:
    """The a-priori mode's kernel: float64 midpoints ``mid`` and radii ``rad`` with
    |K_j - mid_j| <= rad_j, ``balls`` (disks of radius eps about the rounded outputs),
    the ``certificate`` entries (T0, V0, D0 as strings, log2_K0, log2_u, precision_bits,
    max_radius, checked_against_ball, n_inputs, zero_tests) and ``values``."""

    mid: np.ndarray
    rad: np.ndarray
    balls: list
    certificate: dict
    values: list  # the rounded circuit outputs, exactly (each within eps of K_j)


def circuit_bounds(circuit, inputs: list, prec: int, max_prec: int) -> tuple[Fraction, Fraction, int]:
    """(V0, D0, precision used): V0 >= 1 bounds |every node| from above, 0 < D0 <= 1
    bounds |every divisor| from below, from a ball evaluation; the precision doubles
    until every divisor is certainly nonzero."""
    divisors = set(circuit.divisors())
    while True:
        F = BallField(prec)
        vals = circuit.run(F, inputs)
        with ctx.workprec(64):
            V0 = arb(1)
            D0 = arb(1)
            ok = True
            for i, v in enumerate(vals):
                if not v.is_finite():
                    ok = False
                    break
                up = abs(v).upper()
                V0 = V0 if V0 >= up else up
                if i in divisors:
                    lo = abs(v).lower()
                    if not lo > 0:
                        ok = False
                        break
                    D0 = D0 if D0 <= lo else lo
        if ok:
            return arb_point(V0.mid()), arb_point(D0.mid()), prec
        if 2 * prec > max_prec:
            raise CertificationError(f"a-priori: a divisor of the circuit is not certainly nonzero at {prec} bits")
        prec *= 2


def required_bits(T0: int, V0: Fraction, D0: Fraction, eps: Fraction) -> tuple[int, float]:
    """k with 2^-k <= min(1, D0/2, eps/2) / (2 K0^(T0+1)), K0 = 64 (V0+1)^2 / D0^2, and an
    upper bound of log2 K0.  Decided in ball arithmetic with certainty."""
    with ctx.workprec(128):
        K0 = arb(fmpq(64)) * (arb(_q(V0)) + 1) ** 2 / arb(_q(D0)) ** 2
        m = min(Fraction(1), D0 / 2, eps / 2)
        need = (T0 + 1) * K0.log() / arb(2).log() + (2 / arb(_q(m))).log() / arb(2).log()
        k = int(math.ceil(float(need.upper()))) + 1
        while not (arb(k) >= need):
            k += 1
        return k, float_upper((K0.log() / arb(2).log()).upper())


def _q(x: Fraction) -> fmpq:
    return fmpq(x.numerator, x.denominator)


def apriori_kernel(model, step, L: int, eps: Fraction, c_tilde: Any, exceptional: list[int], balls: list,
                   F: BallField, limit: int, force: bool, progress: Callable[[str], None]) -> APrioriResult:
    """The kernel by the rational-circuit theorem (see the module): the filter traced in
    F (the ball run's field) with the ``exceptional`` partition, bounded, run in
    RoundedField at the theorem's u, and each output checked against the ball run's
    ``balls``.  CertificationError when u needs more than ``limit`` bits (unless
    ``force``), a divisor is not certainly nonzero, an input is wider than u allows, or
    an output disagrees with the ball result."""
    M = 1 << max(0, (L - 1).bit_length())
    tracer_inputs_ct = c_tilde if c_tilde is not None else _ball_c_tilde(model, step, M, F.prec)
    route, circuit, V0, D0, k, log2_K0 = _cheapest_circuit(F, model, step, L, tracer_inputs_ct, exceptional,
                                                           eps, limit, progress)
    T0 = circuit.gates
    if k > limit and not force:
        raise CertificationError(f"a-priori: u = 2^-{k} needs {k} bits, above the limit of {limit} bits "
                                 f"(T0 = {T0}, log2 K0 <= {log2_K0:.1f}); force it or use the ball mode")
    inputs = list(circuit.input_values)
    if c_tilde is None:  # C~ exactly (exact inputs) or enclosed tightly enough for u
        ct = _tight_c_tilde(model, step, M, k)
        inputs = _replace_c_tilde(inputs, tracer_inputs_ct, ct, model.N)
    seconds, estimate = run_estimate(circuit, k)
    progress(estimate)
    R = ShiftRoundedField(k)
    plan = None
    if seconds >= SPLIT_SECONDS and _cores() >= 2:
        progress("planning a run in two processes")
        plan = plan_split(circuit)
    progress(f"running the circuit at u = 2^-{k}" + (" in two processes" if plan else ""))
    try:
        out = None
        if plan is not None:
            try:
                out = run_split(circuit, R, partial(ShiftRoundedField, k), plan, inputs)
            except RuntimeError as e:  # the one-process run gives the same values (§7b)
                progress(f"{e}; running the circuit in one process")
        if out is None:
            with _flint_threads():
                out = circuit.evaluate(R, inputs, live_only=True)
    except ValueError as e:  # a ball input wider than u allows (e.g. a model of balls)
        raise CertificationError(f"a-priori: the inputs must be known to within u = 2^-{k}: {e}; "
                                 "use the ball mode, or give inputs that precise") from None
    values = [R.to_fractions(x) for x in out]
    mid = np.array([complex(float(re), float(im)) for re, im in values], dtype=np.complex128)
    rad = np.empty(len(values))
    enclosures = []
    with ctx.workprec(max(F.prec, 128) + 64):
        e = arb(_q(eps))
        for j, ((re, im), m, b) in enumerate(zip(values, mid, balls)):
            point = acb(arb(_q(re)), arb(_q(im)))
            # the theorem: |point - K_j| <= eps; check it against the ball result
            if not (abs(point - b) <= e + F.radius(b) * 2):
                raise CertificationError(f"a-priori: entry {j} disagrees with the ball certificate")
            rad[j] = float_upper((e + abs(point - acb(m.real, m.imag))).upper())
            enclosures.append(acb(arb(_q(re), e), arb(_q(im), e)))
    cert = {"T0": T0, "V0": str(V0), "D0": str(D0), "log2_K0": log2_K0, "log2_u": -k, "precision_bits": k,
            "circuit_cauchy": route, "filter_version": FILTER_VERSION,
            "max_radius": float(eps), "checked_against_ball": True,
            "n_inputs": circuit.n_inputs, "zero_tests": len(circuit.decisions)}
    return APrioriResult(mid, rad, enclosures, cert, values)


#: a circuit whose run is estimated at this many seconds or more runs in two processes
SPLIT_SECONDS = 3.0


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


@contextmanager
def _flint_threads():
    """FLINT's integer products on every core this process may use (at most 4) while the
    circuit runs: k-bit products split across threads (the integers, hence the results,
    are the same); the previous setting is restored."""
    before = ctx.threads
    ctx.threads = max(1, min(4, _cores()))
    try:
        yield
    finally:
        ctx.threads = before


#: the Cauchy routes whose traced circuits the mode compares (the audit accepts these)
CIRCUIT_ROUTES = ("direct", "tree")


def _cheapest_circuit(F: BallField, model, step, L: int, ct: list, exceptional: list[int], eps: Fraction,
                      limit: int, progress: Callable[[str], None]) -> tuple:
    """Each route's traced circuit, bounded: the one of least (products + 3 quotients) k
    among those within ``limit`` bits (among all when none is), as (route, circuit, V0,
    D0, k, log2 K0).  A route whose trace or bounds fail is left out; CertificationError
    when every route fails."""
    found, why = [], []
    for route in CIRCUIT_ROUTES:
        progress(f"tracing the filter ({route} Cauchy sums)")
        t = trace(F, filter_kernel, model, step, L, c_tilde=ct, exceptional=exceptional, cauchy=route)
        if t.status != "ok":
            why.append(f"traced filter ({route} Cauchy sums) returned {t.status}")
            continue
        circuit = t.circuit
        progress(f"bounding the circuit ({circuit.gates} gates)")
        try:
            V0, D0, _ = circuit_bounds(circuit, circuit.input_values, F.prec, 1 << 20)
        except CertificationError as e:
            why.append(f"{route} Cauchy sums: {e}")
            continue
        k, log2_K0 = required_bits(circuit.gates, V0, D0, eps)
        ops = _operations(circuit)
        found.append(((k > limit, (ops["mul"] + 3 * ops["div"]) * k), route, circuit, V0, D0, k, log2_K0))
    if not found:
        raise CertificationError("a-priori: " + "; ".join(why))
    return min(found, key=lambda c: c[0])[1:]


def _operations(circuit) -> dict:
    ops = {"mul": 0, "div": 0}
    for ins in circuit.instructions:
        if ins[0] in ops:
            ops[ins[0]] += 1
    return ops


def _tight_c_tilde(model, step, M: int, k: int) -> list:
    """C~ for the run at u = 2^-k: exactly, as Gaussian rationals, when the model and step
    are exact numbers (formed on integer matrices, far cheaper than balls at k bits);
    otherwise the ball run's method at k + 64 bits."""
    if routing.exact_inputs(model, step, None):
        res = exact_c_tilde(model, step, M)
        if not res.ok:
            raise CertificationError(f"a-priori: C~ not formed exactly ({res.status})")
        return res.value
    return _ball_c_tilde(model, step, M, k + 64)


def run_estimate(circuit, k: int) -> tuple[float, str]:
    """The rounded run's estimated seconds (one-process run), and a line saying it: one
    k-bit complex product timed here, times the products and quotients (a quotient as
    three); memory as the largest number of live wires times two k-bit integers."""
    live = peak = 0
    frees = circuit.frees()
    for i in range(len(circuit.instructions)):
        live += 1 - len(frees[i])
        peak = max(peak, live)
    ops = _operations(circuit)
    a = (fmpz(1) << k) - 1
    t0 = time.perf_counter()
    for _ in range(4):
        (a * a) >> k
    per = time.perf_counter() - t0
    seconds = per * (ops["mul"] + 3 * ops["div"])
    mem = peak * 2 * (k // 8 + 16)
    return seconds, (f"estimate: about {seconds:.0f} s and {mem / 2**20:.0f} MB for {circuit.gates} gates at "
                     f"{k} bits ({ops['mul']} products, {ops['div']} quotients, at most {peak} live wires)")


def _ball_c_tilde(model, step, M: int, prec: int) -> list:
    """C~ in BallField(prec) as the ball run forms it (CertificationError if it cannot)."""
    res = form_c_tilde(BallField(prec), model, step, M, method=C_TILDE_METHOD)
    if not res.ok:
        raise CertificationError(f"a-priori: C~ not formed at {prec} bits ({res.status})")
    return res.value


def _replace_c_tilde(inputs: list, old: list, new: list, n: int) -> list:
    """Swap the traced C~ balls for tighter ones (same objects, same positions)."""
    ids = {id(x): i for i, x in enumerate(old)}
    return [new[ids[id(x)]] if id(x) in ids else x for x in inputs]


# -- the certificate alone: the circuit traced and bounded as it runs, never stored ----------

class BoundingTracer(Tracing):
    """Tracing over ``BallField(prec)`` that keeps no instructions: it counts the gates
    (T0, and the products and quotients) and folds every node's value into V0 (the
    largest upper bound of |node|) and every divisor's into D0 (the least lower bound), as
    :func:`circuit_bounds` does on the stored circuit, each bound at 64 bits.  Memory is
    the algorithm's own live values.  ``ok`` turns False at a non-finite node or a divisor
    not certainly nonzero; ``decisions`` keeps the zero tests' outcomes."""

    def __init__(self, prec: int):
        super().__init__(BallField(prec))
        self.nodes = 0
        self.gates = 0
        self.ops = {"mul": 0, "div": 0}
        self.V0 = arb(1)
        self.D0 = arb(1)
        self.ok = True

    def _new(self, ins: tuple, v: Any) -> _Node:
        kind = ins[0]
        if kind in GATES:
            self.gates += 1
            if kind in self.ops:
                self.ops[kind] += 1
        if self.ok:
            if not v.is_finite():
                self.ok = False
            else:
                with ctx.workprec(64):
                    up = abs(v).upper()
                    if not self.V0 >= up:
                        self.V0 = up
        self.nodes += 1
        return _Node(self.nodes - 1, v)

    def div(self, a, b):
        if self.ok:
            with ctx.workprec(64):
                lo = abs(b.v).lower()
                if not lo > 0:
                    self.ok = False
                elif not self.D0 <= lo:
                    self.D0 = lo
        return super().div(a, b)


def bounded_trace(model, step, L: int, ct: list, exceptional: list[int], route: str, prec: int,
                  max_prec: int) -> tuple[int, dict, Fraction, Fraction]:
    """(T0, products and quotients, V0, D0) of the filter's circuit on ``route``, traced
    at ``prec`` bits and bounded as it runs (:class:`BoundingTracer`); the precision
    doubles while a divisor is not certainly nonzero (the zero tests must come out as at
    the first trace, so the circuit is the same).  CertificationError when the trace
    fails or the precision passes ``max_prec``."""
    first = None
    while True:
        T = BoundingTracer(prec)
        res = filter_kernel(T, model, step, L, c_tilde=ct, exceptional=exceptional, cauchy=route)
        if res.status != "ok":
            raise CertificationError(f"traced filter ({route} Cauchy sums) returned {res.status}")
        outcomes = [t for _, t in T.circuit.decisions]
        if first is None:
            first = outcomes
        elif outcomes != first:
            raise CertificationError(f"a-priori: the {route} circuit's zero tests changed with the precision")
        if T.ok:
            return T.gates, T.ops, arb_point(T.V0.mid()), arb_point(T.D0.mid())
        if 2 * prec > max_prec:
            raise CertificationError(f"a-priori: a divisor of the circuit is not certainly nonzero at {prec} bits")
        prec *= 2


def apriori_certificate(model, step, L: int, eps: Fraction, c_tilde: Any, exceptional: list[int], F: BallField,
                        limit: int, progress: Callable[[str], None]) -> dict:
    """The certificate :func:`apriori_kernel` would use (the same route choice, T0, V0, D0,
    K0 and u) without storing or running the circuit: each route traced once and bounded
    as it runs.  Keys: ``T0``, ``V0``, ``D0``, ``log2_K0``, ``log2_u``, ``precision_bits``,
    ``circuit_cauchy``, ``filter_version``, ``routes`` (each route's T0 and bits)."""
    M = 1 << max(0, (L - 1).bit_length())
    ct = c_tilde if c_tilde is not None else _ball_c_tilde(model, step, M, F.prec)
    found, why, routes = [], [], {}
    for route in CIRCUIT_ROUTES:
        progress(f"tracing and bounding the filter ({route} Cauchy sums)")
        try:
            T0, ops, V0, D0 = bounded_trace(model, step, L, ct, exceptional, route, F.prec, 1 << 20)
        except CertificationError as e:
            why.append(f"{route} Cauchy sums: {e}")
            continue
        k, log2_K0 = required_bits(T0, V0, D0, eps)
        routes[route] = {"T0": T0, "precision_bits": k}
        found.append(((k > limit, (ops["mul"] + 3 * ops["div"]) * k), route, T0, V0, D0, k, log2_K0))
    if not found:
        raise CertificationError("a-priori: " + "; ".join(why))
    route, T0, V0, D0, k, log2_K0 = min(found, key=lambda c: c[0])[1:]
    return {"T0": T0, "V0": str(V0), "D0": str(D0), "log2_K0": log2_K0, "log2_u": -k, "precision_bits": k,
            "circuit_cauchy": route, "filter_version": FILTER_VERSION, "routes": routes}
