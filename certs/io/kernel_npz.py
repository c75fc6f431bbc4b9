"""The binary kernel file: an ``.npz`` archive (``"format": "s4cert.kernel.npz/1"``).

A zip archive whose members are all stored uncompressed, exactly these eight, in this
order::

    header.json       ASCII JSON: format, problem, status, certificate, counts (as in the
                      JSON format, ``s4cert.kernel/1``), "kernel" and "sha256"
    mid.npy           complex128 (L,)      the float64 disks:   |K_j - mid_j| <= rad_j
    rad.npy           float64    (L,)
    parts_index.npy   int64      (n,)      exact disks whose centre is a sum of k parts:
    parts.npy         complex128 (n, k)    entry parts_index[i] has centre sum_t parts[i, t]
    parts_rad.npy     float64    (n,)      (real and imaginary parts summed exactly) and
                                           radius parts_rad[i]
    text_index.npy    int64      (m,)      exact disks as rationals: entry text_index[i]
    text.json         ASCII JSON {"re": [m strings], "im": [...], "rad": [...]}

Every ``.npy`` member is little-endian with the dtype shown (``np.load(path)["mid"]``
reads it; ``allow_pickle`` is never needed).  ``header.json``'s ``"kernel"`` is
``{"source": ..., "L": L, "parts": {"n": n, "k": k}, "text": m}``.  The indices are
strictly increasing, below L, and the two layers share no entry.  The *exact disk* of
entry j is its ``text`` disk if it has one, else its ``parts`` disk, else its float64 disk
(see :mod:`s4cert.certs.io.kernel_disks`): the float64 route stores no layer (its disks
are exact binary numbers), the double-double and triple-double routes store their
midpoints' parts (k = 2 or 3) where they are not the float64 disk, and the ball routes,
exact mode and stored rounded circuit outputs store rationals.  Both kinds of disk are
claims of the file (the audit checks both).

*Integrity.* ``sha256`` is the SHA-256 of the canonical JSON (sorted keys, separators
``","`` and ``":"``, ASCII) of every other key of ``header.json``, a newline, then the raw
little-endian bytes of the arrays in the order above, then the bytes of ``text.json``.

*Reading* checks every size before it allocates: a compressed, encrypted, missing or extra
member, a declared size beyond the file, an ``.npy`` header whose dtype, order or shape is
not the one the format and the header declare, a truncated member, a bad CRC, a NaN or
infinite number, a negative radius, or an index out of order is one ValueError line.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import struct
import zipfile
import zlib
from typing import Any

import numpy as np

from .kernel_disks import MAX_PARTS, KernelDisks
from .numbers import json_depth, json_int, parse_rational, rational_string

NPZ_FORMAT = "s4cert.kernel.npz/1"
#: the members and the dtype of each array, in order
ARRAYS = (("mid", "<c16"), ("rad", "<f8"), ("parts_index", "<i8"), ("parts", "<c16"), ("parts_rad", "<f8"),
          ("text_index", "<i8"))
MEMBERS = ("header.json",) + tuple(name + ".npy" for name, _ in ARRAYS) + ("text.json",)
#: the largest header.json read (the problem's numbers; far above any model of this package)
MAX_HEADER_BYTES = 1 << 28
#: the depth of JSON nesting read
MAX_JSON_DEPTH = 64
#: the largest .npy header read (numpy's own default)
MAX_NPY_HEADER = 10_000
_ZIP_MAGIC = b"PK\x03\x04"
_DATE = (1980, 1, 1, 0, 0, 0)  # fixed member times: one kernel, one archive


class _Bad(ValueError):
    """A malformed archive (the message does not name the file yet)."""


def is_npz(path: Any) -> bool:
    """Whether the file at ``path`` starts like a zip archive."""
    try:
        with open(os.fspath(path), "rb") as fh:
            return fh.read(4) == _ZIP_MAGIC
    except OSError:
        return False


# -- writing -------------------------------------------------------------------------------------

def _arrays(disks: KernelDisks) -> dict[str, np.ndarray]:
    mid, rad = disks.float64()
    k = disks.parts.shape[1] if disks.parts.ndim == 2 else 2
    vals = {"mid": mid, "rad": rad, "parts_index": disks.parts_index, "parts": disks.parts.reshape(-1, k),
            "parts_rad": disks.parts_rad, "text_index": disks.text_index}
    return {name: np.ascontiguousarray(vals[name], dtype=np.dtype(dt)) for name, dt in ARRAYS}


def _text(disks: KernelDisks) -> bytes:
    text = {"re": [rational_string(x) for x in disks.text_re], "im": [rational_string(x) for x in disks.text_im],
            "rad": [rational_string(x) for x in disks.text_rad]}
    return json.dumps(text, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def npz_digest(header: dict, arrays: dict[str, np.ndarray], text: bytes) -> str:
    """The SHA-256 of the canonical header (``sha256`` left out), a newline, the arrays'
    raw little-endian bytes in the format's order, and ``text.json``."""
    body = {k: v for k, v in header.items() if k != "sha256"}
    h = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                                  allow_nan=False).encode("ascii"))
    h.update(b"\n")
    for name, _ in ARRAYS:
        a = np.ascontiguousarray(arrays[name])
        if a.size:
            h.update(memoryview(a.reshape(-1)).cast("B"))
    h.update(text)
    return h.hexdigest()


