"""Zip archives checked from their directory before any entry is read."""
from __future__ import annotations

import os
import struct
import zipfile
import zlib
from typing import Any

from .read_limits import ReadLimits

#: deflate cannot compress by more than about 1032:1
_MAX_DEFLATE_RATIO = 1100
#: the errors a damaged archive raises from zipfile and zlib
ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, zlib.error,
              struct.error, NotImplementedError, KeyError, ValueError, OverflowError)


def check_file_size(path: Any, limits: ReadLimits) -> int:
    """The size of the file at ``path``; refuses a missing, special or too large file."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise ValueError(f"cannot read the file ({e.strerror or e})") from None
    if not os.path.isfile(path):
        raise ValueError("not a regular file")
    if st.st_size > limits.max_file_bytes:
        raise ValueError(f"file of {st.st_size} bytes exceeds the limit of "
                         f"{limits.max_file_bytes} bytes")
    return st.st_size


def open_zip(path: Any, limits: ReadLimits) -> zipfile.ZipFile:
    """Open a zip archive whose directory passes the checks: entry count, unique names,
    no encryption, stored or deflated entries of plausible declared sizes, and a total
    declared uncompressed size within ``limits.max_unpacked_bytes``."""
    try:
        zf = zipfile.ZipFile(path)
    except ZIP_ERRORS as e:
        raise ValueError(f"not a valid zip archive ({type(e).__name__}: {e})") from None
    try:
        check_directory(zf.infolist(), limits)
    except ValueError:
        zf.close()
        raise
    return zf


def check_directory(infos: list[zipfile.ZipInfo], limits: ReadLimits) -> None:
    if len(infos) > limits.max_entries:
        raise ValueError(f"zip archive has {len(infos)} entries, more than the limit of "
                         f"{limits.max_entries}")
    names = [i.filename for i in infos]
    if len(set(names)) != len(names):
        raise ValueError("zip archive has duplicate entry names")
    total = 0
    for i in infos:
        if i.flag_bits & 0x1:
            raise ValueError(f"zip entry {i.filename!r} is encrypted")
        if i.compress_type == zipfile.ZIP_STORED:
            if i.compress_size != i.file_size:
                raise ValueError(f"zip entry {i.filename!r}: stored size {i.compress_size} "
                                 f"differs from its declared size {i.file_size}")
        elif i.compress_type == zipfile.ZIP_DEFLATED:
            if i.file_size > _MAX_DEFLATE_RATIO * max(i.compress_size, 1):
                raise ValueError(f"zip entry {i.filename!r} declares an implausible "
                                 f"compression ratio ({i.file_size} from {i.compress_size} bytes)")
        else:
            raise ValueError(f"zip entry {i.filename!r} uses unsupported compression "
                             f"method {i.compress_type}")
        total += i.file_size
        if total > limits.max_unpacked_bytes:
            raise ValueError(f"zip entries declare more than {limits.max_unpacked_bytes} "
                             "uncompressed bytes")


def read_entry(zf: zipfile.ZipFile, name: str, max_bytes: int) -> bytes:
    """The bytes of one entry, after checking its declared size against ``max_bytes``;
    a damaged entry (bad CRC, truncated data) is refused."""
    try:
        info = zf.getinfo(name)
    except KeyError:
        raise ValueError(f"zip archive has no entry {name!r}") from None
    if info.file_size > max_bytes:
        raise ValueError(f"zip entry {name!r} of {info.file_size} bytes exceeds the limit "
                         f"of {max_bytes} bytes")
    try:
        with zf.open(info) as f:
            data = f.read(info.file_size + 1)
    except ZIP_ERRORS as e:
        raise ValueError(f"damaged zip entry {name!r} ({type(e).__name__}: {e})") from None
    if len(data) != info.file_size:
        raise ValueError(f"zip entry {name!r} holds {len(data)} bytes, "
                         f"not the declared {info.file_size}")
    return data


__all__ = ["ZIP_ERRORS", "check_directory", "check_file_size", "open_zip", "read_entry"]
