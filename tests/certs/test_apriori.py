"""The a-priori mode on real traced filter circuits, node by node, against exact values:
the error invariant of the rational-circuit theorem, V0 and D0, the exact evaluation of a
circuit traced in ball arithmetic, ball inputs, the check against the ball result, and the
failure paths of circuit_bounds and RoundedField._from_ball."""
from __future__ import annotations

import math
from fractions import Fraction

import pytest
from flint import acb, arb, ctx
from hypothesis import given, settings, strategies as st

import s4cert.certs.ball_run as ball_run
from s4cert.algorithms.dft import next_power_of_two
from s4cert.algorithms.s4.dplr import DPLR
from s4cert.algorithms.s4.c_tilde import c_tilde as exact_c_tilde
from s4cert.algorithms.s4.filter import filter_kernel
from s4cert.arith import BallField, ExactField, RoundedField, Truth, trace
from s4cert.arith.tracing import GATES
from s4cert.certs import routing
from s4cert.certs.apriori import CIRCUIT_ROUTES, _replace_c_tilde, circuit_bounds, required_bits
from s4cert.certs.ball_run import C_TILDE_METHOD
from s4cert.certs.errors import CertificationError
from s4cert.certs.kernel import certify_kernel
from tests.helpers import gaussian, random_dplr, q, point, exact_kernel, nonnegative

E4 = ExactField(4)


def ball_c_tilde(m: DPLR, step, M: int, prec: int) -> list:
    """C~ in BallField(prec) as the certifier forms it."""
    return exact_c_tilde(BallField(prec), m, step, M, method=C_TILDE_METHOD).value
EPS = Fraction(1, 10**6)
TRACE_PREC = 128

MODELS = {
    # r = 1, M = 8: the nodes lie in Q(zeta_8), not all Gaussian rationals
    "N2-r1": (DPLR([-1, (Fraction(-1, 2), 1)], [1, Fraction(1, 2)], [1, 2], [1, (0, 1)]), Fraction(1, 2), 6),
    # r = 2, lambda_0 = -2/step exactly (the exceptional branch), M = 8
    "N3-r2-exceptional": (DPLR([-4, (Fraction(-1, 2), 1), Fraction(-3, 2)],
                               [[1, 0], [Fraction(1, 2), 1], [0, (0, 1)]], [1, 2, (1, -1)],
                               [(1, 1), Fraction(1, 3), 1],
                               Q=[[Fraction(1, 3), 1], [1, 0], [(1, 1), Fraction(1, 2)]]),
                          Fraction(1, 2), 6),
}





def root_order(circuit) -> int:
    """The least ExactField order holding every root node of the circuit."""
    return max([4] + [ins[1] for ins in circuit.instructions if ins[0] == "root"])



def abs2(E: ExactField, v):
    return E.mul(v, E.conj(v))


class Traced:
    """What the a-priori mode builds for a problem with exact numbers: the circuit traced
    in BallField(128) with the C~ balls, and, for the exact evaluation, the inputs with
    the exact C~ (a Gaussian rational) in place of those balls."""

    def __init__(self, m: DPLR, step, L: int, prec: int = TRACE_PREC, cauchy: str = "tree"):
        self.m, self.step, self.L = m, step, L
        self.M = next_power_of_two(L)
        self.ct_balls = ball_c_tilde(m, step, self.M, prec)
        self.exceptional = routing.exact_partition(m, step)
        t = trace(BallField(prec), filter_kernel, m, step, L, c_tilde=self.ct_balls, exceptional=self.exceptional,
                  cauchy=cauchy)
        assert t.status == "ok"
        self.circuit = t.circuit
        ct = exact_c_tilde(E4, m, step, self.M)
        assert ct.ok
        ct_exact = [E4.to_fractions(x) for x in ct.value]
        where = {id(x): i for i, x in enumerate(self.ct_balls)}
        self.exact_inputs = [ct_exact[where[id(x)]] if id(x) in where else x for x in self.circuit.input_values]
        # the C~ balls enter the trace only as C~ inputs, each once
        assert sum(id(x) in where for x in self.circuit.input_values) == m.N
        self.E = ExactField(root_order(self.circuit))
        self.exact_nodes = self.circuit.run(self.E, self.exact_inputs)


