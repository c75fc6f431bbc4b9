"""``C~ = (I - Abar^M)* C`` for a dissipative DPLR model by float64 squarings with a certified
2-norm error bound (proofs/c_tilde_contractive.md).

When every ``A = Lambda - P Q*`` the model's balls hold has ``A + A* <= 0`` (checked: the
upper bound of ``max Re(lambda) + ||P - Q||_F^2 / 4`` is <= 0), the bilinear ``Abar`` is a
contraction in the 2-norm, ``||(I - (step/2) A)^-1|| <= 1``, and so is every power of it.
Then:

1. ``Abar`` is solved for in float64 (``numpy.linalg.solve``) and its error bounded by the
   residual, ``||Abar - X|| <= ||(I + T) - (I - T) X||`` with ``T = (step/2) A``;
2. ``log2 M`` squarings run on BLAS (``numpy.matmul``, complex128), the error bound carried
   along: ``e' <= (min(1, |X| + e) + |X|) e + c_N |X|_F^2``, so that the error of the early
   squarings is damped by the later ones wherever the powers decay;
3. ``C~ = C - X_M* C`` is enclosed in balls, every entry widened by the bound on the 2-norm of
   the error (a power whose norm bound underflows ends the squarings: ``Abar^M`` is then
   enclosed as 0 with that bound, ``||Abar^M|| <= ||Abar^(2^j)||``).

The result is offered only when its added radius is at most ``max_radius``; otherwise (and when
an assumption fails) ``contractive_c_tilde`` returns None and the caller forms C~ another way.
Every float bound is rounded so that it is an upper bound (the constants are explained in the
proof).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from flint import acb, arb, ctx

from ...arith import BallField, fpenv
from ...arith.ball import float_upper
from .bilinear_map import half_step
from .dplr import DPLR

#: the unit roundoff of float64
U = 2.0 ** -53
#: below this norm bound a power is taken as 0 (its square would meet the subnormals)
TINY = 2.0 ** -480


def _up(x: float, k: float = 8.0) -> float:
    """x (a float computed from nonnegative upper bounds by at most six roundings to
    nearest, or by one rounding of a signed value) raised past the roundings:
    x + |x| k u + the least normal float (proofs/c_tilde_contractive.md §1)."""
    return x + abs(x) * (k * U) + 2.0 ** -1022


def gamma(n: int) -> float:
    """An upper bound on gamma_n = n u / (1 - n u) (requires n u < 1/2)."""
    nu = n * U
    if nu >= 0.5:
        raise ValueError("gamma: n u must be < 1/2")
    return _up(nu / (1.0 - nu), 8.0)


def fro_upper(X: np.ndarray) -> float:
    """An upper bound on the Frobenius norm of the float array X: the sum of n squares is
    computed with relative error at most gamma_(n+1) (squares and any summation order), the
    square root adds one rounding; each underflowing square loses at most 2^-1074."""
    a = np.abs(X.real).ravel(), np.abs(X.imag).ravel()
    s = float(np.dot(a[0], a[0]) + np.dot(a[1], a[1]))
    if not math.isfinite(s):
        return math.inf
    n = 2 * X.size
    s = s * (1.0 + gamma(n + 2)) + n * 2.0 ** -1074
    return _up(math.sqrt(s))


def matmul_error(A: np.ndarray, B: np.ndarray, fa: float | None = None, fb: float | None = None) -> float:
    """An upper bound on ||fl(A B) - A B||_F for complex128 products by the classical formula
    (any order, with or without FMA): each entry's real and imaginary parts are real inner
    products of length 2n, so |error| <= sqrt(2) gamma_2n (|A| |B|)_ij, plus the underflow
    of its 4n products; and || |A| |B| ||_F <= ||A||_F ||B||_F."""
    n = A.shape[1]
    fa = fro_upper(A) if fa is None else fa
    fb = fro_upper(B) if fb is None else fb
    under = math.sqrt(A.shape[0] * B.shape[1]) * 8 * n * 2.0 ** -1074
    return _up(1.4143 * gamma(2 * n) * _up(fa * fb) + under)


@dataclass(frozen=True)
class FloatModel:
    """The model's entries as float64 midpoints and upper bounds of the distances to them."""

    lam: np.ndarray
    lam_rad: np.ndarray
    P: np.ndarray
    P_rad: np.ndarray
    Q: np.ndarray
    Q_rad: np.ndarray
    C: np.ndarray
    C_rad: np.ndarray
    C_balls: list


