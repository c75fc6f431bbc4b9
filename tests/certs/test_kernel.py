"""certify_kernel: every mode against exact arithmetic, the constants against exact
values, and the refusals."""
from fractions import Fraction

import numpy as np
import pytest
from flint import acb, arb, ctx
from hypothesis import given, settings, strategies as st

from s4cert.algorithms.s4.dplr import DPLR
from s4cert.algorithms.s4.filter import filter_kernel
from s4cert.arith import ExactField
from s4cert.certs.errors import CertificationError
from s4cert.certs.kernel import certify_kernel
from s4cert.certs.exact_mode import exact_field_for
from tests.helpers import random_dplr, q, point, exact_kernel

E4 = ExactField(4)





def assert_genuine_refusal(e: CertificationError, m, step, L: int) -> None:
    """A refusal names what an exact filter run of the same problem reports: a domain
    status (a pole on the grid, W(z_k) or G singular), never a case the filter can evaluate."""
    res = filter_kernel(exact_field_for(m.N, L), m, step, L)
    assert not res.ok and res.status.kind == "domain" and str(res.status) in str(e), (res.status, str(e))


def assert_encloses(ck, exact):
    """|K_j - mid_j| <= rad_j for the float64 arrays, and the full-precision balls contain K_j."""
    with ctx.workprec(4096):
        for j, (re, im) in enumerate(exact):
            m = ck.mid[j]
            err = abs(point(re - Fraction(m.real), im - Fraction(m.imag)))
            assert err <= arb(ck.rad[j]), (j, err, ck.rad[j])
            assert ck.balls[j].contains(point(re, im))


@st.composite
def problems(draw):
    N = draw(st.integers(1, 4))
    r = draw(st.integers(1, 2))
    step = draw(st.sampled_from([Fraction(1, 2), Fraction(1, 10), 0.25, 1.0]))
    m = random_dplr(draw, N, r, Fraction(step), exceptional=draw(st.booleans()))
    L = draw(st.integers(1, 12))
    return m, step, L


@settings(max_examples=15)
@given(p=problems())
def test_ball_mode_encloses_exact(p):
    m, step, L = p
    try:
        ck = certify_kernel(m, step, L, 1e-15)
    except CertificationError as e:  # a genuine resonance: the filter cannot evaluate there
        assert_genuine_refusal(e, m, step, L)
        return
    assert ck.status == "ok" and ck.certificate["max_radius"] <= 1e-15
    assert_encloses(ck, exact_kernel(m, step, L))


@settings(max_examples=8)
@given(p=problems())
def test_exact_mode_is_exact(p):
    m, step, L = p
    try:
        ck = certify_kernel(m, step, L, 1e-10, mode="exact")
    except CertificationError as e:
        assert_genuine_refusal(e, m, step, L)
        return
    assert ck.exact == exact_kernel(m, step, L)
    assert ck.certificate["max_radius"] == 0.0
    assert_encloses(ck, ck.exact)


def test_apriori_small_circuit_error_against_exact():
    """T0 in the hundreds to thousands; the rounded circuit's outputs within eps of the exact kernel."""
    m = DPLR([-1, (Fraction(-1, 2), 2), Fraction(-3, 2)], [[Fraction(1, 2)], [1], [(0, 1)]], [1, 2, (1, -1)],
             [(1, 1), Fraction(1, 3), 1])
    eps = Fraction(1, 10**6)
    ck = certify_kernel(m, Fraction(1, 2), 8, eps, mode="a-priori")
    cert = ck.certificate
    assert 400 <= cert["T0"] <= 100000
    exact = exact_kernel(m, Fraction(1, 2), 8)
    with ctx.workprec(cert["precision_bits"] + 64):
        for b, (re, im) in zip(ck.balls, exact):
            mid = acb(b.real.mid(), b.imag.mid())  # the rounded circuit output, exactly
            assert abs(mid - point(re, im)) <= arb(q(eps))
    assert_encloses(ck, exact)
    # u = 2^log2_u satisfies the theorem's inequality, recomputed from the stored numbers
    V0, D0, T0 = Fraction(cert["V0"]), Fraction(cert["D0"]), cert["T0"]
    assert V0 >= 1 and 0 < D0 <= 1
    with ctx.workprec(256):
        K0 = 64 * (arb(q(V0)) + 1) ** 2 / arb(q(D0)) ** 2
        bound = arb(q(min(Fraction(1), D0 / 2, eps / 2))) / (2 * K0 ** (T0 + 1))
        assert arb(2) ** cert["log2_u"] <= bound