@pytest.fixture(scope="module", params=[(name, route) for name in sorted(MODELS) for route in CIRCUIT_ROUTES],
                ids=lambda p: f"{p[0]}-{p[1]}")
def traced(request):
    """Each problem's circuit, traced with each Cauchy route the mode compares."""
    name, route = request.param
    return Traced(*MODELS[name], cauchy=route)


def gate_counts(circuit) -> list[int]:
    """g(i): the number of gates among the nodes 0..i."""
    out, g = [], 0
    for ins in circuit.instructions:
        g += ins[0] in GATES
        out.append(g)
    return out


# -- V0 and D0 (rational_circuit.md section 5) ------------------------------------------

def test_circuit_bounds_hold_for_exact_nodes(traced):
    """V0 >= |v_i| at every node and D0 <= |v_b| at every divisor, for the exact node values
    (decided exactly in Q(zeta)); V0 >= 1 and 0 < D0 <= 1."""
    c, E = traced.circuit, traced.E
    V0, D0, _ = circuit_bounds(c, c.input_values, TRACE_PREC, 1 << 20)
    assert V0 >= 1 and 0 < D0 <= 1
    V2, D2 = E.from_number(V0 * V0), E.from_number(D0 * D0)
    for v in traced.exact_nodes:
        assert nonnegative(E, E.sub(V2, abs2(E, v)))
    divisors = set(c.divisors())
    assert divisors
    for b in divisors:
        assert nonnegative(E, E.sub(abs2(E, traced.exact_nodes[b]), D2))
    # the bounds are those of the nodes, not arbitrary: some node is near V0 (within the
    # 128-bit ball widths) unless V0 = 1
    if V0 > 1:
        with ctx.workprec(256):
            top = max((abs(E.to_acb(v, 256)) for v in traced.exact_nodes), key=lambda x: x.upper())
            assert top.upper() >= arb(q(V0)) * (1 - arb(2) ** -60)


# -- the circuit traced in balls is the exact filter (section 4) ----------------------

def test_ball_traced_circuit_is_the_exact_filter(traced):
    """The circuit traced in BallField, evaluated exactly on the exact inputs, gives the
    exact kernel (by powers in Q(i)); every recorded TRUE/FALSE decision is the exact one."""
    c, E = traced.circuit, traced.E
    outs = [traced.exact_nodes[i] for i in c.outputs]
    assert [E.to_fractions(o) for o in outs] == exact_kernel(traced.m, traced.step, traced.L)
    assert c.decisions
    for node, outcome in c.decisions:
        if outcome is not Truth.UNKNOWN:
            assert E.is_zero(traced.exact_nodes[node]) is outcome


@settings(max_examples=6)
@given(data=st.data())
def test_ball_traced_circuit_with_supplied_c_tilde(data):
    """With a supplied exact C~, the recorded inputs are exact and the circuit's exact
    evaluation is the exact filter on that C~ (random problems)."""
    N = data.draw(st.integers(1, 3))
    step = Fraction(1, 2)
    m = random_dplr(data.draw, N, 1, step, exceptional=data.draw(st.booleans()))
    L = data.draw(st.integers(1, 8))
    ct = [data.draw(gaussian(6, 4)) for _ in range(N)]
    exc = routing.exact_partition(m, step)
    if routing.exact_collisions(m, step, next_power_of_two(L), exc):
        return  # a pole on the grid: no filter to trace
    t = trace(BallField(TRACE_PREC), filter_kernel, m, step, L, c_tilde=ct, exceptional=exc)
    E = ExactField(max(4, next_power_of_two(L), root_order(t.circuit)))
    ref = filter_kernel(E, m, step, L, c_tilde=ct, exceptional=exc)
    if t.status != "ok":  # a singular correction (or one balls cannot decide)
        assert ref.status == "resonant-correction" and t.status in ("undecided", ref.status)
        return
    assert ref.ok
    got = t.circuit.evaluate(E, t.circuit.input_values)
    assert [E.to_fractions(x) for x in got] == [E.to_fractions(x) for x in ref.value]


