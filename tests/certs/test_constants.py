"""The filter constants b, w, d, A_wt, s, kappa and the partition against exact values:
the blocks, W^-1, the weights and the poles computed in Q(zeta), the stored floats
compared as rationals, the angular branch of the separation bound, and _ratio_up."""
from __future__ import annotations

import functools
import math
from fractions import Fraction

import pytest
from flint import acb, arb, ctx, fmpq
from hypothesis import given, strategies as st

from s4cert.algorithms.s4.dplr import DPLR
from s4cert.algorithms.s4.c_tilde import c_tilde as exact_c_tilde
from s4cert.algorithms.linalg import lu, lu_solve
from s4cert.algorithms.s4.filter import filter_kernel
from s4cert.arith import BallField, ExactField, Truth
from s4cert.certs import routing
from s4cert.certs.constants import _ratio_up, separation, sum_key as _key
from s4cert.certs.exact_mode import exact_field_for
from s4cert.certs.kernel import certify_kernel
from tests.helpers import q, nonnegative

E4 = ExactField(4)
ONE, ZERO = Fraction(1), Fraction(0)
PREC = 300



def mul(x, y):
    return (x[0] * y[0] - x[1] * y[1], x[0] * y[1] + x[1] * y[0])


def div(x, y):
    d = y[0] * y[0] + y[1] * y[1]
    return ((x[0] * y[0] + x[1] * y[1]) / d, (x[1] * y[0] - x[0] * y[1]) / d)


def lam_for_pole(mu, a: Fraction):
    """lambda with (a - lambda)/(a + lambda) = mu."""
    return mul((a, ZERO), div((1 - mu[0], -mu[1]), (1 + mu[0], mu[1])))


def scaled(rho: Fraction, mu):
    return (rho * mu[0], rho * mu[1])


STEP = Fraction(1, 2)
A = 2 / STEP
UNIT = [(Fraction(3, 5), Fraction(4, 5)), (Fraction(5, 13), Fraction(-12, 13)), (Fraction(-7, 25), Fraction(24, 25))]

MODELS = {
    "r2": (DPLR([(-1, 1), Fraction(-1, 2), (-2, -3)], [[1, 0], [Fraction(1, 2), 1], [0, (0, 1)]], [1, 2, 3],
                [1, (1, 1), -1], Q=[[Fraction(1, 3), 1], [1, 0], [(1, 1), Fraction(1, 2)]]), STEP, 8),
    "r2-exceptional": (DPLR([-A, (Fraction(-1, 2), 1), Fraction(-3, 2)], [[1, 0], [Fraction(1, 2), 1], [0, (0, 1)]],
                            [1, 2, (1, -1)], [(1, 1), Fraction(1, 3), 1],
                            Q=[[Fraction(1, 3), 1], [1, 0], [(1, 1), Fraction(1, 2)]]), STEP, 6),
    # C~ and P large, B and Q small: the row sum |u_0| + |u_1| is the largest quantity b bounds
    "r2-u-dominant": (DPLR([-1, (Fraction(-1, 2), 1), Fraction(-3, 2)], [[4, 4], [(0, 4), -4], [4, (4, 4)]],
                           [Fraction(1, 8)] * 3, [4, (4, 4), -4],
                           Q=[[Fraction(1, 8), Fraction(1, 16)], [Fraction(1, 16), 0], [0, Fraction(1, 8)]]), STEP, 8),
    # poles with |mu| = 1 exactly (off the grid) and one at 1 + 2^-20 times a unit pole
    "r2-unit-circle": (DPLR([lam_for_pole(UNIT[0], A), lam_for_pole(UNIT[1], A),
                             lam_for_pole(scaled(1 + Fraction(1, 2**20), UNIT[2]), A), -1],
                            [[1, 0], [0, 1], [Fraction(1, 2), 1], [1, (0, 1)]], [1, (0, 1), 2, 1],
                            [1, 1, (1, -1), Fraction(1, 3)]), STEP, 16),
}


