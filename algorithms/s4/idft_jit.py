"""The compiled loop of ``midrad_idft`` (imported only when numba is installed): the
radix-2 stages of ``idft_midrad_rows`` in place, butterfly by butterfly, with the same
operations on each entry in the same order (proofs/midrad_filter.md, Lemma 11)."""
from __future__ import annotations

from ...arith.compiled import jit
from ...arith.midrad import LARGE, U, compiled_rounding

up, _ = compiled_rounding()


@jit
def stages(xr, xi, E, A, wr, wi, t, skip_first):  # pragma: no cover (compiled)
    """Rows of bit-reversed midpoints (xr, xi: K x M), their bounds E (zeros) and |x|_1 (A),
    transformed in place; wr, wi, t: the twiddles' parts and bounds of the last stage
    (M/2 entries), stage ``size`` reading entry j (M/size).  ``skip_first``: the first
    stage's twiddle is exactly 1 and its products are skipped (p = o)."""
    K, M = xr.shape
    size, s = 2, 0
    while size <= M:
        half = size // 2
        stride = M // size
        for row in range(K):
            ar, ai, e_, a_ = xr[row], xi[row], E[row], A[row]
            for b in range(0, M, size):
                for j in range(half):
                    lo, hi = b + j, b + j + half
                    er, ei, orr, oi = ar[lo], ai[lo], ar[hi], ai[hi]
                    if s == 0 and skip_first:
                        pr, pi = orr, oi
                    else:
                        c, d = wr[j * stride], wi[j * stride]
                        pr = c * orr - d * oi
                        pi = c * oi + d * orr
                    ur, ui = er + pr, ei + pi
                    vr, vi = er - pr, ei - pi
                    o1 = a_[hi] * t[j * stride]
                    o1 = o1 + e_[lo]
                    o1 = o1 + e_[hi]
                    an_lo = abs(ur) + abs(ui)
                    an_hi = abs(vr) + abs(vi)
                    ar[lo], ai[lo], ar[hi], ai[hi] = ur, ui, vr, vi
                    a_[lo], a_[hi] = an_lo, an_hi
                    e_[lo] = an_lo * U + o1
                    e_[hi] = an_hi * U + o1
        size *= 2
        s += 1


@jit
def load(h, rev, xr, xi, A):  # pragma: no cover (compiled)
    """The rows of h in bit-reversed order, as parts, and their |x|_1."""
    K, M = h.shape
    for row in range(K):
        for i in range(M):
            v = h[row, rev[i]]
            xr[row, i], xi[row, i] = v.real, v.imag
            A[row, i] = abs(v.real) + abs(v.imag)


@jit
def finish(xr, xi, E, mean, M, c1, c2, R):  # pragma: no cover (compiled)
    """``midrad_idft._finish``'s bounds entry by entry: R = up(up(mean) + up(up(up(E c1) + c2) / M)),
    ``up`` being ``arith.midrad.up`` compiled; returns False when some value or bound is not finite
    or exceeds 2^400 (the midpoints are divided by M by numpy, as the array form does)."""
    K = xr.shape[0]
    ok = True
    for row in range(K):
        m = up(mean[row])
        for j in range(xr.shape[1]):
            a, b, e = xr[row, j], xi[row, j], E[row, j]
            ok = ok and abs(a) <= LARGE and abs(b) <= LARGE and e <= LARGE
            y = up(up(up(e * c1) + c2) / M)
            R[row, j] = up(m + y)
    return ok
