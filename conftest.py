"""Collects the doctests of arith/, algorithms/ and certs/ from the s4cert package.

The layer folders install as ``s4cert.arith``, ``s4cert.algorithms`` and
``s4cert.certs`` (see pyproject.toml).  pytest's own doctest collection would import
``arith/ball.py`` as a top-level ``arith`` module, a second copy whose relative
imports cannot reach the other layers.  Here each source file is mapped to its name
in the s4cert package and the doctests are taken from that module.
"""
from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from _pytest.doctest import DoctestModule
from _pytest.main import Dir

ROOT = Path(__file__).resolve().parent
#: folder (relative to ROOT) -> dotted name of the package it installs as
PACKAGE_DIRS = {
    "certs/_root": "s4cert",
    "arith": "s4cert.arith",
    "algorithms": "s4cert.algorithms",
    "certs": "s4cert.certs",
}


def module_name(path: Path) -> str | None:
    """The s4cert module a source file installs as, or None outside the layers."""
    try:
        rel = path.resolve().relative_to(ROOT)
    except ValueError:
        return None
    for folder, dotted in PACKAGE_DIRS.items():  # "certs/_root" before "certs"
        parts = Path(folder).parts
        if rel.parts[:len(parts)] == parts:
            rest = list(rel.with_suffix("").parts[len(parts):])
            if rest and rest[-1] == "__init__":
                rest.pop()
            return ".".join([dotted, *rest])
    return None


class PackageDoctestModule(DoctestModule):
    def _getobj(self):
        return importlib.import_module(self.name_in_package)


class _NoTests(pytest.File):
    """What the python plugin collects from a layer file named on the command line: nothing
    (its doctests come from ``pytest_collect_file``; importing it as a test module would
    load it under a bare name)."""

    def collect(self):
        return []


def pytest_pycollect_makemodule(module_path: Path, parent):
    if module_name(module_path) is not None:
        return _NoTests.from_parent(parent, path=module_path)
    return None


def pytest_collect_directory(path: Path, parent):
    # A plain directory node: pytest's Package node would import each __init__.py
    # under a bare top-level name.
    if module_name(path / "__init__.py") is not None:
        return Dir.from_parent(parent, path=path)
    return None


def pytest_collect_file(file_path: Path, parent):
    if file_path.suffix != ".py" or file_path.name == "__main__.py":
        return None
    name = module_name(file_path)
    if name is None:
        return None
    item = PackageDoctestModule.from_parent(parent, path=file_path)
    item.name_in_package = name
    return item