def npz_kernel_bytes(record: dict, disks: KernelDisks) -> tuple[memoryview, dict]:
    """(the archive's bytes, its header) for a kernel's record (format-independent keys:
    problem, status, certificate, counts) and disks."""
    arrays = _arrays(disks)
    text = _text(disks)
    n, k = arrays["parts"].shape
    header = {"format": NPZ_FORMAT, **record,
              "kernel": {"source": disks.source, "L": disks.L, "parts": {"n": n, "k": k}, "text": len(disks.text_re)}}
    header["sha256"] = npz_digest(header, arrays, text)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        zf.writestr(zipfile.ZipInfo("header.json", _DATE), _header_text(header))
        for name, _ in ARRAYS:
            with zf.open(zipfile.ZipInfo(name + ".npy", _DATE), "w", force_zip64=True) as fh:
                np.lib.format.write_array(fh, arrays[name], allow_pickle=False)
        zf.writestr(zipfile.ZipInfo("text.json", _DATE), text)
    return buf.getbuffer(), header  # a view of the buffer: no copy of the archive


def _header_text(header: dict) -> str:
    """The header as JSON with one line per key down to two levels (compact below)."""
    def fmt(v: Any, level: int, indent: str) -> str:
        if level >= 2 or not isinstance(v, dict) or not v:
            return json.dumps(v, allow_nan=False, ensure_ascii=True)
        inner = indent + " "
        return "{\n" + ",\n".join(f"{inner}{json.dumps(k)}: {fmt(x, level + 1, inner)}" for k, x in v.items()) \
            + "\n" + indent + "}"
    return fmt(header, 0, "") + "\n"


# -- reading -------------------------------------------------------------------------------------

