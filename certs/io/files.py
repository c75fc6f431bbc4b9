"""Kernel files and parameter files.

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

*Numbers* are lossless strings.  A rational is written ``"p/q"`` (or ``"p"``); a number
of the problem is a pair ``["re", "im"]`` of rationals, or, when it is a ball (``acb`` or
``arb``, e.g. a certified HiPPO model), ``{"mid": ["re", "im"], "rad": ["rad_re",
"rad_im"]}``: the exact (dyadic) midpoint and radii of its real and imaginary parts,
read back as the same ball (a radius that is not a 30-bit-mantissa dyadic, as no arb
radius is, would be rounded up).  Integers of any length are written and read in full.
Readers also accept the strings Python's ``Fraction`` reads exactly (``"0.375"``,
``"1e-3"``).

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
with ``|K_j - mid_j| <= rad_j`` (``save_npz`` writes only those).  Every write is atomic: the data go to a temporary file in
the same directory, which is flushed, synced and renamed over the target; after a failure
or an interrupt the target is either the old file or absent, never half written.

Parameter file (``.npz`` or ``.json``)
======================================

Keys ``Lambda`` (N), ``P`` (N or N x r), optional ``Q`` (default P) and ``B`` (default all
ones), exactly one of ``C`` (the output vector, ``y = C* x``) and ``Ct`` (C~ as learned by
S4), optional ``step`` and ``L``.  npz: numeric arrays (complex allowed).  JSON: each
number is a JSON number (read as the binary double it denotes, as numpy would), a string
``"p/q"`` (exact), a pair ``[re, im]`` or an object ``{"re": x, "im": y}``.  ``P`` given as
N pairs of scalars is ambiguous (N complex numbers, or N real rows of length 2): add
``"r": 1`` or ``"r": 2``.  Other keys are ignored.  ``C`` and ``Ct`` follow this
package's convention ``y = C* x``; a model written as ``y = C x`` (S4's code does so)
has output vector ``conj(C)`` here.  ``load_params(..., conj_pairs=True)`` expands a file
that stores one mode per conjugate pair (see :func:`load_params`).
"""
from __future__ import annotations

import hashlib
import io
import json
import math
import os
import re
import tempfile
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from flint import acb, arb, ctx, fmpq, fmpz

from ...algorithms.dft import next_power_of_two
from ...algorithms.s4.dplr import DPLR
from ...algorithms.s4.midrad import ARITHMETIC as FLOAT64_ARITHMETIC
from ...arith import exact_parts
from ...arith.ball import float_upper

FORMAT = "s4cert.kernel/1"
MODES = ("ball", "a-priori", "exact")
_TOP_KEYS = ("problem", "status", "kernel", "certificate", "counts", "sha256")
_MODEL_KEYS = ("Lambda", "P", "Q", "B", "C")


# -- exact numbers <-> strings -----------------------------------------------------

_DIGITS = re.compile(r"[0-9]+")


def rational_string(q: Fraction) -> str:
    """``"p/q"`` (or ``"p"``) in decimal, at any size (flint converts, without Python's
    limit on the digits of int/str conversions).

    >>> rational_string(Fraction(-3, 8))
    '-3/8'
    """
    p = str(fmpz(q.numerator))
    return p if q.denominator == 1 else f"{p}/{fmpz(q.denominator)}"


def _decimal_int(t: str) -> int | None:
    sign, body = (-1, t[1:]) if t[:1] == "-" else (1, t[1:] if t[:1] == "+" else t)
    return sign * int(fmpz(body)) if _DIGITS.fullmatch(body) else None


def parse_rational(s: Any, what: str) -> Fraction:
    """A lossless rational string (``"p/q"``, ``"p"``, or an exact decimal) as a Fraction.

    >>> parse_rational("-3/8", "x"), parse_rational("0.125", "x")
    (Fraction(-3, 8), Fraction(1, 8))
    """
    if not isinstance(s, str):
        raise ValueError(f"{what}: expected a rational string like \"p/q\", got {type(s).__name__} {s!r}")
    t = s.strip()
    num, sep, den = t.partition("/")
    n = _decimal_int(num)
    d = _decimal_int(den) if sep else 1
    if n is not None and d is not None and (not sep or _DIGITS.fullmatch(den)):
        if d == 0:
            raise ValueError(f"{what}: bad number string {s!r} (zero denominator)")
        return Fraction(n, d)
    try:
        return Fraction(t)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"{what}: bad number string {s[:80]!r}") from None


