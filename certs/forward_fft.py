"""The certified causal convolution by FFT on float64 disks, and the choice between it and
the direct sums (``forward_conv``).

``fft_conv(K, D, v)`` encloses the same ``y[b, c, h, t] = sum_{j <= min(t, Lk-1)} K[c, h, j]
v[b, h, t - j] + D[c, h] v[b, h, t]`` as ``forward_conv.causal_conv`` (proofs/outputs.md,
section 7).  Every row of the kernel's and the input's midpoints is scaled exactly to
magnitudes below 2^BITS and split into integers q and a rest r (|r| <= 1/2), so that

    K * v = scale (qK * qv + qK * rv + rK * (qv + rv)):

the integers' sums come out of a transform whose proved error is below 1/2, rounded to the
exact integers; the rest, some 2^-BITS of the whole, carries the transforms' error, which is
relative to the rows' norms.  Every transform is the project's radix-2 one with a bound per
entry (``algorithms/s4/midrad_idft.idft_midrad_rows``, proofs/midrad_filter.md, Lemma 11; a
forward transform of a real row is M times the conjugate of its inverse), zero-padded to a
power of two M >= T + Lk - 1, the spectra multiplied as disks (``arith.midrad.MR``).  The
disks' radii add a per-row bound through the largest |v| and radius, and the skip term
``D v`` its roundings.  The work is about ``2 (C H + B H + B C H) M log2 M``.

``convolve`` runs the cheaper route by a cost model and falls back to the direct sums where
the FFT's radius misses the wanted bound (or its integers cannot be rounded); ``ROUTES``
records which ran and why.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..algorithms.s4.midrad_idft import idft_midrad_rows
from ..arith.midrad import MR, U, roots_of_unity, sum_upper, up
from .forward_conv import Disks, causal_conv, checked_operands

#: the direct sums' cost per (entry, lag) pair in the units of ``fft_cost`` (one row entry
#: and stage of the FFT route, its two transforms per row and the disk products included),
#: as measured at (2, 32, 16384) with the compiled loops: 1.7 ns a pair, 19 ns a unit
DIRECT_PER_PAIR = 0.09
#: the FFT route's fixed cost per call (units): a few milliseconds of set-up
FFT_FIXED = 2e5


def fft_size(T: int, Lk: int) -> int:
    """The least power of two M >= T + Lk - 1 (no cyclic wrap into the first T entries)."""
    return 1 << max(0, (T + Lk - 2).bit_length())


def direct_cost(B: int, C: int, H: int, T: int, Lk: int) -> float:
    """The direct sums' work, in the units of ``fft_cost``."""
    return DIRECT_PER_PAIR * B * C * H * T * (min(T, Lk) + 1)


def fft_cost(B: int, C: int, H: int, T: int, Lk: int) -> float:
    """The FFT route's work: rows times entries times stages of its transforms."""
    M = fft_size(T, Lk)
    stages = max(1, M.bit_length() - 1)
    return FFT_FIXED + (C * H + B * H + B * C * H) * M * stages


#: bits of the integer parts (section 7: their product's transform must err by less than
#: 1/2), and the retry's where it does not
BITS, FEWER_BITS = 14, 8
#: entries per pass (heads times (B + C + B C) times M): bounds the memory, some 40 float
#: arrays of that size
ENTRIES_PER_PASS = 1 << 21


class Miss(ArithmeticError):
    """The integer part's transform erred by 1/2 or more: it cannot be rounded to the exact
    integers (the caller runs the direct sums)."""


def _forward(x: np.ndarray, Z: MR) -> MR:
    """Disks of the DFT ``X_k = sum_j x_j z_k^j`` (z_k = exp(-2 pi i k / M)) of each real
    row of x (rows, n <= M), zero-padded to M: M times the conjugate of the inverse
    transform of x, whose bound per entry is Lemma 11's (section 7, (a))."""
    M = len(Z.mid)
    h = np.zeros((x.shape[0], M), dtype=np.complex128)
    h[:, :x.shape[1]] = x
    m, R = idft_midrad_rows(h, np.zeros((x.shape[0], M)), Z, per_entry=True)
    return MR(np.conj(m) * M, up(R * M))


