"""The ``s4cert`` command.

    s4cert kernel [--params FILE | --hippo legs|legt|lagt -N N [--theta T]] [-L L]
                  [--step S] [--eps E] [--mode ball|a-priori|exact] [--seed K]
                  [--out FILE.json] [--npz FILE.npz]
    s4cert audit FILE.json
    s4cert compare FILE.json OTHER.npy|.npz [--key K]
    s4cert count -N 16,64,256 -L 256,4096
    s4cert lmu-audit --memory-size D --theta T --length L
    s4cert model CHECKPOINT [-L L] [--eps E] [--out REPORT.json] [--kernels PREFIX] ...

A user mistake prints one line on stderr and exits 2; a certification that cannot be
completed exits 1 with the reason.  With no arguments: ``s4cert kernel`` on a built-in
example.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from fractions import Fraction
from typing import Any

from ..algorithms.models.hippo_dplr import dplr as hippo_dplr
from ..algorithms.models.lmu_audit import lmu_audit
from .audit.report import audit_kernel_file
from .checkpoint import command as model_command
from .compare import compare_with
from .counts import count_filter
from .errors import CertificationError
from .examples import example_model
from .io.kernel_file import save_kernel, save_npz
from .io.params import load_params
from .kernel import certify_kernel
from .progress import Progress


class UsageError(Exception):
    """A user mistake: one line on stderr, exit 2."""


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {v}")
    return v


def _positive_number(text: str) -> str:
    """Kept as text and read exactly later: integers and "p/q" exactly, decimals as the
    float they name."""
    try:
        v = _number(text)
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (v > 0 and math.isfinite(v)):
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text}")
    return text


def _int_list(text: str) -> list[int]:
    try:
        vals = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not vals or any(v < 1 for v in vals):
        raise argparse.ArgumentTypeError(f"expected integers >= 1, got {text!r}")
    return vals


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line on stderr, exit 2
        print(f"s4cert: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="s4cert", description="Certified S4 kernels, audits and operation counts.")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    k = sub.add_parser("kernel", help="a certified S4 kernel (default: a built-in example)")
    src = k.add_mutually_exclusive_group()
    src.add_argument("--params", metavar="FILE", help="parameter file (.npz or .json)")
    src.add_argument("--hippo", choices=["legs", "legt", "lagt"], help="a certified HiPPO DPLR model")
    k.add_argument("-N", type=_positive_int, help="state size (--hippo, or the built-in model; default 8)")
    k.add_argument("--theta", type=_positive_number, default=None, help="LegT window length (default 1)")
    k.add_argument("--rank", type=_positive_int, default=1, help="rank r of the built-in model (default 1)")
    k.add_argument("-L", type=_positive_int, default=None, help="kernel length (default: the file's, else 64)")
    k.add_argument("--step", type=_positive_number, default=None, help="step size (default: the file's, else 0.01)")
    k.add_argument("--eps", type=_positive_number, default="1e-12", help="error bound (default 1e-12)")
    k.add_argument("--mode", choices=["ball", "a-priori", "exact"], default="ball")
    k.add_argument("--seed", type=int, default=0, help="seed of the built-in model (default 0)")
    k.add_argument("--conj-pairs", action="store_true", help="the parameter file stores one mode per conjugate pair")
    k.add_argument("--out", metavar="FILE.json", help="write the kernel file here")
    k.add_argument("--npz", metavar="FILE.npz", help="also write mid and rad arrays here")
    k.add_argument("--max-prec", type=_positive_int, default=1 << 16, help="ball precision limit in bits (default 65536)")
    k.add_argument("--force", action="store_true", help="a-priori mode: run even above the 2^24-bit limit")
    k.add_argument("--counts", dest="counts", action="store_true", default=None,
                   help="measure operation counts even for large N + L")
    k.add_argument("--no-counts", dest="counts", action="store_false", help="skip the counted run")
    k.add_argument("--cauchy", choices=["auto", "tree", "direct", "fast"], default="auto",
                   help="Cauchy route of the certifying ball run (default auto)")
    k.add_argument("--arithmetic", choices=["auto", "ball", "float64"], default="auto",
                   help="ball mode: float64 disks (direct Cauchy sums, numpy), ball arithmetic, or "
                        "float64 first with balls as the fallback (default auto)")
    k.add_argument("--quiet", action="store_true", help="no progress display")

    a = sub.add_parser("audit", help="re-verify a kernel file independently")
    a.add_argument("file", metavar="FILE.json")
    a.add_argument("--quiet", action="store_true")

    c = sub.add_parser("compare", help="certified errors of another kernel against a kernel file")
    c.add_argument("file", metavar="FILE.json")
    c.add_argument("other", metavar="OTHER.npy|.npz")
    c.add_argument("--key", help="array name inside an .npz")

    n = sub.add_parser("count", help="operation and peak-word counts of the filter")
    n.add_argument("-N", type=_int_list, default=[16, 64], help="state sizes, comma-separated (default 16,64)")
    n.add_argument("-L", type=_int_list, default=[256, 1024], help="lengths, comma-separated (default 256,1024)")
    n.add_argument("--rank", type=_positive_int, default=1)
    n.add_argument("--quiet", action="store_true")

    m = sub.add_parser("lmu-audit", help="float32/float64 errors of the LMU impulse response, certified")
    m.add_argument("--memory-size", type=_positive_int, required=True)
    m.add_argument("--theta", type=_positive_number, required=True)
    m.add_argument("--length", type=_positive_int, required=True)
    model_command.add_parser(sub, _Parser, _positive_int, _positive_number)
    return p


def _number(text: str | None):
    """A command-line number read exactly: integers and fractions "p/q" exactly, decimals
    as the float they name."""
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        pass
    if "/" in text:
        return Fraction(text)
    return float(text)


# -- kernel ---------------------------------------------------------------------

def _model_and_defaults(args) -> tuple[Any, Any, Any, Any]:
    """(model, step, L, c_tilde) from the arguments."""
    if args.params:
        p = load_params(args.params, conj_pairs=args.conj_pairs)
        return p.model, p.step, p.L, p.c_tilde
    if args.hippo:
        eps = _number(args.eps)
        # the model's balls (radii about 2^-prec) far narrower than eps, so they leave its budget to the filter
        prec = max(128, 2 * (64 + math.ceil(-math.log2(float(eps)))))
        theta = _number(args.theta) if args.theta is not None else (1 if args.hippo == "legt" else None)
        if args.theta is not None and args.hippo != "legt":
            raise UsageError("--theta applies to --hippo legt only")
        return hippo_dplr(args.hippo, args.N or 8, theta=theta, prec=prec), None, None, None
    return example_model(args.N or 8, r=args.rank, seed=args.seed), None, None, None


def cmd_kernel(args) -> int:
    model, step, L, c_tilde = _model_and_defaults(args)
    step = _number(args.step) if args.step is not None else (step if step is not None else 0.01)
    L = args.L or L or 64
    eps = _number(args.eps)
    counts = "auto" if args.counts is None else args.counts
    progress = Progress(enabled=not args.quiet)
    t0 = time.perf_counter()
    try:
        ck = certify_kernel(model, step, L, eps, mode=args.mode, c_tilde=c_tilde, max_prec=args.max_prec,
                            force=args.force, counts=counts, cauchy=args.cauchy,
                            arithmetic=args.arithmetic, progress=progress)
    except CertificationError as e:
        progress.done()
        print(f"s4cert: not certified: {e}", file=sys.stderr)
        return 1
    progress.done()
    elapsed = time.perf_counter() - t0
    cert = ck.certificate
    prec = cert.get("precision_bits")
    print(f"status {ck.status}  mode {args.mode}  N={model.N} r={model.r} L={L} step={step} eps={args.eps}")
    print(f"max radius {float(ck.rad.max()):.3e} (float64 midpoints; K_j lies within rad_j of mid_j)"
          + (f"  precision {prec} bits" if prec else "")
          + (f" ({cert['arithmetic']})" if cert.get("arithmetic") else "") + f"  time {elapsed:.3f}s")
    print(f"constants: b={cert['b']:.4g} w={cert['w']:.4g} s={cert['s']:.4g} d={cert['d']:.4g} "
          f"kappa={cert['kappa']:.4g} partition={cert['partition']}")
    if args.mode == "a-priori":
        print(f"circuit: T0={cert['T0']} log2 K0<={cert['log2_K0']:.2f} log2 u={cert['log2_u']}")
    c = ck.counts
    if c.get("measured"):
        print(f"counts: {c['ops']} ops (add {c['add']}, mul {c['mul']}, div {c['div']}, zero tests {c['zero_test']}, "
              f"conj {c['conj']}), word reads {c['word_reads']}, writes {c['word_writes']}, peak words {c['peak_words']}")
    else:
        print(f"counts: not measured ({c.get('reason')})")
    if args.out or args.npz:
        if args.out:
            save_kernel(args.out, ck, model, step, c_tilde=c_tilde, npz=args.npz)
        else:
            save_npz(args.npz, ck)
        print("wrote " + ", ".join(p for p in (args.out, args.npz) if p))
    return 0


# -- audit, compare ----------------------------------------------------------------

def cmd_audit(args) -> int:
    progress = Progress(enabled=not args.quiet)
    progress("auditing")
    report = audit_kernel_file(args.file)
    progress.done()
    for name, passed, detail in report.checks:
        print(f"{'ok  ' if passed else 'FAIL'} {name}: {detail}")
    if report.ok:
        print("audit passed")
        return 0
    failed = [name for name, passed, _ in report.checks if not passed]
    print(f"s4cert: audit failed: {', '.join(failed)}", file=sys.stderr)
    return 1


def cmd_compare(args) -> int:
    print(compare_with(args.file, args.other, key=args.key).summary())
    return 0


# -- count ---------------------------------------------------------------------------

def cmd_count(args) -> int:
    progress = Progress(enabled=not args.quiet)
    print(f"{'N':>6} {'L':>7} {'ops':>12} {'ops/((N+L)lg2^2(N+L))':>22} {'peak words':>11} {'peak/(N+L)':>10}")
    for N in args.N:
        for L in args.L:
            progress(f"counting N={N} L={L}")
            c = count_filter(N, L, r=args.rank)
            s = N + L
            progress.done()
            print(f"{N:>6} {L:>7} {c['ops']:>12} {c['ops'] / (s * math.log2(s) ** 2):>22.3f} "
                  f"{c['peak_words']:>11} {c['peak_words'] / s:>10.2f}")
    return 0


# -- lmu-audit ------------------------------------------------------------------------

def cmd_lmu_audit(args) -> int:
    r = lmu_audit(args.memory_size, _number(args.theta), args.length)
    print(f"LMU impulse response: memory size {r['memory_size']}, theta {args.theta}, length {r['length']}, "
          f"certified at {r['precision']} bits (max radius {r['certified_max_radius']:.2e}), max |H| {r['max_abs_H']:.4g}")
    print(f"{'construction':<20} {'certified lower':>16} {'certified upper':>16}")
    for name, e in r["errors"].items():
        print(f"{name:<20} {e['lower']:>16.3e} {e['upper']:>16.3e}")
    return 0


# -- model ---------------------------------------------------------------------------

def cmd_model(args) -> int:
    return model_command.cmd_model(args, _number)


COMMANDS = {"kernel": cmd_kernel, "audit": cmd_audit, "compare": cmd_compare, "count": cmd_count,
            "lmu-audit": cmd_lmu_audit, "model": cmd_model}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        args = parser.parse_args(["kernel"])
    try:
        return COMMANDS[args.command](args)
    except (UsageError, ValueError, FileNotFoundError, IsADirectoryError, PermissionError) as e:
        print(f"s4cert: error: {str(e).splitlines()[0] if str(e) else type(e).__name__}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader went away (e.g. "| head")
        return 1
    except MemoryError:
        print("s4cert: not certified: out of memory (try a smaller L or N)", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("s4cert: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
