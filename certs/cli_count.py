"""``s4cert count``: the filter's operations and words, counted as it runs, against both
cost claims of the spec's theorem (``counts.count_rows``, ``count_fit``)."""
from __future__ import annotations

import argparse
import io
import math
import sys
import numpy as np

from . import limits, plot
from .count_fit import fit_counts
from .io.atomic import atomic_write, check_targets
from .progress import Progress

DEFAULT_N = [16, 64]
DEFAULT_L = [256, 1024]


def _eps_list(text: str) -> list[float]:
    try:
        vals = [float(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text[:40]!r}") from None
    if not vals or any(not (0 < v <= 0.5) for v in vals):
        raise argparse.ArgumentTypeError(f"expected numbers in (0, 1/2], got {text[:40]!r}")
    return vals


def add_parser(sub, json_flag, force_flag, positive_int, int_list) -> None:
    """The ``count`` subcommand's options."""
    n = sub.add_parser(
        "count", help="operation and peak-word counts of the filter against the cost theorem",
        description="Count the S4 filter (C~ supplied) as it runs over Counting(float64) on one Cauchy route, "
                    "for every N, L and eps: operations by kind, word reads and writes, peak live words; and "
                    "the theorem's normalizations norm_exact = ops/((N+L) log2^2(N+L)), norm_eps = "
                    "ops/((N+L) log2(N+L) log2(kappa/eps)) with kappa = 64 r w^2 (b+1)^2 s certified for "
                    "the model, norm_words = peak/(N+L); then a least-squares fit ops = (N+L)^alpha "
                    "(a + c log2(kappa/eps)) over the grid with its RMS relative residual. The arc route "
                    "(--cauchy fast) runs each sum to eps/kappa, so its truncation orders p, p0 (shown) grow "
                    "as eps falls; the exact routes (tree, direct) do not depend on eps.")
    src = n.add_mutually_exclusive_group()
    src.add_argument("--params", metavar="FILE", help="count the model of this parameter file")
    src.add_argument("--hippo", choices=["legs", "legt", "lagt"], help="count a certified HiPPO DPLR model")
    n.add_argument("-N", type=int_list, default=None, help="state sizes, comma-separated (default 16,64)")
    n.add_argument("-L", type=int_list, default=None,
                   help="lengths, comma-separated (default 256,1024; --params: the file's)")
    n.add_argument("--rank", type=positive_int, default=None, help="rank r of the built-in model (default 1)")
    n.add_argument("--eps", type=_eps_list, default=[1e-12],
                   help="accuracies in (0, 1/2], comma-separated (default 1e-12)")
    n.add_argument("--cauchy", choices=["tree", "fast", "direct"], default="tree",
                   help="Cauchy route counted: tree (exact product tree), direct, or fast (hierarchical arcs, "
                        "each sum to eps/kappa) (default tree)")
    n.add_argument("--plot", metavar="FIG.png", default=None,
                   help=f"draw the normalized counts against N+L and log2(kappa/eps) (needs matplotlib: {plot.EXTRA})")
    json_flag(n)
    force_flag(n)
    n.add_argument("--quiet", action="store_true", help="no progress display")


def _check(args) -> None:
    if args.params and args.N is not None:
        raise ValueError("-N conflicts with --params (the file sets the state size)")
    if args.rank is not None and (args.params or args.hippo):
        raise ValueError(f"--rank conflicts with {'--params' if args.params else '--hippo'} (the model sets the rank)")
    if args.plot is not None:
        if args.plot.rsplit(".", 1)[-1].lower() not in ("png", "pdf", "svg"):
            raise ValueError("--plot: the figure's name must end in .png, .pdf or .svg")
        check_targets({"--plot": args.plot}, inputs=(args.params,))
        plot._matplotlib()  # the extra's absence is a usage error before any work


def _models(args):
    """(model, step, L list, C~) per state size."""
    from ..algorithms.dft import next_power_of_two
    from ..algorithms.models.hippo_dplr import dplr as hippo_dplr
    from .counts import count_model

    if args.params:
        from .io.params import load_params
        p = load_params(args.params)
        Ls = args.L or [p.L or 256]
        ct = p.c_tilde if p.c_tilde is not None else _midpoint_c_tilde(p.model, p.step, next_power_of_two(max(Ls)))
        yield p.model, p.step, Ls, [complex(x) if not hasattr(x, "mid") else complex(x.mid()) for x in ct]
        return
    for N in args.N or DEFAULT_N:
        m, step, ct = count_model(N, args.rank or 1)
        if args.hippo:
            m = hippo_dplr(args.hippo, N, theta=1 if args.hippo == "legt" else None, prec=128)
            step = 0.01
        yield m, step, args.L or DEFAULT_L, ct


def _midpoint_c_tilde(model, step, M: int) -> list:
    from ..algorithms.s4.c_tilde import c_tilde as form_c_tilde
    from ..arith import BallField
    from .ball_run import C_TILDE_METHOD

    res = form_c_tilde(BallField(128), model, step, M, method=C_TILDE_METHOD)
    if not res.ok:
        raise ValueError(f"--params: C~ could not be formed ({res.status}); give Ct in the file")
    return [complex(x.mid()) for x in res.value]


def count_grid(args, progress) -> list[dict]:
    """The rows of every (N, L, eps) of the command line."""
    from .counts import count_rows, model_kappa

    rows = []
    for model, step, Ls, ct in _models(args):
        for L in Ls:
            progress(f"kappa of N={model.N} L={L}")
            kappa = model_kappa(model, step, L, ct)
            progress(f"counting N={model.N} L={L} ({args.cauchy})")
            rows += count_rows(model, step, L, ct, args.eps, args.cauchy, kappa)
    return rows


def _print_table(rows: list[dict], fit: dict) -> None:
    print(f"{'N':>5} {'L':>6} {'eps':>8} {'route':>6} {'kappa':>9} {'ops':>11} {'peak':>9} {'norm_exact':>10} "
          f"{'norm_eps':>9} {'norm_words':>10} {'p,p0':>8}")
    for r in rows:
        o = r.get("orders")
        print(f"{r['N']:>5} {r['L']:>6} {r['eps']:>8.1e} {r['cauchy']:>6} {r['kappa']:>9.2e} {r['ops']:>11} "
              f"{r['peak_words']:>9} {r['norm_exact']:>10.3f} {r['norm_eps']:>9.3f} {r['norm_words']:>10.2f} "
              f"{(str(o['p']) + ',' + str(o['p0'])) if o else '-':>8}")
    if fit.get("residual") is not None:
        al = "-" if fit["alpha"] is None else f"{fit['alpha']:.3f}"
        c = "-" if fit["c"] is None else f"{fit['c']:.4g}"
        print(f"fit: {fit['model']}: alpha {al}, a {fit['a']:.4g}, c {c}, RMS relative residual "
              f"{fit['residual']:.3g} over {fit['rows']} rows")


def figure(rows: list[dict], fmt: str) -> bytes:
    """Both normalizations against N+L, and norm_eps against log2(kappa/eps)."""
    Figure = plot._matplotlib()
    fig = Figure(figsize=(10, 4), layout="constrained")
    a, b = fig.subplots(1, 2)
    s = np.array([r["N"] + r["L"] for r in rows])
    x = np.array([math.log2(r["kappa"] / r["eps"]) for r in rows])
    for key, mark in (("norm_exact", "o"), ("norm_eps", "s"), ("norm_words", "^")):
        a.scatter(s, [r[key] for r in rows], marker=mark, label=key)
    a.set_xscale("log", base=2)
    a.set_xlabel("N + L")
    a.legend()
    b.scatter(x, [r["norm_eps"] for r in rows], marker="s")
    b.set_xlabel("log2(kappa / eps)")
    b.set_ylabel("norm_eps")
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=120)
    return buf.getvalue()


def cmd_count(args, print_json) -> int:
    """Run ``s4cert count``; ``print_json`` prints a result as JSON."""
    _check(args)
    Ns = args.N or DEFAULT_N
    est = limits.count_estimate(Ns, args.L or DEFAULT_L)
    est.seconds *= len(args.eps) * (3 if args.cauchy == "fast" else 1)
    limits.check(est, args.force)
    progress = Progress(enabled=not (args.quiet or args.json))
    try:
        rows = count_grid(args, progress)
    except RuntimeError as e:
        progress.done()
        print(f"s4cert: not counted: {e}", file=sys.stderr)
        return 1
    finally:
        progress.done()
    fit = fit_counts(rows)
    if args.plot:
        atomic_write([(args.plot, figure(rows, args.plot.rsplit(".", 1)[-1].lower()))])
    if args.json:
        from .counts import ROW_KEYS
        print_json({"rows": [{k: r[k] for k in ROW_KEYS} for r in rows], "fit": fit})
    else:
        _print_table(rows, fit)
        if args.plot:
            print(f"wrote {args.plot}")
    return 0
