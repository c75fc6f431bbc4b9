"""Certify a whole checkpoint: every kernel module, every channel of every head.

>>> from pathlib import Path
>>> import s4cert
>>> # report = certify_model("a05_s4d_minimal.pt", L=128)     # see the README
"""
from __future__ import annotations

import io
import json
import math
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from ..io.atomic import atomic_write
from .certify import ModuleKernels, certify_module, module_heads
from .compare import max_error_interval
from .layouts import KernelModule, find_kernel_modules, resolve_settings
from .reader import read_checkpoint

REPORT_FORMAT = "s4cert.model-report/1"
MAX_WORKERS = 64


@dataclass
class ModelReport:
    """What :func:`certify_model` found and certified."""

    path: str
    format: str
    kernels: list[ModuleKernels]
    options: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(k.status == "ok" for k in self.kernels)

    def document(self) -> dict:
        return {"format": REPORT_FORMAT, "file": os.path.basename(self.path), "file_format": self.format,
                "options": {k: v for k, v in self.options.items() if v is not None},
                "kernels": [k.entry() | ({"compare": k.info["compare"]} if "compare" in k.info else {})
                            for k in self.kernels]}

    def kernel_arrays(self) -> dict[str, np.ndarray]:
        """``<prefix>.mid`` and ``<prefix>.rad`` for every certified module."""
        out = {}
        for k in self.kernels:
            if k.status == "ok":
                name = k.prefix or "kernel"
                out[f"{name}.mid"], out[f"{name}.rad"] = k.mid, k.rad
        return out


def _npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def save_report(report: ModelReport, out: str | None = None, kernels: str | None = None) -> None:
    """Write the report (JSON) and/or the kernels (npz), atomically, together."""
    items = []
    if out:
        items.append((out, (json.dumps(report.document(), indent=1, allow_nan=False) + "\n").encode()))
    if kernels:
        items.append((kernels, _npz_bytes(report.kernel_arrays())))
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


def _task(args: tuple) -> ModuleKernels:
    mod, L, eps, max_prec, heads = args
    return certify_module(mod, L, eps, max_prec=max_prec, heads=heads)


