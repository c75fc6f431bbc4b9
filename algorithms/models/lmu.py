"""The Legendre Memory Unit (spec: the LMU of ``lmu_reference.py``), in numpy.

The memory is the LegT state-space system (``theta`` = window length in steps)

    A[i, j] = (2i+1)/theta * (-1 if i < j else (-1)^(i-j+1)),   B[i] = (2i+1) (-1)^i / theta,

which is exactly the spec's LegT generator ``G^T`` (proofs/lmu_port.md), discretized by
zero-order hold with step 1: ``Abar = e^A``, ``Bbar = int_0^1 e^{A s} ds B``.  Here the
discretization is certified (balls from one augmented matrix exponential, see
:mod:`algorithms.ssm`); the float64 matrices the layers use are the balls' midpoints.

Layers (the reference's parameter names and shapes; weights are numpy arrays that may
be set, and are initialised as the reference does, from a numpy Generator):

* :class:`LMUCell` -- ``u = e_x x + e_h h + e_m m``, ``m <- Abar m + Bbar u``,
  ``h <- tanh(W_x x + W_h h + W_m m)``;
* :class:`LMU` -- the time loop over ``[batch, time, features]``;
* :class:`LMUFFT` -- ``u = relu(W_u x)``, the memory by a causal FFT convolution with the
  impulse response ``H_t = Abar^t Bbar``, ``h = relu(W_h [m; x])``.

Departures from the reference (its pitfalls): ``H`` is built in float64 by
matrix-vector steps (not float32 matrix powers); ``LMUFFT`` accepts any sequence length
up to the configured one; the initial state takes the input's dtype (float32 or
float64), and every layer computes in that dtype.

:func:`certified_impulse_response` encloses ``H`` with balls whose radii do not grow
with the wrapping effect: it uses that ``e^{A t}`` does not increase the norm
``||v||_S^2 = sum_i v_i^2 / (2i+1)`` (proofs/lmu_port.md).  :func:`lmu_audit` measures,
with certified lower and upper bounds, how far the float32/float64 impulse responses
built the reference's way (matrix powers) and ours (matrix-vector steps) are from it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from flint import arb, arb_mat, ctx

from ...arith import exact_parts
from ...arith.ball import float_upper

from .lti_model import LTIModel
from .lti_simulate import augmented_exponential, flint_matrices

_U64 = Fraction(1, 2 ** 53)  # unit roundoff of IEEE binary64


# -- the LegT system -----------------------------------------------------------------

def _size(x: Any, what: str) -> int:
    if not isinstance(x, (int, np.integer)) or isinstance(x, (bool, np.bool_)) or x < 1:
        raise ValueError(f"{what} must be an integer >= 1, got {x!r}")
    return int(x)


def _theta(theta: Any) -> Fraction:
    re, im = exact_parts(theta, "theta")
    if im != 0 or re <= 0:
        raise ValueError(f"theta must be a real number > 0, got {theta!r}")
    return re


def legt_matrices(memory_size: int, theta: Any) -> tuple[list[list[Fraction]], list[Fraction]]:
    """The continuous LegT ``(A, B)`` of the reference, exactly (``theta`` read exactly).

    >>> A, B = legt_matrices(2, 1)
    >>> [[int(a) for a in r] for r in A], [int(b) for b in B]
    ([[-1, -1], [3, -3]], [1, -3])
    """
    N, th = _size(memory_size, "memory_size"), _theta(theta)
    A = [[Fraction(2 * i + 1) / th * (-1 if i < j else (-1) ** (i - j + 1)) for j in range(N)]
         for i in range(N)]
    B = [Fraction(2 * i + 1) / th * (-1) ** i for i in range(N)]
    return A, B


def legt_model(memory_size: int, theta: Any) -> LTIModel:
    """The reference's continuous system ``(A, B, C = 1^T, D = 0)`` as an :class:`LTIModel`."""
    A, B = legt_matrices(memory_size, theta)
    return LTIModel(A, B, [Fraction(1)] * len(B))


def _check_prec(prec: Any) -> int:
    if not isinstance(prec, int) or isinstance(prec, bool) or prec < 32:
        raise ValueError(f"prec must be an integer >= 32 bits, got {prec!r}")
    return prec


