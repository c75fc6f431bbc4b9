"""Tests of the S4 filter written once over disk classes (algorithms/s4/disk_filter.py,
proofs/disk_filter.md): on double-double disks with the generic Cauchy sums and transform
(the class's own operations only) and with the registered primitives, the kernel's disks
contain the kernel of an independent 400-bit ball run (``filter.filter_kernel``), or the
exact kernel; a case may end ``undecided``, never with a disk that misses."""
import math
from fractions import Fraction

import numpy as np
import pytest
from flint import acb, arb, ctx
from hypothesis import given, settings

from s4cert.algorithms.s4 import disk_filter
from s4cert.algorithms.s4.disk_filter import (cauchy_generic, filter_kernel_disks, idft_generic, primitive,
                                              register)
from s4cert.algorithms.s4.dplr import DPLR
from s4cert.algorithms.s4.filter import filter_kernel
from s4cert.algorithms.models.hippo_float64 import dplr_float64
from s4cert.arith import BallField
from s4cert.arith.double_double import DD, roots_of_unity_dd
from s4cert.arith.midrad import RangeError
from s4cert.arith.triple_double import TD, roots_of_unity_td
from tests.algorithms.test_s4_midrad import DISSIPATIVE_CASES, rational_problem
from tests.helpers import dissipative_dplr, exact_kernel

REF = BallField(400)
U2 = 2.0 ** -106


def _parts_dd(K: DD, j: int) -> tuple[list, list]:
    """The floats whose sums are the real and imaginary parts of disk j's midpoint."""
    return [float(K.rh[j]), float(K.rl[j])], [float(K.ih[j]), float(K.il[j])]


def _acb_of(parts: tuple[list, list]) -> acb:
    """The midpoint from its parts, exactly (at the current precision, >= 600 bits)."""
    re, im = parts
    return acb(sum((arb(x) for x in re), arb(0)), sum((arb(x) for x in im), arb(0)))


def _mid_dd(K: DD, j: int) -> acb:
    return _acb_of(_parts_dd(K, j))


def _parts_td(K: TD, j: int) -> tuple[list, list]:
    return [float(K.r0[j]), float(K.r1[j]), float(K.r2[j])], [float(K.i0[j]), float(K.i1[j]), float(K.i2[j])]


#: (disk class, generic, the floats of disk j's midpoint parts): the routes under test
#: (triple-double disks register no Cauchy or transform primitive: always the generic ones)
ROUTES = {"dd-generic": (DD, True, _parts_dd), "dd-primitives": (DD, False, _parts_dd),
          "td": (TD, False, _parts_td)}


def _holds(mid: acb, rad: float, b: acb) -> bool:
    with ctx.workprec(600):
        return bool(abs(b - mid).upper() <= arb(rad))


def assert_contains(route: str, res, ref_values) -> None:
    _, _, parts_of = ROUTES[route]
    K = res.info["disks"]
    mid, frad = res.value
    assert len(K) == len(ref_values) == len(mid)
    with ctx.workprec(600):
        for j, b in enumerate(ref_values):
            assert _holds(_acb_of(parts_of(K, j)), float(K.rad[j]), b)
            assert _holds(acb(complex(mid[j])), float(frad[j]), b)   # the rounded disks too


def run(route: str, m, step, L, c_tilde=None, exceptional=None):
    disks, generic, _ = ROUTES[route]
    return filter_kernel_disks(disks, m, step, L, c_tilde=c_tilde, exceptional=exceptional, generic=generic)


def check(route: str, m, step, L, c_tilde=None):
    """The route's disks contain the 400-bit ball run's kernel; True when certified, False
    when refused (undecided)."""
    res = run(route, m, step, L, c_tilde)
    if res.status == "undecided":
        return False
    assert res.ok, res.info
    ref = filter_kernel(REF, m, step, L, c_tilde=c_tilde, cauchy="direct")
    assert ref.ok
    assert_contains(route, res, ref.value)
    return True


def _lam_for_pole(mu: complex, step: float) -> complex:
    """lambda with (a - lambda)/(a + lambda) = mu (a = 2/step), rounded to a float."""
    a = 2 / step
    return a * (1 - mu) / (1 + mu)


