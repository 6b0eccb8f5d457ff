"""docs/known-escapes.md and the tests that show each row's status stay in step.

Every test a row names exists, every test file it names exists, and every strict xfail in the
suite (an open escape by definition) is named by a row: an escape nobody wrote down is the one
an auditor would not hear about.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "known-escapes.md"
TESTS = ROOT / "tests"
# `test_name`, `tests/x/test_y.py::test_name`, `::test_name`, `test_name[param]`
_NAMED = re.compile(r"`(?:[\w/.]*\.py)?(?:::)?(test_\w+)(?:\[[^\]`]*\])?`")
_PATHS = re.compile(r"`(tests/[\w/]+\.py)")


def _named(text: str) -> set[str]:
    return set(_NAMED.findall(text))


def _tests() -> dict[str, list[tuple[Path, ast.FunctionDef]]]:
    found: dict[str, list[tuple[Path, ast.FunctionDef]]] = {}
    for path in sorted(TESTS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                found.setdefault(node.name, []).append((path, node))
    return found


def test_the_row_parser_reads_each_form() -> None:
    row = (
        "| x | y | **open** | `tests/a/test_b.py::test_one`, `::test_two[p]` (xfail), "
        "`test_three` |"
    )
    assert _named(row) == {"test_one", "test_two", "test_three"}


def test_every_test_a_row_names_exists() -> None:
    doc = DOC.read_text(encoding="utf-8")
    named = _named(doc)
    assert len(named) > 100  # the document is read, not skipped
    assert sorted(named - set(_tests())) == []
    assert sorted(p for p in set(_PATHS.findall(doc)) if not (ROOT / p).exists()) == []


def test_every_strict_xfail_is_a_written_down_escape() -> None:
    named = _named(DOC.read_text(encoding="utf-8"))
    unwritten = sorted(
        f"{path.relative_to(ROOT)}::{name}"
        for name, places in _tests().items()
        for path, node in places
        if name not in named
        and any("xfail" in ast.unparse(d) for d in node.decorator_list)
        and path.parent.name != "e2e"
    )
    assert unwritten == [], "add a row to docs/known-escapes.md for each"
