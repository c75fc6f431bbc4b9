"""The skew part K of a HiPPO matrix as an operator on double-double and triple-double disk
arrays (proofs/verified_eig.md): the HiPPO forms ``K = kappa D (T o M) D`` (D diagonal,
``T_nk = sign(k - n)``, M all ones or the parity mask of LegT) applied in O(N) per column by
prefix sums (:class:`StructuredSkew`), any other K densely (:class:`DenseSkew`); and the
disk-array helpers the verification shares with them (points, parts, column sums, exclusive
prefix sums).  Used by :mod:`.hippo_verified_eig`."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from flint import acb

from ...arith.disk_convert import dd_of_balls
from ...arith.double_double import DD
from ...arith.triple_double import TD, normalized as td_normalized, td_of_balls

#: precision of the balls the triple-double disks are read from
TD_PREC = 400
_DD_FIELDS = ("rh", "rl", "ih", "il", "rad")
_TD_FIELDS = ("r0", "r1", "r2", "i0", "i1", "i2", "rad")


def _fields(x) -> tuple[str, ...]:
    return _TD_FIELDS if isinstance(x, TD) else _DD_FIELDS


def _like(x, arrays):
    return type(x)(*arrays)


def _zeros(cls, shape):
    n = 7 if cls is TD else 5
    return cls(*(np.zeros(shape) for _ in range(n)))


def _points(parts: list[np.ndarray]):
    """Exact points (complex arrays: a DD from two parts, a normalized TD from three) as
    radius-0 disks."""
    z = np.zeros(parts[0].shape)
    if len(parts) == 2:
        return DD(parts[0].real.copy(), parts[1].real.copy(), parts[0].imag.copy(), parts[1].imag.copy(), z)
    return td_normalized(TD(*(p.real.copy() for p in parts), *(p.imag.copy() for p in parts), z))


def _parts_of(x) -> list[np.ndarray]:
    """The midpoints' parts as complex arrays (their sum is the midpoint)."""
    if isinstance(x, TD):
        return [x.r0 + 1j * x.i0, x.r1 + 1j * x.i1, x.r2 + 1j * x.i2]
    return [x.rh + 1j * x.ih, x.rl + 1j * x.il]


def _take(x, idx):
    return _like(x, (getattr(x, f)[idx] for f in _fields(x)))


def _full(x, shape):
    """The disks broadcast to ``shape`` (as arrays of their own)."""
    return _like(x, (np.broadcast_to(getattr(x, f), shape).copy() for f in _fields(x)))


def _concat(parts: list, axis: int = 0):
    return _like(parts[0], (np.concatenate([getattr(p, f) for p in parts], axis=axis) for f in _fields(parts[0])))


def _assign(x, idx, v) -> None:
    for f in _fields(x):
        getattr(x, f)[idx] = getattr(v, f)


def _real_lower(x) -> np.ndarray:
    """A lower bound of the real part over each disk: the parts' sum minus the radius,
    each step rounded down."""
    parts = [x.r0, x.r1, x.r2] if isinstance(x, TD) else [x.rh, x.rl]
    acc = parts[0]
    for q in parts[1:]:
        acc = np.nextafter(acc - np.abs(q), -np.inf)
    return np.nextafter(acc - x.rad, -np.inf)


def _real_upper(x) -> np.ndarray:
    parts = [x.r0, x.r1, x.r2] if isinstance(x, TD) else [x.rh, x.rl]
    acc = parts[0]
    for q in parts[1:]:
        acc = np.nextafter(acc + np.abs(q), np.inf)
    return np.nextafter(acc + x.rad, np.inf)


def column_sums(x):
    """Disks containing the sums over axis 0 (pairwise: log2(N) vectorized additions)."""
    while _shape(x)[0] > 1:
        n = _shape(x)[0]
        half = n // 2
        s = _take(x, slice(0, half)).add(_take(x, slice(half, 2 * half)))
        x = _concat([s, _take(x, slice(n - 1, n))]) if n % 2 else s
    return _take(x, 0)


