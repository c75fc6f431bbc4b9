"""The audit of kernel files (passes on fresh files, names what fails on altered ones) and
the certified comparison of another kernel with a certified one."""
from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest

from s4cert.algorithms.s4.dplr import DPLR
from s4cert.algorithms.s4.kernels import kernel_by_powers
from s4cert.algorithms.s4.filter import filter_kernel
from s4cert.arith import BallField, ExactField, RoundedField, trace
from s4cert.certs.audit.recertify import constant_bounds
from s4cert.certs.audit.report import audit_kernel_file
from s4cert.certs.compare import compare_with
from s4cert.certs.io.kernel_file import file_digest, save_kernel
from s4cert.certs.kernel import certify_kernel

STEP = 0.5
EPS = Fraction(1, 10 ** 15)
# b > 1 for this model, so an understated b is caught by the re-certification
MODEL = DPLR([-1.0, -2.0 + 1j, -0.5 - 3j], [0.5, 0.25j, 1], [1, 2, 1j], [1, -1, 3])
TINY = DPLR([-1.0, -2.0 + 1j], [0.5, 0.25j], [1, 1], [1, -1])          # a-priori: T0 ~ 500
REAL = DPLR([-1.0, -3.0, -0.5], [0.5, 0.25, 1.0], [1.0, 2.0, -1.0], [1.0, -1.0, 3.0])
CT = [(Fraction(1, 3), Fraction(0)), 0.25 - 1j]


def _write(tmp_path, name, model, L, mode, c_tilde=None):
    ck = certify_kernel(model, STEP, L, EPS, mode=mode, c_tilde=c_tilde)
    path = tmp_path / f"{name}.json"
    save_kernel(path, ck, model, STEP, c_tilde=c_tilde)
    return path, ck


@pytest.fixture(scope="module")
def files_by_mode(tmp_path_factory):
    d = tmp_path_factory.mktemp("kernels")
    return {"ball": _write(d, "ball", MODEL, 8, "ball")[0],
            "exact": _write(d, "exact", MODEL, 8, "exact")[0],
            "a-priori": _write(d, "apriori", TINY, 4, "a-priori")[0]}


def _exact_kernel(model, L):
    E = ExactField(4)
    return [E.to_fractions(k) for k in kernel_by_powers(E, model, STEP, L).value]


# -- fresh files pass --------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["ball", "exact", "a-priori"])
def test_fresh_file_passes(files_by_mode, mode):
    rep = audit_kernel_file(files_by_mode[mode])
    assert rep.ok, rep.summary()
    names = [name for name, _, _ in rep.checks]
    for name in ("digest", "status", "claims", "kernel", "kappa", "partition", "b", "w", "A_wt", "d", "s"):
        assert name in names
    assert ("u" in names and "circuit" in names) == (mode == "a-priori")
    assert rep.summary().endswith("audit passed")


def test_rounded_a_priori_outputs_pass(tmp_path):
    """When the certified kernel carries the exact rounded circuit outputs, the file stores
    them with radius eps and the audit confirms the theorem's bound."""
    ck = certify_kernel(TINY, STEP, 4, EPS, mode="a-priori", c_tilde=CT)
    t = trace(BallField(128), filter_kernel, TINY, STEP, 4, c_tilde=CT, exceptional=ck.certificate["partition"],
              cauchy=ck.certificate["circuit_cauchy"])
    assert t.circuit.gates == ck.certificate["T0"]
    R = RoundedField(ck.certificate["precision_bits"])
    ck.exact = [R.to_fractions(x) for x in t.circuit.evaluate(R)]
    save_kernel(tmp_path / "k.json", ck, TINY, STEP, c_tilde=CT)
    doc = json.loads((tmp_path / "k.json").read_text())
    assert doc["kernel"]["source"] == "rounded circuit outputs" and set(doc["kernel"]["rad"]) == {str(EPS)}
    rep = audit_kernel_file(tmp_path / "k.json")
    assert rep.ok, rep.summary()


@pytest.mark.parametrize("mode", ["ball", "exact"])
def test_supplied_c_tilde_and_the_direct_route_pass(tmp_path, mode):
    model = DPLR(TINY.Lambda, TINY.P, TINY.B, [0, 0])     # C unknown: C~ is what counts
    path, _ = _write(tmp_path, "ct", model, 8, mode, c_tilde=CT)
    assert audit_kernel_file(path).ok
    rep = audit_kernel_file(path, powers_limit=0)          # the filter with direct Cauchy sums
    detail = dict((n, d) for n, _, d in rep.checks)["kernel"]
    if mode == "ball":
        assert rep.ok and "direct Cauchy sums" in detail, rep.summary()
    else:  # exact values are re-proved only by the exact route
        assert rep.failed() == ["kernel"] and "powers_limit" in detail


