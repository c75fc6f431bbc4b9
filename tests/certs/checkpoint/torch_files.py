"""Writers of test files in the formats of torch.save and safetensors, without torch.

The pickles are written opcode by opcode, as torch writes them (protocol 2): see
``tests/data/s4-checkpoints/*.pt`` for real examples.
"""
from __future__ import annotations

import io
import json
import struct
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np


@dataclass(frozen=True)
class G:
    """A global named in the pickle."""

    module: str
    name: str


@dataclass(frozen=True)
class Call:
    """``fn(*args)`` through REDUCE."""

    fn: Any
    args: tuple


@dataclass(frozen=True)
class Pid:
    """A persistent id."""

    pid: tuple


def dumps(obj: Any, proto: int = 2) -> bytes:
    """The pickle opcodes of ``obj`` (plain data, :class:`G`, :class:`Call`, :class:`Pid`)."""
    out = io.BytesIO()
    out.write(b"\x80" + bytes([proto]))
    _dump(obj, out, proto)
    out.write(b".")
    return out.getvalue()


def _dump(obj: Any, out: io.BytesIO, proto: int) -> None:
    w = out.write
    if obj is None:
        w(b"N")
    elif obj is True or obj is False:
        w(b"\x88" if obj else b"\x89")
    elif isinstance(obj, int):
        if 0 <= obj < 256:
            w(b"K" + bytes([obj]))
        else:
            raw = obj.to_bytes((obj.bit_length() + 8) // 8, "little", signed=True)
            w(b"\x8a" + bytes([len(raw)]) + raw)
    elif isinstance(obj, float):
        w(b"G" + struct.pack(">d", obj))
    elif isinstance(obj, str):
        raw = obj.encode()
        w(b"X" + struct.pack("<I", len(raw)) + raw)
    elif isinstance(obj, tuple):
        w(b"(")
        for x in obj:
            _dump(x, out, proto)
        w(b"t")
    elif isinstance(obj, list):
        w(b"](")
        for x in obj:
            _dump(x, out, proto)
        w(b"e")
    elif isinstance(obj, dict):
        w(b"}(")
        for k, v in obj.items():
            _dump(k, out, proto)
            _dump(v, out, proto)
        w(b"u")
    elif isinstance(obj, G):
        if proto >= 4:
            _dump(obj.module, out, proto)
            _dump(obj.name, out, proto)
            w(b"\x93")
        else:
            w(b"c" + f"{obj.module}\n{obj.name}\n".encode())
    elif isinstance(obj, Call):
        _dump(obj.fn, out, proto)
        _dump(obj.args, out, proto)
        w(b"R")
    elif isinstance(obj, Pid):
        _dump(obj.pid, out, proto)
        w(b"Q")
    else:
        raise TypeError(type(obj))


STORAGE = {"float64": "DoubleStorage", "float32": "FloatStorage", "float16": "HalfStorage",
           "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage",
           "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage",
           "bool": "BoolStorage", "complex64": "ComplexFloatStorage",
           "complex128": "ComplexDoubleStorage"}


def tensor(key: str, kind: str, numel: int, size: tuple, stride: tuple, offset: int = 0) -> Call:
    """``_rebuild_tensor_v2`` of a view of storage ``key`` (``kind`` a torch dtype name)."""
    storage = Pid(("storage", G("torch", STORAGE[kind]), key, "cpu", numel))
    return Call(G("torch._utils", "_rebuild_tensor_v2"),
                (storage, offset, size, stride, False, Call(G("collections", "OrderedDict"), ())))


def contiguous_stride(shape: tuple) -> tuple:
    stride, acc = [], 1
    for n in reversed(shape):
        stride.append(acc)
        acc *= n
    return tuple(reversed(stride))


def write_torch_zip(path: Path, pickle_bytes: bytes, storages: dict[str, bytes], *,
                    name: str = "archive", byteorder: bytes | None = b"little") -> Path:
    """A zip archive laid out as torch.save writes it."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr(f"{name}/data.pkl", pickle_bytes)
        if byteorder is not None:
            z.writestr(f"{name}/byteorder", byteorder)
        for key, raw in storages.items():
            z.writestr(f"{name}/data/{key}", raw)
        z.writestr(f"{name}/version", b"3\n")
    return path


def save_state_dict(path: Path, arrays: dict[str, np.ndarray], *, wrap: Any = None) -> Path:
    """``torch.save`` of a state dict of numpy arrays (one contiguous storage each), or of
    ``wrap(state_dict_pickle_object)`` when given (e.g. a Lightning dict)."""
    sd, storages = {}, {}
    for i, (k, a) in enumerate(arrays.items()):
        sd[k] = tensor(str(i), a.dtype.name, a.size, a.shape, contiguous_stride(a.shape))
        storages[str(i)] = a.astype(a.dtype.newbyteorder("<")).tobytes()
    return write_torch_zip(path, dumps(wrap(sd) if wrap else sd), storages)


def save_safetensors(path: Path, arrays: dict[str, tuple[str, np.ndarray]],
                     metadata: dict | None = None) -> Path:
    """A safetensors file: ``arrays`` maps a name to (safetensors dtype, array whose
    little-endian bytes are the data)."""
    header: dict[str, Any] = {"__metadata__": metadata} if metadata else {}
    body, pos = [], 0
    for k, (dtype, a) in arrays.items():
        raw = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes()
        header[k] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [pos, pos + len(raw)]}
        body.append(raw)
        pos += len(raw)
    head = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(head)) + head + b"".join(body))
    return path
