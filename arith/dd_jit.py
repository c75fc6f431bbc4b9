"""``DD.mul`` and ``DD.square`` as compiled loops over the elements (numba, when installed:
``pip install "s4cert[fast]"``).

Each loop performs, per element, the operations of the array form (``arith.dd_eft``:
Veltkamp's split, Dekker's masked product, 2Sum, the pair kernels ``_cmul`` and
``_csquare``, the bound terms, ``_modulus_upper``, ``_finish``) on the same operands in the
same order, each rounded once to nearest: numba compiles without fast-math flags (nothing
contracted into a fused multiply-add, nothing reassociated), with numpy's error model.  So
the results are bitwise the array form's, and Lemmas 1-4 of
``proofs/double_double_filter.md`` hold for them as proved.  That is checked before the
loops are first used in a process: both forms run on probes (long mantissas, parts below
Dekker's 2^-900 threshold, signed zeros, magnitudes up to 2^300) and the loops are used
only when every output agrees bitwise (``agrees``, the probe of ``double_double``'s gate
``COMPILED``); ``S4CERT_COMPILED=0`` turns them off.
The range check (``double_double._check``: every part and radius within 2^500, NaN
failing) is returned as a flag, and the caller raises as the array form does.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from .compiled import installed, jit, same_floats
from .dd_eft import _C_CROSS, _C_HH, _FIN, _SPLIT, _TP_MIN, TINY

#: arrays with fewer elements than this stay on numpy (``double_double.COMPILED``'s threshold)
MIN_ELEMENTS = 1 << 12
BIG = 2.0 ** 500


@lru_cache(maxsize=1)
def _loops():
    if not installed():
        return None

    def split(a):  # pragma: no cover (compiled)
        c = a * _SPLIT
        h = c - (c - a)
        return h, a - h

    def dekker(aH, aL, bH, bL, p):  # pragma: no cover (compiled)
        e = ((((aH * bH) - p) + aH * bL) + aL * bH) + aL * bL
        return e * (1.0 if abs(p) >= _TP_MIN else 0.0)

    def two_sum(a, b):  # pragma: no cover (compiled)
        s = a + b
        bb = s - a
        return s, (a - (s - bb)) + (b - bb)

    def bound_terms(Ah, Al, Bh, Bl):  # pragma: no cover (compiled)
        t = (Ah * Bl + Al * Bh) * _C_CROSS
        e = (Ah * Bh) * _C_HH + t
        a = Al * Bl
        return e + (a + a)

    def modulus_upper(rh, rl, ih, il):  # pragma: no cover (compiled)
        a = abs(rh) + abs(rl)
        b = abs(ih) + abs(il)
        return np.sqrt(a * a + b * b) * (1.0 + 2.0 ** -50) + 2.0 ** -535

    def bad(x):  # pragma: no cover (compiled): double_double._check fails
        return not (x <= BIG and x >= -BIG)

    split, dekker, two_sum, bound_terms, modulus_upper, bad = (
        jit(f) for f in (split, dekker, two_sum, bound_terms, modulus_upper, bad))

    def square(rh, rl, ih, il, rad, Rh, Rl, Ih, Il, Rad):  # pragma: no cover (compiled)
        fail = False
        for k in range(rh.shape[0]):
            xrh, xrl, xih, xil, r = rh[k], rl[k], ih[k], il[k], rad[k]
            xrH, xrL = split(xrh)
            xiH, xiL = split(xih)
            p1, p2, p3 = xrh * xrh, xih * xih, xrh * xih
            e1, e2 = dekker(xrH, xrL, xrH, xrL, p1), dekker(xiH, xiL, xiH, xiL, p2)
            e3 = dekker(xrH, xrL, xiH, xiL, p3)
            s, g = two_sum(p1, -p2)
            t = g + ((e1 - e2) + 2 * (xrh * xrl - xih * xil))
            zrh, zrl = two_sum(s, t)
            zih, zil = two_sum(p3, e3 + (xrh * xil + xrl * xih))
            Ah, Al = abs(xrh) + abs(xih), abs(xrl) + abs(xil)
            b = bound_terms(Ah, Al, Ah, Al)
            aa = modulus_upper(xrh, xrl, xih, xil)
            b = b + aa * r
            b = b + r * aa
            b = b + r * r
            b = b * _FIN + TINY
            Rh[k], Rl[k], Ih[k], Il[k], Rad[k] = zrh, zrl, 2 * zih, 2 * zil, b
            fail = fail | bad(zrh) | bad(2 * zih) | bad(b)
        return fail

    def mul(xrh_, xrl_, xih_, xil_, xr_, yrh_, yrl_, yih_, yil_, yr_, Rh, Rl, Ih, Il, Rad):  # pragma: no cover
        fail = False
        for k in range(xrh_.shape[0]):
            xrh, xrl, xih, xil = xrh_[k], xrl_[k], xih_[k], xil_[k]
            yrh, yrl, yih, yil = yrh_[k], yrl_[k], yih_[k], yil_[k]
            xrH, xrL = split(xrh)
            xiH, xiL = split(xih)
            yrH, yrL = split(yrh)
            yiH, yiL = split(yih)
            p1, p2, p3, p4 = xrh * yrh, xih * yih, xrh * yih, xih * yrh
            e1, e2 = dekker(xrH, xrL, yrH, yrL, p1), dekker(xiH, xiL, yiH, yiL, p2)
            e3, e4 = dekker(xrH, xrL, yiH, yiL, p3), dekker(xiH, xiL, yrH, yrL, p4)
            s, g = two_sum(p1, -p2)
            c = (xrh * yrl + xrl * yrh) - (xih * yil + xil * yih)
            g = g + ((e1 - e2) + c)
            zrh, zrl = two_sum(s, g)
            s, g = two_sum(p3, p4)
            c = (xrh * yil + xrl * yih) + (xih * yrl + xil * yrh)
            g = g + ((e3 + e4) + c)
            zih, zil = two_sum(s, g)
            Ah, Al = abs(xrh) + abs(xih), abs(xrl) + abs(xil)
            Bh, Bl = abs(yrh) + abs(yih), abs(yrl) + abs(yil)
            t = bound_terms(Ah, Al, Bh, Bl)
            t = t + modulus_upper(xrh, xrl, xih, xil) * yr_[k]
            t = t + xr_[k] * modulus_upper(yrh, yrl, yih, yil)
            t = t + xr_[k] * yr_[k]
            t = t * _FIN + TINY
            Rh[k], Rl[k], Ih[k], Il[k], Rad[k] = zrh, zrl, zih, zil, t
            fail = fail | bad(zrh) | bad(zih) | bad(t)
        return fail

    return jit(square), jit(mul)


def _flat(x) -> list:
    return [np.ascontiguousarray(a, dtype=np.float64).reshape(-1) for a in (x.rh, x.rl, x.ih, x.il, x.rad)]


def square(x):
    """(rh, rl, ih, il, rad, failed) of ``DD.square`` for x (arrays of x's shape)."""
    shape = x.rh.shape
    out = [np.empty(x.rh.size) for _ in range(5)]
    fail = _loops()[0](*_flat(x), *out)
    return tuple(a.reshape(shape) for a in out) + (bool(fail),)


def mul(x, y):
    """(rh, rl, ih, il, rad, failed) of ``DD.mul`` for x and y (``DD.mul`` passes operands
    of one shape; others are broadcast here)."""
    shape = np.broadcast_shapes(x.rh.shape, y.rh.shape)
    xs = [np.broadcast_to(a, shape) for a in (x.rh, x.rl, x.ih, x.il, x.rad)]
    ys = [np.broadcast_to(a, shape) for a in (y.rh, y.rl, y.ih, y.il, y.rad)]
    flat = lambda arrs: [np.ascontiguousarray(a, dtype=np.float64).reshape(-1) for a in arrs]
    out = [np.empty(int(np.prod(shape))) for _ in range(5)]
    fail = _loops()[1](*flat(xs), *flat(ys), *out)
    return tuple(a.reshape(shape) for a in out) + (bool(fail),)


def _probe_values(rng, n: int) -> np.ndarray:
    v = rng.standard_normal(n) * 2.0 ** rng.integers(-60, 60, n)
    v[:4] = [0.0, -0.0, 2.0 ** -460, -(2.0 ** 240)]            # zeros, a product below 2^-900, large
    return v


def probe_disks(make, seed: int = 20261201) -> tuple:
    """Two arrays of disks for the bitwise check (``make(rh, rl, ih, il, rad)`` builds one)."""
    rng = np.random.default_rng(seed)
    n = 64

    def one():
        hr, hi = _probe_values(rng, n), _probe_values(rng, n)
        lr = rng.standard_normal(n) * np.abs(hr) * 2.0 ** -54
        li = rng.standard_normal(n) * np.abs(hi) * 2.0 ** -54
        return make(hr, lr, hi, li, np.abs(rng.standard_normal(n)) * 1e-30)
    return one(), one()


def agrees(array_square, array_mul, make) -> bool:
    """Whether the compiled loops run here and give bitwise the array forms' results
    (``array_square``, ``array_mul``) on the probe disks."""
    if _loops() is None:
        return False
    x, y = probe_disks(make)
    same = same_floats
    want_s, want_m = array_square(x), array_mul(x, y)
    got_s, got_m = square(x), mul(x, y)
    return (not got_s[5] and not got_m[5]
            and all(same(a, b) for a, b in zip((want_s.rh, want_s.rl, want_s.ih, want_s.il, want_s.rad), got_s[:5]))
            and all(same(a, b) for a, b in zip((want_m.rh, want_m.rl, want_m.ih, want_m.il, want_m.rad), got_m[:5])))
