"""The proofs stay honest: every test they name exists and is collected, every proof is in
the index, and no proof depends on a file outside the repository.

A proof names its checks as pytest node ids, in its "Checked by" section and elsewhere:

* ``tests/<dir>/test_<x>.py::test_name`` (or ``::TestClass::test_name``, or with a
  ``[parameter]`` suffix): a test function the test file defines;
* ``tests/<dir>/test_<x>.py``: every test of that file;
* ``<layer>/<module>.py::s4cert.<dotted module>[.<qualname>]``: a doctest, collected from
  the s4cert package (see conftest.py at the repository root).

The checks read the files (ast), so they are fast and never import the code under test.
"""
from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROOFS = ROOT / "proofs"
INDEX = PROOFS / "README.md"
#: proofs/ files that are not proofs: the index, and the statements of the specification
NOT_PROOFS = {"README.md", "spec.md"}
#: source folder -> the s4cert package it installs as (pyproject.toml's package-dir)
PACKAGE_DIRS = (
    ("certs/_root", "s4cert"),
    ("arith", "s4cert.arith"),
    ("algorithms", "s4cert.algorithms"),
    ("certs", "s4cert.certs"),
)
#: a pytest node id: a .py path, then any number of ``::part``
NODE_ID = re.compile(r"(?<![\w/.-])((?:[\w-]+/)*[\w-]+\.py)((?:::[\w.\[\]-]+)*)")
#: a file name or path, as a proof would cite one
FILE_REF = re.compile(
    r"(?<![\w/.-])((?:\.\.?/|/)?(?:[\w-]+/)*[\w-]+\.(?:py|md|toml|json|txt|cfg|ini|ya?ml|npz|csv|ipynb))\b")
#: a module or object of the package named by its dotted path, ``algorithms.s4.filter``
DOTTED = re.compile(r"(?<![\w./-])((?:s4cert\.)?(?:arith|algorithms|certs)(?:\.[A-Za-z_]\w*)+)")
#: folders that are not part of the project's sources
IGNORED_DIRS = {".git", ".venv", "build", "dist", "__pycache__", ".pytest_cache"}


def proof_files() -> list[Path]:
    return sorted(p for p in PROOFS.glob("*.md") if p.name != "README.md")


def section(text: str, title: str) -> str:
    """The body of the ``## <title>`` section (up to the next ``## `` heading), or ''."""
    match = re.search(rf"^## {re.escape(title)}\s*$(.*?)(?=^## |\Z)", text, re.M | re.S)
    return match.group(1) if match else ""


def node_ids(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """The node ids in ``text`` as (path, parts after the path)."""
    found = []
    for match in NODE_ID.finditer(text):
        parts = tuple(p for p in match.group(2).rstrip(".").split("::") if p)
        found.append((match.group(1), parts))
    return found


@lru_cache(maxsize=None)
def parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _decorator_names(node: ast.AST) -> set[str]:
    names = set()
    for dec in getattr(node, "decorator_list", []):
        for sub in ast.walk(dec):
            if isinstance(sub, ast.Attribute):
                names.add(sub.attr)
            elif isinstance(sub, ast.Name):
                names.add(sub.id)
    return names


def _tests_in(body: list[ast.stmt]) -> dict[str, ast.AST]:
    """Test functions and test classes defined at this level (last definition wins)."""
    defs: dict[str, ast.AST] = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            defs[node.name] = node
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            defs[node.name] = node
    return defs


def check_test(path: str, parts: tuple[str, ...]) -> str | None:
    """None if the node id names a test pytest collects and runs; else the problem."""
    file = ROOT / path
    if not file.is_file():
        return "no such file"
    if not file.name.startswith("test_"):
        return "not a test file (pytest collects test_*.py)"
    defs = _tests_in(parsed(file).body)
    if not parts:
        return None if defs else "the file defines no test"
    node: ast.AST | None = None
    for i, part in enumerate(parts):
        name = part.split("[", 1)[0]  # a parametrized instance names its function
        node = defs.get(name)
        if node is None:
            return f"no test {name!r}"
        if isinstance(node, ast.ClassDef) and i + 1 < len(parts):
            defs = _tests_in(node.body)
    if isinstance(node, ast.ClassDef):
        return f"{parts[-1]!r} is a class, not a test"
    if _decorator_names(node) & {"skip", "skipif", "xfail"}:
        return f"{parts[-1]!r} is skipped or expected to fail"
    return None


def package_module(path: str) -> str | None:
    """The s4cert module a source file installs as, or None outside the layers."""
    rel = Path(path)
    for folder, dotted in PACKAGE_DIRS:
        if rel.parts[:len(Path(folder).parts)] == Path(folder).parts:
            rest = list(rel.with_suffix("").parts[len(Path(folder).parts):])
            if rest and rest[-1] == "__init__":
                rest.pop()
            return ".".join([dotted, *rest])
    return None


def check_doctest(path: str, parts: tuple[str, ...]) -> str | None:
    """None if the node id names a doctest that the root conftest collects; else the problem."""
    file = ROOT / path
    module = package_module(path)
    if module is None or not file.is_file():
        return "no such source file in the package"
    if len(parts) != 1 or not (parts[0] == module or parts[0].startswith(module + ".")):
        return f"a doctest of this file is named {module}[.<name>]"
    node: ast.AST = parsed(file)
    for name in parts[0][len(module):].split(".")[1:]:
        body = getattr(node, "body", [])
        found = [n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                 and n.name == name]
        if not found:
            return f"no {name!r} in {module}"
        node = found[-1]
    doc = ast.get_docstring(node) or ""
    return None if ">>>" in doc else "no doctest in that docstring"


def check_node(path: str, parts: tuple[str, ...]) -> str | None:
    if path.startswith("tests/"):
        return check_test(path, parts)
    if parts:
        return check_doctest(path, parts)
    return "a source file is not a test; name its doctests"


@lru_cache(maxsize=None)
def repository_names() -> frozenset[str]:
    names = set()
    for p in ROOT.rglob("*"):
        if p.is_file() and not IGNORED_DIRS & set(p.relative_to(ROOT).parts):
            names.add(p.name)
    return frozenset(names)


def check_file_ref(ref: str) -> str | None:
    """None if ``ref`` is a file of the repository; else the problem."""
    if ref.startswith("/") or ".." in Path(ref).parts or ref.startswith("./"):
        return "outside the repository"
    if "/" in ref:
        return None if (ROOT / ref).is_file() or (PROOFS / ref).is_file() else "no such file here"
    return None if ref in repository_names() else "no such file here"


def _top_level_names(body: list[ast.stmt]) -> dict[str, ast.AST]:
    """Names bound at this level: definitions, assignments and imports."""
    names: dict[str, ast.AST] = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Name):
                        names[sub.id] = node
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names[(alias.asname or alias.name).split(".")[0]] = node
    return names


