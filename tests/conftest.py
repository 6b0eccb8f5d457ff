"""Shared fixtures and the ``slow`` marker.

Fixtures: a private DOMESTIQUE_HOME (``home``), a clean child environment (``env``), and the
hook fixtures (``hook_env``, ``repo``, ``daemon``: :mod:`_helpers.hooks`). A test folder or
module that defines its own fixture of one of these names uses that one instead.

``slow``: a test that starts real processes. Every test asking for ``hook_env``, ``daemon`` or
the child environment ``env`` is marked so here; other process-starting tests carry the mark
themselves. ``pytest -m "not slow and not e2e"`` is the fast inner loop.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from _helpers.hooks import AGENT_ENV, daemon, hook_env, repo

__all__ = ["daemon", "env", "home", "hook_env", "repo"]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh DOMESTIQUE_HOME for one test (the environment points at it too)."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("DOMESTIQUE_HOME", str(path))
    return path


@pytest.fixture(autouse=True)
def _no_hook_daemon(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test process itself never asks or starts a hook daemon: ``main(["check", …])`` would
    otherwise start one in the test's DOMESTIQUE_HOME (left running after the test). Tests that
    want the daemon name ``DOMESTIQUE_HOOKD`` in their child's environment."""
    monkeypatch.setenv("DOMESTIQUE_HOOKD", "off")


@pytest.fixture
def env(tmp_path: Path, home: Path) -> dict[str, str]:
    """An environment for child processes: private HOME and DOMESTIQUE_HOME, daemon off."""
    out = {k: v for k, v in os.environ.items() if not k.startswith(AGENT_ENV)}
    user_home = tmp_path / "user"
    user_home.mkdir()
    out.update(
        HOME=str(user_home),
        DOMESTIQUE_HOME=str(home),
        DOMESTIQUE_HOOKD="off",
        XDG_STATE_HOME=str(tmp_path / "xdg"),
    )
    return out


def _starts_processes(item: pytest.Item) -> bool:
    names = set(getattr(item, "fixturenames", ()))
    if names & {"hook_env", "daemon"}:
        return True
    # The root ``env`` is for child processes; a module's own ``env`` may be anything.
    module = getattr(item, "module", None)
    return "env" in names and not hasattr(module, "env")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _starts_processes(item):
            item.add_marker(pytest.mark.slow)
