"""The filter's counts against both cost claims of the spec's theorem, and the a-priori
certificate's sizes and precisions.

Counts (``certs.counts.count_rows``, the filter with C~ supplied over Counting(float64)):
for every N, L and eps, on the exact product tree (``tree``: the exact claim,
O((N+L) log^2(N+L)) operations) and on the hierarchical arcs (``fast``: the eps-accurate
claim, O((N+L) log(N+L) log(kappa/eps)), each sum to eps/kappa), the operations, the peak
words and the normalizations norm_exact, norm_eps, norm_words; then the fit
ops = (N+L)^alpha (a + c log2(kappa/eps)) per route (``certs.count_fit``).

Certificates (``certs.circuit_certificate.certify_circuit``, built-in model, eps 1e-12):
T0, the route the a-priori mode picks, precision_bits = -log2 u and the ball run's
a_posteriori_bits, with the seconds each took.

    python benchmarks/counts.py [--N 16,64,256] [--L 256,...,16384] [--eps 1e-3,1e-12,1e-30]
                                [--routes tree,fast] [--cert-N 16,64] [--cert-L 256,1024,4096]
"""
from __future__ import annotations

import argparse
import time


from s4cert.certs.circuit_certificate import certify_circuit
from s4cert.certs.count_fit import fit_counts
from s4cert.certs.counts import count_model, count_rows, model_kappa
from s4cert.certs.examples import example_model


def _ints(text: str) -> list[int]:
    return [int(t) for t in text.split(",") if t]


def _floats(text: str) -> list[float]:
    return [float(t) for t in text.split(",") if t]


def _orders(o: dict | None) -> str:
    return f"{o['p']},{o['p0']}" if o else "-"


def counts_table(Ns: list[int], Ls: list[int], eps: list[float], routes: list[str]) -> None:
    """Print every row and each route's fit."""
    by_route: dict[str, list] = {r: [] for r in routes}
    print(f"{'route':>6} {'N':>4} {'L':>6} {'eps':>7} {'kappa':>8} {'ops':>10} {'peak':>8} {'n_exact':>8} "
          f"{'n_eps':>6} {'n_words':>7} {'p,p0':>7} {'s':>6}")
    for N in Ns:
        m, step, ct = count_model(N)
        for L in Ls:
            kappa = model_kappa(m, step, L, ct)
            for route in routes:
                t0 = time.perf_counter()
                rows = count_rows(m, step, L, ct, eps, route, kappa)
                dt = (time.perf_counter() - t0) / len(rows)
                for r in rows:
                    o = r.get("orders")
                    print(f"{route:>6} {N:>4} {L:>6} {r['eps']:>7.0e} {kappa:>8.2e} {r['ops']:>10} "
                          f"{r['peak_words']:>8} {r['norm_exact']:>8.3f} {r['norm_eps']:>6.3f} "
                          f"{r['norm_words']:>7.2f} {_orders(o):>7} "
                          f"{dt:>6.1f}", flush=True)
                by_route[route] += rows
    for route, rows in by_route.items():
        f = fit_counts(rows)
        print(f"fit {route}: {f['model']}: alpha {f['alpha']}, a {f['a']}, c {f['c']}, "
              f"RMS relative residual {f['residual']}", flush=True)


def certificate_table(Ns: list[int], Ls: list[int], eps: float = 1e-12) -> None:
    """Print T0 and both precisions for each N and L."""
    print(f"{'N':>4} {'L':>6} {'route':>6} {'T0':>9} {'T0 direct':>9} {'T0 tree':>9} {'precision_bits':>14} "
          f"{'a_posteriori_bits':>17} {'s':>6}")
    for N in Ns:
        m = example_model(N)
        for L in Ls:
            t0 = time.perf_counter()
            c = certify_circuit(m, 0.01, L, eps)
            print(f"{N:>4} {L:>6} {c['circuit_cauchy']:>6} {c['T0']:>9} {c['routes']['direct']['T0']:>9} "
                  f"{c['routes']['tree']['T0']:>9} {c['precision_bits']:>14} {c['a_posteriori_bits']:>17} "
                  f"{time.perf_counter() - t0:>6.1f}", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description="counts against both cost claims; the a-priori certificate's sizes")
    p.add_argument("--N", type=_ints, default=[16, 64, 256])
    p.add_argument("--L", type=_ints, default=[256, 512, 1024, 2048, 4096, 8192, 16384])
    p.add_argument("--eps", type=_floats, default=[1e-3, 1e-12, 1e-30])
    p.add_argument("--routes", type=lambda t: t.split(","), default=["tree", "fast"])
    p.add_argument("--cert-N", type=_ints, default=[16, 64])
    p.add_argument("--cert-L", type=_ints, default=[256, 1024, 4096])
    args = p.parse_args()
    if args.cert_N and args.cert_L:
        certificate_table(args.cert_N, args.cert_L)
    if args.N and args.L:
        counts_table(args.N, args.L, args.eps, args.routes)


if __name__ == "__main__":
    main()
