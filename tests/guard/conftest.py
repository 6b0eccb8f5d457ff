"""Fixtures for the command guard's tests: a private DOMESTIQUE_HOME and the built-in policy."""

from __future__ import annotations

from pathlib import Path

import pytest

from domestique.policy import EffectivePolicy, load_policy


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every guard test gets its own DOMESTIQUE_HOME."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("DOMESTIQUE_HOME", str(path))
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder used as cwd, with a small and a huge script in it."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "small.sh").write_text("#!/bin/sh\necho building\n")
    (root / "huge.sh").write_text("#!/bin/sh\n" + "echo x\n" * 60_000)
    (root / "build.sh").write_text("#!/bin/sh\nmake all\n")
    return root


@pytest.fixture
def policy(home: Path) -> EffectivePolicy:
    """The built-in policy (no user, system or project layer)."""
    pol = load_policy(home=home)
    assert pol.valid, pol.errors
    return pol