def _stress_models() -> list:
    """The stress families of tests/algorithms/test_s4_midrad_dd.py: poles next to the unit
    circle and to -1, clustered poles, weights from 1e-150 to 1e150, subnormal entries."""
    out = []
    step, M = 0.5, 64
    for gap in (1e-6, 1e-12):
        mus = [(1 - gap) * complex(math.cos(t), math.sin(t)) for t in (0.3, 2 * math.pi / M * 1.5, 2.0)]
        out.append((DPLR([_lam_for_pole(mu, step) for mu in mus], [0.25, 0.5, -0.5j], [1, 1j, 2], [1, 2, 1 - 1j]),
                    step, M, None))
    out.append((DPLR([8 * (2 / -1e-9 - 1), -1.0 + 0.5j], [0.25, 0.5], [1, 1j], [1, 2]), 0.25, 64, None))
    base = 0.999 * complex(math.cos(1.0), math.sin(1.0))
    mus = [base + 1e-10 * complex(math.cos(k), math.sin(k)) for k in range(8)]
    g = np.random.default_rng(3)
    P = (g.standard_normal(8) + 1j * g.standard_normal(8)) / 4
    out.append((DPLR([_lam_for_pole(mu, 0.25) for mu in mus], P.tolist(), g.standard_normal(8).tolist(),
                     g.standard_normal(8).tolist()), 0.25, 32, None))
    exps = [-75, -40, 0, 40, 75]
    C = [10.0 ** e * (1 + 0.5j) for e in exps]
    out.append((DPLR([complex(-0.5 - 0.1 * k, 3.0 * k) for k in range(5)], [0.1, 0.2j, 0.3, 0.1, 0.2],
                     [10.0 ** e for e in exps], C), 0.1, 32, C))
    out.append((DPLR([-1.0 + 1j, -2.0, -0.5 + 3j], [5e-324, 1e-310, 0.5], [1e-320, 1.0, 2.0 ** -1060],
                     [1.0, 5e-324j, 1.0]), 0.1, 16, None))
    return out


@pytest.mark.parametrize("route", ["dd-generic", "td"])
@settings(max_examples=12, deadline=None)
@given(problem=rational_problem())
def test_disks_contain_the_exact_kernel(route, problem):
    """Random Gaussian-rational models (r = 1, 2, exceptional indices): the disks contain
    the exact kernel, or the route stops undecided."""
    from s4cert.certs.routing import exact_partition
    m, step, L = problem
    res = run(route, m, step, L, exceptional=exact_partition(m, step))
    if not res.ok:
        assert res.status in ("undecided", "resonant-diagonal", "resonant-correction", "singular-bilinear-matrix")
        return
    assert_contains_exact(route, res, exact_kernel(m, step, L))


def assert_contains_exact(route: str, res, kernel: list) -> None:
    """Each disk of the route's kernel contains the exact (re, im) entry (rational check)."""
    _, _, parts_of = ROUTES[route]
    K = res.info["disks"]
    for j, (re, im) in enumerate(kernel):
        pr, pi = parts_of(K, j)
        dr = re - sum(Fraction(x) for x in pr)
        di = im - sum(Fraction(x) for x in pi)
        assert dr * dr + di * di <= Fraction(float(K.rad[j])) ** 2


@pytest.mark.parametrize("route", ["dd-generic", "td"])
def test_every_dissipative_model_is_certified(route):
    """The dissipative models of the random family's sizes (tests.helpers.dissipative_dplr:
    ranks 1 and 2, some with an exceptional index) are all certified, and contain the exact
    kernels: 12 of 12."""
    from s4cert.certs.routing import exact_partition
    certified = 0
    for seed, N, r, step, exceptional, L in DISSIPATIVE_CASES:
        m = dissipative_dplr(seed, N, r, step, exceptional)
        res = run(route, m, step, L, exceptional=exact_partition(m, step))
        if res.ok:
            assert_contains_exact(route, res, exact_kernel(m, step, L))
            certified += 1
    assert certified == len(DISSIPATIVE_CASES) == 12


