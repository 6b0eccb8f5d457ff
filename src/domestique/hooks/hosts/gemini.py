"""Gemini CLI: BeforeTool (``tool_name``, ``tool_input``) or BeforeAgent (``prompt``), in
Claude Code's payload shape. Deny is ``{"decision": "deny"}`` on stdout; Gemini reads stderr
when stdout is empty, so an allow writes neither. No ask, no fail-closed switch (exit codes
other than 2 only warn): the entry ends with ``|| exit 2``; hooks need ``tools.enableHooks``."""

from __future__ import annotations

from typing import Any

import domestique.hooks.hosts._common as c
from domestique.hooks.protocol import (
    EventKind,
    HookEvent,
    Host,
    Setting,
    Settings,
    ToolSpec,
    dumps,
)

TOOLS: dict[str, ToolSpec] = {
    "run_shell_command": ToolSpec(EventKind.SHELL, command="command"),
    "read_file": ToolSpec(
        EventKind.READ, paths=("absolute_path", "file_path", "path"), required=True
    ),
    "read_many_files": ToolSpec(
        EventKind.READ, paths=("paths",), required=True, globs=("paths", "include")
    ),
    "glob": ToolSpec(EventKind.READ, paths=("path", "dir_path"), globs=("pattern",)),
    "search_file_content": ToolSpec(EventKind.READ, paths=("path", "dir_path"), globs=("include",)),
    "grep_search": ToolSpec(EventKind.READ, paths=("path", "dir_path"), globs=("include",)),
    "list_directory": ToolSpec(EventKind.READ, paths=("path", "dir_path")),
    "write_file": ToolSpec(EventKind.WRITE, paths=("file_path",), required=True),
    "replace": ToolSpec(EventKind.WRITE, paths=("file_path",), required=True),
    "web_fetch": ToolSpec(EventKind.FETCH, texts=("prompt", "url"), urls=("url",)),
    "google_web_search": ToolSpec(EventKind.FETCH, texts=("query",)),
    "write_todos": c.BENIGN,
}


def parse(payload: dict[str, Any]) -> HookEvent:
    return c.claude_like(HOST.name, payload, TOOLS, tool_call="BeforeTool", prompt="BeforeAgent")


def render(event: str, action: str, message: str) -> tuple[bytes, int]:
    del event
    return (dumps({"decision": "deny", "reason": message}) if action != "allow" else b""), 0


def probe(command: str, cwd: str) -> dict[str, Any]:
    return {
        "session_id": "domestique-doctor",
        "cwd": cwd,
        "hook_event_name": "BeforeTool",
        "tool_name": "run_shell_command",
        "tool_input": {"command": command},
    }


def stops(stdout: bytes, code: int) -> bool:
    reply = c.json_reply(stdout) or {}
    return code == 2 or reply.get("decision") in ("deny", "block")


def _entries(command: str) -> dict[str, list[dict[str, Any]]]:
    handler = {"type": "command", "command": command, "name": "domestique", "timeout": 10_000}
    return {
        "BeforeTool": [{"matcher": ".*", "hooks": [dict(handler)]}],
        "BeforeAgent": [{"hooks": [dict(handler)]}],
    }


def _proxy(base: str) -> dict[str, list[Setting]]:
    return {
        "hooks": [
            Setting(("privacy", "usageStatisticsEnabled"), False),
            Setting(("telemetry", "enabled"), False),
        ],
        # Gemini CLI reads its base URL from the environment only; it loads ~/.gemini/.env
        # when the project has no .env of its own (doctor says when one shadows it).
        "env": [Setting(("GOOGLE_GEMINI_BASE_URL",), base)],
    }


HOST = Host(
    name="gemini",
    parse=parse,
    render=render,
    event_name=c.event_name,
    settings=Settings(
        user_file=lambda home: home / ".gemini" / "settings.json",
        project_file=lambda root: root / ".gemini" / "settings.json",
        entries=_entries,
        grouped=True,
        fail_closed="no switch: exit codes other than 2 only warn",
        base=(Setting(("tools", "enableHooks"), True),),
        missing_fallback="exit 2",
        proxy=_proxy,
    ),
    self_protect=("*/.gemini/settings.json", "/etc/gemini-cli/*"),
    dirs=(".gemini",),
    commands=("gemini",),
    probe=probe,
    stops=stops,
)
