"""Checkpoint files as a flat dict of numpy arrays, without torch and without running
anything stored in the file.

:func:`read_checkpoint` reads, by the file's extension:

* ``.pt``, ``.pth``, ``.bin``, ``.ckpt``: a ``torch.save`` zip archive, through a pickle
  machine that rebuilds only tensors, storages and plain containers (:mod:`.read_torch`);
* ``.safetensors`` (:mod:`.read_safetensors`);
* ``.npz``: numeric arrays only (no pickled objects);
* ``.json``: an object whose values are numbers or nested lists of numbers.

Nested containers are flattened with ``.``: ``{"model": {"w": t}}`` gives the key
``model.w`` (a ``state_dict`` is already flat: its keys are dotted module paths), list
entries get their index.  A Lightning checkpoint (a top-level dict with a
``state_dict`` dict) has ``format == "ckpt"``; its tensors are those of ``state_dict``,
its ``hyper_parameters`` are returned as plain data (an OmegaConf ``DictConfig``, as a
Hydra-configured run stores them, becomes the dict ``OmegaConf.to_container(cfg,
resolve=False)`` would give: interpolations stay strings), and its other top-level entries go
to ``extra`` when they hold no tensor (others, such as ``optimizer_states``, are only
named in ``extra["skipped"]``).  Any other torch file has ``format == "pt"`` and all its
tensors.  Non-tensor leaves met among the tensors (numbers, strings, None) go to
``extra`` under their flattened key.

Every bound of :class:`~.read_limits.ReadLimits` is checked before the work it bounds;
anything malformed or refused raises :class:`~.read_limits.CheckpointError` (a
``ValueError``) whose one-line message names the file and the problem.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .read_limits import DEFAULT_LIMITS, CheckpointError, ReadLimits, one_line
from .read_omegaconf import omega_content
from .read_pickle import Callable, ClassName, Instance
from .read_safetensors import load_json_bytes, read_safetensors
from .read_torch import read_torch
from .read_zip import ZIP_ERRORS, check_file_size, open_zip

_TORCH_SUFFIXES = (".pt", ".pth", ".bin", ".ckpt")
#: the first bytes of a pre-1.6 (non-zip) torch.save file: protocol 2, then a magic number
_LEGACY_TORCH = b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19"


@dataclass
class Checkpoint:
    """A checkpoint file's contents.

    ``tensors``: flattened key -> C-contiguous numpy array of the stored dtype (bfloat16
    as float32, exactly; their keys are listed in ``extra["bfloat16"]``).
    ``hyper_parameters``: a Lightning checkpoint's ``hyper_parameters`` as plain data
    (dict, list, str, int, float, bool, None), else None.
    ``format``: ``"pt"``, ``"ckpt"``, ``"safetensors"``, ``"npz"`` or ``"json"``.
    ``extra``: other plain entries, for information (``epoch``, ``global_step``,
    safetensors ``metadata``, ``skipped``)."""

    tensors: dict[str, np.ndarray]
    hyper_parameters: dict | None = None
    format: str = "pt"
    extra: dict = field(default_factory=dict)


def _entries(obj: Any, prefix: str) -> list[tuple[str, Any]]:
    if isinstance(obj, dict):
        out = []
        for k, v in obj.items():
            if isinstance(k, bool) or not isinstance(k, (str, int)):
                raise ValueError(f"key of type {type(k).__name__} under {prefix or 'the top'!r}")
            out.append((f"{prefix}{k}", v))
        return out
    return [(f"{prefix}{i}", v) for i, v in enumerate(obj)]


def flatten(obj: Any, max_depth: int, budget: list[int]
            ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Arrays and plain leaves of nested dicts, lists and tuples, by dotted key.

    Iterative; refuses nesting deeper than ``max_depth`` (which also stops cycles), keys
    other than strings and integers, two leaves with one key, any object that is not
    plain data, and more visits than ``budget[0]`` (shared by the calls of one read: a
    container met on several paths is visited on each, and sharing can nest)."""
    arrays: dict[str, np.ndarray] = {}
    leaves: dict[str, Any] = {}
    todo = [("", obj, 0)]
    while todo:
        key, v, depth = todo.pop()
        budget[0] -= 1
        if budget[0] < 0:
            raise ValueError("more entries than the limit (ReadLimits.max_items)")
        if isinstance(v, (dict, list, tuple)):
            if depth >= max_depth:
                raise ValueError(f"containers nested deeper than {max_depth} at {key!r}")
            inner = _entries(v, key + "." if key else "")
            todo.extend((k, x, depth + 1) for k, x in reversed(inner))
            continue
        if key in arrays or key in leaves:
            raise ValueError(f"two entries flatten to the key {key!r}")
        if isinstance(v, np.ndarray):
            arrays[key] = v
        else:
            leaves[key] = plain(v, max_depth, key)
    return arrays, leaves


