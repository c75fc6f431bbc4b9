"""All channels of one diagonal S4 layer, certified, against a float64 numpy kernel.

A V4 diagonal (S4D) kernel module with H heads, N states (N/2 stored modes), n_ssm = 1,
ZOH, is written as a state dict (npz, float32 parameters as S4D-Lin initialises them,
slightly perturbed); ``certify_model`` certifies every kernel at L with
eps = 1e-12 max|K|.  Baselines, run in the same process on the same float64 values of
the parameters (dt and A formed in float64 from the stored numbers):

* ``vandermonde``: the reference's form, ``2 Re einsum(C', exp(dtA * arange(L)))``
  with the exponent tensor of shape (H, N/2, L) (as S4D code does);
* ``blocked``: the same sum through the split l = m T + k and BLAS matrix products
  (what the certified route does for its midpoints), the fastest float64 form here.

    OPENBLAS_NUM_THREADS=1 python benchmarks/model.py [--H 256] [--N 64] [--L 16384] [--repeat 3]
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np

from s4cert.certs.checkpoint.model import certify_model


def state_dict(H: int, N: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    n = N // 2
    log_dt = rng.uniform(np.log(1e-3), np.log(1e-1), size=(H, 1))
    A_real = np.log(0.5 * np.ones((1, n))) + 0.05 * rng.standard_normal((1, n))
    A_imag = np.pi * np.arange(n)[None, :] + 0.05 * rng.standard_normal((1, n))
    B = np.stack([np.ones((1, 1, n)), np.zeros((1, 1, n))], axis=-1) + 0.05 * rng.standard_normal((1, 1, n, 2))
    C = rng.standard_normal((1, H, n, 2)) * np.sqrt(0.5)
    f32 = lambda a: np.asarray(a, dtype=np.float32)
    return {"layer.kernel.inv_dt": f32(log_dt), "layer.kernel.A_real": f32(A_real),
            "layer.kernel.A_imag": f32(A_imag), "layer.kernel.B": f32(B), "layer.kernel.C": f32(C)}


def parameters(sd: dict):
    """dt, A, B, C in float64 from the stored float32 numbers (exp transforms, V4 signs)."""
    g = lambda k: sd[f"layer.kernel.{k}"].astype(np.float64)
    dt = np.exp(g("inv_dt"))                       # (H, 1)
    A = -np.exp(g("A_real")) - 1j * g("A_imag")    # (1, n)
    B = g("B")[..., 0] + 1j * g("B")[..., 1]       # (1, 1, n)
    C = g("C")[..., 0] + 1j * g("C")[..., 1]       # (1, H, n)
    return dt, A, B[0], C[0]


def vandermonde(dt, A, B, C, L):
    dtA = dt * A                                            # (H, n)
    W = C * B * (np.exp(dtA) - 1) / A                       # (H, n)
    V = np.exp(dtA[:, :, None] * np.arange(L))              # (H, n, L)
    return 2 * np.einsum("hn,hnl->hl", W, V, optimize=True).real


def blocked(dt, A, B, C, L):
    dtA = dt * A
    W = C * B * (np.exp(dtA) - 1) / A
    T = int(np.ceil(np.sqrt(L)))
    m = -(-L // T)
    a = W[:, None, :] * np.exp(dtA[:, None, :] * np.arange(T)[None, :, None])    # (H, T, n)
    b = np.exp(dtA[:, :, None] * (T * np.arange(m))[None, None, :])              # (H, n, m)
    K = np.matmul(a, b)                                                          # (H, T, m)
    return 2 * K.real.transpose(0, 2, 1).reshape(len(dt), T * m)[:, :L]


def timed(f, repeat):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return min(times), statistics.median(times), out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--H", type=int, default=256)
    p.add_argument("--N", type=int, default=64)
    p.add_argument("--L", type=int, default=16384)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    sd = state_dict(args.H, args.N)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "layer.npz")
        np.savez(path, **sd)
        dt, A, B, C = parameters(sd)
        v_min, v_med, Kv = timed(lambda: vandermonde(dt, A, B, C, args.L), args.repeat)
        b_min, b_med, Kb = timed(lambda: blocked(dt, A, B, C, args.L), args.repeat)
        eps = 1e-12 * float(np.max(np.abs(Kv)))
        c_min, c_med, rep = timed(lambda: certify_model(path, L=args.L, eps=eps), args.repeat)
    k = rep.kernels[0]
    err = float(np.max(np.abs(Kv - k.mid[0]) - k.rad[0]))
    print(f"H={args.H} N={args.N} L={args.L}: {args.H} kernels, eps = 1e-12 max|K| = {eps:.3e}")
    print(f"  float64 vandermonde (reference form): min {v_min:.3f}s  median {v_med:.3f}s")
    print(f"  float64 blocked (BLAS):              min {b_min:.3f}s  median {b_med:.3f}s")
    print(f"  certified ({', '.join(k.info.get('arithmetic', []))}): min {c_min:.3f}s  median {c_med:.3f}s; "
          f"status {k.status}, max radius {k.max_rad:.3e}")
    print(f"  ratio certified / vandermonde: {c_min / v_min:.2f}x (median {c_med / v_med:.2f}x); "
          f"certified / blocked: {c_min / b_min:.2f}x (median {c_med / b_med:.2f}x)")
    print(f"  the float64 vandermonde kernel lies within the disks up to {max(err, 0):.2e}")


if __name__ == "__main__":
    main()