def test_apriori_refuses_above_the_limit():
    m = DPLR([-1, -2], [1, 1], [1, 1], [1, -1])
    with pytest.raises(CertificationError, match=r"needs \d+ bits"):
        certify_kernel(m, 0.5, 4, 1e-6, mode="a-priori", apriori_limit=1000)
    ck = certify_kernel(m, 0.5, 4, 1e-6, mode="a-priori", apriori_limit=1000, force=True)
    assert ck.certificate["precision_bits"] > 1000


def test_constants_bound_the_exact_blocks():
    """b, w, d, A_wt bound the exact quantities of the theorem (computed in Q(zeta))."""
    m = DPLR([(-1, 1), Fraction(-1, 2), (-2, -3)], [[1, 0], [Fraction(1, 2), 1], [0, (0, 1)]], [1, 2, 3],
             [1, (1, 1), -1], Q=[[Fraction(1, 3), 1], [1, 0], [(1, 1), Fraction(1, 2)]])
    step, L = Fraction(1, 2), 8
    ck = certify_kernel(m, step, L, 1e-12)
    c = ck.certificate
    E = exact_field_for(m.N, L)
    res = filter_kernel(E, m, step, L, keep_blocks=True)
    blocks, M, r = res.info["blocks"], res.info["M"], m.r
    abs_ = lambda x: abs(E.to_acb(x, 300))
    with ctx.workprec(300):
        for k in range(M):
            if k == M // 2:
                continue
            vals = [abs_(blocks[("C", "B")][k])] + [abs_(blocks[("C", i)][k]) for i in range(r)] + \
                   [abs_(blocks[(i, "B")][k]) for i in range(r)] + \
                   [sum((abs_(blocks[(i, j)][k]) for j in range(r)), arb(0)) for i in range(r)]
            for v in vals:
                assert v <= arb(c["b"])
        for j, mu in enumerate(res.info["poles"]):
            for k in range(M):
                assert abs_(E.sub(E.root_of_unity(M, k), mu)) >= arb(c["d"])
    F_ = Fraction
    assert F_(c["kappa"]) >= 64 * r * F_(c["w"]) ** 2 * (F_(c["b"]) + 1) ** 2 * F_(c["s"])  # exactly
    for key, a_wt in c["A_wt"].items():
        assert F_(c["s"]) >= F_(a_wt) / F_(c["d"])


def test_counts_match_a_counted_run():
    from s4cert.arith import Counting, Float64Field
    m = DPLR([-1, -2, (-1, 3)], [1, 1, 1], [1, 1, 1], [1, -1, 1])
    for arithmetic, route in (("ball", "tree"), ("float64", "direct")):
        ck = certify_kernel(m, 0.5, 16, 1e-12, arithmetic=arithmetic)
        C = Counting(Float64Field())
        filter_kernel(C, m, 0.5, 16, c_tilde=[1.0] * 3, exceptional=[], cauchy=route)
        assert ck.counts["measured"] and ck.counts["route"] == route
        assert ck.counts["ops"] == sum(C.counts.values()) and ck.counts["peak_words"] == C.peak_words


def test_supplied_c_tilde_agrees_with_formed():
    from s4cert.algorithms.s4.c_tilde import c_tilde
    m = DPLR([-1, (Fraction(-1, 2), 1)], [1, Fraction(1, 2)], [1, 2], [1, (0, 1)])
    ct = c_tilde(E4, m, Fraction(1, 4), 8).value
    ct_q = [E4.to_fractions(x) for x in ct]
    a = certify_kernel(m, Fraction(1, 4), 8, 1e-14, c_tilde=ct_q)
    b = certify_kernel(m, Fraction(1, 4), 8, 1e-14)
    exact = exact_kernel(m, Fraction(1, 4), 8)
    assert_encloses(a, exact)
    assert_encloses(b, exact)
    assert "c_tilde" not in a.certificate and b.certificate["c_tilde"]["counted_with_filter"] is False


def test_resonances_are_refused_exactly():
    with pytest.raises(CertificationError, match="resonant-diagonal"):
        certify_kernel(DPLR([0], [0], [1], [1]), 1, 4, 1e-9)  # mu = 1 on the grid
    with pytest.raises(CertificationError, match="resonant-correction"):
        certify_kernel(DPLR([1], [1], [1], [1], Q=[(1, 1)]), 2, 4, 1e-9)


