"""Kernel files: the document, its digest, writing and reading.

Kernel file (JSON, ``"format": "s4cert.kernel/1"``)
===================================================

One JSON object with these keys::

    {
      "format": "s4cert.kernel/1",
      "problem": {
        "N": 2, "r": 1, "L": 8, "M": 8,          # sizes (M = least power of two >= L)
        "mode": "ball",                           # "ball" | "a-priori" | "exact"
        "eps": "1/1000000",                       # the tolerance, an exact rational
        "step": ["1/2", "0"],                     # a number (see below)
        "exact_inputs": true, "c_tilde_supplied": false,
        "model": {"Lambda": [num, ...],           # N numbers
                  "P": [[num, ...], ...],         # N rows of r numbers
                  "Q": [[num, ...], ...],         # N rows of r numbers
                  "B": [num, ...], "C": [num, ...]},
        "c_tilde": null                           # or N numbers (C~ as supplied)
      },
      "status": "ok",
      "kernel": {"source": "ball enclosure",      # what the disks are (see below)
                 "re": [str, ...], "im": [str, ...], "rad": [str, ...]},
      "certificate": {...},                       # see below
      "counts": {...},                            # operation and word counts of the filter
      "sha256": "hex digest"
    }

*Numbers* are lossless strings (see :mod:`s4cert.certs.io.numbers`).  A rational is written
``"p/q"`` (or ``"p"``); a number of the problem is a pair ``["re", "im"]`` of rationals,
or, when it is a ball (``acb`` or ``arb``, e.g. a certified HiPPO model), ``{"mid":
["re", "im"], "rad": ["rad_re", "rad_im"]}``: the exact (dyadic) midpoint and radii of
its real and imaginary parts, read back as the same ball (a radius that is not a
30-bit-mantissa dyadic, as no arb radius is, would be rounded up).  Integers of any
length are written and read in full.  Readers also accept the strings Python's
``Fraction`` reads exactly (``"0.375"``, ``"1e-3"``).

*Kernel.* Entry ``j`` is the disk ``{z : |z - (re_j + i im_j)| <= rad_j}`` (complex
modulus), which contains the true ``K_j``.  Ball mode: the full-precision midpoint of the
certified ball and an exact upper bound of ``sqrt(rad_re^2 + rad_im^2)``, so
``rad_j <= eps`` (source ``"ball enclosure"``).  Exact mode: the exact Gaussian rational
``K_j`` with ``rad_j = "0"`` (``"exact values"``).  A-priori mode: the rounded circuit
output with ``rad_j = eps`` when the certified kernel carries those exact values in
``ck.exact`` (``"rounded circuit outputs"``); otherwise the midpoint and disk radius of the
enclosure ``ck.balls[j]`` as in ball mode (``"enclosure of the rounded circuit outputs"``).

*Certificate.* ``ck.certificate`` as computed: ``mode``, ``routing``, ``precision_bits``
(null in exact mode), ``max_radius``; the filter constants ``b``, ``w``, ``s`` (upper
bounds), ``d`` (a lower bound), ``A_wt`` (one upper bound per Cauchy sum, keyed
``S[Ct,B]``, ``S[Ct,P<i>]``, ``S[Q<i>,B]``, ``S[Q<i>,P<k>]``), ``kappa``, ``partition``
(the j with lambda_j = -2/step), ``r``; for a-priori also ``T0``, ``V0``, ``D0`` (exact
rational strings), ``log2_K0``, ``log2_u``.  Floats are written by their shortest
round-trip decimal, which reads back as the same binary number; a non-finite float is
written ``"inf"``, ``"-inf"`` or ``"nan"``.

*Integrity.* ``sha256`` is the SHA-256 of the canonical JSON (sorted keys, separators
``","`` and ``":"``, ASCII) of every other key.  Any altered number changes it.

``save_kernel(..., npz=PATH)`` also writes ``mid`` (complex128) and ``rad`` (float64)
with ``|K_j - mid_j| <= rad_j`` (``save_npz`` writes only those).  Every write is atomic
(:mod:`s4cert.certs.io.atomic`): the data go to a temporary file in the same directory,
which is flushed, synced and renamed over the target; after a failure or an interrupt
the target is either the old file or absent, never half written.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from flint import acb, ctx

from ...algorithms.dft import next_power_of_two
from ...algorithms.s4.dplr import DPLR
from ...algorithms.s4.midrad import ARITHMETIC as FLOAT64_ARITHMETIC
from ...arith.ball import float_upper
from .atomic import atomic_write
from .numbers import (arb_parts, arb_point, decode_number, dyadic_bits, encode_number, exact_arb, json_int,
                      json_value, parse_rational, rational_string, read_json)

FORMAT = "s4cert.kernel/1"
MODES = ("ball", "a-priori", "exact")
_TOP_KEYS = ("problem", "status", "kernel", "certificate", "counts", "sha256")
_MODEL_KEYS = ("Lambda", "P", "Q", "B", "C")

#: what the kernel disks are, by mode (the ``kernel.source`` field)
SOURCES = {"ball": "ball enclosure", "exact": "exact values", "a-priori": "rounded circuit outputs",
           "a-priori enclosure": "enclosure of the rounded circuit outputs"}


# -- the document -------------------------------------------------------------------------

def _disk_radius(b: acb) -> Fraction:
    """An exact upper bound of sqrt(rad_re^2 + rad_im^2): the disk around the midpoint
    of the box b that contains b."""
    rr, ri = arb_point(b.real.rad()), arb_point(b.imag.rad())
    if rr == 0 or ri == 0:
        return rr + ri
    with ctx.workprec(64):
        return arb_point((exact_arb(rr) ** 2 + exact_arb(ri) ** 2).sqrt().upper())


def kernel_entries(ck: Any) -> tuple[list[Fraction], list[Fraction], list[Fraction], str]:
    """(re, im, rad, source) of the kernel disks of a CertifiedKernel, exactly."""
    mode = ck.problem.get("mode", ck.certificate.get("mode"))
    if mode == "exact" or (mode == "a-priori" and ck.exact is not None):
        if ck.exact is None or len(ck.exact) != ck.L:
            raise ValueError("the certified kernel lacks its exact values")
        rad = Fraction(0) if mode == "exact" else parse_rational(ck.problem["eps"], "eps")
        return ([Fraction(re) for re, _ in ck.exact], [Fraction(im) for _, im in ck.exact], [rad] * ck.L,
                SOURCES[mode])
    if ck.certificate.get("arithmetic") == FLOAT64_ARITHMETIC and mode == "ball":
        # the disks are the float64 midpoints and radii themselves (exact binary numbers)
        return ([Fraction(float(x.real)) for x in ck.mid], [Fraction(float(x.imag)) for x in ck.mid],
                [Fraction(float(r)) for r in ck.rad], SOURCES["ball"])
    if ck.balls is None or len(ck.balls) != ck.L:
        raise ValueError("the certified kernel lacks its enclosures (ck.balls)")
    re, im, rad = [], [], []
    for j, b in enumerate(ck.balls):
        (mr, _), (mi, _) = arb_parts(b.real, f"K[{j}]"), arb_parts(b.imag, f"K[{j}]")
        re.append(mr)
        im.append(mi)
        rad.append(_disk_radius(b))
    return re, im, rad, SOURCES["ball" if mode == "ball" else "a-priori enclosure"]


def kernel_document(ck: Any, model: DPLR, step: Any, c_tilde: Any = None) -> dict:
    """The kernel file's JSON object (with its digest) for a CertifiedKernel."""
    if not isinstance(model, DPLR):
        raise ValueError("model must be an algorithms.dplr.DPLR")
    p = ck.problem
    for key, val in (("N", model.N), ("r", model.r), ("L", ck.L)):
        if key in p and p[key] != val:
            raise ValueError(f"the model does not match the certified kernel: {key} = {val}, kernel has {p[key]}")
    if p.get("c_tilde_supplied") and c_tilde is None:
        raise ValueError("the kernel was certified from a supplied c_tilde: pass it as c_tilde=")
    if c_tilde is not None and not p.get("c_tilde_supplied", True):
        raise ValueError("the kernel was certified with C~ formed from C: do not pass c_tilde")
    if c_tilde is not None:
        c_tilde = np.asarray(c_tilde).tolist() if isinstance(c_tilde, np.ndarray) else list(c_tilde)
        if len(c_tilde) != model.N:
            raise ValueError(f"c_tilde: expected {model.N} entries, got {len(c_tilde)}")
    mode = p.get("mode", ck.certificate.get("mode"))
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    re, im, rad, source = kernel_entries(ck)
    enc = encode_number
    problem = {
        "N": model.N, "r": model.r, "L": ck.L, "M": next_power_of_two(ck.L), "mode": mode,
        "eps": rational_string(parse_rational(p["eps"], "eps")), "step": enc(step, "step"),
        "exact_inputs": bool(p.get("exact_inputs", False)), "c_tilde_supplied": c_tilde is not None,
        "model": {
            "Lambda": [enc(x, f"Lambda[{i}]") for i, x in enumerate(model.Lambda)],
            "P": [[enc(x, f"P[{i}][{k}]") for k, x in enumerate(row)] for i, row in enumerate(model.P)],
            "Q": [[enc(x, f"Q[{i}][{k}]") for k, x in enumerate(row)] for i, row in enumerate(model.Q)],
            "B": [enc(x, f"B[{i}]") for i, x in enumerate(model.B)],
            "C": [enc(x, f"C[{i}]") for i, x in enumerate(model.C)],
        },
        "c_tilde": None if c_tilde is None else [enc(x, f"c_tilde[{i}]") for i, x in enumerate(c_tilde)],
    }
    doc = {
        "format": FORMAT, "problem": problem, "status": ck.status,
        "kernel": {"source": source, "re": [rational_string(x) for x in re],
                   "im": [rational_string(x) for x in im], "rad": [rational_string(x) for x in rad]},
        "certificate": json_value(ck.certificate, "certificate"),
        "counts": json_value(ck.counts, "counts"),
    }
    doc["sha256"] = file_digest(doc)
    return doc


