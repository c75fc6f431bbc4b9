"""Diagonal kernels on float64 disks, many at once (proofs/diagonal_kernels.md, §3).

Input: for a batch of kernels b (channels x heads), disks of the weights ``W[b, n]``,
the start values ``S[b, n]`` and a function giving disks of the powers ``z[b, n]^e``
(``dd_powers``: double-double squarings).  Output: float64 arrays ``mid``, ``rad`` of shape
(batch, L) with ``|K_l - mid_l| <= rad_l`` for ``K_l = factor Re sum_n W S z^l``.

Write ``l = m T + k`` (``0 <= k < T``, T about sqrt(L)).  Then
``sum_n W_n S_n z_n^l = sum_n (W_n S_n z_n^k) (z_n^T)^m``: per kernel a (L/T x n) by
(n x T) matrix product of two power tables, each entry at most ``log2`` of the table's
length products away from the disks of ``z^(2^h)`` and ``z^(T 2^h)``.  The tables carry one
relative bound per row (Lemma D2) and a table of moduli (Lemma D5); the midpoint is two
real BLAS products (the real part only), the radius one per block of T outputs: a
matrix-vector product of table B's moduli with a bound of table A's (Lemma D6) times a
per-row constant plus a per-row term (Lemma D4).  The bounds assume IEEE round to
nearest, numpy's complex product formed from two real products and one addition per part,
and matrix products whose entries are sums of n products each rounded once per operation
(any order, fused or not).

``diagonal_terms_arrays`` and ``dd_powers`` form the inputs from double-double parameters
(``arith.dd_field.DDArrayField``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ...arith.double_double import DD
from ...arith.midrad import MR, U, UNDERFLOW, modulus_upper, up
from ..result import OK, Result
from .diagonal import diagonal_terms


#: entries whose midpoint has max(|re|, |im|) below this get an absolute bound (tau)
THETA = 2.0 ** -600
#: t = fl(sqrt(fl(re^2) + fl(im^2))) gives |z| <= t (1 + 3u) + MOD_ABS (Lemma D3)
MOD_ABS = 2.0 ** -536
#: the rounding of a complex product's midpoint: |m - ab| <= 3u |a||b| + PROD_ABS (Lemma D1)
PROD_ABS = 8 * UNDERFLOW
#: (1 + 3u)^2 <= 1 + 8u (an exact float)
_MOD2 = 1 + 8 * U


def _modulus(z: np.ndarray) -> np.ndarray:
    """t = fl(sqrt(re^2 + im^2)), four float operations (no bound by itself: Lemma D3)."""
    return np.sqrt(z.real * z.real + z.imag * z.imag)


def _row_max(a: np.ndarray) -> np.ndarray:
    return np.max(a.reshape(a.shape[0], -1), axis=1, initial=0.0)


def relative_bounds(d: MR) -> tuple[np.ndarray, np.ndarray]:
    """(rho, tau) per batch row with ``rad <= rho |mid| + tau`` for every entry of the row:
    rho from the entries with max(|re|, |im|) >= THETA, tau the largest radius of the others."""
    low = np.maximum(np.abs(d.mid.real), np.abs(d.mid.imag))
    big = low >= THETA
    ratio = up(np.divide(d.rad, low, out=np.zeros(low.shape), where=big))
    return _row_max(ratio), _row_max(np.where(big, 0.0, d.rad))


def _modulus_bound(t_max: np.ndarray) -> np.ndarray:
    """Per row, an upper bound of |mid| from the row's largest modulus t (Lemma D3)."""
    return up(up(t_max * (1 + 4 * U)) + MOD_ABS)


def _product_bounds(rho_a, tau_a, M_a, rho_b, tau_b, M_b):
    """Lemma D2: for m = fl(m_a m_b) of x_a, x_b with |x - m| <= rho |m| + tau and
    |m_a| <= M_a, |m_b| <= M_b: |x_a x_b - m| <= rho' |m| + tau' and |m| <= M'."""
    rho = up(up(up(rho_a + rho_b) + up(rho_a * rho_b)) + 3 * U)
    rho = up(rho / (1 - 3 * U))
    tau = up(up(up(tau_b * M_a) * up(1 + rho_a)) + up(tau_a * up(up(up(1 + rho_b) * M_b) + tau_b)))
    tau = up(tau + up(up(rho * PROD_ABS) + PROD_ABS))
    M = up(up(up(M_a * M_b) * (1 + 3 * U)) + PROD_ABS)
    return rho, tau, M


