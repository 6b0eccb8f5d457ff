"""The one catalogue of credential file names shared by the guard and the hooks."""

from __future__ import annotations

import pytest

from domestique.sensitive_paths import is_credential_path, is_env_file


@pytest.mark.parametrize("path", [".env", "prod.env", "app/.env.local", "/srv/x/.env"])
def test_environment_files_count_as_credentials(path: str) -> None:
    """An environment file is a credential file for both the guard and the hooks."""
    assert is_env_file(path)
    assert is_credential_path(path)


@pytest.mark.parametrize(
    "path",
    [".env.example", "config/.env.sample", "process.env", "...process.env", "import.meta.env"],
)
def test_examples_and_javascript_environment_objects_are_not_files(path: str) -> None:
    """Examples and templates are documentation; ``process.env`` in a one-liner is code."""
    assert not is_env_file(path)
