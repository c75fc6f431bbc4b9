"""Tests of the triple-double Cauchy sums (algorithms/s4/cauchy_td.py, proofs/disk_filter.md
section 5): the sums' disks contain 400-bit ball sums at the exact roots of unity and the
disks' exact centres, on random and stress poles (next to the grid, inside and outside the
circle, clustered; weights from 2^-300 to 2^300; radii); the separation bound is below every
|z_k - mu_j| and within 2^-40 of the least; the compiled loop gives bitwise the numpy form's
results and refusals, with no fused multiply-add; the triple-double route with the compiled
loop still contains the ball kernel."""
import math
from fractions import Fraction

import numpy as np
import pytest
from flint import acb, arb, ctx
from hypothesis import given, strategies as st

from s4cert.algorithms.s4 import cauchy_td
from s4cert.algorithms.s4.cauchy_td import GATE, cauchy_sums_td
from s4cert.algorithms.s4.disk_filter import primitive
from s4cert.algorithms.s4.filter import filter_kernel
from s4cert.algorithms.s4.midrad_td import filter_kernel_td
from s4cert.arith import BallField
from s4cert.arith.compiled import same_floats
from s4cert.arith.midrad import RangeError
from s4cert.arith.triple_double import TD, roots_of_unity_td
from tests.helpers import dissipative_dplr

U = 2.0 ** -53


def _td(values: np.ndarray, rel_rad: float, rng) -> TD:
    """Disks around three-part midpoints (the lower parts at 2^-53 and 2^-106 of the value)."""
    n = len(values)
    return TD.from_parts(values, values * U * rng.uniform(-1, 1, n), values * U * U * rng.uniform(-1, 1, n),
                         np.abs(values) * rel_rad * rng.random(n))


def _problem(kind: str, M: int, n: int, K: int, seed: int) -> tuple[TD, TD, list[TD]]:
    """Roots of unity, n poles and K weight sets of the family ``kind``."""
    rng = np.random.default_rng(seed)
    ang = 2 * math.pi * rng.random(n)
    if kind == "random":
        mu = rng.uniform(0.2, 0.95, n) * np.exp(1j * ang)
        scale = np.ones((K, n))
    else:                                                  # stress
        k = rng.integers(0, M, n)
        mu = np.exp(-2j * math.pi * k / M) * (1 + np.array([1e-9, -1e-12, 3.0, -0.999, 1e-6, 2.0 ** -30] * n)[:n])
        if n > 1:
            mu[-1] = mu[-2] + 1e-10                        # a cluster
        scale = 2.0 ** rng.choice([-300, -100, 0, 100, 300], (K, n))
    poles = _td(mu, 2.0 ** -160, rng)
    weights = [_td((rng.standard_normal(n) + 1j * rng.standard_normal(n)) * scale[c], 2.0 ** -150, rng)
               for c in range(K)]
    return roots_of_unity_td(M), poles, weights


def _centres(x: TD) -> list:
    """The disks' exact centres as acb balls (the parts summed exactly)."""
    return TD(*x._arrays()[:6], np.zeros(x.shape)).to_balls(2200)


def _roots(M: int) -> list:
    with ctx.workprec(400):
        return [acb(arb.cos_pi(arb(-2 * k) / M), arb.sin_pi(arb(-2 * k) / M)) for k in range(M)]


def _holds(x: TD, k: int, ball: acb) -> bool:
    mid = _centres(x[k:k + 1])[0]
    with ctx.workprec(600):
        return bool(abs(ball - mid).upper() <= arb(float(x.rad[k])))


@pytest.mark.parametrize("kind,M,n,K,seed", [("random", 32, 7, 4, 1), ("stress", 32, 6, 3, 2),
                                              ("stress", 16, 12, 2, 3)])
@pytest.mark.parametrize("compiled", ["0", "1"])
def test_sums_contain_the_ball_sums(kind, M, n, K, seed, compiled, monkeypatch):
    """Every sum's disk contains the 400-bit sum at the exact roots and centres (none refused),
    and the separation bound is at most every |z_k - mu_j| and at least (1 - 2^-40) times the
    least max(|Re(z_k - mu_j)|, |Im(z_k - mu_j)|) (what it bounds from below)."""
    monkeypatch.setenv("S4CERT_COMPILED", compiled)
    Z, poles, weights = _problem(kind, M, n, K, seed)
    sums, sep = cauchy_sums_td(Z, poles, weights)
    assert len(sums) == K and all(len(s) == M for s in sums)
    zs, mus = _roots(M), _centres(poles)
    least = None
    with ctx.workprec(400):
        inv = [[1 / (z - mu) for mu in mus] for z in zs]
        for k, z in enumerate(zs):
            for mu in mus:
                assert abs(z - mu).lower() >= arb(sep)
                d = z - mu
                box = max(float(abs(d.real).upper()), float(abs(d.imag).upper()))
                least = box if least is None else min(least, box)
        for c, w in enumerate(weights):
            a = _centres(w)
            for k in range(M):
                ref = sum((a[j] * inv[k][j] for j in range(n)), acb(0))
                assert _holds(sums[c], k, ref), (c, k)
    assert sep >= least * (1 - 2.0 ** -40)