def read_npz_kernel(path: Any) -> tuple[dict, KernelDisks, bool]:
    """(header, disks, digest_ok) of a binary kernel file; one ValueError line naming the
    file for anything malformed (see the module docstring).  The header's problem is
    checked by the caller."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ValueError(f"{path}: no such file")
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as fh, zipfile.ZipFile(fh) as zf:
            return _read(zf, size)
    except _Bad as e:
        raise ValueError(f"{path}: {e}") from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, OSError, KeyError, NotImplementedError,
            struct.error, OverflowError, RuntimeError, ValueError, TypeError, MemoryError) as e:
        why = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ValueError(f"{path}: not a readable kernel .npz file ({why[:200]})") from None


def _read(zf: zipfile.ZipFile, size: int) -> tuple[dict, KernelDisks, bool]:
    infos = _members(zf, size)
    header = _json_member(zf, infos["header.json"], MAX_HEADER_BYTES, "header.json")
    if not isinstance(header, dict):
        raise _Bad("header.json is not an object")
    if header.get("format") != NPZ_FORMAT:
        raise _Bad(f"wrong format tag {header.get('format')!r} (expected {NPZ_FORMAT!r})")
    kern = header.get("kernel")
    if not isinstance(kern, dict):
        raise _Bad("missing key \"kernel\" in header.json")
    L = _int(kern, "L", 1)
    parts = kern.get("parts")
    if not isinstance(parts, dict):
        raise _Bad("kernel.parts: expected {\"n\": n, \"k\": k}")
    n, k, m = _int(parts, "n", 0), _int(parts, "k", 1), _int(kern, "text", 0)
    if n > L or m > L or k > MAX_PARTS:
        raise _Bad(f"kernel: layers of {n} and {m} entries with {k} parts do not fit L = {L} (at most {MAX_PARTS} parts)")
    shapes = {"mid": (L,), "rad": (L,), "parts_index": (n,), "parts": (n, k), "parts_rad": (n,), "text_index": (m,)}
    arrays = {name: _array(zf, infos[name + ".npy"], dt, shapes[name]) for name, dt in ARRAYS}
    text_raw = _member_bytes(zf, infos["text.json"], size, "text.json")
    disks = _disks(str(kern.get("source")), L, arrays, _text_lists(text_raw, m))
    ok = isinstance(header.get("sha256"), str) and npz_digest(header, arrays, text_raw) == header["sha256"]
    return header, disks, ok


def _members(zf: zipfile.ZipFile, size: int) -> dict[str, zipfile.ZipInfo]:
    infos = zf.infolist()
    names = [i.filename for i in infos]
    if len(set(names)) != len(names):
        raise _Bad("a member name occurs twice")
    if set(names) != set(MEMBERS):
        missing, extra = sorted(set(MEMBERS) - set(names)), sorted(set(names) - set(MEMBERS))
        raise _Bad(f"members differ from the format's (missing {missing[:3]}, unexpected {[x[:40] for x in extra[:3]]})")
    for i in infos:
        if i.compress_type != zipfile.ZIP_STORED:
            raise _Bad(f"{i.filename} is compressed (the format stores every member uncompressed)")
        if i.flag_bits & 0x1:
            raise _Bad(f"{i.filename} is encrypted")
        if i.file_size != i.compress_size or i.file_size > size:
            raise _Bad(f"{i.filename}: declared size {i.file_size} does not fit the file ({size} bytes)")
    return {i.filename: i for i in infos}


def _int(d: dict, key: str, low: int) -> int:
    try:
        return json_int(d.get(key), f"kernel.{key}", low)
    except ValueError as e:
        raise _Bad(str(e)) from None


def _member_bytes(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int, what: str) -> bytes:
    if info.file_size > limit:
        raise _Bad(f"{what}: {info.file_size} bytes (at most {limit} are read)")
    with zf.open(info) as fh:
        raw = fh.read(info.file_size + 1)
    if len(raw) != info.file_size:
        raise _Bad(f"{what}: truncated ({len(raw)} of {info.file_size} bytes)")
    return raw


def _reject_constant(name: str) -> Any:
    raise _Bad(f"non-finite JSON constant {name}")


def _json_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int, what: str) -> Any:
    raw = _member_bytes(zf, info, limit, what)
    if json_depth(raw) > MAX_JSON_DEPTH:
        raise _Bad(f"{what}: nested more than {MAX_JSON_DEPTH} levels deep")
    try:
        return json.loads(raw.decode("ascii"), parse_constant=_reject_constant)
    except UnicodeDecodeError:
        raise _Bad(f"{what}: not ASCII text") from None
    except json.JSONDecodeError as e:
        raise _Bad(f"{what}: not valid JSON ({e.msg} at line {e.lineno})") from None


def _array(zf: zipfile.ZipFile, info: zipfile.ZipInfo, dtype: str, shape: tuple) -> np.ndarray:
    """The .npy member's array, its header checked against (dtype, shape) and its size
    against the member's before any allocation."""
    what = info.filename
    with zf.open(info) as fh:
        try:
            version = np.lib.format.read_magic(fh)
            reader = {(1, 0): np.lib.format.read_array_header_1_0,
                      (2, 0): np.lib.format.read_array_header_2_0}.get(version)
            if reader is None:
                raise _Bad(f"{what}: .npy version {version} (1.0 or 2.0 are read)")
            got_shape, fortran, got_dtype = reader(fh, max_header_size=MAX_NPY_HEADER)
        except _Bad:
            raise
        except (ValueError, SyntaxError, TypeError) as e:
            raise _Bad(f"{what}: bad .npy header ({str(e).splitlines()[0][:120] if str(e) else type(e).__name__})") from None
        if got_dtype.str != dtype or got_dtype.hasobject:
            raise _Bad(f"{what}: dtype {got_dtype.str}, expected {dtype}")
        if fortran and len(shape) > 1:
            raise _Bad(f"{what}: Fortran order (C order expected)")
        if tuple(got_shape) != shape:
            raise _Bad(f"{what}: shape {tuple(got_shape)}, the header declares {shape}")
        nbytes = int(np.prod(shape, dtype=object)) * np.dtype(dtype).itemsize
        start = fh.tell()
        if info.file_size != start + nbytes:
            raise _Bad(f"{what}: {info.file_size - start} data bytes, the shape needs {nbytes}")
        raw = fh.read(nbytes + 1)
    if len(raw) != nbytes:
        raise _Bad(f"{what}: truncated ({len(raw)} of {nbytes} bytes)")
    return np.frombuffer(raw, dtype=np.dtype(dtype)).reshape(shape)