def _fq(q: Fraction) -> fmpq:
    return fmpq(q.numerator, q.denominator)


def arb_point(x: arb) -> Fraction:
    """The exact value of an exact arb point (a midpoint or a radius)."""
    man, exp = x.man_exp()
    man, exp = int(man), int(exp)
    return Fraction(man * 2 ** exp) if exp >= 0 else Fraction(man, 2 ** -exp)


def _dyadic_bits(q: Fraction) -> int:
    """Bits an arb needs to hold q exactly (q dyadic), else a generous working size."""
    d = q.denominator
    if d & (d - 1) == 0:
        return max(2, abs(q.numerator).bit_length())
    return max(abs(q.numerator).bit_length(), d.bit_length())


def exact_arb(mid: Fraction, rad: Fraction = Fraction(0), prec: int | None = None) -> arb:
    """An arb ball containing [mid - rad, mid + rad]; the midpoint is exact when mid is
    dyadic (and prec is None or large enough), the radius is exact when it is a short
    dyadic (as every arb radius is)."""
    p = prec if prec is not None else _dyadic_bits(mid) + 8
    with ctx.workprec(max(p, 64)):  # >= 64 bits: the radius converts exactly
        x = arb(_fq(mid))
        return _with_radius(x, rad) if rad else x


def _with_radius(x: arb, rad: Fraction) -> arb:
    """The ball x widened by rad.  flint rounds a requested radius up (by one unit in the
    30-bit radius mantissa); so first ask for one unit less and keep the result when its
    radius came out exactly rad, else ask for rad itself (which encloses)."""
    if x.rad() == 0 and rad.denominator & (rad.denominator - 1) == 0:
        man, exp = rad.numerator, -(rad.denominator.bit_length() - 1)
        while man % 2 == 0:
            man, exp = man // 2, exp + 1
        shift = 30 - man.bit_length()
        if shift >= 0:  # rad = man30 * 2^e30 with a 30-bit mantissa man30
            man30, e30 = man << shift, exp - shift
            if man30 == 1 << 29:  # one unit below lies in the binade below
                man30, e30 = 1 << 30, e30 - 1
            y = arb(x, _fq(Fraction(man30 - 1) * Fraction(2) ** e30))
            if arb_point(y.mid()) == arb_point(x.mid()) and arb_point(y.rad()) == rad:
                return y
    return arb(x, _fq(rad))


def _arb_parts(x: arb, what: str) -> tuple[Fraction, Fraction]:
    if not x.is_finite():
        raise ValueError(f"{what}: a ball that is not finite cannot be stored")
    return arb_point(x.mid()), arb_point(x.rad())


def encode_number(x: Any, what: str = "number") -> list | dict:
    """A problem number as lossless strings: ``["re", "im"]`` for an exact number,
    ``{"mid": [...], "rad": [...]}`` for a ball.

    >>> encode_number(0.5 - 2j)
    ['1/2', '-2']
    """
    if isinstance(x, acb):
        (mr, rr), (mi, ri) = _arb_parts(x.real, what), _arb_parts(x.imag, what)
        return {"mid": [rational_string(mr), rational_string(mi)], "rad": [rational_string(rr), rational_string(ri)]}
    if isinstance(x, arb):
        m, r = _arb_parts(x, what)
        return {"mid": [rational_string(m), "0"], "rad": [rational_string(r), "0"]}
    re, im = exact_parts(x, what)
    return [rational_string(re), rational_string(im)]


def decode_number(v: Any, what: str = "number") -> Any:
    """The inverse of :func:`encode_number`: ``(Fraction, Fraction)`` or an exact acb."""
    if isinstance(v, list):
        if len(v) != 2:
            raise ValueError(f"{what}: a number is a pair [re, im], got {len(v)} entries")
        return parse_rational(v[0], f"{what} (re)"), parse_rational(v[1], f"{what} (im)")
    if isinstance(v, dict):
        for k in ("mid", "rad"):
            if not isinstance(v.get(k), list) or len(v[k]) != 2:
                raise ValueError(f"{what}: a ball needs \"{k}\": [re, im]")
        mr, mi = (parse_rational(s, f"{what} (mid)") for s in v["mid"])
        rr, ri = (parse_rational(s, f"{what} (rad)") for s in v["rad"])
        if rr < 0 or ri < 0:
            raise ValueError(f"{what}: negative radius")
        return acb(exact_arb(mr, rr), exact_arb(mi, ri))
    raise ValueError(f"{what}: expected [re, im] strings or a ball object, got {type(v).__name__}")


