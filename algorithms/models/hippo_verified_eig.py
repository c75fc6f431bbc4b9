"""A verified fast unitary diagonalization of ``H = c I + K``, K real skew-symmetric
(proofs/verified_eig.md).

``numpy.linalg.eigh`` of the Hermitian ``A = -i K`` gives float64 eigenpairs; two Newton
steps (float64 BLAS on a double-double, then a triple-double residual) refine them to about
triple-double accuracy; then an a-posteriori verification on triple-double disks
(``arith.triple_double.TD``, rigorous under round to nearest; ``arith.double_double.DD``
disks serve the first step) encloses every eigenvalue
(a residual bound per column), proves them simple (the enclosures are disjoint) and bounds
the distance of each refined column to a true unit eigenvector (a sin-theta bound from the
gaps).  Only the products the DPLR model needs (``w_i* v`` for the split's vectors) are
enclosed, never W itself: O(N r) balls.

K is applied as an operator: the HiPPO forms are ``K = kappa D (T o M) D`` (D diagonal,
``T_nk = sign(k - n)``, M all ones or the parity mask of LegT), applied in O(N) per column
by prefix sums (:class:`StructuredSkew`); any other K densely (:class:`DenseSkew`).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from flint import acb, arb, ctx, fmpq

from ...arith.disk_convert import dd_of_balls
from ...arith.double_double import DD
from ...arith.dd_kernels import two_sum
from ...arith.triple_double import TD, normalized as td_normalized, td_of_balls
from ...arith.fpenv import probe
from ...arith.midrad import RangeError, sum_upper, up

#: sqrt(2) < SQRT2_UP (a float above it)
SQRT2_UP = 1.4142135623730952


class VerificationFailed(ArithmeticError):
    """The a-posteriori checks did not hold (a cluster, or an input the route cannot bound)."""


#: columns processed at a time (bounds the memory to O(N BLOCK) disks)
BLOCK = 128
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

def _blocks(N: int):
    return [slice(j, min(j + BLOCK, N)) for j in range(0, N, BLOCK)]


def _broadcast_points(parts: list[np.ndarray], shape):
    return _points([np.broadcast_to(p, shape).astype(np.complex128) for p in parts])


def _residual(op, X, omega: list[np.ndarray]):
    """Disks containing ``K X - X diag(i omega)`` (the residual of A = -iK, times i);
    ``omega``: the parts of the real omega_i, X's class."""
    shape = _shape(X)
    return op.apply(X).sub(X.mul(_broadcast_points([1j * w for w in omega], shape)))


def _column_norms2(X):
    """Disks containing ||x_i||^2 for the columns of X."""
    return column_sums(X.mul(X.conj()))


def _rounded(x) -> np.ndarray:
    """The midpoints rounded to complex128 (approximately: not relied on)."""
    return sum(_parts_of(x)[::-1])