def zoh_certified(memory_size: int, theta: Any, prec: int = 128) -> tuple[arb_mat, arb_mat]:
    """Balls ``(Abar, Bbar)`` (N x N and N x 1 arb_mat) containing the exact ZOH
    discretization with step 1 of the exact LegT system."""
    _check_prec(prec)
    model = legt_model(memory_size, theta)
    with ctx.workprec(prec):
        A, B, _, _ = flint_matrices(model, True)
        Ad, Bd, _ = augmented_exponential(A, B, Fraction(1))
    return Ad, Bd


def state_space_matrices(memory_size: int, theta: Any, prec: int = 128) -> tuple[np.ndarray, np.ndarray]:
    """The discretized ``(A, B)`` as float64 arrays of shapes [N, N] and [N, 1]: the
    certified balls' midpoints, rounded to nearest.

    >>> A, B = state_space_matrices(4, 4)
    >>> A.shape, B.shape, A.dtype
    ((4, 4), (4, 1), dtype('float64'))
    """
    Ad, Bd = zoh_certified(memory_size, theta, prec)
    return _mid_array(Ad), _mid_array(Bd)


def _mid_array(M: arb_mat) -> np.ndarray:
    return np.array([[float(M[i, j].mid()) for j in range(M.ncols())] for i in range(M.nrows())])


# -- impulse responses ------------------------------------------------------------------

def _check_ab(A: np.ndarray, B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    A, B = np.asarray(A), np.asarray(B)
    if A.ndim != 2 or A.shape[0] != A.shape[1] or B.shape not in ((A.shape[0], 1), (A.shape[0],)):
        raise ValueError(f"expected A of shape [N, N] and B of shape [N, 1], got {A.shape} and {B.shape}")
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(B))):
        raise ValueError("A and B must be finite")
    return A, B.reshape(-1)


def impulse_response(A: np.ndarray, B: np.ndarray, length: int) -> np.ndarray:
    """``H[:, t] = A^t B`` for ``0 <= t < length`` by matrix-vector steps
    ``h <- A h``, in the dtype of ``A`` (shape [N, length])."""
    A, b = _check_ab(A, B)
    L = _size(length, "length")
    H = np.empty((A.shape[0], L), dtype=np.result_type(A, b))
    h = b.astype(H.dtype)
    for t in range(L):
        H[:, t] = h
        if t + 1 < L:
            h = A @ h
    return H


def impulse_response_powers(A: np.ndarray, B: np.ndarray, length: int) -> np.ndarray:
    """The reference's construction: ``A_0 = I``, ``H[:, t] = A_t B``,
    ``A_{t+1} = A A_t`` (matrix powers), in the dtype of ``A``."""
    A, b = _check_ab(A, B)
    L = _size(length, "length")
    dt = np.result_type(A, b)
    Ai = np.eye(A.shape[0], dtype=dt)
    B2 = b.astype(dt).reshape(-1, 1)
    cols = []
    for _ in range(L):
        cols.append(Ai @ B2)
        Ai = A @ Ai
    return np.concatenate(cols, axis=1)


@dataclass
class ImpulseEnclosure:
    """Balls ``balls[i, t]`` containing ``H[i, t] = (Abar^t Bbar)_i`` of the exact LegT
    ZOH system, together with the certified ``Abar``, ``Bbar`` they come from.

    ``mid`` holds the exact ball midpoints; ``norm_bound[t]`` bounds
    ``||H[:, t] - mid[:, t]||_S`` and the radius of entry ``(i, t)`` is at most
    ``sqrt(2i+1) * norm_bound[t]``."""

    Ad: arb_mat
    Bd: arb_mat
    mid: arb_mat
    norm_bound: list
    balls: arb_mat
    prec: int

    @property
    def shape(self) -> tuple[int, int]:
        return self.balls.nrows(), self.balls.ncols()

    def midpoint(self) -> np.ndarray:
        """The midpoints rounded to float64 (uncertified by themselves)."""
        return _mid_array(self.mid)

    def max_radius(self) -> float:
        """An upper bound on the radius of every ball."""
        with ctx.workprec(self.prec):
            r = arb(0)
            for x in self.balls.entries():
                r = r.max(x.rad())
            return float_upper(r)


