"""Comparison of another implementation's kernel with a certified kernel file:
certified lower and upper bounds of its error, absolute and relative to max|K|.

When the other kernel's error is within ``TIGHTEN_FACTOR`` of the file's largest radius
(the interval would be too wide to say anything sharp), the kernel is certified again
from the file's own inputs by ``certify_kernel(..., arithmetic="auto")`` (float64 disks,
then double-double disks, then balls) with eps about the error over
``TIGHTEN_EPS_FACTOR`` (the radius over it when the other kernel is the midpoints
themselves), and the bounds of both certificates are intersected.  The file is never
written."""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from flint import acb, arb, ctx

from ..arith.ball import float_lower, float_upper

from . import limits
from .audit.checks import pt_max, pt_min
from .errors import CertificationError
from .io.disk_bounds import disk_bounds
from .io.kernel_file import KernelFile, load_kernel
from .io.numbers import dyadic_bits, exact_arb
from .kernel import DEFAULT_MAX_PREC, CertifiedKernel, certify_kernel

#: tighten when the largest radius is above the other kernel's error over this factor
TIGHTEN_FACTOR = 100
#: the tighter certification asks for eps = (the other kernel's error) / this
TIGHTEN_EPS_FACTOR = 1000
#: at most this many tighter certifications (the error estimate moves with the midpoints)
TIGHTEN_ROUNDS = 3


@dataclass
class CompareReport:
    """Errors of another kernel ``o`` against the certified one, with certified bounds:
    ``abs_error`` = max_j |o_j - K_j| lies in ``abs_error_bounds``; ``rel_error`` =
    abs_error / max_j |K_j| lies in ``rel_error_bounds``; ``kernel_max_bounds`` encloses
    max_j |K_j|.  The plain values are computed from the midpoints (estimates); the bounds
    are rounded outward to floats.  ``max_radius`` is the largest radius of the disks the
    bounds come from; ``tightened`` (None when the file's disks were narrow enough) says
    from which radius and arithmetic to which the kernel was certified again, at which
    eps, or why that was not done (``tightened_text`` says it in a line)."""

    path: str
    L: int
    abs_error: float
    abs_error_bounds: tuple[float, float]
    rel_error: float
    rel_error_bounds: tuple[float, float]
    kernel_max_bounds: tuple[float, float]
    worst_index: int
    digest_ok: bool = True
    max_radius: float = 0.0
    tightened: dict | None = None

    def summary(self) -> str:
        a, r, k = self.abs_error_bounds, self.rel_error_bounds, self.kernel_max_bounds
        lines = [f"max abs error {self.abs_error:.6e}  (certified in [{a[0]:.6e}, {a[1]:.6e}]) at index {self.worst_index}",
                 f"max rel error {self.rel_error:.6e}  (certified in [{r[0]:.6e}, {r[1]:.6e}]; relative to "
                 f"max|K|, certified in [{k[0]:.6e}, {k[1]:.6e}])"]
        if not self.digest_ok:
            lines.append("warning: the kernel file's digest does not match its content")
        return "\n".join(lines)


@dataclass(frozen=True)
class ModuleCompare:
    """A checkpoint module's kernels against another implementation's (``certify_model``
    with ``compare``): certified ``[lo, hi]`` bounds of ``max_error`` = max |other - K|,
    of ``max_abs_K`` and of their ratio ``relative``; ``error``, the estimate
    max |other - mid|; ``tightened``, how kernels were certified again (None if not)."""

    max_error: tuple[float, float]
    max_abs_K: tuple[float, float]
    relative: tuple[float, float]
    error: float
    key: str | None = None
    tightened: dict | None = None

    @classmethod
    def of(cls, entry: dict) -> "ModuleCompare":
        """From the report's ``compare`` entry of a module."""
        return cls(tuple(entry["max_error"]), tuple(entry["max_abs_K"]), tuple(entry["relative"]),
                   entry["error"], entry.get("key"), entry.get("tightened"))


