"""``torch.save`` archives (``.pt``, Lightning ``.ckpt``) without torch.

The zip format: ``<name>/data.pkl`` (a pickle), ``<name>/data/<key>`` (the raw bytes of
each storage), ``<name>/byteorder`` (``little`` or ``big``; absent means little),
``<name>/version`` and a few other records.  The pickle names
``torch._utils._rebuild_tensor_v2`` and storage types; here each allowed name maps to a
numpy stand-in (:data:`GLOBALS`) and :mod:`.read_pickle` refuses every other name, so
nothing in the file is ever called.

A tensor becomes a C-contiguous numpy array of its dtype (bfloat16 becomes float32,
exactly: the bfloat16 bits are the upper half of the float32 bits).
"""
from __future__ import annotations

import math
import re
import zipfile
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .read_limits import ReadLimits
from .read_omegaconf import omegaconf_globals
from .read_pickle import Callable, PickleRefused, Record, plain_key, restricted_load
from .read_zip import open_zip, read_entry

#: element kinds: numpy type of the stored bytes (little-endian), or "bf16" / "bool"
_KINDS = {
    "float64": "f8", "float32": "f4", "float16": "f2", "bfloat16": "bf16",
    "int64": "i8", "int32": "i4", "int16": "i2", "int8": "i1", "uint8": "u1", "bool": "bool",
    "complex64": "c8", "complex128": "c16", "uint16": "u2", "uint32": "u4", "uint64": "u8",
}
_STORAGES = {
    "DoubleStorage": "float64", "FloatStorage": "float32", "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
    "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8",
    "BoolStorage": "bool", "ComplexFloatStorage": "complex64",
    "ComplexDoubleStorage": "complex128", "UntypedStorage": "uint8",
}
_LIGHTNING_DICTS = ("pytorch_lightning.utilities.parsing", "lightning.pytorch.utilities.parsing",
                    "lightning.fabric.utilities.data", "lightning_fabric.utilities.data")


@dataclass(frozen=True)
class Kind:
    """A tensor element type: its torch name and the numpy type of its stored bytes."""

    name: str
    untyped: bool = False

    @property
    def raw(self) -> np.dtype:
        code = _KINDS[self.name]
        return np.dtype("<u2" if code == "bf16" else "<u1" if code == "bool" else "<" + code)


@dataclass
class _Storage:
    key: str
    kind: Kind
    data: bytes


@dataclass
class _Loader:
    """The state of one archive: its zip, record prefix, byte order and budgets."""

    zf: zipfile.ZipFile
    prefix: str
    big_endian: bool
    limits: ReadLimits
    storages: dict = field(default_factory=dict)
    tensor_bytes: int = 0
    bfloat16: list = field(default_factory=list)

    def persistent_load(self, pid: Any) -> _Storage:
        if not (isinstance(pid, tuple) and len(pid) == 5):
            raise PickleRefused("persistent id is not a storage record")
        tag, kind, key, location, numel = pid
        if tag not in ("storage", b"storage") or not isinstance(kind, Kind):
            raise PickleRefused(f"persistent id {one_word(tag)} is not a storage record")
        if not isinstance(key, str) or not isinstance(location, str):
            raise PickleRefused("storage key and location must be strings")
        if not _is_int(numel) or numel < 0:
            raise PickleRefused(f"storage {key!r} has an invalid element count")
        name = f"{self.prefix}data/{key}"
        nbytes = numel * kind.raw.itemsize
        info = _info(self.zf, name)
        if info.file_size != nbytes:
            raise PickleRefused(f"storage {key!r} declares {numel} elements ({nbytes} bytes) "
                                f"but its record holds {info.file_size} bytes")
        if key not in self.storages:
            self.storages[key] = read_entry(self.zf, name, nbytes)
        return _Storage(key, kind, self.storages[key])

    def rebuild(self, storage: Any, offset: Any, size: Any, stride: Any, kind: Kind) -> np.ndarray:
        if not isinstance(storage, _Storage):
            raise PickleRefused("tensor without a storage")
        size, stride = _dims(size, "size", self.limits), _dims(stride, "stride", self.limits)
        if len(size) != len(stride):
            raise PickleRefused(f"tensor size {size} and stride {stride} differ in length")
        if not _is_int(offset) or offset < 0:
            raise PickleRefused("tensor storage offset must be a non-negative integer")
        raw = kind.raw
        numel = len(storage.data) // raw.itemsize
        count = math.prod(size)
        self.tensor_bytes += count * raw.itemsize
        if self.tensor_bytes > self.limits.max_tensor_bytes:
            raise PickleRefused(f"tensors exceed the limit of {self.limits.max_tensor_bytes} bytes")
        if count == 0:
            return _finish(np.zeros(size, dtype=raw), kind, self)
        reach = offset + sum((n - 1) * s for n, s in zip(size, stride))
        if reach >= numel:
            raise PickleRefused(f"tensor of size {size}, stride {stride} and offset {offset} "
                                f"reaches beyond its storage {storage.key!r} of {numel} elements")
        base = np.frombuffer(storage.data, dtype=raw.newbyteorder(">" if self.big_endian else "<"),
                             count=numel)
        view = np.lib.stride_tricks.as_strided(
            base[offset:], shape=size,
            strides=[s * raw.itemsize if n > 1 else 0 for n, s in zip(size, stride)],
            writeable=False)
        return _finish(np.array(view, dtype=raw.newbyteorder("="), order="C"), kind, self)