def check_dotted(ref: str) -> str | None:
    """None if ``ref`` (``[s4cert.]<layer>.<module>...[.<name>[.<member>]]``) exists; else the problem."""
    parts = ref.split(".")
    if parts[0] == "s4cert":
        parts = parts[1:]
    folder, rest = ROOT / parts[0], parts[1:]
    while rest and (folder / rest[0]).is_dir():
        folder = folder / rest.pop(0)
    if rest and (folder / f"{rest[0]}.py").is_file():
        module = folder / f"{rest.pop(0)}.py"
    else:
        module = folder / "__init__.py"
    if not module.is_file():
        return "no such module"
    body: list[ast.stmt] = parsed(module).body
    for depth, name in enumerate(rest[:2]):
        node = _top_level_names(body).get(name)
        if node is None:
            return f"no {name!r} in {module.relative_to(ROOT)}"
        if not isinstance(node, ast.ClassDef):
            break  # an attribute of a function's or an import's value: not followed
        body = node.body
    return None


# -- the checks -----------------------------------------------------------------------


def test_parser_reads_the_forms_the_proofs_use():
    text = ("- tests/arith/test_ball.py::test_radius (x), tests/a/test_b.py::TestC::test_d[1-2].\n"
            "- tests/arith/test_midrad.py (all)\n"
            "- algorithms/models/lstm.py::s4cert.algorithms.models.lstm.lstm_forward (doctest)\n")
    assert node_ids(text) == [
        ("tests/arith/test_ball.py", ("test_radius",)),
        ("tests/a/test_b.py", ("TestC", "test_d[1-2]")),
        ("tests/arith/test_midrad.py", ()),
        ("algorithms/models/lstm.py", ("s4cert.algorithms.models.lstm.lstm_forward",)),
    ]
    assert package_module("certs/_root/__init__.py") == "s4cert"
    assert package_module("certs/io/__init__.py") == "s4cert.certs.io"
    assert check_file_ref("../shared/design.md") == "outside the repository"
    assert check_file_ref("theory.md") == "no such file here"
    assert check_file_ref("proofs/spec.md") is None
    assert check_test("tests/test_proofs.py", ("test_no_such_test",)) == "no test 'test_no_such_test'"
    assert check_test("tests/test_proofs.py", ("test_parser_reads_the_forms_the_proofs_use",)) is None
    assert SPEC_FILES.search("(spec: theory.md, LSTM)") and SPEC_FILES.search("see ../shared/x")
    assert not SPEC_FILES.search("(proofs/spec.md §S9)")
    assert check_dotted("algorithms.no_such_module") == "no 'no_such_module' in algorithms/__init__.py"
    assert check_dotted("s4cert.arith.ball.BallField") is None
    assert check_dotted("arith.ball.BallField.no_such_method") == "no 'no_such_method' in arith/ball.py"


