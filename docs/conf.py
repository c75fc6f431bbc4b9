"""Sphinx configuration of the s4cert documentation.

Build: ``python -m sphinx -W -b html docs docs/_build/html`` (``pip install ".[docs]"``).
The command reference is generated from the ``s4cert`` argparse parsers at build time
(``_ext/s4cert_cli.py``); the API reference is autodoc over the installed package.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
# help text wraps at the terminal's width: fix it so the generated pages do not depend on it
os.environ["COLUMNS"] = "100"

import s4cert  # noqa: E402  (the installed package documents itself)

#: the proofs render as pages: one stub per ``proofs/*.md`` that includes it (``docs/proofs/``
#: is written here at every build and is not kept in the repository)
PROOFS = HERE.parent / "proofs"
(HERE / "proofs").mkdir(exist_ok=True)
for _proof in sorted(PROOFS.glob("*.md")):
    _stub = HERE / "proofs" / _proof.name
    _text = f"```{{include}} ../../proofs/{_proof.name}\n```\n"
    if not _stub.is_file() or _stub.read_text() != _text:
        _stub.write_text(_text)
for _stub in (HERE / "proofs").glob("*.md"):
    if not (PROOFS / _stub.name).is_file():
        _stub.unlink()

project = "s4cert"
author = "the s4cert authors"
copyright = "the s4cert authors, MIT licence"
release = version = s4cert.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "myst_parser",          # the Markdown pages (architecture.md and the moved README sections)
    "s4cert_cli",           # the command reference, from certs/cli.py's build_parser()
    "s4cert_docstrings",    # |x| in docstrings is text, not a substitution
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "Thumbs.db", ".DS_Store"]
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]  # the proofs write $...$

autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_preserve_defaults = True
napoleon_google_docstring = True
napoleon_numpy_docstring = True
# docstrings name many internal objects by role (:func:`filter_kernel`, ...) that the
# reference documents only through the public names; an unresolved role is plain text.
nitpicky = False

html_theme = "alabaster"
html_title = f"s4cert {release}"
html_static_path: list[str] = []