@dataclass
class _Table:
    """A power table's midpoints ``mid`` (batch, n, count) with, per batch row,
    ``|x - mid| <= rho |mid| + tau`` and ``|mid| <= M`` (Lemma D2), and a table ``mod`` of
    moduli with ``|mid| <= gam mod + alpha`` and ``mod <= tbar`` (Lemma D5)."""

    mid: np.ndarray
    rho: np.ndarray
    tau: np.ndarray
    M: np.ndarray
    mod: np.ndarray | None
    gam: float
    alpha: np.ndarray
    tbar: np.ndarray
    mod_max: np.ndarray | None = None


def _power_table(power: Callable[[int], MR], step: int, count: int, first: MR,
                 moduli: bool = True) -> _Table:
    """Midpoints of ``first * z^(step k)`` for ``0 <= k < count`` (shape (batch, count, n):
    k the middle axis, so that each stage writes whole rows), their bounds, and a table of
    their moduli (see ``_Table``); with ``moduli=False``, in place of the table, a bound
    ``mod_max`` (batch, n) of every entry the table would hold (Lemma D6).

    Entry k is entry ``k - 2^h`` times ``z^(step 2^h)`` (h the top bit of k), the factor's
    disks from ``power``: each entry is at most ``log2 count`` products from the
    enclosures, so rho grows with ``log2 count``, not with k.  The moduli table is built
    the same way, one real product per entry, from the moduli of the first column and of
    the factors (D3), with gam, alpha growing per level (Lemma D5)."""
    batch, n = first.mid.shape
    mid = np.empty((batch, count, n), dtype=np.complex128)
    mod = np.empty((batch, count, n)) if moduli else None
    mid[:, 0] = first.mid
    t0 = _modulus(first.mid)
    if moduli:
        mod[:, 0] = t0
    mod_max = None if moduli else t0
    rho, tau = relative_bounds(first)
    tbar = _row_max(t0)
    M = _modulus_bound(tbar)
    gam, alpha = 1 + 4 * U, np.full(batch, MOD_ABS)   # D3: 1 + 3u <= 1 + 4u
    h = 0
    while (1 << h) < count:  # entries [2^h, 2^(h+1)) at once: each is entry k - 2^h times z^(step 2^h)
        f = power(step << h)
        lo, hi = 1 << h, min(count, 2 << h)
        np.multiply(mid[:, :hi - lo], f.mid[:, None, :], out=mid[:, lo:hi])
        tf = _modulus(f.mid)
        if moduli:
            np.multiply(mod[:, :hi - lo], tf[:, None, :], out=mod[:, lo:hi])
        else:  # D6: every entry so far is at most mod_max, so every new one at most this
            mod_max = up(mod_max * np.maximum(tf, 1.0))
        rf, tauf = relative_bounds(f)
        tf_max = _row_max(tf)
        r2, t2, M2 = _product_bounds(rho, tau, M, rf, tauf, _modulus_bound(tf_max))
        rho, tau, M = np.maximum(rho, r2), np.maximum(tau, t2), np.maximum(M, M2)
        gam, alpha, tbar = _modulus_bounds(gam, alpha, tbar, tf_max)
        h += 1
    if not (np.all(np.isfinite(mid)) and np.all(np.isfinite(rho)) and np.all(np.isfinite(tau))):
        raise ArithmeticError("a power left the float64 range")
    return _Table(mid, rho, tau, M, mod, gam, alpha, tbar, mod_max)


