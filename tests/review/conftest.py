"""Fixtures for the review regression tests: the hook suite's real-process helpers."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hooks"))

from hook_helpers import hook_env, repo

__all__ = ["hook_env", "repo"]