def exclusive_prefix(Z):
    """Disks containing ``E_j = sum_{j' < j} Z_j'`` for j = 0..n (n + 1 rows; E_n the total):
    in groups of about sqrt(n) rows, the running sums inside the groups (all groups at
    once), the running sums of the group totals, then each group's offset added."""
    n, rest = _shape(Z)[0], _shape(Z)[1:]
    b = max(1, int(np.ceil(np.sqrt(n))))
    g = -(-n // b)
    cls, F = type(Z), _fields(Z)
    pad = _concat([Z, _zeros(cls, (g * b - n,) + rest)]) if g * b > n else Z
    Zg = cls(*(getattr(pad, f).reshape((g, b) + rest) for f in F))
    inner = _zeros(cls, (g, b) + rest)
    acc = _zeros(cls, (g,) + rest)
    for j in range(b):
        _assign(inner, (slice(None), j), acc)
        acc = acc.add(_take(Zg, (slice(None), j)))
    offsets = _zeros(cls, (g,) + rest)
    run = _zeros(cls, rest)
    for i in range(g):
        _assign(offsets, i, run)
        run = run.add(_take(acc, i))
    E = inner.add(_full(cls(*(getattr(offsets, f)[:, None] for f in F)), (g, b) + rest))
    E = cls(*(getattr(E, f).reshape((g * b,) + rest)[:n] for f in F))
    return _concat([E, cls(*(getattr(run, f)[None] for f in F))])


def _disks_of(balls: list, cls):
    """Disks of class ``cls`` containing acb balls."""
    return td_of_balls(balls, TD_PREC) if cls is TD else dd_of_balls(balls, TD_PREC)


@dataclass
class StructuredSkew:
    """``K = kappa D (T o M) D``: ``(K X)_n = kappa d_n sum_{k != n, M_nk = 1} sign(k - n) d_k X_k``.

    ``d`` (per row) and ``kappa`` are acb balls containing the exact values; ``parity``
    selects ``M_nk = [n + k odd]`` (LegT), else M is all ones."""

    d: list
    kappa: acb
    parity: bool

    def __post_init__(self) -> None:
        self._disks = {}

    @property
    def N(self) -> int:
        return len(self.d)

    def _of(self, cls):
        if cls not in self._disks:
            self._disks[cls] = (_disks_of(self.d, cls), _disks_of([self.kappa], cls))
        return self._disks[cls]

    def dense_float(self) -> np.ndarray:
        """K in float64 (approximate: only the eigen-solver's input)."""
        n = np.arange(self.N)
        sign = np.sign(n[None, :] - n[:, None]).astype(np.float64)
        if self.parity:
            sign *= (n[:, None] + n[None, :]) % 2
        d = np.array([float(x.real.mid()) for x in self.d])
        return float(self.kappa.real.mid()) * sign * np.outer(d, d)

    def apply(self, X):
        """Disks containing K X for every point of X (N x m, DD or TD).  With ``Y = D X`` and
        E the exclusive prefix sums of Y over the rows of the class that row n meets,
        ``sum_{k > n} - sum_{k < n} = E_total - 2 E_n - [Y_n if n is in that class]``."""
        N, cls, shape = self.N, type(X), _shape(X)
        d, kappa = self._of(cls)
        dcol = _full(d.reshape(N, 1), shape)
        Y = X.mul(dcol)
        if not self.parity:
            E = exclusive_prefix(Y)
            total = _full(_take(E, slice(N, N + 1)), shape)
            head = _take(E, slice(0, N))
            T = total.sub(head.add(head)).sub(Y)
        else:
            Ee, Eo = exclusive_prefix(_take(Y, slice(0, N, 2))), exclusive_prefix(_take(Y, slice(1, N, 2)))
            n = np.arange(N)
            even, odd = n[0::2], n[1::2]
            T = _zeros(cls, shape)
            # n = 2a meets the odd rows k = 2j + 1 < n: j < a; n = 2a + 1 meets the even rows k = 2j <= 2a
            for rows, E, idx in ((even, Eo, even // 2), (odd, Ee, odd // 2 + 1)):
                if len(rows) == 0:
                    continue
                m = _shape(E)[0] - 1
                head = _take(E, idx)
                total = _full(_take(E, slice(m, m + 1)), _shape(head))
                _assign(T, rows, total.sub(head.add(head)))
        return T.mul(dcol).mul(_full(kappa.reshape(1, 1), shape))


def _shape(x) -> tuple:
    return x.rh.shape if isinstance(x, DD) else x.r0.shape


@dataclass
class DenseSkew:
    """A dense K given as acb balls (N x N rows) containing the exact entries; ``K`` must be
    real skew-symmetric (the caller's statement)."""

    K: list[list]

    def __post_init__(self) -> None:
        self._disks = {}

    @property
    def N(self) -> int:
        return len(self.K)

    def dense_float(self) -> np.ndarray:
        return np.array([[float(x.real.mid()) for x in row] for row in self.K])

    def apply(self, X):
        cls, shape, N = type(X), _shape(X), self.N
        if cls not in self._disks:
            self._disks[cls] = _disks_of([x for row in self.K for x in row], cls).reshape(N, N)
        K = self._disks[cls]
        out = _zeros(cls, shape)
        for k in range(N):
            col = _full(_take(K, (slice(None), slice(k, k + 1))), shape)
            out = out.add(col.mul(_full(_take(X, (slice(k, k + 1), slice(None))), shape)))
        return out


def dense_skew_of_balls(K: list[list], prec: int) -> DenseSkew:
    """A :class:`DenseSkew` from acb balls."""
    return DenseSkew([[acb(x) for x in row] for row in K])


# -- the route -------------------------------------------------------------------------