@pytest.mark.parametrize("route", ["dd-generic", "td"])
def test_stress_families_contained_or_refused(route):
    """Every stress model is contained or refused, and all but the subnormal one (whose
    weights below 2^-1000 a disk class may refuse) are certified."""
    certified = sum(check(route, m, step, L, c_tilde=ct) for m, step, L, ct in _stress_models())
    assert certified >= len(_stress_models()) - 1


@pytest.mark.parametrize("route", ["dd-generic", "dd-primitives", "td"])
def test_legs_with_exceptional_index_and_rank_two(route):
    """LegS (rank one, C~ supplied) and a rank-two model with an exceptional index
    (lambda_0 = -2/step exactly)."""
    m = dplr_float64("legs", 16)
    assert check(route, m, 1e-2, 100, c_tilde=m.C)
    m2 = DPLR([-4.0, -1.0 + 2j, -3.0], [[0.5, 0.1], [0.25, 0.2j], [0.1, 0.3]], [1, 1j, 2], [1, -1, 0.5])
    res = run(route, m2, 0.5, 64, exceptional=[0])
    assert res.ok and res.info["exceptional"] == [0]
    ref = filter_kernel(REF, m2, 0.5, 64, cauchy="direct", exceptional=[0])
    assert_contains(route, res, ref.value)


def test_primitives_route_is_filter_kernel_dd():
    """filter_kernel_dd is the driver on DD with the registered primitives: the same numbers."""
    from s4cert.algorithms.s4.midrad_dd import filter_kernel_dd
    m = dplr_float64("legs", 8)
    a = filter_kernel_dd(m, 0.05, 40, c_tilde=m.C)
    b = filter_kernel_disks(DD, m, 0.05, 40, c_tilde=m.C)
    K = b.info["disks"]
    hi, lo, rad = a.info["dd"]
    assert np.array_equal(hi, K.rh + 1j * K.ih) and np.array_equal(lo, K.rl + 1j * K.il)
    assert np.array_equal(rad, K.rad) and np.array_equal(a.value[1], b.value[1])


@pytest.mark.parametrize("M,scale", [(1, 1.0), (2, 1e-100), (8, 1e100), (64, 1.0), (256, 3.0)])
def test_generic_transform_contains_and_stays_within_its_bound(M, scale):
    """idft_generic on DD disks contains the 400-bit transform of every point of the input
    disks (moved to their edges), and its radius is at most the inputs' mean radius plus the
    operations' roundings: per stage and entry at most 64 u^2 |x|_1 (Lemma 4's add and mul
    on normalized pairs and twiddles of modulus <= 1 + 2^-100), with |x|_1 <= 1.5 sum |h_k|_1
    at every stage, over M."""
    g = np.random.default_rng(M)
    h = (g.standard_normal(M) + 1j * g.standard_normal(M)) * scale
    rin = np.abs(h) * 2.0 ** -110
    H = DD.from_parts(h, np.zeros(M), rin)
    K = idft_generic(H, M)
    total = float(np.sum(np.abs(h.real) + np.abs(h.imag)))
    bound = float(np.mean(rin)) * (1 + 2.0 ** -40) + 64 * U2 * max(1, math.log2(M)) * 1.5 * total / M
    with ctx.workprec(400):
        for sign in (1, -1):
            pts = [acb(x.real, x.imag) + sign * acb(r * 0.999999) for x, r in zip(h, rin)]
            ref = REF.primitive("dft")(pts, True) if M > 1 else pts
            for j in range(M):
                assert _holds(_mid_dd(K, j), float(K.rad[j]), ref[j])
    assert float(K.rad.max()) <= bound


