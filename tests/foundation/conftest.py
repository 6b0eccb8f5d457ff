"""Fixtures for the foundation tests: a private DOMESTIQUE_HOME."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh DOMESTIQUE_HOME for one test (the environment points at it too)."""
    path = tmp_path / "home"
    monkeypatch.setenv("DOMESTIQUE_HOME", str(path))
    return path
