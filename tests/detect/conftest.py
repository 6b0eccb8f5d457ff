"""Fixtures for the detection tests: a private DOMESTIQUE_HOME and a rules-only scanner."""

from __future__ import annotations

from pathlib import Path

import pytest

from domestique.detect import Scanner
from domestique.detect.ruleset import builtin_rules
from domestique.keys import Fingerprinter

TEST_KEY = bytes(range(32))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """DOMESTIQUE_HOME in a temporary folder, so no test touches the real state directory."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("DOMESTIQUE_HOME", str(path))
    return path


@pytest.fixture(scope="session")
def fingerprinter() -> Fingerprinter:
    return Fingerprinter(TEST_KEY)


@pytest.fixture(scope="session")
def scanner(fingerprinter: Fingerprinter) -> Scanner:
    """The built-in rules with no known values and no customer records."""
    return Scanner(builtin_rules(), fingerprinter)
