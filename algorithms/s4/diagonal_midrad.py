"""Diagonal kernels on float64 disks, many at once (proofs/diagonal_kernels.md, part 2).

Input: for a batch of kernels b (channels x heads), disks of the weights ``W[b, n]``,
the start values ``S[b, n]`` and the nodes ``z[b, n]`` (enclosed elsewhere, e.g. by
FLINT from the exact parameters).  Output: float64 arrays ``mid``, ``rad`` of shape
(batch, L) with ``|K_l - mid_l| <= rad_l`` for ``K_l = factor Re sum_n W S z^l``.

Write ``l = m T + k`` (``0 <= k < T``, T about sqrt(L)).  Then
``sum_n W_n S_n z_n^l = sum_n (W_n S_n z_n^k) (z_n^T)^m``: a (T x n) by (n x L/T)
matrix product per kernel, with two small power tables, each entry a product of at most
``log2`` of the table's length disks of ``z^(2^h)`` and ``z^(T 2^h)`` enclosed by the
caller (``arith.midrad.MR`` operations).  The product's midpoint is four real BLAS
products; its radius bounds (i) the rounding of the product: ``gamma_{n+1}`` times
``|A| |B|`` plus ``u`` times the computed values, and (ii) the disks' radii:
``(|A| + rA) rB + rA |B|``, each a nonnegative real product bounded by ``sum_upper``.
Both assume IEEE round to nearest and products whose entries are sums of n products
each rounded once per operation (any order, fused or not), as ``arith.midrad`` does.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from ...arith.midrad import MR, U, UNDERFLOW, abs_upper, modulus_upper, sum_upper, up


def _mul(a: MR, mb: np.ndarray, b: MR) -> MR:
    """a b with radii from the moduli (not |re| + |im|), so that a chain of k products
    grows the radius like |z|^k rather than (sqrt 2 |z|)^k.  Each component of the
    rounded product is within gamma_2 (|a_re b_re| + |a_im b_im|) <= gamma_2 |a||b| of the
    exact one (plus underflow), so the modulus of the error is below 3u |a||b| + 8 2^-1072."""
    ar, ai, br, bi = a.mid.real, a.mid.imag, b.mid.real, b.mid.imag
    m = np.empty(np.broadcast(a.mid, b.mid).shape, dtype=np.complex128)
    m.real = ar * br - ai * bi
    m.imag = ar * bi + ai * br
    ma = modulus_upper(a.mid)
    rad = up(up(ma * b.rad) + up(a.rad * mb))
    rad = up(rad + up(a.rad * b.rad))
    rad = up(rad + up(up(3 * U * ma) * mb))
    return MR(m, up(rad + 8 * UNDERFLOW))


def _power_table(power: Callable[[int], MR], step: int, count: int, first: MR) -> MR:
    """Disks of ``first * z^(step k)`` for ``0 <= k < count`` (last axis k).

    Entry k is entry ``k - 2^h`` times ``z^(step 2^h)`` (h the top bit of k), with the
    disks of ``z^(step 2^h)`` from ``power``: each entry is at most ``log2 count``
    products away from the enclosures, so its radius grows with ``log2 count``, not
    with k (a chain of k products would give a bound linear in k)."""
    mid = np.empty(first.mid.shape + (count,), dtype=np.complex128)
    rad = np.empty(first.rad.shape + (count,))
    mid[..., 0], rad[..., 0] = first.mid, first.rad
    h = 0
    while (1 << h) < count:  # entries [2^h, 2^(h+1)) at once: each is entry k - 2^h times z^(step 2^h)
        f = power(step << h)
        lo, hi = 1 << h, min(count, 2 << h)
        cur = _mul(MR(mid[..., :hi - lo], rad[..., :hi - lo]), modulus_upper(f.mid)[..., None],
                   MR(f.mid[..., None], f.rad[..., None]))
        mid[..., lo:hi], rad[..., lo:hi] = cur.mid, cur.rad
        h += 1
    if not (np.all(np.isfinite(mid)) and np.all(np.isfinite(rad))):
        raise ArithmeticError("a power left the float64 range")
    return MR(mid, rad)


def _gamma(n: int) -> float:
    """An upper bound of gamma_n = n u / (1 - n u)."""
    if not (n + 1) * U <= 0.25:
        raise ArithmeticError(f"a product with {n} terms is beyond the a-priori bound")
    return up(up(n * U) / (1 - 2 * n * U))


def table_step(L: int) -> int:
    """T, the block length of the split ``l = m T + k`` (about sqrt(L))."""
    return max(1, math.isqrt(max(L - 1, 0)) + 1)


def vandermonde_midrad(W: MR, S: MR, power: Callable[[int], MR], L: int,
                       factor: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """``factor * Re sum_n W S z^l`` for ``0 <= l < L`` as float64 disks (see the module).

    ``W``, ``S``: disks of shape (batch, n); ``power(e)``: disks of ``z^e`` of the same
    shape, asked for ``e = 2^h`` and ``e = T 2^h`` (:func:`table_step`); the caller
    encloses them (FLINT).  Raises ``arith.midrad.RangeError`` or ``ArithmeticError``
    when a disk leaves the range its bounds hold in.
    """
    if factor not in (1, 2):
        raise ValueError("factor must be 1 or 2")
    batch, n = W.mid.shape
    T = table_step(L)
    blocks = -(-L // T)
    A = _power_table(power, 1, T, _mul(W, modulus_upper(S.mid), S))       # (batch, n, T): W S z^k
    Bt = _power_table(power, T, blocks, MR.exact(np.ones(W.mid.shape)))    # (batch, n, blocks): z^(T m)
    Am, Ar = np.swapaxes(A.mid, 1, 2), np.swapaxes(A.rad, 1, 2)   # (batch, T, n)
    Bm, Br = Bt.mid, Bt.rad                                       # (batch, n, blocks)
    mid = np.empty((batch, T, blocks), dtype=np.complex128)
    mid.real = np.matmul(Am.real, Bm.real) - np.matmul(Am.imag, Bm.imag)
    mid.imag = np.matmul(Am.real, Bm.imag) + np.matmul(Am.imag, Bm.real)
    aA, aB = abs_upper(Am), abs_upper(Bm)    # >= |re| + |im| >= |entry|
    # rounding of the midpoint: each part is two real products (n terms each) and one
    # addition, so its error is at most gamma_{n+1} (|re||re| + |im||im| ...) + u |value|
    rounding = up(_gamma(n + 1) * sum_upper(np.matmul(aA, aB), n))
    rounding = up(rounding + up(U * abs_upper(mid)) + 4 * n * UNDERFLOW)
    mA, mB = modulus_upper(Am), modulus_upper(Bm)
    spread = up(sum_upper(np.matmul(up(mA + Ar), Br), n) + sum_upper(np.matmul(Ar, mB), n))
    rad = up(rounding + spread)
    mid_l = (factor * mid.real).transpose(0, 2, 1).reshape(batch, T * blocks)[:, :L]
    rad_l = (up(factor * rad)).transpose(0, 2, 1).reshape(batch, T * blocks)[:, :L]
    if not (np.all(np.isfinite(mid_l)) and np.all(np.isfinite(rad_l))):
        rad_l = np.where(np.isfinite(mid_l) & np.isfinite(rad_l), rad_l, np.inf)
    return mid_l, rad_l
