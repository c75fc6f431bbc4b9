"""The lemmas of the float64 Vandermonde sum (algorithms/s4/diagonal_midrad.py,
proofs/diagonal_kernels.md §3): D1 (a complex product's rounding), the relative bounds per
row, D2 through the power tables, D3 (the modulus t), D4 (the sum's radius).

Floats are exact rationals: D1, D3 and the relative bounds are decided exactly with
Fractions; the power tables and the sums are checked against FLINT at 300 bits with
comparisons that are true only when certain."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from flint import acb, arb, ctx
from hypothesis import given, strategies as st

from s4cert.algorithms.s4.diagonal_midrad import (MOD_ABS, PROD_ABS, THETA, _modulus, _mul, _power_table,
                                                   dd_powers, disks_of, relative_bounds, table_step,
                                                   vandermonde_midrad)
from s4cert.arith.double_double import DD
from s4cert.arith.midrad import MR, U

PREC = 300
Fr = Fraction


def abs2(z: complex) -> Fraction:
    return Fr(z.real) ** 2 + Fr(z.imag) ** 2


def sqrt_up(q: Fraction) -> Fraction:
    """A rational upper bound of sqrt(q), q >= 0 (exact for squares, else within 1/denominator)."""
    p = q.numerator * q.denominator
    s = math.isqrt(p)
    return Fr(s + (s * s != p), q.denominator)


def le_modulus(lhs: Fraction, c: Fraction, z: complex, add: Fraction = Fr(0)) -> bool:
    """lhs <= c |z| + add, decided exactly (c >= 0)."""
    d = lhs - add
    return d <= 0 or d * d <= c * c * abs2(z)


# -- Lemma D1: numpy's complex product -------------------------------------------------------

parts = st.one_of(st.floats(-1e6, 1e6), st.floats(-1e-300, 1e-300),
                  st.sampled_from([0.0, 5e-324, -3e-320, 2.0 ** -1022, 1e150, -1e-160, 1 / 3]))


@given(st.lists(st.tuples(parts, parts, parts, parts), min_size=1, max_size=8))
def test_complex_product_rounding_lemma_d1(vals):
    """|fl(a b) - a b| <= 3u |a||b| + 8 2^-1072 for numpy's complex128 product (whatever its
    loop: fused or not), decided exactly; and _mul's disks contain a b."""
    a = np.array([complex(w, x) for w, x, _, _ in vals])
    b = np.array([complex(y, z) for _, _, y, z in vals])
    m = a * b
    for ai, bi, mi in zip(a, b, m):
        er = Fr(mi.real) - (Fr(ai.real) * Fr(bi.real) - Fr(ai.imag) * Fr(bi.imag))
        ei = Fr(mi.imag) - (Fr(ai.real) * Fr(bi.imag) + Fr(ai.imag) * Fr(bi.real))
        # |e| <= 3u |a||b| + PROD_ABS: with an exact rational upper bound of |e|
        excess = max(Fr(0), sqrt_up(er * er + ei * ei) - Fr(PROD_ABS))
        assert excess * excess <= 9 * Fr(U) ** 2 * abs2(ai) * abs2(bi)
    p = _mul(MR(a, np.full(a.shape, 1e-20)), MR(b, np.zeros(a.shape)))
    for ai, bi, mi, r in zip(a, b, p.mid, p.rad):
        # the exact product of the midpoints and of a point on a's circle (a + 1e-20)
        for aa in (Fr(ai.real), Fr(ai.real) + Fr(1e-20)):
            er = Fr(mi.real) - (aa * Fr(bi.real) - Fr(ai.imag) * Fr(bi.imag))
            ei = Fr(mi.imag) - (aa * Fr(bi.imag) + Fr(ai.imag) * Fr(bi.real))
            assert er * er + ei * ei <= Fr(float(r)) ** 2


# -- relative bounds per row ----------------------------------------------------------------

def test_relative_bounds_hold_entrywise():
    """rad <= rho |mid| + tau for every entry of each row: entries of every size, entries
    below THETA (tau covers them), exact zeros with and without radius, subnormals."""
    rng = np.random.default_rng(5)
    rows = []
    for scale in (1.0, 1e-150, 1e150, 1e-190):
        mid = scale * (rng.standard_normal(12) + 1j * rng.standard_normal(12))
        mid[:4] = [0, 0, 1e-200 + 1e-200j, 5e-324j]
        mid[4] = THETA * (1 - 2.0 ** -50)                   # just below: tau
        mid[5] = THETA                                       # at it: rho
        rad = np.abs(mid) * 10.0 ** rng.uniform(-30, 0, 12)
        rad[:4] = [0.0, 1e-250, 3e-210, 1e-320]
        rows.append((mid, rad))
    d = MR(np.array([r[0] for r in rows]), np.array([r[1] for r in rows]))
    rho, tau = relative_bounds(d)
    assert rho.shape == tau.shape == (4,)
    for b in range(4):
        for m, r in zip(d.mid[b], d.rad[b]):
            assert le_modulus(Fr(float(r)), Fr(float(rho[b])), complex(m), Fr(float(tau[b])))
    small = np.maximum(np.abs(d.mid.real), np.abs(d.mid.imag)) < THETA
    assert np.array_equal(tau, np.max(np.where(small, d.rad, 0.0), axis=1))   # only the entries below THETA
    assert float(rho.max()) <= 1.0000001     # and rho is about the largest ratio


