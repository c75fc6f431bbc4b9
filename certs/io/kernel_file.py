"""Kernel files: the document, its digest, writing and reading, in two formats.

``save_kernel(path, ...)`` writes the JSON format below, or, when ``path`` ends in
``.npz`` (any case), the binary format ``s4cert.kernel.npz/1`` of
:mod:`s4cert.certs.io.kernel_npz` (the same problem, certificate and counts, the kernel's
disks as raw arrays: lossless, for large kernels).  ``load_kernel`` reads either, told
apart by content.  Both store the exact disks of :mod:`s4cert.certs.io.kernel_disks`, so
the JSON file and the binary file of one kernel hold the same disks; a ``KernelFile``
makes its per-entry Fractions (``mid``, ``rad``, ``balls``) only when asked for, and
``max_radius``, ``to_numpy`` and ``disks`` answer from the arrays.

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
``rad_j <= eps`` (source ``"ball enclosure"``); on the float64 route the float64 midpoint
and radius themselves, and on the double-double and triple-double routes the exact sum of
the midpoint's parts and the route's radius (``kernel_disks``).  Exact mode: the exact Gaussian rational
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
from functools import cached_property
from typing import Any, Iterator

import numpy as np
from flint import acb

from ...algorithms.dft import next_power_of_two
from ...algorithms.s4.dplr import DPLR
from .atomic import atomic_write
from .kernel_disks import SOURCES, KernelDisks, disks_of
from .kernel_record import MODEL_KEYS, MODES, decode_record, kernel_prec, need
from .kernel_npz import NPZ_FORMAT, is_npz, npz_kernel_bytes, read_npz_kernel
from .numbers import encode_number, exact_arb, json_value, parse_rational, rational_string, read_json, short_text

FORMAT = "s4cert.kernel/1"

#: the file name ending that selects the binary format (``kernel_npz``) on writing
NPZ_SUFFIX = ".npz"


# -- the document -------------------------------------------------------------------------

def kernel_entries(ck: Any) -> tuple[list[Fraction], list[Fraction], list[Fraction], str]:
    """(re, im, rad, source) of the kernel disks of a CertifiedKernel, exactly (a
    Fraction per entry: for small kernels; the files are written from ``disks_of``)."""
    disks = disks_of(ck)
    re, im, rad = disks.exact_lists()
    return re, im, rad, disks.source


def kernel_record(ck: Any, model: DPLR, step: Any, c_tilde: Any = None) -> dict:
    """The keys both formats share (problem, status, certificate, counts) for a
    CertifiedKernel, its model checked against the kernel."""
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
    return {"problem": problem, "status": ck.status, "certificate": json_value(ck.certificate, "certificate"),
            "counts": json_value(ck.counts, "counts")}


def kernel_document(ck: Any, model: DPLR, step: Any, c_tilde: Any = None, *,
                    disks: KernelDisks | None = None) -> dict:
    """The kernel file's JSON object (with its digest) for a CertifiedKernel (``disks``:
    its ``disks_of``, when already at hand)."""
    record = kernel_record(ck, model, step, c_tilde)
    return _json_document(record, disks if disks is not None else disks_of(ck))


def _json_document(record: dict, disks: KernelDisks) -> dict:
    re, im, rad = disks.strings()
    doc = {"format": FORMAT, "problem": record["problem"], "status": record["status"],
           "kernel": {"source": disks.source, "re": re, "im": im, "rad": rad},
           "certificate": record["certificate"], "counts": record["counts"]}
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


def _npz_bytes(mid: np.ndarray, rad: np.ndarray) -> memoryview:
    buf = io.BytesIO()
    np.savez(buf, mid=np.asarray(mid, dtype=np.complex128), rad=np.asarray(rad, dtype=np.float64))
    return buf.getbuffer()  # a view of the buffer: no copy


def inputs_digest(model: DPLR, step: Any, c_tilde: Any = None) -> str:
    """SHA-256 of the problem's numbers (step, model, C~) encoded as a kernel file stores
    them: ``certify_kernel`` records it, ``save_kernel`` compares it."""
    enc = encode_number
    if c_tilde is not None:
        c_tilde = np.asarray(c_tilde).tolist() if isinstance(c_tilde, np.ndarray) else list(c_tilde)
    data = {"step": enc(step, "step"),
            "model": {key: [[enc(x, key) for x in row] if key in ("P", "Q") else enc(row, key)
                            for row in getattr(model, key)] for key in MODEL_KEYS},
            "c_tilde": None if c_tilde is None else [enc(x, "c_tilde") for x in c_tilde]}
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode("ascii")).hexdigest()


def binary_name(path: Any) -> bool:
    """Whether a kernel file written to ``path`` is binary: its name ends in ``.npz``
    (any case); every other name gets the JSON format."""
    return os.fspath(path).lower().endswith(NPZ_SUFFIX)


def save_kernel(path: str, ck: Any, model: DPLR | None = None, step: Any = None, *, c_tilde: Any = None,
                npz: str | None = None, disks: KernelDisks | None = None) -> dict:
    """Write the kernel file (and, with ``npz``, the ``mid``/``rad`` arrays) atomically;
    returns the JSON object written (the binary file's header when ``path`` ends in
    ``.npz``: see ``kernel_npz``).  ``c_tilde`` is required when the kernel was
    certified from a supplied C~; ``disks`` is the kernel's ``disks_of``, when already
    at hand.  Without ``model`` and ``step``, the inputs ``ck`` records as certified
    (``ck.inputs``: model, step and c_tilde) are written.

    >>> import os, tempfile
    >>> from s4cert.certs.kernel import certify_kernel
    >>> m = DPLR([-1.0, -2.0], [0.5, 0.25], [1, 1], [1, -1])
    >>> ck = certify_kernel(m, 0.5, 4, 1e-12)
    >>> folder = tempfile.mkdtemp()
    >>> save_kernel(os.path.join(folder, "k.json"), ck, m, 0.5)["format"]
    's4cert.kernel/1'
    >>> save_kernel(os.path.join(folder, "k.npz"), ck, m, 0.5)["format"]
    's4cert.kernel.npz/1'
    >>> load_kernel(os.path.join(folder, "k.json")).digest_ok, load_kernel(os.path.join(folder, "k.npz")).digest_ok
    (True, True)
    """
    certified_for = getattr(ck, "inputs", None)
    if model is None or step is None:
        if model is not None or step is not None or c_tilde is not None or certified_for is None:
            raise ValueError("save_kernel: give both model and step, or neither (then the kernel's "
                             "recorded inputs, ck.inputs, are written)")
        model, step, c_tilde = certified_for
    if certified_for is not None and inputs_digest(*certified_for) != inputs_digest(model, step, c_tilde):
        raise ValueError("the certified kernel was computed for another model, step or c_tilde "
                         "(its inputs' digest differs): save it with the ones it was certified for")
    record = kernel_record(ck, model, step, c_tilde)
    disks = disks if disks is not None else disks_of(ck)
    if binary_name(path):
        data, doc = npz_kernel_bytes(record, disks)
    else:
        doc = _json_document(record, disks)
        data = dumps_document(doc).encode("ascii")
    items = [(os.fspath(path), data)]
    if npz is not None:
        items.insert(0, (os.fspath(npz), _npz_bytes(ck.mid, ck.rad)))
    atomic_write(items)
    return doc


def save_npz(path: str, ck: Any) -> None:
    """Write only the ``mid`` (complex128) and ``rad`` (float64) arrays of a certified
    kernel, atomically: ``|K_j - mid_j| <= rad_j``."""
    atomic_write([(os.fspath(path), _npz_bytes(ck.mid, ck.rad))])


# -- reading kernel files -----------------------------------------------------------------

def _eps_text(eps: Fraction) -> str:
    """eps in a repr: the float it is exactly, else :func:`short_text`."""
    f = float(eps) if abs(eps) < 2 ** 1000 else None
    return repr(f) if f is not None and f != 0 and Fraction(f) == eps else short_text(eps)


@dataclass
class KernelFile:
    """A parsed kernel file (either format).  ``disks`` holds the kernel's disks as the
    file states them (``kernel_disks``); ``mid[j]`` (exact (re, im)) and ``rad[j]``
    (exact) give the exact disk that holds K_j, ``balls[j]`` an acb at ``prec`` bits
    containing it, ``strings`` the exact disks' strings (as stored, in a JSON file),
    made when first asked for; ``source`` says what the disks are.  ``model`` holds the
    problem's numbers exactly ((re, im) Fractions, or acb balls); ``step`` is a Fraction
    (or a ball).  ``digest_ok`` tells whether the stored digest matches the content;
    ``file_format`` is the format tag."""

    path: str
    model: DPLR
    step: Any
    L: int
    eps: Fraction
    mode: str
    c_tilde: list | None
    status: str
    disks: KernelDisks
    certificate: dict
    counts: dict
    digest: str
    digest_ok: bool
    source: str = SOURCES["ball"]
    problem: dict = field(default_factory=dict)
    exact_inputs: bool = False
    file_format: str = FORMAT
    stored_strings: dict | None = field(default=None, repr=False)

    @property
    def N(self) -> int:
        return self.model.N

    def __repr__(self) -> str:
        """One short line: the file, its format and problem, not its numbers."""
        return (f"KernelFile({self.path!r}, {self.file_format}, mode={self.mode!r}, N={self.N}, "
                f"r={self.model.r}, L={self.L}, eps={_eps_text(self.eps)}, status={self.status!r}, "
                f"digest_ok={self.digest_ok})")

    @cached_property
    def _exact(self) -> tuple[list[Fraction], list[Fraction], list[Fraction]]:
        return self.disks.exact_lists()

    @cached_property
    def mid(self) -> list[tuple[Fraction, Fraction]]:
        re, im, _ = self._exact
        return list(zip(re, im))

    @cached_property
    def rad(self) -> list[Fraction]:
        return self._exact[2]

    @cached_property
    def strings(self) -> dict:
        if self.stored_strings is not None:
            return self.stored_strings
        re, im, rad = self.disks.strings()
        return {"re": re, "im": im, "rad": rad}

    @cached_property
    def prec(self) -> int:
        """Bits of the kernel balls: every exact midpoint exactly (at least 64), plus 64."""
        return kernel_prec(self.mid)

    @cached_property
    def balls(self) -> list:
        p = self.prec
        return [acb(exact_arb(a, r, p), exact_arb(b, r, p)) for (a, b), r in zip(self.mid, self.rad)]

    def max_radius(self) -> Fraction:
        """The largest radius of the exact disks, exactly (from the arrays where they are)."""
        return self.disks.max_radius()

    def stated_disks(self) -> Iterator[tuple[int, tuple[Fraction, Fraction], Fraction]]:
        """(j, centre, radius) of every disk the file states: the exact disks, and in a
        binary file also the float64 disks of the entries whose exact disk is tighter."""
        for j, (m, r) in enumerate(zip(self.mid, self.rad)):
            yield j, m, r
        if self.file_format == NPZ_FORMAT:
            d = self.disks
            for j in np.flatnonzero(~d.plain()).tolist():
                c = d.mid[j]
                yield j, (Fraction(float(c.real)), Fraction(float(c.imag))), Fraction(float(d.rad[j]))

    def to_numpy(self) -> tuple[np.ndarray, np.ndarray]:
        """float64 ``mid`` and ``rad`` with |K_j - mid_j| <= rad_j: a binary file's
        float64 disks, or a JSON file's exact disks rounded (rad rounded outward)."""
        mid, rad = self.disks.float64()
        return np.array(mid, dtype=np.complex128), np.array(rad, dtype=np.float64)