def _norm2_upper(v: arb_mat) -> arb:
    """An exact upper bound on the 2-norm of every vector in the column of balls v."""
    acc = arb(0)
    for i in range(v.nrows()):
        a = v[i, 0].abs_upper()
        acc += a * a
    return acc.sqrt().upper()


def certified_impulse_response(memory_size: int, theta: Any, length: int,
                               prec: int = 128) -> ImpulseEnclosure:
    """Enclose ``H[:, t] = Abar^t Bbar``, ``0 <= t < length``, for the exact LegT system.

    Midpoints ``mid_t = mid(Abar_ball mid_{t-1})`` are exact numbers; the residual of
    each step is at most the radius of that product, and ``Abar`` does not increase
    ``||.||_S``, so the errors add up instead of multiplying (proofs/lmu_port.md).

    >>> enc = certified_impulse_response(4, 4, 10)
    >>> enc.shape, enc.max_radius() < 1e-30
    ((4, 10), True)
    """
    N = _size(memory_size, "memory_size")
    L = _size(length, "length")
    Ad, Bd = zoh_certified(N, theta, prec)
    with ctx.workprec(prec):
        h = Bd.mid()
        cols, bounds = [h], [_norm2_upper(Bd - h)]
        for _ in range(L - 1):
            q = Ad * h
            h = q.mid()
            # q - mid(q) has zero midpoints and q's radii: the step's residual
            bounds.append((bounds[-1] + _norm2_upper(q - h)).upper())
            cols.append(h)
        mid = arb_mat(N, L, [cols[t][i, 0] for i in range(N) for t in range(L)])
        weights = arb_mat(N, 1, [arb(0, arb(2 * i + 1).sqrt()) for i in range(N)])
        spread = arb_mat(1, L, [arb(0, e) for e in bounds])
        balls = mid + weights * spread
    return ImpulseEnclosure(Ad, Bd, mid, bounds, balls, prec)


def _float_lower(x: arb) -> float:
    return -float_upper(-x)


def error_bounds(enc: ImpulseEnclosure, H: np.ndarray) -> dict:
    """Certified bounds on ``max_{i,t} |H[i, t] - H_exact[i, t]|`` for a float array
    ``H`` of the enclosure's shape: ``lower <= true max error <= upper``, and the
    ``estimate`` ``max |H - midpoint|`` (a float, not a bound)."""
    H = np.asarray(H)
    if H.shape != enc.shape:
        raise ValueError(f"H: expected shape {enc.shape}, got {H.shape}")
    if not np.all(np.isfinite(H)):
        return {"lower": math.inf, "upper": math.inf, "estimate": math.inf}
    N, L = enc.shape
    with ctx.workprec(enc.prec):
        Hm = arb_mat(N, L, H.astype(np.float64).ravel().tolist())  # floats are exact
        upper, lower = arb(0), arb(0)
        for d in (Hm - enc.balls).entries():
            upper = upper.max(d.abs_upper())
            lower = lower.max(d.abs_lower())
        bounds = {"lower": _float_lower(lower), "upper": float_upper(upper)}
    bounds["estimate"] = float(np.abs(H.astype(np.float64) - enc.midpoint()).max())
    return bounds


