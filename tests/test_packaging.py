"""One distribution, one import root, one-way layers.

* the distribution installs the import root ``s4cert`` and nothing else;
* the s4cert command and the README's Python examples work from any directory, even
  with other top-level ``arith``, ``algorithms`` and ``certs`` packages first on the path;
* the layers import one way (``arith`` <- ``algorithms`` <- ``certs``), without cycles;
* no module grows past the size limit.
"""
from __future__ import annotations

import ast
import graphlib
import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: source folder -> the package it installs as (pyproject.toml's package-dir)
LAYERS = {"certs/_root": "s4cert", "arith": "s4cert.arith", "algorithms": "s4cert.algorithms",
          "certs": "s4cert.certs"}
MAX_MODULE_LINES = 450


def source_modules() -> dict[str, Path]:
    """Every module of the s4cert package, by dotted name, with its source file."""
    out = {}
    for folder, dotted in LAYERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT / folder)
            if folder == "certs" and rel.parts[0] == "_root":
                continue
            parts = list(rel.with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            out[".".join([dotted, *parts])] = (path, is_package)
    return out


def imports_of(name: str, path: Path, is_package: bool, known: set[str]) -> set[str]:
    """The s4cert modules a module imports (relative imports resolved)."""
    package = name if is_package else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            candidates = [target] + [f"{target}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            candidates = [a.name for a in node.names]
        else:
            continue
        for c in candidates:
            if c in known:
                found.add(c)
    found.discard(name)
    return found


def import_graph() -> dict[str, set[str]]:
    mods = source_modules()
    return {n: imports_of(n, p, pkg, set(mods)) for n, (p, pkg) in mods.items()}


def layer(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ("arith", "algorithms", "certs") else "root"


def test_the_distribution_installs_only_s4cert():
    dist = importlib.metadata.distribution("s4cert")
    assert dist.read_text("top_level.txt").split() == ["s4cert"]
    scripts = [ep for ep in dist.entry_points if ep.group == "console_scripts"]
    assert [ep.value for ep in scripts] == ["s4cert.certs.cli:main"]


def test_pyproject_lists_every_package():
    text = (ROOT / "pyproject.toml").read_text()
    listed = set(re.findall(r'"(s4cert(?:\.[\w.]+)?)"', text))
    packages = {n for n, (_, is_package) in source_modules().items() if is_package}
    packages.add("s4cert")
    assert packages <= listed, f"not in pyproject.toml's packages: {sorted(packages - listed)}"


def test_layers_import_one_way():
    allowed = {"arith": {"arith"}, "algorithms": {"arith", "algorithms"},
               "certs": {"arith", "algorithms", "certs"},
               "root": {"arith", "algorithms", "certs", "root"}}
    bad = [(a, b) for a, targets in import_graph().items() for b in targets
           if layer(b) not in allowed[layer(a)]]
    assert not bad, f"imports against the layering: {bad}"


def test_no_import_cycles():
    graph = import_graph()
    # a package's __init__ importing its own modules is no cycle of mathematics
    graph = {a: {b for b in bs if not a.startswith(b + ".")} for a, bs in graph.items()}
    try:
        list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as e:
        pytest.fail(f"import cycle: {' -> '.join(e.args[1])}")


def test_no_module_is_too_long():
    long = {n: len(p.read_text().splitlines()) for n, (p, _) in source_modules().items()}
    long = {n: k for n, k in long.items() if k > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"


def readme_python_blocks() -> list[str]:
    text = (ROOT / "README.md").read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


@pytest.fixture
def shadowed(tmp_path):
    """A folder with other top-level arith, algorithms and certs packages, first on the path."""
    for name in ("arith", "algorithms", "certs"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(
            f"raise ImportError('the unrelated {name} package was imported')\n")
    return tmp_path


def run_python(code: str, cwd: Path, pythonpath: Path) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": str(pythonpath), "PATH": "/usr/bin:/bin", "HOME": str(cwd)}
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_readme_examples_run_from_any_directory_beside_other_packages(shadowed):
    blocks = readme_python_blocks()
    assert blocks, "the README has Python examples"
    for code in blocks:
        p = run_python(code, cwd=shadowed, pythonpath=shadowed)
        assert p.returncode == 0, p.stderr


def test_command_runs_beside_other_packages(shadowed):
    p = subprocess.run([sys.executable, "-m", "s4cert", "kernel", "-N", "3", "-L", "16", "--quiet"],
                       cwd=shadowed, env={"PYTHONPATH": str(shadowed), "PATH": "/usr/bin:/bin"},
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "status ok" in p.stdout


def test_public_api():
    import s4cert
    from s4cert import arith

    for name in ("certify_kernel", "CertificationError", "audit_kernel_file", "compare_with",
                 "load_params", "load_kernel", "save_kernel", "DPLR"):
        assert name in s4cert.__all__ and hasattr(s4cert, name)
    for name in ("BallField", "ExactField", "RoundedField", "Float64Field", "Counting", "Tracing"):
        assert name in arith.__all__


def test_dask_is_an_optional_extra_only():
    requires = importlib.metadata.requires("s4cert") or []
    for req in requires:
        if "dask" in req or "distributed" in req:
            assert "extra == \"dask\"" in req.replace("'", '"'), req
    assert any("dask" in req for req in requires)