def plain(obj: Any, max_depth: int, where: str = "", depth: int = 0,
          done: dict | None = None) -> Any:
    """``obj`` as plain data: dicts (string or integer keys), lists, str, int, float,
    bool, None; tuples and sets become lists, arrays their ``tolist()``, OmegaConf
    containers their content, a class named as a value its dotted name.  A container
    met twice is converted once (``done``), so shared data costs no more than once."""
    if depth > max_depth:
        raise ValueError(f"containers nested deeper than {max_depth} at {where!r}")
    if obj is None or isinstance(obj, (str, int, float, complex, bytes)):
        return obj
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (Callable, ClassName)):
        return obj.name
    done = {} if done is None else done
    if id(obj) in done:
        return done[id(obj)]
    if isinstance(obj, Instance):
        out: Any = plain(omega_content(obj), max_depth, where, depth + 1, done)
    elif isinstance(obj, dict):
        out = {k: plain(v, max_depth, f"{where}.{k}", depth + 1, done)
               for k, v in _entries(obj, "")}
    elif isinstance(obj, (list, tuple, set, frozenset)):
        out = [plain(v, max_depth, where, depth + 1, done) for v in obj]
    else:
        raise ValueError(f"unexpected {type(obj).__name__} object at {where or 'the top'!r}")
    done[id(obj)] = out
    return out


def _holds_array(obj: Any, max_depth: int, budget: list[int]) -> bool:
    try:
        arrays, _ = flatten(obj, max_depth, budget)
    except ValueError:
        if budget[0] < 0:
            raise
        return True
    return bool(arrays)


def _from_torch(path: Any, limits: ReadLimits) -> Checkpoint:
    tf = read_torch(path, limits)
    top = tf.obj
    if not isinstance(top, dict):
        raise ValueError(f"the archive holds a {type(top).__name__}, not a dict of tensors")
    lightning = isinstance(top.get("state_dict"), dict)
    budget = [limits.max_items]
    tensors, leaves = flatten(top["state_dict"] if lightning else top, limits.max_depth, budget)
    extra: dict[str, Any] = {}
    hyper = None
    if lightning:
        extra.update({f"state_dict.{k}": v for k, v in leaves.items()})
        skipped = []
        for name, value in top.items():
            if name == "state_dict":
                continue
            if name == "hyper_parameters":
                hyper = plain(value, limits.max_depth, name)
                if hyper is not None and not isinstance(hyper, dict):
                    raise ValueError(f"hyper_parameters is a {type(hyper).__name__}, not a dict")
            elif _holds_array(value, limits.max_depth, budget):
                skipped.append(str(name))
            else:
                extra[str(name)] = plain(value, limits.max_depth, str(name))
        if skipped:
            extra["skipped"] = skipped
    else:
        extra.update(leaves)
    bf16 = {id(a) for a in tf.bfloat16}
    if bf16:
        extra["bfloat16"] = [k for k, a in tensors.items() if id(a) in bf16]
    return Checkpoint(tensors, hyper, "ckpt" if lightning else "pt", extra)


