"""Kernel files (format, lossless round trip, atomic writes, bad files) and parameter files."""
from __future__ import annotations

import json
import os
from fractions import Fraction

import numpy as np
import pytest
from flint import acb, arb
from hypothesis import given, strategies as st

from s4cert.algorithms.s4.dplr import DPLR
from s4cert.algorithms.s4.kernels import kernel_by_powers
from s4cert.algorithms.models.hippo_dplr import dplr as hippo_dplr
from s4cert.arith import ExactField, exact_parts
from s4cert.certs.io import atomic
from s4cert.certs.io.kernel_file import FORMAT, file_digest, kernel_entries, load_kernel, save_kernel, save_npz
from s4cert.certs.io.numbers import arb_point, decode_number, encode_number, exact_arb, parse_rational, rational_string
from s4cert.certs.io.params import load_params
from s4cert.certs.kernel import certify_kernel
from tests.helpers import gaussian

STEP = 0.5
MODEL = DPLR([-1.0, -2.0 + 1j, -0.5 - 3j], [0.5, 0.25j, 1], [1, 2, 1j], [1, -1, 3])
L_BY_MODE = {"ball": 8, "exact": 8, "a-priori": 4}
A_PRIORI_MODEL = DPLR([-1.0, -2.0 + 1j], [0.5, 0.25j], [1, 1], [1, -1])


def _model_for(mode):
    return A_PRIORI_MODEL if mode == "a-priori" else MODEL


@pytest.fixture(scope="module")
def kernels():
    out = {}
    for mode, L in L_BY_MODE.items():
        out[mode] = certify_kernel(_model_for(mode), STEP, L, Fraction(1, 10 ** 15), mode=mode)
    return out


def _exact_kernel(model, step, L):
    E = ExactField(4)
    return [E.to_fractions(k) for k in kernel_by_powers(E, model, step, L).value]


def _same_number(x, y) -> bool:
    if isinstance(x, acb) or isinstance(y, acb):
        return (arb_point(x.real.mid()), arb_point(x.imag.mid()), arb_point(x.real.rad()), arb_point(x.imag.rad())) \
            == (arb_point(y.real.mid()), arb_point(y.imag.mid()), arb_point(y.real.rad()), arb_point(y.imag.rad()))
    return exact_parts(x) == exact_parts(y)


def _same_model(a: DPLR, b: DPLR) -> bool:
    pairs = list(zip(a.Lambda, b.Lambda)) + list(zip(a.B, b.B)) + list(zip(a.C, b.C))
    pairs += [p for ra, rb in zip(a.P + a.Q, b.P + b.Q) for p in zip(ra, rb)]
    return (a.N, a.r) == (b.N, b.r) and all(_same_number(x, y) for x, y in pairs)


# -- the kernel file -------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["ball", "exact", "a-priori"])
def test_round_trip_every_mode(tmp_path, kernels, mode):
    ck = kernels[mode]
    model = _model_for(mode)
    path, npz = tmp_path / "k.json", tmp_path / "k.npz"
    save_kernel(path, ck, model, STEP, npz=npz)
    doc = json.loads(path.read_text())
    assert doc["format"] == FORMAT and doc["problem"]["mode"] == mode
    assert doc["sha256"] == file_digest(doc)
    kf = load_kernel(path)
    assert kf.digest_ok and kf.status == "ok" and kf.mode == mode
    assert _same_model(kf.model, model)
    assert kf.step == Fraction(STEP) and kf.L == ck.L and kf.eps == Fraction(1, 10 ** 15) and kf.c_tilde is None
    assert kf.certificate == json.loads(json.dumps(ck.certificate)) and kf.counts == ck.counts
    # the kernel strings are the exact values the certified kernel holds
    re, im, rad, source = kernel_entries(ck)
    assert kf.mid == list(zip(re, im)) and kf.rad == rad and kf.source == source
    if mode == "exact":
        assert kf.mid == [tuple(v) for v in ck.exact] and all(r == 0 for r in kf.rad)
    elif mode == "a-priori":  # the rounded circuit outputs, exactly, each within eps
        assert kf.mid == [tuple(v) for v in ck.exact] and all(r == kf.eps for r in kf.rad)
    else:  # the midpoints are the enclosures' midpoints, exactly
        assert [arb_point(b.real.mid()) for b in ck.balls] == re
        assert [arb_point(b.imag.mid()) for b in ck.balls] == im
    if mode == "ball":
        assert max(rad) <= kf.eps
    # every stored disk, its acb and the float arrays contain the exact kernel
    exact = _exact_kernel(model, STEP, ck.L)
    mid64, rad64 = kf.to_numpy()
    for (a, b), (ma, mb), r, ball, m, r64 in zip(exact, kf.mid, kf.rad, kf.balls, mid64, rad64):
        assert (a - ma) ** 2 + (b - mb) ** 2 <= r * r
        assert ball.contains(acb(exact_arb(a, prec=4096), exact_arb(b, prec=4096)))
        assert (a - Fraction(m.real)) ** 2 + (b - Fraction(m.imag)) ** 2 <= Fraction(r64) ** 2
    with np.load(npz) as z:
        assert np.array_equal(z["mid"], ck.mid) and np.array_equal(z["rad"], ck.rad)
        assert z["mid"].dtype == np.complex128 and z["rad"].dtype == np.float64