def test_generic_cauchy_contains_and_separates():
    """cauchy_generic on DD disks: the sums contain the 400-bit sums, the separation is a
    lower bound of every |z_k - mu_j|, and a pole on the grid is refused."""
    from s4cert.algorithms.cauchy.direct import cauchy_direct
    g = np.random.default_rng(7)
    M, n = 32, 11
    mus = (1 + 1e-8 * g.random(n)) * np.exp(2j * math.pi * g.random(n))
    w = (g.standard_normal(n) + 1j * g.standard_normal(n)) * 10.0 ** g.integers(-20, 20, n)
    W = DD.from_parts(w, np.zeros(n), np.abs(w) * 1e-40)
    (S,), sep = cauchy_generic(roots_of_unity_dd(M), DD.exact(mus), [W])
    ref = cauchy_direct(REF, [REF.from_number(complex(m)) for m in mus], [REF.from_number(complex(x)) for x in w],
                        M).value
    with ctx.workprec(400):
        for k in range(M):
            assert _holds(_mid_dd(S, k), float(S.rad[k]), ref[k])
            for m in mus:
                z = acb(arb.cos_pi(arb(-2 * k) / M), arb.sin_pi(arb(-2 * k) / M))
                assert abs(z - acb(m.real, m.imag)).lower() >= arb(sep)
    assert 0 < sep
    with pytest.raises(RangeError):
        cauchy_generic(roots_of_unity_dd(8), DD.exact([1.0]), [DD.exact([1.0])])


def test_the_registry():
    """DD's primitives are registered; a class without them is refused with one ValueError;
    unknown names are refused."""
    from s4cert.algorithms.s4.cauchy_dd import cauchy_sums_dd  # noqa: F401 (the registered sums' module)
    from s4cert.algorithms.s4.midrad_dd import cauchy_direct_dd, idft_dd
    assert primitive(DD, "cauchy") is cauchy_direct_dd and primitive(DD, "idft") is idft_dd
    assert primitive(DD, "arithmetic") == "double-double midpoint-radius"

    class Bare:
        pass
    assert primitive(Bare, "cauchy") is cauchy_generic and primitive(Bare, "idft") is idft_generic
    with pytest.raises(ValueError, match="no registered 'of_balls'"):
        primitive(Bare, "of_balls")
    with pytest.raises(ValueError, match="unknown primitive"):
        primitive(DD, "fft")
    with pytest.raises(ValueError, match="unknown primitive names"):
        register(Bare, fft=None)
    assert Bare not in disk_filter._REGISTRY


@pytest.mark.parametrize("M", [2, 16, 256])
def test_generic_transform_on_triple_double_disks(M):
    """idft_generic on TD disks contains the 400-bit transform of the input disks' edges, and
    its radius is at most the inputs' mean radius plus, per stage and entry, the roundings of
    one product and one sum on normalized parts (C_MUL u^3 |w0|_1 |o0|_1 and C_ADD u^3
    (|e0|_1 + |p0|_1), Lemmas 4 and 2 of proofs/triple_double.md, with |w0|_1 <= 1.4143 and
    |p0|_1 <= 1.4143 |o0|_1; the twiddles' radii, at most u^3, times |o| <= 1.01 |o0|_1):
    c u^3 |x|_1 with c = 1.4143 C_MUL + 2.4143 C_ADD + 1.01, |x|_1 <= 1.5 sum |h_k|_1 at every
    stage, over M."""
    from s4cert.arith.triple_double import C_ADD, C_MUL
    c = 1.4143 * C_MUL + 2.4143 * C_ADD + 1.01
    g = np.random.default_rng(M + 1)
    h = g.standard_normal(M) + 1j * g.standard_normal(M)
    rin = np.abs(h) * 2.0 ** -165
    K = idft_generic(TD.from_parts(h, np.zeros(M), np.zeros(M), rin), M)
    total = float(np.sum(np.abs(h.real) + np.abs(h.imag)))
    bound = float(np.mean(rin)) * (1 + 2.0 ** -40) + c * 2.0 ** -159 * math.log2(M) * 1.5 * total / M
    with ctx.workprec(600):
        for sign in (1, -1):
            pts = [acb(x.real, x.imag) + sign * acb(r * 0.999999) for x, r in zip(h, rin)]
            ref = REF.primitive("dft")(pts, True)
            for j in range(M):
                assert _holds(_acb_of(_parts_td(K, j)), float(K.rad[j]), ref[j])
    assert float(K.rad.max()) <= bound
    assert roots_of_unity_td(M).rad.max() <= 2.0 ** -159     # the twiddles' share assumed above: u^3 |o|