def load_kernel(path: Any) -> KernelFile:
    """Read a kernel file of either format (told apart by content: a zip archive is the
    binary one); ValueError naming the problem for a missing file, bad JSON, a wrong
    format tag, a missing key, a bad number string or a malformed archive.  An altered
    file still loads: ``digest_ok`` is then False."""
    if is_npz(path):
        return _load_npz(path)
    doc = read_json(path)
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: not a kernel file (the top level is not an object)")
    fmt = doc.get("format")
    if fmt != FORMAT:
        raise ValueError(f"{path}: wrong format tag {fmt!r} (expected {FORMAT!r})")
    rec = decode_record(doc)
    L, kern = rec["L"], doc["kernel"]
    lists = {}
    for key in ("re", "im", "rad"):
        v = need(kern, key, "kernel")
        if not isinstance(v, list) or len(v) != L:
            raise ValueError(f"kernel.{key}: expected {L} strings")
        lists[key] = [parse_rational(s, f"kernel.{key}[{j}]") for j, s in enumerate(v)]
    if any(x < 0 for x in lists["rad"]):
        raise ValueError("kernel.rad: a radius is negative")
    disks = KernelDisks(L, rec["source"], text_index=np.arange(L, dtype=np.int64), text_re=lists["re"],
                        text_im=lists["im"], text_rad=lists["rad"])
    try:
        ok = isinstance(doc["sha256"], str) and file_digest(doc) == doc["sha256"]
    except ValueError:
        ok = False
    return _kernel_file(path, doc, rec, disks, ok, FORMAT, {k: list(kern[k]) for k in ("re", "im", "rad")})


def _load_npz(path: Any) -> KernelFile:
    header, disks, ok = read_npz_kernel(path)
    rec = decode_record(header)
    if rec["L"] != disks.L:
        raise ValueError(f"{path}: problem.L = {rec['L']} but the kernel has {disks.L} entries")
    if disks.source != rec["source"]:
        raise ValueError(f"{path}: kernel.source {disks.source!r} differs")
    return _kernel_file(path, header, rec, disks, ok, NPZ_FORMAT, None)


def _kernel_file(path: Any, doc: dict, rec: dict, disks: KernelDisks, ok: bool, fmt: str,
                 strings: dict | None) -> KernelFile:
    pr = rec["problem"]
    return KernelFile(os.fspath(path), rec["model"], rec["step"], rec["L"], rec["eps"], rec["mode"], rec["c_tilde"],
                      doc["status"], disks, doc["certificate"], doc["counts"], str(doc["sha256"]), ok, rec["source"],
                      pr, bool(pr.get("exact_inputs", False)), fmt, strings)
