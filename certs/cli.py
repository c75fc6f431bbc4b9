"""The ``s4cert`` command.

    s4cert kernel [--params FILE | --hippo legs|legt|lagt -N N [--theta T]] [-L L]
                  [--step S] [--eps E [--relative]] [--mode ball|a-priori|exact] [--seed K]
                  [--out FILE.json|FILE.npz] [--npz FILE.npz] [--json] [--force]
    s4cert audit FILE.json|FILE.npz [--json]
    s4cert compare FILE.json|FILE.npz OTHER.npy|.npz [--key K] [--no-tighten] [--json]
    s4cert count -N 16,64,256 -L 256,4096 [--eps E1,E2] [--cauchy tree|fast|direct] [--json] [--plot FIG.png]
    s4cert lmu-audit --memory-size D --theta T --length L [--json] [--force]
    s4cert lmu-audit --checkpoint FILE [--theta T] [--length L] [--kernels K.npz] [--out R.json] [--json]
    s4cert plot FILE.json|FILE.npz [--compare OTHER.npy|.npz] -o FIG.png
    s4cert model CHECKPOINT [-L L] [--eps E [--relative]] [--out REPORT.json] [--kernels PREFIX] [--json] ...
    s4cert forward CHECKPOINT --input U.npz --key K [--eps E [--relative]] [--convolution auto|fft|direct] ...

Exit codes: 0 done (certified), 1 not certified (the reason on stderr), 2 a usage
mistake or bad input (one line on stderr), 130 interrupted, 141 stdout closed by its reader
(``| head``; 128 + SIGPIPE, as a shell reports it).  The options shared by the commands
that certify (``--eps``/``--relative``, ``--max-prec``, ``--arithmetic``, ``--json``) are
defined once, in :mod:`.cli_options`; every human summary line fits 100 columns.  With no arguments:
``s4cert kernel`` on a built-in example.  Runs estimated to take more than about ten
minutes or half the memory are refused before they start unless ``--force`` is given
(``limits``); output paths are checked before any work.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import zipfile
import zlib
from decimal import ROUND_CEILING, Decimal, localcontext
from fractions import Fraction
from typing import Any

from ..algorithms.models.hippo_dplr import dplr as hippo_dplr
from ..algorithms.s4.dplr import check_length
from . import cli_certificate, cli_compare, cli_count, cli_files, cli_help, cli_forward, cli_lmu, cli_options, limits, plot
from .cli_options import MAX_ARG_CHARS
from .audit.report import audit_kernel_file
from .checkpoint import command as model_command
from .errors import CertificationError
from .examples import example_model
from .io.atomic import check_targets
from .io.kernel_disks import KernelDisks, disks_of
from .io.kernel_file import binary_name, dumps_document, kernel_document, save_kernel, save_npz
from .io.numbers import check_number_text, json_value, parse_number, parse_rational, short_text
from .io.params import load_params
from .kernel import certify_kernel
from .progress import Progress

_positive_int, _positive_eps = cli_options.positive_int, cli_options.positive_eps
#: kernel values printed by ``s4cert kernel``
SHOWN_VALUES = 5
#: s4cert kernel --arithmetic (ball mode): each choice and what it runs
KERNEL_ARITHMETIC = {
    "auto": "the disks below in that order, each where it can reach eps, then balls",
    "ball": "ball arithmetic, the precision raised until every radius <= eps",
    "float64": "the filter on float64 disks (about 1e-15 max|K|), refused when their radii miss eps",
    "double-double": "double-double disks (about 1e-28 max|K|), likewise",
    "triple-double": "triple-double disks (about 1e-43 max|K|), likewise"}
EXIT_CODES = ("exit codes: 0 done (certified), 1 not certified (reason on stderr), "
              "2 usage mistake or bad input (one line on stderr), 130 interrupted, "
              f"{cli_help.EXIT_BROKEN_PIPE} stdout closed by its reader (e.g. | head); "
              "each command's --help lists its own")


class UsageError(Exception):
    """A user mistake: one line on stderr, exit 2."""


def _positive_number(text: str) -> str:
    """Kept as text and read exactly later: integers and "p/q" exactly, decimals as the
    float they name."""
    try:
        v = _number(text)
    except (ValueError, ZeroDivisionError) as e:
        raise argparse.ArgumentTypeError(str(e) if "exponent" in str(e) or "characters" in str(e)
                                         else f"expected a number, got {text[:40]!r}") from None
    if not (v > 0 and math.isfinite(v)):
        why = " as a float64 (decimals here name a float64; p/q is read exactly)" \
            if isinstance(v, float) and v == 0 and not text.strip().startswith("-") else ""
        raise argparse.ArgumentTypeError(f"expected a finite number > 0{why}, got {text[:40]}")
    return text


def _int_list(text: str) -> list[int]:
    try:
        check_number_text(text, "value", MAX_ARG_CHARS)
        vals = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text[:40]!r}") from None
    if not vals or any(v < 1 for v in vals):
        raise argparse.ArgumentTypeError(f"expected integers >= 1, got {text[:40]!r}")
    return vals


class _Parser(argparse.ArgumentParser):
    def __init__(self, *a, **kw):
        kw.setdefault("epilog", EXIT_CODES)
        super().__init__(*a, **kw)

    def error(self, message: str) -> None:  # one line on stderr, exit 2
        print(f"s4cert: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("s4cert")
    except PackageNotFoundError:
        return "unknown"


_json_flag = cli_options.add_json


def _force_flag(p: argparse.ArgumentParser, what: str = "") -> None:
    p.add_argument("--force", action="store_true",
                   help="run even when the estimate is above about ten minutes or half the memory" + what)


def _kernel_parser(sub) -> None:
    k = sub.add_parser("kernel", help="a certified S4 kernel (default: a built-in example)",
                       description="Certify the S4 convolution kernel K_0 .. K_{L-1} of a DPLR model: "
                                   "every K_j lies within rad_j <= eps of a stored midpoint.")
    src = k.add_mutually_exclusive_group()
    src.add_argument("--params", metavar="FILE", help="parameter file (.npz or .json; its format: docs/formats.md)")
    src.add_argument("--hippo", choices=["legs", "legt", "lagt"], help="a certified HiPPO DPLR model")
    k.add_argument("-N", type=_positive_int, help="state size (--hippo, or the built-in model; default 8)")
    k.add_argument("--theta", type=_positive_number, default=None, help="--hippo legt: window length (default 1)")
    k.add_argument("--rank", type=_positive_int, default=None, help="rank r of the built-in model (default 1)")
    k.add_argument("-L", type=_positive_int, default=None, help="kernel length (default: the file's, else 64)")
    k.add_argument("--step", type=_positive_number, default=None, help="step size (default: the file's, else 0.01)")
    cli_options.add_eps(k, "1e-12", "1e-12", "max|K|")
    k.add_argument("--mode", choices=["ball", "a-priori", "exact"], default="ball",
                   help="ball: ball arithmetic, precision raised until every radius <= eps; a-priori: a "
                        "rounded circuit with a proven error bound; exact: exact rationals (radius 0; "
                        "exact inputs, small N and L) (default ball)")
    k.add_argument("--seed", type=int, default=None, help="seed of the built-in model (default 0)")
    k.add_argument("--conj-pairs", action="store_true",
                   help="--params: the file stores one mode per conjugate pair (as S4 checkpoints do)")
    k.add_argument("--out", metavar="FILE.json|FILE.npz",
                   help="write the kernel file here: JSON (s4cert.kernel/1), or the binary format "
                        "(s4cert.kernel.npz/1, lossless, for large kernels) when the name ends in .npz")
    k.add_argument("--npz", metavar="FILE.npz", help="write the float64 mid and rad arrays here")
    cli_options.add_max_prec(k)
    _force_flag(k, "; a-priori mode: also above the 2^24-bit circuit limit")
    k.add_argument("--counts", dest="counts", action="store_true", default=None,
                   help="measure operation counts even for large N + L")
    k.add_argument("--no-counts", dest="counts", action="store_false", help="skip the counted run")
    k.add_argument("--cauchy", choices=["auto", "tree", "direct", "fast"], default="auto",
                   help="Cauchy sums of the ball run: tree (exact product tree, O((N+L) log^2)), direct "
                        "(O(N L)), fast (hierarchical arcs, each sum to eps/kappa), or auto (the one the "
                        "measured cost model predicts fastest) (default auto)")
    k.add_argument("--exact-route", choices=["auto", "powers", "filter"], default="auto", help="exact mode: powers of Abar on integer matrices (auto) or the filter over Q(zeta)")
    cli_options.add_arithmetic(k, KERNEL_ARITHMETIC)
    cli_certificate.add_flag(k)
    _json_flag(k)
    k.add_argument("--quiet", action="store_true", help="no progress display and no estimate")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="s4cert", description="Certified S4 kernels, audits and operation counts.")
    p.add_argument("--version", action="version", version=f"s4cert {_version()}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")
    _kernel_parser(sub)

    a = sub.add_parser("audit", help="re-verify a kernel file independently")
    a.add_argument("file", metavar="FILE.json|FILE.npz", help="a kernel file written by s4cert kernel --out")
    _json_flag(a)
    a.add_argument("--quiet", action="store_true", help="no progress display")

    cli_compare.add_parser(sub, _json_flag)

    cli_count.add_parser(sub, _json_flag, _force_flag, _positive_int, _int_list)

    cli_lmu.add_parser(sub, _json_flag, _force_flag, _positive_int, _positive_number)
    plot.add_parser(sub)
    model_command.add_parser(sub, _Parser, _positive_int, _positive_eps)
    cli_forward.add_parser(sub, _Parser, _positive_int, _positive_number)
    cli_help.apply(sub)
    return p


def _number(text: str | None):
    """A command-line number read exactly: integers and fractions "p/q" exactly, decimals
    as the float they name; its length and exponent bounded before any conversion."""
    if text is None:
        return None
    check_number_text(text.strip(), "number", MAX_ARG_CHARS)
    t = text.strip()
    if "/" in t or t.lstrip("+-").isdigit():
        q = parse_rational(t, "number")
        return q.numerator if q.denominator == 1 else q
    return float(t)


# -- kernel ---------------------------------------------------------------------

def _check_options(args) -> None:
    """Exit 2 for options that the chosen model would ignore."""
    conflicts = [(args.mode == "exact" and args.hippo,
                  "--mode exact --hippo: the HiPPO model is certified as balls; exact mode needs exact "
                  "inputs: use --params with rational entries, or ball mode"),
                 (args.theta is not None and args.hippo != "legt", "--theta applies to --hippo legt only"),
                 (args.N is not None and args.params, "-N conflicts with --params (the file sets the state size)"),
                 (args.conj_pairs and not args.params, "--conj-pairs applies to --params only"),
                 (args.rank is not None and (args.hippo or args.params),
                  f"--rank conflicts with {'--hippo' if args.hippo else '--params'} (the model sets the rank)"),
                 (args.seed is not None and (args.hippo or args.params),
                  f"--seed conflicts with {'--hippo' if args.hippo else '--params'} (only the built-in model is random)"),
                 (args.arithmetic == "float64" and (args.mode != "ball" or args.cauchy not in ("auto", "direct")),
                  "--arithmetic float64 is a ball-mode route with direct Cauchy sums (--mode ball, --cauchy auto|direct)")]
    for bad, message in conflicts:
        if bad:
            raise UsageError(message)


def _estimate(args, N: int, L: int, eps, hippo: bool) -> None:
    """Refuse a run estimated too large (unless --force), else show the estimate when it is
    above a few seconds (the inputs are checked by then: options, files, eps, L)."""
    est = limits.kernel_estimate(N, check_length(L), Fraction(eps), args.mode, hippo=hippo,
                                 exact_route=getattr(args, "exact_route", "auto") or "auto")
    limits.check(est, args.force)
    if not args.quiet and est.worth_showing():
        print(f"s4cert: estimate: {est.text()}", file=sys.stderr)


def _model_and_defaults(args, eps) -> tuple[Any, Any, Any, Any]:
    """(model, step, L, c_tilde) from the arguments."""
    if args.params:
        p = load_params(args.params, conj_pairs=args.conj_pairs)
        _estimate(args, p.model.N, args.L or p.L or 64, eps, False)
        return p.model, p.step, p.L, p.c_tilde
    N = args.N or 8
    _estimate(args, N, args.L or 64, eps, bool(args.hippo))
    if args.hippo:
        # the model's balls (radii about 2^-prec) far narrower than eps, so they leave its budget to the filter
        prec = max(128, 2 * (64 + limits.eps_bits(Fraction(eps))))
        theta = _number(args.theta) if args.theta is not None else (1 if args.hippo == "legt" else None)
        return hippo_dplr(args.hippo, N, theta=theta, prec=prec), None, None, None
    return example_model(N, r=args.rank or 1, seed=args.seed or 0), None, None, None


def _up(q: Fraction, digits: int = 3) -> str:
    """q >= 0 in scientific notation, ``digits`` digits after the point, rounded up (an
    upper bound as printed, not merely the nearest)."""
    if q == 0:
        return f"{0:.{digits}e}"
    with localcontext() as c:
        c.prec, c.rounding = digits + 1, ROUND_CEILING
        mant, exp = f"{Decimal(q.numerator) / Decimal(q.denominator):.{digits}e}".split("e")
    return f"{mant}e{int(exp):+03d}"


def _print_kernel(args, ck, model, step, L, eps, disks: KernelDisks, elapsed: float) -> None:
    """The human summary, every line within 100 columns and every figure labelled: status,
    the certified radius beside eps, the arithmetic, the filter constants, the counts and
    the first values (from the disks' arrays: no number per entry is converted)."""
    cert = ck.certificate
    prec = cert.get("precision_bits")
    asked = f"{short_text(parse_number(args.eps, '--eps', MAX_ARG_CHARS))} x max|K|" if args.relative \
        else short_text(eps)
    lines = [f"status {ck.status}  mode {args.mode}  N={model.N} r={model.r} L={L} step={step} eps={asked}"]
    if args.relative:
        lines.append(f"eps {asked}: {short_text(eps)} absolute (a certified lower bound of max|K| times "
                     f"{args.eps.strip()})")
    lines.append(f"certified radius: max radius {_up(disks.max_radius())} <= eps {short_text(eps)} "
                 "(each K_j within rad_j of mid_j)")
    route = ", ".join(t for t in (cert.get("arithmetic"), f"precision {prec} bits" if prec else None) if t)
    lines.append(f"arithmetic: {route or args.mode}; time {elapsed:.3f} s")
    if args.npz:
        r64 = float(ck.rad.max())
        lines.append(f"the .npz float64 midpoints: max radius {r64:.3e}"
                     + (" (above eps: rounding the midpoints to float64; the kernel file keeps them exactly)"
                        if Fraction(r64) > Fraction(eps) else ""))
    lines.append(f"filter constants (see docs): b {cert['b']:.4g}, w {cert['w']:.4g}, s {cert['s']:.4g}, "
                 f"d {cert['d']:.4g}, kappa {cert['kappa']:.4g}, partition {cert['partition']}")
    if args.mode == "a-priori":
        lines.append(f"circuit: T0={cert['T0']} log2 K0<={cert['log2_K0']:.2f} log2 u={cert['log2_u']}")
    c = ck.counts
    if c.get("measured"):
        lines.append(f"counts: {c['ops']} ops (add {c['add']}, mul {c['mul']}, div {c['div']}, zero tests "
                     f"{c['zero_test']}, conj {c['conj']}), word reads {c['word_reads']}, writes "
                     f"{c['word_writes']}, peak words {c['peak_words']}")
    else:
        lines.append(f"counts: not measured ({cli_files.with_flags(str(c.get('reason')))})")
    for j in range(min(SHOWN_VALUES, L)):
        z, r = disks.entry(j)
        lines.append(f"K[{j}] = {z.real:.15e} {'-' if z.imag < 0 else '+'} {abs(z.imag):.15e}i  (radius {_up(r, 2)})")
    if not (args.out or args.npz):
        lines.append(f"(the first {min(SHOWN_VALUES, L)} of {L} values; --npz FILE.npz or --out FILE.json|FILE.npz "
                     "writes them all)")
    print("\n".join(cli_options.fit(line) for line in lines))


def _relative_eps(args, model, step, L: int, c_tilde, rel: Fraction, progress) -> Fraction:
    """``--eps E --relative``: E times a certified lower bound of max|K|, from a first run
    at a coarse eps (2^-20 absolute, float64 disks where they reach it)."""
    progress("max|K| for --relative")
    rough = certify_kernel(model, step, L, Fraction(1, 1 << 20), c_tilde=c_tilde, max_prec=args.max_prec,
                           counts=False, progress=progress)
    return cli_options.relative_to(rel, cli_options.max_abs_lower(rough.mid, rough.rad), "max|K|")


def cmd_kernel(args) -> int:
    _check_options(args)
    if args.relative and args.certificate_only:
        raise UsageError("--relative does not apply to --certificate-only (its eps is absolute)")
    if args.certificate_only:
        return cli_certificate.cmd_certificate(args, _number, _model_and_defaults, _print_json)
    check_targets({"--out": args.out, "--npz": args.npz}, inputs=(args.params,))
    eps = parse_number(args.eps, "--eps", MAX_ARG_CHARS)
    model, step, L, c_tilde = _model_and_defaults(args, eps)
    step = _number(args.step) if args.step is not None else (step if step is not None else 0.01)
    L = args.L or L or 64
    counts = "auto" if args.counts is None else args.counts
    progress = Progress(enabled=not (args.quiet or args.json))
    t0 = time.perf_counter()
    try:
        if args.relative:
            eps = _relative_eps(args, model, step, L, c_tilde, eps, progress)
        ck = certify_kernel(model, step, L, eps, mode=args.mode, c_tilde=c_tilde, max_prec=args.max_prec,
                            force=args.force, counts=counts, cauchy=args.cauchy,
                            arithmetic=args.arithmetic, progress=progress, exact_route=args.exact_route)
    except CertificationError as e:
        progress.done()
        print(f"s4cert: not certified: {cli_files.with_flags(str(e), args.max_prec)}", file=sys.stderr)
        return 1
    finally:
        progress.done()
    elapsed = time.perf_counter() - t0
    disks = disks_of(ck)
    doc = None
    if args.out:
        doc = save_kernel(args.out, ck, model, step, c_tilde=c_tilde, npz=args.npz, disks=disks)
    elif args.npz:
        save_npz(args.npz, ck)
    if args.json:  # the JSON document, built only when asked for
        if doc is None or binary_name(args.out):
            doc = kernel_document(ck, model, step, c_tilde, disks=disks)
        sys.stdout.write(dumps_document(doc))
        return 0
    _print_kernel(args, ck, model, step, L, eps, disks, elapsed)
    if args.out or args.npz:
        print(cli_options.fit("wrote " + ", ".join(p for p in (args.out, args.npz) if p)))
    return 0


# -- audit ------------------------------------------------------------------------

def _print_json(value: Any) -> None:
    print(json.dumps(json_value(value, "result"), indent=1, allow_nan=False))


def cmd_audit(args) -> int:
    progress = Progress(enabled=not (args.quiet or args.json))
    progress("auditing")
    try:
        report = audit_kernel_file(args.file)
    finally:
        progress.done()
    if args.json:
        _print_json({"file": args.file, "ok": report.ok,
                     "checks": [{"name": n, "passed": bool(ok), "detail": d} for n, ok, d in report.checks]})
    else:
        for name, passed, detail in report.checks:
            print(f"{'ok  ' if passed else 'FAIL'} {name}: {detail}")
    if report.ok:
        if not args.json:
            print("audit passed")
        return 0
    failed = [name for name, passed, _ in report.checks if not passed]
    print(f"s4cert: audit failed: {', '.join(failed)}", file=sys.stderr)
    return 1


# -- lmu-audit ------------------------------------------------------------------------

def cmd_lmu_audit(args) -> int:
    return cli_lmu.cmd_lmu_audit(args, _number, _print_json)


# -- model ---------------------------------------------------------------------------

def cmd_model(args) -> int:
    return model_command.cmd_model(args, _number)


COMMANDS = {"kernel": cmd_kernel, "audit": cmd_audit, "compare": cli_compare.cmd_compare,
            "count": lambda args: cli_count.cmd_count(args, _print_json),
            "lmu-audit": cmd_lmu_audit, "plot": plot.cmd_plot, "model": cmd_model,
            "forward": lambda args: cli_forward.cmd_forward(args, _number)}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        args = parser.parse_args(["kernel"])
    try:
        cli_files.check_output_suffixes(args.command, args)
        cli_files.refuse_s4cert_file(args.command, args)
        code = COMMANDS[args.command](args)
        sys.stdout.flush()  # a closed pipe is found here, not at exit
        return code
    except (UsageError, ValueError, FileNotFoundError, IsADirectoryError, PermissionError,
            zipfile.BadZipFile, zlib.error, plot.MissingExtra) as e:
        print(f"s4cert: error: {str(e).splitlines()[0] if str(e) else type(e).__name__}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader went away (e.g. "| head"): end quietly, as on SIGPIPE
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return cli_help.EXIT_BROKEN_PIPE
    except MemoryError:
        print("s4cert: not certified: out of memory (try a smaller L or N)", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("s4cert: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
