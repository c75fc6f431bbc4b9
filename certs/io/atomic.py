"""Atomic file writes.

Every file this package writes goes through :func:`atomic_write`: the data go to a
temporary file in the same directory, which is flushed, synced and renamed over the
target; after a failure or an interrupt the target is either the old file or absent,
never half written.  The files get the mode a plain ``open`` would give them (0666
less the umask).  A temporary file carries its writer's process id; one left behind by
a writer that was killed is removed on the next write to the same target.

:func:`check_targets` checks output paths before any work is done.
"""
from __future__ import annotations

import glob
import os
import re
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
            remove_stale_temps(path)
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=_temp_prefix(path) + f"{os.getpid()}-", suffix=".tmp")
            temps.append(tmp)
            os.fchmod(fd, 0o666 & ~_umask())
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


def _temp_prefix(path: str) -> str:
    return "." + os.path.basename(path) + "."


def _umask() -> int:
    """The process's umask (read from /proc where possible: setting it to read it back
    is not thread safe)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. another user's process
        return True
    return True


def remove_stale_temps(path: str) -> list[str]:
    """Remove the temporary files of ``path`` left by writers that no longer run (their
    process id is in the name); returns the names removed."""
    folder = os.path.dirname(os.path.abspath(path))
    prefix = _temp_prefix(path)
    removed = []
    for tmp in glob.glob(os.path.join(glob.escape(folder), glob.escape(prefix) + "*.tmp")):
        m = re.fullmatch(r"([0-9]+)-[^/]*\.tmp", os.path.basename(tmp)[len(prefix):])
        if m and int(m.group(1)) != os.getpid() and not _alive(int(m.group(1))):
            try:
                os.unlink(tmp)
                removed.append(tmp)
            except OSError:
                pass
    return removed


def check_targets(targets: dict[str, str | None], inputs: tuple = ()) -> None:
    """Check output paths before any work: ``targets`` maps an option name to its path
    (None: not given).  ValueError (one line) for an empty name, two options naming one
    file, an output that is one of the ``inputs``, a directory, or a folder that does not
    exist or cannot be written."""
    seen: dict[str, str] = {}
    ins = {os.path.realpath(os.fspath(p)): p for p in inputs if p}
    for option, path in targets.items():
        if path is None:
            continue
        path = os.fspath(path)
        if not path.strip():
            raise ValueError(f"{option}: empty file name")
        real = os.path.realpath(path)
        if real in seen:
            raise ValueError(f"{option} and {seen[real]} name the same file {path}")
        if real in ins:
            raise ValueError(f"{option} {path} would overwrite the input {ins[real]}")
        seen[real] = option
        folder = os.path.dirname(real)
        if os.path.isdir(real):
            raise ValueError(f"{option} {path}: is a directory")
        if not os.path.isdir(folder):
            raise ValueError(f"{option} {path}: no such directory {os.path.dirname(path) or '.'}")
        try:  # the one sure test that a file can be created there (root ignores modes)
            fd, probe = tempfile.mkstemp(dir=folder, prefix=_temp_prefix(path) + f"{os.getpid()}-", suffix=".tmp")
            os.close(fd)
            os.unlink(probe)
        except OSError as e:
            raise ValueError(f"{option} {path}: cannot write there ({e.strerror or e})") from None
