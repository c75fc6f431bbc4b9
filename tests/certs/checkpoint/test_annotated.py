"""The Annotated S4 layer (Flax parameters, flattened with "/"), and S5's refusal.

The reference here is the Annotated S4's own kernel computation written out with numpy
in float64 (Cauchy sums at the roots of unity, the rank-1 Woodbury correction, the
inverse FFT, the real part), so the disks must contain it up to float64 rounding."""
from __future__ import annotations

import numpy as np
import pytest

from s4cert.certs.checkpoint.layouts import find_kernel_modules
from s4cert.certs.checkpoint.model import certify_model


def kernel_dplr(Lambda, P, B, C, step, L):
    """The Annotated S4's kernel_DPLR with Q = P, in float64."""
    Omega = np.exp(-2j * np.pi * np.arange(L) / L)
    g = (2.0 / step) * ((1.0 - Omega) / (1.0 + Omega))
    c = 2.0 / (1.0 + Omega)
    cauchy = lambda v: (v[None, :] / (g[:, None] - Lambda[None, :])).sum(axis=1)
    k00, k01 = cauchy(C.conj() * B), cauchy(C.conj() * P)
    k10, k11 = cauchy(P.conj() * B), cauchy(P.conj() * P)
    at_roots = c * (k00 - k01 * (1.0 / (1.0 + k11)) * k10)
    return np.fft.ifft(at_roots, L).real


def annotated_params(H=2, N=4, seed=3):
    rng = np.random.default_rng(seed)
    f32 = lambda a: np.asarray(a, dtype=np.float32)
    return {
        "params/layers_0/seq/Lambda_re": f32(-0.5 + 0.1 * rng.standard_normal((H, N))),
        "params/layers_0/seq/Lambda_im": f32(np.pi * np.arange(N)[None] + rng.standard_normal((H, N))),
        "params/layers_0/seq/P": f32(0.5 * rng.standard_normal((H, N, 2))),
        "params/layers_0/seq/B": f32(rng.standard_normal((H, N, 2))),
        "params/layers_0/seq/C": f32(rng.standard_normal((H, N, 2))),
        "params/layers_0/seq/D": f32(np.ones((H, 1))),
        "params/layers_0/seq/log_step": f32(np.log(0.01) + 0.2 * rng.standard_normal((H, 1))),
    }


def as_complex(a):
    a = a.astype(np.float64)
    return a[..., 0] + 1j * a[..., 1]


@pytest.mark.parametrize("L", [64, 100])
def test_annotated_s4_kernels_contain_the_reference_computation(tmp_path, L):
    sd = annotated_params()
    np.savez(tmp_path / "a.npz", **sd)
    [mod] = find_kernel_modules(sd)
    assert mod.layout == "annotated-s4" and mod.prefix == "params/layers_0/seq"
    [k] = certify_model(tmp_path / "a.npz", L=L).kernels
    assert k.status == "ok" and k.mid.shape == (1, 2, L)
    g = {key.rsplit("/", 1)[1]: v for key, v in sd.items()}
    for h in range(2):
        lam = np.minimum(g["Lambda_re"][h].astype(np.float64), -1e-4) + 1j * g["Lambda_im"][h].astype(np.float64)
        ref = kernel_dplr(lam, as_complex(g["P"][h]), as_complex(g["B"][h]), as_complex(g["C"][h]),
                          np.exp(g["log_step"][h, 0].astype(np.float64)), L)
        allow = 1e-12 * np.abs(ref).max()  # the float64 reference's own rounding, as for the fixtures
        assert np.all(np.abs(ref - k.mid[0, h]) <= k.rad[0, h] + allow)


def test_an_s5_layer_is_refused_as_mimo():
    rng = np.random.default_rng(0)
    sd = {"s5/Lambda_re": rng.standard_normal(8), "s5/Lambda_im": rng.standard_normal(8),
          "s5/P": rng.standard_normal((8, 2)), "s5/B": rng.standard_normal((8, 4, 2)),
          "s5/C": rng.standard_normal((4, 8, 2)), "s5/log_step": rng.standard_normal(8)}
    with pytest.raises(ValueError, match="MIMO"):
        find_kernel_modules(sd)
