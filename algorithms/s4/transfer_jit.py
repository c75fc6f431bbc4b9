"""The compiled loop of ``transfer_loop`` (imported only when numba is installed)."""
from __future__ import annotations

import numba
import numpy as np

from ...arith.midrad import LARGE, SMALL, U, UNDERFLOW

UP, TINY4, TINY2, TINY8 = 1.0 + 4 * U, 4 * UNDERFLOW, 2 * UNDERFLOW, 8 * UNDERFLOW
C29, C302, DOWN4 = 2.9 * U, 3.02 * U, 1 - 4 * U


def _jit(f):
    try:     # cached where numba can write (the package's __pycache__, else the user's cache)
        return numba.njit(cache=True, nogil=True, error_model="numpy")(f)
    except RuntimeError:
        return numba.njit(nogil=True, error_model="numpy")(f)


@_jit
def up(x):  # pragma: no cover (compiled)
    return x * UP + TINY4


@_jit
def down(x):  # pragma: no cover (compiled)
    return np.nextafter(x, -np.inf)


@_jit
def bad(x):  # pragma: no cover (compiled): MR's range check fails
    return not abs(x) <= LARGE


@_jit
def modulus_up(re, im):  # pragma: no cover (compiled)
    a, b = abs(re), abs(im)
    return up(np.sqrt(up(up(a * a) + up(b * b))))


@_jit
def add(ar, ai, ad, br, bi, bd, sign):  # pragma: no cover (compiled)
    mr = ar + br if sign > 0 else ar - br
    mi = ai + bi if sign > 0 else ai - bi
    r = up(up(ad + bd) + up(U * modulus_up(mr, mi)))
    return mr, mi, r, bad(mr) or bad(mi) or bad(r)


@_jit
def mul(ar, ai, ad, br, bi, bd):  # pragma: no cover (compiled)
    mr = ar * br - ai * bi
    mi = ar * bi + ai * br
    aa, ab = modulus_up(ar, ai), modulus_up(br, bi)
    r = up(up(aa * bd) + up(ad * ab))
    r = up(r + up(ad * bd))
    r = up(r + up(up(C29 * aa) * ab))
    r = up(r + TINY8)
    return mr, mi, r, bad(mr) or bad(mi) or bad(r)


@_jit
def inv(br, bi, bd):  # pragma: no cover (compiled)
    ell = max(abs(br), abs(bi))
    refuse = not (ell > bd and ell >= SMALL and ell <= LARGE)
    n = br * br + bi * bi
    mr = br / n
    mi = -bi / n
    ell = max(ell, down(np.sqrt(n) * DOWN4))
    t = up(1.0 / ell)
    den = down(ell * down(ell - bd))
    r = up(up(bd / den) + up(C302 * t))
    return mr, mi, r, refuse or bad(r)


@_jit
def transfer(zr, zi, zd, Mh, x, xd, u, ud, v, vd, T, Td, skip, H, Hd):  # pragma: no cover (compiled)
    fail = False
    for i in range(x.shape[0]):
        k = i % Mh
        # beta = (z + 1) * 0.5: MR add, then scale by 0.5 (exact unless it underflows)
        sr, si, sd, f0 = add(zr[k], zi[k], zd[k], 1.0, 0.0, 0.0, 1)
        br, bi = sr * 0.5, si * 0.5
        bd = up(up(sd * 0.5) + TINY2)
        f0 = f0 or bad(br) or bad(bi) or bad(bd)
        tr, ti, td, f1 = mul(br, bi, bd, T[i].real, T[i].imag, Td[i])
        wr, wi, wd, f2 = add(1.0, 0.0, 0.0, tr, ti, td, 1)
        if skip[i]:
            wr, wi, wd = 1.0, 0.0, 0.0
        jr, ji, jd, f3 = inv(wr, wi, wd)
        Xr, Xi, Xd, f4 = mul(jr, ji, jd, v[i].real, v[i].imag, vd[i])
        pr, pi, pd, f5 = mul(u[i].real, u[i].imag, ud[i], Xr, Xi, Xd)
        qr, qi, qd, f6 = mul(br, bi, bd, pr, pi, pd)
        hr, hi, hd, f7 = add(x[i].real, x[i].imag, xd[i], qr, qi, qd, -1)
        H[i] = complex(hr, hi)
        Hd[i] = hd
        fail = fail or f0 or f1 or f2 or f3 or f4 or f5 or f6 or f7
    return fail
