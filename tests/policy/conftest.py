"""The policy tests' own layers: a private builtin directory and reason-code registry."""

from __future__ import annotations

from pathlib import Path

import pytest

from _helpers.policy import BUILTIN, CODES
from domestique.policy import _load as load_module


@pytest.fixture
def policy_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private builtin directory and reason-code registry, so the tests own every layer."""
    builtin = tmp_path / "builtin"
    builtin.mkdir()
    (builtin / "core.toml").write_text(BUILTIN)
    monkeypatch.setattr(load_module, "BUILTIN_DIR", builtin)
    monkeypatch.setattr(load_module, "_registered_codes", lambda: (sorted(CODES), None))
    (tmp_path / "home").mkdir()
    return tmp_path