# -- the document ----------------------------------------------------------------------

def _jsonable(x: Any, what: str) -> Any:
    """Certificate and counts values as JSON values, losslessly."""
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        f = float(x)
        return f if math.isfinite(f) else ("nan" if f != f else ("inf" if f > 0 else "-inf"))
    if isinstance(x, Fraction):
        return rational_string(x)
    if isinstance(x, dict):
        return {str(k): _jsonable(v, f"{what}.{k}") for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v, what) for v in x]
    raise ValueError(f"{what}: cannot store a {type(x).__name__} losslessly")


def _disk_radius(b: acb) -> Fraction:
    """An exact upper bound of sqrt(rad_re^2 + rad_im^2): the disk around the midpoint
    of the box b that contains b."""
    rr, ri = arb_point(b.real.rad()), arb_point(b.imag.rad())
    if rr == 0 or ri == 0:
        return rr + ri
    with ctx.workprec(64):
        return arb_point((exact_arb(rr) ** 2 + exact_arb(ri) ** 2).sqrt().upper())


#: what the kernel disks are, by mode (the ``kernel.source`` field)
SOURCES = {"ball": "ball enclosure", "exact": "exact values", "a-priori": "rounded circuit outputs",
           "a-priori enclosure": "enclosure of the rounded circuit outputs"}


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
        (mr, _), (mi, _) = _arb_parts(b.real, f"K[{j}]"), _arb_parts(b.imag, f"K[{j}]")
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
        "certificate": _jsonable(ck.certificate, "certificate"),
        "counts": _jsonable(ck.counts, "counts"),
    }
    doc["sha256"] = file_digest(doc)
    return doc


def file_digest(doc: dict) -> str:
    """SHA-256 of the canonical JSON of every key but ``sha256``."""
    body = {k: v for k, v in doc.items() if k != "sha256"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


# -- atomic writes ---------------------------------------------------------------------

def atomic_write(items: list[tuple[str, bytes]]) -> None:
    """Write each (path, data) atomically: temporary files in the targets' directories,
    flushed and synced, then renamed over the targets.  On any failure or interrupt the
    temporary files are removed and no target is half written."""
    temps: list[str] = []
    current = items[0][0] if items else ""
    try:
        for path, data in items:
            current = path
            folder = os.path.dirname(os.path.abspath(path))
            fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
            temps.append(tmp)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        for (path, _), tmp in zip(items, temps):
            current = path
            os.replace(tmp, path)
        for folder in {os.path.dirname(os.path.abspath(p)) for p, _ in items}:
            _sync_dir(folder)
    except BaseException as e:
        for tmp in temps:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
        if isinstance(e, OSError):
            raise ValueError(f"cannot write {current}: {e.strerror or e}") from None
        raise


def _sync_dir(folder: str) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


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


# -- reading kernel files -------------------------------------------------------------

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


def _read_json(path: Any) -> Any:
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ValueError(f"{path}: no such file")
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
        return json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a JSON file (not UTF-8 text)") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON ({e.msg} at line {e.lineno})") from None
    except ValueError as e:  # a NaN or Infinity literal
        raise ValueError(f"{path}: {e}") from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-finite JSON constant {name}")


def _need(d: dict, key: str, where: str) -> Any:
    if not isinstance(d, dict) or key not in d:
        raise ValueError(f"missing key \"{key}\" in {where}")
    return d[key]


def _int(v: Any, what: str, low: int = 1) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < low:
        raise ValueError(f"{what}: expected an integer >= {low}, got {v!r}")
    return v


def _decode_step(v: Any) -> Any:
    x = decode_number(v, "step")
    if isinstance(x, tuple):
        re, im = x
        if im != 0 or re <= 0:
            raise ValueError(f"step must be a real number > 0, got {re} + {im}i")
        return re
    return x


def _decode_model(m: dict, N: int, r: int) -> DPLR:
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


def _kernel_prec(mid: list, rad: list) -> int:
    bits = 64
    for (a, b), r in zip(mid, rad):
        bits = max(bits, _dyadic_bits(a), _dyadic_bits(b))
    return bits + 64