def file_digest(doc: dict) -> str:
    """SHA-256 of the canonical JSON of every key but ``sha256``."""
    body = {k: v for k, v in doc.items() if k != "sha256"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


# -- writing ------------------------------------------------------------------------------

def dumps_document(doc: dict, depth: int = 2) -> str:
    """JSON text with one line per key down to ``depth`` levels (values compact below)."""
    def fmt(v: Any, level: int, indent: str) -> str:
        if level >= depth or not isinstance(v, dict) or not v:
            return json.dumps(v, allow_nan=False, ensure_ascii=True)
        inner = indent + " "
        lines = [f"{inner}{json.dumps(k)}: {fmt(x, level + 1, inner)}" for k, x in v.items()]
        return "{\n" + ",\n".join(lines) + "\n" + indent + "}"
    return fmt(doc, 0, "") + "\n"


def _npz_bytes(mid: np.ndarray, rad: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, mid=np.asarray(mid, dtype=np.complex128), rad=np.asarray(rad, dtype=np.float64))
    return buf.getvalue()


def inputs_digest(model: DPLR, step: Any, c_tilde: Any = None) -> str:
    """SHA-256 of the problem's numbers (step, model, C~) encoded as a kernel file stores
    them: ``certify_kernel`` records it, ``save_kernel`` compares it."""
    enc = encode_number
    if c_tilde is not None:
        c_tilde = np.asarray(c_tilde).tolist() if isinstance(c_tilde, np.ndarray) else list(c_tilde)
    data = {"step": enc(step, "step"),
            "model": {key: [[enc(x, key) for x in row] if key in ("P", "Q") else enc(row, key)
                            for row in getattr(model, key)] for key in _MODEL_KEYS},
            "c_tilde": None if c_tilde is None else [enc(x, "c_tilde") for x in c_tilde]}
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode("ascii")).hexdigest()


