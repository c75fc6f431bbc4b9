"""Comparison of another implementation's kernel with a certified kernel file:
certified lower and upper bounds of its error."""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

import numpy as np
from flint import acb, arb, ctx

from ..arith.ball import float_lower, float_upper

from .audit.checks import pt_max
from .io.kernel_file import load_kernel
from .io.numbers import exact_arb


@dataclass
class CompareReport:
    """Errors of another kernel ``o`` against the certified one, with certified bounds:
    ``abs_error`` = max_j |o_j - K_j| lies in ``abs_error_bounds``; ``rel_error`` =
    abs_error / max_j |K_j| lies in ``rel_error_bounds``; ``kernel_max_bounds`` encloses
    max_j |K_j|.  The plain values are computed from the stored midpoints (estimates);
    the bounds are rounded outward to floats."""

    path: str
    L: int
    abs_error: float
    abs_error_bounds: tuple[float, float]
    rel_error: float
    rel_error_bounds: tuple[float, float]
    kernel_max_bounds: tuple[float, float]
    worst_index: int
    digest_ok: bool = True

    def summary(self) -> str:
        a, r = self.abs_error_bounds, self.rel_error_bounds
        lines = [f"max abs error {self.abs_error:.6e}  (certified in [{a[0]:.6e}, {a[1]:.6e}]) at index {self.worst_index}",
                 f"max rel error {self.rel_error:.6e}  (certified in [{r[0]:.6e}, {r[1]:.6e}]; relative to max|K|)"]
        if not self.digest_ok:
            lines.append("warning: the kernel file's digest does not match its content")
        return "\n".join(lines)


def read_other(other: Any, key: str | None) -> np.ndarray:
    """Another implementation's kernel: an array, an .npy, or one array (``key``) of an
    .npz; ValueError naming the problem otherwise."""
    if isinstance(other, np.ndarray):
        if key is not None:
            raise ValueError("key selects an array in an .npz file; got an array")
        return other
    path = os.fspath(other)
    if not os.path.isfile(path):
        raise ValueError(f"{path}: no such file")
    ext = os.path.splitext(path)[1].lower()
    try:
        if ext == ".npy":
            if key is not None:
                raise ValueError("key selects an array in an .npz file; a .npy file holds one array")
            return np.load(path, allow_pickle=False)
        if ext == ".npz":
            with np.load(path, allow_pickle=False) as z:
                names = list(z.files)
                if key is None:
                    if len(names) != 1:
                        raise ValueError(f"{path} holds arrays {names}: choose one with key")
                    key = names[0]
                if key not in names:
                    raise ValueError(f"{path}: no array {key!r} (it holds {names})")
                return z[key]
    except (OSError, EOFError) as e:
        raise ValueError(f"{path}: cannot read ({e})") from None
    raise ValueError(f"{path}: expected a .npy or .npz file")


def compare_with(path: Any, other: Any, *, key: str | None = None) -> CompareReport:
    """Bound the error of ``other`` (a .npy/.npz path or an array of length L; a real array
    is compared as real) against the certified kernel in ``path``.  For every j,
    |o_j - K_j| lies in [|o_j - mid_j| - rad_j, |o_j - mid_j| + rad_j], computed in ball
    arithmetic from the exact stored midpoints and radii.  A file whose digest does not
    match its content is refused (ValueError)."""
    kf = load_kernel(path)
    if not kf.digest_ok:
        raise ValueError(f"{kf.path}: the sha256 digest does not match the content (the file was altered): "
                         "no certified bounds from it")
    o = np.asarray(read_other(other, key))
    if o.ndim != 1:
        raise ValueError(f"the other kernel must be a vector, got shape {o.shape}")
    if o.shape[0] != kf.L:
        raise ValueError(f"the other kernel has length {o.shape[0]}, the certified one L = {kf.L}")
    if o.dtype.kind not in "iufc":
        raise ValueError(f"the other kernel must hold numbers, got dtype {o.dtype}")
    if o.dtype.kind in "fc" and not np.all(np.isfinite(o)):
        raise ValueError(f"the other kernel has a non-finite entry at index {int(np.argmin(np.isfinite(o)))}")
    prec = kf.prec + 64
    e_lo = e_hi = k_lo = k_hi = arb(0)
    est, scale, worst = [], [], 0
    with ctx.workprec(prec):
        for j, ((a, b), r) in enumerate(zip(kf.mid, kf.rad)):
            x = complex(o[j])
            m = acb(exact_arb(a, prec=prec), exact_arb(b, prec=prec))
            dist = abs(acb(x.real, x.imag) - m)
            mod = abs(m)
            rb = exact_arb(r, prec=prec)
            lo = (dist - rb).lower()
            e_lo = pt_max(e_lo, lo if lo > 0 else arb(0))
            e_hi = pt_max(e_hi, (dist + rb).upper())
            lo = (mod - rb).lower()
            k_lo = pt_max(k_lo, lo if lo > 0 else arb(0))
            k_hi = pt_max(k_hi, (mod + rb).upper())
            est.append(float(dist.mid()))
            scale.append(float(mod.mid()))
        worst = int(np.argmax(est))
        rel_lo = (e_lo / k_hi).lower() if k_hi > 0 else arb(0)
        rel_hi = (e_hi / k_lo).upper() if k_lo > 0 else arb("inf")
    abs_err = est[worst]
    kmax = max(scale)
    return CompareReport(kf.path, kf.L, abs_err, (float_lower(e_lo), float_upper(e_hi)),
                         abs_err / kmax if kmax > 0 else math.inf,
                         (float_lower(rel_lo), float_upper(rel_hi) if rel_hi.is_finite() else math.inf),
                         (float_lower(k_lo), float_upper(k_hi)), worst, kf.digest_ok)
