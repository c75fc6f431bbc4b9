"""certify_kernel's disk routes (certs/float64_route.py): "auto" tries float64 disks, then
double-double disks, then balls, and the certificate records which certified
(proofs/double_double_filter.md, the acceptance rule)."""
from fractions import Fraction

import numpy as np
import pytest
from flint import acb, arb, ctx

from s4cert import certify_kernel
from s4cert.algorithms.models.hippo_float64 import dplr_float64
from s4cert.algorithms.s4.dplr import DPLR
from s4cert.algorithms.s4.filter import filter_kernel
from s4cert.arith import BallField
from s4cert.certs.errors import CertificationError

REF = BallField(400)
DD = "double-double midpoint-radius"


def _contains(ball: acb, b: acb) -> bool:
    with ctx.workprec(600):
        return bool(ball.contains(b))


def test_auto_takes_float64_then_double_double_then_triple_double_then_balls():
    m = dplr_float64("legs", 8)
    ref = filter_kernel(REF, m, 0.05, 32, c_tilde=m.C, cauchy="direct").value
    k64 = certify_kernel(m, 0.05, 32, 1e-10, c_tilde=m.C)
    assert k64.certificate["arithmetic"] == "float64 midpoint-radius"
    kdd = certify_kernel(m, 0.05, 32, 1e-24, c_tilde=m.C)
    c = kdd.certificate
    assert c["arithmetic"] == DD and c["precision_bits"] == 106 and "float64_route" in c
    assert Fraction(c["max_radius"]) <= Fraction(1e-24)
    for j in range(32):
        assert _contains(kdd.balls[j], ref[j])
        assert kdd.balls[j].rad() <= arb(2e-24)
        with ctx.workprec(600):
            assert abs(ref[j] - acb(kdd.mid[j].real, kdd.mid[j].imag)).upper() <= arb(float(kdd.rad[j]))
    ktd = certify_kernel(m, 0.05, 32, 1e-40, c_tilde=m.C)
    assert ktd.certificate["arithmetic"] == TD and "double-double: skipped" in ktd.certificate["float64_route"]
    assert all(_contains(ktd.balls[j], ref[j]) for j in range(32))
    kb = certify_kernel(m, 0.05, 32, 1e-60, c_tilde=m.C)
    assert "arithmetic" not in kb.certificate and kb.certificate["precision_bits"] > 159
    assert "triple-double: skipped" in kb.certificate["float64_route"]
    assert all(_contains(kb.balls[j], ref[j]) for j in range(32))


def test_double_double_on_request():
    m = DPLR([-1.0, -2.0], [0.5, 0.25], [1, 1], [1, -1])
    k = certify_kernel(m, 0.5, 8, 1e-10, arithmetic="double-double")
    assert k.certificate["arithmetic"] == DD and "float64_route" not in k.certificate
    with pytest.raises(CertificationError, match="double-double disks"):
        certify_kernel(m, 0.5, 8, 1e-40, arithmetic="double-double")
    with pytest.raises(ValueError, match="arithmetic"):
        certify_kernel(m, 0.5, 8, 1e-10, arithmetic="double-double", mode="a-priori")
    with pytest.raises(ValueError, match="arithmetic"):
        certify_kernel(m, 0.5, 8, 1e-10, arithmetic="double-double", cauchy="tree")
    # the same kernel as the ball arithmetic
    b = certify_kernel(m, 0.5, 8, 1e-20, arithmetic="ball")
    assert np.all(np.abs(k.mid - b.mid) <= k.rad + b.rad)


def test_double_double_kernel_file_is_audited(tmp_path):
    from s4cert.certs.audit.report import audit_kernel_file
    from s4cert.certs.io.kernel_file import load_kernel, save_kernel
    m = dplr_float64("legs", 8)
    ck = certify_kernel(m, 0.05, 40, 1e-24, c_tilde=m.C)
    assert ck.certificate["arithmetic"] == DD
    path = tmp_path / "k.json"
    save_kernel(path, ck, m, 0.05, c_tilde=m.C)
    kf = load_kernel(path)
    assert kf.digest_ok
    report = audit_kernel_file(path)
    assert report.ok, report


def test_routes_below_their_reach_are_skipped():
    """Under "auto" a disk route whose radius floor is above eps is not run: float64 when
    eps < u |K_0| / 2, double-double when eps < 2^-96 |K_0|, triple-double when
    eps < 2^-156 |K_0| (routing only: the estimate of |K_0| is float64, the accepted kernel
    is certified as always)."""
    from s4cert.certs.float64_route import first_entry_estimate
    m = dplr_float64("legs", 8)
    k0 = first_entry_estimate(m, 0.05)
    A = np.diag(m.Lambda) - np.array(m.P) @ np.array(m.Q).conj().T      # the dense estimate it replaces
    Bbar = np.linalg.solve(np.eye(8) - 0.025 * A, 0.05 * np.array(m.B))
    assert abs(k0 - abs(np.vdot(m.C, Bbar))) <= 1e-12 * k0              # an estimate: float64 agreement
    k = certify_kernel(m, 0.05, 32, k0 * 2.0 ** -60, c_tilde=m.C)
    assert k.certificate["arithmetic"] == DD and "float64: skipped" in k.certificate["float64_route"]
    kt = certify_kernel(m, 0.05, 32, k0 * 2.0 ** -110, c_tilde=m.C)
    assert "double-double: skipped" in kt.certificate["float64_route"] and kt.certificate["arithmetic"] == TD
    kb = certify_kernel(m, 0.05, 32, k0 * 2.0 ** -170, c_tilde=m.C)
    assert "triple-double: skipped" in kb.certificate["float64_route"] and "arithmetic" not in kb.certificate
    assert first_entry_estimate(DPLR([-1.0], [0.0], [1.0], [acb(1, 0)]), 0.1) is not None