# -- the invariant of part A on a real circuit (sections 2, 3, 7) ----------------------

@pytest.mark.parametrize("fraction", [1, Fraction(1, 2)])
def test_node_errors_follow_the_invariant(traced, fraction):
    """Replay in RoundedField(k) as the mode does (C~ re-enclosed at k + 64 bits) and
    compare every node with its exact value: |rounded_i - v_i| <= u K0^g(i), and every
    computed divisor has modulus >= D0/2.

    At the certified k (fraction 1) this holds at every node.  At half that k (a modest
    u, above the theorem's) the induction still covers the prefix of nodes with
    u K0^(g(i)-1) <= min(1, D0/2); only that prefix is checked there."""
    c = traced.circuit
    V0, D0, _ = circuit_bounds(c, c.input_values, TRACE_PREC, 1 << 20)
    k_cert, _ = required_bits(c.gates, V0, D0, EPS)
    k = int(k_cert * fraction)
    K0 = 64 * (V0 + 1) ** 2 / D0 ** 2
    u = Fraction(1, 2**k)
    R = RoundedField(k)
    inputs = _replace_c_tilde(list(c.input_values), traced.ct_balls,
                              ball_c_tilde(traced.m, traced.step, traced.M, k + 64), traced.m.N)
    rounded = c.run(R, inputs)
    prec = k + 256
    exact_balls = c.run(BallField(prec), traced.exact_inputs)  # each contains v_i
    g = gate_counts(c)
    divisors = set(c.divisors())
    half_D0_sq = (D0 / 2) ** 2
    checked = 0
    with ctx.workprec(prec):
        K0_arb, u_arb = arb(q(K0)), arb(q(u))
        cap = arb(q(min(Fraction(1), D0 / 2)))
        powers = [arb(1)]
        for i, (r, v) in enumerate(zip(rounded, exact_balls)):
            while len(powers) <= g[i]:
                powers.append(powers[-1] * K0_arb)
            if g[i] >= 1 and not (u_arb * powers[g[i] - 1] <= cap):
                break  # the induction's hypothesis ends here (only at the modest k)
            re, im = R.to_fractions(r)
            assert abs(point(re, im) - v) <= u_arb * powers[g[i]], i
            if i in divisors:
                assert re * re + im * im >= half_D0_sq, i
            checked += 1
    if fraction == 1:
        assert checked == len(c.instructions)
    else:
        assert c.gates // 8 < g[checked - 1] < c.gates


def test_required_bits_meets_the_inequality_exactly():
    """2^-k <= min(1, D0/2, eps/2) / (2 K0^(T0+1)) in exact rational arithmetic, k at most 2
    above the least such integer, and log2_K0 an upper bound of log2 K0 within 2^-30."""
    cases = [(1, Fraction(1), Fraction(1), Fraction(1, 2)),
             (37, Fraction(5, 2), Fraction(3, 7), Fraction(1, 10**9)),
             (250, Fraction(2**64 + 1, 2**60), Fraction(1, 2**40), Fraction(3, 4)),
             (1000, Fraction(11), Fraction(2, 5), Fraction(1, 10**6))]
    for T0, V0, D0, eps in cases:
        k, log2_K0 = required_bits(T0, V0, D0, eps)
        K0 = 64 * (V0 + 1) ** 2 / D0 ** 2
        m = min(Fraction(1), D0 / 2, eps / 2)
        rhs = m / (2 * K0 ** (T0 + 1))
        assert Fraction(1, 2**k) <= rhs
        assert Fraction(1, 2 ** (k - 3)) > rhs
        with ctx.workprec(200):
            exact_log = arb(q(K0)).log() / arb(2).log()
            assert arb(log2_K0) >= exact_log and arb(log2_K0) <= exact_log + arb(2) ** -30