def _floats(balls: list) -> tuple[np.ndarray, np.ndarray]:
    mid = np.array([complex(b.mid()) for b in balls], dtype=complex)
    with ctx.workprec(64):
        rad = np.array([float_upper(abs(b - acb(m))) for b, m in zip(balls, mid.tolist())])
    return mid, rad


def float_model(F: BallField, model: DPLR) -> FloatModel:
    fm = F.from_number
    N, r = model.N, model.r
    lam, lr = _floats([fm(x) for x in model.Lambda])
    P, Pr = _floats([fm(x) for row in model.P for x in row])
    Q, Qr = _floats([fm(x) for row in model.Q for x in row])
    Cb = [fm(x) for x in model.C]
    C, Cr = _floats(Cb)
    return FloatModel(lam, lr, P.reshape(N, r), Pr.reshape(N, r), Q.reshape(N, r), Qr.reshape(N, r), C, Cr, Cb)


def dissipative(fm: FloatModel) -> bool:
    """Whether every model in the balls has A + A* <= 0: 2 Re Lambda - P Q* - Q P*
    = 2 Re Lambda - (P+Q)(P+Q)*/2 + (P-Q)(P-Q)*/2 <= (2 max Re lambda + ||P - Q||_F^2 / 2) I."""
    re_max = _up(float(np.max(fm.lam.real + fm.lam_rad)))
    d = np.abs(fm.P - fm.Q)                                # each entry within 4u of |P - Q|
    dpq = _up(_up(fro_upper(d), 8.0) + fro_upper(fm.P_rad) + fro_upper(fm.Q_rad))
    bound = _up(re_max + _up(dpq * dpq) / 4)
    return math.isfinite(bound) and bound <= 0


def _step_bounds(F: BallField, step: Any) -> tuple[float, float] | None:
    """(h, an upper bound of |step/2 - h|) for a real positive step, else None."""
    s = F.from_number(step)
    if not (s.imag == 0) or not (s.real > 0):
        return None
    half = half_step(F, s)
    h = float(half.real.mid())
    with ctx.workprec(64):
        return h, float_upper(abs(half - acb(h)))


def _scaled_matrix(fm: FloatModel, h: float, dh: float) -> tuple[np.ndarray, float]:
    """T^ = fl(h (diag(lam) - P Q*)) and an upper bound on ||(step/2) A - T^||_2 over every
    model in the balls."""
    PQ = fm.P @ fm.Q.conj().T
    A = -PQ
    A[np.diag_indices_from(A)] += fm.lam
    T = h * A
    fp, fq = fro_upper(fm.P), fro_upper(fm.Q)
    dp, dq = fro_upper(fm.P_rad), fro_upper(fm.Q_rad)
    # A's rounding: the product (matmul_error), the diagonal subtraction, the scaling by h
    round_A = _up(matmul_error(fm.P, fm.Q.conj().T, fp, fq) + U * _up(fro_upper(PQ) + fro_upper(fm.lam)))
    round_T = _up(h * round_A + U * fro_upper(T))
    dA = _up(fro_upper(fm.lam_rad) + dp * _up(fq + dq) + fp * dq)          # ||A_true - A_mid||
    norm_A = _up(fro_upper(fm.lam) + fro_upper(fm.lam_rad) + _up(fp + dp) * _up(fq + dq))
    return T, _up(round_T + h * dA + dh * norm_A)


def _abar(T: np.ndarray, dT: float) -> tuple[np.ndarray, float] | None:
    """X ~ Abar in float64 and an upper bound on ||Abar - X||_2 (the residual's norm:
    ||(I - T)^-1|| <= 1 for dissipative A)."""
    N = T.shape[0]
    eye = np.eye(N)
    G, Gp = eye - T, eye + T
    try:
        X = np.linalg.solve(G, Gp)
    except np.linalg.LinAlgError:
        return None
    GX = G @ X
    R = Gp - GX
    fx, fg = fro_upper(X), fro_upper(G)
    # G and Gp are rounded once from T (relative u on each entry)
    round_G = _up(U * (fg + fro_upper(Gp)) * (1 + fx))
    err = _up(fro_upper(R) + matmul_error(G, X, fg, fx) + U * _up(fro_upper(Gp) + fro_upper(GX)) + round_G
              + dT * _up(1 + fx))
    return (X, err) if math.isfinite(err) else None