def tightened_text(t: dict) -> str:
    """One line saying how the kernel was certified again (or why not)."""
    fr = t["from"]
    head = (f"the other kernel's error (about {t['error']:.3e}) is within {TIGHTEN_FACTOR}x of the "
            if t["error"] > 0 else "the other kernel is the certified midpoints, whose ")
    head += f"certified radius {fr['max_radius']:.3e} ({fr['arithmetic']})" + (" bounds its error" if t["error"] == 0 else "")
    if "to" not in t:
        return f"{head}; not certified again: {t['reason']}"
    to = t["to"]
    return (f"{head}: certified again at eps {to['eps']:.3e} on the next tighter route ({to['arithmetic']}), "
            f"radius {to['max_radius']:.3e}")


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
                        raise ValueError(f"{path} holds arrays {names}: choose one with key= in Python, --key on the command line")
                    key = names[0]
                if key not in names:
                    raise ValueError(f"{path}: no array {key!r} (it holds {names})")
                return z[key]
    except (OSError, EOFError) as e:
        raise ValueError(f"{path}: cannot read ({e})") from None
    raise ValueError(f"{path}: expected a .npy or .npz file")


@dataclass
class _Bounds:
    """Exact arb points: e_lo <= max|o - K| <= e_hi, k_lo <= max|K| <= k_hi; and the
    estimates max|o - mid| (at ``worst``) and max|mid| from the midpoints."""

    e_lo: arb
    e_hi: arb
    k_lo: arb
    k_hi: arb
    error: float
    worst: int
    scale: float
    max_radius: float

    def meet(self, other: "_Bounds") -> "_Bounds":
        """Both hold, so their intersection holds; the estimates of ``other``."""
        return _Bounds(pt_max(self.e_lo, other.e_lo), pt_min(self.e_hi, other.e_hi),
                       pt_max(self.k_lo, other.k_lo), pt_min(self.k_hi, other.k_hi),
                       other.error, other.worst, other.scale, other.max_radius)


def _exact_bounds(entries: list, o: np.ndarray) -> tuple[list[arb], dict[int, float], float]:
    """For disks (j, (a, b), r) with exact centres and radii: |o_j - K_j| lies in
    [|o_j - m_j| - r_j, |o_j - m_j| + r_j] and |K_j| in [|m_j| - r_j, |m_j| + r_j], computed
    in ball arithmetic; ([e_lo, e_hi, k_lo, k_hi] as exact points, the estimates
    |o_j - m_j| by j, the largest estimate of |m_j|)."""
    prec = max([64] + [dyadic_bits(x) for _, pair, _ in entries for x in pair]) + 128
    e_lo = e_hi = k_lo = k_hi = arb(0)
    est, scale = {}, 0.0
    with ctx.workprec(prec):
        for j, (a, b), r in entries:
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
            est[j] = float(dist.mid())
            scale = max(scale, float(mod.mid()))
    return [e_lo, e_hi, k_lo, k_hi], est, scale


def _bounds(mid: list[tuple[Fraction, Fraction]], rad: list[Fraction], o: np.ndarray) -> _Bounds:
    """For every j, |o_j - K_j| lies in [|o_j - mid_j| - rad_j, |o_j - mid_j| + rad_j] and
    |K_j| in [|mid_j| - rad_j, |mid_j| + rad_j], computed in ball arithmetic from the exact
    midpoints and radii; the maxima of the ends bound the maxima."""
    (e_lo, e_hi, k_lo, k_hi), est, scale = _exact_bounds([(j, m, r) for j, (m, r) in enumerate(zip(mid, rad))], o)
    worst = max(est, key=est.get) if est else 0
    return _Bounds(e_lo, e_hi, k_lo, k_hi, est[worst] if est else 0.0, worst, scale,
                   float_upper(exact_arb(max(rad, default=Fraction(0)))))