def _groups(H: int, workers: int) -> list[list[int]]:
    """Heads in contiguous groups, a few per worker (results do not depend on the grouping)."""
    n = max(1, min(H, 4 * workers)) if workers > 1 else 1
    size = -(-H // n)
    return [list(range(a, min(H, a + size))) for a in range(0, H, size)]


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
        return out
    out.mid = np.concatenate([p.mid for p in parts], axis=1)
    out.rad = np.concatenate([p.rad for p in parts], axis=1)
    out.eps = max(p.eps for p in parts)
    out.max_rad = max(p.max_rad for p in parts)
    out.precision_bits = max(p.precision_bits for p in parts)
    out.info["arithmetic"] = sorted(set().union(*(p.info.get("arithmetic", []) for p in parts)))
    return out


def certify_model(path: Any, *, L: int | None = None, eps: Any = None, disc: str | None = None,
                  dt_transform: str | None = None, real_transform: str | None = None,
                  imag_transform: str | None = None, compare: Any = None, key: str | None = None,
                  workers: int = 1, max_prec: int = 4096,
                  progress: Callable[[str], None] | None = None) -> ModelReport:
    """Certify every kernel module of a checkpoint (``.pt``, ``.ckpt``, ``.safetensors``,
    ``.npz``).

    Settings the file does not record come from the options, else from the reference
    classes' defaults (listed per module under ``assumed``).  ``L`` defaults to the
    module's ``l_kernel`` or a recorded ``l_max``.  ``eps`` is an absolute bound on every
    radius (default ``1e-13 * max|K|`` per module).  ``compare`` (an npz/npy file or an
    array of shape (channels, H, L)) adds a certified interval for ``max |other - K|``.
    ``workers`` > 1 certifies the modules in that many processes.  Raises ValueError for
    bad input; a module that cannot be certified has ``status = "refused"``.
    """
    if not isinstance(workers, int) or isinstance(workers, bool) or not 1 <= workers <= MAX_WORKERS:
        raise ValueError(f"workers must be an integer in [1, {MAX_WORKERS}], got {workers!r}")
    ck = read_checkpoint(path)
    mods = find_kernel_modules(ck.tensors)
    options = {"disc": disc, "dt_transform": dt_transform, "real_transform": real_transform,
               "imag_transform": imag_transform}
    jobs = []
    for index, mod in enumerate(mods):
        resolve_settings(mod, options if mod.kind == "diag" else {**options, "disc": None}, ck.hyper_parameters)
        if mod.kind == "dplr" and disc not in (None, "bilinear"):
            raise ValueError(f"--disc {disc}: the DPLR module {mod.prefix!r} is always bilinear")
        length = L if L is not None else default_length(mod, ck.hyper_parameters)
        if length is None:
            raise ValueError(f"module {mod.prefix!r}: the checkpoint does not record the kernel length; give -L")
        for heads in _groups(module_heads(mod), workers):
            jobs.append((index, (mod, length, eps, max_prec, heads)))
    others = _load_others(compare, key, len(mods)) if compare is not None else None
    if workers > 1 and len(jobs) > 1:
        with ProcessPoolExecutor(max_workers=min(workers, len(jobs))) as pool:
            done = list(pool.map(_task, [job for _, job in jobs]))
    else:
        done = []
        for _, (mod, length, e, mp, heads) in jobs:
            done.append(certify_module(mod, length, e, max_prec=mp, heads=heads, progress=progress))
    results = [_join([r for (i, _), r in zip(jobs, done) if i == m]) for m in range(len(mods))]
    for res in results:
        if others is not None and res.status == "ok":
            other = others(res)
            lo, hi = max_error_interval(other, res.mid, res.rad)
            res.info["compare"] = {"key": key, "max_error": [lo, hi]}
    opts = dict(options, L=L, eps=None if eps is None else float(eps), compare=None if compare is None else str(compare),
                key=key)
    return ModelReport(str(path), ck.format, results, opts)


def _load_others(compare: Any, key: str | None, n_modules: int) -> Callable[[ModuleKernels], np.ndarray]:
    """The other kernels, one array per module: an array, an .npy, or an .npz (``key``)."""
    if isinstance(compare, np.ndarray):
        arr = compare
    else:
        try:
            with np.load(str(compare), allow_pickle=False) as data:
                if isinstance(data, np.ndarray):
                    arr = data
                else:
                    names = list(data.keys())
                    if key is None:
                        if len(names) != 1:
                            raise ValueError(f"{compare}: holds {', '.join(names)}; choose one with --key")
                        key = names[0]
                    if key not in names:
                        raise ValueError(f"{compare}: no array {key!r} (it holds {', '.join(names)})")
                    arr = data[key]
        except (OSError, ValueError, EOFError) as e:
            if isinstance(e, ValueError) and str(e).startswith(str(compare)):
                raise
            raise ValueError(f"{compare}: not a readable .npy/.npz file ({e})") from None
    arr = np.asarray(arr)
    if n_modules != 1:
        raise ValueError("--compare takes the kernels of a checkpoint with one kernel module")
    if arr.dtype.kind not in "fiu":
        raise ValueError(f"compare: expected real numbers, got dtype {arr.dtype}")

    def pick(res: ModuleKernels) -> np.ndarray:
        a = arr.astype(np.float64)
        if a.ndim == 2:
            a = a[None]
        if a.shape[0] == res.mid.shape[0] and a.shape[1] == res.mid.shape[1] and a.shape[2] >= res.L:
            return a[:, :, :res.L]
        raise ValueError(f"compare: shape {arr.shape} does not match the kernels' (channels, H, L) = "
                         f"{res.mid.shape}")
    return pick