def test_bad_input():
    m = DPLR([-1], [1], [1], [1])
    for kwargs, msg in [({"L": 0}, "L"), ({"eps": 0}, "eps"), ({"eps": -1e-3}, "eps"),
                        ({"step": -1}, "step"), ({"step": float("nan")}, "non-finite"),
                        ({"mode": "fast"}, "mode"), ({"c_tilde": [1, 2]}, "c_tilde"),
                        ({"eps": float("nan")}, "non-finite")]:
        args = {"step": 0.5, "L": 4, "eps": 1e-9, **kwargs}
        with pytest.raises(ValueError, match=msg):
            certify_kernel(m, **args)
    from flint import acb as _acb
    with pytest.raises(ValueError, match="exact"):
        certify_kernel(DPLR([_acb(-1, 0)], [1], [1], [1]), 0.5, 4, 1e-9, mode="exact")


@settings(max_examples=6)
@given(p=problems(), route=st.sampled_from(["fast", "direct", "tree"]))
def test_every_cauchy_route_encloses_exact(p, route):
    m, step, L = p
    try:
        ck = certify_kernel(m, step, L, 1e-13, cauchy=route, counts=False)
    except CertificationError as e:
        assert_genuine_refusal(e, m, step, L)
        return
    assert ck.certificate["cauchy"]["route"] == route
    assert_encloses(ck, exact_kernel(m, step, L))


def test_fast_route_records_orders_and_bounds():
    N = 10  # small rationals keep the exact reference cheap
    lam = [(Fraction(-1, 2) - Fraction(j, 7), 3 * j) for j in range(N)]
    P = [Fraction(1, j + 2) for j in range(N)]
    B = [(1, Fraction(j, 3)) for j in range(N)]
    C = [Fraction((-1) ** j, j + 1) for j in range(N)]
    m = DPLR(lam, P, B, C)
    step = Fraction(1, 16)
    ck = certify_kernel(m, step, 32, 1e-12, arithmetic="ball", cauchy="fast")
    rec = ck.certificate["cauchy"]
    assert rec["route"] == "fast" and rec["p"] >= 1 and rec["p0"] >= 1 and rec["theta"] == 0.4
    assert 0 <= rec["max_truncation_bound"] <= 1e-12
    assert ck.counts["route"] == "fast"
    assert_encloses(ck, exact_kernel(m, step, 32))


def test_singular_G_is_refused_exactly_and_near_singular_certified():
    with pytest.raises(CertificationError, match="singular-bilinear-matrix"):
        certify_kernel(DPLR([4, -1], [0, 0], [1, 1], [1, 1]), Fraction(1, 2), 8, 1e-9)
    m = DPLR([4 + 2.0 ** -40, -1], [0, 0], [1, 1], [1, 1])  # G invertible, barely
    ck = certify_kernel(m, Fraction(1, 2), 8, 1e-9)
    assert_encloses(ck, exact_kernel(m, Fraction(1, 2), 8))


def test_collision_at_minus_i_is_refused_exactly():
    # mu = (a - lambda)/(a + lambda) = -i with a = 2: lambda = 2i; -i is on the grid for M >= 4
    with pytest.raises(CertificationError, match="resonant-diagonal"):
        certify_kernel(DPLR([(0, 2), -1], [0, 0], [1, 1], [1, 1]), 1, 4, 1e-9)
    certify_kernel(DPLR([(0, 2), -1], [0, 0], [1, 1], [1, 1]), 1, 2, 1e-9)  # M = 2: not on the grid


def test_precision_limit_is_refused():
    with pytest.raises(CertificationError, match="precision-limit"):
        certify_kernel(DPLR([-1, -2], [1, 1], [1, 1], [1, -1]), 0.5, 8, 1e-60, max_prec=128)


def test_exact_correction_check():
    from s4cert.certs.routing import correction_singular_at
    m = DPLR([1], [1], [1], [1], Q=[(1, 1)])  # A = i = s(z_1) for M = 4, step 2
    assert correction_singular_at(m, 2, 4, 1)
    assert not any(correction_singular_at(m, 2, 4, k) for k in (0, 3))