TD = "triple-double midpoint-radius"


def _legs8_reference(L: int = 32):
    m = dplr_float64("legs", 8)
    ref = filter_kernel(REF, m, 0.05, L, c_tilde=m.C, cauchy="direct").value
    with ctx.workprec(600):
        kmax = max(float(abs(b).upper()) for b in ref)
    return m, ref, kmax


def test_triple_double_on_request():
    """arithmetic="triple-double" certifies at 1e-30 and 1e-40 max|K| on triple-double disks:
    the certificate names the arithmetic and its 159 bits, its max_radius (the disks around
    the boxes, float64_route.td_box_radii) is <= eps, and the boxes and the float64 disks
    contain the 400-bit ball kernel; eps below its reach is refused, as are other modes."""
    m, ref, kmax = _legs8_reference()
    for f in (1e-30, 1e-40):
        k = certify_kernel(m, 0.05, 32, f * kmax, c_tilde=m.C, arithmetic="triple-double")
        c = k.certificate
        assert c["arithmetic"] == TD and c["cauchy"]["arithmetic"] == TD and c["precision_bits"] == 159
        assert "float64_route" not in c and Fraction(c["max_radius"]) <= Fraction(f * kmax)
        for j in range(32):
            assert _contains(k.balls[j], ref[j])
            with ctx.workprec(600):
                assert abs(ref[j] - acb(k.mid[j].real, k.mid[j].imag)).upper() <= arb(float(k.rad[j]))
    with pytest.raises(CertificationError, match="triple-double disks"):
        certify_kernel(m, 0.05, 32, 1e-60 * kmax, c_tilde=m.C, arithmetic="triple-double")
    with pytest.raises(ValueError, match="arithmetic"):
        certify_kernel(m, 0.05, 32, 1e-30, arithmetic="triple-double", mode="a-priori")


def test_triple_double_forms_c_tilde_at_its_own_precision():
    """Without C~ the triple-double route forms it at TD_SETUP_PREC = 256 bits (at the float64
    routes' 128 bits its enclosures alone would hold the radius near 2^-128 max|K|): certified
    at 1e-40 max|K|, and the boxes contain the ball kernel formed from model.C."""
    from s4cert.certs.float64_route import TD_SETUP_PREC
    assert TD_SETUP_PREC >= 256
    m = DPLR([-1.0, -2.0 + 1j, -0.5], [0.5, 0.25, 0.1j], [1, 1j, 2], [1, -1, 0.5])
    ref = filter_kernel(REF, m, 0.5, 16, cauchy="direct").value
    with ctx.workprec(600):
        kmax = max(float(abs(b).upper()) for b in ref)
    k = certify_kernel(m, 0.5, 16, 1e-40 * kmax, arithmetic="triple-double")
    assert k.certificate["arithmetic"] == TD
    assert all(_contains(k.balls[j], ref[j]) for j in range(16))


def test_auto_takes_triple_double_between_double_double_and_balls():
    """Under "auto" the triple-double route comes after the double-double one: at 1e-30
    max|K| the double-double route is skipped as below its reach and the triple-double disks
    certify, containing the 400-bit reference; at 1e-60 max|K|, below the triple-double
    reach too, both are skipped and balls certify."""
    from s4cert.certs.float64_route import AUTO_ROUTES
    assert AUTO_ROUTES == ("float64", "double-double", "triple-double")
    m, ref, kmax = _legs8_reference()
    k = certify_kernel(m, 0.05, 32, 1e-30 * kmax, c_tilde=m.C)
    c = k.certificate
    assert c["arithmetic"] == TD and "double-double: skipped" in c["float64_route"]
    assert c["max_radius"] <= 1e-30 * kmax
    assert all(_contains(k.balls[j], ref[j]) for j in range(32))
    k = certify_kernel(m, 0.05, 32, 1e-60 * kmax, c_tilde=m.C)
    c = k.certificate
    assert "arithmetic" not in c and "triple-double: skipped" in c["float64_route"]
    assert all(_contains(k.balls[j], ref[j]) for j in range(32))


def test_triple_double_kernel_file_is_audited(tmp_path):
    from s4cert.certs.audit.report import audit_kernel_file
    from s4cert.certs.io.kernel_file import load_kernel, save_kernel
    m = dplr_float64("legs", 8)
    ck = certify_kernel(m, 0.05, 40, 1e-40, c_tilde=m.C, arithmetic="triple-double")
    assert ck.certificate["arithmetic"] == TD
    path = tmp_path / "k.json"
    save_kernel(path, ck, m, 0.05, c_tilde=m.C)
    assert load_kernel(path).digest_ok
    report = audit_kernel_file(path)
    assert report.ok, report


def test_the_certificate_names_how_c_tilde_was_formed():
    """The certificate says which method formed C~: the float64 squarings with a certified
    bound for a dissipative LegS model over many steps, the dense ball squarings for LegT
    (not dissipative in its stored form), and nothing formed when C~ is supplied."""
    from s4cert.algorithms.models.hippo_dplr import dplr as hippo_dplr
    legs = certify_kernel(hippo_dplr("legs", 16), Fraction(1, 100), 4096, Fraction(1, 10 ** 12))
    assert legs.certificate["c_tilde"]["method"].startswith("float64 solve and log2(M) squarings")
    legt = certify_kernel(hippo_dplr("legt", 8, theta=1), Fraction(1, 100), 64, Fraction(1, 10 ** 12))
    assert legt.certificate["c_tilde"]["method"] == "ball solve with G, then log2(M) squarings of Abar"
