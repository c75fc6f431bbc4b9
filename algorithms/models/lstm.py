"""The standard LSTM cell, without peepholes or projection (proofs/spec.md §S9).

With shared ``W_g`` (d_h x d_x), ``U_g`` (d_h x d_h), ``b_g`` (d_h), g in i, f, o, c::

    i_t = sigma(W_i x_t + U_i h_{t-1} + b_i)     f_t, o_t alike
    g_t = tanh(W_c x_t + U_c h_{t-1} + b_c)
    c_t = f_t * c_{t-1} + i_t * g_t               h_t = o_t * tanh(c_t)

with ``sigma(s) = 1/(1 + exp(-s))``.  Two paths:

* :func:`lstm_forward`: numpy float64 over a batch ``[batch, time, d_x]`` (fast, not
  certified); :func:`~.lstm_bound.float64_error_bound` bounds its error under a stated
  model of float64 arithmetic.
* :func:`lstm_ball`: python-flint ``arb`` balls at an explicit precision.  Every
  number given (weights, inputs, ``h_0``, ``c_0``) is read exactly, as the binary
  float or rational it is, so each returned ball contains the exact LSTM value.  This
  is a ball-only certified procedure, not a generic one: it evaluates ``exp`` and
  ``tanh`` on real ``arb`` balls and the gate products as ``arb_mat``.

>>> p = LSTMParams.zeros(d_x=1, d_h=1)
>>> run = lstm_ball(p, [[5.0], [-7.0]], h0=[3.0], c0=[1.0], prec=64)
>>> run.c[1][0].is_exact(), float(run.c[1][0])     # c_2 = c_0 / 4, exactly
(True, 0.25)
>>> round(float(run.h[1][0].mid()), 12)             # h_2 = tanh(1/4) / 2
0.122459331202
>>> run.max_radius() < 1e-18
True
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, NamedTuple

import numpy as np
from flint import arb, arb_mat, ctx, fmpq

from ...arith import exact_parts
from ...arith.ball import float_upper

GATES = ("i", "f", "o", "c")
_NAMES = tuple(f"{kind}_{g}" for kind in ("W", "U", "b") for g in GATES)


def read_real(x: Any, what: str) -> Fraction:
    """A real input read exactly (a float is its binary value)."""
    re, im = exact_parts(x, what)
    if im:
        raise ValueError(f"{what}: the LSTM is real, got the complex number {x!r}")
    return re


def _read_array(x: Any, shape: tuple[int, ...], what: str) -> np.ndarray:
    """A real array of the given shape, kept as given (floats, ints or rationals)."""
    arr = np.asarray(x) if not isinstance(x, np.ndarray) else x
    if arr.dtype == bool or np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"{what}: expected real numbers, got dtype {arr.dtype}")
    if arr.shape != shape:
        raise ValueError(f"{what}: expected shape {shape}, got {arr.shape}")
    if arr.dtype == object:
        for idx, v in np.ndenumerate(arr):
            read_real(v, f"{what}{list(idx)}")
    elif not np.issubdtype(arr.dtype, np.number):
        raise ValueError(f"{what}: expected numbers, got dtype {arr.dtype}")
    elif not np.all(np.isfinite(arr)):
        raise ValueError(f"{what}: entries must be finite")
    return arr


class LSTMParams:
    """The twelve shared parameters ``W_i, W_f, W_o, W_c, U_i, ..., b_c``.

    Entries may be floats, ints or rationals (``Fraction``, flint ``fmpq``); the
    dimensions come from ``W_i`` (d_h x d_x) and every other shape is checked.

    >>> p = LSTMParams.zeros(d_x=2, d_h=3)
    >>> (p.d_x, p.d_h, p.W["i"].shape, p.U["c"].shape, p.b["o"].shape)
    (2, 3, (3, 2), (3, 3), (3,))
    """

    def __init__(self, **arrays: Any):
        unknown = sorted(set(arrays) - set(_NAMES))
        missing = [n for n in _NAMES if n not in arrays]
        if unknown or missing:
            raise ValueError(f"LSTMParams needs exactly {', '.join(_NAMES)}; "
                             f"missing {missing}, unknown {unknown}")
        w = np.asarray(arrays["W_i"])
        if w.ndim != 2 or w.shape[0] < 1 or w.shape[1] < 1:
            raise ValueError(f"W_i: expected a d_h x d_x matrix with d_h, d_x >= 1, got shape {w.shape}")
        self.d_h, self.d_x = int(w.shape[0]), int(w.shape[1])
        shapes = {"W": (self.d_h, self.d_x), "U": (self.d_h, self.d_h), "b": (self.d_h,)}
        self.W, self.U, self.b = {}, {}, {}
        for kind, store in (("W", self.W), ("U", self.U), ("b", self.b)):
            for g in GATES:
                store[g] = _read_array(arrays[f"{kind}_{g}"], shapes[kind], f"{kind}_{g}")

    @classmethod
    def zeros(cls, d_x: int, d_h: int) -> "LSTMParams":
        """All weights and biases zero (the spec's example)."""
        for name, d in (("d_x", d_x), ("d_h", d_h)):
            if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {d!r}")
        z = {f"W_{g}": np.zeros((d_h, d_x)) for g in GATES}
        z.update({f"U_{g}": np.zeros((d_h, d_h)) for g in GATES})
        z.update({f"b_{g}": np.zeros(d_h) for g in GATES})
        return cls(**z)

    def float64(self) -> tuple[dict, dict, dict]:
        """The parameters rounded to float64 (exact when they are floats already)."""
        conv = lambda d: {g: np.asarray(a, dtype=np.float64) for g, a in d.items()}  # noqa: E731
        return conv(self.W), conv(self.U), conv(self.b)

    def exact(self, kind: str, g: str) -> list[list[Fraction]]:
        """One parameter's exact entries, as rows (a bias is one column)."""
        a = {"W": self.W, "U": self.U, "b": self.b}[kind][g]
        rows = a.reshape(self.d_h, -1)
        return [[read_real(v, f"{kind}_{g}") for v in row] for row in rows.tolist()]


# ---------------------------------------------------------------------------
# float64 path
# ---------------------------------------------------------------------------

def _sigmoid64(s: np.ndarray) -> np.ndarray:
    # exp of a non-positive number only: no overflow for any finite s
    e = np.exp(-np.abs(s))
    return np.where(s >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _batch_state(v: Any, batch: int, d_h: int, what: str) -> np.ndarray:
    if v is None:
        return np.zeros((batch, d_h))
    return _read_array(v, (batch, d_h), f"{what} (shape [batch, d_h])").astype(np.float64)


def lstm_forward(params: LSTMParams, xs: Any, h0: Any = None, c0: Any = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """float64 forward pass over ``xs`` of shape ``[batch, time, d_x]``.

    ``h0``, ``c0`` have shape ``[batch, d_h]`` (zeros when omitted).  Returns
    ``(h, c)``, each ``[batch, time, d_h]``, holding ``h_1..h_T`` and ``c_1..c_T``.

    >>> p = LSTMParams.zeros(1, 1)
    >>> h, c = lstm_forward(p, np.zeros((1, 3, 1)), c0=[[8.0]])
    >>> c[0, :, 0]
    array([4., 2., 1.])
    """
    raw = np.asarray(xs)
    if raw.ndim != 3 or raw.shape[2] != params.d_x:
        raise ValueError(f"xs: expected shape [batch, time, d_x] with d_x = {params.d_x}, got {raw.shape}")
    x = _read_array(raw, raw.shape, "xs").astype(np.float64)
    batch, T, _ = x.shape
    h = _batch_state(h0, batch, params.d_h, "h0")
    c = _batch_state(c0, batch, params.d_h, "c0")
    W, U, b = params.float64()
    hs, cs = np.empty((batch, T, params.d_h)), np.empty((batch, T, params.d_h))
    for t in range(T):
        z = {g: (x[:, t] @ W[g].T + h @ U[g].T) + b[g] for g in GATES}
        i, f, o = _sigmoid64(z["i"]), _sigmoid64(z["f"]), _sigmoid64(z["o"])
        c = f * c + i * np.tanh(z["c"])
        h = o * np.tanh(c)
        hs[:, t], cs[:, t] = h, c
    return hs, cs


# ---------------------------------------------------------------------------
# ball path
# ---------------------------------------------------------------------------

class LSTMStep(NamedTuple):
    """One step's balls, coordinatewise lists: gates ``i, f, o``, candidate ``g``,
    new cell state ``c`` and hidden state ``h``."""

    i: list
    f: list
    o: list
    g: list
    c: list
    h: list


class LSTMBallRun(NamedTuple):
    """``h[t-1][k]`` and ``c[t-1][k]`` enclose coordinate k of ``h_t`` and ``c_t``."""

    h: list[list[arb]]
    c: list[list[arb]]

    def midpoints(self) -> tuple[np.ndarray, np.ndarray]:
        """The midpoints as float64 arrays ``[time, d_h]`` (not enclosures)."""
        mid = lambda seq: np.array([[float(v.mid()) for v in row] for row in seq], dtype=np.float64)  # noqa: E731
        return mid(self.h), mid(self.c)

    def max_radius(self) -> float:
        """An upper bound on every radius (inf for a non-finite ball, 0 for T = 0)."""
        rads = [v.rad() for seq in (self.h, self.c) for row in seq for v in row]
        return max((float_upper(arb(r)) for r in rads), default=0.0)


def check_prec(prec: Any) -> int:
    if isinstance(prec, bool) or not isinstance(prec, (int, np.integer)) or prec < 2:
        raise ValueError(f"prec must be an integer >= 2 bits, got {prec!r}")
    return int(prec)


def _arb_exact(q: Fraction) -> arb:
    """q as a ball at the current precision; a dyadic q (every float) as an exact point."""
    bits = ctx.prec
    if q.denominator & (q.denominator - 1) == 0:
        bits = max(bits, abs(q.numerator).bit_length() + 1)
    with ctx.workprec(bits):
        return arb(fmpq(q.numerator, q.denominator))


def _arb_entry(v: Any, what: str) -> arb:
    if isinstance(v, arb):
        return v
    return _arb_exact(read_real(v, what))


def _arb_vector(v: Any, n: int, what: str) -> list[arb]:
    arr = np.asarray(v, dtype=object) if not isinstance(v, np.ndarray) else v
    if arr.shape != (n,):
        raise ValueError(f"{what}: expected a vector of length {n}, got shape {arr.shape}")
    return [_arb_entry(e, f"{what}[{k}]") for k, e in enumerate(arr.tolist())]


def _arb_sequence(xs: Any, d_x: int) -> list[list[arb]]:
    arr = np.asarray(xs, dtype=object) if not isinstance(xs, np.ndarray) else xs
    if arr.ndim == 1 and arr.shape[0] == 0:
        return []
    if arr.ndim != 2 or arr.shape[1] != d_x:
        raise ValueError(f"xs: expected shape [time, d_x] with d_x = {d_x}, got {arr.shape}")
    return [[_arb_entry(e, f"xs[{t}][{k}]") for k, e in enumerate(row)] for t, row in enumerate(arr.tolist())]


class _BallParams:
    """The parameters as ``arb_mat`` (floats exact, other rationals as tight balls)."""

    def __init__(self, params: LSTMParams):
        def mat(kind: str, g: str) -> arb_mat:
            return arb_mat([[_arb_exact(q) for q in row] for row in params.exact(kind, g)])
        self.W = {g: mat("W", g) for g in GATES}
        self.U = {g: mat("U", g) for g in GATES}
        self.b = {g: mat("b", g) for g in GATES}
        self.d_h = params.d_h


def _sigma(s: arb) -> arb:
    return 1 / (1 + (-s).exp())


def _step(P: _BallParams, x: list[arb], h: list[arb], c: list[arb]) -> LSTMStep:
    xc, hc = arb_mat([[v] for v in x]), arb_mat([[v] for v in h])
    z = {g: P.W[g] * xc + P.U[g] * hc + P.b[g] for g in GATES}
    col = lambda m: [m[k, 0] for k in range(P.d_h)]  # noqa: E731
    i = [_sigma(s) for s in col(z["i"])]
    f = [_sigma(s) for s in col(z["f"])]
    o = [_sigma(s) for s in col(z["o"])]
    g = [s.tanh() for s in col(z["c"])]
    c_new = [fk * ck + ik * gk for fk, ck, ik, gk in zip(f, c, i, g)]
    h_new = [ok * ck.tanh() for ok, ck in zip(o, c_new)]
    return LSTMStep(i, f, o, g, c_new, h_new)


def lstm_cell_ball(params: LSTMParams, x: Any, h: Any, c: Any, prec: int) -> LSTMStep:
    """One LSTM step in arb at ``prec`` bits, with its gates.

    ``x`` (d_x), ``h``, ``c`` (d_h) are read exactly (or kept, when given as balls).

    >>> s = lstm_cell_ball(LSTMParams.zeros(1, 2), [1.0], [0.5, 2.0], [1.0, -3.0], prec=53)
    >>> s.i, s.g, s.c
    ([0.500000000000000, 0.500000000000000], [0, 0], [0.500000000000000, -1.50000000000000])
    """
    prec = check_prec(prec)
    with ctx.workprec(prec):
        P = _BallParams(params)
        return _step(P, _arb_vector(x, params.d_x, "x"), _arb_vector(h, params.d_h, "h"),
                     _arb_vector(c, params.d_h, "c"))


def lstm_ball(params: LSTMParams, xs: Any, h0: Any, c0: Any, prec: int) -> LSTMBallRun:
    """Certified enclosures of ``h_1..h_T`` and ``c_1..c_T`` for one sequence
    ``xs`` of shape ``[time, d_x]``, computed in arb at ``prec`` bits."""
    prec = check_prec(prec)
    with ctx.workprec(prec):
        P = _BallParams(params)
        seq = _arb_sequence(xs, params.d_x)
        h, c = _arb_vector(h0, params.d_h, "h0"), _arb_vector(c0, params.d_h, "c0")
        hs, cs = [], []
        for x in seq:
            step = _step(P, x, h, c)
            h, c = step.h, step.c
            hs.append(h)
            cs.append(c)
    return LSTMBallRun(hs, cs)