def test_review_edge_cases():
    # L as a numpy integer; an L beyond the supported maximum
    m = DPLR([-1, -2], [1, 1], [1, 1], [1, -1])
    assert certify_kernel(m, 0.5, np.int64(8), 1e-9).L == 8
    with pytest.raises(ValueError, match="maximum"):
        certify_kernel(m, 0.5, 10**11, 1e-9)
    # lambda_0 within float rounding of -2/step but not equal: certified; the float64
    # counting run cannot follow and says so instead of failing
    m2 = DPLR([-200, -2], [0, 0], [1, 1], [1, 1])
    ck = certify_kernel(m2, 0.01, 4, 1e-9)
    assert ck.counts["measured"] is False and "failed" in ck.counts["reason"]
    assert_encloses(ck, exact_kernel(m2, 0.01, 4))
    # eps far below the float range
    eps = Fraction(1, 10**400)
    ck = certify_kernel(m, Fraction(1, 2), 4, eps, max_prec=1 << 14)
    with ctx.workprec(4096):
        for b in ck.balls:
            assert b.real.rad() + b.imag.rad() <= arb(q(eps))


def test_point_balls_are_routed_exactly():
    """A ball of radius 0 is an exact number: its collision is decided, not left undecided."""
    with pytest.raises(CertificationError, match="resonant-diagonal"):
        certify_kernel(DPLR([acb(0), acb(-1)], [0, 0], [1, 1], [1, 1]), 1, 4, 1e-9)


def test_wide_ball_inputs_stop_with_a_reason():
    lam = acb(arb(-2, 1e-30))  # contains -2/step: the input cannot decide the partition
    with pytest.raises(CertificationError, match="undecided"):
        certify_kernel(DPLR([lam, -1], [0, 0], [1, 1], [1, 1]), 1, 4, 1e-9)


def test_float64_route_is_taken_and_audited(tmp_path):
    """Ball mode tries the float64 disks first: taken when max rad <= eps (exactly), the
    certificate says so, the file round-trips and an independent audit passes."""
    from s4cert.algorithms.models.hippo_float64 import dplr_float64
    from s4cert.certs.audit.report import audit_kernel_file
    from s4cert.certs.io.kernel_file import load_kernel, save_kernel
    m = dplr_float64("legs", 8)
    ck = certify_kernel(m, 0.05, 40, 1e-10, c_tilde=m.C)
    c = ck.certificate
    assert c["arithmetic"] == "float64 midpoint-radius" and c["precision_bits"] == 53
    assert c["cauchy"]["route"] == "direct" and Fraction(c["max_radius"]) <= Fraction(1e-10)
    assert len(ck.balls) == 40 and all(ck.balls[j].contains(acb(ck.mid[j].real, ck.mid[j].imag)) for j in range(40))
    path = tmp_path / "k.json"
    save_kernel(path, ck, m, 0.05, c_tilde=m.C)
    kf = load_kernel(path)
    assert kf.digest_ok and [Fraction(r) for r in ck.rad] == list(kf.rad)
    report = audit_kernel_file(path)
    assert report.ok, report


def test_float64_route_falls_back_or_refuses():
    """eps below what float64 disks reach: auto falls back to balls (and says why);
    arithmetic="float64" refuses; float64 with another mode or route is a ValueError."""
    m = DPLR([-1.0, -2.0], [0.5, 0.25], [1, 1], [1, -1])
    ck = certify_kernel(m, 0.5, 8, 1e-60)  # below the double-double and triple-double disks' reach too
    assert ck.certificate["precision_bits"] > 53 and "float64_route" in ck.certificate
    assert "arithmetic" not in ck.certificate
    with pytest.raises(CertificationError, match="float64 disks"):
        certify_kernel(m, 0.5, 8, 1e-30, arithmetic="float64")
    with pytest.raises(ValueError, match="arithmetic"):
        certify_kernel(m, 0.5, 8, 1e-10, arithmetic="float64", mode="a-priori")
    with pytest.raises(ValueError, match="arithmetic"):
        certify_kernel(m, 0.5, 8, 1e-10, arithmetic="float64", cauchy="fast")
    with pytest.raises(ValueError, match="arithmetic"):
        certify_kernel(m, 0.5, 8, 1e-10, arithmetic="double")
    # the ball arithmetic on request, and both contain the same kernel
    a = certify_kernel(m, 0.5, 8, 1e-12, arithmetic="ball")
    b = certify_kernel(m, 0.5, 8, 1e-12, arithmetic="float64")
    assert "arithmetic" not in a.certificate and b.certificate["arithmetic"] == "float64 midpoint-radius"
    assert np.all(np.abs(a.mid - b.mid) <= a.rad + b.rad)
