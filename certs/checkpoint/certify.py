"""Certified kernels of one checkpoint kernel module: every channel of every head.

The result holds float64 arrays ``mid`` and ``rad`` of shape (channels, H, L) with
``|K - mid| <= rad`` for the true (real) kernel K of the module's forward pass.

* diagonal modules: the kernels are evaluated in ball arithmetic
  (``algorithms.s4.diagonal``), the precision doubled until every radius is at most eps;
* DPLR modules: each (channel, head) is an exact-step-1 DPLR model; all of them go
  first through the float64 route at once (``dplr_float64``), and a kernel whose radius
  misses eps there is certified by :func:`s4cert.certs.kernel.certify_kernel`; a stored
  C~ for ``l_kernel`` points is handed over as C~ when ``l_kernel`` is the filter's
  length M, else turned back into C (``algorithms.s4.c_tilde.c_from_c_tilde``).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable

import numpy as np
from flint import acb, ctx

from ...algorithms.dft import next_power_of_two
from ...algorithms.s4.c_tilde import c_from_c_tilde
from ...algorithms.s4.diagonal import diagonal_kernel
from ...algorithms.s4.diagonal_midrad import (dd_powers, diagonal_terms_arrays, disks_of, vandermonde_midrad,
                                              vandermonde_tight)
from ...arith.dd_field import DDArrayField
from ...arith.disk_convert import real_disk_of_ball
from ...arith.double_double import DD
from ...arith.midrad import RangeError
from ...algorithms.s4.dplr import DPLR
from ...arith import BallField, fpenv
from ...arith.ball import float_upper
from ..errors import CertificationError
from ..io.numbers import arb_parts, rational_string
from ..kernel import DEFAULT_MAX_PREC, certify_kernel
from .compare import float_up
from .dplr_float64 import dplr_float64_module
from .layouts import KernelModule
from .semantics import diagonal_arrays, diagonal_module, dplr_module

#: the certificate's name for kernels certified on float64 disks
FLOAT64_ARITHMETIC = "float64 midpoint-radius"
#: relative accuracy asked for when no eps is given: eps = DEFAULT_REL_EPS * max|K|
DEFAULT_REL_EPS = 1e-13
START_PREC = 96
#: bits of a DPLR kernel's ball inputs beyond log2(max|K|/eps) (``input_prec``)
INPUT_GUARD_BITS = 128


@dataclass
class ModuleKernels:
    """The certified kernels of one module (see the module docstring)."""

    prefix: str
    layout: str
    kind: str
    disc: str
    channels: int
    H: int
    N: int
    L: int
    assumed: dict
    settings: dict
    status: str
    reason: str = ""
    eps: float = math.nan
    max_rad: float = math.nan
    precision_bits: int = 0
    seconds: float = 0.0
    mid: np.ndarray | None = None
    rad: np.ndarray | None = None
    info: dict = field(default_factory=dict)
    #: lossless "p/q" strings of the enclosures (midpoint, radius) of the real kernel,
    #: present when some kernel was certified in balls (its eps may be below float64's reach)
    mid_exact: np.ndarray | None = None
    rad_exact: np.ndarray | None = None

    def entry(self) -> dict:
        """The module's entry of a model report (JSON-ready)."""
        return {"prefix": self.prefix, "layout": self.layout, "kind": self.kind, "disc": self.disc,
                "channels": self.channels, "H": self.H, "N": self.N, "L": self.L,
                "settings": dict(self.settings), "assumed": dict(self.assumed), "status": self.status,
                "reason": self.reason, "eps": self.eps, "max_rad": self.max_rad,
                "precision_bits": self.precision_bits}


def real_disk(x: acb) -> tuple[float, float]:
    """A float64 midpoint m and radius r with |t - m| <= r for every real t in x (the rule is
    ``arith.disk_convert.real_disk_of_ball``)."""
    return real_disk_of_ball(x)


def _targets(eps: float | None, mid: np.ndarray) -> np.ndarray:
    """Per kernel (the last axis of ``mid`` is l): eps, or DEFAULT_REL_EPS times the
    kernel's largest |midpoint| (per kernel, so the result does not depend on how heads
    are grouped; 2^-1000 for a kernel of zeros or a non-finite one)."""
    if eps is not None:
        return np.full(mid.shape[:-1], eps)
    with np.errstate(invalid="ignore"):
        scale = np.max(np.abs(mid), axis=-1, initial=0.0)
        return np.where((scale > 0) & np.isfinite(scale), DEFAULT_REL_EPS * scale, 2.0 ** -1000)


