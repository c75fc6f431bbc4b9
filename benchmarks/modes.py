"""Time and peak memory of the exact and a-priori modes of ``certify_kernel``.

Each case runs in its own process (peak resident memory is per process).  Exact mode:
the powers route (default) and, where it finishes in reasonable time, the exact filter
route (``exact_route="filter"``) for the ratio; models are the built-in example with
entries rounded to rationals of denominator <= 64 (``--floats``: the float64 entries
themselves, exact binary numbers with longer denominators), step 1/100.  A-priori mode:
the built-in example (float64 entries, step 0.01, eps 1e-12), T0, k and the Cauchy route
of the circuit run reported.

    python benchmarks/modes.py [--quick] [--floats] [--filter-limit SECONDS]
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from fractions import Fraction

EXACT_SIZES = [(4, 64), (8, 64), (16, 64), (16, 128), (16, 256), (8, 512), (8, 1024)]
FILTER_SIZES = {(4, 64), (8, 64)}  # the filter route at larger sizes takes minutes
APRIORI_SIZES = [(2, 16), (4, 16), (8, 16), (8, 32), (8, 64), (16, 64), (8, 128)]


def _model(N: int, floats: bool):
    from s4cert.algorithms.s4.dplr import DPLR
    from s4cert.certs.examples import example_model
    m = example_model(N)
    if floats:
        return m

    def f(x):
        z = complex(x)
        return Fraction(z.real).limit_denominator(64), Fraction(z.imag).limit_denominator(64)
    return DPLR([f(x) for x in m.Lambda], [[f(x) for x in r] for r in m.P], [f(x) for x in m.B],
                [f(x) for x in m.C])


def run_case(spec: dict) -> dict:
    """One case in this process: seconds, peak MB, and certificate entries."""
    from s4cert.certs.kernel import certify_kernel
    N, L, mode = spec["N"], spec["L"], spec["mode"]
    if mode == "exact":
        model, step = _model(N, spec["floats"]), Fraction(1, 100)
        kw = {"exact_route": spec["route"]}
    else:
        model, step = _model(N, True), 0.01
        kw = {"force": True}
    t0 = time.perf_counter()
    ck = certify_kernel(model, step, L, 1e-12, mode=mode, **kw)
    out = {"seconds": time.perf_counter() - t0,
           "peak_MB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    if mode == "a-priori":
        out.update(T0=ck.certificate["T0"], k=ck.certificate["precision_bits"], route=ck.certificate["circuit_cauchy"])
    else:
        out["den_bits"] = max(x.denominator.bit_length() for pair in ck.exact for x in pair)
    return out


def _spawn(spec: dict, limit: float) -> dict | None:
    try:
        p = subprocess.run([sys.executable, __file__, "--case", json.dumps(spec)], capture_output=True,
                           text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return None
    if p.returncode:
        raise RuntimeError(p.stderr)
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description="time and memory of the exact and a-priori modes")
    p.add_argument("--quick", action="store_true", help="the smaller sizes only")
    p.add_argument("--floats", action="store_true", help="exact mode on the float64 example entries")
    p.add_argument("--filter-limit", type=float, default=300.0, help="seconds allowed to the filter route")
    p.add_argument("--case", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.case:
        print(json.dumps(run_case(json.loads(args.case))))
        return
    exact = EXACT_SIZES[:3] if args.quick else EXACT_SIZES
    apriori = APRIORI_SIZES[:3] if args.quick else APRIORI_SIZES
    print(f"exact mode ({'float64' if args.floats else 'rational'} entries): N L  powers s  MB  filter s  ratio  den bits")
    for N, L in exact:
        r = _spawn({"N": N, "L": L, "mode": "exact", "route": "powers", "floats": args.floats}, 3600)
        f = _spawn({"N": N, "L": L, "mode": "exact", "route": "filter", "floats": args.floats},
                   args.filter_limit) if (N, L) in FILTER_SIZES else None
        fs = f"{f['seconds']:.2f}" if f else "-"
        ratio = f"{f['seconds'] / r['seconds']:.1f}" if f else "-"
        print(f"  {N:>3} {L:>5}  {r['seconds']:8.2f}  {r['peak_MB']:5.0f}  {fs:>8}  {ratio:>5}  {r['den_bits']}",
              flush=True)
    print("a-priori mode (float64 example, eps 1e-12): N L  T0  k  circuit  seconds  peak MB")
    for N, L in apriori:
        r = _spawn({"N": N, "L": L, "mode": "a-priori"}, 3600)
        print(f"  {N:>3} {L:>5}  {r['T0']:>6}  {r['k']:>8}  {r['route']:>7}  {r['seconds']:8.2f}  {r['peak_MB']:6.0f}",
              flush=True)


if __name__ == "__main__":
    main()
