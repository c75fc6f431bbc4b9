"""``s4cert forward CHECKPOINT --input U.npz --key KEY ...``: certified outputs of a
checkpoint's forward pass or of its recurrent steps (:mod:`.forward`)."""
from __future__ import annotations

import argparse
import json
import sys
from decimal import ROUND_CEILING, ROUND_FLOOR

from . import cli_options
from .checkpoint.command import add_settings
from .cli_lmu import _outward
from .errors import CertificationError
from .forward import CONVOLUTIONS, PARTS, certify_forward
from .io.numbers import json_value
from .forward_layers import ACTIVATIONS
from .io.atomic import check_targets
from .progress import Progress


class _Key(argparse.Action):
    """``--key`` names the input's array, or, after ``--compare``, the other file's."""

    def __call__(self, parser, namespace, values, option_string=None):
        if namespace.compare is not None:
            if namespace.compare_key is not None:
                parser.error("--key given twice after --compare")
            namespace.compare_key = values
        else:
            if namespace.key is not None:
                parser.error("--key given twice for --input")
            namespace.key = values


#: --l-max not given (the recorded l_max, else none)
_AUTO = "recorded"


def _l_max(text: str):
    if text == _AUTO:
        return "auto"
    if text.lower() == "none":
        return None
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer or none, got {text[:40]!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1 or none, got {v}")
    return v


def add_parser(sub, parser_class, positive_int, positive_number) -> None:
    """The ``forward`` subcommand's options."""
    f = sub.add_parser("forward", help="certified outputs of a checkpoint's forward pass on an input",
                       description="Reads a checkpoint (no code in it is ever run) and an input array, and "
                                   "certifies what the module computes on it: every kernel module's SSM part "
                                   "(K * v + D v) and the model's output, as float64 disks |y - mid| <= rad. "
                                   "--steps: the recurrent model's outputs from the zero state instead.")
    f.add_argument("file", help="the checkpoint file")
    f.add_argument("--input", required=True, metavar="U.npz", help="the input (.npz with --key, or .npy), "
                   "float32 or float64, in the module's layout ((B, H, T) when transposed, else (B, T, H))")
    f.add_argument("--key", action=_Key, default=None,
                   help="the input's array in its .npz; after --compare: the other file's array")
    f.add_argument("--time-last", action="store_true", help="the input is (B, H, T) whatever the module's layout")
    f.add_argument("--steps", action="store_true",
                   help="the recurrent outputs (step() from the zero state), time last")
    f.add_argument("--part", choices=PARTS, default="both", help="which outputs: the model's, the SSM parts, "
                   "or both (default)")
    cli_options.add_eps(f, None, "1e-13 * max|y| per output array", "max|y| per output array")
    f.add_argument("--convolution", choices=CONVOLUTIONS, default="auto",
                   help="the causal convolutions: fft (a certified FFT convolution, exact integer parts "
                        "and small rests), direct (compensated direct sums), or auto (the cheaper, and the "
                        "direct sums where the FFT's radius misses eps) (default auto)")
    f.add_argument("--outputs", metavar="Y.npz", default=None,
                   help="write output.mid, output.rad and <prefix>.ssm.mid, <prefix>.ssm.rad")
    f.add_argument("--out", metavar="REPORT.json", default=None,
                   help="write the report (s4cert.forward-report/1)")
    f.add_argument("--compare", metavar="OTHER.npz", default=None,
                   help="another implementation's outputs: certified max|other - y|, max|y| and their ratio")
    f.add_argument("--against", choices=("output", "ssm"), default="output",
                   help="--compare: the model's output (default) or the SSM part")
    f.add_argument("--no-tighten", action="store_true",
                   help="--compare: keep the radius as certified, even when it is above 1/100 of the error")
    f.add_argument("--l-max", type=_l_max, default=_AUTO,
                   help="the FFTConv's l_max (default: recorded in the checkpoint, else none)")
    f.add_argument("--activation", choices=ACTIVATIONS, default=None,
                   help="the FFTConv's activation (default: recorded, else gelu)")
    f.add_argument("--transposed", choices=("yes", "no"), default=None,
                   help="the module's layout (default: recorded, else the class default)")
    add_settings(f)
    cli_options.add_json(f)
    f.add_argument("--quiet", action="store_true", help="no progress display")
    f.set_defaults(compare_key=None)


def cmd_forward(args, number=None) -> int:
    """Run ``s4cert forward`` (``--eps`` read exactly, stored as the float64 below it)."""
    if args.compare is None and args.no_tighten:
        raise ValueError("--no-tighten goes with --compare")
    check_targets({"--outputs": args.outputs, "--out": args.out}, inputs=(args.file, args.input))
    progress = Progress(enabled=not (args.quiet or args.json))
    transposed = None if args.transposed is None else args.transposed == "yes"
    eps = cli_options.exact_eps(args)
    if eps is not None and not args.relative:
        eps = cli_options.float_below(eps, "--eps", "the forward report")

    def run(eps_abs: float | None):
        return certify_forward(args.file, args.input, key=args.key, steps=args.steps, part=args.part,
                               eps=eps_abs, l_max=args.l_max, time_last=args.time_last, activation=args.activation,
                               transposed=transposed, disc=args.disc, dt_transform=args.dt_transform,
                               real_transform=args.real_transform, imag_transform=args.imag_transform,
                               compare=args.compare, compare_key=args.compare_key, against=args.against,
                               tighten=not args.no_tighten, progress=progress, convolution=args.convolution)
    try:
        report = run(None if args.relative else eps)
        if args.relative:  # E times a certified lower bound of max|y|, the smallest over the arrays
            lower = min(cli_options.max_abs_lower(d.mid, d.rad) for d in report.outputs.values())
            report = run(cli_options.float_below(cli_options.relative_to(eps, lower, "max|y|"), "--eps",
                                                 "the forward report"))
    except CertificationError as e:
        progress.done()
        print(f"s4cert: not certified: {e}", file=sys.stderr)
        return 1
    progress.done()
    for name, value in report.plan.assumed.items():
        print(f"s4cert: assumed {name} = {value} (not recorded in the file)", file=sys.stderr)
    for k in report.kernels:
        for name, value in k.assumed.items():
            print(f"s4cert: {k.prefix}: assumed {name} = {value} (not recorded in the file)", file=sys.stderr)
    report.save(args.outputs, args.out)
    if args.json:
        sys.stdout.write(json.dumps(json_value(report.document(), "report"), indent=1, allow_nan=False) + "\n")
        return 0
    print(f"{report.plan.cls}, {report.mode} mode, kernel length {report.options['l_kernel']}")
    for name, d in report.outputs.items():
        print(f"{name}: shape {d.shape}, certified max radius {_outward(d.max_rad(), ROUND_CEILING, 3)} <= eps "
              f"{_outward(report.eps[name], ROUND_FLOOR, 3)}")
    if report.compare is not None:
        c = report.compare
        (lo, hi), (mlo, mhi), (rlo, rhi) = c["max_error"], c["max_abs"], c["relative"]
        pair = lambda a, b: f"[{_outward(a, ROUND_FLOOR, 6)}, {_outward(b, ROUND_CEILING, 6)}]"
        print(cli_options.fit(f"compare {c['array']}: max|other - y| in {pair(lo, hi)}, max|y| in "
                              f"{pair(mlo, mhi)}, relative in {pair(rlo, rhi)}"))
    written = [p for p in (args.outputs, args.out) if p]
    if written:
        print("wrote " + ", ".join(written))
    return 0
