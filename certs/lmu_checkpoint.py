"""The audit of the LMU arrays a checkpoint holds (``s4cert lmu-audit --checkpoint``).

:func:`audit_lmu_checkpoint` reads a ``.pt``, ``.ckpt``, safetensors or npz file through
the torch-free readers (:func:`~.checkpoint.reader.read_checkpoint`: nothing stored in the
file is run), finds every LMU module by the names of its tensors at any prefix, and
certifies, for each array the LMU reference constructs, an interval for the max error of
the stored array (read exactly) against the exact mathematics it approximates:

* ``A``, ``B``: the ZOH discretization ``Abar = e^A``, ``Bbar = int_0^1 e^{As} ds B`` of
  the LegT system at ``theta``;
* ``H`` (``LMUFFT``): ``H[:, t] = Abar^t Bbar`` for ``t < seq_len``;
* ``fft_H`` (``LMUFFT``): ``numpy.fft.rfft(H, n = 2 seq_len)`` of that exact ``H``;

with intervals for ``max |exact|`` and the relative error, each at most 1/1000 of its
value wide (the precision is raised until so).  A stored ``A`` or ``B`` counts as
*learned* when it is not the float32 rounding of the exact ZOH matrix (see
:data:`LEARNED_CRITERION`); its distance from the ZOH matrix is then given, and the
impulse response certified is that of the stored matrices.  Proofs:
proofs/lmu_checkpoint.md.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from flint import arb, ctx

from ..algorithms.models.hippo import read_theta
from ..algorithms.models.lmu_audit import (StoredError, certified_impulse_response, exact_rfft,
                                           float32_neighbours, float64_mid_rad, stored_error,
                                           stored_impulse_response)
from ..algorithms.models.lmu_memory import zoh_certified
from ..arith.ball import float_lower, float_upper
from .checkpoint.reader import Checkpoint, read_checkpoint
from .checkpoint.runner import npz_bytes
from .errors import CertificationError
from .kernel import DEFAULT_MAX_PREC
from .io.atomic import atomic_write

FORMAT = "s4cert.lmu-audit/1"
#: how a stored A or B is told constructed from learned (a state dict does not say which
#: tensors are parameters)
LEARNED_CRITERION = ("A (or B) counts as constructed when every stored entry is one of the two "
                     "float32 numbers nearest to the exact ZOH entry at theta (the float32 rounding of "
                     "any approximation closer than a float32 step, as the reference's cast of scipy's "
                     "float64 matrices is), and as learned otherwise")
#: an LMUCell's tensors (the recurrent LMU holds them under ``cell.``)
CELL_NAMES = ("e_x", "e_h", "e_m", "W_x", "W_h", "W_m", "A", "B")
#: an LMUFFT's tensors, besides its two linear layers ``W_u`` and ``W_h``
FFT_NAMES = ("A", "B", "H", "fft_H")
#: impulse response length when neither --length nor a seq_len gives one
DEFAULT_LENGTH = 1000
#: every interval is at most 1/TIGHTNESS of its lower end wide
TIGHTNESS = 1000
START_PREC = 128
MAX_PREC = DEFAULT_MAX_PREC


# -- finding the modules ---------------------------------------------------------------------

@dataclass
class LMUModule:
    """An LMU module found in a state dict: ``prefix`` (its own, ``""`` at the top),
    ``cls`` (``"LMU"``, ``"LMUCell"`` or ``"LMUFFT"``), ``keys`` (``"A"``, ``"B"`` and for
    ``LMUFFT`` ``"H"``, ``"fft_H"`` -> state dict key), sizes from the shapes."""

    prefix: str
    cls: str
    keys: dict[str, str]
    memory_size: int
    seq_len: int | None = None

    @property
    def label(self) -> str:
        return self.prefix.rstrip(".") or "(top level)"


def _shape(tensors: dict, key: str, want: tuple, kind: str = "f") -> np.ndarray:
    a = tensors[key]
    if a.shape != want:
        raise ValueError(f"{key}: expected shape {want}, got {a.shape}")
    if a.dtype.kind != kind:
        raise ValueError(f"{key}: expected {'real' if kind == 'f' else 'complex'} floats, got dtype {a.dtype}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{key}: entries must be finite")
    return a


def _memory_size(tensors: dict, p: str) -> int:
    A = tensors[p + "A"]
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] < 1:
        raise ValueError(f"{p}A: expected a square matrix, got shape {A.shape}")
    N = A.shape[0]
    _shape(tensors, p + "A", (N, N))
    _shape(tensors, p + "B", (N, 1))
    return N


def _fft_module(tensors: dict, p: str) -> LMUModule | None:
    if not all(p + n in tensors for n in FFT_NAMES):
        return None
    if not all(any(k.startswith(f"{p}{lin}.") for k in tensors) for lin in ("W_u", "W_h")):
        return None
    N = _memory_size(tensors, p)
    H = tensors[p + "H"]
    if H.ndim != 2 or H.shape[0] != N or H.shape[1] < 1:
        raise ValueError(f"{p}H: expected shape ({N}, seq_len), got {H.shape}")
    S = H.shape[1]
    _shape(tensors, p + "H", (N, S))
    _shape(tensors, p + "fft_H", (N, S + 1), "c")
    return LMUModule(p, "LMUFFT", {n: p + n for n in FFT_NAMES}, N, S)


def _cell_module(tensors: dict, p: str) -> LMUModule | None:
    if not all(p + n in tensors for n in CELL_NAMES):
        return None
    N = _memory_size(tensors, p)
    e_m, W_m = tensors[p + "e_m"], tensors[p + "W_m"]
    if e_m.shape != (1, N) or W_m.ndim != 2 or W_m.shape[1] != N:
        raise ValueError(f"{p}e_m, {p}W_m: expected shapes (1, {N}) and (hidden, {N}), "
                         f"got {e_m.shape} and {W_m.shape}")
    if p == "cell." or p.endswith(".cell."):
        return LMUModule(p[: -len("cell.")], "LMU", {"A": p + "A", "B": p + "B"}, N)
    return LMUModule(p, "LMUCell", {"A": p + "A", "B": p + "B"}, N)


def find_lmu_modules(tensors: dict[str, np.ndarray]) -> list[LMUModule]:
    """Every LMU module of a flat state dict, by its tensor names at any prefix: an
    ``LMUCell`` (``e_x, e_h, e_m, W_x, W_h, W_m, A, B``; inside an ``LMU`` as ``cell.``) or
    an ``LMUFFT`` (``A, B, H, fft_H`` and the linear layers ``W_u.*``, ``W_h.*``).
    ValueError for a module whose shapes do not fit together."""
    found = []
    for key in sorted(tensors):
        if key != "A" and not key.endswith(".A"):
            continue
        p = key[:-1]
        mod = _fft_module(tensors, p) or _cell_module(tensors, p)
        if mod is not None:
            found.append(mod)
    return found


def recorded_thetas(hyper: Any) -> set[Fraction]:
    """The positive numbers stored under a key ``theta`` anywhere in a checkpoint's
    ``hyper_parameters`` (read exactly)."""
    found: set[Fraction] = set()
    todo = [(hyper, 0)]
    while todo:
        x, depth = todo.pop()
        if depth > 64:
            continue
        if isinstance(x, dict):
            for k, v in x.items():
                if k == "theta" and isinstance(v, (int, float)) and not isinstance(v, bool):
                    found.add(read_theta(v))
                todo.append((v, depth + 1))
        elif isinstance(x, list):
            todo.extend((v, depth + 1) for v in x)
    return found


def resolve_theta(theta: Any, checkpoint: Checkpoint, path: str) -> Fraction:
    """theta from the argument or the file's ``hyper_parameters``; ValueError when it is
    missing, when the file records several, or when the two disagree."""
    recorded = recorded_thetas(checkpoint.hyper_parameters)
    if len(recorded) > 1:
        raise ValueError(f"{path}: the hyper_parameters record several theta values "
                         f"({', '.join(sorted(str(t) for t in recorded))}); cannot tell which module has which")
    if theta is None:
        if not recorded:
            raise ValueError(f"{path}: theta is not recorded in the file; give it (--theta T)")
        return recorded.pop()
    th = read_theta(theta)
    if recorded and th not in recorded:
        raise ValueError(f"{path}: theta {th} contradicts the theta {recorded.pop()} recorded in the "
                         "file's hyper_parameters")
    return th


@dataclass
class LMUCheckpoint:
    """What :func:`read_lmu_checkpoint` found: the file's tensors, its LMU modules, theta
    (exact) and the impulse response length of each module."""

    path: str
    tensors: dict[str, np.ndarray]
    modules: list[LMUModule]
    theta: Fraction
    lengths: list[int]


def read_lmu_checkpoint(path: Any, theta: Any = None, length: int | None = None) -> LMUCheckpoint:
    """Read a checkpoint, find its LMU modules and settle theta and the lengths (ValueError,
    one line, for a file with no LMU module, a missing or contradicted theta)."""
    path = str(path)
    ck = read_checkpoint(path)
    modules = find_lmu_modules(ck.tensors)
    if not modules:
        raise ValueError(f"{path}: no LMU module among its {len(ck.tensors)} tensors (an LMUCell holds "
                         f"{', '.join(CELL_NAMES)}; an LMUFFT {', '.join(FFT_NAMES)}, W_u, W_h)")
    th = resolve_theta(theta, ck, path)
    if length is not None and (isinstance(length, bool) or not isinstance(length, int) or length < 1):
        raise ValueError(f"length must be an integer >= 1, got {length!r}")
    lengths = [length or m.seq_len or DEFAULT_LENGTH for m in modules]
    return LMUCheckpoint(path, ck.tensors, modules, th, lengths)


# -- intervals --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Interval:
    """``lo <= value <= hi`` (floats rounded outward from the exact bounds)."""

    lo: float
    hi: float

    def tight(self) -> bool:
        """Whether the width is at most 1/TIGHTNESS of the lower end (so of the value)."""
        return self.lo > 0 and (Fraction(self.hi) - Fraction(self.lo)) * TIGHTNESS <= Fraction(self.lo)

    def pair(self) -> list[float]:
        return [self.lo, self.hi]


def _interval(lo: arb, hi: arb) -> Interval:
    return Interval(max(0.0, float_lower(lo)), float_upper(hi))


@dataclass
class BufferAudit:
    """One stored array: ``learned`` (A, B only), and either ``max_error``, ``max_abs``,
    ``relative`` (constructed) or ``distance`` (learned: max |stored - ZOH|)."""

    key: str
    learned: bool
    max_error: Interval
    max_abs: Interval
    relative: Interval

    def tight(self) -> bool:
        if self.learned:
            return self.max_error.tight()
        return self.max_error.tight() and self.max_abs.tight() and self.relative.tight()

    def entry(self) -> dict:
        if self.learned:
            return {"learned": True, "distance_from_zoh": self.max_error.pair()}
        return {"learned": False, "max_error": self.max_error.pair(), "max_abs": self.max_abs.pair(),
                "relative": self.relative.pair()}


def _buffer(key: str, err: StoredError, learned: bool) -> BufferAudit:
    rel_lo = err.error_lo / err.abs_hi if err.abs_hi > 0 else arb(0)
    rel_hi = err.error_hi / err.abs_lo if err.abs_lo > 0 else arb("inf")
    return BufferAudit(key, learned, _interval(err.error_lo, err.error_hi),
                       _interval(err.abs_lo, err.abs_hi), _interval(rel_lo, rel_hi))


# -- the audit of one module ---------------------------------------------------------------------

@dataclass
class ModuleAudit:
    """The audit of one module: its buffers, the precision (bits) that made every interval
    tight, and the certified impulse response (``mid``/``rad`` float64, ``[N, length]``, with
    ``|H[i, t] - mid[i, t]| <= rad[i, t]``) of the exact ZOH system (``source = "zoh"``) or,
    when A or B is learned, of the stored matrices (``"stored"``)."""

    module: LMUModule
    theta: Fraction
    precision: int
    buffers: dict[str, BufferAudit]
    mid: np.ndarray
    rad: np.ndarray
    source: str

    @property
    def learned(self) -> bool:
        return any(b.learned for b in self.buffers.values())

    def max_radius(self) -> float:
        return float(self.rad.max())

    def entry(self) -> dict:
        m = self.module
        return {"prefix": m.prefix, "class": m.cls, "memory_size": m.memory_size,
                "theta": float(self.theta), "theta_exact": str(self.theta), "seq_len": m.seq_len,
                "precision": self.precision,
                "buffers": {name: b.entry() for name, b in self.buffers.items()},
                "impulse_response": {"length": int(self.mid.shape[1]), "max_radius": self.max_radius(),
                                     "of": "stored A, B" if self.source == "stored" else "exact ZOH"}}


def _buffers_at(mod: LMUModule, tensors: dict, theta: Fraction, prec: int
                ) -> tuple[dict[str, BufferAudit] | None, Any]:
    """The buffers' audits at ``prec`` bits (None when a learned test is undecided), and the
    certified H enclosure of an LMUFFT (else None)."""
    enc = None
    if mod.cls == "LMUFFT":
        enc = certified_impulse_response(mod.memory_size, theta, mod.seq_len, prec)
        Ad, Bd = enc.Ad, enc.Bd
    else:
        Ad, Bd = zoh_certified(mod.memory_size, theta, prec)
    out = {}
    with ctx.workprec(prec):
        for name, exact in (("A", Ad.entries()), ("B", Bd.entries())):
            stored = tensors[mod.keys[name]]
            constructed = float32_neighbours(stored, exact)
            if constructed is None:
                return None, enc
            out[name] = _buffer(mod.keys[name], stored_error(stored, exact), not constructed)
        if enc is not None:
            out["H"] = _buffer(mod.keys["H"], stored_error(tensors[mod.keys["H"]], enc.balls.entries()), False)
            spectrum = exact_rfft(enc.balls, 2 * mod.seq_len)
            out["fft_H"] = _buffer(mod.keys["fft_H"], stored_error(tensors[mod.keys["fft_H"]], spectrum), False)
    return out, enc


def _impulse(mod: LMUModule, tensors: dict, theta: Fraction, length: int, learned: bool,
             enc: Any) -> tuple[np.ndarray, np.ndarray, str]:
    if learned:
        balls, prec = stored_impulse_response(tensors[mod.keys["A"]], tensors[mod.keys["B"]], length)
        mid, rad = float64_mid_rad(balls, prec)
    else:
        if enc is None or enc.shape[1] != length:
            enc = certified_impulse_response(mod.memory_size, theta, length, START_PREC)
        mid, rad = float64_mid_rad(enc.balls, enc.prec)
    if not np.all(np.isfinite(rad)):
        raise CertificationError(f"{mod.label}: the impulse response leaves the float64 range "
                                 f"within {length} steps")
    return mid, rad, "stored" if learned else "zoh"


def audit_module(mod: LMUModule, tensors: dict, theta: Fraction, length: int,
                 max_prec: int = MAX_PREC) -> ModuleAudit:
    """Audit one module, doubling the precision from START_PREC until every interval is
    tight (CertificationError past ``max_prec``)."""
    prec = START_PREC
    while True:
        buffers, enc = _buffers_at(mod, tensors, theta, prec)
        if buffers is not None and all(b.tight() for b in buffers.values()):
            break
        if prec * 2 > max_prec:
            what = ("cannot tell whether A and B are the float32 rounding of the ZOH matrices"
                    if buffers is None else "the intervals are not 1/1000 of their values wide")
            raise CertificationError(f"{mod.label}: {what} at {prec} bits; raise max_prec (--max-prec)",
                                     status="precision-limit")
        prec *= 2
    learned = buffers["A"].learned or buffers["B"].learned
    mid, rad, source = _impulse(mod, tensors, theta, length, learned, enc)
    return ModuleAudit(mod, theta, prec, buffers, mid, rad, source)


# -- the report ---------------------------------------------------------------------------------

@dataclass
class LMUCheckpointReport:
    """The audit of every LMU module of a checkpoint.  :meth:`document` is the
    ``s4cert.lmu-audit/1`` JSON document; :meth:`kernel_arrays` the impulse responses
    (``<prefix>mid``, ``<prefix>rad``); :meth:`save` writes either, atomically."""

    path: str
    modules: list[ModuleAudit] = field(default_factory=list)

    def document(self) -> dict:
        return {"format": FORMAT, "file": self.path, "learned_criterion": LEARNED_CRITERION,
                "modules": [m.entry() for m in self.modules]}

    def kernel_arrays(self) -> dict[str, np.ndarray]:
        arrays: dict[str, np.ndarray] = {}
        for m in self.modules:
            arrays[m.module.prefix + "mid"] = m.mid
            arrays[m.module.prefix + "rad"] = m.rad
        return arrays

    def save(self, out: str | None = None, kernels: str | None = None) -> None:
        items = []
        if out:
            items.append((out, (json.dumps(self.document(), indent=1, allow_nan=False) + "\n").encode()))
        if kernels:
            items.append((kernels, npz_bytes(self.kernel_arrays())))
        if items:
            atomic_write(items)


def audit_lmu_checkpoint(path: Any, theta: Any = None, length: int | None = None, *,
                         max_prec: int = MAX_PREC) -> LMUCheckpointReport:
    """Audit every LMU module of the checkpoint at ``path`` (see the module documentation).

    ``theta``: the LMU window (a number read exactly); default: the file's
    ``hyper_parameters``.  ``length``: the impulse response length (default the module's
    seq_len, else 1000).  ``path`` may also be what :func:`read_lmu_checkpoint` returned (its
    theta and lengths are then used).  ValueError (one line) for an unreadable file, no LMU module, a
    missing or contradicted theta; CertificationError if the intervals cannot be made
    tight within ``max_prec`` bits (default, as for every command, 65536).

    >>> import os, tempfile
    >>> from s4cert.algorithms.models.lmu_memory import state_space_matrices
    >>> A, B = (m.astype(np.float32) for m in state_space_matrices(3, 4))
    >>> cell = {"e_x": np.zeros((1, 1)), "e_h": np.zeros((1, 2)), "e_m": np.zeros((1, 3)),
    ...         "W_x": np.zeros((2, 1)), "W_h": np.zeros((2, 2)), "W_m": np.zeros((2, 3))}
    >>> d = tempfile.TemporaryDirectory(); f = os.path.join(d.name, "lmu.npz")
    >>> np.savez(f, **{"cell." + k: v for k, v in cell.items()}, **{"cell.A": A, "cell.B": B})
    >>> m = audit_lmu_checkpoint(f, theta=4, length=10).document()["modules"][0]
    >>> m["class"], m["buffers"]["A"]["learned"], m["impulse_response"]["length"]
    ('LMU', False, 10)
    >>> d.cleanup()
    """
    plan = path if isinstance(path, LMUCheckpoint) else read_lmu_checkpoint(path, theta, length)
    report = LMUCheckpointReport(plan.path)
    for mod, L in zip(plan.modules, plan.lengths):
        report.modules.append(audit_module(mod, plan.tensors, plan.theta, L, max_prec))
    return report


__all__ = ["FORMAT", "LEARNED_CRITERION", "LMUCheckpoint", "LMUCheckpointReport", "LMUModule", "ModuleAudit",
           "audit_lmu_checkpoint", "find_lmu_modules", "read_lmu_checkpoint"]
