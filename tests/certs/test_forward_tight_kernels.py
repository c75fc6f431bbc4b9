"""The forward pass's diagonal kernels in their tight form (``vandermonde_tight``,
proofs/diagonal_kernels.md §3b, Lemmas D7-D8), checked from outside the code they test:

* ``exact_products`` against exact rational matrix products: rows and columns from 2^-420 to
  2^380, entries 2^±40 apart within a row, cancelling sums, zero rows, inner sizes 1 to 200;
  every entry contained, and the bound no wider than Lemma D7's size;
* the kernels of whole modules (ZOH, bilinear, DSS with mixed signs, S4D-Lin as the
  benchmark's layer) contain the ball route's kernels at eps 1e-30 entry by entry, checked
  in exact rationals, every kernel certified by the tight pass itself;
* their radii are at least 8 times below the usual pass's from L = 50 on (Lemma D8: some 2u
  of the terms' sum against the usual pass's gamma_n plus the tables' spread, at least 32u),
  and no wider at L = 1 and 2.
"""
from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from s4cert.algorithms.s4.diagonal_midrad import exact_products, slice_bits
from s4cert.certs.checkpoint.certify import FLOAT64_ARITHMETIC, certify_module
from s4cert.certs.checkpoint.layouts import find_kernel_modules, resolve_settings
from s4cert.certs.checkpoint.reader import read_checkpoint
from tests.certs.checkpoint.test_review_diag import dss_module

U = 2.0 ** -53


