"""Safetensors files and bounded JSON.

Safetensors: an 8-byte little-endian header length, a JSON header mapping each tensor
name to ``{"dtype", "shape", "data_offsets": [begin, end]}`` (offsets into the data that
follows the header, which the tensors cover exactly, in order, without overlap) and an
optional ``"__metadata__"`` of strings, then the raw little-endian data.
"""
from __future__ import annotations

import json
import math
import re
from typing import Any

import numpy as np

from .read_limits import ReadLimits

_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "<u2", "I64": "<i8", "I32": "<i4",
           "I16": "<i2", "I8": "<i1", "U8": "<u1", "U16": "<u2", "U32": "<u4", "U64": "<u8",
           "BOOL": "<u1"}
#: a JSON string, or an unterminated one up to the end: each byte is consumed once
_STRING = re.compile(rb'"(?:[^"\\]++|\\.|\\\Z)*+(?:"|\Z)', re.S)


def json_depth(text: bytes) -> int:
    """The bracket nesting depth of a JSON text (strings skipped), computed without
    recursion so that ``json.loads`` is only given texts of bounded depth."""
    bare = np.frombuffer(_STRING.sub(b'""', text), dtype=np.uint8)
    if not bare.size:
        return 0
    step = (np.isin(bare, (ord("["), ord("{"))).astype(np.int64)
            - np.isin(bare, (ord("]"), ord("}"))).astype(np.int64))
    return int(np.cumsum(step).max(initial=0))


def load_json_bytes(text: bytes, limits: ReadLimits, what: str) -> Any:
    """Parse JSON of at most ``limits.max_header_bytes`` bytes and ``limits.max_depth``
    levels; anything else is a ``ValueError`` with one line."""
    if len(text) > limits.max_header_bytes:
        raise ValueError(f"{what} of {len(text)} bytes exceeds the limit of "
                         f"{limits.max_header_bytes} bytes")
    if json_depth(text) > limits.max_depth:
        raise ValueError(f"{what} nests deeper than {limits.max_depth}")
    try:
        return json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError, ValueError) as e:
        raise ValueError(f"{what} is not valid JSON ({type(e).__name__}: {e})") from None


def _entry(name: str, spec: Any, limits: ReadLimits) -> tuple[str, tuple[int, ...], int, int]:
    if not isinstance(spec, dict) or set(spec) != {"dtype", "shape", "data_offsets"}:
        raise ValueError(f"tensor {name!r}: header entry must have exactly dtype, shape "
                         "and data_offsets")
    dtype, shape, offsets = spec["dtype"], spec["shape"], spec["data_offsets"]
    if dtype not in _DTYPES:
        raise ValueError(f"tensor {name!r}: unsupported dtype {str(dtype)[:20]!r}")

    def nat(x: Any) -> bool:
        return isinstance(x, int) and not isinstance(x, bool) and x >= 0

    if not isinstance(shape, list) or not all(nat(n) for n in shape):
        raise ValueError(f"tensor {name!r}: shape must be a list of non-negative integers")
    if len(shape) > limits.max_ndim:
        raise ValueError(f"tensor {name!r}: {len(shape)} dimensions (limit {limits.max_ndim})")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(nat(n) for n in offsets)
            and offsets[0] <= offsets[1]):
        raise ValueError(f"tensor {name!r}: data_offsets must be [begin, end] with "
                         "0 <= begin <= end")
    nbytes = math.prod(shape) * np.dtype(_DTYPES[dtype]).itemsize
    if offsets[1] - offsets[0] != nbytes:
        raise ValueError(f"tensor {name!r}: shape {tuple(shape)} of {dtype} needs {nbytes} "
                         f"bytes, data_offsets span {offsets[1] - offsets[0]}")
    return dtype, tuple(shape), offsets[0], offsets[1]


def _array(dtype: str, shape: tuple[int, ...], raw: bytes, name: str) -> np.ndarray:
    a = np.frombuffer(raw, dtype=_DTYPES[dtype]).reshape(shape)
    if dtype == "BF16":
        return (a.astype(np.uint32) << 16).view(np.float32)
    if dtype == "BOOL":
        if a.size and int(a.max()) > 1:
            raise ValueError(f"tensor {name!r}: BOOL data holds bytes other than 0 and 1")
        return a.astype(np.bool_)
    return np.array(a, dtype=a.dtype.newbyteorder("="), order="C")


def read_safetensors(data: bytes, limits: ReadLimits) -> tuple[dict[str, np.ndarray], dict, list]:
    """The tensors (in header order), the ``__metadata__`` strings and the names of the
    BF16 tensors (read as float32) of a safetensors file given as bytes."""
    if len(data) < 8:
        raise ValueError("safetensors file shorter than its 8-byte header length")
    n = int.from_bytes(data[:8], "little")
    if n > min(limits.max_header_bytes, len(data) - 8):
        raise ValueError(f"safetensors header length {n} exceeds the file or the limit")
    header = load_json_bytes(data[8:8 + n], limits, "safetensors header")
    if not isinstance(header, dict):
        raise ValueError("safetensors header is not a JSON object")
    meta = header.pop("__metadata__", None) or {}
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise ValueError("safetensors __metadata__ must map strings to strings")
    body = data[8 + n:]
    entries = {k: _entry(k, v, limits) for k, v in header.items()}
    end = 0
    for name, (_, _, begin, stop) in sorted(entries.items(), key=lambda kv: kv[1][2:]):
        if begin != end:
            raise ValueError(f"tensor {name!r}: data_offsets leave a gap or overlap "
                             f"(begins at {begin}, previous data ends at {end})")
        end = stop
    if end != len(body):
        raise ValueError(f"safetensors data holds {len(body)} bytes, the header "
                         f"describes {end}")
    tensors = {k: _array(d, s, body[b:e], k) for k, (d, s, b, e) in entries.items()}
    return tensors, dict(meta), [k for k, e in entries.items() if e[0] == "BF16"]


__all__ = ["json_depth", "load_json_bytes", "read_safetensors"]
