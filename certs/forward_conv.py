"""The certified causal convolution of a kernel module with its input, on float64 disks.

``causal_conv(K, D, v)`` encloses ``y[b, c, h, t] = sum_{j <= min(t, Lk-1)} K[c, h, j]
v[b, h, t - j] + D[c, h] v[b, h, t]`` for every kernel ``K`` in the disks ``(K.mid, K.rad)``
and every input ``v`` in ``(v.mid, v.rad)``, with ``D`` exact floats.

The midpoints' sums are compensated (proofs/outputs.md, section 1): every product of two
midpoints is split exactly into four products of Veltkamp halves, the leading products are
added by 2Sum, and the rest, with every 2Sum error, go into a second sum whose own rounding
is bounded from the running sum of their magnitudes.  So a midpoint is within about
``2u |y|`` of the sum of its products, whatever the number of lags; the radius adds the
kernels' and the inputs' radii through nonnegative products (``sum_upper``).  The sums run
over the lags (one vectorized pass per lag over every batch, channel, head and time), so
the work is ``B C H T min(T, Lk)``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..arith import fpenv
from ..arith.compiled import Gate, jit, same_floats
from ..arith.midrad import U, sum_upper, up

#: Veltkamp's splitting constant for float64 (2^27 + 1)
SPLIT = 134217729.0
#: nonzero midpoints below this move into their radius; magnitudes above it are refused
TINY, HUGE = 2.0 ** -400, 2.0 ** 400


@dataclass
class Disks:
    """Real float64 disks: every true value x satisfies ``|x - mid| <= rad``."""

    mid: np.ndarray
    rad: np.ndarray

    @staticmethod
    def exact(a: np.ndarray) -> "Disks":
        a = np.asarray(a, dtype=np.float64)
        return Disks(a.copy(), np.zeros_like(a))

    @property
    def shape(self) -> tuple:
        return self.mid.shape

    def max_rad(self) -> float:
        return float(np.max(self.rad, initial=0.0))


def check_environment() -> None:
    """Refuse (ValueError) a floating-point environment other than IEEE round to nearest,
    which every bound here assumes (``arith.fpenv``)."""
    env = fpenv.probe()
    if not env.ok:
        raise ValueError(f"the floating-point environment is not IEEE round to nearest ({env.reason})")


def in_range(d: Disks, what: str) -> Disks:
    """``d`` with every nonzero midpoint below 2^-400 moved into its radius (so the exact
    products of section 1 never reach the subnormal range); magnitudes above 2^400 or not
    finite are refused with a ValueError naming ``what``."""
    m, r = np.asarray(d.mid, dtype=np.float64), np.asarray(d.rad, dtype=np.float64)
    if m.shape != r.shape:
        raise ValueError(f"{what}: midpoints {m.shape} and radii {r.shape} differ in shape")
    with np.errstate(invalid="ignore"):
        bad = ~(np.isfinite(m) & np.isfinite(r) & (np.abs(m) <= HUGE) & (r <= HUGE) & (r >= 0))
    if bad.any():
        raise ValueError(f"{what}: a value is not finite or exceeds 2^400 in magnitude")
    tiny = (m != 0) & (np.abs(m) < TINY)
    if tiny.any():
        r = np.where(tiny, up(r + np.abs(m)), r)
        m = np.where(tiny, 0.0, m)
    return Disks(m, r)


def split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Veltkamp's splitting: a = hi + lo exactly, each of at most 26 significant bits
    (|a| <= 2^400, so the constant's product does not overflow)."""
    c = SPLIT * a
    hi = c - (c - a)
    return hi, a - hi


def two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Knuth's 2Sum: s = fl(a + b) and e with s + e = a + b exactly."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def gamma_upper(m: int) -> float:
    """A float >= gamma_m = m u / (1 - m u), for m u <= 2^-11: m u (1 + 2^-10), exact."""
    if not m * U <= 2.0 ** -11:
        raise ValueError(f"a sum of {m} terms is beyond the a-priori bounds")
    return m * U * (1.0 + 2.0 ** -10)


