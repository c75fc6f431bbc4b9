"""The bilinear map's constants: one set of formulas in every arithmetic.

Exact values from the formulas of proofs/bilinear_filter.md §3 are the reference; each
arithmetic's form must equal them (exact contexts) or enclose them (disk arrays)."""
from fractions import Fraction

import numpy as np
from hypothesis import given, strategies as st

from s4cert.algorithms.s4 import bilinear_map as bm
from s4cert.arith import ExactField, Truth
from s4cert.arith.double_double import DD

small = st.fractions(min_value=Fraction(-50), max_value=Fraction(50), max_denominator=64)


@given(small, small, st.fractions(min_value=Fraction(1, 64), max_value=Fraction(4), max_denominator=64))
def test_exact_field_and_numbers_agree_with_the_formulas(re, im, step):
    a = bm.rate(bm.NUMBERS, step)
    assert a == 2 / step and bm.half_step(bm.NUMBERS, step) == step / 2
    if re + a != 0:
        assert bm.pole(bm.NUMBERS, a, re) == (a - re) / (a + re)
        assert bm.gain(bm.NUMBERS, bm.shift(bm.NUMBERS, a, re)) == -2 / (a + re)
    # the same formulas in the exact field Q(zeta_8), lambda = re + i im
    F = ExactField(8)
    lam = F.add(F.from_number(re), F.mul(F.from_number(im), F.root_of_unity(4, 1)))
    aF = bm.rate(F, F.from_number(step))
    sF = bm.shift(F, aF, lam)
    if F.is_zero(sF) is Truth.TRUE:
        return
    mu, g = bm.pole(F, aF, lam, sF), bm.gain(F, sF)
    assert F.is_zero(F.sub(F.mul(g, sF), F.const(-2))) is Truth.TRUE
    assert F.is_zero(F.sub(F.mul(mu, sF), F.sub(aF, lam))) is Truth.TRUE
    z = F.root_of_unity(8, 3)
    assert F.is_zero(F.sub(F.mul(bm.beta(F, z), F.const(2)), F.add(F.one(), z))) is Truth.TRUE
    assert [F.is_zero(F.sub(x, bm.beta(F, y))) for x, y in zip(bm.betas(F, F.roots_of_unity(8)),
                                                             F.roots_of_unity(8))] == [Truth.TRUE] * 8


def test_disk_forms_enclose_the_exact_poles_gains_and_betas():
    rng = np.random.default_rng(5)
    lam = rng.uniform(-3, 1, 40) + 1j * rng.uniform(-40, 40, 40)
    L = DD.exact(lam)
    s = bm.shift_disks(L, 2.0, DD)
    mu, g = bm.poles_gains_disks(L, s.inv(), 2.0, DD)
    b = bm.beta_disks(L, DD)
    certified = 0
    for j, x in enumerate(lam):
        xr, xi = Fraction(x.real), Fraction(x.imag)
        den = (2 + xr) ** 2 + xi ** 2
        mu_re = ((2 - xr) * (2 + xr) - xi * xi) / den           # (2 - l)(2 + conj l)/|2 + l|^2
        mu_im = (-xi * (2 + xr) - (2 - xr) * xi) / den
        g_re, g_im = -2 * (2 + xr) / den, 2 * xi / den
        for D, (er, ei) in ((mu, (mu_re, mu_im)), (g, (g_re, g_im)), (b, ((1 + xr) / 2, xi / 2))):
            mr = Fraction(float(D.rh[j])) + Fraction(float(D.rl[j]))
            mi = Fraction(float(D.ih[j])) + Fraction(float(D.il[j]))
            assert (mr - er) ** 2 + (mi - ei) ** 2 <= Fraction(float(D.rad[j])) ** 2
        certified += 1
    assert certified == 40