def float64_running_bound(enc: ImpulseEnclosure, A: np.ndarray, B: np.ndarray,
                          H: np.ndarray) -> np.ndarray:
    """A rigorous bound, derived step by step, on the error of ``H = impulse_response(A, B, L)``
    computed in IEEE float64 from float64 ``A``, ``B`` (e.g. the midpoints): entry
    ``[i, t]`` bounds ``|H[i, t] - H_exact[i, t]|``.

    With ``e_t = H_t - H_exact_t``: ``e_t = Abar e_{t-1} + (A - Abar) H_{t-1} + delta_t``,
    ``|delta_t| <= gamma_N |A| |H_{t-1}|`` (any summation order), ``||Abar||_S <= 1`` and
    ``||.||_S <= ||.||_2``; so ``||e_t||_S <= ||e_{t-1}||_S + ||(|A - Abar| + gamma_N |A|)
    |H_{t-1}| ||_2`` and ``|e_t[i]| <= sqrt(2i+1) ||e_t||_S``."""
    A, b = _check_ab(A, B)
    H = np.asarray(H)
    if A.dtype != np.float64 or H.dtype != np.float64:
        raise ValueError("the running bound is derived for float64 arithmetic")
    N, L = enc.shape
    if A.shape != (N, N) or H.shape != (N, L):
        raise ValueError(f"expected A of shape {(N, N)} and H of shape {(N, L)}")
    with ctx.workprec(enc.prec):
        u = arb(_U64.numerator) / _U64.denominator
        gamma = (N * u / (1 - N * u)).upper()
        Af = arb_mat(N, N, A.ravel().tolist())
        diff = (Af - enc.Ad).entries()
        M = arb_mat(N, N, [(d.abs_upper() + gamma * abs(a)).upper()
                           for d, a in zip(diff, Af.entries())])
        e = _norm2_upper(arb_mat(N, 1, b.tolist()) - enc.Bd)
        eps = [e]
        if L > 1:
            P = M * arb_mat(N, L - 1, np.abs(H[:, :-1]).ravel().tolist())
            for t in range(L - 1):
                col = arb_mat(N, 1, [P[i, t] for i in range(N)])
                e = (e + _norm2_upper(col)).upper()
                eps.append(e)
        w = np.array([float_upper(arb(2 * i + 1).sqrt()) for i in range(N)])
        e = np.array([float_upper(x) for x in eps])
    # two roundings per entry: (1 - u)^2 (1 + 2^-50) > 1; the tiny term covers underflow
    return np.outer(w, e) * (1 + 2.0 ** -50) + 2.0 ** -1060


def lmu_audit(memory_size: int, theta: Any, length: int, prec: int = 128) -> dict:
    """Certified errors of float impulse responses ``H[:, t] = Abar^t Bbar``,
    ``0 <= t < length``, of the LegT memory against the certified one.

    Four constructions from the float64 ZOH midpoints: ``reference_float32`` (cast to
    float32, matrix powers in float32, as the reference's LMUFFT builds H),
    ``reference_float64`` (matrix powers in float64), ``ours_float32`` and
    ``ours_float64`` (matrix-vector steps).  Each gets ``lower <= max_{i,t} |error| <= upper``
    (certified) and a float ``estimate``; ``ours_float64`` also gets the derived
    ``running_bound`` of :func:`float64_running_bound`.

    >>> r = lmu_audit(4, 4, 16)
    >>> e = r["errors"]["ours_float64"]
    >>> 0 <= e["lower"] <= e["upper"] <= e["running_bound"]
    True
    """
    enc = certified_impulse_response(memory_size, theta, length, prec)
    N, L = enc.shape
    A64, B64 = _mid_array(enc.Ad), _mid_array(enc.Bd)
    A32, B32 = A64.astype(np.float32), B64.astype(np.float32)
    builds = {
        "reference_float32": impulse_response_powers(A32, B32, L),
        "reference_float64": impulse_response_powers(A64, B64, L),
        "ours_float32": impulse_response(A32, B32, L),
        "ours_float64": impulse_response(A64, B64, L),
    }
    errors = {name: error_bounds(enc, H) for name, H in builds.items()}
    errors["ours_float64"]["running_bound"] = float(
        float64_running_bound(enc, A64, B64, builds["ours_float64"]).max())
    th = _theta(theta)
    return {
        "memory_size": N, "theta": float(th), "theta_exact": str(th), "length": L,
        "precision": prec, "certified_max_radius": enc.max_radius(),
        "max_abs_H": float(np.abs(enc.midpoint()).max()), "errors": errors,
    }


# -- layers -----------------------------------------------------------------------------

def _rng(seed: Any) -> np.random.Generator:
    return np.random.default_rng(seed)


