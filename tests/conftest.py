"""Shared fixtures: a private DOMESTIQUE_HOME (`home`) and a clean child environment (`env`).

A test folder or module that defines its own `home` or `env` uses that one instead.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Environment markers of real agents: the test process may itself run under one.
_AGENT_ENV = ("CLAUDE", "GEMINI_", "CODEX_", "CURSOR_", "CLINE_", "CODEIUM_", "AI_AGENT")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh DOMESTIQUE_HOME for one test (the environment points at it too)."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("DOMESTIQUE_HOME", str(path))
    return path


@pytest.fixture
def env(tmp_path: Path, home: Path) -> dict[str, str]:
    """An environment for child processes: private HOME and DOMESTIQUE_HOME, daemon off."""
    out = {k: v for k, v in os.environ.items() if not k.startswith(_AGENT_ENV)}
    user_home = tmp_path / "user"
    user_home.mkdir()
    out.update(
        HOME=str(user_home),
        DOMESTIQUE_HOME=str(home),
        DOMESTIQUE_HOOKD="off",
        XDG_STATE_HOME=str(tmp_path / "xdg"),
    )
    return out
