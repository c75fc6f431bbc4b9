"""``s4cert compare FILE.json|FILE.npz OTHER.npy|.npz [--key K] [--no-tighten] [--json]``: certified
errors of another implementation's kernel against a kernel file, absolute and relative to
max|K| (``compare.compare_with``).  When the other kernel's error is within 100x of the
file's radius, the kernel is certified again on the next tighter route and a line on
stderr says so."""
from __future__ import annotations

import json
import sys

from .cli_options import add_max_prec, fit
from .compare import TIGHTEN_FACTOR, compare_with, tightened_text
from .io.numbers import json_value


def add_parser(sub, json_flag) -> None:
    """The ``compare`` subcommand's options (``json_flag`` adds ``--json``)."""
    c = sub.add_parser("compare", help="certified errors of another kernel against a kernel file",
                       description="Certified bounds of max_j |other_j - K_j|, of max_j |K_j| and of their "
                                   "ratio.  When the other kernel's error is within "
                                   f"{TIGHTEN_FACTOR}x of the file's largest radius, the kernel is "
                                   "certified again from the file's inputs on the next tighter route "
                                   "(float64, double-double, balls) with eps about the error / 1000; "
                                   "the file is not changed.")
    c.add_argument("file", metavar="FILE.json|FILE.npz", help="the certified kernel file (either format)")
    c.add_argument("other", metavar="OTHER.npy|.npz", help="the other kernel: one vector of length L")
    c.add_argument("--key", help="array name inside an .npz holding several arrays")
    c.add_argument("--no-tighten", action="store_true",
                   help="use the file's disks only, however wide they are against the error")
    add_max_prec(c)
    json_flag(c)


def cmd_compare(args) -> int:
    report = compare_with(args.file, args.other, key=args.key, tighten=not args.no_tighten,
                          max_prec=args.max_prec)
    if report.tightened is not None:
        print(f"s4cert: {tightened_text(report.tightened)}", file=sys.stderr)
    if args.json:
        print(json.dumps(json_value(dict(vars(report)), "result"), indent=1, allow_nan=False))
    else:
        print("\n".join(fit(line) for line in report.summary().splitlines()))
    return 0
