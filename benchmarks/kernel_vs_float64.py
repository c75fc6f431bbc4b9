"""Certified ball-mode kernels against the float64 S4 kernel, side by side in one process.

The model is LegS (``dplr_float64("legs", N)``, C~ supplied as S4 learns it).  The
float64 kernel is the usual vectorized S4 computation in its fastest form: the M x N
Cauchy matrix times the weights by one BLAS product (zgemm), the rank-r correction by
Woodbury at every root, an inverse FFT.  For each eps (a multiple of max|K|) the
certified kernel is ``certify_kernel(mode="ball", arithmetic=...)``; both are timed
``--repeat`` times, alternately, so that both meet the same state of the machine (min and median).  Printed: the times and their ratio (certified /
float64, min over min and median over median), the arithmetic that certified, the
largest radius, the float64 kernel's real error (against the tightest certified run,
whose radius is far below it) and the radius over that error.  Where balls certified, plain
python-flint direct sums at the same precision (``flint_direct.py``: acb_mat product, then
acb.dft) are timed too, and the certified time over theirs is printed.

Run single-threaded for stable numbers:

    OPENBLAS_NUM_THREADS=1 python benchmarks/kernel_vs_float64.py [--sizes 64x16384]
        [--eps 1e-12,1e-24,1e-30,1e-60] [--repeat 3] [--arithmetic auto]
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from flint import acb, ctx

from s4cert import certify_kernel
from s4cert.algorithms.models.hippo_float64 import dplr_float64


def flint_direct_kernel(*args):
    """``benchmarks/flint_direct.py``'s kernel (loaded from beside this file, which may be
    imported as a module from elsewhere)."""
    import importlib.util
    from pathlib import Path
    spec = importlib.util.spec_from_file_location("flint_direct", Path(__file__).with_name("flint_direct.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.flint_direct_kernel(*args)


def float64_kernel(lam, P, Q, B, Ct, step, L):
    """The S4 convolution filter in float64 numpy: direct Cauchy sums as one BLAS matrix
    product (M x N Cauchy matrix times the N x (r+1)^2 weights), Woodbury per root, ifft."""
    M = 1 << max(0, (L - 1).bit_length())
    z = np.exp(-2j * np.pi * np.arange(M) / M)
    a = 2.0 / step
    mu = (a - lam) / (a + lam)
    gain = -2.0 / (a + lam)
    cauchy = 1.0 / (z[:, None] - mu[None, :])            # M x N
    r = P.shape[1]
    U = np.concatenate([Ct[:, None], Q], axis=1)          # N x (r+1): the left vectors
    V = np.concatenate([B[:, None], P], axis=1)           # N x (r+1): the right vectors
    Wt = (gain[:, None, None] * np.conj(U)[:, :, None] * V[:, None, :]).reshape(len(lam), -1)
    S = (cauchy @ Wt).reshape(M, r + 1, r + 1)            # one zgemm: all (r+1)^2 sums
    CB, CP, QB, QP = S[:, 0, 0], S[:, 0, 1:], S[:, 1:, 0], S[:, 1:, 1:]
    beta = (1 + z) / 2
    W = np.eye(r)[None] + beta[:, None, None] * QP
    X = np.linalg.solve(W, QB[:, :, None])[:, :, 0]
    H = CB - beta * np.einsum("mk,mk->m", CP, X)
    if M >= 2:
        H[M // 2] = (step / 2) * np.vdot(Ct, B)
    return np.fft.ifft(H)[:L]


def _timed_pair(base, other, repeat: int):
    """Both functions timed ``repeat`` times, alternately (base, other, base, ...), so that
    both see the same state of a noisy machine: (other's last output, base min, base median,
    other min, other median)."""
    tb, to, out = [], [], None
    for _ in range(repeat):
        t = time.perf_counter()
        base()
        tb.append(time.perf_counter() - t)
        t = time.perf_counter()
        out = other()
        to.append(time.perf_counter() - t)
    return out, min(tb), statistics.median(tb), min(to), statistics.median(to)


def _timed(fn, repeat: int):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return out, min(times), statistics.median(times)


def real_error(K: np.ndarray, balls) -> float:
    """max_j |K_j - K_true_j| from enclosures of K_true (upper ends, as floats)."""
    with ctx.workprec(256):
        return max(float(abs(acb(complex(k).real, complex(k).imag) - b).upper()) for k, b in zip(K, balls))


def run(N: int, L: int, eps_factors: list[float], repeat: int, step: float = 0.01,
        arithmetic: str = "auto") -> list[dict]:
    m = dplr_float64("legs", N)
    Ct = np.array(m.C, dtype=complex)
    lam, B = np.array(m.Lambda, dtype=complex), np.array(m.B, dtype=complex)
    P, Q = np.array(m.P, dtype=complex), np.array(m.Q, dtype=complex)
    K64 = float64_kernel(lam, P, Q, B, Ct, step, L)
    scale = float(np.abs(K64).max())
    rows, kernels = [], {}
    for f in eps_factors:
        ck, t64min, t64med, tmin, tmed = _timed_pair(
            lambda: float64_kernel(lam, P, Q, B, Ct, step, L),
            lambda: certify_kernel(m, step, L, f * scale, c_tilde=list(Ct), counts=False, arithmetic=arithmetic),
            repeat)
        kernels[f] = ck
        rows.append({"N": N, "L": L, "eps_factor": f, "float64_min": t64min, "float64_median": t64med,
                     "certified_min": tmin, "certified_median": tmed, "ratio_min": tmin / t64min,
                     "ratio_median": tmed / t64med, "max_radius": ck.certificate["max_radius"],
                     "arithmetic": ck.certificate.get("arithmetic", "ball"),
                     "bits": ck.certificate["precision_bits"]})
        bits = ck.certificate["precision_bits"]
        if isinstance(bits, int) and "arithmetic" not in ck.certificate:  # balls certified: flint-direct at their bits
            _, fmin, fmed = _timed(lambda: flint_direct_kernel(lam, P, Q, B, Ct, step, L, bits), repeat)
            rows[-1].update(flint_min=fmin, flint_median=fmed, over_flint=tmin / fmin)
    err = real_error(K64, kernels[min(eps_factors)].balls)
    for row in rows:
        row["float64_error"] = err
        row["radius_over_error"] = row["max_radius"] / err if err > 0 else float("inf")
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description="certified kernels vs the float64 S4 kernel (LegS)")
    p.add_argument("--sizes", default="64x16384")
    p.add_argument("--eps", default="1e-12,1e-24,1e-30,1e-60", help="eps as multiples of max|K|")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--arithmetic", choices=["auto", "ball", "float64", "double-double", "triple-double"], default="auto")
    args = p.parse_args()
    factors = [float(v) for v in args.eps.split(",")]
    print(f"{'N':>4} {'L':>6} {'eps/max|K|':>10} {'f64 min s':>9} {'f64 med s':>9} {'cert min s':>10} "
          f"{'cert med s':>10} {'ratio min':>9} {'ratio med':>9} {'radius':>9} {'f64 error':>9} "
          f"{'rad/err':>8} {'bits':>5} {'flint min':>9} {'flint med':>9} {'/flint':>6}  arithmetic")
    for item in args.sizes.split(","):
        N, L = (int(v) for v in item.split("x"))
        for r in run(N, L, factors, args.repeat, arithmetic=args.arithmetic):
            print(f"{r['N']:>4} {r['L']:>6} {r['eps_factor']:>10.0e} {r['float64_min']:>9.4f} "
                  f"{r['float64_median']:>9.4f} {r['certified_min']:>10.3f} {r['certified_median']:>10.3f} "
                  f"{r['ratio_min']:>9.1f} {r['ratio_median']:>9.1f} {r['max_radius']:>9.2e} "
                  f"{r['float64_error']:>9.2e} {r['radius_over_error']:>8.3g} {str(r['bits']):>5} "
                  + (f"{r['flint_min']:>9.3f} {r['flint_median']:>9.3f} {r['over_flint']:>6.2f}" if 'flint_min' in r
                     else f"{'-':>9} {'-':>9} {'-':>6}") + f"  {r['arithmetic']}", flush=True)


if __name__ == "__main__":
    main()
