"""The compiled loop of ``transfer_loop`` (imported only when numba is installed)."""
from __future__ import annotations

import numpy as np

from ...arith.compiled import jit
from ...arith.midrad import LARGE, SMALL, U, UNDERFLOW, compiled_rounding

TINY2, TINY8 = 2 * UNDERFLOW, 8 * UNDERFLOW
C29, C302, DOWN4 = 2.9 * U, 3.02 * U, 1 - 4 * U
# midrad's up, and its down as down_normal: np.nextafter(x, -inf) for every normal
# x > 2^-1022, as every argument of down is here where the operation does not refuse (see inv)
up, down = compiled_rounding()


@jit
def bad(x):  # pragma: no cover (compiled): MR's range check fails
    return not abs(x) <= LARGE


@jit
def modulus_up(re, im):  # pragma: no cover (compiled)
    a, b = abs(re), abs(im)
    return up(np.sqrt(up(up(a * a) + up(b * b))))


@jit
def add(ar, ai, ad, br, bi, bd, sign):  # pragma: no cover (compiled)
    mr = ar + br if sign > 0 else ar - br
    mi = ai + bi if sign > 0 else ai - bi
    r = up(up(ad + bd) + up(U * modulus_up(mr, mi)))
    return mr, mi, r, bad(mr) | bad(mi) | bad(r)


@jit
def mul(ar, ai, ad, br, bi, bd):  # pragma: no cover (compiled)
    mr = ar * br - ai * bi
    mi = ar * bi + ai * br
    aa, ab = modulus_up(ar, ai), modulus_up(br, bi)
    r = up(up(aa * bd) + up(ad * ab))
    r = up(r + up(ad * bd))
    r = up(r + up(up(C29 * aa) * ab))
    r = up(r + TINY8)
    return mr, mi, r, bad(mr) | bad(mi) | bad(r)


@jit
def inv(br, bi, bd):  # pragma: no cover (compiled)
    ell = max(abs(br), abs(bi))
    # not refused: ell >= 2^-400 and ell - bd > 0 is at least half an ulp of ell, so each
    # down() below takes a number in [2^-853, 2^802]
    refuse = not ((ell > bd) & (ell >= SMALL) & (ell <= LARGE))
    n = br * br + bi * bi
    mr = br / n
    mi = -bi / n
    ell = max(ell, down(np.sqrt(n) * DOWN4))
    t = up(1.0 / ell)
    den = down(ell * down(ell - bd))
    r = up(up(bd / den) + up(C302 * t))
    return mr, mi, r, refuse | bad(r)


@jit
def transfer(zr, zi, zd, xr, xi, xd, ur, ui, ud, vr, vi, vd, Tr, Ti, Td, skip, Hr, Hi, Hd):  # pragma: no cover
    """H per position (every argument's parts and radii as contiguous arrays of the same
    length: the roots' repeated along with the blocks, so that the loop vectorizes);
    returns True when some check failed."""
    fail = False
    for i in range(xr.shape[0]):
        # beta = (z + 1) * 0.5: MR add, then scale by 0.5 (exact unless it underflows)
        sr, si, sd, f0 = add(zr[i], zi[i], zd[i], 1.0, 0.0, 0.0, 1)
        br, bi = sr * 0.5, si * 0.5
        bd = up(up(sd * 0.5) + TINY2)
        f0 = f0 | bad(br) | bad(bi) | bad(bd)
        tr, ti, td, f1 = mul(br, bi, bd, Tr[i], Ti[i], Td[i])
        wr, wi, wd, f2 = add(1.0, 0.0, 0.0, tr, ti, td, 1)
        one = skip[i]
        wr = 1.0 if one else wr
        wi = 0.0 if one else wi
        wd = 0.0 if one else wd
        jr, ji, jd, f3 = inv(wr, wi, wd)
        Xr, Xi, Xd, f4 = mul(jr, ji, jd, vr[i], vi[i], vd[i])
        pr, pi, pd, f5 = mul(ur[i], ui[i], ud[i], Xr, Xi, Xd)
        qr, qi, qd, f6 = mul(br, bi, bd, pr, pi, pd)
        hr, hi, hd, f7 = add(xr[i], xi[i], xd[i], qr, qi, qd, -1)
        Hr[i], Hi[i], Hd[i] = hr, hi, hd
        fail = fail | f0 | f1 | f2 | f3 | f4 | f5 | f6 | f7
    return fail
