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
by prefix sums (``hippo_skew.StructuredSkew``); any other K densely (``hippo_skew.DenseSkew``).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from flint import acb, arb, ctx, fmpq

from ...arith.double_double import DD
from ...arith.dd_eft import two_sum
from ...arith.triple_double import TD
from ...arith.fpenv import probe
from ...arith.midrad import RangeError, sum_upper, up

from .hippo_skew import (_points, _parts_of, _take, _full, _concat, _real_lower, _real_upper, column_sums, _disks_of, _shape)

#: sqrt(2) < SQRT2_UP (a float above it)
SQRT2_UP = 1.4142135623730952


class VerificationFailed(ArithmeticError):
    """The a-posteriori checks did not hold (a cluster, or an input the route cannot bound)."""


#: columns processed at a time (bounds the memory to O(N BLOCK) disks)
BLOCK = 128
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