def save_kernel(path: str, ck: Any, model: DPLR, step: Any, *, c_tilde: Any = None,
                npz: str | None = None) -> dict:
    """Write the kernel file (and, with ``npz``, the ``mid``/``rad`` arrays) atomically;
    returns the JSON object written.  ``c_tilde`` is required when the kernel was
    certified from a supplied C~.

    >>> import os, tempfile
    >>> from s4cert.certs.kernel import certify_kernel
    >>> m = DPLR([-1.0, -2.0], [0.5, 0.25], [1, 1], [1, -1])
    >>> ck = certify_kernel(m, 0.5, 4, 1e-12)
    >>> path = os.path.join(tempfile.mkdtemp(), "k.json")
    >>> save_kernel(path, ck, m, 0.5)["format"]
    's4cert.kernel/1'
    >>> load_kernel(path).digest_ok
    True
    """
    certified_for = getattr(ck, "inputs", None)
    if certified_for is not None and inputs_digest(*certified_for) != inputs_digest(model, step, c_tilde):
        raise ValueError("the certified kernel was computed for another model, step or c_tilde "
                         "(its inputs' digest differs): save it with the ones it was certified for")
    doc = kernel_document(ck, model, step, c_tilde)
    text = dumps_document(doc)
    items = [(os.fspath(path), text.encode("ascii"))]
    if npz is not None:
        items.insert(0, (os.fspath(npz), _npz_bytes(ck.mid, ck.rad)))
    atomic_write(items)
    return doc


