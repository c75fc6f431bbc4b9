"""Hierarchical-arc Cauchy sums: operation counts and certified timings, side by side.

1. Counts (Counting(Float64Field()), n = M, LegS-like poles mu_j = (a - lambda_j)/(a + lambda_j),
   lambda_j = -1/2 + i pi j, step 1e-2, eps = 1e-8): operations / ((n+M) log2(n+M) p),
   peak words / (n+M), and cauchy_direct's 4 n M operations.
2. Timings for a relative accuracy target (ball radius <= target * S_abs(k) at every node):
   BallField cauchy_fast (its products through acb_matrices), cauchy_direct and the
   product tree cauchy_on_roots, each at the least precision (from
   64 bits, stepping up) that meets the target; numpy float64 direct sums for scale.
   The product tree's precision is searched on min(M, 4096) nodes and confirmed on M.
   Direct sums in BallField cost n M ball divisions; where that exceeds --direct-limit
   pairs they are timed on M / 2^q nodes (cauchy_direct's cost is exactly proportional
   to M) and scaled, which the table marks with "~".
3. Several weight sets sharing the poles (as the S4 filter needs): cauchy_fast_many.

    python benchmarks/fast_cauchy.py [--counts-max 65536] [--sizes 64:1024,...] [--legs 64:16384,...]
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np


from s4cert.algorithms.cauchy.direct import cauchy_direct
from s4cert.algorithms.cauchy.tree import cauchy_on_roots
from s4cert.algorithms.cauchy.arcs.api import cauchy_fast, cauchy_fast_many
from s4cert.arith import BallField, Counting, Float64Field

STEP = 1e-2


def legs_like(N: int) -> list:
    return [complex(-0.5, math.pi * j) for j in range(N)]


def legs_eigenvalues(N: int) -> list:
    from s4cert.algorithms.models.hippo_float64 import dplr_float64
    return [complex(l) for l in dplr_float64("legs", N).Lambda]


def s4_poles(F, lam: list, step: float) -> list:
    a = F.div(F.const(2), F.from_number(step))
    return [F.div(F.sub(a, F.from_number(l)), F.add(a, F.from_number(l))) for l in lam]


def float_poles(lam: list, step: float) -> np.ndarray:
    a = 2 / step
    lam = np.asarray(lam)
    return (a - lam) / (a + lam)


def weights(N: int) -> list:
    return [complex(1, (j % 3) - 1) for j in range(N)]


# -- 1. counts --------------------------------------------------------------------------------

def count_table(max_total: int, eps: float) -> None:
    print(f"counts: Counting(Float64Field()), n = M, LegS-like poles, step {STEP}, eps {eps:g}")
    print(f"{'n+M':>7} {'p':>3} {'ops':>11} {'ops/((n+M)lg(n+M)p)':>20} {'peak/(n+M)':>11} "
          f"{'direct 4nM':>12} {'direct/fast':>11} {'sec':>6}")
    q = 8
    while 2 ** q <= max_total:
        n = M = 2 ** (q - 1)
        C = Counting(Float64Field())
        poles = [C.from_number(x) for x in float_poles(legs_like(n), STEP).tolist()]
        ws = [C.from_number(x) for x in weights(n)]
        C.reset()
        t = time.perf_counter()
        r = cauchy_fast(C, poles, ws, M, eps)
        dt = time.perf_counter() - t
        s = C.summary()
        ops, p = s["ops"], r.info["p"]
        ratio = ops / ((n + M) * math.log2(n + M) * p)
        direct = 4 * n * M
        print(f"{n + M:>7} {p:>3} {ops:>11} {ratio:>20.3f} {(s['peak_words'] - 2 * n) / (n + M):>11.2f} "
              f"{direct:>12} {direct / ops:>11.1f} {dt:>6.1f}", flush=True)
        q += 1


# -- 2. timings at the precision each route needs ---------------------------------------------

def s_abs(poles: np.ndarray, w: list, M: int) -> np.ndarray:
    z = np.exp(-2j * np.pi * np.arange(M) / M)
    aw = np.abs(np.asarray(w))
    out = np.zeros(M)
    for lo in range(0, M, 4096):
        out[lo:lo + 4096] = (aw[None, :] / np.abs(z[lo:lo + 4096, None] - poles[None, :])).sum(axis=1)
    return out


def relative_radius(F: BallField, values: list, S: np.ndarray) -> float:
    return max(F.radius(v) / s for v, s in zip(values, S))


def timed(f):
    t = time.perf_counter()
    out = f()
    return out, time.perf_counter() - t


def least_precision(run, S: np.ndarray, target: float, start: int, grow, limit: int):
    """(prec, seconds, relative radius) of the first precision that meets the target."""
    prec = start
    while prec <= limit:
        F = BallField(prec)
        r, dt = timed(lambda: run(F))
        if r.ok:
            rel = relative_radius(F, r.value, S)
            if rel <= target:
                return prec, dt, rel
        prec = grow(prec)
    return None, None, None


def direct_time(lam: list, w: list, M: int, prec: int, limit: int) -> tuple[float, bool]:
    """Seconds for cauchy_direct at prec; scaled from M / 2^q nodes when n M > limit."""
    n = len(lam)
    Mq, scaled = M, False
    while n * Mq > limit and Mq > 1:
        Mq //= 2
        scaled = True
    F = BallField(prec)
    poles = s4_poles(F, lam, STEP)
    ws = F.vector(w)
    _, dt = timed(lambda: cauchy_direct(F, poles, ws, Mq))
    return dt * M / Mq, scaled


def timing_row(label: str, lam: list, M: int, target: float, args) -> None:
    N = len(lam)
    w = weights(N)
    fp = float_poles(lam, STEP)
    S = s_abs(fp, w, M)
    eps = target / 4  # E_k <= 3 eps S_abs(k) for the default theta, rho0; rounding takes the rest

    def fast(F):
        return cauchy_fast(F, s4_poles(F, lam, STEP), w, M, eps)

    pf, tf, rf = least_precision(fast, S, target, 64, lambda p: p + 32, 1024)
    # direct sums: the least precision is found on a few nodes' worth of work, then timed
    pd = 64
    while True:
        F = BallField(pd)
        r = cauchy_direct(F, s4_poles(F, lam, STEP), F.vector(w), min(M, 64))
        if r.ok and relative_radius(F, r.value, s_abs(fp, w, min(M, 64))) <= target:
            break
        pd += 32
    td, scaled = direct_time(lam, w, M, pd, args.direct_limit)
    pt = tt = None
    if N <= args.tree_max_n:  # the precision is searched on at most 4096 nodes, then confirmed
        Ms = min(M, 4096)
        start, _, _ = least_precision(lambda F: cauchy_on_roots(F, s4_poles(F, lam, STEP), F.vector(w), Ms),
                                      s_abs(fp, w, Ms), target, 64, lambda p: 2 * p, args.tree_max_prec)
        if start is not None:
            pt, tt, _ = least_precision(lambda F: cauchy_on_roots(F, s4_poles(F, lam, STEP), F.vector(w), M),
                                        S, target, start, lambda p: 2 * p, args.tree_max_prec)
    z = np.exp(-2j * np.pi * np.arange(M) / M)
    _, tn = timed(lambda: [(np.asarray(w)[None, :] / (z[lo:lo + 4096, None] - fp[None, :])).sum(axis=1)
                           for lo in range(0, M, 4096)])
    if tt is not None:
        tree = f"{tt:8.2f} @{pt:>5}"
    else:
        tree = f"{'-':>8} {'>' + str(args.tree_max_prec) if N <= args.tree_max_n else 'skip':>6}"
    print(f"{label:>14} {N:>5} {M:>6} | {tf:7.2f} @{pf:>4} | {'~' if scaled else ' '}{td:8.2f} @{pd:>4} | "
          f"{tree} | {tn:7.3f} | {td / tf:9.1f}", flush=True)


def timings(args) -> None:
    print(f"\ntimings (seconds) for relative accuracy {args.target:g} (radius <= target * S_abs(k)), step {STEP}; "
          "@ = precision in bits")
    print(f"{'poles':>14} {'N':>5} {'M':>6} | {'fast':>7} {'':>5} | {'direct':>9} {'':>5} | "
          f"{'tree':>8} {'':>6} | {'numpy64':>7} | {'direct/fast':>9}")
    for spec in args.sizes.split(","):
        N, M = (int(x) for x in spec.split(":"))
        timing_row("LegS-like", legs_like(N), M, args.target, args)
    for spec in filter(None, args.legs.split(",")):
        N, M = (int(x) for x in spec.split(":"))
        timing_row("LegS eig.", legs_eigenvalues(N), M, args.target, args)


# -- 3. several weight sets ----------------------------------------------------------------------

def many_weights(args) -> None:
    print("\nseveral weight sets sharing the poles (BallField, eps 1e-13, 128 bits)")
    for spec in args.many.split(","):
        N, M = (int(x) for x in spec.split(":"))
        lam = legs_like(N)
        F = BallField(128)
        poles = s4_poles(F, lam, STEP)
        sets = [[complex(1, (j * (i + 1)) % 5 - 2) for j in range(N)] for i in range(4)]
        _, t1 = timed(lambda: cauchy_fast(F, poles, sets[0], M, 1e-13))
        _, t4 = timed(lambda: cauchy_fast_many(F, poles, sets, M, 1e-13))
        print(f"  N {N:>5} M {M:>6}: one set {t1:6.2f} s, four sets {t4:6.2f} s", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description="hierarchical-arc Cauchy sums: counts and timings")
    ap.add_argument("--counts-max", type=int, default=65536, help="largest n+M of the count table")
    ap.add_argument("--eps", type=float, default=1e-8, help="eps of the count table")
    ap.add_argument("--target", type=float, default=1e-10, help="relative accuracy of the timings")
    ap.add_argument("--sizes", default="64:1024,64:16384,256:4096,256:65536,1024:65536")
    ap.add_argument("--legs", default="64:16384,256:65536", help="N:M rows with LegS eigenvalue poles")
    ap.add_argument("--many", default="256:65536,1024:65536")
    ap.add_argument("--direct-limit", type=int, default=2 ** 21, help="n*M above which direct is scaled")
    ap.add_argument("--tree-max-n", type=int, default=1024)
    ap.add_argument("--tree-max-prec", type=int, default=16384)
    ap.add_argument("--skip-counts", action="store_true")
    args = ap.parse_args()
    if not args.skip_counts:
        count_table(args.counts_max, args.eps)
    timings(args)
    many_weights(args)


if __name__ == "__main__":
    main()
