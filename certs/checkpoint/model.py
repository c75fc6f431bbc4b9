"""Certify a whole checkpoint: every kernel module, every channel of every head
(``certify_model``; the README's "Certifying checkpoints" shows it on the test fixtures),
and write the report and the kernels (``save_report``)."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from ..compare import ModuleCompare, read_other
from ..io.atomic import atomic_write
from ..io.numbers import rational_string
from ..io.numbers import short_text
from ..kernel import DEFAULT_MAX_PREC
from ..relative_eps import float_below, max_abs_lower
from .certify import ModuleKernels, module_channels, module_heads
from .layouts import KernelModule, find_kernel_modules, resolve_settings
from .reader import read_checkpoint
from .dplr_float64 import arrays_apply
from .runner import Runner, Task, head_groups, npz_bytes, run_all
from .tighten import compare_module

REPORT_FORMAT = "s4cert.model-report/1"
MAX_WORKERS = 64


@dataclass
class ModelReport:
    """What :func:`certify_model` found and certified."""

    path: str
    format: str
    kernels: list[ModuleKernels]
    options: dict = field(default_factory=dict)
    #: how many tasks (groups of heads) were computed and how many reused from out_dir
    tasks: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(k.status == "ok" for k in self.kernels)

    @property
    def document(self) -> dict:
        """The report as written by ``save_report`` (``s4cert.model-report/1``)."""
        return {"format": REPORT_FORMAT, "file": os.path.basename(self.path), "file_format": self.format,
                "options": {k: v for k, v in self.options.items() if v is not None},
                "kernels": [k.entry() | ({"compare": k.info["compare"]} if "compare" in k.info else {})
                            for k in self.kernels]}

    @property
    def compare(self) -> dict[str, ModuleCompare]:
        """Each compared module's certified errors (by prefix, ``""`` at the top level)."""
        return {k.prefix: ModuleCompare.of(k.info["compare"]) for k in self.kernels if "compare" in k.info}

    @property
    def kernel_arrays(self) -> dict[str, np.ndarray]:
        """``<prefix>.mid`` and ``<prefix>.rad`` for every certified module."""
        out = {}
        for k in self.kernels:
            if k.mid is not None:
                name = k.prefix or "kernel"
                out[f"{name}.mid"], out[f"{name}.rad"] = k.mid, k.rad
                if k.mid_exact is not None:
                    out[f"{name}.mid_exact"], out[f"{name}.rad_exact"] = k.mid_exact, k.rad_exact
        return out


#: below this absolute eps a diagonal module's kernels go to balls (float64 disks hold about
#: 1e-15 max|K|), so its heads stay in fine groups for the workers
FLOAT64_GROUP_EPS = 1e-18


def save_report(report: ModelReport, out: str | None = None, kernels: str | None = None) -> None:
    """Write the report (JSON) and/or the kernels (npz), atomically, together."""
    items = []
    if out:
        items.append((out, (json.dumps(report.document, indent=1, allow_nan=False) + "\n").encode()))
    if kernels:
        items.append((kernels, npz_bytes(report.kernel_arrays)))
    if items:
        atomic_write(items)


def default_length(mod: KernelModule, hyper: Any) -> int | None:
    """The kernel length the checkpoint implies: l_kernel (> 0), else a recorded l_max."""
    lk = mod.tensors.get("l_kernel", mod.tensors.get("L"))
    if lk is not None and np.asarray(lk).size == 1 and int(np.asarray(lk).reshape(-1)[0]) > 0:
        return int(np.asarray(lk).reshape(-1)[0])
    found = set()

    def walk(x: Any, depth: int = 0) -> None:
        if depth > 32:
            return
        if isinstance(x, dict):
            for k, v in x.items():
                if k == "l_max" and isinstance(v, int) and not isinstance(v, bool) and v > 0:
                    found.add(v)
                walk(v, depth + 1)
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v, depth + 1)
    walk(hyper)
    return found.pop() if len(found) == 1 else None


def _strings(part: ModuleKernels, which: str) -> np.ndarray:
    """A part's lossless strings (its float64 disks, exactly, when it has none)."""
    given = getattr(part, f"{which}_exact")
    if given is not None:
        return given
    values = getattr(part, which)
    exact = lambda v: rational_string(Fraction(float(v))) if np.isfinite(v) else ("nan" if np.isnan(v) else "inf")
    return np.vectorize(exact, otypes=[str])(values)


