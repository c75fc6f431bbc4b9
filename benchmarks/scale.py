"""HiPPO at scale: the certified set-up by its two routes, and a whole command beside a float64
pipeline.

1. The HiPPO LegS set-up (``dplr``: the certified DPLR model) at each N of ``--setup-sizes``:
   the verified route (float64 ``eigh``, a double-double refinement, the a-posteriori
   verification) and the ball route (``acb_mat.eig``), timed alternately ``--repeat`` times
   (min and median), at the precision the command asks for eps (``--eps``); the ball route
   only up to ``--ball-max`` (it takes minutes above a few hundred states).  The widest
   radius of each model's Lambda, P, B and C is printed beside the times.
2. With ``--c-tilde-sizes``, forming C~ = (I - Abar^M)* C for M = L at each N: the contractive
   float64 squarings with their certified bound (``c_tilde`` method "contractive-squaring")
   against the dense ball route ("dense-squaring", only up to ``--ball-max``), alternately,
   with the widest radius of each.
3. ``s4cert kernel --hippo legs -N N -L L --step STEP --eps EPS --npz k.npz`` as a whole
   command (a fresh process, imports included) against a float64 pipeline run the same way
   (this file with ``--float64-pipeline``: LegS DPLR by ``numpy.linalg.eigh``, the S4 filter
   by chunked direct Cauchy sums with C~ = C as S4 uses it, ``ifft``, ``np.savez``),
   alternately, min and median.

Run single-threaded for stable numbers:

    OPENBLAS_NUM_THREADS=1 python benchmarks/scale.py [--setup-sizes 64,128,256,1024]
        [--ball-max 256] [--c-tilde-sizes 64,256,1024] [--command 1024x65536] [--repeat 2] [--eps 1e-12]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path

import numpy as np


# -- the float64 pipeline (numpy only) ---------------------------------------------------------

def legs_dplr_float64(N: int):
    """LegS as DPLR in float64: H = -1/2 I + K, K_nk = sign(k - n) sqrt((2n+1)(2k+1))/2,
    p_n = sqrt(n + 1/2), B_n = sqrt(2n+1), C = 1; eigh of -iK."""
    n = np.arange(N)
    d = np.sqrt(2.0 * n + 1)
    K = 0.5 * np.sign(n[None, :] - n[:, None]) * np.outer(d, d)
    omega, W = np.linalg.eigh(-1j * K)
    Ws = W.conj().T
    return -0.5 + 1j * omega, Ws @ np.sqrt(n + 0.5), Ws @ d, Ws @ np.ones(N)


def float64_filter(lam, p, B, Ct, step: float, L: int, chunk: int = 2048) -> np.ndarray:
    """The S4 filter, rank one: direct Cauchy sums in chunks of roots (each chunk's
    chunk x N Cauchy matrix times the four weight vectors), Woodbury per root, ifft."""
    M = 1 << max(0, (L - 1).bit_length())
    a = 2.0 / step
    mu = (a - lam) / (a + lam)
    gain = -2.0 / (a + lam)
    Wt = gain[:, None] * np.stack([np.conj(Ct) * B, np.conj(Ct) * p, np.conj(p) * B, np.conj(p) * p], axis=1)
    Hz = np.empty(M, dtype=complex)
    for s in range(0, M, chunk):
        z = np.exp(-2j * np.pi * np.arange(s, min(s + chunk, M)) / M)
        S = (1.0 / (z[:, None] - mu[None, :])) @ Wt
        beta = (1 + z) / 2
        Hz[s:s + len(z)] = S[:, 0] - beta * S[:, 1] * S[:, 2] / (1 + beta * S[:, 3])
    if M >= 2:
        Hz[M // 2] = (step / 2) * np.vdot(Ct, B)
    return np.fft.ifft(Hz)[:L]


def float64_pipeline(N: int, L: int, step: float, out: str) -> None:
    lam, p, B, C = legs_dplr_float64(N)
    K = float64_filter(lam, p, B, C, step, L)
    np.savez(out, mid=K)


# -- timing helpers --------------------------------------------------------------------------

def _alternate(fns: list, repeat: int) -> list[list[float]]:
    """Each function timed ``repeat`` times, in turn (a, b, a, b, ...)."""
    times = [[] for _ in fns]
    for _ in range(repeat):
        for fn, ts in zip(fns, times):
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
    return times


def _widest(model) -> dict:
    from flint import acb

    def w(xs):
        return max(max(float(acb(x).real.rad()), float(acb(x).imag.rad())) for x in xs)
    return {"Lambda": w(model.Lambda), "P": w([x for row in model.P for x in row]),
            "B": w(model.B), "C": w(model.C)}


def cli_prec(eps: Fraction) -> int:
    """The precision ``s4cert kernel --hippo`` asks of the model for eps."""
    from s4cert.certs.limits import eps_bits
    return max(128, 2 * (64 + eps_bits(eps)))


def setup_rows(sizes: list[int], ball_max: int, repeat: int, eps: Fraction) -> list[dict]:
    from s4cert.algorithms.models.hippo_dplr import dplr_with_route

    prec = cli_prec(eps)
    dplr_with_route("legs", 64, prec=prec, route="verified")      # compiled loops, caches
    rows = []
    for N in sizes:
        models = {}

        def run(route):
            models[route] = dplr_with_route("legs", N, prec=prec, route=route)[0]
        routes = ["verified"] + (["ball"] if N <= ball_max else [])
        times = _alternate([lambda r=r: run(r) for r in routes], repeat)
        row = {"N": N, "prec": prec}
        for r, ts in zip(routes, times):
            row[r] = (min(ts), statistics.median(ts), _widest(models[r]))
        rows.append(row)
    return rows


def c_tilde_rows(sizes: list[int], L: int, step: float, ball_max: int, repeat: int, eps: Fraction) -> list[dict]:
    from s4cert.algorithms.dft import next_power_of_two
    from s4cert.algorithms.models.hippo_dplr import dplr_with_route
    from s4cert.algorithms.s4.c_tilde import c_tilde
    from s4cert.arith import BallField

    F, M, rows = BallField(128), next_power_of_two(L), []
    for N in sizes:
        model = dplr_with_route("legs", N, prec=cli_prec(eps))[0]
        out = {}

        def run(method):
            res = c_tilde(F, model, Fraction(step), M, method=method, kernel_eps=eps)
            out[method] = (res.info["method"], max(F.radius(x) for x in res.value))
        methods = ["contractive-squaring"] + (["dense-squaring"] if N <= ball_max else [])
        times = _alternate([lambda m=m: run(m) for m in methods], repeat)
        rows.append({"N": N, **{m: (min(ts), statistics.median(ts), *out[m]) for m, ts in zip(methods, times)}})
    return rows


def command_rows(N: int, L: int, step: float, eps: str, repeat: int) -> dict:
    env = dict(os.environ, OPENBLAS_NUM_THREADS=os.environ.get("OPENBLAS_NUM_THREADS", "1"))
    with tempfile.TemporaryDirectory() as tmp:
        cert = [sys.executable, "-m", "s4cert", "kernel", "--hippo", "legs", "-N", str(N), "-L", str(L),
                "--step", str(step), "--eps", eps, "--npz", str(Path(tmp) / "k.npz"), "--quiet"]
        f64 = [sys.executable, str(Path(__file__).resolve()), "--float64-pipeline", f"{N}x{L}",
               "--step", str(step), "--out", str(Path(tmp) / "f.npz")]
        status = {}

        def run(cmd, name):
            res = subprocess.run(cmd, env=env, capture_output=True, text=True)
            status[name] = (res.returncode, res.stderr.strip().splitlines()[-1:] if res.returncode else [])
        times = _alternate([lambda: run(f64, "float64"), lambda: run(cert, "s4cert")], repeat)
    return {"N": N, "L": L, "float64": (min(times[0]), statistics.median(times[0])),
            "s4cert": (min(times[1]), statistics.median(times[1])), "status": status}


def main() -> None:
    p = argparse.ArgumentParser(description="HiPPO set-up and whole commands at scale")
    p.add_argument("--setup-sizes", default="64,128,256,1024")
    p.add_argument("--ball-max", type=int, default=256)
    p.add_argument("--c-tilde-sizes", default="", help="N list for the C~ timings ('' to skip)")
    p.add_argument("--command", default="1024x65536", help="NxL of the whole command ('' to skip)")
    p.add_argument("--step", type=float, default=0.001)
    p.add_argument("--eps", default="1e-12")
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--float64-pipeline", default=None, help=argparse.SUPPRESS)
    p.add_argument("--out", default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.float64_pipeline:
        N, L = (int(v) for v in args.float64_pipeline.split("x"))
        float64_pipeline(N, L, args.step, args.out)
        return
    eps = Fraction(args.eps)
    if args.setup_sizes:
        print(f"HiPPO LegS set-up at prec {cli_prec(eps)} (the command's for eps {args.eps}); times in s, "
              "widest radii of Lambda / P / B / C")
        print(f"{'N':>5} {'route':>9} {'min':>8} {'median':>8}  radii")
        for row in setup_rows([int(v) for v in args.setup_sizes.split(",")], args.ball_max, args.repeat, eps):
            for route in ("verified", "ball"):
                if route in row:
                    tmin, tmed, w = row[route]
                    print(f"{row['N']:>5} {route:>9} {tmin:>8.3f} {tmed:>8.3f}  "
                          + " / ".join(f"{w[k]:.2e}" for k in ("Lambda", "P", "B", "C")), flush=True)
                else:
                    print(f"{row['N']:>5} {route:>9} {'-':>8} {'-':>8}  (not run: above --ball-max)", flush=True)
    if args.c_tilde_sizes:
        L = int(args.command.split("x")[1]) if args.command else 65536
        print(f"C~ for M = {L}, step {args.step} (s; the method that ran, widest radius)")
        for row in c_tilde_rows([int(v) for v in args.c_tilde_sizes.split(",")], L, args.step, args.ball_max,
                                args.repeat, eps):
            for m in ("contractive-squaring", "dense-squaring"):
                if m in row:
                    tmin, tmed, ran, rad = row[m]
                    print(f"{row['N']:>5} {m:>21} min {tmin:8.3f} median {tmed:8.3f}  ran {ran}, radius {rad:.2e}",
                          flush=True)
    if args.command:
        N, L = (int(v) for v in args.command.split("x"))
        r = command_rows(N, L, args.step, args.eps, args.repeat)
        print(f"s4cert kernel --hippo legs -N {N} -L {L} --step {args.step} --eps {args.eps} --npz k.npz "
              "(whole commands, s)")
        for name in ("float64", "s4cert"):
            code, err = r["status"][name]
            print(f"  {name:>8}: min {r[name][0]:.2f}  median {r[name][1]:.2f}  exit {code} {' '.join(err)}")
        print(f"  ratio s4cert / float64: min {r['s4cert'][0] / r['float64'][0]:.1f}  "
              f"median {r['s4cert'][1] / r['float64'][1]:.1f}", flush=True)


if __name__ == "__main__":
    main()
