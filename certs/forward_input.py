"""The input of ``s4cert forward``: one float32 or float64 array of an .npz or .npy file,
read exactly, without pickle, its header's dtype, axes and size checked before any data
are read."""
from __future__ import annotations

import math
import os
import zipfile
from typing import Any

import numpy as np

#: the largest input read (entries)
MAX_INPUT_ENTRIES = 1 << 28


def read_input(path: Any, key: str | None) -> np.ndarray:
    """One float32 or float64 array of an .npz (``key``) or an .npy, read exactly (no pickle;
    its header's shape and dtype checked before the data are read)."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ValueError(f"{path}: no such file")
    try:
        if path.lower().endswith(".npy"):
            if key is not None:
                raise ValueError("--key selects an array of an .npz file; a .npy file holds one array")
            with open(path, "rb") as f:
                _check_header(f, path)
            return np.load(path, allow_pickle=False)
        with zipfile.ZipFile(path) as z:
            names = [n[:-4] for n in z.namelist() if n.endswith(".npy")]
            if key is None:
                if len(names) != 1:
                    raise ValueError(f"{path} holds arrays {names}: choose one with --key")
                key = names[0]
            if key not in names:
                raise ValueError(f"{path}: no array {key!r} (it holds {names})")
            with z.open(f"{key}.npy") as f:
                _check_header(f, f"{path}[{key}]")
        with np.load(path, allow_pickle=False) as z:
            return z[key]
    except (OSError, EOFError, zipfile.BadZipFile) as e:
        raise ValueError(f"{path}: cannot read ({e})") from None


def _check_header(f, what: str) -> None:
    version = np.lib.format.read_magic(f)
    read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, _, dtype = read(f)
    if dtype not in (np.dtype("<f4"), np.dtype("<f8"), np.dtype(">f4"), np.dtype(">f8")):
        raise ValueError(f"{what}: expected float32 or float64 numbers, got dtype {dtype}")
    if len(shape) != 3:
        raise ValueError(f"{what}: expected an array of 3 axes (batch, features, time), got shape {shape}")
    if math.prod(shape) > MAX_INPUT_ENTRIES:
        raise ValueError(f"{what}: {math.prod(shape)} entries exceed the limit of {MAX_INPUT_ENTRIES}")
