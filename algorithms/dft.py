"""Radix-two discrete Fourier transform and polynomial product (proofs/spec.md §S2–§S4).

Convention: ``dft(a)_k = sum_j a_j w^(jk)`` with ``w = exp(-2*pi*i/M)``; the inverse
uses ``conj(w)`` and divides by M (numpy.fft's convention).  These procedures make no
decisions, so they return plain lists rather than a Result.
"""
from __future__ import annotations

from ..arith import check_power_of_two


def _radix2(F, a: list, tw: list, stride: int) -> list:
    m = len(a)
    if m == 1:
        return [a[0]]
    E = _radix2(F, a[0::2], tw, 2 * stride)
    O = _radix2(F, a[1::2], tw, 2 * stride)
    half = m // 2
    out = [None] * m
    for k in range(half):
        t = F.mul(tw[k * stride], O[k])  # w_m^k = w_M^(k*M/m)
        out[k] = F.add(E[k], t)
        out[k + half] = F.sub(E[k], t)
    return out


def _transform(F, a: list, inverse: bool) -> list:
    M = check_power_of_two(len(a), "DFT length")
    fast = F.primitive("dft")
    if fast is not None:
        return fast(list(a), inverse)
    sign = 1 if inverse else -1
    # roots from the field directly (never by repeated multiplication)
    tw = [F.root_of_unity(M, -sign * k) for k in range(M // 2)]
    out = _radix2(F, list(a), tw, 1)
    if inverse:
        m = F.const(M)
        out = [F.div(x, m) for x in out]
    return out


def dft(F, a: list) -> list:
    """Forward DFT of a power-of-two length vector.

    >>> from s4cert.arith import ExactField
    >>> F = ExactField(4)
    >>> [F.to_complex(x) for x in dft(F, [F.one(), F.zero()])]
    [(1+0j), (1+0j)]
    """
    return _transform(F, a, False)


def idft(F, a: list) -> list:
    """Inverse DFT: conjugate roots, then divide by M."""
    return _transform(F, a, True)


def next_power_of_two(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def polymul(F, p: list, q: list) -> list:
    """Coefficients (lowest first) of p*q, by zero padding to a power of two
    >= deg p + deg q + 1 and two forward transforms and one inverse."""
    if not p or not q:
        return []
    n = len(p) + len(q) - 1
    fast = F.primitive("polymul")
    if fast is not None:
        return fast(list(p), list(q))
    M = next_power_of_two(n)
    z = F.zero()
    fp = dft(F, list(p) + [z] * (M - len(p)))
    fq = dft(F, list(q) + [z] * (M - len(q)))
    prod = [F.mul(x, y) for x, y in zip(fp, fq)]
    del fp, fq
    return idft(F, prod)[:n]
