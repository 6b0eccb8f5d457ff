"""The reason-code registry, the docs page generated from it, and the codes the source emits."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from domestique.reason_codes import registry, render_markdown

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "domestique"
# Literals shaped like codes that are file names (``audit.sqlite3``), not reason codes.
FILE_SUFFIXES = {
    "py",
    "toml",
    "json",
    "jsonl",
    "sqlite3",
    "head",
    "sock",
    "key",
    "md",
    "lock",
    "csv",
}
CODE_SHAPE = re.compile(
    r"^(engine|policy|audit|secret|infra|pii|records|cmd|proxy|hook|hub)\.[a-z0-9_.]+$"
)


def test_docs_page_matches_registry() -> None:
    """docs/reason-codes.md is exactly what the registry renders; regenerate it when they differ."""
    page = (ROOT / "docs" / "reason-codes.md").read_text(encoding="utf-8")
    assert page == render_markdown(), (
        "docs/reason-codes.md is stale: run "
        "`python -m domestique.reason_codes > docs/reason-codes.md`"
    )


def test_every_code_has_a_meaning_and_a_dotted_name() -> None:
    """Each registered code is dotted lower-case and carries a one-line meaning."""
    for code, rc in registry().items():
        assert CODE_SHAPE.match(code), code
        assert rc.meaning.strip(), code
        assert "\n" not in rc.meaning, code


def test_every_code_literal_in_the_source_is_registered() -> None:
    """A string literal in the package shaped like a reason code must be a registered code.

    Catches a component emitting a code nobody declared (and so nobody documented). Globs such
    as ``secret.*`` in policy files are not literals in Python source and are not checked here.
    """
    known = registry()
    unknown: list[str] = []
    for path in SRC.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                value = node.value
                if CODE_SHAPE.match(value) and not value.endswith(".") and value not in known:
                    if value.rsplit(".", 1)[-1] in FILE_SUFFIXES:
                        continue
                    unknown.append(f"{path.relative_to(ROOT)}: {value}")
    assert not unknown, "unregistered reason codes:\n" + "\n".join(sorted(set(unknown)))