class Case:
    """A ball-mode certificate and the filter's exact blocks, poles and weights."""

    def __init__(self, name: str):
        self.name = name
        m, step, L = MODELS[name]
        self.m, self.step, self.L = m, step, L
        self.ck = certify_kernel(m, step, L, 1e-12, counts=False)
        self.c = self.ck.certificate
        self.E = E = exact_field_for(m.N, L)
        ct = exact_c_tilde(E4, m, step, 1 << max(0, (L - 1).bit_length()))
        assert ct.ok
        exc = routing.exact_partition(m, step)
        res = filter_kernel(E, m, step, L, c_tilde=[E4.to_fractions(x) for x in ct.value], exceptional=exc,
                            keep_blocks=True)
        assert res.ok
        self.info, self.M, self.r = res.info, res.info["M"], m.r
        self.partition = exc

    def ball(self, x) -> acb:
        return self.E.to_acb(x, PREC)

    def roots(self) -> range:
        """The k with z_k != -1."""
        return [k for k in range(self.M) if k != self.M // 2 or self.M == 1]


@functools.lru_cache(maxsize=None)
def get_case(name: str) -> Case:
    return Case(name)


@pytest.fixture(params=sorted(MODELS))
def case(request):
    return get_case(request.param)


def row_sum(balls: list) -> arb:
    return sum((abs(b) for b in balls), arb(0))


def test_b_bounds_the_row_sum_of_u_exactly(case):
    """b >= 1 and, at every root z != -1, b >= |x|, ||u||_inf = sum_i |u_i| (u a row),
    ||v||_inf = max_i |v_i| (v a column) and ||T||_inf, for the exact blocks (r = 2).
    In one model the row sum of u exceeds every other quantity (and each |u_i|), so a
    column norm for u would be caught."""
    blocks, r, b = case.info["blocks"], case.r, arb(case.c["b"])
    assert r == 2 and case.c["b"] >= 1
    u_rows, others = [], []
    with ctx.workprec(PREC):
        for k in case.roots():
            u = [case.ball(blocks[("C", i)][k]) for i in range(r)]
            v = [case.ball(blocks[(i, "B")][k]) for i in range(r)]
            T = [[case.ball(blocks[(i, c)][k]) for c in range(r)] for i in range(r)]
            x = case.ball(blocks[("C", "B")][k])
            assert abs(x) <= b
            assert row_sum(u) <= b, k
            assert all(abs(y) <= b for y in v)
            assert all(row_sum(row) <= b for row in T)
            u_rows.append(row_sum(u))
            others += [abs(x)] + [abs(y) for y in u + v] + [row_sum(row) for row in T]
        if case.name == "r2-u-dominant":
            top = max(others, key=lambda y: y.upper())
            assert any(s > top for s in u_rows)


def test_w_bounds_the_exact_inverse_norm(case):
    """w >= 1 and w >= ||W(z_k)^-1||_inf at every root z_k != -1, W = I + ((1+z)/2) T
    inverted exactly in Q(zeta)."""
    E, blocks, r = case.E, case.info["blocks"], case.r
    assert case.c["w"] >= 1
    w = arb(case.c["w"])
    for k in case.roots():
        beta = E.div(E.add(E.one(), E.root_of_unity(case.M, k)), E.from_number(2))
        W = [[E.add(E.one() if i == c else E.zero(), E.mul(beta, blocks[(i, c)][k])) for c in range(r)]
             for i in range(r)]
        f = lu(E, W)
        assert f.ok
        cols = [lu_solve(E, f.value, [E.one() if i == c else E.zero() for i in range(r)]) for c in range(r)]
        with ctx.workprec(PREC):
            for i in range(r):
                assert row_sum([case.ball(cols[c][i]) for c in range(r)]) <= w, (k, i)


def test_weight_bounds_hold_exactly(case):
    """A_wt[S] >= sum_j |a_j| for every Cauchy sum S, the a_j exact; an empty sum stores 0."""
    weights = case.info["weights"]
    assert set(case.c["A_wt"]) == {_key(key) for key in weights}
    with ctx.workprec(PREC):
        for key, ws in weights.items():
            bound = case.c["A_wt"][_key(key)]
            assert row_sum([case.ball(a) for a in ws]) <= arb(bound), key
            assert ws or bound == 0.0


def test_s_and_kappa_hold_as_rationals(case):
    """s >= 1, s >= A_wt/d for each nonempty sum, kappa >= 64 r w^2 (b+1)^2 s: exact
    rational inequalities between the stored floats; the partition is the exact one."""
    c = case.c
    s, d = Fraction(c["s"]), c["d"]
    assert s >= 1 and 0 < d < math.inf
    for key, ws in case.info["weights"].items():
        if ws:
            assert s >= Fraction(c["A_wt"][_key(key)]) / Fraction(d)
    b, w, kappa = Fraction(c["b"]), Fraction(c["w"]), Fraction(c["kappa"])
    assert kappa >= 64 * case.r * w ** 2 * (b + 1) ** 2 * s
    assert c["partition"] == case.partition


def test_constants_without_regular_poles():
    """Every lambda_j = -2/step: no Cauchy sum has a term, d = +inf, every A_wt = 0, s = 1."""
    c = certify_kernel(DPLR([-A, -A], [[1, 0], [0, 1]], [1, 2], [1, 1]), STEP, 4, 1e-9, counts=False).certificate
    assert c["d"] == math.inf and set(c["A_wt"].values()) == {0.0} and c["s"] == 1.0
    assert c["partition"] == [0, 1]
    assert Fraction(c["kappa"]) >= 64 * 2 * Fraction(c["w"]) ** 2 * (Fraction(c["b"]) + 1) ** 2


# -- the separation d (filter_constants.md section 5) ---------------------------------


def test_separation_on_the_unit_circle():
    """Poles with |mu| = 1 exactly, off the grid (the radial bound is 0), and one at
    distance 2^-20 from the circle: d <= |z_k - mu_j| for every pair, decided exactly in
    Q(zeta_16), and d is the least distance up to rounding, so the angular bound was used."""
    case = get_case("r2-unit-circle")
    E, M, d = case.E, case.M, case.c["d"]
    poles = case.info["poles"]
    assert len(poles) == 4
    for mu in poles[:2]:  # |mu|^2 = 1 exactly
        assert E.is_zero(E.sub(E.mul(mu, E.conj(mu)), E.one())) is Truth.TRUE
    d2 = E.from_number(Fraction(d) ** 2)
    with ctx.workprec(PREC):
        least = None
        for mu in poles:
            for k in range(M):
                diff = E.sub(E.root_of_unity(M, k), mu)
                assert nonnegative(E, E.sub(E.mul(diff, E.conj(diff)), d2)), k
                dist = abs(case.ball(diff))
                least = dist if least is None or dist.upper() < least.upper() else least
        # the radial bounds are 0, 0, ~2^-20 (and 2/3 for mu = 5/3): d beyond them
        assert arb(d) > arb(2) ** -19
        assert arb(d) >= least * (1 - arb(2) ** -40)


def pythagorean(t: Fraction):
    """((1 - t^2) + 2 t i)/(1 + t^2): a Gaussian rational of modulus 1."""
    den = 1 + t * t
    return ((1 - t * t) / den, 2 * t / den)


@given(t=st.fractions(min_value=-40, max_value=40, max_denominator=50),
       sign=st.sampled_from([1, -1]), e=st.sampled_from([None, 8, 30, 60]),
       logM=st.integers(0, 11))
def test_separation_angular_branch_against_every_root(t, sign, e, logM):
    """separation() on one pole of modulus 1 (or 1 +- 2^-e), all M <= 2048: d <= |z_k - mu|
    for every k (certain comparisons at 256 bits), and d is within 2^-100 of the least
    distance (the three roots around the pole's angle contain the nearest, Lemma S3)."""
    M = 1 << logM
    re, im = pythagorean(t)
    mu = (re, sign * im)
    if e is not None:
        mu = scaled(1 + Fraction(1, 2**e) if t > 0 else 1 - Fraction(1, 2**e), mu)
    F = BallField(128)
    d = separation(F, [F.from_number(mu)], M)
    with ctx.workprec(256):
        m = acb(arb(q(mu[0])), arb(q(mu[1])))
        dists = [abs(acb.exp_pi_i(acb(fmpq(-2 * k, M))) - m) if (4 * k) % M else
                 abs([acb(1), acb(0, -1), acb(-1), acb(0, 1)][(4 * k) // M] - m) for k in range(M)]
        for dist in dists:
            assert d <= dist
        least = min(dists, key=lambda x: x.upper())
        assert d >= least - arb(2) ** -100
        if least > 0:
            assert d > 0


def test_separation_limits():
    """A pole on the grid gives 0; a pole ball of undetermined angle (radius wider than
    pi/(2M)) falls back to the radial bound; no poles give +inf."""
    F = BallField(128)
    assert separation(F, [F.from_number((0, 1))], 8) == 0
    assert separation(F, [F.from_number((0, -1)), F.from_number(3)], 4) == 0
    assert separation(F, [], 8) == arb(math.inf)
    with ctx.workprec(64):
        blurred = acb(arb(0.3, 0.05), arb(0.4, 0.05))  # |mu| in about [0.35, 0.57]
    M = 1024
    d = separation(F, [blurred], M)
    assert arb(0.42) < d < arb(0.43)  # 1 - max |mu| = 0.4299...: the radial bound
    with ctx.workprec(128):
        for x, y in [(0.25, 0.35), (0.25, 0.45), (0.35, 0.35), (0.35, 0.45), (0.3, 0.4)]:
            mu = acb(x, y)
            assert all(d <= abs(acb.exp_pi_i(acb(fmpq(-2 * k, M))) - mu) for k in range(M))


# -- _ratio_up (section 7) ---------------------------------------------------------------

positive = st.floats(min_value=5e-324, max_value=1.7976931348623157e308, allow_nan=False, allow_infinity=False)


@given(a=positive, d=positive)
def test_ratio_up_is_the_least_float_above(a, d):
    """The least float >= a/d, exactly; +inf when a/d exceeds the largest float."""
    r = _ratio_up(a, d)
    exact = Fraction(a) / Fraction(d)
    if r == math.inf:
        assert exact > Fraction(1.7976931348623157e308)
    else:
        assert Fraction(r) >= exact and Fraction(math.nextafter(r, -math.inf)) < exact


def test_ratio_up_overflow_and_degenerate_cases():
    big = 1.7976931348623157e308
    assert _ratio_up(big, 0.5) == math.inf  # Fraction -> float raises OverflowError
    assert _ratio_up(1e300, 1e-300) == math.inf
    assert _ratio_up(big, 1.0) == big
    assert _ratio_up(1.0, 0.0) == math.inf and _ratio_up(1.0, -1.0) == math.inf
    assert _ratio_up(math.inf, 1.0) == math.inf
    assert Fraction(_ratio_up(1.0, 3.0)) >= Fraction(1, 3) > Fraction(math.nextafter(_ratio_up(1.0, 3.0), 0))