def _join(parts: list[ModuleKernels]) -> ModuleKernels:
    """One module's result from the results of its head groups, in head order."""
    first = parts[0]
    refused = [p for p in parts if p.status != "ok"]
    out = ModuleKernels(prefix=first.prefix, layout=first.layout, kind=first.kind, disc=first.disc,
                        channels=first.channels, H=sum(p.H for p in parts), N=first.N, L=first.L,
                        assumed=first.assumed, settings=first.settings, status="ok")
    out.seconds = sum(p.seconds for p in parts)
    if refused:
        out.status, out.reason = "refused", refused[0].reason
        out.info["refused"] = [k for p in parts for k in p.info.get("refused", [])]
    if any(p.mid is None for p in parts):
        return out
    # one group: its arrays as they are (nothing else holds them)
    out.mid = parts[0].mid if len(parts) == 1 else np.concatenate([p.mid for p in parts], axis=1)
    out.rad = parts[0].rad if len(parts) == 1 else np.concatenate([p.rad for p in parts], axis=1)
    if any(p.mid_exact is not None for p in parts):
        out.mid_exact, out.rad_exact = (np.concatenate([_strings(p, which) for p in parts], axis=1)
                                        for which in ("mid", "rad"))
    out.eps = max(p.eps for p in parts)
    out.max_rad = max(p.max_rad for p in parts)
    out.precision_bits = max(p.precision_bits for p in parts)
    out.info["arithmetic"] = sorted(set().union(*(p.info.get("arithmetic", []) for p in parts)))
    return out


def certify_model(path: Any, *, L: int | None = None, eps: Any = None, disc: str | None = None,
                  dt_transform: str | None = None, real_transform: str | None = None,
                  imag_transform: str | None = None, compare: Any = None, key: str | None = None,
                  workers: int = 1, scheduler: str | None = None, out_dir: str | None = None,
                  arithmetic: str = "auto", max_prec: int = DEFAULT_MAX_PREC, tighten: bool = True,
                  progress: Callable[[int, int, float], None] | None = None,
                  relative: bool = False) -> ModelReport:
    """Certify every kernel module of a checkpoint (``.pt``, ``.ckpt``, ``.safetensors``,
    ``.npz``).

    Settings the file does not record come from the options, else from the reference
    classes' defaults (listed per module under ``assumed``).  ``L`` defaults to the
    module's ``l_kernel`` or a recorded ``l_max``.  ``eps`` is an absolute bound on every
    radius (default ``1e-13 * max|K|`` per kernel); with ``relative``, eps times max|K|: a
    first run at the default gives each kernel a certified lower bound of max|K|, and a
    module whose radii miss eps times the smallest of them is certified again at that
    absolute eps (``_relative``).  ``compare`` (an npz/npy file or an
    array of shape (channels, H, L)) adds certified intervals for ``max |other - K|``, for
    ``max |K|`` and for their ratio; with ``tighten`` (the default) the kernels whose radius
    is within 100x of that error are certified again on a tighter route
    (``tighten.compare_module``).
    The work is split into groups of heads (``runner.Task``): ``workers`` > 1 runs them on
    a Dask LocalCluster of that many processes (a process pool without Dask),
    ``scheduler`` on an existing Dask cluster; ``out_dir`` keeps every finished group and
    lets a later run resume.  ``progress(done, total, seconds)`` counts kernels.
    ``arithmetic="ball"`` skips the float64 route.  ``max_prec``: the ball precision limit in
    bits (``DEFAULT_MAX_PREC``, the same as ``certify_kernel``'s and the command's).  Raises ValueError for bad input; a
    module that cannot be certified has ``status = "refused"`` with the reason.
    """
    if relative and eps is None:
        raise ValueError("relative needs eps (the relative bound)")
    rel, eps = (Fraction(eps), None) if relative else (None, eps)
    if not isinstance(workers, int) or isinstance(workers, bool) or not 1 <= workers <= MAX_WORKERS:
        raise ValueError(f"workers must be an integer in [1, {MAX_WORKERS}], got {workers!r}")
    if out_dir is not None:
        out_dir = os.fspath(out_dir)
        if not out_dir:
            raise ValueError("the output directory is empty")
        os.makedirs(out_dir, exist_ok=True)
        if not os.access(out_dir, os.W_OK):
            raise ValueError(f"{out_dir}: the output directory is not writable")
    runner = Runner(workers, scheduler)
    ck = read_checkpoint(path)
    mods = find_kernel_modules(ck.tensors)
    options = {"disc": disc, "dt_transform": dt_transform, "real_transform": real_transform,
               "imag_transform": imag_transform}
    tasks = []
    for index, mod in enumerate(mods):
        resolve_settings(mod, options if mod.kind == "diag" else {**options, "disc": None}, ck.hyper_parameters)
        if mod.kind == "dplr" and disc not in (None, "bilinear"):
            raise ValueError(f"--disc {disc}: the DPLR module {mod.prefix!r} is always bilinear")
        length = L if L is not None else default_length(mod, ck.hyper_parameters)
        if length is None:
            raise ValueError(f"module {mod.prefix!r}: the checkpoint does not record the kernel length; give -L")
        tasks += _module_tasks(index, mod, length, None if eps is None else float(eps), max_prec, arithmetic)
    others = _load_others(compare, key, len(mods)) if compare is not None else None
    done, counts = run_all(tasks, runner, out_dir, progress)
    results = [_join([r for t, r in zip(tasks, done) if t.index == m]) for m in range(len(mods))]
    if rel is not None:
        results = _relative(results, tasks, rel, runner, out_dir, progress, counts)
    for m, res in enumerate(results):
        if others is not None and res.status == "ok":
            task = next(t for t in tasks if t.index == m)
            res.info["compare"] = compare_module(res, others(res), task.module, m, runner, max_prec, arithmetic,
                                                 tighten, key)
    opts = dict(options, L=L, eps=None if eps is None else float(eps), compare=None if compare is None else str(compare),
                key=key, relative_eps=None if rel is None else short_text(rel))
    report = ModelReport(str(path), ck.format, results, opts)
    report.tasks = counts
    return report