def load_kernel(path: Any) -> KernelFile:
    """Read a kernel file; ValueError naming the problem for a missing file, bad JSON, a
    wrong format tag, a missing key or a bad number string.  An altered file still loads:
    ``digest_ok`` is then False."""
    doc = _read_json(path)
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: not a kernel file (the top level is not an object)")
    fmt = doc.get("format")
    if fmt != FORMAT:
        raise ValueError(f"{path}: wrong format tag {fmt!r} (expected {FORMAT!r})")
    for key in _TOP_KEYS:
        _need(doc, key, "the kernel file")
    pr = doc["problem"]
    N, r, L = (_int(_need(pr, k, "problem"), f"problem.{k}") for k in ("N", "r", "L"))
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
    prec = _kernel_prec(mid, lists["rad"])
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


# -- parameter files ---------------------------------------------------------------------

@dataclass
class Params:
    """A model read from a parameter file.  When the file gives ``Ct`` (C~) rather than
    ``C``, ``c_tilde`` holds it and ``model.C`` is all zeros (C is then unknown): pass
    ``c_tilde`` on to ``certify_kernel``."""

    model: DPLR
    step: Any = None
    L: int | None = None
    c_tilde: list | None = None


def _json_scalar(v: Any, what: str) -> Any:
    """One JSON number: number, "p/q" string, [re, im] pair or {"re", "im"} object."""
    if isinstance(v, bool) or v is None:
        raise ValueError(f"{what}: expected a number, got {v!r}")
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"{what}: non-finite number {v!r}")
        return v
    if isinstance(v, str):
        return parse_rational(v, what)
    if isinstance(v, dict):
        if set(v) - {"re", "im"} or "re" not in v:
            raise ValueError(f"{what}: a complex object has keys \"re\" and \"im\"")
        return (_json_real(v["re"], what), _json_real(v.get("im", 0), what))
    if isinstance(v, list):
        if len(v) != 2:
            raise ValueError(f"{what}: a complex number is a pair [re, im], got {len(v)} entries")
        return (_json_real(v[0], what), _json_real(v[1], what))
    raise ValueError(f"{what}: expected a number, got {type(v).__name__}")


def _json_real(v: Any, what: str) -> Any:
    if isinstance(v, (list, dict)):
        raise ValueError(f"{what}: expected a real number inside a pair")
    return _json_scalar(v, what)


def _is_pair(v: Any) -> bool:
    return isinstance(v, list) and len(v) == 2 and not any(isinstance(x, (list, dict)) for x in v)


def _json_vector(v: Any, what: str) -> list:
    if not isinstance(v, list):
        raise ValueError(f"{what}: expected a list of numbers")
    return [_json_scalar(x, f"{what}[{i}]") for i, x in enumerate(v)]


def _json_matrix(v: Any, what: str, r_hint: int | None) -> list[list]:
    """P or Q: N numbers (r = 1) or N rows of r numbers."""
    if not isinstance(v, list) or not v:
        raise ValueError(f"{what}: expected a non-empty list")
    if not any(isinstance(x, list) for x in v):
        return [[x] for x in _json_vector(v, what)]
    if not all(isinstance(x, list) for x in v):
        raise ValueError(f"{what}: mixes rows and numbers")
    if all(_is_pair(x) for x in v) and r_hint is None:
        raise ValueError(f"{what}: ambiguous: N pairs [a, b] are N complex numbers (r = 1) or N real rows "
                         "of length 2; add \"r\": 1 or \"r\": 2 to the file")
    if r_hint == 1 and all(_is_pair(x) for x in v):
        return [[_json_scalar(x, f"{what}[{i}]")] for i, x in enumerate(v)]
    return [_json_vector(row, f"{what}[{i}]") for i, row in enumerate(v)]


def _read_npz(path: str) -> dict:
    try:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (ValueError, OSError, EOFError) as e:
        raise ValueError(f"{path}: not a readable .npz file ({e})") from None


def _array_entries(a: np.ndarray, what: str, shapes: tuple) -> Any:
    a = np.asarray(a)
    if a.dtype.kind not in "iufc":
        raise ValueError(f"{what}: expected numbers, got dtype {a.dtype}")
    if a.ndim not in shapes:
        raise ValueError(f"{what}: expected {' or '.join(f'{n}-d' for n in shapes)}, got shape {a.shape}")
    if a.dtype.kind in "fc" and not np.all(np.isfinite(a)):
        bad = np.argwhere(~np.isfinite(a))[0]
        raise ValueError(f"{what}: non-finite entry at index {tuple(int(i) for i in bad)}")
    return a.tolist()