def one_word(x: Any) -> str:
    return repr(x) if isinstance(x, (str, bytes, int)) else type(x).__name__


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _info(zf: zipfile.ZipFile, name: str) -> zipfile.ZipInfo:
    try:
        return zf.getinfo(name)
    except KeyError:
        raise PickleRefused(f"archive has no storage record {name!r}") from None


def _dims(x: Any, what: str, limits: ReadLimits) -> tuple[int, ...]:
    if not isinstance(x, tuple) or not all(_is_int(n) and n >= 0 for n in x):
        raise PickleRefused(f"tensor {what} must be a tuple of non-negative integers")
    if len(x) > limits.max_ndim:
        raise PickleRefused(f"tensor with {len(x)} dimensions (limit {limits.max_ndim})")
    return x


def _finish(a: np.ndarray, kind: Kind, loader: _Loader) -> np.ndarray:
    code = _KINDS[kind.name]
    if code == "bf16":
        out = (a.astype(np.uint32) << 16).view(np.float32)
        loader.bfloat16.append(out)
        return out
    if code == "bool":
        if a.size and int(a.max()) > 1:
            raise PickleRefused("bool tensor holds bytes other than 0 and 1")
        return a.astype(np.bool_)
    return a


def _rebuild_v2(loader: _Loader):
    def fn(storage: Any, offset: Any, size: Any, stride: Any, requires_grad: Any = False,
           hooks: Any = None, metadata: Any = None) -> np.ndarray:
        if not isinstance(storage, _Storage):
            raise PickleRefused("tensor without a storage")
        return loader.rebuild(storage, offset, size, stride, storage.kind)
    return fn


def _rebuild_v3(loader: _Loader):
    def fn(storage: Any, offset: Any, size: Any, stride: Any, requires_grad: Any,
           hooks: Any, dtype: Any, metadata: Any = None) -> np.ndarray:
        if not isinstance(dtype, Kind) or not isinstance(storage, _Storage):
            raise PickleRefused("_rebuild_tensor_v3 needs a storage and a dtype")
        if not storage.kind.untyped:
            raise PickleRefused("_rebuild_tensor_v3 needs an untyped storage")
        if len(storage.data) % dtype.raw.itemsize:
            raise PickleRefused(f"storage {storage.key!r} is not a whole number of {dtype.name}")
        return loader.rebuild(storage, offset, size, stride, dtype)
    return fn


def _parameter(data: Any, requires_grad: Any = False, hooks: Any = None,
               state: Any = None) -> np.ndarray:
    if not isinstance(data, np.ndarray):
        raise PickleRefused("parameter without a tensor")
    return data


def _size(dims: Any = ()) -> tuple:
    if not isinstance(dims, tuple) or not all(_is_int(n) for n in dims):
        raise PickleRefused("torch.Size of non-integers")
    return dims


def _empty_record(*args: Any) -> Record:
    if args:
        raise PickleRefused("an OrderedDict or dict subclass built with arguments")
    return Record()


