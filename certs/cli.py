"""The ``s4cert`` command."""
from __future__ import annotations

import argparse
import sys
import time

from arith import BallField
from algorithms.s4 import filter_kernel

from .examples import example_model


class UsageError(Exception):
    pass


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {v}")
    return v


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not v > 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text}")
    return v


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line on stderr, exit 2
        print(f"s4cert: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="s4cert", description="Certified S4 kernels and friends.")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    k = sub.add_parser("kernel", help="certified kernel of a built-in example model (ball arithmetic)")
    k.add_argument("-N", type=_positive_int, default=8, help="state size (default 8)")
    k.add_argument("-L", type=_positive_int, default=64, help="kernel length (default 64)")
    k.add_argument("--step", type=_positive_float, default=0.01, help="step size (default 0.01)")
    k.add_argument("--eps", type=_positive_float, default=1e-10,
                   help="largest radius accepted; precision doubles until reached (default 1e-10)")
    k.add_argument("--max-prec", type=_positive_int, default=1 << 16, help="give up above this precision (default 65536)")
    k.add_argument("--seed", type=int, default=0, help="seed of the built-in model (default 0)")
    return p


def cmd_kernel(args) -> int:
    model = example_model(args.N, seed=args.seed)
    t0 = time.perf_counter()
    prec = 64
    while True:
        F = BallField(prec)
        res = filter_kernel(F, model, args.step, args.L)
        rad = max(F.radius(k) for k in res.value) if res.ok else float("inf")
        if (res.ok and rad <= args.eps) or res.status not in ("ok", "undecided") or 2 * prec > args.max_prec:
            break
        prec *= 2
    elapsed = time.perf_counter() - t0
    if not res.ok or rad > args.eps:
        why = f"status {res.status} {res.info}" if not res.ok else f"radius {rad:.3e} > eps"
        print(f"s4cert: kernel not certified at {prec} bits: {why}", file=sys.stderr)
        return 1
    print(f"status ok  N={args.N} L={args.L} step={args.step} precision={prec} bits  time={elapsed:.3f}s")
    print(f"max radius {rad:.3e}  (every K_j lies within its radius of the printed midpoint)")
    for j, k in enumerate(res.value[:4]):
        print(f"K[{j}] = {F.midpoint(k):.15g}  +/- {F.radius(k):.2e}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command is None:
        args = build_parser().parse_args(["kernel"])
    return cmd_kernel(args)


if __name__ == "__main__":
    sys.exit(main())
