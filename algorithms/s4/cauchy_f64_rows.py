"""The per-pair work of the float64 Cauchy sums (``midrad.cauchy_direct_midrad``) on a
block of roots: the arrays the block's matrix products read.

For roots k in [s, e) and poles j (double-float pairs, rebased on one grid) the first
step forms, with these operations in this order (proofs/midrad_filter.md, Lemmas 8-9)::

    dre = (zr_k - pr_j) + (zlr_k - plr_j)      dim = (zi_k - pi_j) + (zli_k - pli_j)
    nrm = dre * dre + dim * dim
    inv = 1 / nrm      qr = dre * inv      qi = dim * inv

and the per-root maxima of ``inv`` (NaN where one is NaN, as ``ndarray.max``).  The second
step cuts each q exactly into a slice on the grid of C_t = 1.5 2^(52 - beta) tau and a rest
(Lemma 10) and takes T = sqrt(inv)::

    q1 = (q + C_t) - C_t      q2 = q - q1

The numpy form (``rows_numpy``, ``slice_numpy``) runs each line as a pass over the block.
The compiled form (``fused``: one loop over the roots, numba, when installed with
``pip install "s4cert[fast]"``) runs the same IEEE operations on the same operands for
one root at a time, with tau per root (the least power of two >= up((1 + 8u) sqrt(max_j
inv)), one choice Lemma 10 allows), and writes root-major.  numba compiles without
fast-math flags (so no contraction into fused multiply-adds and no reassociation) and with
``error_model="numpy"`` (a division by 0 gives inf or NaN as in numpy), so each operation
rounds once to nearest as in the numpy passes, and the outputs are bitwise those of
``fused_numpy``.  That is checked before the loop is first used: its gate ``ROWS`` runs both
forms on a probe where a fused multiply-add, a flushed subnormal or a mishandled NaN or
zero division would change some output, and takes the loop only when every output agrees
(NaN with NaN, every other value bitwise); else, and with ``S4CERT_COMPILED=0``, the numpy
passes run.  The proofs therefore cover both forms.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ...arith.compiled import Gate, jit, same_floats
from ...arith.midrad import U, UNDERFLOW, compiled_rounding, up, up_into

#: tau's factor (1 + 8u) before it is rounded up, exact
UP8 = 1.0 + 8 * U

#: problems with fewer (root, pole) pairs than this stay on numpy (the compiled loop's first
#: use in a process costs numba's import and a cache load, about half a second, and its
#: first use after installing a compilation, about two seconds)
MIN_PAIRS = 1 << 17


def rows_numpy(z: tuple, p: tuple, s: int, e: int, rows: np.ndarray, inv: np.ndarray,
               tmp: np.ndarray, nrm: np.ndarray) -> np.ndarray:
    """The first step by numpy passes; ``z`` = (zr, zi, zlr, zli) of all roots, ``p`` the
    poles' (pr, pi, plr, pli) as columns (n x 1); ``rows`` (4n x w), ``inv``, ``tmp``,
    ``nrm`` (n x w) work arrays, w = e - s.  Returns the per-root maxima of inv."""
    zr, zi, zlr, zli = z
    pre, pim, plre, plim = p
    n = inv.shape[0]
    dre, dim = rows[2 * n:3 * n], rows[3 * n:]
    np.subtract(zr[None, s:e], pre, out=dre)           # exact (Lemma 8)
    dre += np.subtract(zlr[None, s:e], plre, out=tmp)
    np.subtract(zi[None, s:e], pim, out=dim)
    dim += np.subtract(zli[None, s:e], plim, out=tmp)
    np.multiply(dre, dre, out=nrm)
    nrm += np.multiply(dim, dim, out=tmp)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):  # the caller refuses 0 and overflow
        np.divide(1.0, nrm, out=inv)                   # 1/|d|^2
        np.multiply(dre, inv, out=dre)                 # Re(1/d)
        np.multiply(dim, inv, out=dim)                 # -Im(1/d)
    return inv.max(axis=0)


def slice_numpy(rows: np.ndarray, inv: np.ndarray, Ct) -> None:
    """The second step by numpy passes (``Ct`` a float, or one per root)."""
    n = inv.shape[0]
    np.sqrt(inv, out=inv)                              # T ~ 1/|d|
    q1, q = rows[:2 * n], rows[2 * n:]
    np.subtract(np.add(q, Ct, out=q1), Ct, out=q1)     # q on the grid, exactly
    q -= q1                                            # the rests, exact


def tau_per_root(vmax: np.ndarray) -> np.ndarray:
    """Per root, the least power of two >= up((1 + 8u) sqrt(max_j inv)) (Lemma 10's tau)."""
    m = up(np.sqrt(vmax) * UP8)                   # up((1 + 8u) T)
    f, ex = np.frexp(m)
    return np.ldexp(np.ones_like(m), ex - (f == 0.5))


def fused_numpy(z: tuple, p: tuple, s: int, e: int, beta: int) -> tuple:
    """What the compiled loop ``fused`` computes, by numpy passes (for the probe and the
    tests): the first step, tau per root, the second step with C_t = 1.5 2^(52 - beta) tau.
    Returns (rows (4n x w), T (n x w), vmax, tau)."""
    n, w = len(p[0]), e - s
    rows, inv = np.empty((4 * n, w)), np.empty((n, w))
    with np.errstate(all="ignore"):
        vmax = rows_numpy(z, [x[:, None] for x in p], s, e, rows, inv, np.empty((n, w)), np.empty((n, w)))
        tau = tau_per_root(vmax)
        slice_numpy(rows, inv, 1.5 * 2.0 ** (52 - beta) * tau)
    return rows, inv, vmax, tau


@lru_cache(maxsize=1)
def _loops():
    """The compiled loop (numba must be installed)."""
    up_c, _ = compiled_rounding()

    def fused_loop(zr, zi, zlr, zli, pr, pi, plr, pli, s, e, ctc, out, vmax, tau):  # pragma: no cover (compiled)
        # out: (B, 5n), root-major: per root [q1r, q1i, q2r, q2i, T] (the numpy form's
        # rows are out's columns)
        n = pr.shape[0]
        one = np.empty(1, dtype=np.int64)
        as_float = one.view(np.float64)
        for k in range(e - s):
            a, b, c, d = zr[s + k], zi[s + k], zlr[s + k], zli[s + k]
            row = out[k]
            v = row[4 * n:5 * n]
            bits = v.view(np.int64)
            bad = False
            for j in range(n):
                dre = (a - pr[j]) + (c - plr[j])
                dim = (b - pi[j]) + (d - pli[j])
                nrm = dre * dre + dim * dim
                x = 1.0 / nrm
                v[j] = x
                row[2 * n + j] = dre * x
                row[3 * n + j] = dim * x
                bad |= x != x
            m = np.int64(0)
            for j in range(n):
                # x >= +0 (nrm is +0 or more): from +0 to +inf the bit patterns order as the values
                m = max(m, bits[j])
            one[0] = m
            mx = np.nan if bad else as_float[0]
            vmax[k] = mx
            t = up_c(np.sqrt(mx) * UP8)                                # up((1 + 8u) sqrt(mx))
            if np.isfinite(t):
                f, ex = math.frexp(t)
                tk = math.ldexp(1.0, ex - 1 if f == 0.5 else ex)
            else:
                tk = 1.0                                                 # numpy's frexp: (inf or nan, 0)
            tau[k] = tk
            ct = ctc * tk
            for j in range(2 * n):
                q = row[2 * n + j]
                y = (q + ct) - ct
                row[j] = y
                row[2 * n + j] = q - y
            for j in range(n):
                v[j] = np.sqrt(v[j])

    return jit(fused_loop)


def _probe_problem():
    """A small block whose outputs a fused multiply-add, a flushed subnormal, a division
    by zero or a NaN would each change: roots and poles with long mantissas, one pair at
    distance 0, one at a distance whose square underflows, and a NaN pole."""
    rng = np.random.default_rng(20261201)
    w, n = 37, 11
    z = [rng.standard_normal(w) for _ in range(2)] + [rng.standard_normal(w) * 2.0 ** -60 for _ in range(2)]
    p = [rng.standard_normal(n) for _ in range(2)] + [rng.standard_normal(n) * 2.0 ** -60 for _ in range(2)]
    p[0][0], p[1][0], p[2][0], p[3][0] = z[0][3], z[1][3], z[2][3], z[3][3]          # d = 0 at (0, 3)
    z[0][5] = p[0][1] + 2.0 ** -540
    z[1][5], z[2][5], z[3][5], p[2][1], p[3][1] = p[1][1], 0.0, 0.0, 0.0, 0.0      # |d|^2 subnormal at (1, 5)
    p[0][2] = np.nan
    return [np.ascontiguousarray(x) for x in z], [np.ascontiguousarray(x) for x in p], w, n


def fused(fn, z: tuple, p: tuple, s: int, e: int, beta: int, out: np.ndarray) -> tuple:
    """Run the compiled loop on roots [s, e) into ``out`` (a (B, 5n) buffer, B >= e - s):
    returns (Q1, Q2, T, vmax, tau) with Q1 = [q1r; q1i] and Q2 (2n x w) and T (n x w) as
    views of ``out`` in the numpy form's layout."""
    n, w = len(p[0]), e - s
    vmax, tau = np.empty(w), np.empty(w)
    fn(*z, *p, s, e, 1.5 * 2.0 ** (52 - beta), out, vmax, tau)
    v = out[:w].T
    return v[:2 * n], v[2 * n:4 * n], v[4 * n:], vmax, tau


def _agree(fn) -> bool:
    """Whether the loop ``fn`` gives bitwise the numpy passes' outputs on the probe."""
    z, p, w, n = _probe_problem()
    beta = 21
    rows, T, vmax, tau = fused_numpy(z, p, 0, w, beta)
    out = np.full((w + 3, 5 * n), 7.0)
    Q1, Q2, T2, vmax2, tau2 = fused(fn, z, p, 0, w, beta, out)
    return all(same_floats(a, b) for a, b in ((rows[:2 * n], Q1), (rows[2 * n:], Q2), (T, T2), (vmax, vmax2),
                                              (tau, tau2)))


#: the rows loop: from ``MIN_PAIRS`` (root, pole) pairs on, where it reproduced the numpy
#: passes bitwise on the probe
ROWS = Gate("float64 Cauchy rows", MIN_PAIRS, lambda: _agree(_loops()))


def compiled(pairs: int):
    """The compiled rows loop for a problem of ``pairs`` pairs when ``ROWS.use(pairs)``,
    else None (the numpy passes)."""
    return _loops() if ROWS.use(pairs) else None


def radius_numpy(GTb: np.ndarray, G: np.ndarray, rank1: np.ndarray, tau: np.ndarray, c_sum: float,
                 under: float, n_under: float, out_mid: np.ndarray, out_rad: np.ndarray, s: int) -> None:
    """A block's sums and radii into columns s.. of ``out_mid``/``out_rad`` (K rows), by numpy
    passes (``cauchy_direct_midrad``, Lemma 10): the radius is sum_upper of the radius
    product GTb (items 2 and 4), the rest's rounding rank1 tau with the underflows, and
    u |G| per part (item 3), every step rounded up.  Changes GTb[:K] in place."""
    K, w = out_rad.shape[0], G.shape[1]
    out_mid.real[:, s:s + w], out_mid.imag[:, s:s + w] = G[:K], G[K:]
    extra = up(up(up(rank1[:, None] * tau[None, :]) + under) + n_under)
    rad = up_into(up_into(np.multiply(GTb[:K], c_sum, out=GTb[:K])) + extra)
    g1 = np.abs(G[:K])
    g1 += np.abs(G[K:])
    g1 = up_into(np.multiply(up_into(g1), U, out=g1))
    np.add(rad, g1, out=out_rad[:, s:s + w])
    up_into(out_rad[:, s:s + w])


@lru_cache(maxsize=1)
def _radius_loop():
    up_c, _ = compiled_rounding()

    def radius_loop(GTb, G, rank1, tau, c_sum, under, n_under, out_mid, out_rad, s):  # pragma: no cover (compiled)
        K, w = out_rad.shape[0], G.shape[1]
        for c in range(K):
            for k in range(w):
                a, b = G[c, k], G[K + c, k]
                out_mid[c, s + k] = complex(a, b)
                ex = up_c(up_c(up_c(rank1[c] * tau[k]) + under) + n_under)
                r = up_c(up_c(GTb[c, k] * c_sum) + ex)
                g1 = up_c(up_c(abs(a) + abs(b)) * U)
                out_rad[c, s + k] = up_c(r + g1)

    return jit(radius_loop)


def _radius_agrees() -> bool:
    """Whether the compiled form of ``radius_numpy`` (the same operations per entry, tau
    one per root) gives bitwise its outputs on a probe."""
    fn = _radius_loop()
    rng = np.random.default_rng(20261201)
    K, w = 3, 37
    GTb = rng.random((K + 1, w)) * 10.0 ** rng.integers(-20, 20, (K + 1, w))
    G = rng.standard_normal((2 * K, w)) * 10.0 ** rng.integers(-20, 20, (2 * K, w))
    G[0, :3] = -0.0
    rank1, tau = rng.random(K), 2.0 ** rng.integers(-30, 30, w).astype(np.float64)
    outs = []
    for f in (radius_numpy, fn):
        mid, rad = np.full((K, w + 5), np.nan, dtype=np.complex128), np.full((K, w + 5), np.nan)
        f(GTb.copy(), G, rank1, tau, 1.0 + 130 * U, 64 * 2.0 ** -1068, 64 * UNDERFLOW, mid, rad, 2)
        outs.append((mid.real, mid.imag, rad))
    return all(same_floats(a, b) for a, b in zip(*outs))


#: the radius loop: with the rows loop, where it reproduced ``radius_numpy`` bitwise
RADIUS = Gate("float64 Cauchy radii", MIN_PAIRS, _radius_agrees, requires=(ROWS,))


def radius_compiled():
    """The compiled ``radius_numpy`` when ``RADIUS.open()``, else None."""
    return _radius_loop() if RADIUS.open() else None
