"""Read the docstrings' plain-text mathematics as text.

The docstrings write absolute values and norms as ``|x - mid|`` and ``||K^ - K||``, which
reStructuredText would take for substitution references.  Before napoleon and autodoc
parse a docstring, every ``|`` outside inline literals, doctest examples and literal
blocks is escaped, so it renders as written.  Table rows (``| a | b |``, ``+---+``) keep their bars.
"""
from __future__ import annotations

import re

_LITERAL = re.compile(r"(``.*?``)")


def _escape_line(line: str) -> str:
    parts = _LITERAL.split(line)
    return "".join(p if p.startswith("``") else p.replace("|", r"\|") for p in parts)


def escape_bars(lines: list[str]) -> list[str]:
    """``lines`` with the bars of running text escaped."""
    out, literal_indent = [], None
    for line in lines:
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if literal_indent is not None:
            if stripped and indent <= literal_indent:
                literal_indent = None
            else:
                out.append(line)
                continue
        table_row = stripped.startswith("|") and stripped.rstrip().endswith("|") and len(stripped) > 1
        if stripped.startswith((">>>", "...", "+-", "+=")) or table_row or not stripped:
            out.append(line)
        else:
            out.append(_escape_line(line))
        if stripped.endswith("::") and not stripped.startswith(".."):
            literal_indent = indent
    return out


def _process(app, what, name, obj, options, lines: list[str]) -> None:
    lines[:] = escape_bars(lines)


def setup(app) -> dict:
    # before napoleon (priority 500): its sections are parsed from the escaped text
    app.connect("autodoc-process-docstring", _process, priority=400)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