def save_npz(path: str, ck: Any) -> None:
    """Write only the ``mid`` (complex128) and ``rad`` (float64) arrays of a certified
    kernel, atomically: ``|K_j - mid_j| <= rad_j``."""
    atomic_write([(os.fspath(path), _npz_bytes(ck.mid, ck.rad))])


# -- reading kernel files -----------------------------------------------------------------

@dataclass
class KernelFile:
    """A parsed kernel file.  ``mid[j]`` (exact (re, im)) and ``rad[j]`` (exact) give the
    disk that holds K_j; ``balls[j]`` is an acb at ``prec`` bits containing that disk;
    ``strings`` keeps the kernel's strings as stored and ``source`` says what the disks
    are.  ``model`` holds the problem's numbers exactly ((re, im) Fractions, or acb balls);
    ``step`` is a Fraction (or a ball).  ``digest_ok`` tells whether the stored digest
    matches the content."""

    path: str
    model: DPLR
    step: Any
    L: int
    eps: Fraction
    mode: str
    c_tilde: list | None
    status: str
    mid: list[tuple[Fraction, Fraction]]
    rad: list[Fraction]
    strings: dict
    balls: list
    prec: int
    certificate: dict
    counts: dict
    digest: str
    digest_ok: bool
    source: str = SOURCES["ball"]
    problem: dict = field(default_factory=dict)
    exact_inputs: bool = False

    @property
    def N(self) -> int:
        return self.model.N

    def to_numpy(self) -> tuple[np.ndarray, np.ndarray]:
        """float64 ``mid`` and ``rad`` with |K_j - mid_j| <= rad_j (rad rounded outward)."""
        mid = np.array([complex(float(a), float(b)) for a, b in self.mid], dtype=np.complex128)
        rad = np.empty(self.L)
        with ctx.workprec(self.prec + 64):
            for j, ((a, b), r, m) in enumerate(zip(self.mid, self.rad, mid)):
                d = acb(exact_arb(a - Fraction(m.real), prec=self.prec + 64),
                        exact_arb(b - Fraction(m.imag), prec=self.prec + 64))
                rad[j] = float_upper((abs(d) + exact_arb(r)).upper())
        return mid, rad


def _need(d: dict, key: str, where: str) -> Any:
    """d[key]; ValueError naming the key and where it was expected."""
    if not isinstance(d, dict) or key not in d:
        raise ValueError(f"missing key \"{key}\" in {where}")
    return d[key]


def _decode_step(v: Any) -> Any:
    """The stored step: a Fraction > 0, or a ball."""
    x = decode_number(v, "step")
    if isinstance(x, tuple):
        re, im = x
        if im != 0 or re <= 0:
            raise ValueError(f"step must be a real number > 0, got {re} + {im}i")
        return re
    return x


