"""A bound on the error of the LSTM's float64 path (:func:`~.lstm.lstm_forward`)
under a stated model of float64 arithmetic.

The bound is evaluated in ``arb`` at 64 bits as interval arithmetic on nonnegative
quantities (a ball-only procedure: every quantity is an upper bound, the final upper
end rounded up to a float).
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from flint import arb, ctx, fmpq

from ...arith.ball import float_upper
from .lstm import GATES, LSTMParams, read_real


#: absolute slack added at each stage of the bound for gradual underflow
_ETA = fmpq(1, 2 ** 1000)
_BIG = 2.0 ** 1000


def float64_error_bound(params: LSTMParams, xs: Any, h0: Any, c0: Any, h_seq: Any, c_seq: Any,
                        fn_rel_err: float = 2.0 ** -45) -> tuple[np.ndarray, np.ndarray]:
    """Upper bounds ``(e_h, e_c)``, each ``[time, d_h]``, on ``|h_seq - h_t|`` and
    ``|c_seq - c_t|`` coordinatewise, where ``h_seq, c_seq`` (``[time, d_h]``) is what
    :func:`~.lstm.lstm_forward` returned for this one sequence and ``h_t, c_t`` are the exact
    LSTM values of the exact inputs.

    The model (not a certificate: it assumes the platform's arithmetic):
    ``+ - * /`` are IEEE binary64 with round-to-nearest (unit roundoff ``u = 2^-53``);
    a matrix product sums its products in some order, with or without fused
    multiply-add; ``numpy.exp`` and ``numpy.tanh`` return ``f(s)(1 + d) + e`` with
    ``|d| <= fn_rel_err`` and ``|e| <= 2^-1000`` (underflow).  The bound is a running
    error analysis (derived step by step in the docstring of
    ``tests/algorithms/test_lstm.py``); it propagates earlier errors through ``|U|``
    in the worst case, so it grows geometrically with the time index at a rate set by
    the recurrent weights.  Returns inf from a step on where magnitudes reach 2^1000,
    beyond which overflow is not excluded.

    >>> from s4cert.algorithms.models.lstm import lstm_forward
    >>> p = LSTMParams.zeros(1, 1)
    >>> h, c = lstm_forward(p, np.zeros((1, 2, 1)), c0=[[1.0]])
    >>> eh, ec = float64_error_bound(p, np.zeros((2, 1)), [0.0], [1.0], h[0], c[0])
    >>> bool(np.all(eh < 1e-12)) and bool(np.all(ec < 1e-12))
    True
    """
    if not (0 <= fn_rel_err <= 2.0 ** -40):
        raise ValueError(f"fn_rel_err must lie in [0, 2^-40], got {fn_rel_err!r}")
    d_h = params.d_h
    exact_xs = [[read_real(v, "xs") for v in row] for row in _exact_rows(xs, params.d_x, "xs")]
    T = len(exact_xs)
    hf = _float_rows(h_seq, T, d_h, "h_seq")
    cf = _float_rows(c_seq, T, d_h, "c_seq")
    h0q = [read_real(v, "h0") for v in _exact_rows([h0], d_h, "h0")[0]]
    c0q = [read_real(v, "c0") for v in _exact_rows([c0], d_h, "c0")[0]]
    eh_out, ec_out = np.full((T, d_h), math.inf), np.full((T, d_h), math.inf)
    with ctx.workprec(64):
        u = arb(fmpq(1, 2 ** 53))
        m = max(params.d_x, d_h) + 4
        gamma = lambda n: n * u / (1 - n * u)  # noqa: E731
        g_m, g_2 = gamma(m), gamma(2)
        eps_fn, eta = arb(fn_rel_err), arb(_ETA)
        a_sig = 2 * eps_fn + 3 * u + eta     # |sigma64(s) - sigma(s)|
        a_tanh = eps_fn + eta                # |tanh64(s) - tanh(s)|
        absW = {g: [[abs(q) for q in r] for r in params.exact("W", g)] for g in GATES}
        absU = {g: [[abs(q) for q in r] for r in params.exact("U", g)] for g in GATES}
        absb = {g: [abs(r[0]) for r in params.exact("b", g)] for g in GATES}
        # errors of the float64 start values, exactly
        h_prev = [float(q) for q in h0q]
        c_prev = [float(q) for q in c0q]
        eh = [arb(_fmpq(abs(Fraction(hp) - q))) for hp, q in zip(h_prev, h0q)]
        ec = [arb(_fmpq(abs(Fraction(cp) - q))) for cp, q in zip(c_prev, c0q)]
        for t in range(T):
            ax = [abs(q) for q in exact_xs[t]]
            ah = [abs(v) for v in h_prev]
            if max(ah + [abs(v) for v in c_prev], default=0.0) >= _BIG:
                break
            zeta, too_big = {}, False
            for g in GATES:
                zeta[g] = []
                for k in range(d_h):
                    S = _dot_arb(absW[g][k], ax) + _dot_arb(absU[g][k], ah) + arb(_fmpq(absb[g][k]))
                    if not (S * (1 + g_m) < _BIG):
                        too_big = True
                    zeta[g].append(_dot_arb(absU[g][k], eh) + g_m * S + eta)
            if too_big:
                break
            new_ec, new_eh = [], []
            for k in range(d_h):
                e_i = a_sig + zeta["i"][k] / 4
                e_f = a_sig + zeta["f"][k] / 4
                e_o = a_sig + zeta["o"][k] / 4
                e_g = a_tanh + zeta["c"][k]
                acp = arb(abs(c_prev[k]))
                e_c = ((e_f + g_2 * (1 + a_sig)) * acp + ec[k]
                       + (e_i + g_2 * (1 + a_sig)) * (1 + a_tanh) + e_g + eta)
                e_h = u * (1 + a_sig) * (1 + a_tanh) + eta + e_o * (1 + a_tanh) + a_tanh + e_c
                new_ec.append(e_c)
                new_eh.append(e_h)
            ec, eh = new_ec, new_eh
            ec_out[t] = [float_upper(v) for v in ec]
            eh_out[t] = [float_upper(v) for v in eh]
            h_prev, c_prev = list(hf[t]), list(cf[t])
    return eh_out, ec_out


def _fmpq(q: Fraction) -> fmpq:
    return fmpq(q.numerator, q.denominator)


def _dot_arb(row: list[Fraction], v: list) -> arb:
    """sum_k row_k v_k, enclosed (row exact rationals, v rationals, floats or balls)."""
    acc = arb(0)
    for a, b in zip(row, v):
        if a:
            acc += arb(_fmpq(a)) * (b if isinstance(b, arb) else arb(_fmpq(Fraction(b))))
    return acc


def _exact_rows(x: Any, n: int, what: str) -> list[list]:
    arr = np.asarray(x, dtype=object) if not isinstance(x, np.ndarray) else x
    if arr.ndim == 1 and arr.shape[0] == 0:
        return []
    if arr.ndim != 2 or arr.shape[1] != n:
        raise ValueError(f"{what}: expected rows of length {n}, got shape {arr.shape}")
    return arr.tolist()


def _float_rows(x: Any, T: int, n: int, what: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.shape != (T, n):
        raise ValueError(f"{what}: expected shape {(T, n)}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what}: entries must be finite")
    return arr