def _newton(op, omega: list[np.ndarray], X: list[np.ndarray], cls) -> tuple[list, list]:
    """One Newton step on eigenpairs of A = -iK (omega, X given by their parts; not relied
    on for rigour: the verification bounds whatever it returns): the residual F of A in
    ``cls`` disks, rounded to float64, C = X* F, omega' = omega + Re C_ii,
    X' = X + X E with E_ji = -C_ji / (omega_j - omega_i), then each column scaled to unit
    norm in ``cls`` disks.  Returns the parts of omega' and X' (one part more than given)."""
    N = X[0].shape[0]
    F = np.empty_like(X[0])
    parts = 3 if cls is TD else 2
    Xp = list(X) + [np.zeros_like(X[0])] * (parts - len(X))
    wp = list(omega) + [np.zeros_like(omega[0])] * (parts - len(omega))
    for b in _blocks(N):
        R = _residual(op, _points([x[:, b] for x in Xp]), [w[b] for w in wp])
        F[:, b] = -1j * _rounded(R)                       # A X - X Omega, rounded to float64
    X0, w0 = X[0], omega[0]
    C = X0.conj().T @ F
    diff = w0[:, None] - w0[None, :]                       # omega_j - omega_i at [j, i]
    scale = max(1.0, float(np.max(np.abs(w0))))
    safe = np.abs(diff) > 2.0 ** -40 * scale
    E = np.where(safe, -C / np.where(safe, diff, 1.0), 0.0)
    corr = np.real(np.diag(C)).copy()
    del F, C, diff, safe
    XE = X0 @ E
    del E
    if len(X) == 1:                                        # float64 -> double-double
        w_new = list(two_sum(w0, corr))
        rh, rl = two_sum(X0.real, XE.real)
        ih, il = two_sum(X0.imag, XE.imag)
        X_new = [rh + 1j * ih, rl + 1j * il]
    else:                                                  # double-double -> triple-double
        w_new = list(omega) + [corr]
        X_new = list(X) + [XE]
    del XE
    out = [np.empty_like(X_new[0]) for _ in X_new]
    for b in _blocks(N):
        Xb = _points([x[:, b] for x in X_new])
        n2 = _column_norms2(Xb)
        p = [q.real for q in _parts_of(n2)]
        t = (p[0] - 1.0) + sum(p[1:])                      # |x|^2 - 1, small
        f = _broadcast_points([1.0 + 0j, -0.5 * t + 0.375 * t * t + 0j] + ([0j] if cls is TD else []), _shape(Xb))
        Y = Xb.mul(f)                                      # 1/sqrt(1 + t) to about t^3
        for o, q in zip(out, _parts_of(Y)):
            o[:, b] = q
    if cls is TD:
        w_new = [q.real for q in _parts_of(_points([w + 0j for w in w_new]))]
    return w_new, out


@dataclass
class Verified:
    """What the verification proves (proofs/verified_eig.md): the eigenvalues of A = -iK
    are exactly one in each interval ``[omega_i - rho_i, omega_i + rho_i]`` (omega_i the
    sum of the parts ``omega``, disjoint, increasing), and the unit eigenvector w_i of the
    i-th, with its phase chosen so that ``w_i* x_i >= 0``, satisfies
    ``||w_i - x_i|| <= beta_i`` (x_i = column i of the sum of the parts ``X``).  ``zero``
    is the index of an eigenvalue proved to be exactly 0 (or None)."""

    omega: list[np.ndarray]
    rho: np.ndarray
    X: list[np.ndarray]
    beta: np.ndarray
    zero: int | None


def _lower(x: np.ndarray) -> np.ndarray:
    return np.nextafter(x, -np.inf)


def verify(op, omega: list[np.ndarray], X: list[np.ndarray]) -> Verified:
    """The a-posteriori enclosures of :class:`Verified` for candidate pairs given by their
    parts (two: double-double disks; three: triple-double), or VerificationFailed."""
    N = X[0].shape[0]
    r, e = np.empty(N), np.empty(N)
    for b in _blocks(N):
        Xb = _points([x[:, b] for x in X])
        a = _residual(op, Xb, [w[b] for w in omega]).abs_upper()
        r[b] = up(np.sqrt(sum_upper(np.sum(a * a, axis=0), N)))          # ||K x_i - i omega_i x_i|| <= r_i
        one = _points([np.ones(a.shape[1], complex)] + [np.zeros(a.shape[1], complex)] * (len(X) - 1))
        e[b] = _column_norms2(Xb).sub(one).abs_upper()                      # | ||x_i||^2 - 1 | <= e_i
    if not (np.all(np.isfinite(r)) and float(np.max(e)) <= 0.25):
        raise VerificationFailed("the residuals or the column norms are not small")
    n_low = _lower(1.0 - e)                                    # ||x_i|| >= sqrt(1 - e) >= 1 - e
    rho = up(r / n_low)
    w = _points([q + 0j for q in omega])
    if N == 1:
        delta = np.array([np.inf])
    else:
        g_low = _real_lower(_take(w, slice(1, N)).sub(_take(w, slice(0, N - 1))))
        if not np.all(g_low > up(rho[1:] + rho[:-1])):
            raise VerificationFailed("two eigenvalue enclosures are not certainly disjoint (a cluster)")
        left = np.concatenate([[np.inf], _lower(g_low - rho[:-1])])   # to the interval below
        right = np.concatenate([_lower(g_low - rho[1:]), [np.inf]])   # to the interval above
        delta = np.minimum(left, right)
    if not np.all(delta > 0):
        raise VerificationFailed("an eigenvalue enclosure is not separated from the others")
    s = up(rho / delta)
    if not np.all(s < 1.0):
        raise VerificationFailed("a sin-theta bound is not below 1 (the gap is too small)")
    beta = up(up(SQRT2_UP * s) + e)
    return Verified(list(omega), rho, list(X), beta, _exact_zero(w, rho))


