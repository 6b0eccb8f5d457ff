"""Claude Code: ``hook_event_name`` PreToolUse (``tool_name``, ``tool_input``) or
UserPromptSubmit (``prompt``); ``session_id``, ``cwd``. Deny is the JSON
``permissionDecision`` (exit 0); ask is supported for tool calls; the settings entry has
``onFailure: "block"``, so a hook that cannot start blocks by itself."""

from __future__ import annotations

import domestique.hooks.hosts._common as c
from domestique.hooks.protocol import (
    TIMEOUT_S,
    EventKind,
    HookEvent,
    Host,
    Setting,
    Settings,
    ToolSpec,
    dumps,
)

TYPE_CHECKING = False  # not typing's: a hook deciding in-process does not load typing
if TYPE_CHECKING:
    from typing import Any

TOOLS: dict[str, ToolSpec] = {
    "Bash": ToolSpec(EventKind.SHELL, command="command"),
    "Read": ToolSpec(EventKind.READ, paths=("file_path",), required=True),
    "NotebookRead": ToolSpec(EventKind.READ, paths=("notebook_path",), required=True),
    "Glob": ToolSpec(EventKind.READ, paths=("path",), globs=("pattern",)),
    "Grep": ToolSpec(EventKind.READ, paths=("path",), globs=("glob",)),
    "LS": ToolSpec(EventKind.READ, paths=("path",)),
    "Write": ToolSpec(EventKind.WRITE, paths=("file_path",), required=True),
    "Edit": ToolSpec(EventKind.WRITE, paths=("file_path",), required=True),
    "MultiEdit": ToolSpec(EventKind.WRITE, paths=("file_path",), required=True),
    "NotebookEdit": ToolSpec(EventKind.WRITE, paths=("notebook_path",), required=True),
    "WebFetch": ToolSpec(EventKind.FETCH, texts=("url", "prompt"), urls=("url",)),
    "WebSearch": ToolSpec(EventKind.FETCH, texts=("query",)),
    "Task": c.BENIGN,
    "Agent": c.BENIGN,
    "TodoWrite": c.BENIGN,
    "ExitPlanMode": c.BENIGN,
    "BashOutput": c.BENIGN,
    "KillShell": c.BENIGN,
    "KillBash": c.BENIGN,
}


def parse(payload: dict[str, Any]) -> HookEvent:
    return c.claude_like(HOST.name, payload, TOOLS)


def render_claude_like(event: str, action: str, message: str) -> tuple[bytes, int]:
    """Claude Code's reply (Codex reads the same): silence for allow, else the decision."""
    if action == "allow":
        return b"", 0  # silence: the host's own rules decide
    if event == "UserPromptSubmit":
        return dumps({"decision": "block", "reason": message}), 0
    decision = {
        "hookEventName": event or "PreToolUse",
        "permissionDecision": action,
        "permissionDecisionReason": message,
    }
    return dumps({"hookSpecificOutput": decision}), 0


def probe_claude_like(command: str, cwd: str) -> dict[str, Any]:
    return {
        "session_id": "domestique-doctor",
        "transcript_path": None,
        "cwd": cwd,
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_use_id": "doctor",
        "tool_input": {"command": command},
    }


def stops_claude_like(stdout: bytes, code: int) -> bool:
    if code == 2:
        return True
    reply = c.json_reply(stdout) or {}
    output = reply.get("hookSpecificOutput")
    decision = output.get("permissionDecision") if isinstance(output, dict) else None
    return decision in ("deny", "ask")


def _entries(command: str) -> dict[str, list[dict[str, Any]]]:
    handler = {"type": "command", "command": command, "timeout": TIMEOUT_S, "onFailure": "block"}
    return {
        "PreToolUse": [{"matcher": "*", "hooks": [dict(handler)]}],
        "UserPromptSubmit": [{"hooks": [dict(handler)]}],
    }


def _proxy(base: str) -> dict[str, list[Setting]]:
    return {
        "hooks": [
            Setting(("env", "ANTHROPIC_BASE_URL"), base),
            # Telemetry, error reports and update checks otherwise go around the proxy.
            Setting(("env", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"), "1"),
        ]
    }


HOST = Host(
    name="claude-code",
    parse=parse,
    render=render_claude_like,
    event_name=c.event_name,
    settings=Settings(
        user_file=lambda home: home / ".claude" / "settings.json",
        project_file=lambda root: root / ".claude" / "settings.json",
        entries=_entries,
        grouped=True,
        fail_closed='onFailure: "block" (Claude Code 2.1.295+); older versions fail open',
        switch_on=lambda entry: entry.get("onFailure") == "block",
        proxy=_proxy,
    ),
    self_protect=(
        "*/.claude/settings.json",
        "*/.claude/settings.local.json",
        "*/.claude/hooks/*",
        "/etc/claude-code/*",
        "/Library/Application Support/ClaudeCode/*",
    ),
    dirs=(".claude",),
    commands=("claude",),
    probe=probe_claude_like,
    stops=stops_claude_like,
    # Prompts have no ask: a prompt is sent or it is not.
    can_ask=lambda event: event != "UserPromptSubmit",
)
