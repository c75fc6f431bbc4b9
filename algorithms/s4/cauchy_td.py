"""Cauchy sums on the root grid on triple-double disks, fused: the disk filter's ``cauchy``
primitive for ``arith.triple_double.TD``.

S_c(z_k) = sum_j a_jc / (z_k - mu_j) for every root z_k and weight set c, the roots, poles
and weights given as TD disks, the sums returned as TD disks, in one fixed order of TD
operations (``proofs/disk_filter.md``, section 5): for each root, the poles in order j = 0,
1, ..., n - 1, and per pole

1. d = z_k - mu_j (``TD.sub``: ``add`` of the negated pole),
2. l = the separation bound of d (``_lower``: from d's leading parts, its tails and radius),
3. q = 1/d (``TD.inv``; ``RangeError`` where d may contain 0),
4. for each set c: t = q a_jc (``TD.mul``), then S_c = t for j = 0 and S_c = S_c + t
   (``TD.add``) after.

``cauchy_sums_td`` runs that order in numpy, vectorized over blocks of roots (the TD methods
on arrays); the compiled loop ``_block_loop`` (numba, when installed) performs, per root,
exactly those operations with the element operations ``td_add``, ``td_mul``, ``td_inv`` of
``arith.td_jit`` (which are bitwise the TD methods), vectorized over a block of roots with
the pole's and the weights' floats held in registers, and no array of (root, pole) pairs.
It is used behind the gate ``GATE``: its probe runs both forms on probe disks (roots of
unity, poles near the grid, tiny and huge weights, radii, blocks cut short) and opens only
when every output, the separation bound included, agrees bitwise; ``S4CERT_COMPILED=0``
turns it off.
"""
from __future__ import annotations

import math

import numpy as np

from ...arith import td_jit
from ...arith.compiled import Gate, installed, jit, same_floats
from ...arith.midrad import RangeError
from ...arith.triple_double import TD, concat, roots_of_unity_td

#: (root, pole) pairs from which the compiled loop runs
MIN_PAIRS = 1 << 12
#: roots per block of the compiled loop (its sums and inverses stay in the second-level cache)
BLOCK_ROOTS = 512
#: roots per block of the numpy form
BLOCK_ROOTS_NUMPY = 1 << 14
#: the separation bound's factors and allowance (``_lower``, proofs/disk_filter.md section 5)
_T_UP, _L_DOWN, _L_TINY = 1.0 + 2.0 ** -50, 1.0 - 2.0 ** -50, 2.0 ** -1000


def _lower_np(d: TD) -> np.ndarray:
    """A lower bound of |x| over each disk of d, 0 where it may be 0: m = max(|r0|, |i0|), t the
    rounded sum of the other parts' moduli and the radius, b = fl(t (1 + 2^-50)) + 2^-1000 >= the
    exact sum, then fl(fl(m - b) (1 - 2^-50)) - 2^-1000 rounded, where positive."""
    m = np.maximum(np.abs(d.r0), np.abs(d.i0))
    t = ((np.abs(d.r1) + np.abs(d.r2)) + (np.abs(d.i1) + np.abs(d.i2))) + d.rad
    b = t * _T_UP + _L_TINY
    low = (m - b) * _L_DOWN - _L_TINY
    return np.where(low > 0, low, 0.0)


def _lower(r0, r1, r2, i0, i1, i2, rad):  # pragma: no cover (compiled): _lower_np of one disk
    m = max(abs(r0), abs(i0))
    t = ((abs(r1) + abs(r2)) + (abs(i1) + abs(i2))) + rad
    b = t * _T_UP + _L_TINY
    low = (m - b) * _L_DOWN - _L_TINY
    return low if low > 0 else 0.0


def cauchy_sums_td(Z: TD, poles: TD, weights: list[TD]) -> tuple[list[TD], float]:
    """Disks of S_c(z_k) = sum_j a_jc / (z_k - mu_j) for each weight set, and a lower bound of
    min |z_k - mu_j| (inf without poles): the compiled loop on problems of ``MIN_PAIRS`` pairs
    and more where its gate is open, else the numpy form; the same numbers either way.
    RangeError where a disk of z - mu may contain 0 or a value leaves TD's range."""
    M, n = len(Z), len(poles)
    if any(len(a) != n for a in weights):
        raise ValueError("every weight set needs one weight per pole")
    if n == 0:
        return [TD.exact(np.zeros(M)) for _ in weights], math.inf
    if not weights:
        return [], _numpy_form(Z, poles, [TD.exact(np.zeros(n))])[1]
    if GATE.use(M * n):
        return _compiled_form(Z, poles, weights, BLOCK_ROOTS)
    return _numpy_form(Z, poles, weights)


