"""Bounds that every checkpoint reader enforces before doing the work they bound."""
from __future__ import annotations

from dataclasses import dataclass

GIB = 2 ** 30
MIB = 2 ** 20


@dataclass(frozen=True)
class ReadLimits:
    """Limits on what a checkpoint file may ask for.

    * ``max_file_bytes``: the file itself (checked with ``os.stat`` before opening);
    * ``max_unpacked_bytes``: the sum of the declared uncompressed sizes of a zip
      archive's entries (checked from its directory before any entry is read);
    * ``max_entries``: entries of a zip archive;
    * ``max_pickle_bytes``: a ``.pt``/``.ckpt`` archive's ``data.pkl``;
    * ``max_header_bytes``: a safetensors JSON header, and a ``.json`` file;
    * ``max_tensor_bytes``: the sum of the sizes of the arrays built (a tensor can view its
      storage many times over with stride 0);
    * ``max_ndim``: dimensions of one tensor;
    * ``max_depth``: nesting of containers (pickles, JSON);
    * ``max_items``: containers and leaves visited when a torch file's contents are
      flattened into keys (a container shared by several paths is visited on each).
    """

    max_file_bytes: int = 2 * GIB
    max_unpacked_bytes: int = 2 * GIB
    max_entries: int = 1 << 16
    max_pickle_bytes: int = 64 * MIB
    max_header_bytes: int = 100 * MIB
    max_tensor_bytes: int = 4 * GIB
    max_ndim: int = 32
    max_depth: int = 64
    max_items: int = 1 << 18


DEFAULT_LIMITS = ReadLimits()


class CheckpointError(ValueError):
    """A checkpoint file that cannot be read safely: its message is one line naming the
    file and the problem."""


def one_line(text: str, limit: int = 300) -> str:
    """``text`` on one line, at most ``limit`` characters (messages quote file contents)."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[:limit - 3] + "..."


__all__ = ["CheckpointError", "DEFAULT_LIMITS", "GIB", "MIB", "ReadLimits", "one_line"]
