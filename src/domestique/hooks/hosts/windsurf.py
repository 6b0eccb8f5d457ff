"""Windsurf (Cascade): ``agent_action_name`` pre_run_command / pre_read_code / pre_write_code /
pre_mcp_tool_use / pre_user_prompt with ``tool_info``; ``trajectory_id``. Exit code 2 is the
only deny (the reason on stderr); no ask, no fail-closed switch: the entry ends with
``|| exit 2``."""

from __future__ import annotations

from typing import Any

import domestique.hooks.hosts._common as c
from domestique.hooks.protocol import EventKind, HookEvent, Host, Settings, UnknownEvent

NAME = "windsurf"


def parse(payload: dict[str, Any]) -> HookEvent:
    name = c.req_str(payload, "agent_action_name", "input")
    info = c.obj(payload.get("tool_info"), "tool_info")
    session = c.opt_str(payload, "trajectory_id")
    cwd = c.opt_str(info, "cwd")
    if name == "pre_run_command":
        command = c.req_str(info, "command_line", "tool_info")
        return c.event(
            NAME, name, EventKind.SHELL, "run_command", session_id=session, cwd=cwd, command=command
        )
    if name in ("pre_read_code", "pre_write_code"):
        path = c.absolute(c.req_str(info, "file_path", "tool_info"), cwd)
        kind, tool = (
            (EventKind.READ, "read_code")
            if name == "pre_read_code"
            else (EventKind.WRITE, "write_code")
        )
        return c.event(NAME, name, kind, tool, session_id=session, cwd=cwd, paths=(path,))
    if name == "pre_mcp_tool_use":
        server = c.opt_str(info, "mcp_server_name") or "?"
        tool = c.opt_str(info, "mcp_tool_name") or "?"
        texts = tuple(
            c.string_leaves(info.get("mcp_tool_arguments"), "mcp_tool_arguments", json_strings=True)
        )
        return c.event(
            NAME,
            name,
            EventKind.MCP,
            f"mcp:{server}/{tool}",
            session_id=session,
            cwd=cwd,
            texts=texts,
        )
    if name == "pre_user_prompt":
        prompt = c.req_str(info, "user_prompt", "tool_info")
        return c.prompt_event(NAME, name, prompt, session_id=session, cwd=cwd)
    raise UnknownEvent(name)


def render(event: str, action: str, message: str) -> tuple[bytes, int]:
    del event, message  # the message goes to stderr with exit 2
    return b"", 2 if action != "allow" else 0


def probe(command: str, cwd: str) -> dict[str, Any]:
    return {
        "agent_action_name": "pre_run_command",
        "trajectory_id": "domestique-doctor",
        "tool_info": {"command_line": command, "cwd": cwd},
    }


def stops(stdout: bytes, code: int) -> bool:
    del stdout
    return code == 2


def _entries(command: str) -> dict[str, list[dict[str, Any]]]:
    handler = {"command": command, "show_output": True}
    events = ("pre_run_command", "pre_read_code", "pre_write_code", "pre_mcp_tool_use")
    return {e: [dict(handler)] for e in (*events, "pre_user_prompt")}


HOST = Host(
    name=NAME,
    parse=parse,
    render=render,
    event_name=c.event_name,
    settings=Settings(
        user_file=lambda home: home / ".codeium" / "windsurf" / "hooks.json",
        project_file=lambda root: root / ".windsurf" / "hooks.json",
        entries=_entries,
        fail_closed="no switch: only exit code 2 blocks",
        missing_fallback="exit 2",
    ),
    self_protect=(
        "*/.codeium/windsurf/hooks.json",
        "*/.windsurf/hooks.json",
        "/etc/windsurf/*",
        "/Library/Application Support/Windsurf/hooks.json",
    ),
    dirs=(".codeium/windsurf",),
    commands=("windsurf",),
    probe=probe,
    stops=stops,
)