def _target(eps: float | None, mid: np.ndarray) -> float:
    """``_targets`` of one kernel."""
    return float(_targets(eps, np.asarray(mid)))


def _exact_parts(balls: list) -> tuple[list[str], list[str], float]:
    """The real parts' midpoints and radii as lossless strings, and the largest radius
    rounded up (the enclosures' own radii, before any rounding to float64)."""
    mids, rads, worst = [], [], 0.0
    for x in balls:
        re = x.real
        if not re.is_finite():
            return [], [], math.inf
        m, r = arb_parts(re, "kernel entry")
        mids.append(rational_string(m))
        rads.append(rational_string(r))
        with ctx.workprec(64):
            worst = max(worst, float_upper(re.rad()))
    return mids, rads, worst


def _diagonal_kernel(mod: KernelModule, h: int, c: int, L: int, eps: float | None,
                     max_prec: int) -> tuple:
    """One kernel of a diagonal module, the precision doubled until its balls' radii reach
    eps: (float64 mid, rad, target, bits, exact midpoint and radius strings)."""
    prec = START_PREC
    while True:
        dm = diagonal_module(mod, prec + 32, [h])
        with ctx.workprec(prec):  # the field's operations then skip their precision switches
            r = diagonal_kernel(BallField(prec), dm.lam[0], dm.dt[0], dm.B[0], dm.C[c][0], L,
                                mod.settings["disc"], dm.re_positive[0])
        if not r.ok and r.status != "undecided":
            raise _Refusal(f"channel {c}, head {h}: {r.reason or r.status}")
        mid = np.full(L, np.nan)
        rad = np.full(L, np.inf)
        exact, worst = ([], []), math.inf
        if r.ok:
            for l, x in enumerate(r.value):
                mid[l], rad[l] = real_disk(x)
            *exact, worst = _exact_parts(r.value)
        target = _target(eps, np.nan_to_num(mid))
        if worst <= target:
            return mid, rad, target, prec, tuple(exact)
        if 2 * prec > max_prec:
            raise _Refusal(f"channel {c}, head {h}: radius {worst:.3g} > eps {target:.3g} at the "
                           f"precision limit of {max_prec} bits")
        prec *= 2


class _Refusal(Exception):
    """A kernel that cannot be certified (the module is reported refused with the reason)."""


class _InputPrecision(_Refusal):
    """A refusal that inputs formed at more bits may lift (the ball run's "input-precision")."""


