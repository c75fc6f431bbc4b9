"""What the ``s4cert`` command checks about the files it is given, and the words its
messages use for the library's options.

* Every output option has the suffixes of its format (:data:`OUTPUT_SUFFIXES`); a name
  with another suffix is refused before any work (a name without one is taken as given).
* A file written by s4cert itself (a kernel file, a report) given where a checkpoint is
  read is named for what it is, with the command that reads it; so is a JSON file that
  describes a checkpoint (a fixture's description), with the checkpoint it names
  (:func:`refuse_s4cert_file`).
* A reason from the library names the argument and the option (``max_prec (--max-prec)``,
  ``counts=True (--counts)``); the command adds the limit it ran with (:func:`with_flags`).
"""
from __future__ import annotations

import json
import os
import re
import zipfile
from typing import Any

#: command -> output option (the attribute on the parsed arguments, the option as typed)
#: -> the suffixes of what it writes
OUTPUT_SUFFIXES: dict[str, dict[tuple[str, str], tuple[str, ...]]] = {
    "kernel": {("out", "--out"): (".json", ".npz"), ("npz", "--npz"): (".npz",)},
    "model": {("out", "--out"): (".json",), ("kernels", "--kernels"): (".npz",)},
    "lmu-audit": {("out", "--out"): (".json",), ("kernels", "--kernels"): (".npz",)},
    "forward": {("out", "--out"): (".json",), ("outputs", "--outputs"): (".npz",)},
}

#: command -> the attribute holding the checkpoint it reads
CHECKPOINT_INPUTS = {"model": "file", "forward": "file", "lmu-audit": "checkpoint"}

#: an s4cert file format -> (what it is, the command that reads it)
S4CERT_KINDS = {
    "s4cert.kernel/1": ("an s4cert kernel file", "s4cert audit {path} re-verifies it; "
                        "s4cert compare and s4cert plot read it too"),
    "s4cert.kernel.npz/1": ("an s4cert kernel file (binary)", "s4cert audit {path} re-verifies it; "
                            "s4cert compare and s4cert plot read it too"),
    "s4cert.model-report/1": ("an s4cert model report", "it is the output of s4cert model; give the checkpoint"),
    "s4cert.forward-report/1": ("an s4cert forward report", "it is the output of s4cert forward; give the checkpoint"),
    "s4cert.lmu-audit/1": ("an s4cert lmu-audit report", "it is the output of s4cert lmu-audit; give the checkpoint"),
}

#: the suffixes of the checkpoints s4cert reads
CHECKPOINT_SUFFIXES = ("pt", "ckpt", "safetensors", "npz")
#: the largest JSON file read to tell whether it describes a checkpoint
_DESCRIPTION_BYTES = 1 << 20

_FORMAT = re.compile(rb'"format"\s*:\s*"(s4cert\.[A-Za-z0-9.-]+/[0-9]+)"')
#: bytes read when looking for a file's format (the format comes first in s4cert's files)
_SNIFF_BYTES = 4096


def check_output_suffixes(command: str, args: Any) -> None:
    """ValueError (one line) for an output path whose suffix is not one of its format's.
    Two options naming one file are left to the command's path check, which says so."""
    given = {key: getattr(args, key[0], None) for key in OUTPUT_SUFFIXES.get(command, {})}
    real = [os.path.realpath(os.fspath(p)) for p in given.values() if p]
    if len(set(real)) != len(real):
        return
    for (attr, option), suffixes in OUTPUT_SUFFIXES.get(command, {}).items():
        path = given[(attr, option)]
        if not path:
            continue
        suffix = os.path.splitext(os.fspath(path))[1].lower()
        if suffix and suffix not in suffixes:
            kinds = " or ".join(suffixes)
            raise ValueError(f"{option} {path}: {option} writes {kinds} ({_what(command, option)}), "
                             f"not {suffix}")


def _what(command: str, option: str) -> str:
    if command == "kernel" and option == "--out":
        return "the kernel file, JSON or binary"
    if option == "--out":
        return "a JSON report"
    return "numpy arrays"


def s4cert_format(path: Any) -> str | None:
    """The s4cert format the file at ``path`` declares (its first bytes for JSON, its
    ``header.json`` member for the binary kernel file), else None."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        return None
    try:
        with open(path, "rb") as fh:
            head = fh.read(_SNIFF_BYTES)
        if head.startswith(b"PK\x03\x04"):
            with zipfile.ZipFile(path) as z:
                info = next((i for i in z.infolist() if i.filename == "header.json"), None)
                if info is None or info.file_size > (1 << 20):
                    return None
                head = z.read(info)[:_SNIFF_BYTES]
        m = _FORMAT.search(head)
        return m.group(1).decode() if m and m.group(1).decode() in S4CERT_KINDS else None
    except (OSError, zipfile.BadZipFile, json.JSONDecodeError, ValueError):
        return None


def description_of(path: Any) -> str | None:
    """What a JSON file that describes a checkpoint is (a test fixture's description,
    which lists its ``files``, or of its outputs, which names its ``checkpoint``), with
    the checkpoint it names; None for any other file."""
    path = os.fspath(path)
    if not (path.lower().endswith(".json") and os.path.isfile(path)) or os.path.getsize(path) > _DESCRIPTION_BYTES:
        return None
    try:
        with open(path, "rb") as fh:
            doc = json.loads(fh.read())
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(doc, dict):
        return None
    files = doc.get("files")
    if isinstance(files, list) and files and all(isinstance(f, str) for f in files):
        named = [f for f in files if f.rsplit(".", 1)[-1] in CHECKPOINT_SUFFIXES]
        return "a checkpoint's description (JSON), not a checkpoint" + (
            f"; give the checkpoint it lists, {named[0][:200]}" if named else "")
    if isinstance(doc.get("checkpoint"), str):
        return ("the description of a checkpoint's outputs (JSON), not a checkpoint; give its checkpoint, "
                f"{doc['checkpoint'][:200]}")
    return None


def refuse_s4cert_file(command: str, args: Any) -> None:
    """ValueError (one line) when the checkpoint a command reads is a file s4cert wrote,
    or a JSON description of a checkpoint."""
    attr = CHECKPOINT_INPUTS.get(command)
    path = getattr(args, attr, None) if attr else None
    fmt = s4cert_format(path) if path else None
    if fmt is not None:
        what, reader = S4CERT_KINDS[fmt]
        raise ValueError(f"{path}: {what} ({fmt}), not a checkpoint; {reader.format(path=path)}")
    described = description_of(path) if path else None
    if described is not None:
        raise ValueError(f"{path}: {described}")


def with_flags(reason: str, max_prec: int | None = None) -> str:
    """A library reason for the command: the limit ``--max-prec`` had (the reasons name
    the argument and its option at the source, ``max_prec (--max-prec)``); a precision
    limit whose reason names no option gets it."""
    now = f", now {max_prec} bits" if max_prec is not None else ""
    text = reason.replace("(--max-prec)", f"(--max-prec{now})")
    if "precision limit" in text and "--max-prec" not in text:
        text += f"; raise --max-prec (now {max_prec} bits)" if max_prec is not None else "; raise --max-prec"
    return text
