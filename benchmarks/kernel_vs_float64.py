"""Certified ball-mode kernels against a float64 numpy S4-style kernel, side by side.

For each (N, L) the same parameters go to both: a stable random DPLR model with C~
supplied (S4 learns C~).  The float64 kernel is the usual vectorized S4 computation:
direct Cauchy sums over the M x N grid, the rank-r correction by Woodbury at every
root, an inverse FFT.  The certified kernel is ``certify_kernel(mode="ball")`` with
eps = 1e-12 * max|K| (``--arithmetic``: float64 disks first, the default; or balls only).  Prints both times, their ratio, the certified radius, and the
float64 kernel's certified error (from the certified enclosure).

    python benchmarks/kernel_vs_float64.py [--sizes 16x1024,64x1024,...] [--repeat 3]
"""
from __future__ import annotations

import argparse
import time

import numpy as np


from s4cert.certs.examples import example_model
from s4cert import certify_kernel


def float64_kernel(lam, P, Q, B, Ct, step, L):
    """The S4 convolution filter in float64 numpy (direct Cauchy sums)."""
    M = 1 << max(0, (L - 1).bit_length())
    z = np.exp(-2j * np.pi * np.arange(M) / M)
    a = 2.0 / step
    mu = (a - lam) / (a + lam)
    gain = -2.0 / (a + lam)
    cauchy = 1.0 / (z[:, None] - mu[None, :])            # M x N

    def S(u, v):                                          # u, v: N x k, N x l -> M x k x l
        w = gain[:, None, None] * np.conj(u)[:, :, None] * v[:, None, :]
        return np.einsum("mn,nkl->mkl", cauchy, w)

    CB = S(Ct[:, None], B[:, None])[:, 0, 0]
    CP = S(Ct[:, None], P)[:, 0, :]
    QB = S(Q, B[:, None])[:, :, 0]
    QP = S(Q, P)
    beta = (1 + z) / 2
    r = P.shape[1]
    W = np.eye(r)[None] + beta[:, None, None] * QP
    X = np.linalg.solve(W, QB[:, :, None])[:, :, 0]
    H = CB - beta * np.einsum("mk,mk->m", CP, X)
    if M >= 2:
        H[M // 2] = (step / 2) * np.vdot(Ct, B)
    return np.fft.ifft(H)[:L]


def run(N: int, L: int, repeat: int, step: float = 0.01, seed: int = 0, arithmetic: str = "auto") -> dict:
    model = example_model(N, seed=seed)
    g = np.random.default_rng(seed + 1)
    Ct = g.standard_normal(N) + 1j * g.standard_normal(N)
    lam, B = np.array(model.Lambda), np.array(model.B)
    P, Q = np.array(model.P), np.array(model.Q)
    t = time.perf_counter()
    for _ in range(repeat):
        K64 = float64_kernel(lam, P, Q, B, Ct, step, L)
    t64 = (time.perf_counter() - t) / repeat
    eps = 1e-12 * float(np.abs(K64).max())
    t = time.perf_counter()
    ck = certify_kernel(model, step, L, eps, c_tilde=list(Ct), counts=False, arithmetic=arithmetic)
    tc = time.perf_counter() - t
    err = float(np.max(np.abs(K64 - ck.mid) + ck.rad))  # certified upper bound on the float64 error
    return {"N": N, "L": L, "float64_s": t64, "certified_s": tc, "ratio": tc / t64, "eps": eps,
            "max_radius": ck.certificate["max_radius"], "precision_bits": ck.certificate["precision_bits"],
            "float64_error_upper": err, "arithmetic": ck.certificate.get("arithmetic", "ball")}


def main() -> None:
    p = argparse.ArgumentParser(description="certified ball kernels vs float64")
    p.add_argument("--sizes", default="16x1024,16x16384,64x1024,64x16384,256x1024,256x16384")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--arithmetic", choices=["auto", "ball", "float64"], default="auto")
    args = p.parse_args()
    print(f"{'N':>5} {'L':>6} {'float64 s':>10} {'certified s':>12} {'ratio':>8} {'bits':>6} "
          f"{'max radius':>11} {'eps':>9} {'float64 err <=':>15}  arithmetic")
    for item in args.sizes.split(","):
        N, L = (int(v) for v in item.split("x"))
        r = run(N, L, args.repeat, arithmetic=args.arithmetic)
        print(f"{N:>5} {L:>6} {r['float64_s']:>10.4f} {r['certified_s']:>12.3f} {r['ratio']:>8.1f} "
              f"{r['precision_bits']:>6} {r['max_radius']:>11.2e} {r['eps']:>9.2e} {r['float64_error_upper']:>15.2e}  {r['arithmetic']}",
              flush=True)


if __name__ == "__main__":
    main()