def test_exceptional_partition_passes(tmp_path):
    """lambda_0 = -2/step: the partition is recomputed exactly and the constant terms enter."""
    model = DPLR([-4, -1 + 2j, -2], [0.5, 0.25, 1], [1, 1, 1], [1, -1, 0.5])
    path, ck = _write(tmp_path, "exc", model, 8, "ball")
    assert ck.certificate["partition"] == [0]
    rep = audit_kernel_file(path)
    assert rep.ok, rep.summary()


# -- altered files fail, naming the check ---------------------------------------------------

def _tamper(src, dst, edit, redigest=False):
    doc = json.loads(src.read_text())
    edit(doc)
    if redigest:
        doc["sha256"] = file_digest(doc)
    dst.write_text(json.dumps(doc))
    return audit_kernel_file(dst)


@pytest.mark.parametrize("route, why", [("tree", "gates"), ("arcs", "circuit_cauchy")])
def test_a_priori_circuit_route_is_checked(files_by_mode, tmp_path, route, why):
    """The certificate names the Cauchy route of its circuit; the audit re-traces that one,
    so another route's circuit (other T0) or an unknown route fails the circuit check."""
    src = files_by_mode["a-priori"]
    assert json.loads(src.read_text())["certificate"]["circuit_cauchy"] == "direct"
    rep = _tamper(src, tmp_path / "c.json", lambda d: d["certificate"].__setitem__("circuit_cauchy", route),
                  redigest=True)
    assert not rep.ok and "circuit" in rep.failed()
    assert why in dict((n, d) for n, _, d in rep.checks)["circuit"]


def _bump(s: str, by: Fraction) -> str:
    return str(Fraction(s) + by)


EDITS = {
    "midpoint": (lambda d: d["kernel"]["re"].__setitem__(3, _bump(d["kernel"]["re"][3], Fraction(1, 10 ** 12))),
                 "kernel"),
    "radius": (lambda d: d["kernel"]["rad"].__setitem__(0, "0"), "kernel"),
    "b": (lambda d: d["certificate"].__setitem__("b", 1.0), "b"),
    "kappa": (lambda d: d["certificate"].__setitem__("kappa", d["certificate"]["kappa"] / 2), "kappa"),
    "problem number": (lambda d: d["problem"]["model"]["B"].__setitem__(1, ["2", "1/1024"]), "kernel"),
    "d": (lambda d: d["certificate"].__setitem__("d", d["certificate"]["d"] * 2), "d"),
    "A_wt": (lambda d: d["certificate"]["A_wt"].__setitem__("S[Ct,B]", d["certificate"]["A_wt"]["S[Ct,B]"] / 4),
             "A_wt"),
    "partition": (lambda d: d["certificate"].__setitem__("partition", [1]), "partition"),
}


@pytest.mark.parametrize("what", sorted(EDITS))
def test_altered_number_fails(files_by_mode, tmp_path, what):
    edit, check = EDITS[what]
    rep = _tamper(files_by_mode["ball"], tmp_path / "t.json", edit)
    assert not rep.ok and "digest" in rep.failed()
    # the mathematical checks catch it on their own, even with a recomputed digest
    rep = _tamper(files_by_mode["ball"], tmp_path / "t2.json", edit, redigest=True)
    assert not rep.ok and check in rep.failed() and "digest" not in rep.failed(), rep.summary()


def test_altered_digest_fails(files_by_mode, tmp_path):
    rep = _tamper(files_by_mode["exact"], tmp_path / "t.json", lambda d: d.__setitem__("sha256", "0" * 64))
    assert rep.failed() == ["digest"]


@pytest.mark.parametrize("slack, verdict", [(Fraction(1, 2 ** 200), "passes"), (0, "not decided"),
                                            (-Fraction(1, 2 ** 200), "certainly outside")])
def test_kernel_on_the_boundary_of_its_disk(files_by_mode, tmp_path, slack, verdict):
    """Disks of radius delta + slack centred at K_j + delta: inside, on the boundary (true,
    but no ball computation can decide it: the audit does not pass it), outside."""
    exact = _exact_kernel(MODEL, 8)
    delta = Fraction(1, 10 ** 16)

    def edit(d):
        d["kernel"]["re"] = [str(a + delta) for a, _ in exact]
        d["kernel"]["im"] = [str(b) for _, b in exact]
        d["kernel"]["rad"] = [str(delta + slack)] * 8
        d["certificate"]["max_radius"] = float(delta + slack)
    rep = _tamper(files_by_mode["ball"], tmp_path / "t.json", edit, redigest=True)
    detail = dict((n, d) for n, _, d in rep.checks)["kernel"]
    if verdict == "passes":
        assert rep.ok, rep.summary()
    else:
        assert rep.failed() == ["kernel"] and verdict in detail