def _module_tasks(index: int, mod: KernelModule, length: int, eps: float | None, max_prec: int,
                  arithmetic: str) -> list[Task]:
    """The tasks (groups of heads) of one module."""
    # the float64 passes (a diagonal module's, and a DPLR module's set-up on arrays) are
    # vectorized over the heads; ball runs (asked for, or forced by an eps no float64
    # disk can meet) and DPLR heads set up in balls are not
    vectorized = arithmetic != "ball" and (eps is None or eps >= FLOAT64_GROUP_EPS) \
        and (mod.kind == "diag" or arrays_apply(mod, length))
    per_head = module_channels(mod) * length if vectorized else 0
    return [Task(index, mod, length, eps, max_prec, heads, arithmetic)
            for heads in head_groups(module_heads(mod), per_head)]


def _relative(results: list[ModuleKernels], tasks: list[Task], rel: Fraction, runner: Runner,
              out_dir: str | None, progress: Any, counts: dict) -> list[ModuleKernels]:
    """Each module certified at eps = rel times the smallest certified lower bound of
    max|K| over its kernels (so every kernel's radius is below rel max|K| of that kernel):
    the first run's kernels where they already meet it, else the module again at it."""
    out = []
    for m, res in enumerate(results):
        if res.status != "ok":
            out.append(res)
            continue
        lower = min((max_abs_lower(res.mid[c, h], res.rad[c, h]) for c in range(res.mid.shape[0])
                     for h in range(res.mid.shape[1])), default=Fraction(0))
        if lower <= 0:
            res.status, res.reason = "refused", "eps relative to max|K|: a kernel's max|K| is not certified above 0"
            out.append(res)
            continue
        target = float_below(rel * lower, "eps", "the model report")
        if not res.max_rad <= target:
            first = next(t for t in tasks if t.index == m)
            again = _module_tasks(m, first.module, first.L, target, first.max_prec, first.arithmetic)
            done, more = run_all(again, runner, out_dir, progress)
            for k, v in more.items():
                counts[k] = counts.get(k, 0) + v
            res = _join(done)
        if res.status == "ok":
            res.eps = target
        res.info["relative_eps"] = short_text(rel)
        out.append(res)
    return out


def _load_others(compare: Any, key: str | None, n_modules: int) -> Callable[[ModuleKernels], np.ndarray]:
    """The other kernels, one array per module: an array, an .npy, or an .npz (``key``),
    read as ``s4cert compare`` reads them."""
    if n_modules != 1:
        raise ValueError("--compare takes the kernels of a checkpoint with one kernel module")
    arr = np.asarray(read_other(compare, key))
    if arr.dtype.kind not in "fiu":
        raise ValueError(f"compare: expected real numbers, got dtype {arr.dtype}")

    def pick(res: ModuleKernels) -> np.ndarray:
        a = arr.astype(np.float64)
        if a.ndim == 2:
            a = a[None]
        if a.ndim == 3 and a.shape[:2] == res.mid.shape[:2] and a.shape[2] >= res.L:
            if not np.all(np.isfinite(a[:, :, :res.L])):
                raise ValueError("compare: the other kernels have a non-finite entry")
            return a[:, :, :res.L]
        raise ValueError(f"compare: shape {arr.shape} does not match the kernels' (channels, H, L) = "
                         f"{res.mid.shape}")
    return pick