def test_round_trip_ball_inputs_and_supplied_c_tilde(tmp_path):
    """A certified HiPPO model holds balls; they come back with the same midpoints and radii."""
    model = hippo_dplr("legs", 3)
    ct = [(Fraction(1, 3), Fraction(0)), 0.25 - 1j, 2]
    ck = certify_kernel(model, 0.25, 4, 1e-12, c_tilde=ct)
    with pytest.raises(ValueError, match="c_tilde"):
        save_kernel(tmp_path / "k.json", ck, model, 0.25)
    save_kernel(tmp_path / "k.json", ck, model, 0.25, c_tilde=ct)
    kf = load_kernel(tmp_path / "k.json")
    assert kf.digest_ok and _same_model(kf.model, model)
    assert all(isinstance(x, acb) for x in kf.model.Lambda)
    assert all(exact_parts(x) == exact_parts(y) for x, y in zip(kf.c_tilde, ct))


@given(gaussian(10 ** 6, 10 ** 6), st.floats(allow_nan=False, allow_infinity=False, width=64))
def test_numbers_are_lossless(q, f):
    assert decode_number(encode_number(q)) == q
    assert decode_number(encode_number(f)) == (Fraction(f), Fraction(0))
    ball = acb(arb(f, abs(f) / 7 + 1e-300), arb(-f / 3, 2.0 ** -90))
    assert _same_number(decode_number(json.loads(json.dumps(encode_number(ball)))), ball)


def test_long_numbers_and_non_dyadic_radii():
    """Integers beyond Python's default 4300-digit str/int limit round-trip; a radius that
    is no arb radius is rounded up, never down."""
    q = Fraction(-3 ** 20000, 2 ** 9001 + 1)
    assert parse_rational(rational_string(q), "q") == q
    assert decode_number(encode_number((q, -q))) == (q, -q)
    ball = decode_number({"mid": ["1/2", "0"], "rad": ["1/3", "0"]})
    assert ball.real.contains(exact_arb(Fraction(1, 6), prec=64))
    assert ball.real.contains(exact_arb(Fraction(5, 6), prec=64))


def test_altered_number_breaks_the_digest(tmp_path, kernels):
    path = tmp_path / "k.json"
    save_kernel(path, kernels["ball"], MODEL, STEP)
    doc = json.loads(path.read_text())
    doc["certificate"]["b"] = doc["certificate"]["b"] * 2
    path.write_text(json.dumps(doc))
    assert not load_kernel(path).digest_ok


def test_save_npz_alone(tmp_path, kernels):
    save_npz(tmp_path / "k.npz", kernels["a-priori"])
    with np.load(tmp_path / "k.npz") as z:
        assert sorted(z.files) == ["mid", "rad"]
        assert np.array_equal(z["mid"], kernels["a-priori"].mid) and np.array_equal(z["rad"], kernels["a-priori"].rad)


def test_save_checks_the_model(tmp_path, kernels):
    with pytest.raises(ValueError, match="does not match|another model"):
        save_kernel(tmp_path / "k.json", kernels["ball"], A_PRIORI_MODEL, STEP)
    with pytest.raises(ValueError, match="do not pass c_tilde|another model"):
        save_kernel(tmp_path / "k.json", kernels["ball"], MODEL, STEP, c_tilde=[1, 2, 3])
    with pytest.raises(ValueError, match="cannot write"):
        save_kernel(tmp_path / "no" / "such" / "k.json", kernels["ball"], MODEL, STEP)