def _numpy_form(Z: TD, poles: TD, weights: list[TD]) -> tuple[list[TD], float]:
    """The sums in the fixed order, in numpy (TD's methods), over blocks of roots."""
    M, n = len(Z), len(poles)
    out: list[list[TD]] = [[] for _ in weights]
    sep = math.inf
    for s in range(0, M, BLOCK_ROOTS_NUMPY):
        z = Z[s:s + BLOCK_ROOTS_NUMPY]
        low = np.full(len(z), np.inf)
        sums: list = [None] * len(weights)
        for j in range(n):
            d = z.sub(poles[j:j + 1])
            lj = _lower_np(d)
            low = np.where(lj < low, lj, low)
            q = d.inv()
            for c, a in enumerate(weights):
                t = q.mul(a[j:j + 1])
                sums[c] = t if j == 0 else sums[c].add(t)
        sep = min(sep, float(np.min(low)))
        for c in range(len(weights)):
            out[c].append(sums[c])
    return [concat(parts) if len(parts) > 1 else parts[0] for parts in out], sep


def _inverses(z0, z1, z2, z3, z4, z5, z6, p0, p1, p2, p3, p4, p5, p6,
              Q0, Q1, Q2, Q3, Q4, Q5, Q6, low):  # pragma: no cover (compiled)
    """Steps 1-3 for one pole (p: its negated floats) at a block of roots (z): the inverses
    into Q, the separation bounds folded into low; the flags (zero, range, near)."""
    zero, rng, near = False, False, False
    for k in range(z0.shape[0]):
        d0, d1, d2, d3, d4, d5, d6, f = td_jit.td_add(z0[k], z1[k], z2[k], z3[k], z4[k], z5[k], z6[k],
                                                      p0, p1, p2, p3, p4, p5, p6)
        lj = _lower(d0, d1, d2, d3, d4, d5, d6)
        low[k] = lj if lj < low[k] else low[k]
        q0, q1, q2, q3, q4, q5, q6, z, g, h = td_jit.td_inv(d0, d1, d2, d3, d4, d5, d6)
        Q0[k], Q1[k], Q2[k], Q3[k], Q4[k], Q5[k], Q6[k] = q0, q1, q2, q3, q4, q5, q6
        zero, rng, near = zero | z, rng | f | g, near | h
    return zero, rng, near


def _first_terms(Q0, Q1, Q2, Q3, Q4, Q5, Q6, a0, a1, a2, a3, a4, a5, a6,
                 S0, S1, S2, S3, S4, S5, S6):  # pragma: no cover (compiled)
    """Step 4 for the first pole: S = q a; whether a value is out of range."""
    fail = False
    for k in range(Q0.shape[0]):
        t0, t1, t2, t3, t4, t5, t6, f = td_jit.td_mul(Q0[k], Q1[k], Q2[k], Q3[k], Q4[k], Q5[k], Q6[k],
                                                      a0, a1, a2, a3, a4, a5, a6)
        S0[k], S1[k], S2[k], S3[k], S4[k], S5[k], S6[k] = t0, t1, t2, t3, t4, t5, t6
        fail = fail | f
    return fail


def _next_terms(Q0, Q1, Q2, Q3, Q4, Q5, Q6, a0, a1, a2, a3, a4, a5, a6,
                S0, S1, S2, S3, S4, S5, S6):  # pragma: no cover (compiled)
    """Step 4 for a later pole: S = S + q a; whether a value is out of range."""
    fail = False
    for k in range(Q0.shape[0]):
        t0, t1, t2, t3, t4, t5, t6, f = td_jit.td_mul(Q0[k], Q1[k], Q2[k], Q3[k], Q4[k], Q5[k], Q6[k],
                                                      a0, a1, a2, a3, a4, a5, a6)
        s0, s1, s2, s3, s4, s5, s6, g = td_jit.td_add(S0[k], S1[k], S2[k], S3[k], S4[k], S5[k], S6[k],
                                                      t0, t1, t2, t3, t4, t5, t6)
        S0[k], S1[k], S2[k], S3[k], S4[k], S5[k], S6[k] = s0, s1, s2, s3, s4, s5, s6
        fail = fail | f | g
    return fail


def _block_loop(Z, P, W, S, Q, low, flags):  # pragma: no cover (compiled)
    """One block of roots: Z (7, B) the roots' floats, P (7, n) the negated poles', W (K, 7, n)
    the weights', S (K, 7, B) the sums (written), Q (7, B) the inverses (scratch), low (B,) the
    separation bounds (written); flags: a zero midpoint, out of range, q > 1/2 (or-ed in)."""
    n, K = P.shape[1], W.shape[0]
    zero, rng, near = False, False, False
    low[:] = np.inf
    for j in range(n):
        z, g, h = _inverses(Z[0], Z[1], Z[2], Z[3], Z[4], Z[5], Z[6],
                            P[0, j], P[1, j], P[2, j], P[3, j], P[4, j], P[5, j], P[6, j],
                            Q[0], Q[1], Q[2], Q[3], Q[4], Q[5], Q[6], low)
        zero, rng, near = zero | z, rng | g, near | h
        for c in range(K):
            a, s = W[c], S[c]
            if j == 0:
                f = _first_terms(Q[0], Q[1], Q[2], Q[3], Q[4], Q[5], Q[6],
                                 a[0, j], a[1, j], a[2, j], a[3, j], a[4, j], a[5, j], a[6, j],
                                 s[0], s[1], s[2], s[3], s[4], s[5], s[6])
            else:
                f = _next_terms(Q[0], Q[1], Q[2], Q[3], Q[4], Q[5], Q[6],
                                a[0, j], a[1, j], a[2, j], a[3, j], a[4, j], a[5, j], a[6, j],
                                s[0], s[1], s[2], s[3], s[4], s[5], s[6])
            rng = rng | f
    flags[0], flags[1], flags[2] = flags[0] | zero, flags[1] | rng, flags[2] | near


