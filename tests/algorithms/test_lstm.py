"""The LSTM cell: the spec's zero-weight example, the certified ball path against an
independent interval evaluation, and the float64 path against the ball path.

The float64 error bound (``algorithms.models.lstm_bound.float64_error_bound``), derived
----------------------------------------------------------------------------
Model: ``+ - * /`` are IEEE binary64 with round-to-nearest, unit roundoff
``u = 2^-53``; a matrix product sums its products in some order (with or without
fused multiply-add), so a dot product of n terms is ``sum_k p_k (1 + th_k)`` with
``|th_k| <= gamma_n = n u / (1 - n u)`` (each ``1 + th`` a product of at most n factors
``(1 + d)^(+-1)``, ``|d| <= u``); ``numpy.exp`` and ``numpy.tanh`` return ``f(s)(1 + d) + e``
with ``|d| <= eps`` (default ``2^-45``, i.e. 128 units in the last place) and
``|e| <= 2^-1000``.  ``eta = 2^-1000`` is added at each stage below to cover gradual
underflow (each stage has fewer than 2^70 roundings, each off by at most 2^-1074 in
the subnormal range).  Magnitudes are checked to stay below 2^1000, so nothing
overflows.  All inequalities are coordinatewise; hats are float64 values; ``e^h``,
``e^c`` bound ``|h^ - h|``, ``|c^ - c|`` at the previous step (at t = 0 they are the
exact rounding errors of ``h_0``, ``c_0``).

1. Pre-activation of gate g: the float path forms ``fl(fl(fl(x^ W^T) + fl(h^ U^T)) + b^)``
   where ``W^ = W(1+d)``, ``x^ = x(1+d)``, ``U^ = U(1+d)``, ``b^ = b(1+d)`` are the float64
   roundings of the exact data.  Collecting factors, a ``W x`` term carries at most
   ``d_x + 4`` of them, a ``U h^`` term ``d_h + 3``, the bias 2, so with
   ``m = max(d_x, d_h) + 4`` and ``z(h^) = W x + U h^ + b``:
   ``|z^ - z(h^)| <= gamma_m (|W||x| + |U||h^| + |b|) + eta``.  Since
   ``|z(h^) - z(h)| <= |U| e^h``, ``zeta := |U| e^h + gamma_m (|W||x| + |U||h^| + |b|) + eta``
   bounds ``|z^ - z|``.
2. Gates.  The float sigmoid is ``1/(1+e)`` for ``s >= 0`` and ``e/(1+e)`` for ``s < 0``
   with ``e = exp(-|s|) <= 1``.  For ``s >= 0``: ``(1+e)/(1+e^)`` differs from 1 by at most
   ``eps e/(1+e) + eta <= eps/2 + eta`` and two roundings follow.  For ``s < 0``:
   ``phi(e) = e/(1+e)`` has ``phi' <= 1`` and ``e = sigma (1+e) <= 2 sigma``, so
   ``|phi(e^) - phi(e)| <= 2 eps sigma + eta``, then two roundings.  As ``sigma <= 1`` and
   ``eps, u <= 2^-40``, ``|sigma^(s) - sigma(s)| <= a_s := 2 eps + 3 u + eta``.  Likewise
   ``|tanh^(s) - tanh(s)| <= a_t := eps + eta``.  With ``|sigma'| <= 1/4``, ``|tanh'| <= 1``:
   ``|i^ - i| <= e_i := a_s + zeta_i/4`` (f, o alike) and ``|g^ - g| <= e_g := a_t + zeta_c``.
3. Cell: ``c^ = fl(fl(f^ c^_p) + fl(i^ g^))`` is within ``gamma_2 (|f^ c^_p| + |i^ g^|) + eta``
   of ``f^ c^_p + i^ g^``, and ``|f^ c^_p + i^ g^ - (f c_p + i g)| <=
   e_f |c^_p| + |f| e^c + e_i |g^| + |i| e_g``.  Using ``|f|, |i| <= 1``,
   ``|f^|, |i^| <= 1 + a_s``, ``|g^| <= 1 + a_t``:
   ``e^c_new = (e_f + gamma_2 (1 + a_s)) |c^_p| + e^c + (e_i + gamma_2 (1 + a_s))(1 + a_t)
   + e_g + eta``.
4. Hidden: ``h^ = fl(o^ tanh^(c^))``; with ``|tanh(c^) - tanh(c)| <= e^c_new``:
   ``e^h_new = u (1 + a_s)(1 + a_t) + eta + e_o (1 + a_t) + a_t + e^c_new``.

The bound is evaluated in arb (every quantity nonnegative, the final upper end rounded
up to a float).  The tests check ``|h^ - mid| <= rad + bound``, which follows from
``|h^ - h| <= bound`` and ``|h - mid| <= rad`` (the ball contains h).  The libm part
of the model is itself checked on samples below.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from flint import arb, ctx, fmpq
from hypothesis import assume, given
from hypothesis import strategies as st
from mpmath import iv

from s4cert.algorithms.models.lstm import GATES, LSTMParams, lstm_ball, lstm_cell_ball, lstm_forward
from s4cert.algorithms.models.lstm_bound import float64_error_bound
from tests.helpers import fractions

IV_PREC = 800   # bits of the independent interval evaluation


# -- independent interval evaluation (mpmath.iv) --------------------------------

def _iv(q) -> "iv.mpf":
    q = Fraction(q)
    return iv.mpf(q.numerator) / q.denominator


def _iv_sigma(s):
    return 1 / (1 + iv.exp(-s))


def _iv_tanh(s):
    e = iv.expm1(2 * s)
    return e / (e + 2)


def iv_lstm(raw: dict, xs, h0, c0):
    """The spec's formulas in mpmath interval arithmetic at IV_PREC bits, from the raw
    parameter lists (rows of numbers): lists of intervals for h_1..h_T, c_1..c_T."""
    old = iv.prec
    iv.prec = IV_PREC
    try:
        W = {g: [[_iv(v) for v in row] for row in raw[f"W_{g}"]] for g in GATES}
        U = {g: [[_iv(v) for v in row] for row in raw[f"U_{g}"]] for g in GATES}
        b = {g: [_iv(v) for v in raw[f"b_{g}"]] for g in GATES}
        h, c = [_iv(v) for v in h0], [_iv(v) for v in c0]
        hs, cs = [], []
        for x in xs:
            x = [_iv(v) for v in x]
            z = {g: [sum((W[g][k][j] * x[j] for j in range(len(x))), iv.mpf(0))
                     + sum((U[g][k][j] * h[j] for j in range(len(h))), iv.mpf(0)) + b[g][k]
                     for k in range(len(h))] for g in GATES}
            i, f, o = ([_iv_sigma(s) for s in z[g]] for g in "ifo")
            gg = [_iv_tanh(s) for s in z["c"]]
            c = [f[k] * c[k] + i[k] * gg[k] for k in range(len(c))]
            h = [o[k] * _iv_tanh(c[k]) for k in range(len(c))]
            hs.append(h)
            cs.append(c)
        return hs, cs
    finally:
        iv.prec = old


def _endpoint(raw) -> fmpq:
    sign, man, exp, _ = raw
    q = Fraction(int(man)) * Fraction(2) ** int(exp) * (-1 if sign else 1)
    return fmpq(q.numerator, q.denominator)


def contains_interval(ball: arb, interval) -> bool:
    """The ball contains both ends (hence all) of an mpmath interval."""
    with ctx.workprec(2 * IV_PREC):   # the dyadic ends are exact at this precision
        lo, hi = (arb(_endpoint(r)) for r in interval._mpi_)
    return bool(ball.contains(lo)) and bool(ball.contains(hi))


def contains_q(ball: arb, q) -> bool:
    """The ball contains the rational q (read as a 4096-bit enclosure)."""
    q = Fraction(q)
    with ctx.workprec(4096):
        return bool(ball.contains(arb(fmpq(q.numerator, q.denominator))))


def iv_zero_weight_h(c0, t: int):
    """tanh(2^-t c0) / 2 as an interval, independently of the LSTM code."""
    old = iv.prec
    iv.prec = IV_PREC
    try:
        return _iv_tanh(_iv(Fraction(c0) / 2 ** t)) / 2
    finally:
        iv.prec = old


def widened_contains(ball: arb, bound: float, value: float) -> bool:
    """|value - mid| <= rad + bound, decided rigorously."""
    with ctx.workprec(ctx.prec + 200):
        return bool(arb(ball.mid(), arb(ball.rad()) + arb(bound)).contains(arb(value)))


# -- strategies ------------------------------------------------------------------

def numbers(lo: float, hi: float):
    """Reals given as binary floats or as rationals."""
    rationals = st.integers(1, 9).flatmap(
        lambda d: st.integers(math.ceil(lo * d), math.floor(hi * d)).map(lambda n: Fraction(n, d)))
    return st.one_of(st.floats(lo, hi, allow_nan=False, allow_infinity=False), rationals)


@st.composite
def lstm_case(draw, max_T=4, max_d=3, w=2.0):
    d_x, d_h = draw(st.integers(1, max_d)), draw(st.integers(1, max_d))
    T = draw(st.integers(0, max_T))
    mat = lambda r, c: [[draw(numbers(-w, w)) for _ in range(c)] for _ in range(r)]  # noqa: E731
    raw = {f"W_{g}": mat(d_h, d_x) for g in GATES}
    raw.update({f"U_{g}": mat(d_h, d_h) for g in GATES})
    raw.update({f"b_{g}": [draw(numbers(-w, w)) for _ in range(d_h)] for g in GATES})
    xs = mat(T, d_x) if T else []
    h0 = [draw(numbers(-1, 1)) for _ in range(d_h)]
    c0 = [draw(numbers(-3, 3)) for _ in range(d_h)]
    return raw, xs, h0, c0


def _params(raw: dict) -> LSTMParams:
    return LSTMParams(**{k: np.array(v, dtype=object) for k, v in raw.items()})


def _xs_array(xs, d_x):
    return np.array(xs, dtype=object).reshape(len(xs), d_x)


# -- the spec's example: all weights and biases zero ------------------------------

example_inputs = st.integers(1, 3).flatmap(lambda d_x: st.integers(1, 3).flatmap(lambda d_h: st.tuples(
    st.just(d_x), st.just(d_h),
    st.lists(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=d_x, max_size=d_x),
             max_size=6),
    st.lists(st.one_of(st.floats(allow_nan=False, allow_infinity=False), fractions()), min_size=d_h, max_size=d_h),
    st.lists(st.one_of(st.floats(-1e6, 1e6), fractions(10**6, 9)), min_size=d_h, max_size=d_h))))


@given(example_inputs, st.sampled_from([24, 53, 128]))
def test_zero_weight_example_ball_path(case, prec):
    d_x, d_h, xs, h0, c0 = case
    p = LSTMParams.zeros(d_x, d_h)
    h, c = list(h0), list(c0)
    for t, x in enumerate(xs, start=1):
        step = lstm_cell_ball(p, x, h, c, prec)
        for gate in (step.i, step.f, step.o):
            assert all(v.is_exact() and v.contains(fmpq(1, 2)) for v in gate)
        assert all(v.is_exact() and v.contains(0) for v in step.g)
        for k in range(d_h):
            exact_c = Fraction(c0[k]) / 2 ** t
            assert contains_q(step.c[k], exact_c)
            assert contains_interval(step.h[k], iv_zero_weight_h(c0[k], t))
        h, c = step.h, step.c
    run = lstm_ball(p, np.array(xs, dtype=object).reshape(len(xs), d_x), h0, c0, prec)
    assert len(run.h) == len(run.c) == len(xs)
    for t in range(1, len(xs) + 1):
        for k in range(d_h):
            assert contains_interval(run.h[t - 1][k], iv_zero_weight_h(c0[k], t))
            exact_c = Fraction(c0[k]) / 2 ** t
            assert contains_q(run.c[t - 1][k], exact_c)
            # a float c0 is read exactly and halving it is exact at >= 53 bits
            if isinstance(c0[k], float) and prec >= 53:
                assert run.c[t - 1][k].is_exact()


@given(example_inputs)
def test_zero_weight_example_float64_path(case):
    d_x, d_h, xs, h0, c0 = case
    p = LSTMParams.zeros(d_x, d_h)
    c0f = [float(v) for v in c0]
    assume(all(v == 0 or abs(v) > 2.0 ** -1000 for v in c0f))   # no underflow in 2^-t c0
    x_arr = np.array(xs, dtype=np.float64).reshape(1, len(xs), d_x)
    h, c = lstm_forward(p, x_arr, np.array([h0], dtype=object), [c0f])
    for t in range(1, len(xs) + 1):
        # f = i = o = 1/2 and g = 0 exactly in float64 too: c_t = 2^-t c0 (no underflow here)
        assert [Fraction(v) for v in c[0, t - 1]] == [Fraction(v) / 2 ** t for v in c0f]
        assert np.array_equal(h[0, t - 1], 0.5 * np.tanh(c[0, t - 1]))
    run = lstm_ball(p, _xs_array(xs, d_x), h0, c0f, 64)
    eh, ec = float64_error_bound(p, _xs_array(xs, d_x), h0, c0f, h[0], c[0])
    for t in range(len(xs)):
        for k in range(d_h):
            assert widened_contains(run.h[t][k], eh[t, k], h[0, t, k])
            assert widened_contains(run.c[t][k], ec[t, k], c[0, t, k])


# -- ball path: independent evaluation, precisions, exact reading --------------------

@given(lstm_case(max_T=3, max_d=2), st.sampled_from([53, 96]))
def test_ball_path_encloses_an_independent_interval_evaluation(case, prec):
    raw, xs, h0, c0 = case
    p = _params(raw)
    run = lstm_ball(p, _xs_array(xs, p.d_x), h0, c0, prec)
    ref_h, ref_c = iv_lstm(raw, xs, h0, c0)
    for t in range(len(xs)):
        for k in range(p.d_h):
            assert contains_interval(run.h[t][k], ref_h[t][k])
            assert contains_interval(run.c[t][k], ref_c[t][k])


@given(lstm_case())
def test_enclosures_at_two_precisions_agree(case):
    raw, xs, h0, c0 = case
    p = _params(raw)
    low = lstm_ball(p, _xs_array(xs, p.d_x), h0, c0, 40)
    high = lstm_ball(p, _xs_array(xs, p.d_x), h0, c0, 400)
    with ctx.workprec(600):
        for lo_seq, hi_seq in ((low.h, high.h), (low.c, high.c)):
            for lo_row, hi_row in zip(lo_seq, hi_seq):
                for lo, hi in zip(lo_row, hi_row):
                    # both contain the true value v: |hi.mid - lo.mid| <= lo.rad + hi.rad
                    widened = arb(lo.mid(), arb(lo.rad()) + arb(hi.rad()))
                    assert widened.contains(hi.mid())
                    assert lo.overlaps(hi)
    assert high.max_radius() < 2.0 ** -300


def test_inputs_are_read_exactly():
    p = LSTMParams.zeros(1, 1)
    run = lstm_ball(p, [[0.0]], [0.0], [0.1], prec=200)       # the float 0.1, not 1/10
    half = Fraction(0.1) / 2
    assert contains_q(run.c[0][0], half) and not contains_q(run.c[0][0], Fraction(1, 20))
    run = lstm_ball(p, [[0]], [0], [Fraction(1, 10)], prec=200)
    assert contains_q(run.c[0][0], Fraction(1, 20)) and not contains_q(run.c[0][0], half)
    # a weight that is not a binary float: b_c = 1/3, so g_1 = tanh(1/3), c_1 = g_1 / 2
    raw = _zeros(1, 1)
    raw["b_c"] = np.array([Fraction(1, 3)], dtype=object)
    step = lstm_cell_ball(LSTMParams(**raw), [0], [0], [0], prec=300)
    ref_h, ref_c = iv_lstm({k: np.asarray(v).tolist() for k, v in raw.items()}, [[0]], [0], [0])
    assert contains_interval(step.c[0], ref_c[0][0])
    assert contains_interval(step.h[0], ref_h[0][0])


# -- float64 path against the ball path ------------------------------------------------

@given(lstm_case(max_T=5), st.integers(1, 3), st.data())
def test_float64_path_lies_within_ball_plus_derived_bound(case, batch, data):
    raw, xs, h0, c0 = case
    p = _params(raw)
    seqs = [(xs, h0, c0)] + [_redraw(data, p, len(xs)) for _ in range(batch - 1)]
    X = np.array([_xs_array(s[0], p.d_x).astype(np.float64) for s in seqs]).reshape(batch, len(xs), p.d_x)
    H0 = np.array([[float(v) for v in s[1]] for s in seqs])
    C0 = np.array([[float(v) for v in s[2]] for s in seqs])
    h, c = lstm_forward(p, X, H0, C0)
    assert h.shape == c.shape == (batch, len(xs), p.d_h)
    for b, (sx, sh, sc) in enumerate(seqs):
        run = lstm_ball(p, _xs_array(sx, p.d_x), sh, sc, 128)
        eh, ec = float64_error_bound(p, _xs_array(sx, p.d_x), sh, sc, h[b], c[b])
        assert np.all(eh < 2.0 ** -30) and np.all(ec < 2.0 ** -30)   # the bound is tight enough to test
        for t in range(len(xs)):
            for k in range(p.d_h):
                assert widened_contains(run.h[t][k], eh[t, k], h[b, t, k])
                assert widened_contains(run.c[t][k], ec[t, k], c[b, t, k])


def _redraw(data, p: LSTMParams, T: int):
    xs = [[data.draw(numbers(-2, 2)) for _ in range(p.d_x)] for _ in range(T)]
    h0 = [data.draw(numbers(-1, 1)) for _ in range(p.d_h)]
    c0 = [data.draw(numbers(-3, 3)) for _ in range(p.d_h)]
    return xs, h0, c0


def test_the_float64_check_detects_a_wrong_cell():
    """The containment check is sharp: swapping the input and forget gates' weights
    moves the float64 values outside ball + bound."""
    rng = np.random.default_rng(7)
    raw = {f"{k}_{g}": rng.uniform(-1, 1, (2, 2) if k != "b" else (2,)) for k in "WUb" for g in GATES}
    p = LSTMParams(**raw)
    swapped = LSTMParams(**{**raw, "W_i": raw["W_f"], "W_f": raw["W_i"]})
    xs = rng.uniform(-1, 1, (3, 2))
    h, c = lstm_forward(swapped, xs[None], [[0.1, 0.2]], [[0.5, -0.5]])
    run = lstm_ball(p, xs, [0.1, 0.2], [0.5, -0.5], 128)
    eh, _ = float64_error_bound(p, xs, [0.1, 0.2], [0.5, -0.5], h[0], c[0])
    assert not all(widened_contains(run.h[t][k], eh[t, k], h[0, t, k]) for t in range(3) for k in range(2))
    h, c = lstm_forward(p, xs[None], [[0.1, 0.2]], [[0.5, -0.5]])
    eh, _ = float64_error_bound(p, xs, [0.1, 0.2], [0.5, -0.5], h[0], c[0])
    assert all(widened_contains(run.h[t][k], eh[t, k], h[0, t, k]) for t in range(3) for k in range(2))


@given(st.floats(-740, 709, allow_nan=False))
def test_libm_model_holds_on_samples(s):
    """numpy's exp and tanh meet the model's accuracy (relative 2^-45, absolute 2^-1000)."""
    with ctx.workprec(300):
        x = arb(s)
        for got, exact in ((np.exp(s), x.exp()), (np.tanh(s), x.tanh())):
            err = abs(arb(float(got)) - exact)
            assert bool(err < abs(exact) * arb(2.0 ** -45) + arb(fmpq(1, 2 ** 1000)))


def test_bound_is_infinite_beyond_the_overflow_guard():
    p = LSTMParams(**{**{f"W_{g}": [[1e300]] for g in GATES}, **{f"U_{g}": [[0.0]] for g in GATES},
                      **{f"b_{g}": [0.0] for g in GATES}})
    h, c = lstm_forward(p, [[[1e300]]], [[0.0]], [[0.0]])
    eh, ec = float64_error_bound(p, [[1e300]], [0.0], [0.0], h[0], c[0])
    assert np.isinf(eh).all() and np.isinf(ec).all()


# -- shapes and bad input ------------------------------------------------------------

def _zeros(d_x=2, d_h=3):
    return {**{f"W_{g}": np.zeros((d_h, d_x)) for g in GATES}, **{f"U_{g}": np.zeros((d_h, d_h)) for g in GATES},
            **{f"b_{g}": np.zeros(d_h) for g in GATES}}


@pytest.mark.parametrize("change, match", [
    ({"W_f": np.zeros((3, 3))}, r"W_f: expected shape \(3, 2\)"),
    ({"U_o": np.zeros((3, 2))}, r"U_o: expected shape \(3, 3\)"),
    ({"b_c": np.zeros((3, 1))}, r"b_c: expected shape \(3,\)"),
    ({"W_i": np.zeros((0, 2))}, "W_i"),
    ({"W_i": np.zeros(3)}, "W_i"),
    ({"U_i": np.full((3, 3), np.nan)}, "finite"),
    ({"b_f": np.ones(3, dtype=complex)}, "real"),
    ({"b_f": np.array([1, 2j, 3], dtype=object)}, "real"),
    ({"b_f": np.ones(3, dtype=bool)}, "real"),
    ({"b_f": ["a", "b", "c"]}, "numbers"),
    ({"W_x": np.zeros((3, 2))}, "unknown"),
])
def test_bad_parameters_raise(change, match):
    with pytest.raises(ValueError, match=match):
        LSTMParams(**{**_zeros(), **change})


def test_missing_parameter_raises():
    raw = _zeros()
    del raw["U_c"]
    with pytest.raises(ValueError, match="missing"):
        LSTMParams(**raw)
    with pytest.raises(ValueError, match="d_h"):
        LSTMParams.zeros(2, 0)


def test_bad_inputs_raise():
    p = LSTMParams(**_zeros())
    with pytest.raises(ValueError, match=r"xs: expected shape \[batch, time, d_x\]"):
        lstm_forward(p, np.zeros((4, 2)))
    with pytest.raises(ValueError, match="d_x = 2"):
        lstm_forward(p, np.zeros((1, 4, 3)))
    with pytest.raises(ValueError, match="h0"):
        lstm_forward(p, np.zeros((2, 4, 2)), h0=np.zeros((1, 3)))
    with pytest.raises(ValueError, match="c0"):
        lstm_forward(p, np.zeros((2, 4, 2)), c0=np.zeros(3))
    with pytest.raises(ValueError, match="finite"):
        lstm_forward(p, np.full((1, 1, 2), np.inf))
    with pytest.raises(ValueError, match=r"xs: expected shape \[time, d_x\]"):
        lstm_ball(p, np.zeros((1, 4, 2)), [0] * 3, [0] * 3, 64)
    with pytest.raises(ValueError, match="h0"):
        lstm_ball(p, np.zeros((4, 2)), [0] * 2, [0] * 3, 64)
    with pytest.raises(ValueError, match="c0"):
        lstm_ball(p, np.zeros((4, 2)), [0] * 3, [[0] * 3], 64)
    with pytest.raises(ValueError, match="real"):
        lstm_ball(p, np.zeros((4, 2)), [0] * 3, [1j, 0, 0], 64)
    for prec in (1, 0, 64.0, True, "64"):
        with pytest.raises(ValueError, match="prec"):
            lstm_ball(p, np.zeros((4, 2)), [0] * 3, [0] * 3, prec)
    with pytest.raises(ValueError, match="h_seq"):
        float64_error_bound(p, np.zeros((4, 2)), [0] * 3, [0] * 3, np.zeros((3, 3)), np.zeros((4, 3)))


def test_empty_sequences():
    p = LSTMParams(**_zeros())
    h, c = lstm_forward(p, np.zeros((2, 0, 2)))
    assert h.shape == c.shape == (2, 0, 3)
    run = lstm_ball(p, np.zeros((0, 2)), [0] * 3, [0] * 3, 64)
    assert run.h == run.c == [] and run.max_radius() == 0.0
