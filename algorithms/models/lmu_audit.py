"""Certified impulse responses of the LMU memory and the audit of float ones
(proofs/lmu_port.md).

:func:`certified_impulse_response` encloses ``H[:, t] = Abar^t Bbar`` with balls whose
radii do not grow with the wrapping effect: it uses that ``e^{A t}`` does not increase
the norm ``||v||_S^2 = sum_i v_i^2 / (2i+1)``.  :func:`lmu_audit` measures, with
certified lower and upper bounds, how far the float32/float64 impulse responses built
the reference's way (matrix powers) and ours (matrix-vector steps) are from it.

These are ball-only certified procedures, not generic ones: they start from the
``arb_mat`` enclosures of the matrix exponential and bound norms of ball matrices, so
they work on FLINT matrices directly.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from flint import acb, arb, arb_mat, ctx

from ...arith.ball import float_lower, float_upper
from .hippo import check_size, read_theta
from .lmu_memory import check_ab, impulse_response, impulse_response_powers, mid_array, zoh_certified

_U64 = Fraction(1, 2 ** 53)  # unit roundoff of IEEE binary64


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
        return mid_array(self.mid)

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
    N = check_size(memory_size, "memory_size")
    L = check_size(length, "length")
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
        bounds = {"lower": float_lower(lower), "upper": float_upper(upper)}
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
    A, b = check_ab(A, B)
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

    Returns a dict with keys ``memory_size``, ``theta`` (a float), ``theta_exact`` (the
    exact rational as a string), ``length``, ``precision`` (bits), ``certified_max_radius``
    (an upper bound on every ball's radius), ``max_abs_H`` (the largest midpoint
    magnitude, to read the errors relatively) and ``errors`` (construction name -> the
    bounds above).

    >>> r = lmu_audit(4, 4, 16)
    >>> e = r["errors"]["ours_float64"]
    >>> 0 <= e["lower"] <= e["upper"] <= e["running_bound"]
    True
    """
    enc = certified_impulse_response(memory_size, theta, length, prec)
    N, L = enc.shape
    A64, B64 = mid_array(enc.Ad), mid_array(enc.Bd)
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
    th = read_theta(theta)
    return {
        "memory_size": N, "theta": float(th), "theta_exact": str(th), "length": L,
        "precision": prec, "certified_max_radius": enc.max_radius(),
        "max_abs_H": float(np.abs(enc.midpoint()).max()), "errors": errors,
    }


# -- stored arrays against the exact mathematics (the checkpoint audit) ---------------------

@dataclass
class StoredError:
    """Exact bounds (arb numbers with zero radius) for a stored array ``S`` against the
    exact values ``X`` it approximates: ``error_lo <= max |S - X| <= error_hi`` and
    ``abs_lo <= max |X| <= abs_hi`` (moduli for complex entries)."""

    error_lo: arb
    error_hi: arb
    abs_lo: arb
    abs_hi: arb


def _ball(x: Any) -> Any:
    """A stored float or complex number as an exact ball (53 bits <= the precision)."""
    if isinstance(x, complex):
        return acb(x.real, x.imag)
    return arb(x)


def stored_error(stored: np.ndarray, exact: list) -> StoredError:
    """Max-error and max-abs bounds for the float (or complex) ``stored`` array against the
    balls ``exact`` (arb or acb, same number of entries, row-major order); run inside
    ``ctx.workprec``.  Each ``stored - exact`` ball contains ``stored - true``, so its
    ``abs_lower``/``abs_upper`` bound that entry's error (proofs/lmu_checkpoint.md)."""
    values = np.asarray(stored)
    values = values.astype(np.complex128 if values.dtype.kind == "c" else np.float64).ravel().tolist()
    if len(values) != len(exact):
        raise ValueError(f"expected {len(exact)} stored entries, got {len(values)}")
    if not all(math.isfinite(abs(v)) for v in values):
        raise ValueError("stored entries must be finite")
    e_lo, e_hi, a_lo, a_hi = arb(0), arb(0), arb(0), arb(0)
    for s, x in zip(values, exact):
        d = _ball(s) - x
        e_lo, e_hi = e_lo.max(d.abs_lower()), e_hi.max(d.abs_upper())
        a_lo, a_hi = a_lo.max(x.abs_lower()), a_hi.max(x.abs_upper())
    return StoredError(e_lo, e_hi, a_lo, a_hi)


