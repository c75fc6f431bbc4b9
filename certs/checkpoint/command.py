"""``s4cert model FILE ...``: certify every kernel of a checkpoint (see README)."""
from __future__ import annotations

import json
import sys

from .. import cli_options
from ..progress import Progress
from ..cli_files import with_flags
from .layouts import DISCRETIZATIONS, TRANSFORMS
from .model import certify_model, save_report
from .tighten import tightened_line


#: s4cert model --arithmetic: each choice and what it runs
MODEL_ARITHMETIC = {"auto": "float64 disks first (then double-double and triple-double disks for DPLR "
                            "kernels), balls where they miss eps",
                    "ball": "balls only"}


def add_settings(p) -> None:
    """The settings a checkpoint may not record (``s4cert model`` and ``s4cert forward``):
    ``--disc`` and the transforms of the stored dt, real and imag parameters."""
    p.add_argument("--disc", choices=DISCRETIZATIONS, default=None,
                   help="discretization of diagonal kernels (default: recorded, else zoh)")
    for name in ("dt", "real", "imag"):
        p.add_argument(f"--{name}-transform", choices=TRANSFORMS, default=None,
                       help=f"transform of the stored {name} parameter (default: recorded, else the "
                            "reference class default)")


def add_parser(sub, parser_class, positive_int, positive_number) -> None:
    m = sub.add_parser("model", help="certified kernels of every kernel module of a checkpoint",
                       description="Reads a checkpoint (.pt, .ckpt, .safetensors, .npz; no code in "
                                   "the file is ever run), finds its S4-family kernel modules and "
                                   "certifies every channel of every head.  Settings the file does "
                                   "not record are printed on stderr and stored in the report.")
    m.add_argument("file", help="the checkpoint file")
    m.add_argument("-L", type=positive_int, default=None,
                   help="kernel length (default: the module's l_kernel or a recorded l_max)")
    cli_options.add_eps(m, None, "1e-13 * max|K| per kernel", "max|K| per kernel")
    add_settings(m)
    m.add_argument("--out", default=None, help="write the report (JSON, s4cert.model-report/1)")
    m.add_argument("--kernels", default=None, help="write <prefix>.mid and <prefix>.rad arrays (npz)")
    m.add_argument("--compare", default=None, help="another implementation's kernels (.npy or .npz)")
    m.add_argument("--key", default=None, help="the array of --compare's npz to use")
    m.add_argument("--no-tighten", action="store_true",
                   help="--compare: keep the kernels as certified, even when their radius is within 100x "
                        "of the other kernels' error (by default those are certified again, tighter)")
    m.add_argument("--workers", type=positive_int, default=1,
                   help="worker processes: a Dask LocalCluster of N single-threaded workers "
                        "(a local process pool when Dask is not installed)")
    m.add_argument("--scheduler", default=None,
                   help="address of a running dask.distributed scheduler (tcp://host:8786); "
                        "needs the extra: pip install \"s4cert[dask]\"")
    m.add_argument("--out-dir", default=None,
                   help="keep every finished group of kernels here (atomic files); a rerun with "
                        "the same directory skips what is already certified and verified")
    cli_options.add_arithmetic(m, MODEL_ARITHMETIC)
    cli_options.add_max_prec(m)
    cli_options.add_json(m)
    m.add_argument("--quiet", action="store_true", help="no progress display")


def cmd_model(args, number) -> int:
    if args.key is not None and args.compare is None:
        raise ValueError("--key goes with --compare")
    if args.no_tighten and args.compare is None:
        raise ValueError("--no-tighten goes with --compare")
    paths = [p for p in (args.out, args.kernels, args.out_dir) if p is not None]
    if any(p == "" for p in paths):
        raise ValueError("an output path is empty")
    if len(set(paths)) != len(paths):
        raise ValueError("--out and --kernels name the same file")
    if args.file in paths:
        raise ValueError(f"{args.file}: an output path is the input checkpoint")
    if args.scheduler is not None and args.workers != 1:
        raise ValueError("--scheduler and --workers exclude each other (the cluster has its workers)")
    progress = Progress(enabled=not (args.quiet or args.json))

    def show(done: int, total: int, seconds: float) -> None:
        eta = f", about {seconds / done * (total - done):.0f}s left" if 0 < done < total and seconds > 0 else ""
        width = 30
        bar = "#" * (width * done // max(total, 1))
        progress(f"[{bar:<{width}}] {done}/{total} kernels{eta}")
    eps = cli_options.exact_eps(args)
    if eps is not None and not args.relative:
        eps = cli_options.float_below(eps, "--eps", "the model report")
    report = certify_model(args.file, L=args.L, eps=eps, relative=args.relative, disc=args.disc, dt_transform=args.dt_transform,
                           real_transform=args.real_transform, imag_transform=args.imag_transform,
                           compare=args.compare, key=args.key, workers=args.workers,
                           scheduler=args.scheduler, out_dir=args.out_dir, arithmetic=args.arithmetic,
                           tighten=not args.no_tighten, progress=show, max_prec=args.max_prec)
    progress.done()
    if args.out_dir is not None and report.tasks.get("reused"):
        print(f"s4cert: reused {report.tasks['reused']} finished group(s) from {args.out_dir}, "
              f"computed {report.tasks['computed']}", file=sys.stderr)
    for k in report.kernels:
        for name, value in k.assumed.items():
            print(f"s4cert: {k.prefix or '(top level)'}: assumed {name} = {value} (not recorded in the file)",
                  file=sys.stderr)
    for k in report.kernels:
        if "tightened" in k.info.get("compare", {}):
            print(f"s4cert: {tightened_line(k.prefix or '(top level)', k.info['compare']['tightened'])}",
                  file=sys.stderr)
    save_report(report, args.out, args.kernels)
    if args.json:
        sys.stdout.write(json.dumps(report.document, indent=1, allow_nan=False) + "\n")
        return 0 if report.ok else 1
    for k in report.kernels:
        line = (f"{k.prefix or '(top level)'}: {k.layout}, {k.disc}, channels {k.channels}, H {k.H}, "
                f"N {k.N}, L {k.L}: ")
        if k.status == "ok":
            line += f"status ok, certified max radius {k.max_rad:.3e} <= eps {k.eps:.3e}"
            if "compare" in k.info:
                (lo, hi), (rlo, rhi) = k.info["compare"]["max_error"], k.info["compare"]["relative"]
                line += (f"\n  max |other - K| in [{lo:.6e}, {hi:.6e}]"
                         f"\n  relative to max|K| in [{rlo:.6e}, {rhi:.6e}]")
        else:
            line += f"not certified: {with_flags(str(k.reason), args.max_prec)}"
        print("\n".join(cli_options.fit(part) for part in line.split("\n")))
    return 0 if report.ok else 1
