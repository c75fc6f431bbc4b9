"""``s4cert kernel --mode a-priori --certificate-only``: the rational-circuit certificate
(T0, V0, D0, K0, u) without the run at u (``circuit_certificate.certify_circuit``)."""
from __future__ import annotations

import argparse
import sys
import time

from . import limits
from .circuit_certificate import certify_circuit
from .errors import CertificationError
from .progress import Progress

#: seconds per traced and bounded gate (N = 64, L = 4096 and N = 16, L = 1024 on one core), both routes
SECONDS_PER_GATE = 1.5e-5
#: the keys printed by --json
JSON_KEYS = ("T0", "V0", "D0", "log2_K0", "log2_u", "precision_bits", "circuit_cauchy", "a_posteriori_bits")


def add_flag(k) -> None:
    """The kernel parser's ``--certificate-only`` flag."""
    k.add_argument("--certificate-only", action="store_true",
                   help="--mode a-priori: trace the circuit and certify T0, V0, D0, K0 and u without running it "
                        "at u (memory of the live wires only); prints precision_bits = -log2 u beside "
                        "a_posteriori_bits, the precision the ball run needed for the same eps")


def cmd_certificate(args, number, model_and_defaults, print_json) -> int:
    """Run the certificate-only a-priori mode; ``model_and_defaults`` builds the model
    (checked against the ball mode's estimate: the run is a ball run and two traces)."""
    if args.mode != "a-priori":
        raise ValueError("--certificate-only goes with --mode a-priori")
    for opt, val in (("--out", args.out), ("--npz", args.npz)):
        if val:
            raise ValueError(f"--certificate-only writes no kernel: {opt} does not apply")
    eps = number(args.eps)
    ball_args = argparse.Namespace(**{**vars(args), "mode": "ball", "quiet": True})
    model, step, L, c_tilde = model_and_defaults(ball_args, eps)
    step = number(args.step) if args.step is not None else (step if step is not None else 0.01)
    L = args.L or L or 64
    M = 1 << max(0, (L - 1).bit_length())
    gates = M * (10.3 * model.N + 19) * 1.7  # both routes' circuits (the tree's about 0.7 of direct)
    est = limits.Estimate(f"a-priori certificate, N = {model.N}, L = {L}", gates * SECONDS_PER_GATE,
                          70e6 + 2e3 * (model.N + M))
    limits.check(est, args.force)
    progress = Progress(enabled=not (args.quiet or args.json))
    if not (args.quiet or args.json):
        print(f"s4cert: estimate: {est.text()}", file=sys.stderr)
    t0 = time.perf_counter()
    try:
        cert = certify_circuit(model, step, L, eps, c_tilde, cauchy=args.cauchy, max_prec=args.max_prec,
                               progress=progress)
    except CertificationError as e:
        progress.done()
        print(f"s4cert: not certified: {e}", file=sys.stderr)
        return 1
    finally:
        progress.done()
    if args.json:
        print_json({k: cert[k] for k in JSON_KEYS})
        return 0
    print(f"a-priori certificate  N={model.N} r={model.r} L={L} step={step} eps={args.eps}  "
          f"time {time.perf_counter() - t0:.1f}s")
    print(f"circuit ({cert['circuit_cauchy']} Cauchy sums): T0={cert['T0']} V0<={cert['V0']} D0>={cert['D0']} "
          f"log2 K0<={cert['log2_K0']:.2f} log2 u={cert['log2_u']}")
    print(f"precision: the theorem asks {cert['precision_bits']} bits; the ball run needed "
          f"{cert['a_posteriori_bits']} bits")
    for route, r in cert["routes"].items():
        print(f"  {route}: T0={r['T0']} bits={r['precision_bits']}")
    return 0