def _text_lists(raw: bytes, m: int) -> dict:
    if json_depth(raw) > 2:
        raise _Bad("text.json: expected an object of three lists of strings")
    try:
        text = json.loads(raw.decode("ascii"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise _Bad("text.json: not valid ASCII JSON") from None
    if not isinstance(text, dict) or set(text) != {"re", "im", "rad"}:
        raise _Bad("text.json: expected {\"re\": [...], \"im\": [...], \"rad\": [...]}")
    out = {}
    for key in ("re", "im", "rad"):
        v = text[key]
        if not isinstance(v, list) or len(v) != m:
            raise _Bad(f"text.json: {key}: expected {m} strings")
        try:
            out[key] = [parse_rational(s, f"text.json {key}[{i}]") for i, s in enumerate(v)]
        except ValueError as e:
            raise _Bad(str(e)) from None
    if any(r < 0 for r in out["rad"]):
        raise _Bad("text.json: a radius is negative")
    return out


def _increasing(index: np.ndarray, L: int, what: str) -> None:
    if index.size and (int(index[0]) < 0 or int(index[-1]) >= L or not bool(np.all(np.diff(index) > 0))):
        raise _Bad(f"{what}: the indices must increase strictly within [0, {L})")


def _finite(a: np.ndarray, what: str) -> None:
    view = a.view(np.float64) if a.dtype.kind == "c" else a
    if not bool(np.all(np.isfinite(view))):
        raise _Bad(f"{what}: a number is NaN or infinite")


def _radii(r: np.ndarray, what: str) -> None:
    if not bool(np.all(r >= 0)) or not bool(np.all(np.isfinite(r))):  # NaN fails r >= 0
        raise _Bad(f"{what}: a radius is negative, NaN or infinite")


def _disks(source: str, L: int, a: dict, text: dict) -> KernelDisks:
    _finite(a["mid"], "mid.npy")
    _radii(a["rad"], "rad.npy")
    _increasing(a["parts_index"], L, "parts_index.npy")
    _finite(a["parts"], "parts.npy")
    _radii(a["parts_rad"], "parts_rad.npy")
    _increasing(a["text_index"], L, "text_index.npy")
    if np.intersect1d(a["parts_index"], a["text_index"]).size:
        raise _Bad("an entry is in both the parts and the text layers")
    return KernelDisks(L, source, a["mid"], a["rad"], a["parts_index"], a["parts"], a["parts_rad"], a["text_index"],
                       text["re"], text["im"], text["rad"])
