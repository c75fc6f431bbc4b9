"""A verified fast unitary diagonalization of ``H = c I + K``, K real skew-symmetric
(proofs/verified_eig.md).

``numpy.linalg.eigh`` of the Hermitian ``A = -i K`` gives float64 eigenpairs; one Newton
step (float64 BLAS on a double-double residual) refines the eigenvectors to about
double-double accuracy; then an a-posteriori verification on double-double disks
(``arith.double_double.DD``, rigorous under round to nearest) encloses every eigenvalue
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
from flint import acb, arb, fmpq

from ...arith.disk_convert import balls_of_disks, dd_midpoints, dd_of_balls
from ...arith.double_double import DD
from ...arith.dd_kernels import two_sum
from ...arith.fpenv import probe
from ...arith.midrad import RangeError, sum_upper, up

#: sqrt(2) < SQRT2_UP (a float above it)
SQRT2_UP = 1.4142135623730952


class VerificationFailed(ArithmeticError):
    """The a-posteriori checks did not hold (a cluster, or an input the route cannot bound)."""


#: columns processed at a time (bounds the memory to O(N BLOCK) double-double disks)
BLOCK = 128
_FIELDS = ("rh", "rl", "ih", "il", "rad")


def _zeros_dd(shape) -> DD:
    return DD(*(np.zeros(shape) for _ in _FIELDS))


def _points(hi: np.ndarray, lo: np.ndarray) -> DD:
    """Exact points hi + lo (complex parts) as radius-0 disks."""
    return DD(hi.real.copy(), lo.real.copy(), hi.imag.copy(), lo.imag.copy(), np.zeros(hi.shape))


def _take(x: DD, idx) -> DD:
    return DD(*(getattr(x, f)[idx] for f in _FIELDS))


def _full(x: DD, shape) -> DD:
    """The disks broadcast to ``shape`` (as arrays of their own)."""
    return DD(*(np.broadcast_to(getattr(x, f), shape).copy() for f in _FIELDS))


def _concat(parts: list[DD], axis: int = 0) -> DD:
    return DD(*(np.concatenate([getattr(p, f) for p in parts], axis=axis) for f in _FIELDS))


def column_sums(x: DD) -> DD:
    """Disks containing the sums over axis 0 (pairwise: log2(N) vectorized additions)."""
    while x.rh.shape[0] > 1:
        n = x.rh.shape[0]
        half = n // 2
        s = _take(x, slice(0, half)).add(_take(x, slice(half, 2 * half)))
        x = _concat([s, _take(x, slice(n - 1, n))]) if n % 2 else s
    return _take(x, 0)


def exclusive_prefix(Z: DD) -> DD:
    """Disks containing ``E_j = sum_{j' < j} Z_j'`` for j = 0..n (n + 1 rows; E_n the total):
    in groups of about sqrt(n) rows, the running sums inside the groups (all groups at
    once), the running sums of the group totals, then each group's offset added."""
    n, rest = Z.rh.shape[0], Z.rh.shape[1:]
    b = max(1, int(np.ceil(np.sqrt(n))))
    g = -(-n // b)
    pad = _concat([Z, _zeros_dd((g * b - n,) + rest)]) if g * b > n else Z
    Zg = DD(*(getattr(pad, f).reshape((g, b) + rest) for f in _FIELDS))
    inner = _zeros_dd((g, b) + rest)
    acc = _zeros_dd((g,) + rest)
    for j in range(b):
        for f in _FIELDS:
            getattr(inner, f)[:, j] = getattr(acc, f)
        acc = acc.add(_take(Zg, (slice(None), j)))
    offsets = _zeros_dd((g,) + rest)
    run = _zeros_dd(rest)
    for i in range(g):
        for f in _FIELDS:
            getattr(offsets, f)[i] = getattr(run, f)
        run = run.add(_take(acc, i))
    E = inner.add(_full(DD(*(getattr(offsets, f)[:, None] for f in _FIELDS)), (g, b) + rest))
    E = DD(*(getattr(E, f).reshape((g * b,) + rest)[:n] for f in _FIELDS))
    return _concat([E, DD(*(getattr(run, f)[None] for f in _FIELDS))])


@dataclass
class StructuredSkew:
    """``K = kappa D (T o M) D``: ``(K X)_n = kappa d_n sum_{k != n, M_nk = 1} sign(k - n) d_k X_k``.

    ``d`` and ``kappa`` are disks containing the exact values (``d`` per row, ``kappa`` one
    entry); ``parity`` selects ``M_nk = [n + k odd]`` (LegT), else M is all ones.
    ``d_float``, ``kappa_float`` are their float approximations (for the float64 matrix)."""

    d: DD
    kappa: DD
    parity: bool
    d_float: np.ndarray
    kappa_float: float

    @property
    def N(self) -> int:
        return self.d.rh.shape[0]

    def dense_float(self) -> np.ndarray:
        """K in float64 (approximate: only the eigen-solver's input)."""
        n = np.arange(self.N)
        sign = np.sign(n[None, :] - n[:, None]).astype(np.float64)
        if self.parity:
            sign *= (n[:, None] + n[None, :]) % 2
        return self.kappa_float * sign * np.outer(self.d_float, self.d_float)

    def apply(self, X: DD) -> DD:
        """Disks containing K X for every point of X (N x m).  With ``Y = D X`` and E the
        exclusive prefix sums of Y over the rows of the class that row n meets,
        ``sum_{k > n} - sum_{k < n} = E_total - 2 E_n - [Y_n if n is in that class]``."""
        N = self.N
        Y = X.mul(_full(self.d.reshape(N, 1), X.rh.shape))
        if not self.parity:
            E = exclusive_prefix(Y)
            total = _full(_take(E, slice(N, N + 1)), Y.rh.shape)
            head = _take(E, slice(0, N))
            T = total.sub(head.add(head)).sub(Y)
        else:
            Ee, Eo = exclusive_prefix(_take(Y, slice(0, N, 2))), exclusive_prefix(_take(Y, slice(1, N, 2)))
            n = np.arange(N)
            even, odd = n[0::2], n[1::2]
            parts = _zeros_dd(Y.rh.shape)
            # n = 2a meets the odd rows k = 2j + 1 < n: j < a; n = 2a + 1 meets the even rows k = 2j <= 2a
            for rows, E, idx in ((even, Eo, even // 2), (odd, Ee, odd // 2 + 1)):
                if len(rows) == 0:
                    continue
                m = E.rh.shape[0] - 1
                head = _take(E, idx)
                total = _full(_take(E, slice(m, m + 1)), head.rh.shape)
                block = total.sub(head.add(head))
                for f in _FIELDS:
                    getattr(parts, f)[rows] = getattr(block, f)
            T = parts
        return T.mul(_full(self.d.reshape(N, 1), T.rh.shape)).mul(_full(self.kappa.reshape(1, 1), T.rh.shape))


@dataclass
class DenseSkew:
    """A dense K given as disks (N x N) containing the exact entries; ``K`` must be real
    skew-symmetric (the caller's statement)."""

    K: DD

    @property
    def N(self) -> int:
        return self.K.rh.shape[0]

    def dense_float(self) -> np.ndarray:
        return self.K.rh + self.K.rl

    def apply(self, X: DD) -> DD:
        out = _zeros_dd(X.rh.shape)
        for k in range(self.N):
            shape = X.rh.shape
            col = DD(*(np.broadcast_to(getattr(self.K, f)[:, k:k + 1], shape).copy()
                       for f in ("rh", "rl", "ih", "il", "rad")))
            row = DD(*(getattr(X, f)[k:k + 1, :] for f in ("rh", "rl", "ih", "il", "rad")))
            out = out.add(col.mul(row))
        return out


def dense_skew_of_balls(K: list[list], prec: int) -> DenseSkew:
    """A :class:`DenseSkew` from acb balls (or numbers read by acb)."""
    N = len(K)
    flat = dd_of_balls([acb(x) for row in K for x in row], prec)
    return DenseSkew(flat.reshape(N, N))


# -- the route -------------------------------------------------------------------------

def _blocks(N: int):
    return [slice(j, min(j + BLOCK, N)) for j in range(0, N, BLOCK)]


def _residual(op, X: DD, omega_hi: np.ndarray, omega_lo: np.ndarray) -> DD:
    """Disks containing ``K X - X diag(i omega)`` (the residual of A = -iK, times i)."""
    shape = X.rh.shape
    z = np.zeros(shape)
    i_omega = DD(z, z.copy(), np.broadcast_to(omega_hi, shape).copy(), np.broadcast_to(omega_lo, shape).copy(),
                 z.copy())
    return op.apply(X).sub(X.mul(i_omega))


def _column_norms2(X: DD) -> DD:
    """Disks containing ||x_i||^2 for the columns of X."""
    return column_sums(X.mul(X.conj()))


def _refine(op, omega: np.ndarray, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One Newton step on float64 eigenpairs of A = -iK (not relied on for rigour: the
    verification bounds whatever it returns): the double-double residual F of A, rounded,
    C = X* F, omega' = omega + Re C_ii, X' = X + X E with E_ji = -C_ji / (omega_j - omega_i),
    then each column scaled to unit norm in double-double.  Returns (omega' hi, lo, X' hi, lo)."""
    N = X.shape[0]
    F = np.empty_like(X)
    for b in _blocks(N):
        R = _residual(op, _points(X[:, b], np.zeros_like(X[:, b])), omega[b], np.zeros(len(omega[b])))
        F[:, b] = -1j * ((R.rh + R.rl) + 1j * (R.ih + R.il))      # A X - X Omega, rounded to float64
    C = X.conj().T @ F
    diff = omega[:, None] - omega[None, :]               # omega_j - omega_i at [j, i]
    scale = max(1.0, float(np.max(np.abs(omega))))
    safe = np.abs(diff) > 2.0 ** -40 * scale
    E = np.where(safe, -C / np.where(safe, diff, 1.0), 0.0)
    om_hi, om_lo = two_sum(omega, np.real(np.diag(C)).copy())
    del F, C, diff, safe
    XE = X @ E
    rh, rl = two_sum(X.real, XE.real)
    ih, il = two_sum(X.imag, XE.imag)
    del XE
    X_hi, X_lo = rh + 1j * ih, rl + 1j * il
    for b in _blocks(N):
        Xd = _points(X_hi[:, b], X_lo[:, b])
        n2 = _column_norms2(Xd)
        t = (n2.rh - 1.0) + n2.rl                        # |x|^2 - 1, about u
        f_hi, f_lo = two_sum(np.ones(len(t)), -0.5 * t + 0.375 * t * t)   # 1/sqrt(1 + t) to about t^3
        shape = Xd.rh.shape
        z = np.zeros(shape)
        f = DD(np.broadcast_to(f_hi, shape).copy(), np.broadcast_to(f_lo, shape).copy(), z, z.copy(), z.copy())
        Y = Xd.mul(f)
        X_hi[:, b], X_lo[:, b] = Y.rh + 1j * Y.ih, Y.rl + 1j * Y.il
    return om_hi, om_lo, X_hi, X_lo


def _lower(x: np.ndarray) -> np.ndarray:
    return np.nextafter(x, -np.inf)


@dataclass
class Verified:
    """What the verification proves (proofs/verified_eig.md): the eigenvalues of A = -iK
    are exactly one in each interval ``[omega_i - rho_i, omega_i + rho_i]`` (omega_i =
    ``omega_hi + omega_lo``, disjoint, increasing), and the unit eigenvector w_i of the
    i-th, with its phase chosen so that ``w_i* x_i >= 0``, satisfies
    ``||w_i - x_i|| <= beta_i`` (x_i = column i of ``X_hi + X_lo``).  ``zero`` is the index
    of an eigenvalue proved to be exactly 0 (or None)."""

    omega_hi: np.ndarray
    omega_lo: np.ndarray
    rho: np.ndarray
    X_hi: np.ndarray
    X_lo: np.ndarray
    beta: np.ndarray
    zero: int | None


def verify(op, om_hi: np.ndarray, om_lo: np.ndarray, X_hi: np.ndarray, X_lo: np.ndarray) -> Verified:
    """The a-posteriori enclosures of :class:`Verified` for the candidate pairs, or
    VerificationFailed."""
    N = X_hi.shape[0]
    r, e = np.empty(N), np.empty(N)
    for b in _blocks(N):
        X = _points(X_hi[:, b], X_lo[:, b])
        a = _residual(op, X, om_hi[b], om_lo[b]).abs_upper()
        r[b] = up(np.sqrt(sum_upper(np.sum(a * a, axis=0), N)))          # ||K x_i - i omega_i x_i|| <= r_i
        e[b] = _column_norms2(X).sub(DD.exact(np.ones(a.shape[1]))).abs_upper()   # | ||x_i||^2 - 1 | <= e_i
    if not (np.all(np.isfinite(r)) and float(np.max(e)) <= 0.25):
        raise VerificationFailed("the residuals or the column norms are not small")
    n_low = _lower(1.0 - e)                                    # ||x_i|| >= sqrt(1 - e) >= 1 - e
    rho = up(r / n_low)
    if N == 1:
        delta = np.array([np.inf])
    else:
        gaps = DD.from_parts(om_hi[1:], om_lo[1:], 0.0).sub(DD.from_parts(om_hi[:-1], om_lo[:-1], 0.0))
        g_low = _lower(_lower(gaps.rh - np.abs(gaps.rl)) - gaps.rad)
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
    return Verified(om_hi, om_lo, rho, X_hi, X_lo, beta, _exact_zero(om_hi, om_lo, rho))


def _exact_zero(om_hi, om_lo, rho) -> int | None:
    """The index i whose interval contains 0 and whose mirror image meets no other
    interval: the spectrum of a real skew K is symmetric, so that eigenvalue is 0."""
    lower = _lower(_lower(om_hi - np.abs(om_lo)) - rho)           # <= omega_i - rho_i
    upper = np.nextafter(np.nextafter(om_hi + np.abs(om_lo), np.inf) + rho, np.inf)   # >= omega_i + rho_i
    holds = np.nonzero((lower <= 0) & (upper >= 0))[0]
    if len(holds) != 1:
        return None
    i = int(holds[0])
    m_lo, m_hi = -upper[i], -lower[i]                 # the mirror image, widened outward
    others = np.arange(len(om_hi)) != i
    meets = (lower[others] <= m_hi) & (upper[others] >= m_lo)
    return None if np.any(meets) else i


def _norm_upper(v: DD) -> float:
    a = v.abs_upper()
    return float(up(np.sqrt(sum_upper(float(np.sum(a * a)), a.size))))


def eigendecomposition(op) -> Verified:
    """eigh of A = -iK, one refinement step, the verification (VerificationFailed when it
    does not hold; RangeError when the floating-point environment is not IEEE round to
    nearest)."""
    env = probe()
    if not env.ok:
        raise RangeError(f"the floating-point environment breaks the rounding bounds: {env.reason}")
    K = op.dense_float()
    if not np.all(np.isfinite(K)):
        raise VerificationFailed("the float64 matrix is not finite")
    omega, X = np.linalg.eigh(-1j * K)
    om_hi, om_lo, X_hi, X_lo = _refine(op, omega, X)
    order = np.argsort(om_hi, kind="stable")
    return verify(op, om_hi[order], om_lo[order], X_hi[:, order], X_lo[:, order])


def products(v: Verified, vectors: list[list], prec: int) -> list[list[acb]]:
    """For each vector (acb balls, length N): balls containing ``w_i* v`` for i < N, where
    w_i are the unit eigenvectors of :class:`Verified`:
    ``w_i* v = x_i* v + (w_i - x_i)* v`` and ``|(w_i - x_i)* v| <= beta_i ||v||``."""
    N = v.X_hi.shape[0]
    work = max(prec, 128)
    disks = [dd_of_balls([acb(x) for x in vec], work) for vec in vectors]
    sums = [[] for _ in vectors]
    for b in _blocks(N):
        Xc = _points(v.X_hi[:, b], v.X_lo[:, b]).conj()
        for d, acc in zip(disks, sums):
            acc.append(column_sums(Xc.mul(_full(d.reshape(N, 1), Xc.rh.shape))))
    out = []
    for d, acc in zip(disks, sums):
        s = _concat(acc)
        rad = up(s.rad + up(v.beta * _norm_upper(d)))
        out.append(balls_of_disks(dd_midpoints(s, work), rad, work))
    return out


def eigenvalue_balls(v: Verified, shift: Fraction, prec: int) -> list[acb]:
    """``lambda_i = c + i omega_i``: real part exactly c, the imaginary part in its interval
    (exactly 0 for the index proved zero)."""
    c = arb(fmpq(shift.numerator, shift.denominator))
    N = len(v.rho)
    mids = dd_midpoints(DD.from_parts(v.omega_hi, v.omega_lo, 0.0), max(prec, 128))
    out = []
    for i in range(N):
        if i == v.zero:
            out.append(acb(c))
            continue
        im = balls_of_disks([mids[i]], np.array([v.rho[i]]), max(prec, 128))[0].real
        out.append(acb(c, im))
    return out