def _modulus_bounds(gam: float, alpha: np.ndarray, tbar: np.ndarray, tf_max: np.ndarray):
    """Lemma D5: the new entries t_k = fl(t_p t_f) of a moduli table, with
    |m_p| <= gam t_p + alpha, t_p <= tbar and |m_f| <= (1+3u) t_f + MOD_ABS, t_f <= tf_max,
    have |m_k| <= gam' t_k + alpha' and t_k <= tbar' (the table's bounds are the larger)."""
    gam2 = up(up(gam * _MOD2) / (1 - U))
    a = up(up(gam * up(tbar * MOD_ABS)) + up(alpha * up(up(up(1 + 4 * U) * tf_max) + MOD_ABS)))
    a = up(up(a * (1 + 4 * U)) + up(up(gam2 * UNDERFLOW) + PROD_ABS))
    t2 = up(up(tbar * tf_max) * (1 + 2 * U))
    return gam2, np.maximum(alpha, a), np.maximum(tbar, t2)


def _mul(a: MR, b: MR) -> MR:
    """a b on disks (Lemma D1 for the midpoint's rounding)."""
    ma, mb = modulus_upper(a.mid), modulus_upper(b.mid)
    rad = up(up(ma * b.rad) + up(a.rad * mb))
    rad = up(rad + up(a.rad * b.rad))
    rad = up(rad + up(up(3 * U * ma) * mb))
    return MR(a.mid * b.mid, up(rad + PROD_ABS))


def _gamma(n: int) -> float:
    """An upper bound of gamma_n = n u / (1 - n u)."""
    if not (n + 1) * U <= 0.25:
        raise ArithmeticError(f"a product with {n} terms is beyond the a-priori bound")
    return up(up(n * U) / (1 - 2 * n * U))


def table_step(L: int) -> int:
    """T, the block length of the split ``l = m T + k`` (about sqrt(L))."""
    return max(1, math.isqrt(max(L - 1, 0)) + 1)


