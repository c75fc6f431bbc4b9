"""Certified bounds of |o_j - K_j| and |K_j| from a kernel file's disks, on float64 arrays.

For an entry whose exact disk has centre c = p_0 + ... + p_{k-1} (complex128 parts; k = 1
for a float64 disk) and radius r, and another kernel's value o (complex128), the chain
s_0 = fl(o - p_0), s_t = fl(s_{t-1} - p_t) has |(o - c) - s_{k-1}| <= u sum_t |s_t|: each
subtraction's error is at most u times its computed modulus, and later subtractions are
exact operations on what came before (``proofs/midrad_filter.md``, Lemma 2; a sum of floats
never underflows).  So

    |o - c| <= |s| + u sum_t |s_t|   and   |o - c| >= |s| - u sum_t |s_t|,

with |s| bounded above by ``modulus_upper`` (Lemma 6) and below by
max(max(|Re s|, |Im s|), down(fl(sqrt(fl(Re s^2) + fl(Im s^2))) (1 - 4u))) when
max(|Re s|, |Im s|) >= 2^-400 (Lemma 5; below it the first term alone); every sum of upper
bounds is rounded up with ``up`` and every difference of lower bounds down with ``down``.
The same chain with additions bounds |c| (s_0 = p_0).  K_j in the disk gives
|o_j - K_j| in [|o - c| - r, |o - c| + r] and |K_j| in [|c| - r, |c| + r].  Entries whose
chain overflows are reported (``ok`` False) for an exact computation instead.
"""
from __future__ import annotations

import numpy as np

from ...arith.midrad import U, down, modulus_upper, up

#: below this, a modulus' lower bound is max(|re|, |im|) alone (Lemma 5 needs it)
_SMALL = 2.0 ** -400


def modulus_lower(z: np.ndarray) -> np.ndarray:
    """Lower bounds of |z| (see the module docstring)."""
    a, b = np.abs(z.real), np.abs(z.imag)
    ell0 = np.maximum(a, b)
    with np.errstate(over="ignore", invalid="ignore"):
        n = a * a + b * b
        ell = down(np.sqrt(n) * (1 - 4 * U))
    return np.where(ell0 >= _SMALL, np.maximum(ell0, np.nan_to_num(ell, nan=0.0, posinf=0.0)), ell0)


def chain_bounds(o: np.ndarray | None, parts: np.ndarray, sign: int = -1) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(lower, upper, estimate, ok) of |o + sign (p_0 + ... + p_{k-1})| per row of ``parts``
    ((n, k) complex128); with ``o`` None, of |p_0 + ... + p_{k-1}|."""
    n, k = parts.shape
    with np.errstate(over="ignore", invalid="ignore"):
        if o is None:
            s, first = parts[:, 0].copy(), 1
        else:
            s, first = o + sign * parts[:, 0], 0
        acc = np.zeros(n) if o is None else modulus_upper(s)
        for t in range(1, k):
            s = s + sign * parts[:, t] if o is not None else s + parts[:, t]
            acc = up(acc + modulus_upper(s))
        err = up(U * acc) if (o is not None or k > first) else np.zeros(n)
        hi = up(modulus_upper(s) + err)
        lo = np.maximum(down(modulus_lower(s) - err), 0.0)
        ok = np.isfinite(hi) & np.isfinite(s.real) & np.isfinite(s.imag)
    return lo, hi, np.abs(s), ok


def disk_bounds(o: np.ndarray | None, parts: np.ndarray, rad: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(lower, upper, estimate, ok) of |o_j - K_j| (``o`` given) or of |K_j| (``o`` None)
    for every K_j in the disk (sum of the row of ``parts``, ``rad``)."""
    lo, hi, est, ok = chain_bounds(o, parts)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.maximum(down(lo - rad), 0.0), up(hi + rad), est, ok & np.isfinite(up(hi + rad))
