"""The inverse DFT of float64 disk arrays, with an error bound per entry (the float64
disk routes' last step; proofs/midrad_filter.md, Lemma 11).

An iterative radix-2 decimation-in-time transform on the midpoints (real and imaginary
parts as separate arrays), the rounding of every butterfly bounded from the magnitudes it
actually meets: per twiddle w_j, 2.01 u |w_j|_1 + rad w_j for the product (nothing where
w_j is exactly 1 or i) and u |out|_1 for the sum; the input disks' radii add their mean.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from ...arith.compiled import Gate, same_floats
from ...arith.midrad import LARGE, MR, RangeError, U, sum_upper, up
from . import cauchy_f64_rows


@lru_cache(maxsize=8)
def bit_reverse(M: int) -> np.ndarray:
    """The bit-reversal permutation of 0..M-1 (cached; read-only)."""
    bits = M.bit_length() - 1
    idx = np.arange(M)
    rev = np.zeros(M, dtype=np.int64)
    for b in range(bits):
        rev |= ((idx >> b) & 1) << (bits - 1 - b)
    rev.setflags(write=False)
    return rev


def idft_midrad(H: MR, Z: MR, per_entry: bool = False) -> tuple[np.ndarray, Any]:
    """Midpoints of (1/M) sum_k H_k conj(z_k)^j (numpy's ifft convention) and a bound R
    with |K_j - mid_j| <= R for every j and every H in the disks (with ``per_entry``, an
    array of bounds R_j, one per entry).  Z are the disks of the roots z_k (their
    conjugates are the inverse transform's twiddles)."""
    mid, R = idft_midrad_rows(H.mid[None, :], H.rad[None, :], Z, per_entry=per_entry)
    return mid[0], (R[0] if per_entry else float(R[0]))


def idft_midrad_rows(Hmid: np.ndarray, Hrad: np.ndarray, Z: MR, per_entry: bool = False,
                     _compiled: bool | None = None) -> tuple:
    """``idft_midrad`` of every row of the (K, M) disk array (Hmid, Hrad) at once: the
    rows' midpoints and, per row, one bound R_i with |K_ij - mid_ij| <= R_i, or with
    ``per_entry`` a (K, M) array of bounds R_ij, one per entry.  The transform's rounding
    is bounded entry by entry from the magnitudes each butterfly actually meets
    (proofs/midrad_filter.md, Lemma 11)."""
    K, M = Hmid.shape
    if GATE.use(K * M) if _compiled is None else _compiled:
        return _compiled_rows(Hmid, Hrad, Z, per_entry)
    h = Hmid[:, bit_reverse(M)]
    # The first stages (sizes up to S0) run on a transposed copy, entry b S0 + r at [r, b], so
    # that every numpy call runs along rows of M/S0 entries rather than blocks of size/2; the
    # operations on each entry are the same in either layout.
    S0 = min(M, 1 << ((M.bit_length() - 1 + 1) // 2))
    Mb = M // S0
    tr = lambda a: np.ascontiguousarray(a.reshape(a.shape[:-1] + (Mb, S0)).swapaxes(-1, -2))
    back = lambda a: np.ascontiguousarray(a.swapaxes(-1, -2)).reshape(a.shape[:-2] + (M,))
    X, Y = tr(np.stack([h.real, h.imag])), np.empty((2, K, S0, Mb))   # (re, im) x rows x entries
    A = np.abs(X[0]) + np.abs(X[1])               # |x|_1 of the stage's input, per entry
    E, En, An = np.zeros((K, S0, Mb)), np.empty((K, S0, Mb)), np.empty((K, S0, Mb))
    P, O1 = np.empty(2 * K * (M // 2)), np.empty(K * (M // 2))
    size = 2
    while size <= M:
        half = size // 2
        if size == 2 * S0:                          # to the natural layout for the later stages
            X, E, A = back(X), back(E), back(A)
            Y, En, An = np.empty((2, K, M)), np.empty((K, M)), np.empty((K, M))
        flip = size <= S0                           # the stage on the transposed copy
        if flip:
            blocks = lambda a: a.reshape(a.shape[:-2] + (-1, size, Mb))
            lo_, hi_ = (Ellipsis, slice(None, half), slice(None)), (Ellipsis, slice(half, None), slice(None))
            col = lambda x: x[:, None]
            pshape = (-1, half, Mb)
        else:
            blocks = lambda a: a.reshape(a.shape[:-1] + (-1, size))
            lo_, hi_ = (Ellipsis, slice(None, half)), (Ellipsis, slice(half, None))
            col = lambda x: x
            pshape = (-1, half)
        idx = np.arange(half) * (M // size)
        w = np.conj(Z.mid[idx])                   # conj(z_(jM/size)) = exp(+2 pi i j / size)
        # per twiddle: 2.01 u |w^|_1 (the product's rounding) + rad w; 0 where w is exactly 1 or i
        t = up(up(2.01 * U * up(np.abs(w.real) + np.abs(w.imag))) + Z.rad[idx])
        if w[0] == 1:                               # w = 1 (j = 0): the product is exact
            t[0] = 0.0
        if size >= 4 and w[size // 4] == 1j:        # w = i exactly (j = size/4): exact too
            t[size // 4] = 0.0
        v, vy = blocks(X), blocks(Y)
        e, o = v[lo_], v[hi_]
        if size == 2 and w[0] == 1:                 # w o = o exactly: the same values as the products give
            p = o
        else:
            wr, wi = col(w.real.copy()), col(w.imag.copy())
            p = P.reshape((2, K) + pshape)
            np.multiply(wr, o[0], out=p[0])
            p[0] -= wi * o[1]                       # Re(w o)
            np.multiply(wr, o[1], out=p[1])
            p[1] += wi * o[0]                       # Im(w o)
        np.add(e, p, out=vy[lo_])
        np.subtract(e, p, out=vy[hi_])
        # per entry: E' = E_e + E_o + t_j |o|_1 + u |out|_1 (Lemma 11), in round to nearest: the
        # computed E is at least the exact recursion's over (1 + u)^(5 log2 M) (below); |o|_1 is
        # the previous stage's |out|_1 (the same floats)
        o1 = O1.reshape((K,) + pshape)
        np.multiply(blocks(A)[hi_], col(t), out=o1)
        Ev, Env = blocks(E), blocks(En)
        o1 += Ev[lo_]
        o1 += Ev[hi_]                               # the shared part of both outputs' bounds
        np.abs(Y[0], out=An)
        An += np.abs(Y[1])
        np.multiply(An, U, out=En)
        Env[lo_] += o1
        Env[hi_] += o1
        X, Y, E, En, A, An = Y, X, En, E, An, A
        size *= 2
    if M <= S0:                                     # every stage ran on the transposed copy
        X, E = back(X), back(E)
    return _finish(X, E, Hrad, M, per_entry)


def _finish(X: np.ndarray, E: np.ndarray, Hrad: np.ndarray, M: int, per_entry: bool) -> tuple:
    """The midpoints over M and the bounds from the last stage's values X (2, K, M) and E."""
    # an overflow anywhere leaves an inf or NaN in X or E (neither becomes finite again)
    if not (float(np.max(np.abs(X), initial=0.0)) <= LARGE and float(np.max(E, initial=0.0)) <= LARGE):
        raise RangeError("the inverse transform left the safe range")
    x = X[0] + 1j * X[1]
    stages = max(1, M.bit_length() - 1)
    E = up(up(E * (1 + 5 * stages * U)) + M * 2.0 ** -1070)  # the roundings of E itself, and underflows
    mid = x / M
    mean_rad = sum_upper(np.sum(Hrad, axis=1), M) / M
    R = up(up(mean_rad)[:, None] + up(E / M))
    return mid, (R if per_entry else np.max(R, axis=1))


_TWIDDLES: list = []     # (M, Z.mid, Z.rad, twiddles): the last few, reused for the same disks


def _twiddles(M: int, Z: MR) -> tuple:
    """The twiddles conj(z_j) (j < M/2) and their bounds t_j, as ``idft_midrad_rows`` forms
    them for the last stage, and whether the first stage's twiddle is exactly 1.  Stage
    ``size`` reads entry j (M/size) of these: its twiddle conj(z_(jM/size)) and bound are
    formed entry by entry by the same operations, and its exact ones (j = 0, and
    j = size/4 where conj z = i) are the last stage's (j = 0, M/4), so one row of M/2
    serves every stage.  Reused while the same root disks come back."""
    for m, zm, zr, out in _TWIDDLES:
        if m == M and np.array_equal(zm, Z.mid) and np.array_equal(zr, Z.rad):
            return out
    out = _form_twiddles(M, Z)
    _TWIDDLES[:] = _TWIDDLES[-3:] + [(M, Z.mid.copy(), Z.rad.copy(), out)]
    return out


def _form_twiddles(M: int, Z: MR) -> tuple:
    if M < 2:
        return np.zeros(1), np.zeros(1), np.zeros(1), False
    w = np.conj(Z.mid[:M // 2])
    tt = up(up(2.01 * U * up(np.abs(w.real) + np.abs(w.imag))) + Z.rad[:M // 2])
    if w[0] == 1:
        tt[0] = 0.0
    if M >= 4 and w[M // 4] == 1j:
        tt[M // 4] = 0.0
    return np.ascontiguousarray(w.real), np.ascontiguousarray(w.imag), tt, bool(w[0] == 1)


def _compiled_rows(Hmid: np.ndarray, Hrad: np.ndarray, Z: MR, per_entry: bool) -> tuple:
    """``idft_midrad_rows`` by the compiled loops (``idft_jit``): the same operations on each
    entry in the same order, the stages in place."""
    from .idft_jit import finish, load, stages
    K, M = Hmid.shape
    xr, xi, A, E = np.empty((K, M)), np.empty((K, M)), np.empty((K, M)), np.zeros((K, M))
    load(np.ascontiguousarray(Hmid, dtype=np.complex128), bit_reverse(M), xr, xi, A)
    wr, wi, t, first_one = _twiddles(M, Z)
    if M >= 2:
        stages(xr, xi, E, A, wr, wi, t, first_one)
    stages_n = max(1, M.bit_length() - 1)
    mean = sum_upper(np.sum(Hrad, axis=1), M) / M
    R = np.empty((K, M))
    if not finish(xr, xi, E, np.ascontiguousarray(mean, dtype=np.float64), float(M), 1 + 5 * stages_n * U,
                  M * 2.0 ** -1070, R):
        raise RangeError("the inverse transform left the safe range")
    mid = (xr + 1j * xi) / M                       # as _finish forms them (X[0] + 1j X[1], over M)
    return mid, (R if per_entry else np.max(R, axis=1))


#: fewer entries than this stay on numpy (the compiled loop's first use costs numba's import)
MIN_ENTRIES = 1 << 14


def _agrees() -> bool:
    """Whether the compiled stages give bitwise the numpy stages' midpoints and bounds on
    probes of 1, 2 and 64 points (signed zeros, bounds down in the subnormal range)."""
    from ...arith.midrad import roots_of_unity
    rng = np.random.default_rng(20261201)
    for M in (1, 2, 64):
        H = rng.standard_normal((3, M)) * 10.0 ** rng.integers(-30, 30, (3, 1)) + 1j * rng.standard_normal((3, M))
        H[0, :2] = -0.0
        H[1] *= 2.0 ** -1040                        # bounds down in the subnormal range
        H[2, :1] = complex(1.0, -0.0)
        Z = roots_of_unity(M)
        rad = rng.random(H.shape) * 1e-17
        want = idft_midrad_rows(H, rad, Z, per_entry=True, _compiled=False)
        got = _compiled_rows(H, rad, Z, True)
        if not (same_floats(want[0].real, got[0].real) and same_floats(want[0].imag, got[0].imag)
                and same_floats(want[1], got[1])):
            return False
    return True


#: the compiled stages, from ``MIN_ENTRIES`` entries on: where the rows loop of
#: ``cauchy_f64_rows`` passed its bitwise check in this process (numba, the same compiler
#: settings) and ``_agrees``
GATE = Gate("float64 inverse DFT", MIN_ENTRIES, _agrees, requires=(cauchy_f64_rows.ROWS,))
