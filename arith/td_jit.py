"""``TD.add``, ``TD.mul`` and ``TD.inv`` as compiled loops over the elements (numba, when
installed: ``pip install "s4cert[fast]"``), and the element operations they are made of.

Each element operation (``td_add``, ``td_mul``, ``td_inv``) performs, on one disk's seven
floats, the operations of the array forms in ``arith.td_eft`` (``_add_kernel``,
``_mul_kernel``, ``_inv_kernel`` and what they call: 2Sum, Veltkamp's split, Dekker's
product, ``_prod_part``, ``_cmul_terms``, ``_modulus_upper``, ``_finish``, ``_renorm3``,
``_newton_td`` with the double-double kernel ``dd_eft._cmul``) on the same operands in
the same order, each rounded once to nearest: numba compiles without fast-math flags
(nothing contracted into a fused multiply-add, nothing reassociated), with numpy's error
model, so the results are the array forms' numbers and Lemmas 1-6 of
``proofs/triple_double.md`` hold for them as proved.  The range check (``td_eft._check``)
and the inverse's refusals are returned as flags, and the caller raises as the array form
does.  The helpers are inlined into the loops (numba's ``inline="always"``, the same
settings), which LLVM then vectorizes; other modules' loops call the element operations the
same way (``algorithms/s4/cauchy_td.py``).

Every function here is a module-level Python function until :func:`compiled` first runs:
it rebinds the helpers to numba functions and compiles the loops with ``arith.compiled.jit``
(numba's cache, so a later process loads them instead of compiling).  The loops are used
only behind ``arith.triple_double``'s gates, whose probes (:func:`agrees`) run both forms on
probe disks and open only when every output agrees bitwise.
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Callable

import numpy as np

from .compiled import installed, jit, same_floats
from .dd_eft import _SPLIT, _TP_MIN
from .midrad import UNDERFLOW, U, RangeError
from .td_eft import _FIN, _UF, BIG, C_00, C_01, C_02, TINY_TD

#: arrays with fewer elements than this stay on numpy (the gates' threshold)
MIN_ELEMENTS = 1 << 12
#: ``up``'s factor and term, as module constants for the loops (numba caches loops that read globals)
_UP, _UPA = 1.0 + 4 * U, 4 * UNDERFLOW
#: the refusals' messages: a part or radius out of range, a zero midpoint, q > 1/2
RANGE = "a triple-double part or radius is not finite or exceeds 2^500"
ZERO = "a divisor's midpoint is 0 or out of range"
NEAR_ZERO = "a divisor is not certainly nonzero (or its inverse not accurate)"


# -- the helpers (inlined) --------------------------------------------------------------------

def _up(x):  # pragma: no cover (compiled)
    return x * _UP + _UPA


def bad(x):  # pragma: no cover (compiled): td_eft._check fails
    return not abs(x) <= BIG


def _split(a):  # pragma: no cover (compiled)
    c = a * _SPLIT
    h = c - (c - a)
    return h, a - h


def _two_sum(a, b):  # pragma: no cover (compiled)
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _dekker(aH, aL, bH, bL, p):  # pragma: no cover (compiled)
    return (((aH * bH - p) + aH * bL) + aL * bH) + aL * bL


def _dekker_masked(aH, aL, bH, bL, p):  # pragma: no cover (compiled)
    e = (((aH * bH - p) + aH * bL) + aL * bH) + aL * bL
    return e * (1.0 if abs(p) >= _TP_MIN else 0.0)


def _part(a0, a1, a2, b0, b1, b2, c0, c1, c2, d0, d1, d2, sign):  # pragma: no cover (compiled)
    """``td_eft._prod_part``: a b - c d (sign -1.0) or a b + c d (sign 1.0); the sign
    multiplies exactly."""
    a0H, a0L = _split(a0)
    a1H, a1L = _split(a1)
    b0H, b0L = _split(b0)
    b1H, b1L = _split(b1)
    c0H, c0L = _split(c0)
    c1H, c1L = _split(c1)
    d0H, d0L = _split(d0)
    d1H, d1L = _split(d1)
    P = a0 * b0
    eP = _dekker(a0H, a0L, b0H, b0L, P)
    Q = c0 * d0
    eQ = _dekker(c0H, c0L, d0H, d0L, Q)
    if sign < 0:
        Q, eQ = -Q, -eQ
    s, g = _two_sum(P, Q)
    h1 = a0 * b1
    f1 = _dekker(a0H, a0L, b1H, b1L, h1)
    h2 = a1 * b0
    f2 = _dekker(a1H, a1L, b0H, b0L, h2)
    h3 = c0 * d1
    f3 = _dekker(c0H, c0L, d1H, d1L, h3)
    h4 = c1 * d0
    f4 = _dekker(c1H, c1L, d0H, d0L, h4)
    k1, q1 = _two_sum(h1, h2)
    k2, q2 = _two_sum(h3, h4)
    if sign < 0:
        k2, q2 = -k2, -q2
    k3, q3 = _two_sum(k1, k2)
    k4, q4 = _two_sum(eP, eQ)
    k5, q5 = _two_sum(k3, k4)
    k6, q6 = _two_sum(k5, g)
    D = ((q1 + q2) + (q3 + q4)) + (q5 + q6)
    pp = (a0 * b2 + a1 * b1) + a2 * b0
    rr = (c0 * d2 + c1 * d1) + c2 * d0
    if sign < 0:
        F = (f1 + f2) - (f3 + f4)
        Pi = pp - rr
    else:
        F = (f1 + f2) + (f3 + f4)
        Pi = pp + rr
    S2 = D + (F + Pi)
    h, t = _two_sum(s, k6)
    m, l = _two_sum(t, S2)
    return h, m, l


def _cmul_mid(xr0, xr1, xr2, xi0, xi1, xi2, yr0, yr1, yr2, yi0, yi1, yi2):  # pragma: no cover
    a, b, c = _part(xr0, xr1, xr2, yr0, yr1, yr2, xi0, xi1, xi2, yi0, yi1, yi2, -1.0)
    d, e, f = _part(xr0, xr1, xr2, yi0, yi1, yi2, xi0, xi1, xi2, yr0, yr1, yr2, 1.0)
    return a, b, c, d, e, f


def _terms(A0, A1, A2, B0, B1, B2):  # pragma: no cover (compiled)
    t = (A0 * B0) * C_00
    t = t + ((A0 * B1) + A1 * B0) * C_01
    t = t + (((A0 * B2) + A1 * B1) + A2 * B0) * C_02
    return t + (((A1 * B2) + A2 * B1) + A2 * B2)


def _mid_abs(r0, r1, r2, i0, i1, i2):  # pragma: no cover (compiled)
    a = (abs(r0) + abs(r1)) + abs(r2)
    b = (abs(i0) + abs(i1)) + abs(i2)
    return np.sqrt(a * a + b * b) * (1.0 + 2.0 ** -50) + 2.0 ** -535


def _renorm3(a, b, c):  # pragma: no cover (compiled)
    s, t = _two_sum(b, c)
    h, m = _two_sum(a, s)
    m, l = _two_sum(m, t)
    return h, m, l


def _add_part(x0, x1, x2, y0, y1, y2):  # pragma: no cover (compiled)
    s0, e0 = _two_sum(x0, y0)
    s1, e1 = _two_sum(x1, y1)
    s2 = x2 + y2
    t1, f1 = _two_sum(e0, s1)
    g = e1 + s2
    t2 = g + f1
    h, a = _two_sum(s0, t1)
    m, l = _two_sum(a, t2)
    return h, m, l, (abs(s2) + abs(g)) + abs(t2)


def _cmul_dd_real(xrh, xrl, xih, xil, yrh, yih):  # pragma: no cover (compiled)
    """dd_eft._cmul(x pairs, (yrh, 0), (yih, 0), bound=False), operation for operation."""
    yrl = 0.0
    yil = 0.0
    xrH, xrL = _split(xrh)
    xiH, xiL = _split(xih)
    yrH, yrL = _split(yrh)
    yiH, yiL = _split(yih)
    p1, p2, p3, p4 = xrh * yrh, xih * yih, xrh * yih, xih * yrh
    e1, e2 = _dekker_masked(xrH, xrL, yrH, yrL, p1), _dekker_masked(xiH, xiL, yiH, yiL, p2)
    e3, e4 = _dekker_masked(xrH, xrL, yiH, yiL, p3), _dekker_masked(xiH, xiL, yrH, yrL, p4)
    s, g = _two_sum(p1, -p2)
    c = (xrh * yrl + xrl * yrh) - (xih * yil + xil * yih)
    g = g + ((e1 - e2) + c)
    rh, rl = _two_sum(s, g)
    s, g = _two_sum(p3, p4)
    c = (xrh * yil + xrl * yih) + (xih * yrl + xil * yrh)
    g = g + ((e3 + e4) + c)
    ih, il = _two_sum(s, g)
    return rh, rl, ih, il


# -- the element operations -------------------------------------------------------------------

def td_add(xr0, xr1, xr2, xi0, xi1, xi2, xrad, yr0, yr1, yr2, yi0, yi1, yi2, yrad):  # pragma: no cover
    """``TD.add`` of one pair of disks: the seven floats of x + y and whether one is out of
    range (Lemma 2)."""
    r0, r1, r2, sr = _add_part(xr0, xr1, xr2, yr0, yr1, yr2)
    i0, i1, i2, si = _add_part(xi0, xi1, xi2, yi0, yi1, yi2)
    t = (sr + si) * _UF
    rad = _up(_up(xrad + yrad) + _up(t))
    fail = bad(r0) | bad(r1) | bad(r2) | bad(i0) | bad(i1) | bad(i2) | bad(rad)
    return r0, r1, r2, i0, i1, i2, rad, fail


def td_mul(a0, a1, a2, c0, c1, c2, xrad, b0, b1, b2, d0, d1, d2, yrad):  # pragma: no cover (compiled)
    """``TD.mul`` of one pair of disks x = (a, c), y = (b, d) (real and imaginary triples):
    the seven floats of x y and whether one is out of range (Lemmas 3, 4)."""
    r0, r1, r2 = _part(a0, a1, a2, b0, b1, b2, c0, c1, c2, d0, d1, d2, -1.0)
    i0, i1, i2 = _part(a0, a1, a2, d0, d1, d2, c0, c1, c2, b0, b1, b2, 1.0)
    t = _terms(abs(a0) + abs(c0), abs(a1) + abs(c1), abs(a2) + abs(c2),
               abs(b0) + abs(d0), abs(b1) + abs(d1), abs(b2) + abs(d2))
    t = t + _mid_abs(a0, a1, a2, c0, c1, c2) * yrad
    t = t + xrad * _mid_abs(b0, b1, b2, d0, d1, d2)
    t = t + xrad * yrad
    t = t * _FIN + TINY_TD
    fail = bad(r0) | bad(r1) | bad(r2) | bad(i0) | bad(i1) | bad(i2) | bad(t)
    return r0, r1, r2, i0, i1, i2, t, fail


def td_inv(r0, r1, r2, i0, i1, i2, rho):  # pragma: no cover (compiled)
    """``TD.inv`` of one disk: the seven floats of 1/x and the refusals (a zero midpoint, a
    part or radius out of range, q > 1/2) as three flags (Lemma 6)."""
    a = r0 + r1
    b = i0 + i1
    n = a * a + b * b
    y0r = a / n
    y0i = -(b / n)
    zero = not (np.isfinite(y0r) and np.isfinite(y0i))
    pr, prl, pi, pil = _cmul_dd_real(r0, r1, i0, i1, y0r, y0i)
    rr = (1.0 - pr) - prl
    ri = -(pi + pil)
    yrh, yrl = _two_sum(y0r, y0r * rr - y0i * ri)
    yih, yil = _two_sum(y0i, y0r * ri + y0i * rr)
    rng = bad(yrh) | bad(yih)
    p0, p1, p2, p3, p4, p5 = _cmul_mid(r0, r1, r2, i0, i1, i2, yrh, yrl, 0.0, yih, yil, 0.0)
    rr = ((1.0 - p0) - p1) - p2
    ri = -((p3 + p4) + p5)
    yr0, yr1, yr2 = _renorm3(yrh, yrl, yrh * rr - yih * ri)
    yi0, yi1, yi2 = _renorm3(yih, yil, yrh * ri + yih * rr)
    rng = rng | bad(yr0) | bad(yr1) | bad(yr2) | bad(yi0) | bad(yi1) | bad(yi2)
    p0, p1, p2, p3, p4, p5 = _cmul_mid(r0, r1, r2, i0, i1, i2, yr0, yr1, yr2, yi0, yi1, yi2)
    err = _terms(abs(r0) + abs(i0), abs(r1) + abs(i1), abs(r2) + abs(i2),
                 abs(yr0) + abs(yi0), abs(yr1) + abs(yi1), abs(yr2) + abs(yi2)) * _FIN + TINY_TD
    a = 1.0 - p0
    b = a - p1
    c = b - p2
    re = _up(_up(((abs(a) + abs(b)) + abs(c)) * _UF) + abs(c))
    d = p3 + p4
    e = d + p5
    im = _up(_up((abs(d) + abs(e)) * _UF) + abs(e))
    r_mid = _up(np.sqrt(_up(_up(re * re) + _up(im * im))))
    ymod = _mid_abs(yr0, yr1, yr2, yi0, yi1, yi2)
    q = _up(_up(r_mid + err) + _up(rho * ymod))
    near = not q <= 0.5
    rad = _up(_up(q * ymod) * _up(1.0 + 2 * q))
    rng = rng | bad(rad)
    return yr0, yr1, yr2, yi0, yi1, yi2, rad, zero, rng, near


#: the helpers and element operations, rebound to inlined numba functions by ``compiled``
_INLINED = ("_up", "bad", "_split", "_two_sum", "_dekker", "_dekker_masked", "_part", "_cmul_mid", "_terms",
            "_mid_abs", "_renorm3", "_add_part", "_cmul_dd_real", "td_add", "td_mul", "td_inv")


# -- the loops --------------------------------------------------------------------------------

def _add_loop(xr0, xr1, xr2, xi0, xi1, xi2, xrad, yr0, yr1, yr2, yi0, yi1, yi2, yrad,
              R0, R1, R2, I0, I1, I2, RAD):  # pragma: no cover (compiled)
    fail = False
    for k in range(xr0.shape[0]):
        r0, r1, r2, i0, i1, i2, rad, f = td_add(xr0[k], xr1[k], xr2[k], xi0[k], xi1[k], xi2[k], xrad[k],
                                                yr0[k], yr1[k], yr2[k], yi0[k], yi1[k], yi2[k], yrad[k])
        R0[k], R1[k], R2[k], I0[k], I1[k], I2[k], RAD[k] = r0, r1, r2, i0, i1, i2, rad
        fail = fail | f
    return fail


def _mul_loop(xr0, xr1, xr2, xi0, xi1, xi2, xrad, yr0, yr1, yr2, yi0, yi1, yi2, yrad,
              R0, R1, R2, I0, I1, I2, RAD):  # pragma: no cover (compiled)
    fail = False
    for k in range(xr0.shape[0]):
        r0, r1, r2, i0, i1, i2, rad, f = td_mul(xr0[k], xr1[k], xr2[k], xi0[k], xi1[k], xi2[k], xrad[k],
                                                yr0[k], yr1[k], yr2[k], yi0[k], yi1[k], yi2[k], yrad[k])
        R0[k], R1[k], R2[k], I0[k], I1[k], I2[k], RAD[k] = r0, r1, r2, i0, i1, i2, rad
        fail = fail | f
    return fail


def _inv_loop(xr0, xr1, xr2, xi0, xi1, xi2, xrad, R0, R1, R2, I0, I1, I2, RAD, flags):  # pragma: no cover
    zero, rng, near = False, False, False
    for k in range(xr0.shape[0]):
        r0, r1, r2, i0, i1, i2, rad, z, g, n = td_inv(xr0[k], xr1[k], xr2[k], xi0[k], xi1[k], xi2[k], xrad[k])
        R0[k], R1[k], R2[k], I0[k], I1[k], I2[k], RAD[k] = r0, r1, r2, i0, i1, i2, rad
        zero, rng, near = zero | z, rng | g, near | n
    flags[0], flags[1], flags[2] = zero, rng, near


def inline(f):
    """``f`` as a numba function inlined into its callers (numba's IR), with ``arith.compiled.jit``'s
    settings: no fast-math flags, numpy's error model."""
    import numba
    return numba.njit(inline="always", nogil=True, error_model="numpy")(f)


@lru_cache(maxsize=1)
def compiled() -> dict | None:
    """The loops by name ("add", "mul", "inv"), each compiled on its first call (numba's cache
    where it can write), or None without numba.  Rebinds this module's helpers and element
    operations to inlined numba functions, which other modules' loops may then call."""
    if not installed():
        return None
    g = globals()
    for name in _INLINED:
        g[name] = inline(g[name])
    return {"add": jit(_add_loop), "mul": jit(_mul_loop), "inv": jit(_inv_loop)}


def _flat(a: np.ndarray, shape: tuple) -> np.ndarray:
    """``a`` broadcast to ``shape``, flat and contiguous (a view where it already is)."""
    if a.shape == shape and a.dtype == np.float64 and a.flags.c_contiguous:
        return a.reshape(-1)
    return np.ascontiguousarray(np.broadcast_to(a, shape)).reshape(-1)


def run(name: str, operands: list[list[np.ndarray]], shape: tuple) -> list[np.ndarray]:
    """The loop ``name`` on the operands (each the seven arrays of one operand, broadcast to
    ``shape``): the seven result arrays of that shape; RangeError as the array forms raise."""
    n = math.prod(shape)
    flat = [_flat(a, shape) for x in operands for a in x]
    out = [np.empty(n) for _ in range(7)]
    loop = compiled()[name]
    if name == "inv":
        flags = np.zeros(3, dtype=np.bool_)
        loop(*flat, *out, flags)
        for flag, message in zip(flags, (ZERO, RANGE, NEAR_ZERO)):
            if flag:
                raise RangeError(message)
    elif loop(*flat, *out):
        raise RangeError(RANGE)
    return [a.reshape(shape) for a in out]


def probe_disks(seed: int, n: int = 64) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The seven arrays of two arrays of probe disks: long mantissas, parts from 2^-60 to 2^60
    and a few of 2^-460 (products below Dekker's 2^-900) or 2^240, signed zeros, subnormal
    third parts, radii; midpoints not zero."""
    rng = np.random.default_rng(seed)

    def one() -> list[np.ndarray]:
        parts = []
        for _ in range(2):
            h = rng.standard_normal(n) * 2.0 ** rng.integers(-60, 61, n)
            h[:4] = [0.0, -0.0, 2.0 ** -460, -(2.0 ** 240)]
            m = h * rng.uniform(-1, 1, n) * U
            lo = m * rng.uniform(-1, 1, n) * U
            lo[4:8] = [5e-324, -2.0 ** -1060, 0.0, -0.0]
            parts += [h, m, lo]
        parts[3][:4] = [1.0, 2.0 ** -30, 3.0, -1.0]        # midpoints not zero (for the inverse)
        return parts + [np.abs(parts[3]) * 2.0 ** rng.integers(-200, -20, n)]
    return one(), one()


def agrees(name: str, array_form: Callable, make: Callable) -> bool:
    """Whether the loop ``name`` runs here and gives bitwise the results of ``array_form``
    (the numpy form, on disks built by ``make`` from seven arrays) on the probe disks, and on
    the probe disks times 2^-300 for the product."""
    if compiled() is None:
        return False
    x, y = probe_disks(20261202)
    small = [a * 2.0 ** -300 for a in x]
    cases = {"add": [(x, y)], "mul": [(x, y), (small, small)], "inv": [(x,)]}[name]
    for ops in cases:
        want = array_form(*(make(*o) for o in ops))
        got = run(name, list(ops), want.shape)
        if not all(same_floats(a, b) for a, b in zip(want._arrays(), got)):
            return False
    return True