def _file_bounds(kf: KernelFile, o: np.ndarray) -> _Bounds:
    """As ``_bounds`` for the file's exact disks: the float64 and parts layers on arrays
    (``io.disk_bounds``: rounding bounded, no number per entry converted), the rational
    layer and any entry whose float chain overflows in ball arithmetic."""
    d = kf.disks
    if d.mid is None:  # a JSON file: exact numbers only
        return _bounds(kf.mid, kf.rad, o)
    o = np.asarray(o).astype(np.complex128)
    plain = np.flatnonzero(d.plain())
    layers = [(plain, d.mid[plain].reshape(-1, 1), d.rad[plain]), (d.parts_index, d.parts, d.parts_rad)]
    ends = [0.0, 0.0, 0.0, 0.0]
    est = np.zeros(kf.L)
    scale = 0.0
    exact = d.text_index.tolist()
    for idx, parts, rad in layers:
        if not idx.size:
            continue
        e_lo, e_hi, e_est, e_ok = disk_bounds(o[idx], parts, rad)
        k_lo, k_hi, k_est, k_ok = disk_bounds(None, parts, rad)
        ok = e_ok & k_ok
        exact += idx[~ok].tolist()
        if ok.any():
            ends = [max(ends[0], float(e_lo[ok].max())), max(ends[1], float(e_hi[ok].max())),
                    max(ends[2], float(k_lo[ok].max())), max(ends[3], float(k_hi[ok].max()))]
            est[idx[ok]] = e_est[ok]
            scale = max(scale, float(k_est[ok].max()))
    points = [arb(x) for x in ends]
    if exact:
        more, more_est, more_scale = _exact_bounds([(j, *d.exact_entry(j)) for j in sorted(exact)], o)
        points = [pt_max(x, y) for x, y in zip(points, more)]
        for j, v in more_est.items():
            est[j] = v
        scale = max(scale, more_scale)
    worst = int(np.argmax(est)) if kf.L else 0
    return _Bounds(*points, float(est[worst]) if kf.L else 0.0, worst, scale,
                   float_upper(exact_arb(kf.max_radius())))


def _ball_bounds(balls: Any, o: np.ndarray, prec: int, max_radius: float) -> _Bounds:
    """As ``_bounds`` for enclosures: K_j lies in the acb ball b_j, so |o_j - K_j| lies in
    the enclosure of |o_j - b_j| and |K_j| in that of |b_j|, computed in ball arithmetic;
    ``max_radius`` the certificate's (disks about the balls' midpoints)."""
    e_lo = e_hi = k_lo = k_hi = arb(0)
    est, scale = [], []
    with ctx.workprec(prec):
        for j, ball in enumerate(balls):
            x = complex(o[j])
            ox = acb(x.real, x.imag)
            dist, mod = abs(ox - ball), abs(ball)
            lo = dist.lower()
            e_lo = pt_max(e_lo, lo if lo > 0 else arb(0))
            e_hi = pt_max(e_hi, dist.upper())
            lo = mod.lower()
            k_lo = pt_max(k_lo, lo if lo > 0 else arb(0))
            k_hi = pt_max(k_hi, mod.upper())
            est.append(float(abs(ox - ball.mid()).mid()))
            scale.append(float(abs(ball.mid()).mid()))
    worst = int(np.argmax(est)) if est else 0
    return _Bounds(e_lo, e_hi, k_lo, k_hi, est[worst] if est else 0.0, worst, max(scale, default=0.0), max_radius)


def _arithmetic(certificate: dict, mode: str) -> str:
    """The route that certified: the disk arithmetic, else balls at their precision, else the mode."""
    if certificate.get("arithmetic"):
        return str(certificate["arithmetic"])
    bits = certificate.get("precision_bits")
    return f"ball arithmetic, {bits} bits" if mode == "ball" and bits else f"{mode} mode"


def _too_wide(b: _Bounds) -> bool:
    """The largest radius is above the error estimate over TIGHTEN_FACTOR (exactly); an
    estimate of 0 (the other kernel is the midpoints) leaves any radius too wide."""
    return b.max_radius > 0 and Fraction(b.max_radius) * TIGHTEN_FACTOR > Fraction(b.error)


def _next_eps(b: _Bounds) -> Fraction:
    """The error estimate over TIGHTEN_EPS_FACTOR; the radius over it when the estimate is 0."""
    return Fraction(b.error if b.error > 0 else b.max_radius) / TIGHTEN_EPS_FACTOR


