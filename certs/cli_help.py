"""The ``--help`` text of each ``s4cert`` subcommand beyond its options: one or two
examples, the exit codes that command can return, and descriptions where the
subcommand's parser has none.

Exit codes (the README's): 0 done, 1 not certified (or an audit that failed, or out of
memory), 2 a usage mistake or bad input, 130 interrupted, 141 (128 + SIGPIPE, as a shell
reports a command ended by a closed pipe) when the reader of stdout went away, e.g.
``s4cert kernel | head -1``.
"""
from __future__ import annotations

import argparse

#: the reader of stdout went away (``| head``): 128 + SIGPIPE, as a shell reports it
EXIT_BROKEN_PIPE = 141

_COMMON = ("2 usage mistake or bad input (one line on stderr)", "130 interrupted",
           f"{EXIT_BROKEN_PIPE} stdout closed by its reader (e.g. | head)")
_NO_MEMORY = "1 out of memory"

#: command -> the codes it can return besides the common ones
EXIT_CODES: dict[str, tuple[str, ...]] = {
    "kernel": ("0 certified", "1 not certified (the reason on stderr)"),
    "audit": ("0 audit passed", "1 audit failed (the failed checks on stderr)"),
    "compare": ("0 done", _NO_MEMORY),
    "count": ("0 done", "1 not counted (the reason on stderr)"),
    "lmu-audit": ("0 done", "1 not certified (the reason on stderr)"),
    "plot": ("0 done", _NO_MEMORY),
    "model": ("0 every kernel certified", "1 some kernel not certified (its line says why)"),
    "forward": ("0 certified", "1 not certified (the reason on stderr)"),
}

#: command -> examples shown at the end of its --help
EXAMPLES: dict[str, tuple[str, ...]] = {
    "kernel": ("s4cert kernel --hippo legs -N 64 -L 1024 --eps 1e-20 --out legs.json",
               "s4cert kernel --params model.npz --eps 1e-13 --out k.npz --quiet"),
    "audit": ("s4cert audit legs.json", "s4cert audit k.npz --json"),
    "compare": ("s4cert compare legs.json other.npy", "s4cert compare k.npz kernels.npz --key float32 --no-tighten"),
    "count": ("s4cert count -N 16,64 -L 256,1024", "s4cert count -N 64 -L 4096 --json"),
    "lmu-audit": ("s4cert lmu-audit --memory-size 64 --theta 1 --length 256",
                  "s4cert lmu-audit --checkpoint lmu.pt --out report.json"),
    "plot": ("s4cert plot legs.json -o legs.png", "s4cert plot legs.json --compare other.npy -o err.png"),
    "model": ("s4cert model s4d.pt --out report.json", "s4cert model s4.ckpt -L 4096 --eps 1e-10 --kernels k.npz"),
    "forward": ("s4cert forward s4d.pt --input u.npy --out report.json",),
}

#: descriptions for the subcommands whose parser gives none, and additions to some
DESCRIPTIONS = {
    "audit": "Re-verify a kernel file (either format), trusting none of its numbers but the problem: "
             "the digest, the status and the radii the mode claims, the kernel recomputed by another "
             "route at a higher precision (every stored disk must contain it), kappa, the counts and "
             "the certificate's constants.  Each check is printed with ok or FAIL.",
}
ADDENDA = {
    "lmu-audit": "Without --checkpoint, the rows are: reference_float32 and reference_float64 (Abar^t Bbar "
                 "by matrix powers in float32 or float64, as the reference's LMUFFT builds H) and "
                 "ours_float32 and ours_float64 (matrix-vector steps); each gets a certified lower and "
                 "upper bound on max |error| against the certified impulse response.",
}


class HelpFormatter(argparse.HelpFormatter):
    """Wraps each paragraph of a description or epilog on its own (a line starting with
    spaces, an example, is kept as it is)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        out = []
        for para in text.split("\n"):
            out.append(indent + para if para.startswith(" ") or not para.strip()
                       else super()._fill_text(para, width, indent))
        return "\n".join(out)


def epilog(command: str) -> str:
    """Examples, then the exit codes ``command`` can return."""
    lines = []
    if command in EXAMPLES:
        lines += ["examples:", *(f"  {e}" for e in EXAMPLES[command]), ""]
    codes = EXIT_CODES.get(command, ("0 done",)) + _COMMON
    lines += ["exit codes:", *(f"  {c}" for c in codes)]
    return "\n".join(lines)


def apply(subparsers: argparse._SubParsersAction) -> None:
    """Give every subcommand's parser its examples, exit codes and description."""
    for name, parser in subparsers.choices.items():
        parser.formatter_class = HelpFormatter
        parser.epilog = epilog(name)
        if not parser.description and name in DESCRIPTIONS:
            parser.description = DESCRIPTIONS[name]
        if name in ADDENDA and ADDENDA[name] not in (parser.description or ""):
            parser.description = ((parser.description or "") + "\n" + ADDENDA[name]).strip()