def lecun_uniform(shape: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """U(-sqrt(3/fan_in), sqrt(3/fan_in)) with ``fan_in = shape[1]``."""
    limit = math.sqrt(3.0 / shape[1])
    return rng.uniform(-limit, limit, size=shape)


def xavier_normal(shape: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """N(0, 2/(fan_in + fan_out)) with ``fan_in = shape[1]``, ``fan_out = shape[0]``."""
    return rng.normal(0.0, math.sqrt(2.0 / (shape[0] + shape[1])), size=shape)


class _Param:
    """A numpy-array attribute with a fixed shape, checked (and made finite float) when set."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return obj.__dict__[self.name]

    def __set__(self, obj: Any, value: Any) -> None:
        arr = np.asarray(value)
        if arr.dtype.kind not in "fiu":
            raise ValueError(f"{self.name}: expected real numbers, got dtype {arr.dtype}")
        arr = np.array(arr, dtype=arr.dtype if arr.dtype in (np.float32, np.float64) else np.float64)
        want = obj._shapes[self.name]
        if arr.shape != want:
            raise ValueError(f"{self.name}: expected shape {want}, got {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{self.name}: entries must be finite")
        obj.__dict__[self.name] = arr


def _dtype(x: np.ndarray, what: str) -> np.dtype:
    if x.dtype.kind in "iu":
        return np.dtype(np.float64)
    if x.dtype not in (np.float32, np.float64):
        raise ValueError(f"{what}: expected real float32 or float64 numbers, got dtype {x.dtype}")
    return x.dtype


def _input(x: Any, ndim: int, features: int, what: str) -> np.ndarray:
    x = np.asarray(x)
    if x.ndim != ndim or x.shape[-1] != features:
        raise ValueError(f"{what}: expected {ndim} axes with {features} features last, got shape {x.shape}")
    dt = _dtype(x, what)
    x = x.astype(dt, copy=False)
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{what}: entries must be finite")
    return x


class Linear:
    """``y = x W^T + b`` with ``weight`` [out, in] and ``bias`` [out], initialised like
    the reference's ``nn.Linear``: both U(-1/sqrt(in), 1/sqrt(in))."""

    weight = _Param()
    bias = _Param()

    def __init__(self, in_features: int, out_features: int, rng: np.random.Generator):
        i, o = _size(in_features, "in_features"), _size(out_features, "out_features")
        self._shapes = {"weight": (o, i), "bias": (o,)}
        bound = 1.0 / math.sqrt(i)
        self.weight = rng.uniform(-bound, bound, size=(o, i))
        self.bias = rng.uniform(-bound, bound, size=(o,))

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return x @ self.weight.T.astype(x.dtype, copy=False) + self.bias.astype(x.dtype, copy=False)


class LMUCell:
    """One LMU step (Equations 4, 6, 7 of the LMU paper, as in the reference).

    ``A`` [N, N], ``B`` [N, 1] (ZOH float64 midpoints), ``e_x`` [1, input], ``e_h``
    [1, hidden], ``e_m`` [1, N], ``W_x`` [hidden, input], ``W_h`` [hidden, hidden],
    ``W_m`` [hidden, N].  ``learn_a``/``learn_b`` are recorded (nothing is trained here).

    >>> cell = LMUCell(2, 3, 4, theta=4, seed=0)
    >>> x = np.zeros((5, 2)); h, m = cell(x, (np.zeros((5, 3)), np.zeros((5, 4))))
    >>> h.shape, m.shape
    ((5, 3), (5, 4))
    """

    A = _Param()
    B = _Param()
    e_x = _Param()
    e_h = _Param()
    e_m = _Param()
    W_x = _Param()
    W_h = _Param()
    W_m = _Param()

    def __init__(self, input_size: int, hidden_size: int, memory_size: int, theta: Any,
                 learn_a: bool = False, learn_b: bool = False, seed: Any = None, prec: int = 128):
        n_in, n_h, N = (_size(input_size, "input_size"), _size(hidden_size, "hidden_size"),
                        _size(memory_size, "memory_size"))
        self.input_size, self.hidden_size, self.memory_size = n_in, n_h, N
        self.theta = theta
        self.learn_a, self.learn_b = bool(learn_a), bool(learn_b)
        self._shapes = {"A": (N, N), "B": (N, 1), "e_x": (1, n_in), "e_h": (1, n_h), "e_m": (1, N),
                        "W_x": (n_h, n_in), "W_h": (n_h, n_h), "W_m": (n_h, N)}
        self.A, self.B = state_space_matrices(N, theta, prec)
        self.init_parameters(seed)

    def init_parameters(self, seed: Any = None) -> None:
        """LeCun uniform encoders ``e_x``, ``e_h``; ``e_m = 0``; Xavier normal kernels."""
        rng = _rng(seed)
        self.e_x = lecun_uniform(self._shapes["e_x"], rng)
        self.e_h = lecun_uniform(self._shapes["e_h"], rng)
        self.e_m = np.zeros(self._shapes["e_m"])
        for name in ("W_x", "W_h", "W_m"):
            setattr(self, name, xavier_normal(self._shapes[name], rng))

    def _p(self, name: str, dt: np.dtype) -> np.ndarray:
        return getattr(self, name).astype(dt, copy=False)

    def forward(self, x: Any, state: tuple[Any, Any]) -> tuple[np.ndarray, np.ndarray]:
        """``x`` [batch, input_size], ``state = (h [batch, hidden], m [batch, memory])``;
        returns the new ``(h, m)`` in the dtype of ``x``."""
        x = _input(x, 2, self.input_size, "x")
        dt = x.dtype
        h, m = self._state(state, x.shape[0], dt)
        u = x @ self._p("e_x", dt).T + h @ self._p("e_h", dt).T + m @ self._p("e_m", dt).T
        m = m @ self._p("A", dt).T + u @ self._p("B", dt).T
        h = np.tanh(x @ self._p("W_x", dt).T + h @ self._p("W_h", dt).T + m @ self._p("W_m", dt).T)
        return h, m

    __call__ = forward

    def _state(self, state: Any, batch: int, dt: np.dtype) -> tuple[np.ndarray, np.ndarray]:
        if not isinstance(state, (tuple, list)) or len(state) != 2:
            raise ValueError("state must be a pair (h, m)")
        h, m = (np.asarray(s) for s in state)
        for name, s, n in (("h", h, self.hidden_size), ("m", m, self.memory_size)):
            if s.shape != (batch, n):
                raise ValueError(f"state {name}: expected shape {(batch, n)}, got {s.shape}")
            if not np.all(np.isfinite(s)):
                raise ValueError(f"state {name}: entries must be finite")
        return h.astype(dt, copy=False), m.astype(dt, copy=False)


class LMU:
    """The LMU layer: :class:`LMUCell` applied along the time axis.

    >>> lmu = LMU(1, 2, 3, theta=3, seed=0)
    >>> out, (h, m) = lmu(np.ones((4, 5, 1), dtype=np.float32))
    >>> out.shape, h.dtype, m.shape
    ((4, 5, 2), dtype('float32'), (4, 3))
    """

    def __init__(self, input_size: int, hidden_size: int, memory_size: int, theta: Any,
                 learn_a: bool = False, learn_b: bool = False, seed: Any = None, prec: int = 128):
        self.cell = LMUCell(input_size, hidden_size, memory_size, theta, learn_a, learn_b, seed, prec)
        self.hidden_size, self.memory_size = self.cell.hidden_size, self.cell.memory_size

    def forward(self, x: Any, state: tuple[Any, Any] | None = None
                ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
        """``x`` [batch, seq_len, input_size] -> (outputs [batch, seq_len, hidden], (h_n, m_n)).
        The default initial state is zero in the dtype of ``x``."""
        x = _input(x, 3, self.cell.input_size, "x")
        batch, T, _ = x.shape
        if T < 1:
            raise ValueError("x: the sequence must have at least one time step")
        if state is None:
            state = (np.zeros((batch, self.hidden_size), x.dtype), np.zeros((batch, self.memory_size), x.dtype))
        out = np.empty((batch, T, self.hidden_size), dtype=x.dtype)
        for t in range(T):
            state = self.cell(x[:, t, :], state)
            out[:, t, :] = state[0]
        return out, state

    __call__ = forward


class LMUFFT:
    """The parallel LMU layer: ``u = relu(W_u x)``, memory ``m_t = sum_{j <= t} H_j u_{t-j}``
    by FFT (length ``2 seq_len >= 2T - 1``, no wrap-around), ``h = relu(W_h [m; x])``.

    ``W_u`` = Linear(input, 1), ``W_h`` = Linear(memory + input, hidden); ``A``, ``B``
    (float64 ZOH midpoints), ``H`` [memory, seq_len] and ``fft_H`` [memory, seq_len + 1]
    (setting ``A`` or ``B`` rebuilds them).

    >>> f = LMUFFT(2, 3, 4, seq_len=8, theta=8, seed=0)
    >>> h, h_n = f(np.ones((2, 5, 2)))
    >>> h.shape, h_n.shape, f.fft_H.shape
    ((2, 5, 3), (2, 3), (4, 9))
    """

    def __init__(self, input_size: int, hidden_size: int, memory_size: int, seq_len: int,
                 theta: Any, seed: Any = None, prec: int = 128):
        n_in, n_h, N = (_size(input_size, "input_size"), _size(hidden_size, "hidden_size"),
                        _size(memory_size, "memory_size"))
        self.input_size, self.hidden_size, self.memory_size = n_in, n_h, N
        self.seq_len = _size(seq_len, "seq_len")
        self.theta = theta
        rng = _rng(seed)
        self.W_u = Linear(n_in, 1, rng)
        self.W_h = Linear(N + n_in, n_h, rng)
        A, B = state_space_matrices(N, theta, prec)
        self._A, self._B = A, B
        self.H, self.fft_H = self.impulse()

    @property
    def A(self) -> np.ndarray:
        return self._A

    @A.setter
    def A(self, value: Any) -> None:
        self._A = _checked(value, (self.memory_size, self.memory_size), "A")
        self.H, self.fft_H = self.impulse()

    @property
    def B(self) -> np.ndarray:
        return self._B

    @B.setter
    def B(self, value: Any) -> None:
        self._B = _checked(value, (self.memory_size, 1), "B")
        self.H, self.fft_H = self.impulse()

    def impulse(self) -> tuple[np.ndarray, np.ndarray]:
        """``H[:, t] = A^t B`` in float64 by matrix-vector steps, and its real FFT of
        length ``2 seq_len``."""
        H = impulse_response(self._A.astype(np.float64), self._B.astype(np.float64), self.seq_len)
        return H, np.fft.rfft(H, n=2 * self.seq_len, axis=-1)

    def memory(self, u: Any) -> np.ndarray:
        """``u`` [batch, T] (T <= seq_len) -> ``m`` [batch, T, memory] with
        ``m[:, t] = sum_{j <= t} H[:, j] u[:, t - j]`` (computed in float64)."""
        u = np.asarray(u)
        if u.ndim != 2:
            raise ValueError(f"u: expected shape [batch, T], got {u.shape}")
        T = u.shape[1]
        if not 1 <= T <= self.seq_len:
            raise ValueError(f"sequence length must be between 1 and seq_len = {self.seq_len}, got {T}")
        n = 2 * self.seq_len  # >= T + seq_len - 1: the cyclic product has no wrap-around
        fft_u = np.fft.rfft(u.astype(np.float64), n=n, axis=-1)
        m = np.fft.irfft(fft_u[:, None, :] * self.fft_H[None, :, :], n=n, axis=-1)[:, :, :T]
        return np.transpose(m, (0, 2, 1))

    def forward(self, x: Any) -> tuple[np.ndarray, np.ndarray]:
        """``x`` [batch, T, input_size] with ``T <= seq_len`` -> ``(h [batch, T, hidden], h_n)``."""
        x = _input(x, 3, self.input_size, "x")
        if not 1 <= x.shape[1] <= self.seq_len:
            raise ValueError(f"sequence length must be between 1 and seq_len = {self.seq_len}, got {x.shape[1]}")
        u = np.maximum(self.W_u(x), 0)[:, :, 0]
        m = self.memory(u).astype(x.dtype, copy=False)
        h = np.maximum(self.W_h(np.concatenate((m, x), axis=-1)), 0)
        return h, h[:, -1, :]

    __call__ = forward


def _checked(value: Any, shape: tuple[int, int], what: str) -> np.ndarray:
    arr = np.array(value, dtype=np.float64)
    if arr.shape != shape:
        raise ValueError(f"{what}: expected shape {shape}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what}: entries must be finite")
    return arr
