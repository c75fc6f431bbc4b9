"""Parameter files: a DPLR model from a ``.npz`` or ``.json`` file.

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

import math
import os
import zipfile
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...algorithms.s4.dplr import DPLR
from ...arith import exact_parts
from .numbers import json_int, parse_rational, read_json


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
    """One real part of a complex number (no nested pair or object)."""
    if isinstance(v, (list, dict)):
        raise ValueError(f"{what}: expected a real number inside a pair")
    return _json_scalar(v, what)


def _is_pair(v: Any) -> bool:
    """Whether v is a pair of scalars (a complex number, or a row of length 2)."""
    return isinstance(v, list) and len(v) == 2 and not any(isinstance(x, (list, dict)) for x in v)


def _json_vector(v: Any, what: str) -> list:
    """A list of JSON numbers."""
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
    """Every array of an .npz file (no pickled objects)."""
    try:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error) as e:
        why = str(e).splitlines()[0][:200] if str(e) else type(e).__name__
        raise ValueError(f"{path}: not a readable .npz file ({why})") from None


def _array_entries(a: np.ndarray, what: str, shapes: tuple) -> Any:
    """A finite numeric array of one of the allowed dimensions, as nested Python numbers."""
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
    """The known keys of an .npz parameter file, P and Q as rows."""
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
    """The known keys of a JSON parameter file, P and Q as rows."""
    doc = read_json(path)
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: a parameter file is a JSON object")
    r_hint = doc.get("r")
    if r_hint is not None:
        r_hint = json_int(r_hint, "r")
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
    """The complex conjugate, exactly (a ball stays a ball)."""
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
        L = json_int(L, "L")
    return Params(model, step, L, ct)
