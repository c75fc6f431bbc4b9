"""The fast certified filter on LegS models, side by side with its baselines.

1. LegS N = 64, L = 16384, step 1e-2, eps = 1e-12 max|K|: certified kernel (the default:
   float64 disks, balls if they do not reach eps) against the float64 vectorized
   direct-Cauchy kernel, same parameters.
2. LegS N = 256, L = 65536: certified kernel in ball arithmetic by the arc route against
   the certified ball kernel through direct Cauchy sums.  The direct route's cost is
   exactly proportional to M, so it is run at a shorter length and scaled (said so in
   the output).  Also the float64-disk route (direct sums, numpy) at full length.
3. LegS N = 1024, L = 65536, eps = 1e-12 max|K|: certified, timed.

The model is the usual float64 LegS DPLR (numpy eigh, as S4 codes do), whose entries
are exact binary numbers; C~ is supplied (S4 learns it): here C~ = C.

    python benchmarks/fast_filter.py [--skip 2]
"""
from __future__ import annotations

import argparse
import time

import numpy as np


from s4cert.algorithms.models.hippo_float64 import dplr_float64
from s4cert import certify_kernel
from kernel_vs_float64 import float64_kernel


def legs(N: int):
    m = dplr_float64("legs", N)
    arrays = [np.array(x) for x in (m.Lambda, m.P, m.Q, m.B, m.C)]
    return m, arrays


def timed(f, *a, **k):
    t = time.perf_counter()
    out = f(*a, **k)
    return out, time.perf_counter() - t


def case1(step=1e-2, N=64, L=16384):
    m, (lam, P, Q, B, C) = legs(N)
    K64, t64 = timed(float64_kernel, lam, P, Q, B, C, step, L)
    K64, t64 = timed(float64_kernel, lam, P, Q, B, C, step, L)  # warm
    eps = 1e-12 * float(np.abs(K64).max())
    ck, tc = timed(certify_kernel, m, step, L, eps, c_tilde=list(C), counts=False)
    c = ck.certificate
    print(f"[1] LegS N={N} L={L} step={step}: float64 {t64:.3f}s, certified ({c.get('arithmetic', 'ball')}, "
          f"{c['cauchy']['route']}, "
          f"{c['precision_bits']} bits" + (f", p={c['cauchy']['p']}" if 'p' in c['cauchy'] else "") + f") {tc:.3f}s, ratio {tc / t64:.1f}x "
          f"(aim 5x); max radius {c['max_radius']:.2e} <= eps {eps:.2e}; "
          f"float64 error <= {float(np.max(np.abs(K64 - ck.mid) + ck.rad)):.2e}", flush=True)


def case2(step=1e-2, N=256, L=65536, L_direct=2048):
    m, (lam, P, Q, B, C) = legs(N)
    eps = 1e-12 * float(np.abs(float64_kernel(lam, P, Q, B, C, step, L)).max())
    ck, tf = timed(certify_kernel, m, step, L, eps, c_tilde=list(C), counts=False, cauchy="fast", arithmetic="ball")
    _, td = timed(certify_kernel, m, step, L_direct, eps, c_tilde=list(C), counts=False, cauchy="direct",
                  arithmetic="ball")
    td_scaled = td * L / L_direct
    c64, t64 = timed(certify_kernel, m, step, L, eps, c_tilde=list(C), counts=False, arithmetic="float64")
    print(f"[2] LegS N={N} L={L}: certified arcs (ball) {tf:.2f}s; certified direct (ball) at L={L_direct} {td:.2f}s, "
          f"scaled to L={L} ~{td_scaled:.0f}s; arcs faster by ~{td_scaled / tf:.0f}x (aim >= 10x); "
          f"direct sums on float64 disks {t64:.2f}s (max radius {c64.certificate['max_radius']:.2e})", flush=True)


def case3(step=1e-2, N=1024, L=65536):
    m, (lam, P, Q, B, C) = legs(N)
    K64, t64 = timed(float64_kernel, lam, P, Q, B, C, step, L)
    eps = 1e-12 * float(np.abs(K64).max())
    ck, tc = timed(certify_kernel, m, step, L, eps, c_tilde=list(C), counts=False)
    c = ck.certificate
    print(f"[3] LegS N={N} L={L}: certified in {tc:.1f}s (aim < 30 s; {c['precision_bits']} bits, "
          f"max radius {c['max_radius']:.2e} <= eps {eps:.2e}); float64 kernel {t64:.2f}s", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description="the fast certified filter against its baselines")
    p.add_argument("--skip", default="", help="comma-separated case numbers to skip")
    args = p.parse_args()
    skip = {s for s in args.skip.split(",") if s}
    for i, f in ((1, case1), (2, case2), (3, case3)):
        if str(i) not in skip:
            f()


if __name__ == "__main__":
    main()