def float32_neighbours(stored: np.ndarray, exact: list) -> bool | None:
    """Whether every stored entry is one of the two float32 numbers nearest to its exact
    value (the float32 rounding of a good enough approximation): True certainly, False
    certainly not (some entry is not a float32 number, or lies a float32 step or more
    away), None when the balls cannot tell.  Run inside ``ctx.workprec``."""
    s64 = np.asarray(stored, dtype=np.float64).ravel()
    if len(s64) != len(exact):
        raise ValueError(f"expected {len(exact)} stored entries, got {len(s64)}")
    s32 = s64.astype(np.float32)
    if not np.array_equal(s32.astype(np.float64), s64):
        return False
    below = np.nextafter(s32, np.float32(-np.inf)).astype(np.float64).tolist()
    above = np.nextafter(s32, np.float32(np.inf)).astype(np.float64).tolist()
    undecided = False
    for lo, hi, x in zip(below, above, exact):
        if x <= arb(lo) or x >= arb(hi):  # arb comparisons are True only when certain
            return False
        if not (x > arb(lo) and x < arb(hi)):
            undecided = True
    return None if undecided else True


def exact_rfft(balls: arb_mat, n: int) -> list:
    """Balls containing ``numpy.fft.rfft(H, n)`` row by row (``X_k = sum_t H_t
    e^{-2 pi i k t / n}``, ``0 <= k <= n // 2``) for every ``H`` in the rows of ``balls``,
    zero-padded to length ``n``; Arb's DFT encloses its results.  Row-major list of acb.
    Run inside ``ctx.workprec``."""
    N, L = balls.nrows(), balls.ncols()
    if not isinstance(n, int) or n < L:
        raise ValueError(f"the transform length must be an integer >= {L}, got {n!r}")
    out = []
    for i in range(N):
        row = [acb(balls[i, t]) for t in range(L)] + [acb(0)] * (n - L)
        out.extend(acb.dft(row)[: n // 2 + 1])
    return out


def stored_impulse_response(A: np.ndarray, B: np.ndarray, length: int, spare_bits: int = 64,
                            max_prec: int = 1 << 16) -> tuple[arb_mat, int]:
    """Balls containing ``H[:, t] = A^t B`` (``0 <= t < length``) of the float matrices
    ``A``, ``B`` read exactly (no contraction is assumed, as for trained matrices): plain
    ball steps at a precision that covers the radius growth ``|| |A| ||_inf^t``, doubled
    until every radius is at most ``2^-spare_bits max |H|``.  Returns (balls, precision)."""
    A, b = check_ab(A, B)
    if A.dtype.kind != "f" or b.dtype.kind != "f":
        raise ValueError("A and B must be real float arrays")
    N, L = A.shape[0], check_size(length, "length")
    growth = float(np.abs(A.astype(np.float64)).sum(axis=1).max())
    prec = 64 + spare_bits + N.bit_length() + math.ceil(L * max(0.0, math.log2(growth)) if growth > 0 else 0)
    while True:
        with ctx.workprec(prec):
            Am = arb_mat(N, N, A.astype(np.float64).ravel().tolist())  # floats are exact
            h = arb_mat(N, 1, b.astype(np.float64).tolist())
            cols = []
            for t in range(L):
                cols.append(h)
                if t + 1 < L:
                    h = Am * h
            balls = arb_mat(N, L, [cols[t][i, 0] for i in range(N) for t in range(L)])
            big, rad = arb(0), arb(0)
            for x in balls.entries():
                big, rad = big.max(x.abs_lower()), rad.max(x.rad())
            if rad <= big * arb(2) ** -spare_bits or rad == 0:
                return balls, prec
        if prec * 2 > max_prec:
            raise ValueError(f"the impulse response of the stored matrices needs more than "
                             f"{max_prec} bits to reach radius 2^-{spare_bits} max|H|")
        prec *= 2


def float64_mid_rad(balls: arb_mat, prec: int) -> tuple[np.ndarray, np.ndarray]:
    """Float64 ``mid`` (the ball midpoints rounded to nearest) and ``rad`` (rounded up)
    with ``|x - mid| <= rad`` for every point ``x`` of each ball; an entry outside the
    float64 range gets ``mid = +-inf`` and ``rad = inf``."""
    N, L = balls.nrows(), balls.ncols()
    mid, rad = np.empty((N, L)), np.empty((N, L))
    with ctx.workprec(prec):
        for i in range(N):
            for t in range(L):
                x = balls[i, t]
                m = float(x.mid())
                mid[i, t] = m
                rad[i, t] = float_upper((x - arb(m)).abs_upper()) if math.isfinite(m) else math.inf
    return mid, rad