def vandermonde_midrad(W: MR, S: MR, power: Callable[[int], MR], L: int,
                       factor: int = 2, rows: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``factor * Re sum_n W S z^l`` for ``0 <= l < L`` as float64 disks (see the module).

    ``W``, ``S``: disks of shape (batch, n); ``power(e)``: disks of ``z^e`` of the same
    shape, asked for ``e = 2^h`` and ``e = T 2^h`` (:func:`table_step`).  Raises
    ``arith.midrad.RangeError`` or ``ArithmeticError`` when a disk leaves the range its
    bounds hold in.  Lemma D4 (proofs/diagonal_kernels.md) bounds the radius.  A dict passed
    as ``rows`` receives, per row, whether its sum is finite (``"finite"``) and its largest
    radius (``"max_rad"``), from the one sum the finiteness check takes and the block radii.
    """
    if factor not in (1, 2):
        raise ValueError("factor must be 1 or 2")
    batch, n = W.mid.shape
    T = table_step(L)
    blocks = -(-L // T)
    A = _power_table(power, 1, T, _mul(W, S), moduli=False)             # (batch, T, n): W S z^k
    # (batch, blocks, n): factor z^(T m), the factor (1 or 2) as the table's first column
    B = _power_table(power, T, blocks, MR.exact(np.full(W.mid.shape, float(factor))))
    # rows m, columns k: entry (m, k) is l = m T + k, so the rows laid end to end are the kernel
    At = np.swapaxes(A.mid, 1, 2)                                        # (batch, n, T)
    Bf = B.mid
    Re = np.matmul(Bf.real, At.real)
    Re -= np.matmul(Bf.imag, At.imag)
    # D6: one radius per block row, from the moduli of B times the bound of A's over the block
    P = np.matmul(B.mod, A.mod_max[:, :, None])[:, :, 0]                  # (batch, blocks)
    g = _gamma(n)
    # Lemma D4: |K - Re| <= (g + spread) S + u |Re| + C0 with S = sum_n |mA||mB|, and by D5
    # S <= gA gB (P (1 + (2n+2)u) + n 2^-1072) + n (gA tbarA alphaB + alphaA gB tbarB + alphaA alphaB);
    # the computed |Re| <= (1 + u)(1 + g) S + 8n eta (Lemma D4), so u |Re| joins the S term
    spread = up(B.rho + up(A.rho * up(1 + B.rho)))
    gs = up(up(g + spread) + up(U * up((1 + 2 * U) * up(1 + g))))   # 1 + 2u >= 1 + u, exact
    gg = up(A.gam * B.gam)
    c1 = up(up(gs * gg) * (1 + (2 * n + 2) * U))
    c0 = up(up(B.tau * up(1 + A.rho)) * A.M)
    c0 = up(c0 + up(up(A.tau * up(1 + B.rho)) * B.M))
    c0 = up(n * up(c0 + up(A.tau * B.tau)))
    mod_terms = up(up(up(A.gam * A.tbar) * B.alpha) + up(up(B.gam * B.tbar) * A.alpha))
    mod_terms = up(up(mod_terms + up(A.alpha * B.alpha)) + up(gg * UNDERFLOW))
    c0 = up(c0 + up(gs * up(n * mod_terms)))
    c0 = up(c0 + n * 9 * UNDERFLOW)            # the two dot products' underflow (and u times it)
    # the sweep below rounds twice: both constants inflated by (1 + 4u)
    c1 = up(c1 * (1 + 4 * U))
    c0 = up(up(c0 * (1 + 4 * U)) + 8 * UNDERFLOW)
    rad = P
    rad *= c1[:, None]
    rad += c0[:, None]
    mid_l = Re.reshape(batch, T * blocks)[:, :L]
    rad_l = np.broadcast_to(rad[:, :, None], (batch, blocks, T)).reshape(batch, T * blocks)[:, :L]
    # a sum is finite only if every term is (the entrywise test runs only when it is not)
    finite = np.isfinite(mid_l.sum(axis=1))
    clean = bool(finite.all()) and bool(np.all(np.isfinite(rad)))
    if not clean:
        rad_l = np.where(np.isfinite(mid_l) & np.isfinite(rad_l), rad_l, np.inf)
    if rows is not None:   # every block has an entry below L, so the blocks' largest is the row's
        rows["finite"] = finite
        rows["max_rad"] = (np.max(rad, axis=1) if clean else np.max(rad_l, axis=1)) if L else np.zeros(batch)
    return mid_l, rad_l


def disks_of(x: DD) -> MR:
    """Float64 disks containing double-double disks: the high parts as midpoints, the low
    parts (each within one rounding of its high part) added to the radii."""
    return MR(x.rh + 1j * x.ih, up(up(np.abs(x.rl) + np.abs(x.il)) + x.rad))


def dd_powers(z: DD) -> Callable[[int], MR]:
    """``power(e)``: float64 disks of ``z^e`` (``e >= 1``), as the product of the double-double
    squarings ``z^(2^j)`` over the bits of e (squarings cached), converted once.  Each
    squaring (``DD.square``) and product (``DD.mul``) encloses its result for every point of
    its operands' disks, so the disks hold for every point of z's."""
    dd_power = _dd_power(z)
    return lambda e: disks_of(dd_power(e))


def diagonal_terms_arrays(F, lam: DD, dt: DD, B: DD, C: DD, L: int, disc: str,
                          re_positive: np.ndarray) -> Result:
    """:func:`diagonal.diagonal_terms` for every entry of the arrays at once (all of one
    shape), on a field whose elements are arrays (``arith.dd_field.DDArrayField``).

    The procedure branches on the sign of ``Re lambda`` for ``dss``; the entries are run
    in (at most) two groups, one per sign, and put back in place.  ``value``: (W, start,
    z) as ``DD`` arrays of the input shape, and the factor.  A status other than ok is
    returned as it came (its mode index then names the group, not a mode)."""
    shape = lam.rh.shape
    parts = {name: [np.empty(shape, dtype=np.float64) for _ in range(5)] for name in ("W", "start", "z")}
    factor = 2
    for flag in np.unique(re_positive):
        sel = np.asarray(re_positive) == flag
        t = diagonal_terms(F, [lam[sel]], [dt[sel]], [B[sel]], [C[sel]], L, disc, [bool(flag)])
        if not t.ok:
            return t
        factor = t.value.factor
        for name, got in (("W", t.value.W[0]), ("start", t.value.start[0]), ("z", t.value.z[0])):
            for a, v in zip(parts[name], (got.rh, got.rl, got.ih, got.il, got.rad)):
                a[sel] = v
    W, start, z = (DD(*parts[name]) for name in ("W", "start", "z"))
    return Result(OK, (W, start, z, factor))


# --- the tight form (proofs/diagonal_kernels.md, §3b): tables in double-double, exact products

#: a row's exponent is raised to at least this (its slices' grids stay above 2^-420) and
#: must be at most the ceiling (no product or sum overflows)
_EXP_FLOOR, _EXP_CEIL = -350, 400


def slice_bits(inner: int) -> int:
    """beta with 2 beta + log2(inner) <= 53: the products of two slices, and their sums over
    ``inner`` terms in any order, are exact (Lemma D7)."""
    return (53 - max(1, (inner - 1).bit_length())) // 2


def _exponents(top: np.ndarray) -> np.ndarray:
    """Per row, an integer E >= _EXP_FLOOR with every |entry| < 2^E (``top``: the row maxima)."""
    if not (np.all(np.isfinite(top)) and float(np.max(top, initial=0.0)) < 2.0 ** _EXP_CEIL):
        raise ArithmeticError("a table entry is not finite or exceeds 2^400")
    return np.where(top > 0, np.maximum(np.frexp(top)[1], _EXP_FLOOR), _EXP_FLOOR)


def _leading_slice(x: np.ndarray, e: np.ndarray, beta: int) -> tuple[np.ndarray, np.ndarray]:
    """x = s + r exactly, s a multiple of 2^(e - beta) with |s| <= 2^e and |r| <= 2^(e - beta - 1),
    for |x| < 2^e (``e`` broadcasts against x): s = fl(fl(x + c) - c), c = 1.5 2^(e - beta + 52)
    (Lemma D7)."""
    c = np.ldexp(1.5, e - beta + 52)
    s = (x + c) - c
    return s, x - s


def exact_products(X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``X @ Y`` for real float arrays X (batch, p, q), Y (batch, q, r): midpoints and a bound
    per entry of their distance to the exact products, about u |X Y| plus
    ``q 2^-beta gamma_q`` of ``max_row|X| max_col|Y|`` (Lemma D7): the leading slices' product
    is exact on BLAS, the two products with a rest carry a rounding 2^-beta times smaller.
    ArithmeticError for an entry that is not finite or above 2^400."""
    q = X.shape[-1]
    beta = slice_bits(q)
    ex = _exponents(np.max(np.abs(X), axis=-1, initial=0.0))        # (batch, p)
    ey = _exponents(np.max(np.abs(Y), axis=-2, initial=0.0))        # (batch, r)
    x1, xr = _leading_slice(X, ex[..., None], beta)
    y1, yr = _leading_slice(Y, ey[..., None, :], beta)
    t = np.matmul(x1, yr)
    t += np.matmul(xr, Y)
    mid = np.matmul(x1, y1)
    mid += t
    # |exact - mid| <= u |mid| + kappa 2^(ex + ey) + 3 q 2^-1074, kappa = q 2^-beta (gamma_q + u (1 + gamma_q))
    g = _gamma(q)
    kappa = up(up(q * 2.0 ** -beta) * up(g + up(U * (1 + g))))
    scale = np.ldexp(1.0, ex[..., :, None] + ey[..., None, :])       # exact: -700 <= ex + ey <= 800
    return mid, up(up(up(U * np.abs(mid)) + up(kappa * scale)) + 3 * q * 2.0 ** -1074)


def _dd_table(power: Callable[[int], DD], step: int, count: int, first: DD) -> DD:
    """Double-double disks of ``first * z^(step k)`` for ``0 <= k < count``, shape (batch,
    count, n): entry k is entry ``k - 2^h`` times ``z^(step 2^h)`` (h the top bit of k),
    every product a ``DD.mul`` (its disks hold every point's product)."""
    batch, n = first.rh.shape
    parts = [np.empty((batch, count, n)) for _ in range(5)]
    for a, v in zip(parts, (first.rh, first.rl, first.ih, first.il, first.rad)):
        a[:, 0] = v
    h = 0
    while (1 << h) < count:
        f = power(step << h)
        lo, hi = 1 << h, min(count, 2 << h)
        prev = DD(*(np.ascontiguousarray(a[:, :hi - lo]) for a in parts))
        fb = DD(*(np.ascontiguousarray(np.broadcast_to(a[:, None, :], prev.rh.shape))
                  for a in (f.rh, f.rl, f.ih, f.il, f.rad)))
        got = prev.mul(fb)
        for a, v in zip(parts, (got.rh, got.rl, got.ih, got.il, got.rad)):
            a[:, lo:hi] = v
        h += 1
    return DD(*parts)


def _dd_power(z: DD) -> Callable[[int], DD]:
    """``power(e)``: double-double disks of ``z^e`` (``e >= 1``), the product of the cached
    squarings ``z^(2^j)`` over the bits of e."""
    squares = [z]

    def power(e: int) -> DD:
        if e < 1:
            raise ValueError("power: e >= 1")
        while (1 << len(squares)) <= e:
            squares.append(squares[-1].square())
        acc = None
        for j in range(e.bit_length()):
            if e >> j & 1:
                acc = squares[j] if acc is None else acc.mul(squares[j])
        return acc
    return power


def vandermonde_tight(W: DD, S: DD, z: DD, L: int, factor: int = 2,
                      rows: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``factor * Re sum_n W S z^l`` for ``0 <= l < L`` as float64 disks with a radius per
    entry (Lemma D8): the power tables of :func:`vandermonde_midrad` formed in double-double
    and rounded to float64 disks once, the real part of their product by
    :func:`exact_products`, and the tables' radii carried by one product of nonnegative
    arrays per block.  ``W``, ``S``, ``z``: double-double disks (batch, n).  The radius is some
    ``2u sum_n |W S z^l| + u |K_l|`` where ``vandermonde_midrad``'s is some ``100u`` of the
    sum.  ``rows`` as there.  ArithmeticError or RangeError where a bound does not hold."""
    if factor not in (1, 2):
        raise ValueError("factor must be 1 or 2")
    batch, n = W.rh.shape
    T = table_step(L)
    blocks = -(-L // T)
    power = _dd_power(z)
    a = disks_of(_dd_table(power, 1, T, W.mul(S)))                        # (batch, T, n): W S z^k
    b = disks_of(_dd_table(power, T, blocks, DD.exact(np.full((batch, n), float(factor)))))
    X = np.concatenate([b.mid.real, -b.mid.imag], axis=-1)               # (batch, blocks, 2n)
    Y = np.ascontiguousarray(np.swapaxes(np.concatenate([a.mid.real, a.mid.imag], axis=-1), 1, 2))
    mid, rad = exact_products(X, Y)                                      # (batch, blocks, T)
    # |K - Re sum mB mA| <= sum_n rB (|mA| + rA) + |mB| rA <= G, per block with the largest
    # |mA| + rA and rA over the block's k: a sum of 2n products of floats (Lemma 4 of
    # proofs/outputs.md for BLAS), so G <= (fl(G) + 2n 2^-1074) (1 + 2 gamma_2n)
    mA = up(modulus_upper(a.mid) + a.rad)
    wA = np.concatenate([np.max(mA, axis=1), np.max(a.rad, axis=1)], axis=-1)      # (batch, 2n)
    G = np.matmul(np.concatenate([b.rad, modulus_upper(b.mid)], axis=-1), wA[:, :, None])   # (batch, blocks, 1)
    G = up(up(G + 2 * n * 2.0 ** -1074) * up(1 + 2 * _gamma(2 * n)))
    rad = up(rad + G)
    mid_l = mid.reshape(batch, blocks * T)[:, :L]
    rad_l = rad.reshape(batch, blocks * T)[:, :L]
    if not (np.all(np.isfinite(mid_l)) and np.all(np.isfinite(rad_l))):
        raise ArithmeticError("a kernel entry or its bound is not finite")
    if rows is not None:
        rows["finite"] = np.ones(batch, dtype=bool)
        rows["max_rad"] = np.max(rad_l, axis=1, initial=0.0)
    return mid_l, rad_l