def _latin1_bytes(text: Any, encoding: Any = "latin1") -> bytes:
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise PickleRefused("_codecs.encode other than of a string to latin1")
    return text.encode("latin-1")


def _set_of(kind: type) -> Callable:
    def build(items: Any = ()) -> Any:
        if not isinstance(items, (list, tuple)):
            raise PickleRefused(f"{kind.__name__} of a {type(items).__name__}")
        return kind(plain_key(v) for v in items)
    return Callable(f"builtins.{kind.__name__}", build)


#: sets as protocols 0 to 3 write them (later protocols have opcodes for them)
_SETS = {(module, kind.__name__): _set_of(kind) for module in ("builtins", "__builtin__")
         for kind in (set, frozenset)}


def globals_table(loader: _Loader) -> dict[tuple[str, str], Any]:
    """The names a torch pickle may use, each mapped to its stand-in: tensor rebuilding,
    storage types, dtypes, ``torch.Size``, ``OrderedDict``, sets, Lightning's
    ``AttributeDict`` and OmegaConf's containers (:mod:`.read_omegaconf`)."""
    functions = {
        ("torch._utils", "_rebuild_tensor_v2"): _rebuild_v2(loader),
        ("torch._utils", "_rebuild_tensor_v3"): _rebuild_v3(loader),
        ("torch._utils", "_rebuild_parameter"): _parameter,
        ("torch._utils", "_rebuild_parameter_with_state"): _parameter,
        ("torch", "Size"): _size,
        ("collections", "OrderedDict"): _empty_record,
        ("_codecs", "encode"): _latin1_bytes,
        **{(module, "AttributeDict"): _empty_record for module in _LIGHTNING_DICTS},
    }
    table: dict[tuple[str, str], Any] = {**omegaconf_globals(), **_SETS}
    table.update({(m, n): Callable(f"{m}.{n}", fn) for (m, n), fn in functions.items()})
    for name, kind in _STORAGES.items():
        table[("torch", name)] = Kind(kind, untyped=name == "UntypedStorage")
    table[("torch.storage", "UntypedStorage")] = table[("torch", "UntypedStorage")]
    for name in _KINDS:
        table[("torch", name)] = Kind(name)
    return table


def _archive_prefix(zf: zipfile.ZipFile) -> str:
    pickles = [n for n in zf.namelist() if re.fullmatch(r"[^/]+/data\.pkl", n)]
    if len(pickles) != 1:
        if any(n == "data.pkl" or n.endswith("/constants.pkl") for n in zf.namelist()):
            raise ValueError("not a torch.save archive (TorchScript or unknown layout)")
        raise ValueError(f"not a torch.save archive ({len(pickles)} '<name>/data.pkl' records)")
    prefix = pickles[0][:-len("data.pkl")]
    if not all(n.startswith(prefix) for n in zf.namelist()):
        raise ValueError("torch archive with records outside its folder")
    return prefix


def _byteorder(zf: zipfile.ZipFile, prefix: str) -> bool:
    if prefix + "byteorder" not in zf.namelist():
        return False
    order = read_entry(zf, prefix + "byteorder", 16)
    if order not in (b"little", b"big"):
        raise ValueError(f"unknown byte order {order[:16]!r}")
    return order == b"big"


@dataclass
class TorchFile:
    """What a torch archive holds: the rebuilt object and counts for the report."""

    obj: Any
    storages: int
    bfloat16: list  # the arrays that were bfloat16 tensors


def read_torch(path: Any, limits: ReadLimits) -> TorchFile:
    """Rebuild the object that ``torch.save`` wrote to ``path``: plain containers
    (``OrderedDict`` and Lightning's ``AttributeDict`` become :class:`Record`, a dict)
    with numpy arrays for tensors.  Raises ``ValueError`` with one line on anything else."""
    zf = open_zip(path, limits)
    with zf:
        prefix = _archive_prefix(zf)
        loader = _Loader(zf, prefix, _byteorder(zf, prefix), limits)
        data = read_entry(zf, prefix + "data.pkl", limits.max_pickle_bytes)
        obj = restricted_load(data, globals_table(loader), loader.persistent_load,
                              max_depth=limits.max_depth)
        return TorchFile(obj, len(loader.storages), loader.bfloat16)


__all__ = ["Kind", "TorchFile", "globals_table", "read_torch"]