# -- ball inputs (sections 1, 5, 7) ------------------------------------------------------

def ball(re: Fraction, im: Fraction = Fraction(0), prec: int = 1 << 15) -> acb:
    with ctx.workprec(prec):
        return acb(arb(q(re)), arb(q(im)))


def test_apriori_with_ball_inputs():
    """certify_kernel(mode="a-priori") on a model whose entries are acb balls of exact
    rationals (radii ~ 2^-32768, below 2^-(k+16); -4 and 1/2 exact points): routing by
    ball zero tests, and the results enclose the exact kernel of those rationals."""
    lam = [Fraction(-1, 3), (Fraction(-1, 2), Fraction(1, 7)), Fraction(-4)]  # lambda_2 = -2/step
    P = [Fraction(1, 3), Fraction(2, 5), Fraction(1, 2)]
    B = [Fraction(1), (Fraction(1, 3), Fraction(-1, 5)), Fraction(1, 3)]
    C = [(Fraction(1, 7), Fraction(1)), Fraction(-2, 3), Fraction(1)]
    step, L = Fraction(1, 2), 4
    pair = lambda x: x if isinstance(x, tuple) else (x, Fraction(0))
    m_balls = DPLR([ball(*pair(x)) for x in lam], [ball(*pair(x)) for x in P],
                   [ball(*pair(x)) for x in B], [ball(*pair(x)) for x in C])
    assert any(b.real.rad() > 0 for b in m_balls.Lambda)  # balls, not exact points
    ck = certify_kernel(m_balls, step, L, EPS, mode="a-priori")
    assert ck.certificate["routing"] == "ball" and not ck.problem["exact_inputs"]
    assert ck.certificate["partition"] == [2]  # lambda_2 = -2/step, an exact ball
    exact = exact_kernel(DPLR(lam, P, B, C), step, L)
    with ctx.workprec(ck.certificate["precision_bits"] + 64):
        for j, ((re, im), (hre, him)) in enumerate(zip(exact, ck.exact)):
            K = point(re, im)
            assert abs(point(hre, him) - K) <= arb(q(EPS))  # the rounded output
            assert ck.balls[j].contains(K)
            mid = ck.mid[j]
            assert abs(point(re - Fraction(mid.real), im - Fraction(mid.imag))) <= arb(ck.rad[j])


def test_apriori_refuses_ball_inputs_too_wide_for_u():
    """A problem number given as a ball wider than 2^-(k+16) cannot be replayed at u = 2^-k:
    RoundedField refuses it and the mode stops naming u and the width, no kernel; the
    ball mode certifies the same model."""
    m = DPLR([ball(Fraction(-1, 3), prec=200), Fraction(-2)], [1, 1], [1, 1], [1, -1])
    with pytest.raises(CertificationError, match=r"inputs must be known to within u = 2\^-\d+: ball input too wide"):
        certify_kernel(m, Fraction(1, 2), 4, EPS, mode="a-priori")
    assert certify_kernel(m, Fraction(1, 2), 4, EPS).status == "ok"


# -- the check against the ball result (ball_mode.md section 6) -------------------------