class _Accumulator:
    """Compensated sums of exact-split products into arrays of one shape (section 1)."""

    def __init__(self, shape: tuple):
        self.s = np.zeros(shape)      # leading sums (2Sum)
        self.c = np.zeros(shape)      # the rest: 2Sum errors and the small products
        self.a = np.zeros(shape)      # running sum of the magnitudes of what went into c
        self.r = np.zeros(shape)      # radius terms (nonnegative products)

    def add(self, where: tuple, ah, al, bh, bl) -> None:
        """Add (ah + al)(bh + bl) to the entries ``where`` (an index into the arrays)."""
        s, q = two_sum(self.s[where], ah * bh)
        self.s[where] = s
        t2, t3, t4 = ah * bl, al * bh, al * bl
        self.c[where] += (q + t2) + (t3 + t4)
        self.a[where] += (np.abs(q) + np.abs(t2)) + (np.abs(t3) + np.abs(t4))

    def result(self, m_terms: int, r_terms: int) -> Disks:
        """The disks: ``m_terms`` bounds the terms of c per entry, ``r_terms`` the radius
        products per entry."""
        mid = self.s + self.c
        g = gamma_upper(m_terms)
        err = up(up(2 * U * np.abs(mid)) + up(g * sum_upper(self.a, m_terms)))
        rad = up(err + sum_upper(self.r, r_terms))
        return Disks(mid, rad)


#: lags between two progress reports
PROGRESS_LAGS = 1024


def checked_operands(K: Disks, D: Any, v: Disks) -> tuple[Disks, np.ndarray, Disks]:
    """The convolution's operands checked before any work (both routes): the floating-point
    environment, K (C, H, Lk) and v (B, H, T) in range, D (C, H) finite, 0 or within
    [2^-400, 2^400] in magnitude; ValueError naming what does not fit."""
    check_environment()
    K, v = in_range(K, "kernel"), in_range(v, "input")
    D = np.asarray(D, dtype=np.float64)
    if not np.all(np.isfinite(D) & (np.abs(D) <= HUGE) & ((D == 0) | (np.abs(D) >= TINY))):
        raise ValueError("D: a value is not finite or outside [2^-400, 2^400] in magnitude")
    if v.shape[1] != K.shape[1] or D.shape != K.shape[:2]:
        raise ValueError(f"convolution: kernel {K.shape}, D {D.shape} and input {v.shape} do not fit")
    return K, D, v


def causal_conv(K: Disks, D: np.ndarray, v: Disks, progress: Callable[[str], None] | None = None) -> Disks:
    """Disks of shape (B, C, H, T) holding ``sum_j K[c, h, j] v[b, h, t - j] + D[c, h]
    v[b, h, t]`` (j from 0 to min(t, Lk - 1)) for K (C, H, Lk), D (C, H) exact and v
    (B, H, T).  ``progress(text)`` is called every PROGRESS_LAGS lags (the numpy form) or
    batch entry (the compiled form)."""
    K, D, v = checked_operands(K, D, v)
    C, H, Lk = K.shape
    B, _, T = v.shape
    acc = _Accumulator((B, C, H, T))
    kh, kl = split(K.mid)
    vh, vl = split(v.mid)
    vabs = np.abs(v.mid)
    # the radius weights as floats >= |mid| + rad (so every radius term is a product of floats)
    w = up(np.abs(K.mid) + K.rad)
    dh, dl = split(D)
    operands = tuple(np.ascontiguousarray(x) for x in (kh, kl, w, K.rad, vh, vl, vabs, v.rad, dh, dl, np.abs(D)))
    lags = min(Lk, T)
    if GATE.use(B * C * H * T * (lags + 1)):
        kh, kl, w, kr, vh, vl, vabs, vrad, dh, dl, dabs = operands
        for b in range(B):      # one batch entry at a time, so a long run reports progress
            one = slice(b, b + 1)
            _loop()(kh, kl, w, kr, vh[one], vl[one], vabs[one], vrad[one], dh, dl, dabs,
                    acc.s[one], acc.c[one], acc.a[one], acc.r[one], lags)
            if progress is not None:
                progress(f"convolution: batch {b + 1}/{B}")
    else:
        _numpy_loop(*operands, acc, lags, progress)
    return acc.result(4 * (lags + 1), 2 * lags + 1)


