"""``s4cert plot FILE.json|FILE.npz [--compare OTHER] -o FIG.png``: a picture of a certified kernel.

Panels: the kernel's real and imaginary parts with their certified bands (mid_j -+ rad_j);
the radius of every tap against eps (log scale); with ``--compare``, the certified error
of the other kernel at every tap, the interval [|o_j - mid_j| - rad_j, |o_j - mid_j| +
rad_j] bounded from the file's exact midpoints and radii (log scale): on float64 arrays with
every rounding bounded for a binary file's float64 and parts layers, in ball arithmetic
otherwise.
matplotlib is an optional extra (``pip install "s4cert[plot]"``).
"""
from __future__ import annotations

import io
from typing import Any

import numpy as np
from flint import acb, ctx

from ..arith.ball import float_lower, float_upper
from .compare import compare_with, read_other
from .io.atomic import atomic_write, check_targets
from .io.disk_bounds import disk_bounds
from .io.kernel_file import KernelFile, load_kernel
from .io.numbers import dyadic_bits, exact_arb

EXTRA = 'pip install "s4cert[plot]"'


class MissingExtra(ValueError):
    """An optional dependency is not installed (exit 2, naming the extra)."""


def add_parser(sub) -> None:
    """The ``plot`` subcommand's options."""
    p = sub.add_parser("plot", help="draw a kernel file with its certified band (needs matplotlib)",
                       description="Draw the kernel with its certified band and the radius of every tap; "
                                   "with --compare, the certified error of another kernel at every tap. "
                                   f"Needs matplotlib: {EXTRA}.")
    p.add_argument("file", metavar="FILE.json|FILE.npz", help="a kernel file written by s4cert kernel --out (either format)")
    p.add_argument("--compare", metavar="OTHER.npy|.npz", default=None,
                   help="another kernel of length L to draw the certified error of")
    p.add_argument("--key", default=None, help="array name inside the --compare .npz")
    p.add_argument("-o", "--output", required=True, metavar="FIG.png",
                   help="the picture to write (.png, .pdf or .svg, by its extension)")


def tap_errors(kf: KernelFile, other: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Certified (lower, upper) bounds of |o_j - K_j| for every tap, rounded outward: on
    arrays for a binary file's float64 and parts layers (``io.disk_bounds``), in ball
    arithmetic from the exact disks for the rest."""
    lo, hi = np.empty(kf.L), np.empty(kf.L)
    d = kf.disks
    exact = list(range(kf.L))
    if d.mid is not None:
        o = np.asarray(other).astype(np.complex128)
        plain = np.flatnonzero(d.plain())
        exact = d.text_index.tolist()
        for idx, parts, rad in ((plain, d.mid[plain].reshape(-1, 1), d.rad[plain]),
                                (d.parts_index, d.parts, d.parts_rad)):
            if idx.size:
                l, h, _, ok = disk_bounds(o[idx], parts, rad)
                lo[idx], hi[idx] = l, h
                exact += idx[~ok].tolist()
    _exact_tap_errors(kf, other, sorted(exact), lo, hi)
    return lo, hi


def _exact_tap_errors(kf: KernelFile, other: np.ndarray, taps: list[int], lo: np.ndarray, hi: np.ndarray) -> None:
    """lo[j], hi[j] for the taps j, in ball arithmetic from the exact disks."""
    if not taps:
        return
    entries = [(j, *kf.disks.exact_entry(j)) for j in taps]
    prec = max([64] + [dyadic_bits(x) for _, pair, _ in entries for x in pair]) + 128
    with ctx.workprec(prec):
        for j, (a, b), r in entries:
            x = complex(other[j])
            dist = abs(acb(x.real, x.imag) - acb(exact_arb(a, prec=prec), exact_arb(b, prec=prec)))
            rb = exact_arb(r, prec=prec)
            d_lo = (dist - rb).lower()
            lo[j] = float_lower(d_lo) if d_lo > 0 else 0.0
            hi[j] = float_upper((dist + rb).upper())


def _matplotlib() -> Any:
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingExtra(f"s4cert plot needs matplotlib, an optional extra: {EXTRA}") from None
    return Figure


def figure(kf: KernelFile, other: np.ndarray | None, fmt: str) -> bytes:
    """The figure of a kernel file (and the other kernel's errors) in format ``fmt``."""
    Figure = _matplotlib()
    mid, rad = kf.to_numpy()
    j = np.arange(kf.L)
    rows = 3 if other is not None else 2
    fig = Figure(figsize=(8, 2.6 * rows), layout="constrained")
    axes = fig.subplots(rows, 1, sharex=True)
    ax = axes[0]
    for part, name, color in ((mid.real, "Re K_j", "C0"), (mid.imag, "Im K_j", "C1")):
        if name == "Im K_j" and not np.any(part):
            continue
        ax.plot(j, part, color=color, lw=1, label=name)
        ax.fill_between(j, part - rad, part + rad, color=color, alpha=0.3, lw=0)
    ax.set_ylabel("kernel")
    ax.legend(loc="best")
    ax.set_title(f"{kf.path}: status {kf.status}, mode {kf.mode}, N = {kf.N}, L = {kf.L}")
    ax = axes[1]
    ax.semilogy(j, np.maximum(rad, np.finfo(float).tiny), ".", ms=2, label="rad_j (certified)")
    ax.axhline(float(kf.eps), color="k", ls="--", lw=1, label=f"eps = {float(kf.eps):.3g}")
    ax.set_ylabel("radius")
    ax.legend(loc="best")
    if other is not None:
        lo, hi = tap_errors(kf, other)
        ax = axes[2]
        # a lower bound of 0 (the interval reaches 0) is drawn down to the axis's floor
        floor = float(np.min(hi[hi > 0])) / 10 if np.any(hi > 0) else np.finfo(float).tiny
        ax.fill_between(j, np.maximum(lo, floor), np.maximum(hi, floor), color="C3", alpha=0.4, lw=0,
                        label="|other_j - K_j| (certified interval)")
        ax.semilogy(j, np.maximum(hi, floor), color="C3", lw=0.8)
        ax.set_ylim(bottom=floor)
        ax.set_ylabel("error")
        ax.legend(loc="best")
    axes[-1].set_xlabel("tap j")
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=120)
    return buf.getvalue()


def cmd_plot(args) -> int:
    """Check the output path, read and check the inputs, then the extra; compare and draw."""
    check_targets({"-o": args.output}, inputs=(args.file, args.compare))
    fmt = args.output.rsplit(".", 1)[-1].lower() if "." in args.output else ""
    if fmt not in ("png", "pdf", "svg"):
        raise ValueError(f"-o {args.output}: the picture's name ends in .png, .pdf or .svg")
    kf = load_kernel(args.file)
    _matplotlib()
    other = None
    if args.compare is not None:
        report = compare_with(args.file, args.compare, key=args.key)
        other = np.asarray(read_other(args.compare, args.key))
        print(report.summary())
    atomic_write([(args.output, figure(kf, other, fmt))])
    print(f"wrote {args.output}")
    return 0