def input_prec(target: float | None, scale: float | None) -> int:
    """The bits at which a DPLR kernel's ball inputs are formed for an absolute ``target``
    on a kernel of about ``scale`` = max|K| (None: unknown): the module's set-up precision
    2 START_PREC, or log2(scale/target) + INPUT_GUARD_BITS when that is more, so the inputs
    are held well past the accuracy asked for (their radii reach the kernel amplified by
    the problem's conditioning; a run they still hold back is retried at twice the bits)."""
    base = 2 * START_PREC
    if target is None or not target > 0 or not math.isfinite(target):
        return base
    scale = scale if scale is not None and math.isfinite(scale) and scale > 0 else 1.0
    need = math.ceil(math.log2(scale) - math.log2(target)) + INPUT_GUARD_BITS
    return max(base, 32 * -(-need // 32))


def _dplr_kernel(model: DPLR, l: int, L: int, eps: float | None, max_prec: int, where: str,
                 arithmetic: str = "auto", prec: int = 2 * START_PREC):
    """One kernel of a DPLR module (step 1), through certify_kernel (``eps``: the absolute
    target, or None for the relative one; ``arithmetic`` "ball" keeps to ball arithmetic;
    ``prec``: the bits of the model's balls).  A run held back by the inputs' accuracy is
    refused with ``_InputPrecision``."""
    M = next_power_of_two(L)
    l = L if l is None else l
    c_tilde = None
    if l > 0 and l == M:
        c_tilde = model.C
    elif l > 0:
        back = c_from_c_tilde(BallField(prec), model, 1, l, model.C, method="dense-squaring")
        if not back.ok:
            raise _Refusal(f"{where}: the stored C~ for {l} points does not determine C "
                           f"({back.reason or back.status})")
        model = DPLR(Lambda=model.Lambda, P=model.P, Q=model.Q, B=model.B, C=back.value)
    try:
        ck, target = None, eps
        if target is None:
            # the relative target needs the kernel's scale: the float64 route gives both at
            # once; when its radius misses the target, the full certification runs
            if arithmetic != "ball":
                try:
                    ck = certify_kernel(model, 1, L, 2.0 ** 1000, c_tilde=c_tilde, counts=False, arithmetic="float64")
                    target = _target(None, ck.mid)
                    if not float(ck.rad.max()) <= target:
                        ck = None
                except CertificationError:
                    ck = None
            if target is None:
                rough = certify_kernel(model, 1, L, 1e-6, c_tilde=c_tilde, max_prec=max_prec, counts=False,
                                       arithmetic=arithmetic)
                target = _target(None, rough.mid)
        if ck is None:
            ck = certify_kernel(model, 1, L, target, c_tilde=c_tilde, max_prec=max_prec, counts=False,
                                arithmetic=arithmetic)
    except CertificationError as e:
        raise (_InputPrecision if e.status == "input-precision" else _Refusal)(f"{where}: {e}") from None
    exact = None
    # the ball and double-double routes' enclosures hold more than float64 midpoints can:
    # keep them losslessly (their radii are what eps bounds)
    if ck.balls is not None and ck.certificate.get("arithmetic", "ball") != FLOAT64_ARITHMETIC:
        mids, rads, _ = _exact_parts(list(ck.balls))
        exact = (mids, rads) if mids else None
    return (ck.mid.real.copy(), ck.rad.copy(), target, int(ck.certificate.get("precision_bits") or 0),
            ck.certificate.get("arithmetic", "ball"), exact)


def _diagonal_float64(mod: KernelModule, heads: list[int], channels: int, L: int, tight: bool = False):
    """Every kernel of ``heads`` at once on float64 disks: (mid, rad) of shape
    (channels, len(heads), L) and, per kernel, (its largest radius, whether its midpoints'
    sum is finite), or None when the route cannot run (a status other than ok
    in the terms, or a disk outside the range of its bounds, or a floating-point
    environment other than the one its bounds assume: ``arith.fpenv``).

    The parameters are double-double disks (each distinct stored number enclosed once),
    the weights and nodes come from ``diagonal_terms`` run once over all of them
    (``DDArrayField``), the powers ``z^e`` from double-double squarings.  ``tight``: the
    Vandermonde sum by ``vandermonde_tight`` (radii per entry, some 2u of the terms' sum in
    place of some 100u; the forward pass's kernels)."""
    if not fpenv.probe().ok:
        return None
    try:
        p = diagonal_arrays(mod, heads)
        shape = (len(heads), channels, p.lam.rh.shape[1])   # batch order (head, channel)
        per_head = lambda d: _broadcast(DD(*(a[:, None, :] for a in _parts(d))), shape)
        C = _broadcast(DD(*(np.swapaxes(a, 0, 1) for a in _parts(p.C))), shape)
        t = diagonal_terms_arrays(DDArrayField(), per_head(p.lam), per_head(p.dt), per_head(p.B), C, L,
                                  mod.settings["disc"], np.broadcast_to(p.re_positive[:, None, :], shape))
        if not t.ok:
            return None
        W, S, z, factor = t.value
        flat = lambda d: d.reshape(len(heads) * channels, shape[2])
        rows: dict = {}
        if tight:
            mid, rad = vandermonde_tight(flat(W), flat(S), flat(z), L, factor, rows)
        else:
            mid, rad = vandermonde_midrad(disks_of(flat(W)), disks_of(flat(S)), dd_powers(flat(z)), L, factor, rows)
    except (RangeError, ArithmeticError):
        return None
    # batch order is (head, channel): back to (channel, head, L)
    mid = mid.reshape(len(heads), channels, L).transpose(1, 0, 2)
    rad = rad.reshape(len(heads), channels, L).transpose(1, 0, 2)
    back = lambda a: a.reshape(len(heads), channels).T
    return mid, rad, (back(rows["max_rad"]), back(rows["finite"]))


def _parts(d: DD) -> tuple:
    return d.rh, d.rl, d.ih, d.il, d.rad


def _broadcast(d: DD, shape: tuple) -> DD:
    return DD(*(np.broadcast_to(a, shape) for a in _parts(d)))


def _kernels(mod: KernelModule, L: int, eps: float | None, max_prec: int, heads: list[int],
             progress, arithmetic: str = "auto") -> ModuleKernels:
    res = _result(mod, L, mod.settings["disc"] if mod.kind == "diag" else "bilinear")
    channels = module_channels(mod)
    mid = np.empty((channels, len(heads), L))   # every row is set below
    rad = np.empty_like(mid)
    targets, bits, arith, exact = [], 0, set(), {}
    refused = []
    fast = None
    if arithmetic != "ball":
        if mod.kind != "dplr":
            fast = _diagonal_float64(mod, heads, channels, L, *([True] if arithmetic == "tight" else []))
        else:
            fast = dplr_float64_module(mod, heads, L, 2 * START_PREC)
    if arithmetic == "tight":   # a DPLR module's routes are the usual ones
        arithmetic = "auto"
    models: dict[tuple, Any] = {}    # the ball models of a head by bits, formed when a kernel needs them

    def model(c: int, i: int, prec: int):
        if (i, prec) not in models:
            models[i, prec] = dplr_module(mod, prec, [heads[i]])
        return models[i, prec].models[c][0], models[i, prec].l_kernel

    def dplr_kernel(c: int, i: int, h: int, target: float | None) -> tuple:
        """The kernel from inputs formed at ``input_prec`` bits, twice as many while they
        hold the run back (up to max_prec)."""
        scale = None
        if fast is not None and np.all(np.isfinite(fast[0][c, i])):
            scale = float(np.max(np.abs(fast[0][c, i]), initial=0.0))
        prec = input_prec(target, scale)
        while True:
            try:
                return _dplr_kernel(*model(c, i, prec), L, target, max_prec, f"channel {c}, head {h}", arithmetic,
                                    prec)
            except _InputPrecision:
                if 2 * prec > max_prec:
                    raise
                prec *= 2
    accepted = np.zeros((channels, len(heads)), dtype=bool)
    if fast is not None and L > 0:
        # the kernels the float64 pass certified, taken in one sweep (the rule of _target)
        fmid, frad, *rows = fast
        target = _targets(eps, fmid)
        with np.errstate(invalid="ignore", over="ignore"):
            # a row's sum is finite only if every entry is (a finite row whose sum overflows
            # is only sent to the other routes); the diagonal pass reports both per row
            fmax, finite = rows[0] if rows else (np.max(frad, axis=2), np.isfinite(np.sum(fmid, axis=2)))
            accepted = (fmax <= target) & finite
        if accepted.all():  # the usual case: the pass's arrays themselves
            mid, rad = np.ascontiguousarray(fmid, dtype=np.float64), np.ascontiguousarray(frad, dtype=np.float64)
        else:
            mid[accepted], rad[accepted] = fmid[accepted], frad[accepted]
        if accepted.any():
            targets.append(float(np.max(target[accepted])))
            bits, arith = 53, {FLOAT64_ARITHMETIC}
    for i, h in enumerate(heads):
        for c in range(channels):
            if accepted[c, i]:
                continue
            try:
                if mod.kind != "dplr":
                    m, r, t, p, e = _diagonal_kernel(mod, h, c, L, eps, max_prec)
                    a = "ball"
                else:
                    # the float64 pass's midpoints give the relative target without a rerun
                    known = eps if eps is not None or fast is None or not np.all(np.isfinite(fast[1][c, i])) \
                        else _target(None, fast[0][c, i])
                    m, r, t, p, a, e = dplr_kernel(c, i, h, known)
            except _Refusal as why:
                # this kernel is reported; the others still finish (its disks say nothing: rad = inf)
                refused.append({"channel": c, "head": h, "reason": str(why)})
                mid[c, i], rad[c, i] = np.nan, np.inf
                continue
            mid[c, i], rad[c, i] = m, r
            if e is not None:
                exact[c, i] = e
            targets.append(t)
            bits, arith = max(bits, p), arith | {a}
        if progress:
            progress(f"{mod.prefix}: head {i + 1}/{len(heads)}")
    res.channels, res.H = channels, len(heads)
    res.mid, res.rad = mid, rad
    res.status = "ok" if not refused else "refused"
    if refused:
        res.reason = refused[0]["reason"] + (f" (and {len(refused) - 1} more)" if len(refused) > 1 else "")
        res.info["refused"] = refused
    res.eps = max(targets) if targets else 0.0
    if fast is not None and accepted.all() and rad.size:
        res.max_rad = float(fmax.max())   # the same rows
    else:
        res.max_rad = float(rad.max()) if rad.size else 0.0
    if exact:
        res.mid_exact, res.rad_exact = _exact_arrays(mid, rad, exact)
        res.max_rad = max(float_up(max(Fraction(x) for x in rows[1])) if rows[1] else 0.0
                          for rows in exact.values())
        res.max_rad = max([res.max_rad] + [float(rad[key].max()) for key in np.ndindex(rad.shape[:2])
                                           if key not in exact])
    res.precision_bits = bits
    res.info["arithmetic"] = sorted(arith)
    return res


def _exact_arrays(mid: np.ndarray, rad: np.ndarray, exact: dict) -> tuple[np.ndarray, np.ndarray]:
    """Lossless strings for every entry: the enclosures where the ball route certified,
    the float64 disks (exact binary numbers) elsewhere."""
    ms = np.empty(mid.shape, dtype=object)
    rs = np.empty(mid.shape, dtype=object)
    for key in np.ndindex(mid.shape[:2]):
        if key in exact:
            ms[key], rs[key] = exact[key]
        else:
            ms[key] = [rational_string(Fraction(float(v))) if np.isfinite(v) else "nan" for v in mid[key]]
            rs[key] = [rational_string(Fraction(float(v))) if np.isfinite(v) else "inf" for v in rad[key]]
    out = [a.astype(str) for a in (ms, rs)]
    return out[0], out[1]


def _result(mod: KernelModule, L: int, disc: str) -> ModuleKernels:
    return ModuleKernels(prefix=mod.prefix, layout=mod.layout, kind=mod.kind, disc=disc, channels=0, H=0, N=0,
                         L=L, assumed=dict(mod.assumed), settings=dict(mod.settings), status="running")


def certify_module(mod: KernelModule, L: int, eps: Any = None, *, max_prec: int = DEFAULT_MAX_PREC,
                   heads: list[int] | None = None, arithmetic: str = "auto",
                   progress: Callable[[str], None] | None = None) -> ModuleKernels:
    """Certify every (channel, head) kernel of a module at length L (``heads``: a subset).

    ``eps``: an absolute bound on every radius, or None for ``DEFAULT_REL_EPS`` times the
    largest |K| of each kernel.  Every kernel of the group goes first through the float64
    route, all at once (``arithmetic="ball"`` skips it); a kernel whose radius misses eps
    there is certified one at a time (DPLR: ``certify_kernel``, which tries double-double
    disks before balls; diagonal: balls).  ``arithmetic="tight"``: a diagonal module's
    float64 pass by ``vandermonde_tight`` (radii per entry, some 50 times smaller; the forward
    pass's kernels).  A module that cannot be certified comes back with
    ``status = "refused"`` and the reason; bad input raises ValueError.
    """
    if not isinstance(L, int) or isinstance(L, bool) or not 1 <= L <= 1 << 24:
        raise ValueError(f"L must be an integer in [1, 2^24], got {L!r}")
    if eps is not None:
        eps = float(eps)
        if not (eps > 0 and math.isfinite(eps)):
            raise ValueError(f"eps must be a positive finite number, got {eps!r}")
    H = module_heads(mod)
    heads = list(range(H)) if heads is None else list(heads)
    t0 = time.perf_counter()
    if arithmetic not in ("auto", "ball", "tight"):
        raise ValueError(f"arithmetic must be auto, ball or tight, got {arithmetic!r}")
    out = _kernels(mod, L, eps, max_prec, heads, progress, arithmetic)
    out.seconds = time.perf_counter() - t0
    out.N = int(np.asarray(mod.tensors["C"]).shape[-2]) * (1 if mod.layout == "annotated-s4" else 2)
    out.info["heads"] = heads
    return out


def module_channels(mod: KernelModule) -> int:
    """The number of output channels of a module (from C's shape)."""
    C = np.asarray(mod.tensors["C"])
    return 1 if mod.layout in ("s4d-minimal", "annotated-s4") or C.ndim != 4 else int(C.shape[0])


def module_heads(mod: KernelModule) -> int:
    """H, the number of heads of a module (from C's shape)."""
    C = np.asarray(mod.tensors["C"])
    if mod.layout == "annotated-s4":
        return 1 if C.ndim == 2 else int(C.shape[0])
    return int(C.shape[0] if mod.layout == "s4d-minimal" else C.shape[-3])
