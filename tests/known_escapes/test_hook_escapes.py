"""Known escapes around the agent hooks (docs/known-escapes.md, "Agent hooks").

Blocked or mitigated escapes have passing tests; open ones are strict xfail, so a change in
behaviour (for better or worse) fails the suite until the list is updated.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from _helpers.hooks import (
    DOMESTIQUE,
    FAKE_TOKEN,
    daemon,
    decision,
    file_payload,
    hook_env,
    prompt_payload,
    repo,
    run_hook,
)

__all__ = ["daemon", "hook_env", "repo"]  # fixtures re-exported for this module


def _install(env: dict[str, str], cwd: Path, host: str) -> dict[str, object]:
    subprocess.run([DOMESTIQUE, "install", host], env=env, cwd=cwd, check=True, capture_output=True)
    files = {
        "claude-code": ".claude/settings.json",
        "gemini": ".gemini/settings.json",
        "cursor": ".cursor/hooks.json",
        "codex": ".codex/hooks.json",
    }
    doc: dict[str, object] = json.loads((Path(env["HOME"]) / files[host]).read_text())
    return doc


def test_claude_code_timeout_fails_open_mitigated_by_on_failure_block(
    hook_env: dict[str, str], repo: Path
) -> None:
    """Escape: a hook that times out or crashes does not block in Claude Code (#2133).
    Mitigated: install sets onFailure "block" and a 10 s timeout on every entry."""
    doc = _install(hook_env, repo, "claude-code")
    hooks = doc["hooks"]
    assert isinstance(hooks, dict)
    handlers = [h for groups in hooks.values() for g in groups for h in g["hooks"]]
    assert handlers
    assert all(h["onFailure"] == "block" and h["timeout"] == 10 for h in handlers)


@pytest.mark.xfail(strict=True, reason="open: Gemini CLI has no fail-closed switch for hooks")
def test_gemini_hook_crash_fails_open(hook_env: dict[str, str], repo: Path) -> None:
    """Escape: on Gemini CLI (also Codex, Windsurf, Copilot) a hook that crashes or times out
    only warns and the tool runs. Open: there is no setting to make it block."""
    doc = _install(hook_env, repo, "gemini")
    text = json.dumps(doc)
    assert "failClosed" in text or "onFailure" in text


def test_copilot_ignores_ask_mitigated_by_answering_deny(
    hook_env: dict[str, str], repo: Path
) -> None:
    """Escape: Copilot processes only "deny" from preToolUse; an "ask" would let the call run.
    Mitigated: the Copilot adapter answers deny wherever the policy says ask."""
    path = str(Path(hook_env["HOME"]) / ".ssh" / "id_ed25519")
    r = run_hook("copilot", file_payload("copilot", path, repo, write=False), hook_env, repo)
    assert json.loads(r.stdout)["permissionDecision"] == "deny"


@pytest.mark.xfail(strict=True, reason="open: Copilot ignores userPromptSubmitted output")
def test_copilot_prompt_with_secret_cannot_be_blocked(hook_env: dict[str, str], repo: Path) -> None:
    """Escape: a secret pasted into a Copilot prompt reaches the model; the hook sees it and
    records a deny, but Copilot ignores the prompt hook's output."""
    prompt = f"use {FAKE_TOKEN}"
    r = run_hook("copilot", prompt_payload("copilot", prompt, repo), hook_env, repo)
    assert decision("copilot", r, "prompt") == "deny"


@pytest.mark.xfail(strict=True, reason="open: Cursor has no pre-edit hook event in use")
def test_cursor_edit_tool_can_rewrite_hook_settings(hook_env: dict[str, str], repo: Path) -> None:
    """Escape: Cursor only reports edits after the fact (afterFileEdit), so its agent can rewrite
    ~/.cursor/hooks.json with an edit tool. Open until a pre-edit event is hooked."""
    doc = _install(hook_env, repo, "cursor")
    hooks = doc["hooks"]
    assert isinstance(hooks, dict)
    assert "preToolUse" in hooks


def test_mcp_filesystem_write_to_hook_settings_is_blocked(
    hook_env: dict[str, str], repo: Path
) -> None:
    """Escape: an MCP filesystem server's write tool edits hook settings, invisible to the host's
    edit hooks. Blocked: MCP arguments naming a hook settings file are hook.guard_tamper."""
    payload = {
        "session_id": "s",
        "cwd": str(repo),
        "hook_event_name": "PreToolUse",
        "tool_name": "mcp__filesystem__write_file",
        "tool_input": {"path": "~/.claude/settings.json", "content": '{"disableAllHooks": true}'},
    }
    r = run_hook("claude-code", payload, hook_env, repo)
    assert decision("claude-code", r) == "deny"
    assert b"hook.guard_tamper" in r.stdout


def test_settings_local_json_disable_all_hooks_is_blocked(
    hook_env: dict[str, str], repo: Path
) -> None:
    """Escape: the agent writes .claude/settings.local.json with disableAllHooks. Blocked: the
    project's local settings file is protected like the user's."""
    target = str(repo / ".claude" / "settings.local.json")
    r = run_hook(
        "claude-code", file_payload("claude-code", target, repo, write=True), hook_env, repo
    )
    assert decision("claude-code", r) == "deny"


def test_codex_config_toml_feature_switch_is_blocked(hook_env: dict[str, str], repo: Path) -> None:
    """Escape: an apply_patch that sets `[features] hooks = false` in ~/.codex/config.toml.
    Blocked: Codex config files are protected."""
    target = str(Path(hook_env["HOME"]) / ".codex" / "config.toml")
    r = run_hook("codex", file_payload("codex", target, repo, write=True), hook_env, repo)
    assert decision("codex", r) == "deny"


@pytest.mark.xfail(strict=True, reason="open: @-mentioned files skip PreToolUse in Claude Code")
def test_claude_code_at_mention_reads_credentials_without_a_tool(
    hook_env: dict[str, str], repo: Path
) -> None:
    """Escape: `@.env` in a Claude Code prompt attaches the file without a Read tool call, so no
    PreToolUse fires. The prompt hook sees only the text. (The firewall proxy still scans the
    request.) Open for the hooks."""
    r = run_hook(
        "claude-code", prompt_payload("claude-code", "explain @.env", repo), hook_env, repo
    )
    assert decision("claude-code", r, "prompt") == "deny"


@pytest.mark.xfail(
    strict=True,
    reason="open: Cursor reportedly ignores 'ask' in Auto-review mode (second-hand report)",
)
def test_cursor_ask_is_enforced_in_auto_review(hook_env: dict[str, str], repo: Path) -> None:
    """Escape: Domestique answers Cursor with ``ask`` for commands policy puts to the person
    (here ``sudo``); in Auto-review mode Cursor is reported to run them without asking, while
    ``deny`` is enforced. Closing it means answering Cursor's asks with deny."""
    from _helpers.hooks import shell_payload

    r = run_hook("cursor", shell_payload("cursor", "sudo apt-get update", repo), hook_env, repo)
    assert decision("cursor", r) == "deny"