_LOOP: list = []


def _loop():
    """The compiled block loop (numba's cache), compiled on first use after ``td_jit``'s
    element operations (which it inlines).  numba's cache is keyed on this file only: a
    cached loop is not recompiled when ``arith/td_jit.py`` changes, and the gate's probe
    (against the numpy form, on every process's first use) is what checks it."""
    if not _LOOP:
        td_jit.compiled()
        global _lower, _inverses, _first_terms, _next_terms
        _lower = td_jit.inline(_lower)
        _inverses, _first_terms, _next_terms = jit(_inverses), jit(_first_terms), jit(_next_terms)
        _LOOP.append(jit(_block_loop))
    return _LOOP[0]


def _stack(x: TD) -> np.ndarray:
    return np.ascontiguousarray(np.stack(x._arrays()))


def _compiled_form(Z: TD, poles: TD, weights: list[TD], block: int) -> tuple[list[TD], float]:
    """The sums by the compiled loop, ``block`` roots at a time."""
    M, K = len(Z), len(weights)
    Zs, W = _stack(Z), np.ascontiguousarray(np.stack([_stack(a) for a in weights]))
    P = _stack(poles.neg())
    S = np.empty((K, 7, M))
    low = np.empty(M)
    flags = np.zeros(3, dtype=np.bool_)
    loop = _loop()
    B = min(block, M)
    Q, Sb = np.empty((7, B)), np.empty((K, 7, B))
    for s in range(0, M, B):
        w = min(M, s + B) - s
        if w != B:
            Q, Sb = np.empty((7, w)), np.empty((K, 7, w))
        loop(np.ascontiguousarray(Zs[:, s:s + w]), P, W, Sb, Q, low[s:s + w], flags)
        S[:, :, s:s + w] = Sb
    for flag, message in zip(flags, (td_jit.ZERO, td_jit.RANGE, td_jit.NEAR_ZERO)):
        if flag:
            raise RangeError(message)
    return [TD(*S[c]) for c in range(K)], float(np.min(low))


def _probe_problem() -> tuple[TD, TD, list[TD]]:
    """Roots of unity (M = 32), poles near the grid, inside and outside the circle, tiny and
    huge weights (2^-400 to 2^400) with three parts and radii."""
    rng = np.random.default_rng(20261202)
    n = 9
    Z = roots_of_unity_td(32)
    ang = 2 * math.pi * rng.random(n)
    ang[:2] = [2 * math.pi * 3 / 32 + 1e-9, -2 * math.pi * 5 / 32]          # next to the grid
    mu = (1 + np.array([1e-6, -1e-9, 0.5, -0.5, 3.0, 1e-3, -0.9, 2.0 ** -20, 7.0])) * np.exp(1j * ang)
    poles = TD.from_parts(mu, mu * 2.0 ** -54 * rng.uniform(-1, 1, n), mu * 2.0 ** -108 * rng.uniform(-1, 1, n),
                          np.abs(mu) * 2.0 ** -170)

    def weights(e: int) -> TD:
        w = (rng.standard_normal(n) + 1j * rng.standard_normal(n)) * 2.0 ** rng.integers(-e, e + 1, n)
        return TD.from_parts(w, w * 2.0 ** -53 * rng.uniform(-1, 1, n), w * 2.0 ** -106 * rng.uniform(-1, 1, n),
                             np.abs(w) * 2.0 ** -160 * rng.random(n))
    return Z, poles, [weights(0), weights(60), weights(400)]


def _agrees() -> bool:
    """Whether the compiled loop gives bitwise the numpy form's sums and separation bound on
    the probe problem, in blocks of 32 roots and in blocks of 5 (the last cut short)."""
    if not installed():
        return False
    Z, poles, weights = _probe_problem()
    want, sep = _numpy_form(Z, poles, weights)
    for block in (32, 5):
        got, sep_c = _compiled_form(Z, poles, weights, block)
        if not same_floats(np.array(sep), np.array(sep_c)):
            return False
        for a, b in zip(want, got):
            if not all(same_floats(x, y) for x, y in zip(a._arrays(), b._arrays())):
                return False
    return True


GATE = Gate("triple-double Cauchy sums", MIN_PAIRS, _agrees)
