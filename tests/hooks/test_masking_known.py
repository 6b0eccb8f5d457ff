"""A developer's known secret values (secret-named environment variables, ``.env`` values) are
never echoed to the host or written to the audit store by a hook, even when the value has no
digit and no credential hint around it (the cheap "could hold a secret" check misses those)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _helpers.hooks import daemon, file_payload, hook_env, repo, run_hook, shell_payload
from domestique.audit import AuditStore

__all__ = ["daemon", "hook_env", "repo"]  # fixtures re-exported for this module

ENV_VALUE = "sunflowerfieldmeadow"  # letters only: no token run, no hint
DOTENV_VALUE = "marmaladeorchestra"


def _hook_records(env: dict[str, str]) -> list[dict[str, object]]:
    store = AuditStore.open(Path(env["DOMESTIQUE_HOME"]), create=False)
    try:
        return [r.data() for r in store.rows() if r.data()["component"] == "hook"]
    finally:
        store.close()


@pytest.mark.parametrize("warm", [False, True], ids=["no-daemon", "daemon"])
def test_known_values_without_digits_are_masked_in_what_a_hook_records(
    warm: bool, hook_env: dict[str, str], repo: Path, request: pytest.FixtureRequest
) -> None:
    env = request.getfixturevalue("daemon") if warm else hook_env
    env = dict(env, DEPLOY_PASSWORD=ENV_VALUE)
    (repo / ".env").write_text(f"SESSION_SECRET={DOTENV_VALUE}\n")
    calls = [
        ("claude-code", shell_payload("claude-code", f"ls notes/{ENV_VALUE}", repo)),
        ("claude-code", file_payload("claude-code", f"docs/{DOTENV_VALUE}.md", repo, write=False)),
        ("gemini", shell_payload("gemini", f"cat ./{ENV_VALUE}.txt", repo)),
    ]
    for host, payload in calls:
        r = run_hook(host, payload, env, repo)
        assert ENV_VALUE.encode() not in r.stdout + r.stderr
        assert DOTENV_VALUE.encode() not in r.stdout + r.stderr
    records = _hook_records(env)
    assert len(records) >= len(calls)
    text = json.dumps(records)
    assert ENV_VALUE not in text
    assert DOTENV_VALUE not in text
    assert "notes/" in text  # the rest of the command is still recorded


def test_a_value_not_known_is_recorded_as_it_was(hook_env: dict[str, str], repo: Path) -> None:
    """The same word, when no variable or .env holds it, is kept: masking is not a blanket."""
    run_hook(
        "claude-code", shell_payload("claude-code", f"ls notes/{ENV_VALUE}", repo), hook_env, repo
    )
    assert f"ls notes/{ENV_VALUE}" in json.dumps(_hook_records(hook_env))
