"""A Sphinx directive that writes the ``s4cert`` command reference from the parsers.

``.. s4cert-commands::`` imports ``build_parser`` from ``s4cert.certs.cli`` (the one the
command itself runs) and emits, for the top-level command and for every subcommand, a
section with its description and its ``--help`` text, so the page always says what the
installed command says.
"""
from __future__ import annotations

import argparse

from docutils import nodes
from docutils.parsers.rst import Directive
from docutils.statemachine import StringList
from sphinx.util.nodes import nested_parse_with_titles


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The subparsers of ``parser`` by name, in the order they were added."""
    for action in parser._actions:  # argparse keeps subparsers only here
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def help_blocks() -> list[tuple[str, str, str]]:
    """``(title, one-line summary, --help text)`` of ``s4cert`` and of each subcommand."""
    from s4cert.certs.cli import build_parser

    parser = build_parser()
    summaries = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            summaries = {a.dest: a.help or "" for a in action._choices_actions}
    blocks = [("s4cert", parser.description or "", parser.format_help())]
    for name, sub in subcommands(parser).items():
        blocks.append((f"s4cert {name}", summaries.get(name, ""), sub.format_help()))
    return blocks


class CommandsDirective(Directive):
    has_content = False

    def run(self) -> list[nodes.Node]:
        lines: list[str] = []
        for title, summary, text in help_blocks():
            lines += [title, "-" * len(title), ""]
            if summary:
                lines += [summary[0].upper() + summary[1:] + ("" if summary.endswith(".") else "."), ""]
            lines += [".. code-block:: text", ""]
            lines += ["   " + line if line else "" for line in text.rstrip().splitlines()]
            lines.append("")
        container = nodes.section()
        container.document = self.state.document
        nested_parse_with_titles(self.state, StringList(lines, source="s4cert-commands"), container)
        return container.children


def setup(app) -> dict:
    app.add_directive("s4cert-commands", CommandsDirective)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