@pytest.mark.parametrize("shift,rejected", [(10 * EPS, True), (EPS / 2, False)])
def test_apriori_check_rejects_a_perturbed_output(monkeypatch, shift, rejected):
    """A ball result moved by 10 eps away from the kernel makes the a-priori check fail
    (CertificationError naming the entry); moved by eps/2 it still passes."""
    real = ball_run.ball_filter

    def moved(*args, **kwargs):
        run = real(*args, **kwargs)
        if run.status == "ok":
            with ctx.workprec(run.prec):
                run.result.value[2] = run.result.value[2] + acb(arb(q(shift)))
        return run

    monkeypatch.setattr(ball_run, "ball_filter", moved)
    m = DPLR([-1, (Fraction(-1, 2), 1)], [1, Fraction(1, 2)], [1, 2], [1, (0, 1)])
    if rejected:
        with pytest.raises(CertificationError, match="entry 2 disagrees with the ball certificate"):
            certify_kernel(m, Fraction(1, 2), 4, EPS, mode="a-priori")
    else:
        ck = certify_kernel(m, Fraction(1, 2), 4, EPS, mode="a-priori")
        assert ck.certificate["checked_against_ball"] is True


# -- failure paths --------------------------------------------------------------------

def _reciprocal_shift(F, x):
    return [F.div(F.one(), F.sub(F.from_number(x), F.const(Fraction(1, 3))))]


def test_circuit_bounds_failure_paths():
    """circuit_bounds accepts an evaluation only when every node is finite and every
    divisor certainly nonzero; otherwise it doubles the precision and finally refuses."""
    c = trace(BallField(64), _reciprocal_shift, 1).circuit
    assert c.divisors()
    V0, D0, prec = circuit_bounds(c, [1], 64, 256)  # nodes 1, 1/3, 2/3, 1, 3/2
    assert prec == 64 and Fraction(3, 2) <= V0 <= Fraction(3, 2) * (1 + Fraction(1, 2**50))
    assert Fraction(2, 3) * (1 - Fraction(1, 2**50)) <= D0 <= Fraction(2, 3)
    # a divisor separated from zero only at a higher precision: the precision doubles
    tiny = Fraction(1, 3) + Fraction(1, 2**100)
    assert circuit_bounds(c, [tiny], 64, 1024)[2] > 64
    # a divisor whose ball always contains zero: an input ball of fixed width around 1/3,
    # and the exact zero 1/3 - 1/3
    with ctx.workprec(64):
        wide = acb(arb(q(Fraction(1, 3)), 2.0 ** -40))
    for x in (wide, Fraction(1, 3)):
        with pytest.raises(CertificationError, match="not certainly nonzero at 256 bits"):
            circuit_bounds(c, [x], 64, 256)
    # a non-finite node
    with pytest.raises(CertificationError, match="not certainly nonzero"):
        circuit_bounds(c, [acb(arb(1, math.inf))], 64, 128)


def test_from_ball_rejects_a_wide_c_tilde():
    """RoundedField(k) accepts a ball input only when both part radii are below
    2^-(k+16): the traced 128-bit C~ balls are refused at the certified k, and the
    re-enclosed ones (k + 64 bits) are accepted, each within u of the exact C~."""
    m, step, L = MODELS["N2-r1"]
    tr = Traced(m, step, L)
    c = tr.circuit
    V0, D0, _ = circuit_bounds(c, c.input_values, TRACE_PREC, 1 << 20)
    k, _ = required_bits(c.gates, V0, D0, EPS)
    R = RoundedField(k)
    with pytest.raises(ValueError, match="too wide"):
        c.evaluate(R, c.input_values)
    with pytest.raises(ValueError, match="too wide"):
        R.from_number(tr.ct_balls[0])
    tight = ball_c_tilde(m, step, tr.M, k + 64)
    ct = exact_c_tilde(E4, m, step, tr.M).value
    for b, x in zip(tight, ct):
        re, im = R.to_fractions(R.from_number(b))
        xre, xim = E4.to_fractions(x)
        assert (re - xre) ** 2 + (im - xim) ** 2 <= R.u ** 2
    # the boundary: radius 2^-(k+15) refused, 2^-(k+17) accepted
    with ctx.workprec(k + 64):
        for e, ok in ((15, False), (17, True)):
            z = acb(arb(q(Fraction(1, 3)), arb(2) ** -(k + e)), 0)
            if ok:
                re, _ = R.to_fractions(R.from_number(z))
                assert abs(re - Fraction(1, 3)) <= R.u
            else:
                with pytest.raises(ValueError, match="too wide"):
                    R.from_number(z)


