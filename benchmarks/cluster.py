"""Throughput of certification on a Dask cluster: serial, 1 worker, 2 workers.

(Named cluster.py: a script named distributed.py would shadow the dask.distributed
package it imports.)

64 kernels (a V4 diagonal module with 64 heads, N = 16, L = 1024, ZOH) certified in ball
arithmetic at eps = 1e-30 max|K|, far below what float64 disks can hold.  Each
configuration runs the same certification; the results are checked identical.  The
cluster's start-up is not timed (a cluster is started once and used for many jobs).

    OPENBLAS_NUM_THREADS=1 python benchmarks/cluster.py [--H 64] [--L 1024] [--repeat 2]
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np

from s4cert.certs.checkpoint.model import certify_model


def layer(path: str, H: int, n: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    f32 = lambda a: np.asarray(a, dtype=np.float32)
    np.savez(path, **{
        "layer.kernel.inv_dt": f32(rng.uniform(np.log(1e-3), np.log(1e-1), (H, 1))),
        "layer.kernel.A_real": f32(np.log(0.5) + 0.05 * rng.standard_normal((1, n))),
        "layer.kernel.A_imag": f32(np.pi * np.arange(n)[None] + 0.05 * rng.standard_normal((1, n))),
        "layer.kernel.B": f32(rng.standard_normal((1, 1, n, 2))),
        "layer.kernel.C": f32(rng.standard_normal((1, H, n, 2))),
    })


def main() -> None:
    from distributed import LocalCluster

    p = argparse.ArgumentParser()
    p.add_argument("--H", type=int, default=64)
    p.add_argument("--N", type=int, default=16)
    p.add_argument("--L", type=int, default=1024)
    p.add_argument("--repeat", type=int, default=2)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "layer.npz")
        layer(path, args.H, args.N // 2)
        scale = float(np.max(np.abs(certify_model(path, L=args.L).kernels[0].mid)))
        eps = 1e-30 * scale
        runs = {}

        def timed(name, **kw):
            times, out = [], None
            for _ in range(args.repeat):
                t = time.perf_counter()
                out = certify_model(path, L=args.L, eps=eps, arithmetic="ball", **kw)
                times.append(time.perf_counter() - t)
            runs[name] = (min(times), statistics.median(times), out)

        timed("serial")
        for n in (1, 2):
            with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0",
                              silence_logs=50) as cluster:
                timed(f"{n} worker{'s' if n > 1 else ''}", scheduler=cluster.scheduler_address)
    base = runs["serial"][2].kernels[0]
    print(f"{args.H} kernels (N={args.N}, L={args.L}), ball route, eps = 1e-30 max|K| = {eps:.3e}; "
          f"max radius {base.max_rad:.3e}")
    for name, (t_min, t_med, out) in runs.items():
        k = out.kernels[0]
        same = np.array_equal(k.mid_exact, base.mid_exact) and np.array_equal(k.rad_exact, base.rad_exact)
        print(f"  {name:<10} min {t_min:7.2f}s  median {t_med:7.2f}s  {args.H / t_min:7.2f} kernels/s  "
              f"speed-up {runs['serial'][0] / t_min:4.2f}x  identical: {same}")


if __name__ == "__main__":
    main()
