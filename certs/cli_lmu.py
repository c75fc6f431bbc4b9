"""``s4cert lmu-audit``: the certified audit of an LMU checkpoint's arrays
(``--checkpoint FILE``, :mod:`.lmu_checkpoint`), or the certified errors of float LMU impulse
responses rebuilt here in numpy (``--memory-size D --theta T --length L``,
:func:`~..algorithms.models.lmu_audit.lmu_audit`: re-implementations of the reference's
construction and of ours, not a model's arrays)."""
from __future__ import annotations

import math
import sys
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext

from ..algorithms.models.lmu_audit import lmu_audit
from . import limits
from .cli_options import add_max_prec
from .errors import CertificationError
from .io.atomic import check_targets
from .lmu_checkpoint import (LEARNED_CRITERION, Interval, LMUCheckpointReport, audit_lmu_checkpoint,
                             read_lmu_checkpoint)


def add_parser(sub, json_flag, force_flag, positive_int, positive_number) -> None:
    """The ``lmu-audit`` subcommand's options."""
    m = sub.add_parser("lmu-audit", help="certified errors of an LMU checkpoint's arrays, or of float LMU impulse responses",
                       description="With --checkpoint: read the file (.pt, .ckpt, .safetensors, .npz; no code in "
                                   "it is ever run), find every LMU module by its tensor names and certify, for each "
                                   "array the LMU reference constructs (A, B; an LMUFFT's H and fft_H), an interval for "
                                   "the max error of the stored array against the exact ZOH mathematics, for max|exact| "
                                   "and for the relative error, each at most 1/1000 of its value wide. "
                                   "Learned or constructed: " + LEARNED_CRITERION + "; a learned A or B "
                                   "gets its certified distance from the ZOH matrix, and the impulse response "
                                   "certified is then that of the stored matrices read exactly. "
                                   "Without --checkpoint (--memory-size, --theta, --length): the errors of impulse "
                                   "responses that this package rebuilds in numpy the reference's way and its own way "
                                   "(re-implementations of the two constructions, not the arrays of a model).")
    m.add_argument("--checkpoint", metavar="FILE", default=None, help="audit the LMU modules of this checkpoint")
    m.add_argument("--memory-size", type=positive_int, default=None,
                   help="without --checkpoint: LMU memory size D (state size)")
    m.add_argument("--theta", type=positive_number, default=None,
                   help="LMU window length theta (--checkpoint: default the file's hyper_parameters)")
    m.add_argument("--length", type=positive_int, default=None,
                   help="length of the impulse response (--checkpoint: default the module's seq_len, else 1000)")
    m.add_argument("--kernels", metavar="K.npz", default=None,
                   help="--checkpoint: write each module's certified impulse response as <prefix>mid, "
                        "<prefix>rad float64 arrays [memory_size, length]")
    m.add_argument("--out", metavar="REPORT.json", default=None,
                   help="--checkpoint: write the report (s4cert.lmu-audit/1)")
    add_max_prec(m, "--checkpoint: ")
    json_flag(m)
    force_flag(m)


def cmd_lmu_audit(args, number, print_json) -> int:
    """Run ``s4cert lmu-audit``; ``number`` reads a command-line number exactly, ``print_json``
    prints a result as JSON."""
    if args.checkpoint is not None:
        return _checkpoint(args, number, print_json)
    extra = [o for o, v in (("--kernels", args.kernels), ("--out", args.out)) if v is not None]
    if extra:
        raise ValueError(f"lmu-audit: {', '.join(extra)} goes with --checkpoint")
    missing = [o for o, v in (("--memory-size", args.memory_size), ("--theta", args.theta),
                              ("--length", args.length)) if v is None]
    if missing:
        raise ValueError(f"lmu-audit: the following arguments are required without --checkpoint: "
                         f"{', '.join(missing)}")
    limits.check(limits.lmu_estimate(args.memory_size, args.length), args.force)
    r = lmu_audit(args.memory_size, number(args.theta), args.length)
    if args.json:
        print_json(r)
        return 0
    print(f"LMU impulse response: memory size {r['memory_size']}, theta {args.theta}, length {r['length']}, "
          f"certified at {r['precision']} bits (max radius {r['certified_max_radius']:.2e}), max |H| {r['max_abs_H']:.4g}")
    print("errors of impulse responses rebuilt here in numpy (re-implementations of the reference's "
          "construction and of ours, not a model's arrays: --checkpoint FILE audits those)")
    print(f"{'construction':<20} {'certified lower':>16} {'certified upper':>16}")
    for name, e in r["errors"].items():
        print(f"{name:<20} {e['lower']:>16.3e} {e['upper']:>16.3e}")
    return 0


def _checkpoint(args, number, print_json) -> int:
    if args.memory_size is not None:
        raise ValueError("lmu-audit: --memory-size conflicts with --checkpoint (the file's shapes give it)")
    check_targets({"--out": args.out, "--kernels": args.kernels}, inputs=(args.checkpoint,))
    plan = read_lmu_checkpoint(args.checkpoint, number(args.theta), args.length)
    sizes = [(m.memory_size, (m.seq_len or 0) + L) for m, L in zip(plan.modules, plan.lengths)]
    limits.check(limits.lmu_estimate(max(n for n, _ in sizes), sum(L for _, L in sizes)), args.force)
    try:
        report = audit_lmu_checkpoint(plan, max_prec=args.max_prec)
    except CertificationError as e:
        print(f"s4cert: not certified: {e}", file=sys.stderr)
        return 1
    report.save(args.out, args.kernels)
    if args.json:
        print_json(report.document())
        return 0
    for line in report_lines(report):
        print(line)
    if args.out or args.kernels:
        print("wrote " + ", ".join(p for p in (args.out, args.kernels) if p))
    return 0


def _outward(x: float, rounding: str, digits: int = 4) -> str:
    """x in scientific notation with ``digits`` digits after the point, rounded toward
    ``rounding`` (ROUND_FLOOR for a lower end, ROUND_CEILING for an upper end)."""
    if not math.isfinite(x):
        return str(x)
    with localcontext() as c:
        c.prec, c.rounding = digits + 1, rounding
        return f"{+Decimal(x):.{digits}e}"


def _pair(iv: Interval) -> str:
    return f"[{_outward(iv.lo, ROUND_FLOOR)}, {_outward(iv.hi, ROUND_CEILING)}]"


def report_lines(report: LMUCheckpointReport) -> list[str]:
    """The human summary of a report (intervals printed outward)."""
    lines = []
    for m in report.modules:
        mod = m.module
        lines.append(f"{mod.label}: {mod.cls}, memory size {mod.memory_size}, theta {m.theta}"
                     + (f", seq_len {mod.seq_len}" if mod.seq_len else "") + f" (certified at {m.precision} bits)")
        for name, b in m.buffers.items():
            if b.learned:
                lines.append(f"  {b.key:<12} learned: not the float32 rounding of the ZOH matrix at theta {m.theta}; "
                             f"max |stored - ZOH| in {_pair(b.max_error)}")
            else:
                lines.append(f"  {b.key:<12} max error {_pair(b.max_error)}  max|exact| {_pair(b.max_abs)}  "
                             f"relative {_pair(b.relative)}")
        of = "the stored A, B read exactly" if m.source == "stored" else "the exact ZOH system"
        lines.append(f"  impulse response of {of}, length {m.mid.shape[1]}: certified, "
                     f"max radius {_outward(m.max_radius(), ROUND_CEILING)} (float64 mid/rad)")
    return lines