# -- atomic writes ------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["fsync", "replace"])
def test_interrupted_write_leaves_no_file(tmp_path, kernels, monkeypatch, where):
    def boom(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(atomic.os, where, boom)
    with pytest.raises(KeyboardInterrupt):
        save_kernel(tmp_path / "k.json", kernels["ball"], MODEL, STEP, npz=tmp_path / "k.npz")
    assert os.listdir(tmp_path) == []


def test_failed_overwrite_keeps_the_old_file(tmp_path, kernels, monkeypatch):
    path = tmp_path / "k.json"
    save_kernel(path, kernels["ball"], MODEL, STEP)
    before = path.read_bytes()

    def fail(fd):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(atomic.os, "fsync", fail)
    with pytest.raises(ValueError, match="No space left"):
        save_kernel(path, kernels["exact"], MODEL, STEP)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["k.json"]


# -- bad kernel files -------------------------------------------------------------------------

def _doc(tmp_path, kernels):
    path = tmp_path / "k.json"
    save_kernel(path, kernels["ball"], MODEL, STEP)
    return json.loads(path.read_text())


def _refused(load, path, content, message):
    """load(path), with the file holding content (None: left as it is), raises a
    ValueError matching message."""
    if content is not None:
        (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)
    with pytest.raises(ValueError, match=message):
        load(path)


def _edit(doc, where, value):
    d = doc
    for k in where[:-1]:
        d = d[k]
    if value is KeyError:
        del d[where[-1]]
    else:
        d[where[-1]] = value
    return doc


@pytest.mark.parametrize("where, value, message", [
    (("format",), "s4cert.kernel/0", "wrong format tag"),
    (("kernel",), KeyError, "missing key \"kernel\""),
    (("problem", "model", "B"), KeyError, "missing key \"B\""),
    (("kernel", "re", 0), "1/x", "bad number string"),
    (("kernel", "rad", 1), 0.5, "rational string"),
    (("problem", "model", "Lambda", 0), ["1/0", "0"], "bad number string"),
    (("problem", "eps"), "-1", "eps must be > 0"),
    (("problem", "mode"), "fast", "problem.mode"),
    (("kernel", "im"), ["0"], "expected 8 strings"),
])
def test_bad_kernel_files(tmp_path, kernels, where, value, message):
    doc = _edit(_doc(tmp_path, kernels), where, value)
    _refused(load_kernel, tmp_path / "bad.json", json.dumps(doc), message)


@pytest.mark.parametrize("name, content, message", [
    ("missing.json", None, "no such file"),
    ("x.json", "{not json", "not valid JSON"),
    ("y.json", '{"format": NaN}', "NaN"),
    ("z.json", "[1, 2]", "not a kernel file"),
])
def test_unreadable_kernel_files(tmp_path, name, content, message):
    _refused(load_kernel, tmp_path / name, content, message)


# -- parameter files ------------------------------------------------------------------------------

LAM = np.array([-1.0 + 2j, -0.5 - 1j])
P2 = np.array([[0.5, 1j], [0.25, -1.0]])
B = np.array([1.0, 2.0 - 1j])
C = np.array([0.5j, 3.0])


def test_params_npz(tmp_path):
    path = tmp_path / "p.npz"
    np.savez(path, Lambda=LAM, P=P2, Q=P2[::-1].copy(), B=B, C=C, step=np.float64(0.125), L=np.int64(16))
    p = load_params(path)
    expected = DPLR(LAM, P2, B, C, Q=P2[::-1].copy())
    assert _same_model(p.model, expected) and p.step == 0.125 and p.L == 16 and p.c_tilde is None
    np.savez(path, Lambda=LAM, P=P2[:, 0], Ct=C.astype(np.complex64))
    p = load_params(path)
    assert p.model.r == 1 and p.step is None and p.L is None
    assert p.c_tilde == [complex(np.complex64(c)) for c in C]      # float32 parts widen exactly
    assert all(_same_number(x, 1) for x in p.model.B)                 # B defaults to ones


def test_params_json(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({
        "Lambda": [[-1, 2], {"re": -0.5, "im": -1}], "P": [[0.5, [0, 1]], [0.25, -1]],
        "B": [1, [2, -1]], "C": [[0, "1/2"], "3"], "step": "1/8", "L": 16}))
    p = load_params(path)
    assert _same_model(p.model, DPLR(LAM, P2, B, C)) and p.step == Fraction(1, 8) and p.L == 16
    path.write_text(json.dumps({"Lambda": [-1, -2], "P": [[1, 2], [3, 4]], "Ct": [1, 1]}))
    with pytest.raises(ValueError, match="ambiguous"):
        load_params(path)
    path.write_text(json.dumps({"Lambda": [-1, -2], "P": [[1, 2], [3, 4]], "Ct": [1, 1], "r": 1}))
    assert [exact_parts(row[0]) for row in load_params(path).model.P] == [(1, 2), (3, 4)]
    path.write_text(json.dumps({"Lambda": [-1, -2], "P": [[1, 2], [3, 4]], "Ct": [1, 1], "r": 2}))
    assert load_params(path).model.r == 2


def _exact_values(model, L):
    return _exact_kernel(model, Fraction(1, 4), L)


def test_conj_pairs_expansion(tmp_path):
    """The full conjugate set gives a real kernel; for diagonal models (P = 0, S4D) it is
    2 Re of the half set's kernel, computed here independently."""
    lam, b, c = [(-1, 3), (Fraction(-1, 2), -1)], [(1, 1), (2, 0)], [(0, 1), (3, -2)]
    lam_json = [[-1, 3], ["-1/2", -1]]
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"Lambda": lam_json, "P": [0, 0], "B": b, "C": c}))
    p = load_params(path, conj_pairs=True)
    assert p.model.N == 4
    assert exact_parts(p.model.Lambda[2]) == (-1, -3) and exact_parts(p.model.C[3]) == (3, 2)
    full = _exact_values(p.model, 6)
    half = _exact_values(DPLR(lam, [0, 0], b, c), 6)
    assert all(im == 0 for _, im in full)
    assert [re for re, _ in full] == [2 * re for re, _ in half]
    # with a low-rank term the kernel of the full set is still real
    path.write_text(json.dumps({"Lambda": lam_json, "P": [[1, 2], [0.5, -1]], "r": 1, "B": b, "C": c}))
    p = load_params(path, conj_pairs=True)
    assert exact_parts(p.model.P[2][0]) == (1, -2)
    assert all(im == 0 for _, im in _exact_values(p.model, 6))