def test_altered_exact_value_fails(files_by_mode, tmp_path):
    edit = lambda d: d["kernel"]["im"].__setitem__(5, _bump(d["kernel"]["im"][5], Fraction(1, 10 ** 30)))
    rep = _tamper(files_by_mode["exact"], tmp_path / "t.json", edit, redigest=True)
    assert rep.failed() == ["kernel"]


@pytest.mark.parametrize("key, value, check", [
    ("T0", lambda c: c["T0"] - 1, "circuit"),
    ("V0", lambda c: "1", "circuit"),
    ("V0", lambda c: str(Fraction(c["V0"]) * 4), "u"),
    ("D0", lambda c: str(Fraction(c["D0"]) / 4), "u"),
    ("log2_u", lambda c: c["log2_u"] + 100, "u"),
    ("log2_K0", lambda c: c["log2_K0"] - 1, "u"),
])
def test_altered_a_priori_certificate_fails(files_by_mode, tmp_path, key, value, check):
    def edit(d):
        d["certificate"][key] = value(d["certificate"])
        if key == "log2_u":
            d["certificate"]["precision_bits"] = -d["certificate"]["log2_u"]
    rep = _tamper(files_by_mode["a-priori"], tmp_path / "t.json", edit, redigest=True)
    assert check in rep.failed(), rep.summary()


def test_malformed_certificate_value_is_a_failed_check(files_by_mode, tmp_path):
    rep = _tamper(files_by_mode["ball"], tmp_path / "t.json",
                  lambda d: d["certificate"].__setitem__("w", "many"), redigest=True)
    assert {"w", "kappa"} <= set(rep.failed())
    assert "cannot be checked" in dict((n, d) for n, _, d in rep.checks)["w"]


def test_unreadable_file_raises(tmp_path):
    with pytest.raises(ValueError, match="no such file"):
        audit_kernel_file(tmp_path / "missing.json")


def test_row_norm_of_u_enters_b():
    """u = C~* D P is a row: its infinity norm is the sum of |u_i| (the spec's convention);
    the re-certified lower bound of b is at least that sum at every root."""
    model = DPLR([-1.0, -2.0 + 1j, -0.5], [[0.5, 1.0], [1j, 0.25], [1.0, -1.0]], [1, 2, 1j], [1, -1, 3])
    F = BallField(200)
    res = filter_kernel(F, model, STEP, 4, c_tilde=[1, 2, 3], cauchy="direct", keep_blocks=True)
    b_lo, _ = constant_bounds(F, res.info, 2)["b"]
    row_sums = [abs(res.info["blocks"][("C", 0)][k]) + abs(res.info["blocks"][("C", 1)][k])
                for k in range(4) if k != 2]
    assert all(b_lo >= s.lower() for s in row_sums)


# -- compare ------------------------------------------------------------------------------

def _error_facts(exact, other):
    """max_j |o_j - K_j|^2 and max_j |K_j|^2, exactly."""
    errs = [(Fraction(complex(o).real) - a) ** 2 + (Fraction(complex(o).imag) - b) ** 2
            for o, (a, b) in zip(other, exact)]
    return max(errs), max(a * a + b * b for a, b in exact)


def _inside(lo: float, hi: float, square: Fraction, scale2: Fraction = Fraction(1)) -> bool:
    """lo <= x <= hi for x = sqrt(square / scale2), decided exactly."""
    return Fraction(lo) ** 2 * scale2 <= square <= Fraction(hi) ** 2 * scale2


@pytest.mark.parametrize("mode, dtype", [("ball", np.float32), ("exact", np.float64), ("a-priori", np.float32)])
def test_compare_bounds_contain_the_true_errors(tmp_path, mode, dtype):
    L = 4 if mode == "a-priori" else 16
    path, ck = _write(tmp_path, mode, REAL, L, mode)
    exact = _exact_kernel(REAL, L)
    assert all(b == 0 for _, b in exact)
    other = ck.mid.real.astype(dtype)                    # a real float kernel, compared as real
    other[1] += dtype(1e-3)
    np.save(tmp_path / "o.npy", other)
    rep = compare_with(path, tmp_path / "o.npy")
    e2, k2 = _error_facts(exact, other)
    assert _inside(*rep.abs_error_bounds, e2)
    assert _inside(*rep.rel_error_bounds, e2, k2)
    assert _inside(*rep.kernel_max_bounds, k2)
    assert rep.worst_index == 1 and rep.abs_error_bounds[0] > 0
    assert rep.abs_error_bounds[0] <= rep.abs_error <= rep.abs_error_bounds[1]
    assert "certified in" in rep.summary()


