"""The Legendre Memory Unit layers (the specification's LMU reference, proofs/spec.md §S19), in numpy.

The memory is the LegT system discretized by zero-order hold (:mod:`.lmu_memory`);
the float64 matrices the layers use are the certified balls' midpoints.  Layers (the
reference's parameter names and shapes; weights are numpy arrays that may be set, and
are initialised as the reference does, from a numpy Generator):

* :class:`LMUCell` -- ``u = e_x x + e_h h + e_m m``, ``m <- Abar m + Bbar u``,
  ``h <- tanh(W_x x + W_h h + W_m m)``;
* :class:`LMU` -- the time loop over ``[batch, time, features]``;
* :class:`LMUFFT` -- ``u = relu(W_u x)``, the memory by a causal FFT convolution with the
  impulse response ``H_t = Abar^t Bbar``, ``h = relu(W_h [m; x])``.

Departures from the reference (its pitfalls): ``H`` is built in float64 by
matrix-vector steps (not float32 matrix powers); ``LMUFFT`` accepts any sequence length
up to the configured one; the initial state takes the input's dtype (float32 or
float64), and every layer computes in that dtype.  How far float impulse responses are
from the certified one is measured by :func:`~.lmu_audit.lmu_audit`.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .hippo import check_size
from .lmu_memory import impulse_response, state_space_matrices


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
        i, o = check_size(in_features, "in_features"), check_size(out_features, "out_features")
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
        n_in, n_h, N = (check_size(input_size, "input_size"), check_size(hidden_size, "hidden_size"),
                        check_size(memory_size, "memory_size"))
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
        n_in, n_h, N = (check_size(input_size, "input_size"), check_size(hidden_size, "hidden_size"),
                        check_size(memory_size, "memory_size"))
        self.input_size, self.hidden_size, self.memory_size = n_in, n_h, N
        self.seq_len = check_size(seq_len, "seq_len")
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
