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


def _zeros_dd(shape) -> DD:
    z = np.zeros(shape)
    return DD(z, z.copy(), z.copy(), z.copy(), z.copy())


def _points(hi: np.ndarray, lo: np.ndarray) -> DD:
    """Exact points hi + lo (complex parts) as radius-0 disks."""
    return DD(hi.real.copy(), lo.real.copy(), hi.imag.copy(), lo.imag.copy(), np.zeros(hi.shape))


def _row(x: DD, n: int) -> DD:
    return DD(x.rh[n], x.rl[n], x.ih[n], x.il[n], x.rad[n])


def _set_row(x: DD, n: int, v: DD) -> None:
    for f in ("rh", "rl", "ih", "il", "rad"):
        getattr(x, f)[n] = getattr(v, f)


def column_sums(x: DD) -> DD:
    """Disks containing the sums over axis 0 (pairwise: log2(N) vectorized additions)."""
    while x.rh.shape[0] > 1:
        n = x.rh.shape[0]
        half = n // 2
        top = DD(*(getattr(x, f)[:half] for f in ("rh", "rl", "ih", "il", "rad")))
        bot = DD(*(getattr(x, f)[half:2 * half] for f in ("rh", "rl", "ih", "il", "rad")))
        s = top.add(bot)
        if n % 2:
            s = DD(*(np.concatenate([getattr(s, f), getattr(x, f)[n - 1:]]) for f in ("rh", "rl", "ih", "il", "rad")))
        x = s
    return DD(x.rh[0], x.rl[0], x.ih[0], x.il[0], x.rad[0])


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
        """Disks containing K X for every point of X (N x m), by exclusive prefix and
        suffix sums of ``Y = D X`` over the rows of M's class."""
        N = self.N
        Y = X.mul(self.d.reshape(N, 1))
        shape = X.rh.shape
        before, after = _zeros_dd(shape), _zeros_dd(shape)
        classes = 2 if self.parity else 1
        acc = [_zeros_dd(shape[1:]) for _ in range(classes)]
        for n in range(N):                               # sum_{k < n, class(k) = want(n)} Y_k
            _set_row(before, n, acc[1 - n % 2] if self.parity else acc[0])
            c = n % 2 if self.parity else 0
            acc[c] = acc[c].add(_row(Y, n))
        acc = [_zeros_dd(shape[1:]) for _ in range(classes)]
        for n in range(N - 1, -1, -1):                   # sum_{k > n, class(k) = want(n)} Y_k
            _set_row(after, n, acc[1 - n % 2] if self.parity else acc[0])
            c = n % 2 if self.parity else 0
            acc[c] = acc[c].add(_row(Y, n))
        T = after.sub(before)
        return T.mul(self.d.reshape(N, 1)).mul(self.kappa.reshape(1, 1))


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

def _residual(op, X: DD, omega_hi: np.ndarray, omega_lo: np.ndarray) -> DD:
    """Disks containing ``K X - X diag(i omega)`` (the residual of A = -iK, times i)."""
    N = X.rh.shape[0]
    z = np.zeros((1, N))
    i_omega = DD(z, z.copy(), omega_hi.reshape(1, N).copy(), omega_lo.reshape(1, N).copy(), z.copy())
    return op.apply(X).sub(X.mul(i_omega))


def _refine(op, omega: np.ndarray, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One Newton step on float64 eigenpairs of A = -iK (not relied on for rigour: the
    verification bounds whatever it returns): the double-double residual F of A, rounded,
    C = X* F, omega' = omega + Re C_ii, X' = X + X E with E_ji = -C_ji / (omega_j - omega_i),
    then each column scaled to unit norm in double-double.  Returns (omega' hi, lo, X' hi, lo)."""
    N = X.shape[0]
    R = _residual(op, _points(X, np.zeros_like(X)), omega, np.zeros(N))
    F = -1j * ((R.rh + R.rl) + 1j * (R.ih + R.il))      # A X - X Omega, rounded to float64
    C = X.conj().T @ F
    diff = omega[:, None] - omega[None, :]               # omega_j - omega_i at [j, i]
    scale = max(1.0, float(np.max(np.abs(omega))))
    safe = np.abs(diff) > 2.0 ** -40 * scale
    E = np.where(safe, -C / np.where(safe, diff, 1.0), 0.0)
    om_hi, om_lo = two_sum(omega, np.real(np.diag(C)).copy())
    XE = X @ E
    rh, rl = two_sum(X.real, XE.real)
    ih, il = two_sum(X.imag, XE.imag)
    Xd = DD(rh, rl, ih, il, np.zeros(X.shape))
    n2 = column_sums(Xd.mul(Xd.conj()))
    t = (n2.rh - 1.0) + n2.rl                            # |x|^2 - 1, about u
    f_hi, f_lo = two_sum(np.ones(N), -0.5 * t + 0.375 * t * t)   # 1/sqrt(1 + t) to about t^3
    f = DD(f_hi.reshape(1, N), f_lo.reshape(1, N), np.zeros((1, N)), np.zeros((1, N)), np.zeros((1, N)))
    Y = Xd.mul(f)
    return om_hi, om_lo, Y.rh + 1j * Y.ih, Y.rl + 1j * Y.il


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
    X: DD
    beta: np.ndarray
    zero: int | None


def verify(op, om_hi: np.ndarray, om_lo: np.ndarray, X_hi: np.ndarray, X_lo: np.ndarray) -> Verified:
    """The a-posteriori enclosures of :class:`Verified` for the candidate pairs, or
    VerificationFailed."""
    N = X_hi.shape[0]
    X = _points(X_hi, X_lo)
    R = _residual(op, X, om_hi, om_lo)
    a = R.abs_upper()
    r = up(np.sqrt(sum_upper(np.sum(a * a, axis=0), N)))      # ||K x_i - i omega_i x_i|| <= r_i
    n2 = column_sums(X.mul(X.conj()))
    e = n2.sub(DD.exact(np.ones(N))).abs_upper()               # | ||x_i||^2 - 1 | <= e_i
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
    return Verified(om_hi, om_lo, rho, X, beta, _exact_zero(om_hi, om_lo, rho))


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
    N = v.X.rh.shape[0]
    out = []
    Xc = v.X.conj()
    for vec in vectors:
        d = dd_of_balls([acb(x) for x in vec], max(prec, 128))
        s = column_sums(Xc.mul(d.reshape(N, 1)))
        rad = up(s.rad + up(v.beta * _norm_upper(d)))
        out.append(balls_of_disks(dd_midpoints(DD(s.rh, s.rl, s.ih, s.il, s.rad), max(prec, 128)), rad,
                                  max(prec, 128)))
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