def test_sums_are_the_generic_sums_up_to_their_radii():
    """The fused sums and the generic ones (other order of additions) enclose the same values:
    their disks meet at every root."""
    from s4cert.algorithms.s4.disk_filter import cauchy_generic
    Z, poles, weights = _problem("random", 64, 9, 2, 5)
    ours, sep = cauchy_sums_td(Z, poles, weights)
    theirs, sep_g = cauchy_generic(Z, poles, weights)
    for a, b in zip(ours, theirs):
        gap = np.abs(a.mid_complex() - b.mid_complex())
        assert np.all(gap <= 4 * (a.rad + b.rad) + 4 * U * np.abs(a.mid_complex()))
    assert 0 < sep and abs(sep - sep_g) <= 1e-12 * sep


def _bits_equal(a: list, b: list) -> bool:
    return all(same_floats(x, y) for p, q in zip(a, b) for x, y in zip(p._arrays(), q._arrays()))


@given(seed=st.integers(0, 2 ** 32 - 1), M=st.sampled_from([1, 2, 8, 32, 64]), n=st.integers(1, 9),
       K=st.integers(1, 4), kind=st.sampled_from(["random", "stress"]), block=st.integers(1, 64))
def test_compiled_loop_is_bitwise_the_numpy_form(seed, M, n, K, kind, block):
    """The compiled loop, in blocks of any size, gives the numpy form's sums and separation
    bound bit for bit, or both refuse."""
    pytest.importorskip("numba", reason="the compiled loop needs the 'fast' extra (numba)")
    assert GATE.open()
    Z, poles, weights = _problem(kind, M, n, K, seed)
    try:
        want, sep = cauchy_td._numpy_form(Z, poles, weights)
    except RangeError:
        with pytest.raises(RangeError):
            cauchy_td._compiled_form(Z, poles, weights, block)
        return
    got, sep_c = cauchy_td._compiled_form(Z, poles, weights, block)
    assert _bits_equal(want, got) and same_floats(np.array(sep), np.array(sep_c))


def test_refusals_and_edge_cases(monkeypatch):
    """A pole on a root, a disk of d around 0 and an out-of-range product are refused by both
    forms; no poles gives zero sums and inf; weight sets of the wrong length are refused."""
    Z = roots_of_unity_td(8)
    one = TD.exact(np.ones(1))
    cases = [(TD.exact([1.0]), [one]),                                           # mu = z_0
             (TD.from_parts([1.0 + 1e-20j], 0, 0, 1e-19), [one]),                # d's disk holds 0
             (TD.exact([0.9]), [TD.exact([2.0 ** 499])])]                         # 10 2^499 at z = 1
    for compiled in ("0", "1"):
        monkeypatch.setenv("S4CERT_COMPILED", compiled)
        for poles, weights in cases:
            with pytest.raises(RangeError):
                cauchy_sums_td(Z, poles, weights)
        sums, sep = cauchy_sums_td(Z, TD.exact(np.zeros(0)), [TD.exact(np.zeros(0))] * 2)
        assert sep == math.inf and len(sums) == 2 and all(np.all(s.r0 == 0) and np.all(s.rad == 0) for s in sums)
    with pytest.raises(ValueError, match="one weight per pole"):
        cauchy_sums_td(Z, TD.exact([0.5, 0.25]), [one])


def test_the_gate_follows_the_switch(monkeypatch):
    """The loop runs from MIN_PAIRS pairs on, on any size with "1", never with "0"; the
    registered primitive of TD is this one."""
    pytest.importorskip("numba", reason="the compiled loop needs the 'fast' extra (numba)")
    assert primitive(TD, "cauchy") is cauchy_sums_td
    monkeypatch.setenv("S4CERT_COMPILED", "auto")
    assert GATE.use(cauchy_td.MIN_PAIRS) and not GATE.use(cauchy_td.MIN_PAIRS - 1)
    monkeypatch.setenv("S4CERT_COMPILED", "0")
    assert not GATE.use(1 << 40)
    monkeypatch.setenv("S4CERT_COMPILED", "1")
    assert GATE.use(1)


def test_route_with_the_compiled_sums_contains_the_ball_kernel(monkeypatch):
    """The triple-double route with the compiled sums forced on a small model: its kernel's
    disks contain the 400-bit ball kernel, every entry."""
    pytest.importorskip("numba", reason="the compiled loop needs the 'fast' extra (numba)")
    monkeypatch.setenv("S4CERT_COMPILED", "1")
    step = Fraction(1, 2)
    m = dissipative_dplr(4, 6, 1, step)
    res = filter_kernel_td(m, step, 24)
    assert res.ok, res.info
    ref = filter_kernel(BallField(400), m, step, 24, cauchy="direct")
    assert ref.ok
    K = res.info["disks"]
    for j, b in enumerate(ref.value):
        assert _holds(K, j, b), j


def test_no_fused_multiply_add_in_the_sums_loop():
    """The per-set loop (a product and a sum per root), compiled with the project's settings
    (here without numba's cache, to read its machine code), has packed products and no fused
    multiply-add."""
    numba = pytest.importorskip("numba", reason="the compiled loop needs the 'fast' extra (numba)")
    cauchy_td._loop()
    f = numba.njit(nogil=True, error_model="numpy")(cauchy_td._next_terms.py_func)
    f(*[np.ones(4) for _ in range(7)], *[1.0] * 7, *[np.ones(4) for _ in range(7)])
    asm = "\n".join(f.inspect_asm().values()).lower()
    assert "mulpd" in asm
    assert not any(op in asm for op in ("vfmadd", "vfmsub", "vfnmadd", "vfnmsub"))
