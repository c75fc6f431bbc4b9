"""The LMU checkpoint audit (certs/lmu_checkpoint.py, proofs/lmu_checkpoint.md) on the three
public fixtures (copies in tests/data/lmu-checkpoints/, written by torch from the spec's
LMU reference).

Every interval is checked against an independent enclosure computed here: the LegT
matrices retyped from the reference's formulas, their ZOH by a Taylor series with a
bounded remainder and scaling and squaring of the augmented matrix (the code uses Arb's
matrix exponential), ``H`` by plain ball matrix powers (the code: midpoint steps with an
S-norm bound), ``fft_H`` by the direct DFT sums with cos/sin of exact rational multiples
of pi (the code: Arb's acb.dft); the impulse response of stored matrices by exact integer
arithmetic.  The true value lies in that enclosure, which must lie inside the certified
interval, and every interval is at most 1/1000 of the value wide.
"""
from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from flint import acb, arb, arb_mat, ctx, fmpq

from s4cert import audit_lmu_checkpoint
from s4cert.certs.lmu_checkpoint import find_lmu_modules, read_lmu_checkpoint
from s4cert.certs.checkpoint.reader import read_checkpoint
from tests.certs.checkpoint.torch_files import save_safetensors, save_state_dict
from tests.certs.cli_run import one_line_error, s4cert

DATA = Path(__file__).resolve().parents[1] / "data" / "lmu-checkpoints"
LMU01, LMU02, LMU03 = (DATA / f"{n}.pt" for n in ("lmu01_lmufft_d16_theta100", "lmu02_lmu_cell_d8_theta50",
                                                  "lmu03_lmu_learned_ab_d6_theta20"))
PREC = 400  # bits of the independent enclosures


# -- the independent exact computation ---------------------------------------------------------

def legt(N: int, theta: int) -> tuple[list, list]:
    """The continuous A, B of the LMU reference (proofs/spec.md §S19), retyped from its formulas, as exact rationals."""
    R = [Fraction(2 * i + 1, theta) for i in range(N)]
    A = [[R[i] * (-1 if i < j else (-1) ** (i - j + 1)) for j in range(N)] for i in range(N)]
    return A, [R[i] * (-1) ** i for i in range(N)]


def zoh_taylor(N: int, theta: int, prec: int = PREC) -> tuple[arb_mat, arb_mat]:
    """Balls for e^A and int_0^1 e^{As} ds B: exp of the augmented matrix [[A, B], [0, 0]]
    scaled by 2^-s (inf-norm <= 1/2), Taylor polynomial of degree K plus the remainder bound
    x^(K+1)/(K+1)! / (1 - x) on every entry, then squared s times."""
    A, B = legt(N, theta)
    n = N + 1
    rows = [A[i] + [B[i]] for i in range(N)] + [[Fraction(0)] * n]
    norm = max(sum(abs(v) for v in r) for r in rows)
    s = max(0, math.ceil(math.log2(float(norm))) + 1)
    with ctx.workprec(prec):
        M = arb_mat(n, n, [arb(fmpq(v.numerator, v.denominator * 2 ** s)) for r in rows for v in r])
        x = arb(fmpq(norm.numerator, norm.denominator * 2 ** s))
        K = prec // 2
        term, total = arb_mat(n, n, [1 if i == j else 0 for i in range(n) for j in range(n)]), None
        for k in range(K + 1):
            total = term if total is None else total + term
            term = term * M / (k + 1)
        rem = (x ** (K + 1) / arb(K + 1).fac() / (1 - x)).upper()
        E = arb_mat(n, n, [e + arb(0, rem) for e in total.entries()])
        for _ in range(s):
            E = E * E
        Ad = arb_mat(N, N, [E[i, j] for i in range(N) for j in range(N)])
        Bd = arb_mat(N, 1, [E[i, N] for i in range(N)])
    return Ad, Bd


def powers(Ad: arb_mat, Bd: arb_mat, L: int, prec: int = PREC) -> arb_mat:
    """H[:, t] = Ad^t Bd by plain ball products."""
    N = Ad.nrows()
    with ctx.workprec(prec):
        h, cols = Bd, []
        for _ in range(L):
            cols.append(h)
            h = Ad * h
        return arb_mat(N, L, [cols[t][i, 0] for i in range(N) for t in range(L)])