def _params_from_npz(path: str) -> dict:
    z = _read_npz(path)
    out = {}
    for key in ("Lambda", "B", "C", "Ct"):
        if key in z:
            out[key] = _array_entries(z[key], key, (1,))
    for key in ("P", "Q"):
        if key in z:
            a = _array_entries(z[key], key, (1, 2))
            out[key] = [[x] for x in a] if np.asarray(z[key]).ndim == 1 else a
    for key in ("step", "L"):
        if key in z:
            a = np.asarray(z[key])
            if a.size != 1:
                raise ValueError(f"{key}: expected a scalar, got shape {a.shape}")
            out[key] = _array_entries(a.reshape(()), key, (0,))
    return out


def _params_from_json(path: str) -> dict:
    doc = _read_json(path)
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: a parameter file is a JSON object")
    r_hint = doc.get("r")
    if r_hint is not None:
        r_hint = _int(r_hint, "r")
    out = {}
    for key in ("Lambda", "B", "C", "Ct"):
        if key in doc:
            out[key] = _json_vector(doc[key], key)
    for key in ("P", "Q"):
        if key in doc:
            out[key] = _json_matrix(doc[key], key, r_hint)
            if r_hint is not None and any(len(row) != r_hint for row in out[key]):
                raise ValueError(f"{key}: rows must have r = {r_hint} entries")
    if "step" in doc:
        out["step"] = _json_scalar(doc["step"], "step")
    if "L" in doc:
        out["L"] = doc["L"]
    return out


def _conj(x: Any) -> Any:
    if isinstance(x, tuple):
        re, im = exact_parts(x)
        return (re, -im)
    return x.conjugate()


def load_params(path: Any, conj_pairs: bool = False) -> Params:
    """Read a parameter file (``.npz`` or ``.json``; see the module docstring).

    ``conj_pairs``: the file stores one mode per conjugate pair, as S4 checkpoints do.
    The model is expanded to the full set: ``Lambda -> [Lambda, conj Lambda]`` and every
    row of P, Q and entry of B, C (or Ct) likewise ``[x, conj x]``.  The kernel of the full
    set is real.  It is the kernel S4 computes from the half set: S4's Cauchy sums run over
    both members of every pair and its low-rank correction is taken over those sums; for
    P = 0 (diagonal S4D) it is ``2 Re`` of the half set's kernel.

    ValueError (one line) for a missing file, a missing key, NaN/inf, wrong shapes, or
    both or neither of ``C`` and ``Ct``.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ValueError(f"{path}: no such file")
    ext = os.path.splitext(path)[1].lower()
    if ext == ".npz":
        raw = _params_from_npz(path)
    elif ext == ".json":
        raw = _params_from_json(path)
    else:
        raise ValueError(f"{path}: a parameter file ends in .npz or .json")
    for key in ("Lambda", "P"):
        if key not in raw:
            raise ValueError(f"{path}: missing key \"{key}\"")
    if ("C" in raw) == ("Ct" in raw):
        raise ValueError(f"{path}: give exactly one of \"C\" (output vector) and \"Ct\" (C~), "
                         f"got {'both' if 'C' in raw else 'neither'}")
    lam = raw["Lambda"]
    N = len(lam)
    if N < 1:
        raise ValueError("Lambda: the model needs at least one state")
    P, Q = raw["P"], raw.get("Q")
    B = raw.get("B", [1] * N)
    C = raw.get("C")
    ct = raw.get("Ct")
    for key, v in (("B", B), ("C", C), ("Ct", ct)):
        if v is not None and len(v) != N:
            raise ValueError(f"{key}: expected {N} entries (N = {N}), got {len(v)}")
    for key, v in (("P", P), ("Q", Q)):
        if v is not None and len(v) != N:
            raise ValueError(f"{key}: expected {N} rows (N = {N}), got {len(v)}")
    if conj_pairs:
        dup = lambda v: None if v is None else list(v) + [_conj(x) for x in v]
        duprows = lambda m: None if m is None else [list(r) for r in m] + [[_conj(x) for x in r] for r in m]
        lam, B, C, ct = dup(lam), dup(B), dup(C), dup(ct)
        P, Q = duprows(P), duprows(Q)
        N *= 2
    if C is None:
        C = [0] * N
    model = DPLR(lam, P, B, C, Q=Q)
    step = raw.get("step")
    if step is not None:
        re, im = exact_parts(step, "step")
        if im != 0 or re <= 0:
            raise ValueError(f"step must be a real number > 0, got {step!r}")
    L = raw.get("L")
    if L is not None:
        if isinstance(L, float) and L.is_integer():
            L = int(L)
        L = _int(L, "L")
    return Params(model, step, L, ct)