def test_the_proofs_name_many_tests():
    # a parser that silently finds nothing would pass every check below
    total = sum(len(node_ids(p.read_text(encoding="utf-8"))) for p in proof_files())
    assert total > 200


@pytest.mark.parametrize("proof", [p.name for p in proof_files() if p.name not in NOT_PROOFS])
def test_each_proof_names_the_tests_that_check_it(proof):
    checked = section((PROOFS / proof).read_text(encoding="utf-8"), "Checked by")
    assert node_ids(checked), f"proofs/{proof} has no test under '## Checked by'"


@pytest.mark.parametrize("proof", [p.name for p in proof_files()])
def test_every_named_test_exists_and_is_collected(proof):
    text = (PROOFS / proof).read_text(encoding="utf-8")
    # anywhere in a proof, ``path::name`` names a check; a bare path names one (a whole
    # test file) only under "Checked by", elsewhere it is a file reference (checked below)
    named = [(path, parts) for path, parts in node_ids(text) if parts]
    named += [(path, parts) for path, parts in node_ids(section(text, "Checked by")) if not parts]
    problems = sorted({f"{path}{''.join('::' + p for p in parts)}: {problem}"
                       for path, parts in named
                       if (problem := check_node(path, parts)) is not None})
    assert not problems, f"proofs/{proof} names checks that do not exist:\n" + "\n".join(problems)


def test_every_proof_is_listed_in_the_index():
    index = INDEX.read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\(([^)#\s]+)\)", index))
    missing = sorted(p.name for p in proof_files() if p.name not in linked)
    dangling = sorted(link for link in linked if not (PROOFS / link).is_file())
    assert not missing, f"proofs/README.md does not list {missing}"
    assert not dangling, f"proofs/README.md links to missing files {dangling}"


@pytest.mark.parametrize("proof", [p.name for p in sorted(PROOFS.glob("*.md"))])
def test_no_proof_cites_a_file_outside_the_repository(proof):
    text = (PROOFS / proof).read_text(encoding="utf-8")
    problems = sorted({f"{ref}: {problem}" for ref in FILE_REF.findall(text)
                       if (problem := check_file_ref(ref)) is not None})
    assert not problems, f"proofs/{proof} cites files that are not in the repository:\n" + "\n".join(problems)


@pytest.mark.parametrize("proof", [p.name for p in sorted(PROOFS.glob("*.md"))])
def test_code_named_by_a_proof_exists(proof):
    text = (PROOFS / proof).read_text(encoding="utf-8")
    text = NODE_ID.sub(" ", text)  # doctest node ids are checked above
    problems = sorted({f"{ref}: {problem}" for ref in DOTTED.findall(text)
                       if (problem := check_dotted(ref.rstrip("."))) is not None})
    assert not problems, f"proofs/{proof} names code that does not exist:\n" + "\n".join(problems)


#: where code and documents cite the proofs
CITING = ("arith", "algorithms", "certs", "tests", "benchmarks", "proofs", "README.md")


def citing_files() -> list[Path]:
    files = []
    for name in CITING:
        path = ROOT / name
        files += [path] if path.is_file() else sorted(
            p for p in path.rglob("*") if p.suffix in (".py", ".md") and "__pycache__" not in p.parts)
    return files


def test_citations_of_the_proofs_resolve():
    """``proofs/<name>.md`` exists, and every ``§S<n>`` is a statement of proofs/spec.md."""
    spec = (PROOFS / "spec.md").read_text(encoding="utf-8")
    statements = set(re.findall(r"^### S(\d+)\.", spec, re.M))
    assert len(statements) >= 40
    problems = set()
    for path in citing_files():
        text = path.read_text(encoding="utf-8")
        where = path.relative_to(ROOT)
        problems |= {f"{where}: proofs/{name}" for name in re.findall(r"proofs/([\w-]+\.md)", text)
                     if not (PROOFS / name).is_file()}
        problems |= {f"{where}: §S{n}" for n in re.findall(r"§S(\d+)", text) if n not in statements}
    assert not problems, "citations of missing proofs or statements:\n" + "\n".join(sorted(problems))


#: the specification's own files, which are not in the repository (proofs/spec.md states them)
SPEC_FILES = re.compile(r"\b(?:theory\.md|examples\.md|design\.md|s4_checkpoints\.md|lmu_reference\.py)\b"
                        r"|\.\./shared\b|/work/shared\b")


def test_nothing_cites_the_specification_files():
    """Code, tests, benchmarks, the README and the proofs cite proofs/spec.md instead."""
    here = Path(__file__).resolve()
    problems = sorted(
        f"{path.relative_to(ROOT)}:{lineno}: {line.strip()}"
        for path in citing_files() if path.resolve() != here
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if SPEC_FILES.search(line))
    assert not problems, "cite proofs/spec.md §S<n> instead:\n" + "\n".join(problems)