def _matrices(rng, batch: int, p: int, q: int, r: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    X = rng.standard_normal((batch, p, q))
    Y = rng.standard_normal((batch, q, r))
    if kind == "wide":
        X *= 2.0 ** rng.integers(-40, 40, X.shape)
        Y *= 2.0 ** rng.integers(-40, 40, Y.shape)
    if kind == "scaled":
        X *= 2.0 ** rng.integers(-420, 380, (batch, p, 1))
        Y *= 2.0 ** rng.integers(-300, 0, (batch, 1, r))
    if kind == "cancel":
        Y[:, 1:] = Y[:, :1]
        X[..., 1::2] = -X[..., 0::2][..., :X[..., 1::2].shape[-1]] * (1 + 2.0 ** -30)
    if kind == "zeros":
        X[:, 0] = 0.0
        Y[..., 0] = 0.0
        X[:, -1, :] = 2.0 ** -1070
    return X, Y


@pytest.mark.parametrize("kind", ["plain", "wide", "scaled", "cancel", "zeros"])
@pytest.mark.parametrize("q", [1, 2, 7, 64, 200])
def test_exact_products_contain_the_rational_products(kind, q):
    rng = np.random.default_rng(q * 31 + len(kind))
    X, Y = _matrices(rng, 2, 4, q, 3, kind)
    mid, rad = exact_products(X, Y)
    beta = slice_bits(q)
    assert 2 * beta + max(1, (q - 1).bit_length()) <= 53
    contained = 0
    for b, i, j in np.ndindex(mid.shape):
        exact = sum(Fraction(float(X[b, i, n])) * Fraction(float(Y[b, n, j])) for n in range(q))
        assert abs(exact - Fraction(float(mid[b, i, j]))) <= Fraction(float(rad[b, i, j]))
        contained += 1
        # Lemma D7's size: u |mid| plus some 2^-60 q max_row |X| max_col |Y| (2^(e + f) <= 4 x that)
        top = max(float(np.max(np.abs(X[b, i]))), 2.0 ** -351) * max(float(np.max(np.abs(Y[b, :, j]))), 2.0 ** -351)
        assert rad[b, i, j] <= 1.01 * U * abs(mid[b, i, j]) + q * 2.0 ** -60 * 4 * top
    assert contained == mid.size


def test_exact_products_refuse_what_their_bound_does_not_cover():
    X, Y = np.ones((1, 2, 3)), np.ones((1, 3, 2))
    for bad in (np.inf, np.nan, 2.0 ** 401):
        Z = X.copy()
        Z[0, 1, 2] = bad
        with pytest.raises(ArithmeticError):
            exact_products(Z, Y)
        with pytest.raises(ArithmeticError):
            exact_products(Y.swapaxes(1, 2).copy(), Z.swapaxes(1, 2).copy())


def _lin_module():
    """The benchmark's S4D-Lin layer (benchmarks/model.py ``state_dict``), 3 heads, N = 16."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from model import state_dict
    import tempfile, os
    sd = state_dict(3, 16)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "layer.npz")
        np.savez(path, **sd)
        ck = read_checkpoint(path)
    [mod] = find_kernel_modules(ck.tensors)
    resolve_settings(mod, {}, ck.hyper_parameters)
    return mod


def _contains(outer, inner) -> int:
    """Entries where the disk (outer.mid, outer.rad) holds the ball route's lossless
    enclosure of ``inner`` (``mid_exact``, ``rad_exact``), checked in exact rationals."""
    n = 0
    for key in np.ndindex(outer.mid.shape):
        m, r = Fraction(str(inner.mid_exact[key])), Fraction(str(inner.rad_exact[key]))
        assert abs(Fraction(float(outer.mid[key])) - m) + r <= Fraction(float(outer.rad[key])), key
        n += 1
    return n


@pytest.mark.parametrize("which, L", [("dss", 50), ("zoh", 333), ("bilinear", 97), ("lin", 1000), ("zoh", 1), ("dss", 2)])
def test_tight_kernels_contain_the_ball_kernels(which, L):
    mod = _lin_module() if which == "lin" else dss_module(which)
    tight = certify_module(mod, L, arithmetic="tight")
    assert tight.status == "ok" and tight.info["arithmetic"] == [FLOAT64_ARITHMETIC]
    ball = certify_module(mod, L, eps=1e-30, arithmetic="ball")
    assert ball.status == "ok" and ball.max_rad <= 1e-30
    assert _contains(tight, ball) == tight.mid.size
    usual = certify_module(mod, L)
    assert usual.status == "ok"
    # the usual pass's spread grows with the tables' levels (none at L <= 2): 8 times from L = 50
    gain = 8 if L >= 50 else 1
    for key in np.ndindex(tight.mid.shape[:2]):
        assert float(tight.rad[key].max()) <= float(usual.rad[key].max()) / gain


def test_the_usual_pass_is_untouched():
    """``arithmetic="auto"`` keeps s4cert model's kernels: the tight form is only asked for."""
    mod = dss_module("zoh")
    a, b = certify_module(mod, 200), certify_module(mod, 200, arithmetic="auto")
    assert np.array_equal(a.mid, b.mid) and np.array_equal(a.rad, b.rad)
    t = certify_module(mod, 200, arithmetic="tight")
    assert not np.array_equal(a.rad, t.rad)
    with pytest.raises(ValueError, match="arithmetic"):
        certify_module(mod, 200, arithmetic="fast")


DIAGONAL = ["a03_fftconv_diag_zoh_lin", "a04_s4block_s4d_bilinear_legs_dtuntied"]


@pytest.mark.parametrize("name", DIAGONAL)
def test_the_forward_pass_takes_the_tight_kernels(name):
    """certify_forward's kernels for a diagonal fixture are the tight ones (proofs/outputs.md
    §8): 8 times below s4cert model's, containing the ball route's lossless enclosures, and the
    outputs hold the reference's float64 SSM part with its rounding allowance."""
    from s4cert.certs.checkpoint.model import certify_model
    from s4cert.certs.forward_conv import Disks
    from s4cert.certs.forward_layers import layer_norm
    from tests.certs.test_forward import checkpoint, options_of, outputs, ssm_allowance, time_last

    z = outputs(name)
    rep = certify_forward_ssm(checkpoint(name), z["u_conv"], options_of(name))
    [k] = rep.kernels
    usual = certify_model(checkpoint(name), L=k.L, **options_of(name)).kernels[0]
    assert usual.status == "ok" and k.info["arithmetic"] == [FLOAT64_ARITHMETIC]
    assert k.max_rad <= usual.max_rad / 8
    ball = certify_model(checkpoint(name), L=k.L, eps=1e-30, arithmetic="ball", **options_of(name)).kernels[0]
    heads = range(min(2, k.H))
    for c in range(k.channels):
        for h in heads:
            _contains_row(k, ball, (c, h))
    [block] = rep.plan.blocks
    n = f"{block.prefix}.ssm"
    y = rep.outputs[n]
    u = z["u_conv"].astype(np.float64)
    v = u if block.norm is None else np.swapaxes(layer_norm(Disks.exact(np.swapaxes(u, 1, 2)), *block.norm).mid, 1, 2)
    ref = time_last(z["ssm_conv_float64"], y.shape)
    assert np.all(np.abs(ref - y.mid) <= y.rad + ssm_allowance(rep, name, v))


def certify_forward_ssm(path, u, options):
    from s4cert.certs.forward import certify_forward
    return certify_forward(path, u, time_last=True, part="ssm", **options)


def _contains_row(outer, inner, key) -> None:
    for l in range(outer.mid.shape[-1]):
        m, r = Fraction(str(inner.mid_exact[key + (l,)])), Fraction(str(inner.rad_exact[key + (l,)]))
        assert abs(Fraction(float(outer.mid[key + (l,)])) - m) + r <= Fraction(float(outer.rad[key + (l,)]))
