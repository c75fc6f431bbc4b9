"""What the ``s4cert`` command checks about the files it is given, and the words its
messages use for the library's options.

* Every output option has the suffixes of its format (:data:`OUTPUT_SUFFIXES`); a name
  with another suffix is refused before any work (a name without one is taken as given).
* A file written by s4cert itself (a kernel file, a report) given where a checkpoint is
  read is named for what it is, with the command that reads it (:func:`refuse_s4cert_file`).
* A reason from the library that names an argument (``max_prec``, ``counts``) is given
  the command's option instead (:func:`with_flags`).
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


def refuse_s4cert_file(command: str, args: Any) -> None:
    """ValueError (one line) when the checkpoint a command reads is a file s4cert wrote."""
    attr = CHECKPOINT_INPUTS.get(command)
    path = getattr(args, attr, None) if attr else None
    fmt = s4cert_format(path) if path else None
    if fmt is not None:
        what, reader = S4CERT_KINDS[fmt]
        raise ValueError(f"{path}: {what} ({fmt}), not a checkpoint; {reader.format(path=path)}")


def with_flags(reason: str, max_prec: int | None = None) -> str:
    """A library reason in the command's words: the options that lift the limit."""
    now = f" (now {max_prec} bits)" if max_prec is not None else ""
    text = (reason.replace("raise the precision limit", f"raise --max-prec{now}")
            .replace("ask for counts to measure them", "--counts measures them"))
    if "precision limit" in text and "--max-prec" not in text:
        text += "; raise --max-prec"
    return text