def _decode_model(m: dict, N: int, r: int) -> DPLR:
    """The DPLR model of ``problem.model``, its numbers exactly as stored."""
    ent = {}
    for key in _MODEL_KEYS:
        v = _need(m, key, "problem.model")
        if not isinstance(v, list) or len(v) != N:
            raise ValueError(f"problem.model.{key}: expected {N} entries")
        if key in ("P", "Q"):
            if any(not isinstance(row, list) or len(row) != r for row in v):
                raise ValueError(f"problem.model.{key}: expected {N} rows of {r} numbers")
            ent[key] = [[decode_number(x, f"{key}[{i}][{k}]") for k, x in enumerate(row)] for i, row in enumerate(v)]
        else:
            ent[key] = [decode_number(x, f"{key}[{i}]") for i, x in enumerate(v)]
    return DPLR(ent["Lambda"], ent["P"], ent["B"], ent["C"], Q=ent["Q"])


def _kernel_prec(mid: list) -> int:
    """Bits of the kernel balls: every stored midpoint exactly (at least 64), plus 64."""
    return max([64] + [dyadic_bits(x) for pair in mid for x in pair]) + 64


def load_kernel(path: Any) -> KernelFile:
    """Read a kernel file; ValueError naming the problem for a missing file, bad JSON, a
    wrong format tag, a missing key or a bad number string.  An altered file still loads:
    ``digest_ok`` is then False."""
    doc = read_json(path)
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: not a kernel file (the top level is not an object)")
    fmt = doc.get("format")
    if fmt != FORMAT:
        raise ValueError(f"{path}: wrong format tag {fmt!r} (expected {FORMAT!r})")
    for key in _TOP_KEYS:
        _need(doc, key, "the kernel file")
    pr = doc["problem"]
    N, r, L = (json_int(_need(pr, k, "problem"), f"problem.{k}") for k in ("N", "r", "L"))
    mode = _need(pr, "mode", "problem")
    if mode not in MODES:
        raise ValueError(f"problem.mode: expected one of {', '.join(MODES)}, got {mode!r}")
    eps = parse_rational(_need(pr, "eps", "problem"), "problem.eps")
    if eps <= 0:
        raise ValueError("problem.eps must be > 0")
    model = _decode_model(_need(pr, "model", "problem"), N, r)
    step = _decode_step(_need(pr, "step", "problem"))
    ct = _need(pr, "c_tilde", "problem")
    if ct is not None:
        if not isinstance(ct, list) or len(ct) != N:
            raise ValueError(f"problem.c_tilde: expected null or {N} numbers")
        ct = [decode_number(x, f"c_tilde[{i}]") for i, x in enumerate(ct)]
    kern = doc["kernel"]
    source = _need(kern, "source", "kernel")
    if source not in SOURCES.values():
        raise ValueError(f"kernel.source: unknown {source!r}")
    lists = {}
    for key in ("re", "im", "rad"):
        v = _need(kern, key, "kernel")
        if not isinstance(v, list) or len(v) != L:
            raise ValueError(f"kernel.{key}: expected {L} strings")
        lists[key] = [parse_rational(s, f"kernel.{key}[{j}]") for j, s in enumerate(v)]
    if any(x < 0 for x in lists["rad"]):
        raise ValueError("kernel.rad: a radius is negative")
    mid = list(zip(lists["re"], lists["im"]))
    prec = _kernel_prec(mid)
    balls = [acb(exact_arb(a, rr, prec), exact_arb(b, rr, prec)) for (a, b), rr in zip(mid, lists["rad"])]
    cert, counts = doc["certificate"], doc["counts"]
    if not isinstance(cert, dict) or not isinstance(counts, dict):
        raise ValueError("certificate and counts must be objects")
    try:
        ok = isinstance(doc["sha256"], str) and file_digest(doc) == doc["sha256"]
    except ValueError:
        ok = False
    return KernelFile(os.fspath(path), model, step, L, eps, mode, ct, doc["status"], mid, lists["rad"],
                      {k: list(kern[k]) for k in ("re", "im", "rad")}, balls, prec, cert, counts,
                      str(doc["sha256"]), ok, source, pr, bool(pr.get("exact_inputs", False)))