def _normalized(m: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row (last axis) of the midpoints m: the exponent E with max|m| < 2^E (0 for a
    zero row), and the row scaled exactly by 2^(bits - E), split as q + r with q = rint(.)
    integers of magnitude at most 2^bits and r the exact rest, |r| <= 1/2 (section 7, (b)).
    Returns (E, q, r)."""
    top = np.max(np.abs(m), axis=-1, initial=0.0)
    E = np.where(top > 0, np.frexp(top)[1], 0)
    x = m * np.ldexp(1.0, bits - E)[..., None]
    q = np.rint(x)
    return E, q, x - q


def _inverse(P: MR, Z: MR, T: int) -> tuple[np.ndarray, np.ndarray]:
    """The real parts of the first T entries of the inverse transform of each row of P, and
    their bounds: the exact transform of a conjugate-symmetric P is real, |y - Re mid| <= R."""
    m, R = idft_midrad_rows(P.mid, P.rad, Z, per_entry=True)
    return m.real[:, :T], R[:, :T]


def _pass(K: np.ndarray, v: np.ndarray, Z: MR, T: int, bits: int) -> Disks:
    """Disks of the causal sums (B, C, h, T) of the midpoints K (C, h, Lk) and v (B, h, T)
    of one pass of h heads (section 7, (b)-(d))."""
    (C, h, Lk), B = K.shape, v.shape[0]
    EK, qK, rK = _normalized(K, bits)                       # (C, h) and (C, h, Lk)
    Ev, qv, rv = _normalized(v, bits)                       # (B, h) and (B, h, T)
    M = len(Z.mid)
    fq, fr = (_forward(a.reshape(-1, Lk), Z).reshape(1, C, h, M) for a in (qK, rK))
    gq, gr = (_forward(a.reshape(-1, T), Z).reshape(B, 1, h, M) for a in (qv, rv))
    rows = lambda P: P.reshape(B * C * h, M)
    Ym, YR = _inverse(rows(fq.mul(gq)), Z, T)
    if not float(np.max(YR, initial=0.0)) < 0.5:
        raise Miss(f"the integer part's transform errs by up to {float(np.max(YR)):.2e}")
    Y = np.rint(Ym)                                         # the exact integer sums
    Rm, RR = _inverse(rows(fq.mul(gr).add(fr.mul(gq.add(gr)))), Z, T)
    z = Y + Rm
    zr = up(RR + up(U * np.abs(z)))
    # the scale 2^(EK + Ev - 2 bits) is a power of two: exact up to underflow (2^-1074 per entry)
    f = np.ldexp(1.0, (EK[None] + Ev[:, None] - 2 * bits).reshape(-1))[:, None]
    return Disks((z * f).reshape(B, C, h, T), up(up(zr * f) + 2.0 ** -1074).reshape(B, C, h, T))


def _radius_terms(K: Disks, v: Disks) -> np.ndarray:
    """Per row (B, C, H) a bound of what the disks' radii add to every causal sum (section
    7, (d)): ``sum_j (|mid K_j| + rad K_j) max rad v + sum_j rad K_j max |mid v|``."""
    Lk = K.shape[-1]
    w = up(np.abs(K.mid) + K.rad)
    sw, sr = sum_upper(np.sum(w, axis=-1), Lk), sum_upper(np.sum(K.rad, axis=-1), Lk)
    mv, mr = np.max(np.abs(v.mid), axis=-1), np.max(v.rad, axis=-1)
    return up(up(sw[None] * mr[:, None]) + up(sr[None] * mv[:, None]))


def _skip(y: Disks, D: np.ndarray, v: Disks) -> Disks:
    """y + D v for y (B, C, H, T), D (C, H) exact, v (B, H, T) (section 7, (e)): the
    product's rounding ``u |fl(D v)|`` (no underflow: |D|, |v| >= 2^-400 or 0), its radius
    ``|D| rad v``, the sum's ``u |fl(y + D v)|``."""
    p = D[None, :, :, None] * v.mid[:, None]
    prad = up(up(np.abs(D)[None, :, :, None] * v.rad[:, None]) + up(U * np.abs(p)))
    mid = y.mid + p
    return Disks(mid, up(up(y.rad + prad) + up(U * np.abs(mid))))