@pytest.mark.parametrize("content, message", [
    ({"P": [1, 2], "C": [1, 1]}, "missing key \"Lambda\""),
    ({"Lambda": [-1, -2], "C": [1, 1]}, "missing key \"P\""),
    ({"Lambda": [-1, -2], "P": [1, 2]}, "neither"),
    ({"Lambda": [-1, -2], "P": [1, 2], "C": [1, 1], "Ct": [1, 1]}, "both"),
    ({"Lambda": [-1, -2], "P": [1, 2, 3], "C": [1, 1]}, "expected 2 rows"),
    ({"Lambda": [-1, -2], "P": [1, 2], "C": [1, 1, 1]}, "C: expected 2 entries"),
    ({"Lambda": [-1, "nan"], "P": [1, 2], "C": [1, 1]}, "bad number string"),
    ({"Lambda": [-1, 1e999], "P": [1, 2], "C": [1, 1]}, "non-finite"),
    ({"Lambda": [-1, -2], "P": [1, 2], "C": [1, 1], "step": -1}, "step must be"),
    ({"Lambda": [-1, -2], "P": [1, 2], "C": [1, 1], "L": 0}, "L: expected an integer >= 1"),
    ({"Lambda": [-1, -2], "P": [[1], 2], "C": [1, 1]}, "mixes rows and numbers"),
])
def test_bad_json_params(tmp_path, content, message):
    _refused(load_params, tmp_path / "p.json", json.dumps(content), message)


@pytest.mark.parametrize("arrays, message", [
    ({"Lambda": np.array([-1.0, np.nan]), "P": np.ones(2), "C": np.ones(2)}, "Lambda: non-finite"),
    ({"Lambda": np.ones((2, 2)), "P": np.ones(2), "C": np.ones(2)}, "Lambda: expected 1-d"),
    ({"Lambda": -np.ones(2), "P": np.ones((2, 1, 1)), "C": np.ones(2)}, "P: expected 1-d or 2-d"),
    ({"Lambda": -np.ones(2), "P": np.ones(3), "C": np.ones(2)}, "expected 2 rows"),
    ({"Lambda": -np.ones(2), "P": np.ones(2), "C": np.array([1, np.inf])}, "C: non-finite"),
    ({"Lambda": -np.ones(2), "P": np.ones(2), "C": np.ones(2), "step": np.ones(2)}, "step: expected a scalar"),
    ({"Lambda": -np.ones(2), "P": np.ones(2)}, "neither"),
    ({"Lambda": np.array(["a", "b"]), "P": np.ones(2), "C": np.ones(2)}, "expected numbers"),
])
def test_bad_npz_params(tmp_path, arrays, message):
    path = tmp_path / "p.npz"
    np.savez(path, **arrays)
    _refused(load_params, path, None, message)


@pytest.mark.parametrize("name, content, message", [
    ("missing.npz", None, "no such file"),
    ("p.txt", "{}", ".npz or .json"),
    ("p.npz", b"not a zip", "not a readable .npz"),
])
def test_unreadable_params(tmp_path, name, content, message):
    _refused(load_params, tmp_path / name, content, message)