def _numpy_loop(kh, kl, w, kr, vh, vl, vabs, vrad, dh, dl, dabs, acc: _Accumulator, lags: int, progress) -> None:
    """The sums of ``causal_conv`` on numpy arrays: the skip term, then lag by lag."""
    T = acc.s.shape[-1]
    everything = (slice(None),) * 4
    acc.add(everything, dh[None, :, :, None], dl[None, :, :, None], vh[:, None], vl[:, None])
    acc.r += dabs[None, :, :, None] * vrad[:, None]
    for j in range(lags):
        n = T - j
        where = (slice(None), slice(None), slice(None), slice(j, None))
        a = lambda x: x[None, :, :, j, None]
        b = lambda x: x[:, None, :, :n]
        acc.add(where, a(kh), a(kl), b(vh), b(vl))
        acc.r[where] += a(w) * b(vrad) + a(kr) * b(vabs)
        if progress is not None and j % PROGRESS_LAGS == PROGRESS_LAGS - 1:
            progress(f"convolution: lag {j + 1}/{lags}")


def _row(s, c, a, r, ah, al, wj, krj, vh, vl, vabs, vrad, j):
    """One term of every entry t >= j of a row: the operations of ``_Accumulator.add`` and
    the radius update, in the same order, entry by entry."""
    for t in range(j, s.shape[0]):
        bh, bl = vh[t - j], vl[t - j]
        p = ah * bh
        old = s[t]
        new = old + p
        bb = new - old
        q = (old - (new - bb)) + (p - bb)
        s[t] = new
        t2, t3, t4 = ah * bl, al * bh, al * bl
        c[t] = c[t] + ((q + t2) + (t3 + t4))
        a[t] = a[t] + ((abs(q) + abs(t2)) + (abs(t3) + abs(t4)))
        r[t] = r[t] + (wj * vrad[t - j] + krj * vabs[t - j])


def _compiled_loop(kh, kl, w, kr, vh, vl, vabs, vrad, dh, dl, dabs, s, c, a, r, lags):
    B, C, H, T = s.shape
    for b in range(B):
        for ci in range(C):
            for h in range(H):
                # the skip term as lag 0 of the input with D (its radius weight |D|, no kernel radius)
                row_s, row_c, row_a, row_r = s[b, ci, h], c[b, ci, h], a[b, ci, h], r[b, ci, h]
                _row_jit(row_s, row_c, row_a, row_r, dh[ci, h], dl[ci, h], dabs[ci, h], 0.0,
                         vh[b, h], vl[b, h], vabs[b, h], vrad[b, h], 0)
                for j in range(lags):
                    _row_jit(row_s, row_c, row_a, row_r, kh[ci, h, j], kl[ci, h, j], w[ci, h, j], kr[ci, h, j],
                             vh[b, h], vl[b, h], vabs[b, h], vrad[b, h], j)


_COMPILED: list = []
_row_jit = None     # the compiled ``_row``, which the compiled loop calls (set by ``_loop``)


def _loop():
    """The compiled form of ``_numpy_loop`` (numba, the project's settings)."""
    global _row_jit
    if not _COMPILED:
        _row_jit = jit(_row)
        _COMPILED.append(jit(_compiled_loop))
    return _COMPILED[0]


def _agrees() -> bool:
    """Both forms on inputs where a fused multiply-add or a flushed subnormal would show
    (radius products that round, 2Sum errors, tiny terms): bitwise the same sums."""
    rng = np.random.default_rng(2026)
    K = Disks(rng.standard_normal((2, 3, 5)) * 2.0 ** rng.integers(-60, 60, (2, 3, 5)),
              np.abs(rng.standard_normal((2, 3, 5))) * 1e-9)
    K.mid[0, 0, 1] = 2.0 ** -399
    v = Disks(rng.standard_normal((2, 3, 9)), np.abs(rng.standard_normal((2, 3, 9))) * 1e-12)
    D = rng.standard_normal((2, 3))
    forms = []
    for compiled in (False, True):
        kh, kl = split(K.mid)
        vh, vl = split(v.mid)
        dh, dl = split(D)
        ops = (kh, kl, up(np.abs(K.mid) + K.rad), K.rad, vh, vl, np.abs(v.mid), v.rad, dh, dl, np.abs(D))
        acc = _Accumulator((2, 2, 3, 9))
        if compiled:
            _loop()(*ops, acc.s, acc.c, acc.a, acc.r, 5)
        else:
            _numpy_loop(*ops, acc, 5, None)
        forms.append((acc.s, acc.c, acc.a, acc.r))
    return all(same_floats(x, y) for x, y in zip(*forms))


#: the compiled sums run from this many (entry, lag) pairs on, when their probe agrees
MIN_PAIRS = 1 << 15
GATE = Gate("float64 causal convolution", MIN_PAIRS, _agrees)