def test_exact_c_tilde_estimate_and_output_within_eps():
    """The a-priori run with C~ formed exactly: the estimate is reported before the run, and
    every output lies within eps of the exact kernel (T0 in the thousands)."""
    from s4cert.algorithms.s4.c_tilde import c_tilde as form
    from s4cert.algorithms.s4.exact_route import exact_c_tilde, exact_kernel_by_powers
    from s4cert.arith import ExactField
    from s4cert.certs.examples import example_model
    from s4cert.certs.kernel import certify_kernel

    m = example_model(3, seed=2)
    G = ExactField(4)
    assert exact_c_tilde(m, 0.01, 32).value == [G.to_fractions(x) for x in form(G, m, 0.01, 32).value]
    msgs = []
    eps = Fraction(1, 10**12)
    ck = certify_kernel(m, 0.01, 32, eps, mode="a-priori", progress=msgs.append)
    assert ck.certificate["T0"] > 1000
    est = [s for s in msgs if s.startswith("estimate:")]
    assert est and msgs.index(est[0]) < msgs.index(f"running the circuit at u = 2^-{ck.certificate['precision_bits']}")
    exact = exact_kernel_by_powers(m, 0.01, 32).value
    for (re, im), (er, ei) in zip(ck.exact, exact):
        assert (re - er) ** 2 + (im - ei) ** 2 <= eps ** 2


def test_the_circuit_under_flint_threads_gives_the_same_integers():
    """``_flint_threads`` (the a-priori run's setting) changes no value: a traced filter
    replayed at k = 200,000 bits, where FLINT splits the products across threads, gives
    the integers of the one-thread replay; the previous thread setting is restored."""
    from s4cert.arith.fixed_point import ShiftRoundedField
    from s4cert.certs.apriori import _flint_threads
    from s4cert.certs.examples import example_model
    t = trace(BallField(128), filter_kernel, example_model(2), 0.01, 4, cauchy="direct")
    before = ctx.threads
    ctx.threads = 1
    try:
        one = t.circuit.evaluate(ShiftRoundedField(200_000), live_only=True)
        with _flint_threads():
            assert ctx.threads >= 1
            many = t.circuit.evaluate(ShiftRoundedField(200_000), live_only=True)
        assert ctx.threads == 1
    finally:
        ctx.threads = before
    assert [(x.x, x.y) for x in one] == [(x.x, x.y) for x in many]


def test_the_circuit_in_two_processes_gives_the_same_kernel(monkeypatch):
    """The a-priori run split across two processes (forced here; it is taken for runs
    estimated at ``SPLIT_SECONDS`` or more) returns the one-process run's outputs exactly,
    and says it ran in two processes."""
    import s4cert.certs.apriori as apriori
    from s4cert.certs.examples import example_model
    m, eps = example_model(3, seed=2), Fraction(1, 10**12)
    runs = {}
    for seconds in (0.0, math.inf):
        monkeypatch.setattr(apriori, "SPLIT_SECONDS", seconds)
        monkeypatch.setattr(apriori, "_cores", lambda: 2)
        msgs = []
        runs[seconds] = (certify_kernel(m, 0.01, 16, eps, mode="a-priori", progress=msgs.append), msgs)
    split, one = runs[0.0], runs[math.inf]
    assert any(s.endswith("in two processes") for s in split[1])
    assert not any(s.endswith("in two processes") for s in one[1])
    assert split[0].exact == one[0].exact
    for key in ("T0", "V0", "D0", "log2_K0", "log2_u", "circuit_cauchy"):
        assert split[0].certificate[key] == one[0].certificate[key]