# -- Lemma D3: the modulus t ------------------------------------------------------------

tiny_or_any = st.one_of(st.floats(-2.0 ** 500, 2.0 ** 500), st.floats(-1e-305, 1e-305),
                        st.sampled_from([0.0, 5e-324, -1e-320, 2.0 ** -1022, 2.0 ** -537, 3e-162]))


def d3_holds(z: complex) -> bool:
    t = Fr(float(_modulus(np.array([z]))[0]))
    c = 1 + 3 * Fr(U)
    upper = abs2(z) <= (t * c + Fr(MOD_ABS)) ** 2                                     # |z| <= t(1+3u) + 2^-536
    lower = le_modulus(t, c, z, Fr(MOD_ABS))                                             # t <= |z|(1+3u) + 2^-536
    return upper and lower


@given(tiny_or_any, tiny_or_any)
def test_modulus_lemma_d3(re, im):
    assert d3_holds(complex(re, im))


@pytest.mark.parametrize("z", [0j, 5e-324 + 0j, 5e-324 + 5e-324j, 1e-320 - 3e-322j, 2.0 ** -537 + 2.0 ** -537j,
                               1e-162 + 1e-300j, 3e-170 + 0j, 1 + 1e-300j, 2.0 ** 500 + 2.0 ** 500j])
def test_modulus_lemma_d3_on_subnormal_and_extreme_inputs(z):
    assert d3_holds(z)


# -- Lemma D2 through the power tables --------------------------------------------------------

def dd_point(z: np.ndarray, rad=0.0) -> DD:
    """Double-double disks around z with low parts (a third of an ulp) and radii."""
    return DD.from_parts(z, z * (2.0 ** -54 / 3), np.broadcast_to(rad, z.shape))


def exact_ball(x: DD, idx, direction: complex = 0j) -> acb:
    """The midpoint of disk idx moved by direction * its radius (300 bits)."""
    return (acb(arb(float(x.rh[idx])) + arb(float(x.rl[idx])), arb(float(x.ih[idx])) + arb(float(x.il[idx])))
            + acb(direction) * arb(float(x.rad[idx])))


def table_holds(z: DD, first: MR, step: int, count: int, direction: complex) -> None:
    """_power_table's (rho, tau, M) against FLINT: for the point of each z disk in
    ``direction`` and the midpoint of ``first``, x_k = first z^(step k) satisfies
    |x_k - m_k| <= rho |m_k| + tau and |m_k| <= M; and its moduli table (Lemma D5)
    |m_k| <= gam mod_k + alpha, mod_k <= tbar."""
    t = _power_table(dd_powers(z), step, count, first)
    mid, rho, tau, M = t.mid, t.rho, t.tau, t.M
    batch, n = z.rh.shape
    with ctx.workprec(PREC):
        for b in range(batch):
            for j in range(n):
                w, x = exact_ball(z, (b, j), direction), acb(complex(first.mid[b, j]))
                for k in range(count):
                    m = acb(complex(mid[b, k, j]))
                    d = abs(x * w ** (step * k) - m)
                    rhs = arb(float(rho[b])) * abs(m) + arb(float(tau[b]))
                    assert d.upper() <= rhs.lower(), (b, j, k)
                    assert abs(m).upper() <= arb(float(M[b]))
                    assert abs(m).upper() <= (arb(t.gam) * arb(float(t.mod[b, k, j])) + arb(float(t.alpha[b]))).lower()
                    assert float(t.mod[b, k, j]) <= float(t.tbar[b])


@pytest.mark.parametrize("step,count", [(1, 37), (37, 20), (1, 1), (3, 2)])
def test_power_tables_lemma_d2_near_the_unit_circle(step, count):
    rng = np.random.default_rng(step * 100 + count)
    r = 1 + rng.uniform(-1e-3, 1e-3, (2, 6))
    z = r * np.exp(1j * rng.uniform(-np.pi, np.pi, (2, 6)))
    zd = dd_point(z, 1e-24)
    first = MR(rng.standard_normal((2, 6)) + 1j * rng.standard_normal((2, 6)), np.zeros((2, 6)))
    first.mid[1, 0] = 0.0                                 # an exact zero start
    for direction in (0j, 1j, -0.6 + 0.8j):
        table_holds(zd, first, step, count, direction)


