"""The SSM part of one S4 layer on a long input, certified (``certify_forward``), against a
float64 numpy computation of the same; both as whole commands, reading the checkpoint and
the input and writing the outputs.

``--kind diag`` (default): the V4 diagonal (S4D, ZOH) layer of ``benchmarks/model.py``
(H heads, N states, float32 parameters as S4D-Lin initialises them, slightly perturbed) as an
FFTConv state dict with ``D``; the baseline computes the kernel by power tables
(``model.blocked_fast``), the rfft convolution of length 2T and ``D u``.  ``--kind dplr``:
the LegS-like DPLR layer of ``model.py``; the baseline's kernel is the reference's own form
(``model.dplr_kernels_half``).  Input: (B, H, T) standard normal, float32 values.  The
certified run is ``certify_forward(..., part="ssm")`` at the default eps (1e-13 max|y|) with
the convolution by cost (``forward_fft.convolve``) and ``report.save``, or at ``--eps-rel``
times the float64 outputs' max|y|; the report records which convolution ran.  Its diagonal
kernels are the tight form (``vandermonde_tight``), so the default eps is met in one round.  Both are timed alternately (``model.timed_pair``): min and median.

    OPENBLAS_NUM_THREADS=1 python benchmarks/outputs.py [--kind diag|dplr] [--B 2] [--H 256]
        [--N 64] [--T 16384] [--repeat 3] [--eps-rel E]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import blocked_fast, dplr_kernels_half, dplr_state_dict, parameters, state_dict, timed_pair  # noqa: E402

from s4cert.certs.forward import certify_forward  # noqa: E402


def float64_command(ckpt: str, inp: str, out: str, kind: str, T: int) -> np.ndarray:
    """The float64 pipeline: the kernel, ``irfft(rfft(u, 2T) rfft(K, 2T))[:T] + D u``, saved."""
    with np.load(ckpt) as z:
        sd = {k: z[k] for k in z.files}
    with np.load(inp) as z:
        u = z["u"].astype(np.float64)
    if kind == "diag":
        K = blocked_fast(*parameters(sd), T)
    else:
        K = dplr_kernels_half(sd, T)
    D = sd["layer.D"].astype(np.float64)[0]
    n = 2 * T
    y = np.fft.irfft(np.fft.rfft(u, n) * np.fft.rfft(K, n)[None], n)[..., :T] + D[None, :, None] * u
    np.savez(out, y=y)
    return y


def certified_command(ckpt: str, inp: str, out: str, eps: float | None = None):
    rep = certify_forward(ckpt, inp, key="u", part="ssm", eps=eps)
    rep.save(outputs=out)
    return rep


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--kind", choices=("diag", "dplr"), default="diag")
    p.add_argument("--B", type=int, default=2)
    p.add_argument("--H", type=int, default=256)
    p.add_argument("--N", type=int, default=64)
    p.add_argument("--T", type=int, default=16384)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--eps-rel", type=float, default=None,
                   help="eps as this times max|y| of the float64 outputs (default: certify_forward's 1e-13 max|y|)")
    args = p.parse_args()
    sd = state_dict(args.H, args.N) if args.kind == "diag" else dplr_state_dict(args.H, args.N, args.T)
    rng = np.random.default_rng(1)
    sd["layer.D"] = rng.standard_normal((1, args.H)).astype(np.float32)
    u = rng.standard_normal((args.B, args.H, args.T)).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        ckpt, inp = os.path.join(tmp, "layer.npz"), os.path.join(tmp, "u.npz")
        np.savez(ckpt, **sd)
        np.savez(inp, u=u)
        eps = None
        if args.eps_rel is not None:
            eps = args.eps_rel * float(np.max(np.abs(float64_command(ckpt, inp, os.path.join(tmp, "y64.npz"),
                                                                     args.kind, args.T))))
        t = time.perf_counter()
        certify_forward(ckpt, u[:1, :, :64], part="ssm")     # loads the compiled loops once
        warm = time.perf_counter() - t
        f_min, f_med, y64, c_min, c_med, rep = timed_pair(
            lambda: float64_command(ckpt, inp, os.path.join(tmp, "y64.npz"), args.kind, args.T),
            lambda: certified_command(ckpt, inp, os.path.join(tmp, "y.npz"), eps), args.repeat)
    [name] = rep.outputs
    y = rep.outputs[name]
    top = float(np.max(np.abs(y.mid)))
    err = float(np.max(np.abs(y64 - y.mid) - y.rad))
    routes = ", ".join(f"{r['route']} ({r['why']}; radius {r['relative_radius']:.2e} max|y|)"
                       for r in rep.convolution)
    print(f"{args.kind} layer: B={args.B} H={args.H} N={args.N} T={args.T} (first use of the compiled loops: {warm:.1f}s)")
    print(f"  float64 numpy command (kernel, rfft convolution, D u): min {f_min:.3f}s  median {f_med:.3f}s")
    print(f"  certified command: min {c_min:.3f}s  median {c_med:.3f}s; convolution: {routes}")
    print(f"  ratio certified / float64: {c_min / f_min:.2f}x (median {c_med / f_med:.2f}x)")
    print(f"  largest radius {y.max_rad():.3e} = {y.max_rad() / top:.2e} max|y| (eps {rep.eps[name]:.3e}); "
          f"kernel radius {max(k.max_rad for k in rep.kernels):.2e}")
    print(f"  the float64 outputs lie within the disks up to {max(err, 0):.2e} "
          f"(max |float64 - mid| = {float(np.max(np.abs(y64 - y.mid))):.2e})")


if __name__ == "__main__":
    main()