def _tighten(kf: KernelFile, o: np.ndarray, b: _Bounds, max_prec: int) -> tuple[_Bounds, dict]:
    """Certify the file's problem again, eps = error / TIGHTEN_EPS_FACTOR, until the radius
    is narrow enough (at most TIGHTEN_ROUNDS times); the intersected bounds and the record."""
    record = {"error": b.error, "from": {"arithmetic": _arithmetic(kf.certificate, kf.mode),
                                         "max_radius": b.max_radius}}
    for _ in range(TIGHTEN_ROUNDS):
        eps = _next_eps(b)
        est = limits.kernel_estimate(kf.N, kf.L, eps, "ball")
        if est.seconds > limits.MAX_SECONDS or est.bytes > limits.memory_bytes() / 2:
            record["reason"] = f"estimated too large ({est.text()})"
            break
        try:
            ck = certify_kernel_again(kf, eps, max_prec=max_prec)
        except CertificationError as e:
            record["reason"] = str(e)
            break
        bits = int(ck.certificate.get("precision_bits") or 0)
        b = b.meet(_ball_bounds(ck.balls, o, max(256, bits + 64), float(ck.certificate["max_radius"])))
        record["to"] = {"eps": float(eps), "arithmetic": _arithmetic(ck.certificate, "ball"),
                        "max_radius": b.max_radius}
        if not _too_wide(b):
            break
    return b, record


def certify_kernel_again(kf: KernelFile, eps: Fraction, max_prec: int = DEFAULT_MAX_PREC) -> CertifiedKernel:
    """The file's problem (model, step, L, C~ exactly as stored) certified at ``eps``."""
    return certify_kernel(kf.model, kf.step, kf.L, eps, c_tilde=kf.c_tilde, counts=False, arithmetic="auto",
                          max_prec=max_prec)


def _compare_certified(ck: Any, other: Any, *, key: str | None, tighten: bool, max_prec: int) -> CompareReport:
    """compare_with on a CertifiedKernel: its kernel file written and read back, so that
    every bound comes from the same stored disks and inputs as for a file."""
    import dataclasses
    import tempfile

    from .io.kernel_file import save_kernel
    if getattr(ck, "inputs", None) is None:
        raise ValueError("compare_with: the CertifiedKernel records no inputs (ck.inputs); save it with "
                         "save_kernel(path, ck, model, step) and compare the file")
    with tempfile.TemporaryDirectory(prefix="s4cert-compare-") as folder:
        path = os.path.join(folder, "kernel.npz")
        save_kernel(path, ck)
        report = compare_with(path, other, key=key, tighten=tighten, max_prec=max_prec)
    return dataclasses.replace(report, path="<CertifiedKernel>")


def compare_with(path: Any, other: Any, *, key: str | None = None, tighten: bool = True,
                 max_prec: int = DEFAULT_MAX_PREC) -> CompareReport:
    """Bound the error of ``other`` (a .npy/.npz path or an array of length L; a real array
    is compared as real) against the certified kernel in ``path``: a kernel file (either
    format) or a ``CertifiedKernel`` (compared through the kernel file its recorded inputs
    make, written to a temporary folder; the report's ``path`` is then ``"<CertifiedKernel>"``).  For every j,
    |o_j - K_j| lies in [|o_j - mid_j| - rad_j, |o_j - mid_j| + rad_j], computed in ball
    arithmetic from the exact stored midpoints and radii.  With ``tighten`` (the default),
    a radius within TIGHTEN_FACTOR of the error has the kernel certified again (see the
    module docstring; ``CompareReport.tightened``), within ``max_prec`` bits.  A file whose
    digest does not match its content is refused (ValueError)."""
    if hasattr(path, "inputs") and hasattr(path, "certificate"):
        return _compare_certified(path, other, key=key, tighten=tighten, max_prec=max_prec)
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
    b = _file_bounds(kf, o)
    record = None
    if tighten and _too_wide(b):
        b, record = _tighten(kf, o, b, max_prec)
    with ctx.workprec(64):
        rel_lo = (b.e_lo / b.k_hi).lower() if b.k_hi > 0 else arb(0)
        rel_hi = (b.e_hi / b.k_lo).upper() if b.k_lo > 0 else arb("inf")
    return CompareReport(kf.path, kf.L, b.error, (float_lower(b.e_lo), float_upper(b.e_hi)),
                         b.error / b.scale if b.scale > 0 else math.inf,
                         (float_lower(rel_lo), float_upper(rel_hi) if rel_hi.is_finite() else math.inf),
                         (float_lower(b.k_lo), float_upper(b.k_hi)), b.worst, kf.digest_ok, b.max_radius, record)
