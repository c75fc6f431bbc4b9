"""The S4 filter at every root at once, in float64 midpoint-radius arrays.

The same procedure as ``s4.filter_kernel`` (its set-up is shared), with the work over
the M roots done by numpy on disk arrays (``arith.midrad``):

1. set-up (partition, poles mu_j, weights) in ball arithmetic, rounded to disks;
2. the (r+1)^2 Cauchy sums directly, by blocks of roots: d = z_k - mu_j from
   double-float roots and poles, the terms 1/d cut into an exact slice and a rest so that
   the matrix products of the slices are exact and each sum is rounded once, radii by
   nonnegative matrix products with T = sqrt(fl(1/|d|^2)) (``proofs/midrad_filter.md``,
   Lemmas 8-10);
3. per root, for rank one (no exceptional index, distinct poles) H = N / W with N one
   more Cauchy sum whose weights are formed once in double-double (``midrad_quotient``,
   Lemmas 12-13), so that H's disks follow |H| where the sums blow up next to a pole;
   otherwise W = I + beta T inverted by Gauss-Jordan on disks (every pivot certainly
   nonzero, else the route stops undecided), then H = x - beta u W^-1 v;
4. the inverse DFT by an iterative radix-2 transform on the midpoints with an error bound
   per entry and stage (Lemma 11); the kernel's radius at j is mean(rad H) plus that
   entry's bound over M.

The driver is ``disk_filter.filter_kernel_disks`` on ``MR``; this module holds float64's
primitives (the sums' inputs as pairs, the Cauchy sums ``cauchy_midrad``, the quotient
form ``transfer_midrad``, the transform ``idft_mr``) and registers them.  The result is
a pair (midpoints, radii) of numpy arrays with |K_j - mid_j| <= rad_j, and the bounds
the filter constants need (b, w, d, A_wt).  Every decision is made on certified disks; a
disk that cannot decide one stops the route with status "undecided" (a caller then falls
back to ball arithmetic at higher precision).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...arith.disk_convert import (dd_of_balls, midpoints_round_to_nearest as _midpoints_round_to_nearest, mr_of_balls,
                                  mr_of_dd, mr_pairs_of_dd as mr_pairs, pairs_of_balls)
from ...arith.double_double import DD
from ...arith.midrad import (MR, LARGE, U, UNDERFLOW, RangeError, down, on_grid, roots_on_grid,
                          modulus_upper, roots_of_unity, roots_of_unity_dd, sum_upper, up)

from .dplr import DPLR
from ..result import Result
from . import cauchy_f64_rows
from .disk_filter import (SumsInput, disk_setup, filter_kernel_disks, register,  # noqa: F401 (re-exported)
                          transfer_disks, transfer_generic)
from .constants import Bound
from .midrad_idft import bit_reverse, idft_midrad, idft_midrad_rows  # noqa: F401 (the transform, re-exported)
from .midrad_quotient import (applies as quotient_applies, betas, quotient_pays, quotient_transfer, quotient_weights)

#: the name of this arithmetic in results and certificates
ARITHMETIC = "float64 midpoint-radius"
#: the blocks of roots hold about this many (root, pole) pairs
BLOCK_PAIRS = 1 << 16


def _disks(F, xs: list) -> MR:
    """Elements of an enclosing field rounded to float64 disks that contain them: each
    is taken as an acb ball (``F.enclose``) and rounded by ``arith.disk_convert.mr_of_balls``
    (the midpoint rounded to complex128, the radius from the parts' radii, the midpoint's
    rounding per part (half its ulp when the conversion rounds to nearest, as
    ``_midpoints_round_to_nearest`` checks once, else the ulp) and 2^-1072 for anything below
    the normal range: proofs/midrad_filter.md, section 5).  A ball that is not finite, or
    whose parts leave the float range, gets an infinite radius."""
    return mr_of_balls([F.enclose(x) for x in xs], nearest=_midpoints_round_to_nearest())


def _pow2_at_least(m: np.ndarray) -> np.ndarray:
    """The least power of two >= m > 0 (exact: frexp)."""
    f, e = np.frexp(m)
    return np.ldexp(np.ones_like(m), e - (f == 0.5))


def _leading_view_of(x: np.ndarray) -> np.ndarray | None:
    """The array x is the first len(x) entries of (x.base itself, or None)."""
    b = x.base
    if b is None or b.ndim != 1 or x.ndim != 1 or x.strides != b.strides:
        return None
    return b if x.ctypes.data == b.ctypes.data and len(x) <= len(b) else None


def _roots_on_grid(zh: np.ndarray, zl: np.ndarray, g: float) -> tuple:
    """``on_grid`` of the roots' pairs; for the cached root table of some M, or its leading
    entries (the layer pass's half grid), the cached rebasing (``roots_on_grid``)."""
    for h, l in ((zh, zl), (_leading_view_of(zh), _leading_view_of(zl))):
        if h is None or l is None:
            continue
        M = len(h)
        if M >= 1 and M & (M - 1) == 0:
            std = roots_of_unity_dd(M)
            if h is std[0] and l is std[1]:
                h2, l2, e = roots_on_grid(M, g)
                return h2[:len(zh)], l2[:len(zh)], e
    return on_grid(zh, zl, g)


def cauchy_direct_midrad(roots: tuple, poles: tuple, weights: list[MR],
                         weights_lo: list[np.ndarray] | None = None,
                         bounded: list[MR] | None = None) -> tuple:
    """Disks of S_k = sum_j a_j / (z_k - mu_j) for each weight set, and a lower bound of
    min |z_k - mu_j| (inf without poles).

    ``roots`` and ``poles`` are double-float pairs with a radius, ``(hi, lo, R)`` with
    |x - hi - lo| <= R.  Both are first rebased so that their high parts lie on one grid
    g, on which the high parts' difference is exact; the difference d = z_k - mu_j is
    then rounded once, to u |d|, and 1/d is formed by two products with fl(1/fl(|d|^2)),
    to 4u |1/d| (Lemmas 8-9).  The terms q = 1/d are cut into a slice on the grid tau 2^-beta
    (tau from the root's largest |q|) and a rest, the weights likewise (sigma from the
    set's largest |a|): the slices' matrix product is exact, only the small rest is
    rounded, so the sums' rounding is one rounding of the result (Lemma 10).  A weight set
    may carry low parts (``weights_lo``: |a_j - mid_j - lo_j| <= rad_j), folded into the
    rounded rest.  The radius is T @ alpha with T ~ 1/|d|, the constants from the block's
    own largest 1/|d|.  For the weight sets ``bounded`` only upper bounds of
    sum_j |a_j| / |z_k - mu_j| (>= |S_k|) are formed, and returned third: (sums, d,
    bounds).  Raises RangeError when the disks cannot separate a root from a pole or a
    value leaves the safe range."""
    zh, zl, zR = roots
    ph, pl, pR = poles
    M, n, K = len(zh), len(ph), len(weights)
    nb = len(bounded) if bounded is not None else 0
    if n == 0:
        out = [MR(np.zeros(M, complex), np.zeros(M)) for _ in weights], math.inf
        return out + ([np.zeros(M) for _ in range(nb)],) if bounded is not None else out
    beta = (53 - (2 * n - 1).bit_length()) // 2      # beta + beta + log2(2n) <= 53: exact slice products
    if not (2 * n + 5) * U <= 0.01:
        raise RangeError("too many poles for the a-priori bounds")
    gam = up((2 * n + 5) * U / (1 - (2 * n + 5) * U))  # >= gamma_(2n+5): the rest's rounding
    big = max([1.0] + [float(np.max(np.abs(x), initial=0.0)) for x in (ph.real, ph.imag, zh.real, zh.imag)])
    if not big <= 2.0 ** 390:                          # NaN fails too; then every 1/|d|^2 >= 2^-784
        raise RangeError("a root or pole is not finite or exceeds 2^390")
    g = float(_pow2_at_least(np.array(2.0 + big))) * 2.0 ** -52   # 2^53 g > |zh'| + |ph'| per part
    zh, zl, ez = _roots_on_grid(zh, zl, g)
    ph, pl, ep = on_grid(ph, pl, g)
    A = np.stack([w.mid for w in weights], axis=1)                     # n x K
    Arad = np.stack([w.rad for w in weights], axis=1)
    Alo = np.stack(weights_lo, axis=1) if weights_lo is not None else np.zeros(A.shape, complex)
    Am = up(modulus_upper(A) + modulus_upper(Alo))                     # >= |mid + lo|
    amax = np.max(np.maximum(np.abs(A.real), np.abs(A.imag)), axis=0)
    sigma = _pow2_at_least(np.where(amax > 0, amax, 1.0))
    if not float(sigma.min()) >= 2.0 ** (beta - 1070):
        raise RangeError("a weight set too small for exact slices")
    C = 1.5 * 2.0 ** (52 - beta) * sigma
    A1 = ((A.real + C) - C) + 1j * ((A.imag + C) - C)   # on the grid sigma 2^-beta; A - A1 exact
    A2 = (A - A1) + Alo                                # the rest with the low parts: one rounding per part
    lay = lambda X: (np.concatenate([X.real, X.imag], axis=1).T, np.concatenate([X.imag, -X.real], axis=1).T)
    (W1r, W1i), (W2r, W2i), (Wr, Wi) = lay(A1), lay(A2), lay(A)   # 2K x n: the products' left factors
    # per block two products: [a1; a2] against the rows [q1r; q1i] (E, exact, above the first
    # half of Y) and a against [q2r; q2i] (the second half of Y)
    left1, left2 = np.vstack([np.hstack([W1r, W1i]), np.hstack([W2r, W2i])]), np.hstack([Wr, Wi])
    one = lambda X: up(np.abs(X.real) + np.abs(X.imag))
    rank1 = up(up(2 * np.sum(one(A2), axis=0)) + up(2.0 ** -beta * np.sum(one(A), axis=0)))
    # the folding's roundings (u |A2| per part, against |q1| <= 2 tau) and q2 lo (|q2| <= tau 2^-beta)
    fold = up(up(2 * U * np.sum(one(A2), axis=0)) + up(2.0 ** -beta * np.sum(one(Alo), axis=0)))
    rank1 = up(up(gam * rank1) + fold)                # per set, times tau
    # R0 >= |exact (z - mu) - (zh' + zl' - ph' - pl')| + the low parts' share of d's rounding
    LO = up(up(float(np.max(np.abs(zl.real), initial=0.0)) + float(np.max(np.abs(zl.imag), initial=0.0)))
            + float(np.max(modulus_upper(pl))))
    R0 = up(up(up(zR + pR) + up(ez + ep)) + up(1.01 * U * LO))
    s_a = up(Am + Arad)
    a_rho = up((1 + 8 * U) * up((1 + 6 * U) * Arad))        # |q| rad a, per unit of T (1 + 6u, exact, >= 1 + 4.01u)
    a_u = up((1 + 8 * U) * up(U * s_a))                     # |1/d - q| |a|, per unit of c u T
    # per block, the rows a_rho + c_q a_u above the bounded sets' rows: one product with T
    GT = np.empty((K + nb, n))
    if nb:   # |a_j| / |d| <= s_a (1 + 3u) T / (1 - kappa): rows (1 + 4u) s_a, the rest per block
        GT[K:] = up((1 + 4 * U) * np.stack([up(up(modulus_upper(w.mid)) + w.rad) for w in bounded], axis=0))
        out_b = np.empty((nb, M))
    c_sum = 1.0 + (2 * n + 2) * U                           # sum_upper's factor (Lemma 1), exact
    out_mid, out_rad = np.empty((K, M), complex), np.empty((K, M))
    under = n * 2.0 ** -1068                                # the products' underflow allowances
    inv_max = 0.0
    B = max(1, BLOCK_PAIRS // n)
    z4 = tuple(np.ascontiguousarray(x) for x in (zh.real, zh.imag, zl.real, zl.imag))
    p4 = tuple(np.ascontiguousarray(x) for x in (ph.real, ph.imag, pl.real, pl.imag))
    # the block's work arrays, reused (fresh arrays of this size would each cost page faults):
    # for the numpy passes rows q1r, q1i, then the rests, stacked for the products, inv and two
    # more; for the compiled loop one root-major buffer (cauchy_f64_rows)
    fn = cauchy_f64_rows.compiled(M * n)
    radius = None if fn is None else cauchy_f64_rows.radius_compiled()
    if fn is None:
        stack = np.empty((4 * n, min(B, M)))
        bufs = [np.empty((n, min(B, M))) for _ in range(3)]
        p4c = [x[:, None] for x in p4]                # poles x roots blocks
    else:
        out = np.empty((min(B, M), 5 * n))
    for s in range(0, M, B):
        e = min(M, s + B)
        w = e - s
        # d, 1/|d|^2 and q (Lemmas 8-9), the per-root maxima of 1/|d|^2; the compiled loop
        # also cuts q with tau per root (Lemma 10) and forms T ~ 1/|d|
        if fn is None:
            rows, inv = stack[:, :w], bufs[0][:, :w]
            vmax = cauchy_f64_rows.rows_numpy(z4, p4c, s, e, rows, inv, bufs[1][:, :w], bufs[2][:, :w])
            Q1, Q2 = rows[:2 * n], rows[2 * n:]
        else:
            Q1, Q2, inv, vmax, tau = cauchy_f64_rows.fused(fn, z4, p4, s, e, beta, out)
        hi = float(vmax.max())
        if not hi <= LARGE * LARGE:                   # the lower end 2^-800 holds a priori (|d| <= 2^392)
            raise RangeError("a pole lies too close to a root for float64 disks")
        inv_max = max(inv_max, hi)
        t_hi = math.sqrt(hi)                          # = max T (fl(sqrt) is monotone)
        tmax_b = up((1 + 4 * U) * up(t_hi))
        kappa = up(up(R0 * tmax_b) + 1.01 * U)        # >= rho t on the block (Lemma 9)
        if not kappa <= 0.25:
            raise RangeError("the disks of a pole and a root are too wide for their distance")
        # |1/d - q| <= (c_q u + R0 t_max / (1 - kappa)) t, c_q = 1/(1 - kappa) + 4.01
        c_q = up(up(1.0 / down(1 - kappa)) + 4.01)
        c_q = up(c_q + up(up(R0 * tmax_b) / up(U * down(1 - kappa))))
        # a power of two >= every part of the root's q (Lemma 9): for the numpy passes one for
        # the whole block when its roots' largest |q| lie within 2^8 of each other (the rest's
        # rounding, tau 2^-beta per unit, then stays far below u |q|; a scalar is the faster
        # operand there), else one per root, as the compiled loop always takes
        if fn is None:
            if hi <= 2.0 ** 16 * float(vmax.min()):
                tau = _pow2_at_least(np.array([up((1 + 8 * U) * t_hi)]))
                Ct = 1.5 * 2.0 ** (52 - beta) * float(tau[0])
            else:
                tau = cauchy_f64_rows.tau_per_root(vmax)
                Ct = 1.5 * 2.0 ** (52 - beta) * tau
        if not float(tau.min()) * float(sigma.min()) >= 2.0 ** (2 * beta - 1072):
            raise RangeError("the sums' magnitudes leave the range of exact slices")
        if fn is None:
            # q cut on the grid tau 2^-beta into Q1 and the exact rests Q2, |.| <= tau 2^(-beta-1);
            # inv becomes T ~ 1/|d|
            cauchy_f64_rows.slice_numpy(rows, inv, Ct)
        P = left1 @ Q1                                # [E; a2 q1]: E = a1 q1 exact
        Y = P[2 * K:] + left2 @ Q2
        G = np.add(P[:2 * K], Y, out=Y)               # one rounding: <= u |G| per part
        GT[:K] = up(a_rho.T + up(c_q * a_u.T))
        GTb = GT @ inv
        if nb:
            out_b[:, s:e] = up(up(sum_upper(GTb[K:], n) / down(1 - kappa)) + under)
        # the radius: sum_upper of the product (items 2 and 4 of Lemma 10), the rest's rounding
        # and underflows (rank1 tau + n 2^-1068 + sum_upper's n 2^-1072), u |G| (item 3)
        if radius is None:
            cauchy_f64_rows.radius_numpy(GTb, G, rank1, tau, c_sum, under, n * UNDERFLOW, out_mid, out_rad, s)
        else:
            radius(GTb, G, rank1, tau, c_sum, under, n * UNDERFLOW, out_mid, out_rad, s)
    t_max = up((1 + 4 * U) * up(math.sqrt(inv_max)))
    sep = down(down((1 - 8 * U) / t_max) - R0)
    sums = [MR(out_mid[c], out_rad[c]) for c in range(K)]
    if bounded is not None:
        return sums, max(float(sep), 0.0), [out_b[c] for c in range(nb)]
    return sums, max(float(sep), 0.0)


def cauchy_midrad(Z: MR, poles: tuple, weights: list[DD]) -> tuple[list[MR], float]:
    """The Cauchy primitive of float64 disks: ``cauchy_direct_midrad`` on the roots'
    double-float pairs (``roots_of_unity_dd(len(Z))``, of which Z's disks are the rounding),
    the poles' pairs (``pairs_of_balls``) and each weight set's double-double disks as
    float64 disks with low parts (``mr_pairs``)."""
    sets = [mr_pairs(w) for w in weights]
    return cauchy_direct_midrad(roots_of_unity_dd(len(Z)), poles, [w for w, _ in sets], [lo for _, lo in sets])


def _quotient_weights(job: SumsInput) -> tuple[DD, DD] | None:
    """(nu, n0) of ``midrad_quotient.quotient_weights`` where the quotient form applies and
    is expected to pay (``quotient_pays``), else None (also when two poles are not told
    apart)."""
    st = job.st
    if not quotient_applies(job.r, st):
        return None
    try:
        qw = quotient_weights(st, DD.from_parts(*job.poles), job.weights)
    except RangeError:   # two poles not told apart: the correction
        return None
    return qw if quotient_pays(qw[0], job.weights[list(st.weights).index(("C", "B"))]) else None


def transfer_midrad(job: SumsInput, quotient: bool = True) -> tuple[dict, MR, list, float, dict]:
    """The transfer primitive of float64 disks (stages 2 and 3): with ``quotient`` and where
    ``_quotient_weights`` gives the weights of N, H = N / W (``midrad_quotient``; the sums of T
    and N, the other blocks only bounded, for b: disks around 0 of radius >= |S|), else the
    generic sums and correction (``transfer_generic``).  (blocks, H, W^-1, sep,
    {"transfer": "quotient" or "correction"})."""
    qw = _quotient_weights(job) if quotient else None
    if qw is None:
        return transfer_generic(job)[:4] + ({"transfer": "correction"},)
    M, by_key = len(job.Z), dict(zip(job.st.weights, job.weights))
    (T_w, T_lo), (nu_w, nu_lo) = mr_pairs(by_key[(0, 0)]), mr_pairs(qw[0])
    others = [k for k in by_key if k != (0, 0)]
    (Ts, Ns), sep, ubs = cauchy_direct_midrad(roots_of_unity_dd(M), job.poles, [T_w, nu_w], [T_lo, nu_lo],
                                              [mr_of_dd(by_key[k]) for k in others])
    n0 = mr_of_dd(qw[1])
    H, winv = quotient_transfer(Ns.add(MR(np.full(M, n0.mid[0]), np.full(M, n0.rad[0]))), Ts, betas(M), job.skip)
    zero = np.zeros(M, complex)
    blocks = {(0, 0): Ts, **{k: Bound(zero, ub) for k, ub in zip(others, ubs)}}
    return blocks, H, [[winv]], sep, {"transfer": "quotient"}


def idft_mr(H: MR, M: int) -> MR:
    """The transform primitive of float64 disks: ``idft_midrad`` with a bound per entry."""
    return MR(*idft_midrad(H, roots_of_unity(M), per_entry=True))


def _concat(parts: list[MR]) -> MR:
    """The disks of ``parts`` side by side."""
    return MR(np.concatenate([p.mid for p in parts]), np.concatenate([p.rad for p in parts]))


def _exact_arrays(K: MR) -> tuple[np.ndarray, np.ndarray]:
    """(mid, rad) of float64 disks: their own midpoints and radii (nothing to round)."""
    return K.mid.copy(), K.rad.copy()


def filter_kernel_midrad(model: DPLR, step: Any, L: int, c_tilde: list | None = None,
                         exceptional: list[int] | None = None, prec: int = 128,
                         quotient: bool = True, decide_g: bool = True) -> Result:
    """The length-L kernel as (midpoints, radii) float64 arrays, the set-up done in
    ``BallField(prec)``: ``disk_filter.filter_kernel_disks(MR, ...)`` with the primitives
    registered here.  Status "undecided" (with a reason) when float64 disks cannot decide
    something; then a ball run at higher precision can.

    Result: ``value`` = (midpoints, radii), both numpy arrays of length L.  ``info`` as the
    driver's (``"M"``, ``"exceptional"``, ``"poles"``, ``"cauchy"``, ``"b"``, ``"w"``,
    ``"d"``, ``"A_wt"``; not ``"disks"``) with ``"transfer"``: ``"quotient"`` when H was
    formed as N / W (``midrad_quotient``: rank one, no exceptional index, distinct poles,
    and ``quotient`` true), else ``"correction"`` (Gauss-Jordan on W, then
    x - beta u W^-1 v), and ``"g_invertible"`` (asked with ``decide_g``).  Statuses:
    ``undecided`` (``info["reason"]``), and the set-up's (``filter.setup``).

    >>> from s4cert.algorithms.s4.dplr import DPLR
    >>> res = filter_kernel_midrad(DPLR([-1.0, -2.0], [0.5, 0.25], [1, 1], [1, -1]), 0.5, 8)
    >>> mid, rad = res.value
    >>> res.ok, bool(rad.max() < 1e-13)
    (True, True)
    """
    res = filter_kernel_disks(MR, model, step, L, c_tilde, exceptional, prec, decide_g=decide_g, quotient=quotient)
    res.info.pop("disks", None)
    return res


register(MR, arithmetic=ARITHMETIC, of_balls=mr_of_balls, roots=roots_of_unity, concat=_concat,
         poles_of_balls=pairs_of_balls, weights_of_balls=dd_of_balls, cauchy=cauchy_midrad,
         transfer=transfer_midrad, idft=idft_mr, to_float64=_exact_arrays)