def test_compare_bounds_use_the_radii(tmp_path):
    """Disks centred on the other kernel itself, with radius its exact distance to K: the
    error is invisible in the midpoints and the bounds must come from the radii."""
    path, _ = _write(tmp_path, "r", REAL, 8, "exact")
    exact = _exact_kernel(REAL, 8)
    other = np.array([float(a) for a, _ in exact], dtype=np.float32)

    def edit(d):
        d["kernel"]["re"] = [str(Fraction(float(o))) for o in other]
        d["kernel"]["rad"] = [str(abs(Fraction(float(o)) - a)) for o, (a, _) in zip(other, exact)]
        d["kernel"]["source"] = "ball enclosure"
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="digest"):  # altered, digest stale: refused
        compare_with(path, other)
    doc["sha256"] = file_digest(doc)
    path.write_text(json.dumps(doc))
    rep = compare_with(path, other, tighten=False)  # the file's own disks, not a new certificate
    e2, k2 = _error_facts(exact, other)
    assert e2 > 0 and rep.abs_error == 0.0
    assert _inside(*rep.abs_error_bounds, e2) and _inside(*rep.rel_error_bounds, e2, k2)
    assert rep.digest_ok


def test_compare_complex_kernel_from_npz(tmp_path):
    path, ck = _write(tmp_path, "c", MODEL, 8, "ball")
    other = ck.mid.astype(np.complex64)
    np.savez(tmp_path / "o.npz", kernel=other, extra=np.zeros(3))
    rep = compare_with(path, tmp_path / "o.npz", key="kernel")
    e2, k2 = _error_facts(_exact_kernel(MODEL, 8), other)
    assert _inside(*rep.abs_error_bounds, e2) and _inside(*rep.rel_error_bounds, e2, k2)
    assert rep.abs_error_bounds[1] < 1e-6                 # float32 rounding of the kernel
    assert compare_with(path, other).abs_error_bounds == rep.abs_error_bounds


def test_compare_bad_input(tmp_path):
    path, ck = _write(tmp_path, "c", MODEL, 8, "ball")
    with pytest.raises(ValueError, match="length 7"):
        compare_with(path, ck.mid[:7])
    with pytest.raises(ValueError, match="vector"):
        compare_with(path, ck.mid.reshape(2, 4))
    with pytest.raises(ValueError, match="non-finite"):
        compare_with(path, np.full(8, np.nan))
    np.savez(tmp_path / "o.npz", a=ck.mid, b=ck.mid)
    with pytest.raises(ValueError, match="choose one with key"):
        compare_with(path, tmp_path / "o.npz")
    with pytest.raises(ValueError, match="no array 'c'"):
        compare_with(path, tmp_path / "o.npz", key="c")
    with pytest.raises(ValueError, match="no such file"):
        compare_with(path, tmp_path / "missing.npy")
    with pytest.raises(ValueError, match=".npy or .npz"):
        compare_with(path, path)


def test_compare_relative_error_without_a_positive_scale(tmp_path):
    """A zero kernel (C = 0) has no positive lower bound on max |K|: the relative bound is inf."""
    model = DPLR([-1.0], [0.5], [1.0], [0.0])
    path, _ = _write(tmp_path, "z", model, 4, "exact")
    rep = compare_with(path, np.ones(4))
    assert rep.abs_error_bounds == (1.0, 1.0) and rep.rel_error_bounds[1] == math.inf


def test_forged_a_priori_enclosures_fail(files_by_mode, tmp_path):
    """An a-priori file re-labelled as enclosures with wide disks and moved midpoints fails
    even with a recomputed digest: every disk must lie within eps."""
    def edit(doc):
        from s4cert.certs.io.kernel_file import SOURCES
        doc["kernel"]["source"] = SOURCES["a-priori enclosure"]
        doc["kernel"]["rad"] = ["1000000"] * len(doc["kernel"]["rad"])
        doc["kernel"]["re"] = ["5"] * len(doc["kernel"]["re"])
    rep = _tamper(files_by_mode["a-priori"], tmp_path / "forged.json", edit, redigest=True)
    assert not rep.ok and "claims" in [name for name, passed, _ in rep.checks if not passed]
