"""Single passes of the ball run on each Cauchy route, for the cost model of
``certs/route_cost.py``.

For HiPPO models (``dplr_float64``) of several sizes, C~ supplied, eps absolute, each
route runs ``ball_filter`` once at its planned first precision (the product tree at
log2(1/eps) + its estimated loss + guard, the arcs and the direct sums at
64 + log2(1/eps)); printed: the seconds, the precision, the status, and the seconds the
cost model predicts.  Run single-threaded:

    OPENBLAS_NUM_THREADS=1 python benchmarks/ball_routes.py [--kind legs] [--sizes 8,64,256]
        [--lengths 1024,16384] [--eps 1e-30] [--routes tree,fast,direct]
"""
from __future__ import annotations

import argparse
import time
from fractions import Fraction

import numpy as np

from s4cert.algorithms.models.hippo_float64 import dplr_float64
from s4cert.certs import route_cost
from s4cert.certs.ball_run import ball_filter

PREDICT = {"tree": route_cost.tree_seconds, "fast": route_cost.fast_seconds, "direct": route_cost.direct_seconds}


def main() -> None:
    p = argparse.ArgumentParser(description="one ball-run pass per Cauchy route")
    p.add_argument("--kind", default="legs")
    p.add_argument("--sizes", default="8,64,256")
    p.add_argument("--lengths", default="1024,16384")
    p.add_argument("--eps", default="1e-30")
    p.add_argument("--routes", default="tree,fast,direct")
    p.add_argument("--step", type=float, default=0.01)
    args = p.parse_args()
    eps = Fraction(float(args.eps))
    print(f"{'kind':>5} {'N':>5} {'L':>6} {'route':>6} {'seconds':>8} {'model':>8} {'bits':>5}  status")
    for N in (int(v) for v in args.sizes.split(",")):
        m = dplr_float64(args.kind, N, **({"theta": 1.0} if args.kind == "legt" else {}))
        ct = list(np.array(m.C, dtype=complex))
        for L in (int(v) for v in args.lengths.split(",")):
            for route in args.routes.split(","):
                t = time.perf_counter()
                run = ball_filter(m, args.step, L, eps, ct, [], True, 1 << 16, lambda s: None, route)
                dt = time.perf_counter() - t
                M = 1 << max(0, (L - 1).bit_length())
                model = PREDICT[route](N, M, (m.r + 1) ** 2, run.prec)
                print(f"{args.kind:>5} {N:>5} {L:>6} {route:>6} {dt:>8.3f} {model:>8.3f} {run.prec:>5}  {run.status}",
                      flush=True)


if __name__ == "__main__":
    main()
