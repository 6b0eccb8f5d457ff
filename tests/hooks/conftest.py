"""Fixtures for the hook tests (defined in hook_helpers, shared with tests/escapes)."""

from hook_helpers import daemon, hook_env, repo

__all__ = ["daemon", "hook_env", "repo"]
