"""Atomic file writes.

Every file this package writes goes through :func:`atomic_write`: the data go to a
temporary file in the same directory, which is flushed, synced and renamed over the
target; after a failure or an interrupt the target is either the old file or absent,
never half written.
"""
from __future__ import annotations

import os
import tempfile


def atomic_write(items: list[tuple[str, bytes]]) -> None:
    """Write each (path, data) atomically: temporary files in the targets' directories,
    flushed and synced, then renamed over the targets.  On any failure or interrupt the
    temporary files are removed and no target is half written; an OSError becomes a
    one-line ValueError naming the file."""
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
    """Sync a directory so the renames survive a crash (best effort: not every file
    system lets a directory be opened or synced)."""
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