def fft_conv(K: Disks, D: np.ndarray, v: Disks, progress: Callable[[str], None] | None = None,
             bits: int = BITS, rounding: list | None = None) -> Disks:
    """Disks of shape (B, C, H, T) holding ``sum_j K[c, h, j] v[b, h, t - j] + D[c, h]
    v[b, h, t]`` for K (C, H, Lk), D (C, H) exact and v (B, H, T), by the certified FFT of
    the rows split into exact integer parts and small rests (proofs/outputs.md, section 7);
    a few heads per pass (``progress`` after each).  ``Miss`` where the integer part's
    transform cannot be rounded to the exact integers.  ``rounding``, a list, receives the
    largest radius before the operands' radii are added (the FFT's own rounding)."""
    K, D, v = checked_operands(K, D, v)
    C, H, Lk = K.shape
    B, _, T = v.shape
    if Lk > T:                                  # lags past T never meet the input
        K, Lk = Disks(K.mid[..., :T], K.rad[..., :T]), T
    M = fft_size(T, Lk)
    Z = roots_of_unity(M)
    mid, rad = np.empty((B, C, H, T)), np.empty((B, C, H, T))
    step = max(1, ENTRIES_PER_PASS // ((B + C + B * C) * M))
    for h0 in range(0, H, step):
        hs = slice(h0, min(H, h0 + step))
        y = _pass(K.mid[:, hs], v.mid[:, hs], Z, T, bits)
        mid[:, :, hs], rad[:, :, hs] = y.mid, y.rad
        if progress is not None:
            progress(f"convolution (FFT, M = {M}): heads {hs.stop}/{H}")
    if rounding is not None:
        rounding.append(float(np.max(rad, initial=0.0)))
    rad = up(rad + _radius_terms(K, v)[..., None])
    return _skip(Disks(mid, rad), D, v)


#: the FFT is kept when its own rounding is within 1/OWN_SHARE of the wanted bound
OWN_SHARE = 8

#: which route each convolution of the last ``convolve`` calls ran, with its largest radius
#: relative to its largest |midpoint| (``certify_forward`` clears it per round)
ROUTES: list[dict] = []


def convolve(K: Disks, D: np.ndarray, v: Disks, progress: Callable[[str], None] | None = None, *,
             rel: float = 1e-13, eps: float | None = None, route: str = "auto") -> Disks:
    """The causal convolution by the cheaper route (``route`` "auto"), or by "fft" or
    "direct" as asked.  The FFT's disks are kept where their largest radius is at most
    ``eps`` (absolute) or, without it, ``rel`` times their largest |midpoint|, and where its
    integer parts could be rounded (at BITS bits, else at FEWER_BITS); otherwise the direct
    sums run.  Appends to ``ROUTES`` what ran and why."""
    if route not in ("auto", "fft", "direct"):
        raise ValueError(f"route must be auto, fft or direct; got {route!r}")
    (C, H, Lk), (B, _, T) = K.shape, v.shape
    cd, cf = direct_cost(B, C, H, T, Lk), fft_cost(B, C, H, T, Lk)
    entry = {"shape": [B, C, H, T], "l_kernel": Lk, "direct_cost": cd, "fft_cost": cf}
    if route == "direct" or (route == "auto" and cd <= cf):
        return _direct(K, D, v, progress, entry, "cheaper" if route == "auto" else "asked")
    y, why, own = None, "", []
    for bits in (BITS, FEWER_BITS):
        try:
            y = fft_conv(K, D, v, progress, bits, own)
            break
        except Miss as e:
            why = f"the FFT's integer parts could not be rounded ({e})"
    if y is not None:
        want = eps if eps is not None else rel * float(np.max(np.abs(y.mid), initial=0.0))
        # kept when it meets the bound, or when its own rounding is well within it (the rest is
        # the operands' radii, which the caller tightens by certifying the kernels tighter)
        if route == "fft" or y.max_rad() <= want or own[-1] <= want / OWN_SHARE:
            ROUTES.append({**entry, "route": "fft", "bits": bits, "why": "cheaper" if route == "auto" else "asked",
                           "relative_radius": _relative(y), "relative_rounding": _relative(y, own[-1])})
            return y
        why = f"the FFT's radius {y.max_rad():.2e} (its rounding {own[-1]:.2e}) missed {want:.2e}"
    if route == "fft":
        raise Miss(why)
    if progress is not None:
        progress(f"convolution: {why}; the direct sums")
    return _direct(K, D, v, progress, entry, why)


def _direct(K: Disks, D: np.ndarray, v: Disks, progress, entry: dict, why: str) -> Disks:
    y = causal_conv(K, D, v, progress)
    ROUTES.append({**entry, "route": "direct", "why": why, "relative_radius": _relative(y)})
    return y


def _relative(y: Disks, rad: float | None = None) -> float | None:
    """The largest radius (or ``rad``) over the largest |midpoint|; None for zero midpoints."""
    top, rad = float(np.max(np.abs(y.mid), initial=0.0)), y.max_rad() if rad is None else rad
    return rad / top if top > 0 else None