def _exact_zero(w, rho) -> int | None:
    """The index i whose interval contains 0 and whose mirror image meets no other
    interval: the spectrum of a real skew K is symmetric, so that eigenvalue is 0."""
    lower = _lower(_real_lower(w) - rho)                          # <= omega_i - rho_i
    upper = np.nextafter(_real_upper(w) + rho, np.inf)             # >= omega_i + rho_i
    holds = np.nonzero((lower <= 0) & (upper >= 0))[0]
    if len(holds) != 1:
        return None
    i = int(holds[0])
    m_lo, m_hi = -upper[i], -lower[i]                 # the mirror image, widened outward
    others = np.arange(len(lower)) != i
    meets = (lower[others] <= m_hi) & (upper[others] >= m_lo)
    return None if np.any(meets) else i


def _norm_upper(v) -> float:
    a = v.abs_upper()
    return float(up(np.sqrt(sum_upper(float(np.sum(a * a)), a.size))))


def eigendecomposition(op) -> Verified:
    """eigh of A = -iK, two refinement steps (double-double, then triple-double residuals),
    the verification on triple-double disks (VerificationFailed when it does not hold;
    RangeError when the floating-point environment is not IEEE round to nearest)."""
    env = probe()
    if not env.ok:
        raise RangeError(f"the floating-point environment breaks the rounding bounds: {env.reason}")
    K = op.dense_float()
    if not np.all(np.isfinite(K)):
        raise VerificationFailed("the float64 matrix is not finite")
    omega, X = np.linalg.eigh(-1j * K)
    w, X = _newton(op, [omega], [X], DD)
    w, X = _newton(op, w, X, TD)
    order = np.argsort(w[0], kind="stable")
    return verify(op, [q[order] for q in w], [x[:, order] for x in X])


def _balls(x, extra: np.ndarray, prec: int) -> list[acb]:
    """Balls containing the disks of x widened by ``extra``."""
    parts = _parts_of(x)
    rad = up(x.rad + extra)
    out = []
    with ctx.workprec(2200):                          # the parts' sums exactly
        mids = [(sum((arb(float(p[j].real)) for p in parts), arb(0)),
                 sum((arb(float(p[j].imag)) for p in parts), arb(0))) for j in range(len(rad))]
    with ctx.workprec(prec):
        for (re, im), r in zip(mids, rad):
            e = arb(0, float(r))
            out.append(acb(+re + e, +im + e))
    return out


def products(v: Verified, vectors: list[list], prec: int) -> list[list[acb]]:
    """For each vector (acb balls, length N): balls containing ``w_i* v`` for i < N, where
    w_i are the unit eigenvectors of :class:`Verified`:
    ``w_i* v = x_i* v + (w_i - x_i)* v`` and ``|(w_i - x_i)* v| <= beta_i ||v||``."""
    N = v.X[0].shape[0]
    cls = TD if len(v.X) == 3 else DD
    disks = [_disks_of([acb(x) for x in vec], cls) for vec in vectors]
    sums = [[] for _ in vectors]
    for b in _blocks(N):
        Xc = _points([x[:, b] for x in v.X]).conj()
        for d, acc in zip(disks, sums):
            acc.append(column_sums(Xc.mul(_full(d.reshape(N, 1), _shape(Xc)))))
    return [_balls(_concat(acc), up(v.beta * _norm_upper(d)), prec) for d, acc in zip(disks, sums)]


def eigenvalue_balls(v: Verified, shift: Fraction, prec: int) -> list[acb]:
    """``lambda_i = c + i omega_i``: real part exactly c, the imaginary part in its interval
    (exactly 0 for the index proved zero)."""
    c = arb(fmpq(shift.numerator, shift.denominator))
    w = _points([q + 0j for q in v.omega])
    ims = _balls(w, v.rho, prec)
    return [acb(c) if i == v.zero else acb(c, ims[i].real) for i in range(len(ims))]