def power_bound(X: np.ndarray, e: float, M: int) -> tuple[np.ndarray | None, float]:
    """(X_M, e_M): X_M ~ Abar^M (None: Abar^M is enclosed as 0) with ||Abar^M - X_M|| <= e_M,
    from X with ||Abar - X|| <= e, Abar a contraction, M a power of two."""
    for _ in range(M.bit_length() - 1):
        fx = fro_upper(X)
        if _up(fx + e) <= TINY:
            return None, _up(fx + e)
        Y = X @ X
        p = min(1.0, _up(fx + e))                 # ||Abar^(2^j)|| <= p, ||X|| <= min(|X|_F, p + e)
        e = _up(_up(p + min(fx, _up(p + e))) * e + matmul_error(X, X, fx, fx))
        X = Y
        if not math.isfinite(e):
            return X, math.inf
    return X, e


def contractive_c_tilde(F: BallField, model: DPLR, step: Any, M: int, max_radius: float) -> list | None:
    """C~ as N balls of F, or None when an assumption fails (not dissipative, step not real and
    positive, a non-finite value) or the added radius exceeds ``max_radius``."""
    if M < 1 or M & (M - 1):
        raise ValueError(f"M must be a power of two, got {M!r}")
    if not fpenv.probe().ok:           # every bound here assumes round-to-nearest, gradual underflow
        return None
    sb = _step_bounds(F, step)
    if sb is None:
        return None
    fm = float_model(F, model)
    finite = [np.all(np.isfinite(v)) for v in (fm.lam, fm.lam_rad, fm.P, fm.P_rad, fm.Q, fm.Q_rad, fm.C, fm.C_rad)]
    if not all(finite) or not dissipative(fm):
        return None
    T, dT = _scaled_matrix(fm, *sb)
    ab = _abar(T, dT)
    if ab is None:
        return None
    XM, eM = power_bound(*ab, M)
    c_norm = _up(fro_upper(fm.C) + fro_upper(fm.C_rad))
    if XM is None:                       # ||Abar^M|| <= eM: (Abar^M)* C_true within eM ||C||
        w, rho = np.zeros(model.N, dtype=complex), _up(eM * c_norm)
    else:
        XH = XM.conj().T
        w = XH @ fm.C
        fx = fro_upper(XM)
        rho = _up(matmul_error(XH, fm.C[:, None], fx, fro_upper(fm.C)) + fx * fro_upper(fm.C_rad) + eM * c_norm)
    if not (math.isfinite(rho) and rho <= max_radius):
        return None
    widen = acb(arb(0, rho), arb(0, rho))
    return [F.add(F.sub(c, acb(x)), widen) for c, x in zip(fm.C_balls, w.tolist())]


def kernel_radius_budget(model: DPLR, step: Any, eps: Any, prec: int, share: int = 16) -> float:
    """The radius C~ may take when the kernel is certified to ``eps``: ``eps / (share sqrt(2N)
    step ||B||)``, at least 2^-prec.  A change of C~ of 2-norm d changes the kernel's entries by
    about d step ||B|| (contractive Abar, ``||(I - (step/2) A)^-1|| <= 1``), and entry radii r
    give d <= sqrt(2N) r, so C~ then takes about 1/share of the kernel's radius budget.  A
    choice of speed only: the filter carries C~'s radii into the kernel's rigorously."""
    floor = 2.0 ** -prec
    try:
        s = abs(float(BallField(64).from_number(step).real.mid()))
        b = math.sqrt(sum(abs(complex(BallField(64).from_number(x).mid())) ** 2 for x in model.B))
        budget = float(eps) / (share * math.sqrt(2 * model.N) * max(s, 1e-300) * max(b, 1e-300))
    except (TypeError, ValueError, OverflowError, ZeroDivisionError):
        return floor
    return max(floor, budget) if math.isfinite(budget) else floor
