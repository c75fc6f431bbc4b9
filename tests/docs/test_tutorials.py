"""The documentation's code runs: every ``>>>`` example of the tutorials (and of the
other pages that have them) as a doctest, from the repository's folder, and the API
reference has a page for every public name of ``s4cert`` and ``s4cert.arith``."""
from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
TUTORIALS = sorted((DOCS / "tutorials").glob("*.rst"))
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def run_page(path: Path) -> doctest.TestResults:
    text = path.read_text(encoding="utf-8")
    test = doctest.DocTestParser().get_doctest(text, {}, path.stem, str(path), 0)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test)
    return runner.summarize(verbose=False)


def test_there_are_three_tutorials():
    assert {p.stem for p in TUTORIALS} == {"certify", "audit", "count"}


@pytest.mark.parametrize("page", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_tutorial_runs(page, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)  # the tutorials read the checkpoints under tests/data
    result = run_page(page)
    report = capsys.readouterr().out
    assert result.attempted >= 10, f"{page.name} has only {result.attempted} examples"
    assert result.failed == 0, report


def test_doctest_catches_a_wrong_output(tmp_path):
    page = tmp_path / "wrong.rst"
    page.write_text(">>> 1 + 1\n3\n")
    assert run_page(page).failed == 1


def public_names() -> list[str]:
    import s4cert
    from s4cert import arith
    return [f"s4cert.{n}" for n in s4cert.__all__] + [f"s4cert.arith.{n}" for n in arith.__all__]


def documented_names() -> set[str]:
    directive = re.compile(r"^\.\. auto(?:function|class|module|data|exception)::\s+(\S+)", re.M)
    return {name for page in (DOCS / "api").rglob("*.rst")
            for name in directive.findall(page.read_text(encoding="utf-8"))}


def test_every_public_name_has_an_api_page():
    missing = sorted(set(public_names()) - documented_names())
    assert not missing, f"no page under docs/api documents {missing}"


def test_each_api_page_documents_one_name_that_exists():
    """One name per page: a public name, or a module of the root package (s4cert.hippo)."""
    import importlib
    pages = [p for p in (DOCS / "api").rglob("*.rst") if p.name != "index.rst"]
    assert len(pages) >= len(public_names())
    for page in pages:
        names = documented_names_in(page)
        assert len(names) == 1, (page, names)
        parent, _, attr = names[0].rpartition(".")
        assert hasattr(importlib.import_module(parent), attr), (page, names)


def documented_names_in(page: Path) -> list[str]:
    return re.findall(r"^\.\. auto\w+::\s+(\S+)", page.read_text(encoding="utf-8"), re.M)


def test_every_page_is_in_a_table_of_contents():
    """Sphinx -W also refuses orphans; this says which page is one without a build."""
    sources = {p.relative_to(DOCS).with_suffix("").as_posix()
               for p in list(DOCS.glob("*.rst")) + list(DOCS.glob("*.md")) + TUTORIALS}
    listed = set()
    for page in list(DOCS.glob("*.rst")):
        for block in re.findall(r"\.\. toctree::\n((?:[ \t]+.*\n|\n)*)", page.read_text(encoding="utf-8")):
            listed |= {line.strip() for line in block.splitlines()
                       if line.strip() and not line.strip().startswith(":")}
    assert sources - {"index"} <= listed, sources - {"index"} - listed