def _from_npz(path: Any, limits: ReadLimits) -> Checkpoint:
    open_zip(path, limits).close()  # the directory checks, before numpy reads anything
    tensors = {}
    try:
        with np.load(path, allow_pickle=False) as z:
            for k in z.files:
                tensors[k] = _numeric(z[k], k)
    except ZIP_ERRORS as e:
        raise ValueError(f"not a readable npz file ({type(e).__name__}: {e})") from None
    return Checkpoint(tensors, None, "npz", {})


def _numeric(a: Any, key: str) -> np.ndarray:
    if not isinstance(a, np.ndarray) or a.dtype.kind not in "biufc":
        raise ValueError(f"entry {key!r} is not an array of numbers")
    return np.require(a, requirements="C")


def _from_json(path: Any, limits: ReadLimits) -> Checkpoint:
    with open(path, "rb") as f:
        data = f.read(limits.max_header_bytes + 1)
    doc = load_json_bytes(data, limits, "JSON file")
    if not isinstance(doc, dict):
        raise ValueError("JSON file is not an object of arrays")
    tensors, extra = {}, {}
    todo = [("", doc, 0)]
    while todo:
        prefix, d, depth = todo.pop()
        for k, v in d.items():
            if isinstance(v, dict):
                todo.append((f"{prefix}{k}.", v, depth + 1))
            elif isinstance(v, (str, type(None))):
                extra[prefix + k] = v
            else:
                try:
                    tensors[prefix + k] = _numeric(np.array(v), prefix + k)
                except (ValueError, OverflowError, TypeError):
                    raise ValueError(f"entry {prefix + k!r} is not a rectangular array of "
                                     "numbers") from None
    return Checkpoint(tensors, None, "json", extra)


def _from_safetensors(path: Any, limits: ReadLimits) -> Checkpoint:
    with open(path, "rb") as f:
        data = f.read()
    tensors, meta, bf16 = read_safetensors(data, limits)
    extra: dict[str, Any] = {"metadata": meta} if meta else {}
    if bf16:
        extra["bfloat16"] = bf16
    return Checkpoint(tensors, None, "safetensors", extra)


def _is_zip(path: Any) -> bool:
    """Whether the file starts as a zip archive; refuses the pre-zip torch format."""
    with open(path, "rb") as f:
        head = f.read(len(_LEGACY_TORCH))
    if head == _LEGACY_TORCH:
        raise ValueError("legacy (before torch 1.6, not zip) torch.save format is not "
                         "supported; save it again with a recent torch")
    return head.startswith(b"PK")


def read_checkpoint(path: Any, *, limits: ReadLimits = DEFAULT_LIMITS) -> Checkpoint:
    """Read a checkpoint file (see the module documentation for the formats).

    Raises :class:`CheckpointError` (a ``ValueError``) with one line, ``"<path>:
    <problem>"``, for a missing, too large, truncated, corrupt or hostile file: a pickle
    naming any global other than tensor rebuilding, storages and plain containers is
    refused before anything is built, and nothing stored in a file is ever executed."""
    name = os.fspath(path)
    try:
        check_file_size(name, limits)
        suffix = os.path.splitext(name)[1].lower()
        if suffix == ".safetensors":
            return _from_safetensors(name, limits)
        if suffix == ".npz":
            return _from_npz(name, limits)
        if suffix == ".json":
            return _from_json(name, limits)
        if suffix in _TORCH_SUFFIXES:
            if not _is_zip(name):
                raise ValueError("not a torch.save zip archive")
            return _from_torch(name, limits)
        if _is_zip(name):
            return _from_torch(name, limits)
        raise ValueError("unknown checkpoint format (expected .pt, .pth, .bin, .ckpt, "
                         ".safetensors, .npz or .json)")
    except CheckpointError:
        raise
    except (ValueError, OSError, RecursionError, MemoryError) as e:
        raise CheckpointError(f"{name}: {one_line(e)}") from None


__all__ = ["Checkpoint", "CheckpointError", "ReadLimits", "flatten", "plain", "read_checkpoint"]