def rfft_direct(H: arb_mat, n: int, prec: int = PREC) -> list:
    """X_k = sum_t H_t (cos(2 pi t k / n) - i sin(2 pi t k / n)), 0 <= k <= n/2, row-major."""
    N, L = H.nrows(), H.ncols()
    with ctx.workprec(prec):
        sc = [arb.sin_cos_pi_fmpq(fmpq(2 * ((t * k) % n), n)) for t in range(L) for k in range(n // 2 + 1)]
        S = arb_mat(L, n // 2 + 1, [p[0] for p in sc])
        C = arb_mat(L, n // 2 + 1, [p[1] for p in sc])
        re, im = H * C, H * S
        return [acb(re[i, k], -im[i, k]) for i in range(N) for k in range(n // 2 + 1)]


def max_abs_ball(values, exact) -> arb:
    """A ball containing max |values - exact| (values exact floats/complexes)."""
    with ctx.workprec(PREC):
        m = None
        for v, x in zip(values, exact):
            d = (acb(v.real, v.imag) if isinstance(v, complex) else arb(v)) - x
            a = abs(d)
            m = a if m is None else m.max(a)
        return m


def stored_values(a: np.ndarray) -> list:
    kind = np.complex128 if a.dtype.kind == "c" else np.float64
    return a.astype(kind).ravel().tolist()


def assert_encloses(interval: list, ball: arb) -> None:
    """The certified [lo, hi] contains the independent ball (so the true value) and is at
    most 1/1000 of the value wide."""
    lo, hi = interval
    assert arb(lo) <= ball and ball <= arb(hi), (interval, ball)
    width = Fraction(hi) - Fraction(lo)
    assert arb(fmpq(width.numerator, width.denominator)) * 1000 <= ball, (interval, ball)


def float32_neighbour(s: float, x: arb) -> bool:
    down = float(np.nextafter(np.float32(s), np.float32(-np.inf)))
    up = float(np.nextafter(np.float32(s), np.float32(np.inf)))
    return bool(x > arb(down) and x < arb(up))


# -- the three fixtures ---------------------------------------------------------------------------

def test_lmufft_fixture_buffers_against_the_exact_mathematics():
    tensors = read_checkpoint(LMU01).tensors
    doc = audit_lmu_checkpoint(LMU01, theta=100).document()
    assert doc["format"] == "s4cert.lmu-audit/1" and len(doc["modules"]) == 1
    m = doc["modules"][0]
    assert (m["prefix"], m["class"], m["memory_size"], m["seq_len"], m["theta"]) == ("", "LMUFFT", 16, 100, 100.0)
    Ad, Bd = zoh_taylor(16, 100)
    H = powers(Ad, Bd, 100)
    exact = {"A": Ad.entries(), "B": Bd.entries(), "H": H.entries(), "fft_H": rfft_direct(H, 200)}
    assert set(m["buffers"]) == set(exact)
    for name, x in exact.items():
        b, stored = m["buffers"][name], stored_values(tensors[name])
        assert b["learned"] is False
        err, big = max_abs_ball(stored, x), max_abs_ball([0.0] * len(x), x)
        assert_encloses(b["max_error"], err)
        assert_encloses(b["max_abs"], big)
        with ctx.workprec(PREC):
            assert_encloses(b["relative"], err / big)
    assert all(float32_neighbour(s, x) for name in ("A", "B") for s, x in zip(stored_values(tensors[name]), exact[name]))
    # the measurement: the module's H is 9.181e-08 from the exact ZOH impulse response
    assert f"{m['buffers']['H']['max_error'][0]:.3e}" == f"{m['buffers']['H']['max_error'][1]:.3e}" == "9.181e-08"
    assert m["impulse_response"]["length"] == 100 and m["impulse_response"]["of"] == "exact ZOH"


def _impulse_contains(mid: np.ndarray, rad: np.ndarray, balls: arb_mat) -> int:
    """How many entries of the independent balls lie inside [mid - rad, mid + rad]."""
    with ctx.workprec(PREC):
        inside = 0
        for i in range(balls.nrows()):
            for t in range(balls.ncols()):
                d = balls[i, t] - arb(float(mid[i, t]))
                inside += bool(abs(d) <= arb(float(rad[i, t])))
    return inside


def test_lmu_cell_fixture_constructed_buffers_and_zoh_impulse_response():
    tensors = read_checkpoint(LMU02).tensors
    report = audit_lmu_checkpoint(LMU02, theta=50, length=200)
    m = report.document()["modules"][0]
    assert (m["prefix"], m["class"], m["memory_size"], m["seq_len"]) == ("", "LMU", 8, None)
    assert set(m["buffers"]) == {"A", "B"}
    Ad, Bd = zoh_taylor(8, 50)
    for name, x in (("A", Ad.entries()), ("B", Bd.entries())):
        stored = stored_values(tensors["cell." + name])
        b = m["buffers"][name]
        assert b["learned"] is False and all(float32_neighbour(s, e) for s, e in zip(stored, x))
        assert_encloses(b["max_error"], max_abs_ball(stored, x))
        assert_encloses(b["max_abs"], max_abs_ball([0.0] * len(x), x))
    mod = report.modules[0]
    assert mod.mid.shape == (8, 200) and m["impulse_response"] == {
        "length": 200, "max_radius": float(mod.rad.max()), "of": "exact ZOH"}
    assert _impulse_contains(mod.mid, mod.rad, powers(Ad, Bd, 200)) == 8 * 200
    assert mod.rad.max() <= 2.0 ** -52 * np.abs(mod.mid).max()


def test_lmu_cell_default_length_is_1000():
    m = audit_lmu_checkpoint(LMU02, theta=50).document()["modules"][0]
    assert m["impulse_response"]["length"] == 1000


def test_learned_fixture_distance_and_exact_impulse_response_of_the_stored_matrices():
    tensors = read_checkpoint(LMU03).tensors
    report = audit_lmu_checkpoint(LMU03, theta=20)
    m = report.document()["modules"][0]
    Ad, Bd = zoh_taylor(6, 20)
    for name, x in (("A", Ad.entries()), ("B", Bd.entries())):
        stored = stored_values(tensors["cell." + name])
        b = m["buffers"][name]
        assert set(b) == {"learned", "distance_from_zoh"} and b["learned"] is True
        assert not all(float32_neighbour(s, e) for s, e in zip(stored, x))
        assert_encloses(b["distance_from_zoh"], max_abs_ball(stored, x))
    assert m["impulse_response"]["of"] == "stored A, B" and m["impulse_response"]["length"] == 1000
    mid, rad = report.modules[0].mid, report.modules[0].rad
    # exact: A = M / 2^a, B = b / 2^c with integers, H_t = M^t b / 2^(a t + c)
    A, B = tensors["cell.A"].astype(np.float64), tensors["cell.B"].astype(np.float64).ravel()
    a = max(Fraction(v).denominator for v in A.ravel()).bit_length() - 1
    c = max(Fraction(v).denominator for v in B).bit_length() - 1
    M = [[int(Fraction(v) * 2 ** a) for v in row] for row in A]
    v = [int(Fraction(x) * 2 ** c) for x in B]
    inside = 0
    for t in range(1000):
        k = a * t + c
        for i in range(6):
            p, q = Fraction(float(mid[i, t])).as_integer_ratio()
            pr, qr = Fraction(float(rad[i, t])).as_integer_ratio()
            inside += abs(v[i] * q - p * 2 ** k) * qr <= pr * 2 ** k * q
        v = [sum(M[i][j] * v[j] for j in range(6)) for i in range(6)]
    assert inside == 6 * 1000
    assert rad.max() <= 2.0 ** -52 * np.abs(mid).max()


def test_a_wrong_theta_makes_the_buffers_count_as_learned():
    m = audit_lmu_checkpoint(LMU02, theta=51, length=4).document()["modules"][0]
    assert m["buffers"]["A"]["learned"] is True and m["buffers"]["B"]["learned"] is True


# -- other formats, prefixes, theta from the file -------------------------------------------------

def test_other_formats_prefixes_and_several_modules(tmp_path):
    fft, cell = read_checkpoint(LMU01).tensors, read_checkpoint(LMU02).tensors
    both = {**{"enc.mem." + k: v for k, v in fft.items()}, **{"dec." + k: v for k, v in cell.items()}}
    np.savez(tmp_path / "both.npz", **both)
    plan = read_lmu_checkpoint(tmp_path / "both.npz", theta=100)
    assert [(m.prefix, m.cls, m.memory_size, m.seq_len) for m in plan.modules] == [
        ("dec.", "LMU", 8, None), ("enc.mem.", "LMUFFT", 16, 100)]
    save_safetensors(tmp_path / "cell.safetensors", {"x." + k: ("F32", v) for k, v in cell.items()})
    ref = audit_lmu_checkpoint(LMU02, theta=50, length=8).document()["modules"][0]
    got = audit_lmu_checkpoint(tmp_path / "cell.safetensors", theta=50, length=8).document()["modules"][0]
    assert got["prefix"] == "x." and got["buffers"] == ref["buffers"]


def test_theta_from_a_lightning_checkpoint(tmp_path):
    cell = read_checkpoint(LMU02).tensors
    ckpt = save_state_dict(tmp_path / "run.ckpt", {"model.lmu." + k: v for k, v in cell.items()},
                           wrap=lambda sd: {"state_dict": sd, "hyper_parameters": {"model": {"theta": 50}}})
    m = audit_lmu_checkpoint(ckpt, length=8).document()["modules"][0]
    assert m["theta_exact"] == "50" and m["buffers"]["A"]["learned"] is False
    with pytest.raises(ValueError, match="contradicts"):
        read_lmu_checkpoint(ckpt, theta=49)
    assert audit_lmu_checkpoint(ckpt, theta=50, length=8).document()["modules"][0]["buffers"] == m["buffers"]


def test_api_refusals(tmp_path):
    np.savez(tmp_path / "none.npz", w=np.zeros((2, 2), np.float32), A=np.eye(2, dtype=np.float32))
    with pytest.raises(ValueError, match="no LMU module"):
        read_lmu_checkpoint(tmp_path / "none.npz", theta=1)
    with pytest.raises(ValueError, match="theta is not recorded"):
        read_lmu_checkpoint(LMU01)
    cell = read_checkpoint(LMU02).tensors
    np.savez(tmp_path / "bad.npz", **{**cell, "cell.B": np.zeros((7, 1), np.float32)})
    with pytest.raises(ValueError, match="cell.B: expected shape"):
        read_lmu_checkpoint(tmp_path / "bad.npz", theta=50)
    assert find_lmu_modules({k: v for k, v in cell.items() if k != "cell.e_x"}) == []


# -- the command ------------------------------------------------------------------------------------

def test_command_json_report_and_kernels(tmp_path):
    out, kernels = tmp_path / "r.json", tmp_path / "k.npz"
    p = s4cert("lmu-audit", "--checkpoint", str(LMU01), "--theta", "100", "--json",
               "--out", str(out), "--kernels", str(kernels))
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    api = audit_lmu_checkpoint(LMU01, theta=100)
    assert doc == json.loads(out.read_text()) == json.loads(json.dumps(api.document()))
    with np.load(kernels) as z:
        assert sorted(z.files) == ["mid", "rad"]
        assert np.array_equal(z["mid"], api.modules[0].mid) and np.array_equal(z["rad"], api.modules[0].rad)
    assert not [f for f in tmp_path.iterdir() if f.name.endswith(".tmp")]


def test_command_human_output_on_the_learned_fixture():
    p = s4cert("lmu-audit", "--checkpoint", str(LMU03), "--theta", "20", "--length", "50")
    assert p.returncode == 0, p.stderr
    assert "cell.A       learned" in p.stdout and "impulse response of the stored A, B read exactly, length 50" in p.stdout


def test_command_refusals_one_line_exit_2(tmp_path):
    truncated = tmp_path / "cut.pt"
    truncated.write_bytes(LMU01.read_bytes()[:9000])
    np.savez(tmp_path / "none.npz", w=np.zeros(3))
    ckpt = save_state_dict(tmp_path / "run.ckpt", read_checkpoint(LMU02).tensors,
                           wrap=lambda sd: {"state_dict": sd, "hyper_parameters": {"theta": 50}})
    cases = [(["--checkpoint", str(truncated), "--theta", "100"], "cut.pt"),
             (["--checkpoint", str(tmp_path / "none.npz"), "--theta", "1"], "no LMU module"),
             (["--checkpoint", str(ckpt), "--theta", "20"], "contradicts"),
             (["--checkpoint", str(LMU01)], "theta is not recorded"),
             (["--checkpoint", str(LMU01), "--memory-size", "16", "--theta", "100"], "--memory-size"),
             (["--memory-size", "4", "--theta", "4"], "required")]
    for args, needle in cases:
        assert needle in one_line_error(s4cert("lmu-audit", *args)), args



def test_max_prec_limits_the_audit(monkeypatch):
    """``max_prec`` (``--max-prec``) reaches the precision loop: the fixture's audit is tight
    at the first precision, so a limit of 128 bits certifies it; asked for intervals far
    tighter than 128 bits give, the same limit refuses, naming the option."""
    from s4cert.certs import lmu_checkpoint
    from s4cert.certs.errors import CertificationError
    f = Path(__file__).resolve().parents[1] / "data" / "lmu-checkpoints" / "lmu01_lmufft_d16_theta100.pt"
    report = audit_lmu_checkpoint(f, theta=100, max_prec=128)
    assert [m.precision for m in report.modules] == [128]
    monkeypatch.setattr(lmu_checkpoint, "TIGHTNESS", 10 ** 40)
    with pytest.raises(CertificationError, match="--max-prec") as e:
        audit_lmu_checkpoint(f, theta=100, max_prec=128)
    assert e.value.status == "precision-limit"