def test_power_tables_lemma_d2_with_underflow():
    """Tiny nodes (1e-30, 1e-160): powers underflow to subnormals and 0; tau covers them."""
    z = np.array([[1e-30 + 1e-31j, 0.5j, 1e-160 + 0j], [0.999 + 0.01j, 1e-30j, 2e-8 + 0j]])
    zd = dd_point(z, np.abs(z) * 1e-20)
    first = MR(np.array([[1.0, 1e-100, 3 - 1j], [1e-250 + 0j, 1.0, 2.0]]), np.zeros((2, 3)))
    for direction in (0j, 1 + 0j):
        table_holds(zd, first, 1, 40, direction)
        table_holds(zd, first, 7, 6, direction)
    rho = _power_table(dd_powers(zd), 1, 40, first).rho
    assert float(rho.max()) < 1e-14                      # the bounds stay relative: the test is not vacuous


def test_moduli_bound_lemma_d6():
    """Lemma D6: without the moduli table, mod_max bounds every entry the table holds (floats
    compared exactly), for nodes inside, on and outside the unit circle and underflowing
    ones; the midpoints and the (rho, tau, M, gam, alpha, tbar) bounds are unchanged."""
    rng = np.random.default_rng(6)
    z = np.exp(rng.uniform(-0.2, 0.02, (3, 8)) + 1j * rng.uniform(-np.pi, np.pi, (3, 8)))
    z[2, :3] = [1e-30 + 1e-31j, 1.0, -1.0]
    zd = dd_point(z, np.abs(z) * 1e-22)
    first = MR(rng.standard_normal((3, 8)) + 1j * rng.standard_normal((3, 8)), np.zeros((3, 8)))
    first.mid[1, 0] = 0.0
    for step, count in ((1, 37), (5, 16), (1, 1)):
        full = _power_table(dd_powers(zd), step, count, first)
        lean = _power_table(dd_powers(zd), step, count, first, moduli=False)
        assert lean.mod is None and np.array_equal(lean.mid, full.mid)
        for name in ("rho", "tau", "M", "alpha", "tbar"):
            assert np.array_equal(getattr(lean, name), getattr(full, name))
        assert lean.gam == full.gam
        assert np.all(full.mod <= lean.mod_max[:, None, :])
        assert np.all(np.isfinite(lean.mod_max))


# -- Lemma D4: the sum ----------------------------------------------------------------------------

def test_vandermonde_sum_lemma_d4_with_tiny_and_zero_rows():
    """The kernel's disks contain factor Re sum_n W S z^l (FLINT, 300 bits) for weights
    with exact zeros and entries below THETA, nodes near the circle, outside it and tiny
    ones."""
    rng = np.random.default_rng(11)
    n, L = 5, 45
    z = (1 + rng.uniform(-1e-2, 0, (3, n))) * np.exp(1j * rng.uniform(-3, 3, (3, n)))
    z[2, :2] = [1e-20, 3e-200j]
    z[0, 1:3] *= 1.03                                     # growing modes (|z| > 1): Lemma D6's bound grows
    W = rng.standard_normal((3, n)) + 1j * rng.standard_normal((3, n))
    W[0, 0], W[1, :] = 0.0, [1e-200, 0, 1e-300j, 1.0, 1e-183]
    S = MR(np.ones((3, n), complex), np.zeros((3, n)))
    zd = dd_point(z, 1e-26)
    Wd = MR(W, np.abs(W) * 1e-25)
    for factor in (1, 2):
        rows: dict = {}
        mid, rad = vandermonde_midrad(Wd, S, dd_powers(zd), L, factor, rows)
        assert mid.shape == (3, L) and table_step(L) == 7
        # the per-row summary is the rows' own largest radius and finiteness
        assert np.array_equal(rows["max_rad"], np.max(rad, axis=1))
        assert np.array_equal(rows["finite"], np.isfinite(mid.sum(axis=1)))
        with ctx.workprec(PREC):
            for b in range(3):
                for corner in (1, -1j):           # the weights moved to their circles, the nodes to theirs
                    terms = [(acb(complex(W[b, j])) + acb(corner) * arb(float(Wd.rad[b, j])),
                              exact_ball(zd, (b, j), corner)) for j in range(n)]
                    for l in range(L):
                        K = factor * sum((w * x ** l for w, x in terms), acb(0)).real
                        assert abs(K - arb(float(mid[b, l]))).upper() <= arb(float(rad[b, l])), (b, l)
        assert float(rad[0].max()) < 1e-13 * float(np.abs(mid[0]).max())   # float64 midpoints: tight to ~n u


def test_disks_of_contain_the_double_double_disks():
    x = DD.from_parts(np.array([1 + 2j, 1e-300j, -3e100 + 0j]), np.array([1e-17 - 2e-17j, 1e-317 + 0j, 1e84j]),
                      np.array([1e-30, 0.0, 1e70]))
    d = disks_of(x)
    with ctx.workprec(PREC):
        for i in range(3):
            for direction in (0j, 1 + 0j, -1j, 0.6 - 0.8j):
                v = exact_ball(x, i, direction)
                assert abs(v - acb(complex(d.mid[i]))).upper() <= arb(float(d.rad[i]))
