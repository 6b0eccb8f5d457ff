"""Cursor: beforeShellExecution (``command``, ``cwd``), beforeReadFile (``file_path``,
``content``), beforeSubmitPrompt (``prompt``), beforeMCPExecution (``tool_name``, ``tool_input``
object or JSON string, ``url`` | ``command``) and the generic preToolUse; ``conversation_id``.
Replies are JSON ``permission`` (allow is ``{}``: valid JSON, no decision, since ``failClosed``
blocks on invalid JSON); ask works except for prompts and file reads."""

from __future__ import annotations

from typing import Any

import domestique.hooks.hosts._common as c
from domestique.hooks.protocol import (
    TIMEOUT_S,
    EventKind,
    HookEvent,
    Host,
    Setting,
    Settings,
    ToolSpec,
    UnknownEvent,
    dumps,
)

TOOLS: dict[str, ToolSpec] = {  # the generic preToolUse event
    "Shell": ToolSpec(EventKind.SHELL, command="command"),
    "Read": ToolSpec(EventKind.READ, paths=c.READ_PATHS, required=True),
    "Grep": ToolSpec(EventKind.READ, paths=c.READ_PATHS, globs=("glob", "pattern")),
    "Glob": ToolSpec(EventKind.READ, paths=c.READ_PATHS, globs=("glob", "pattern")),
    "Write": ToolSpec(EventKind.WRITE, paths=c.READ_PATHS, required=True),
    "Edit": ToolSpec(EventKind.WRITE, paths=c.READ_PATHS, required=True),
    "Delete": ToolSpec(EventKind.WRITE, paths=c.READ_PATHS, required=True),
}
NAME = "cursor"


def parse(payload: dict[str, Any]) -> HookEvent:
    name = c.req_str(payload, "hook_event_name", "input")
    session = c.opt_str(payload, "conversation_id")
    cwd = c.opt_str(payload, "cwd") or c.first_root(payload.get("workspace_roots"))
    if name == "beforeShellExecution":
        command = c.req_str(payload, "command", "input")
        return c.event(
            NAME, name, EventKind.SHELL, "Shell", session_id=session, cwd=cwd, command=command
        )
    if name == "beforeReadFile":
        path = c.absolute(c.req_str(payload, "file_path", "input"), cwd)
        content = c.opt_str(payload, "content")
        texts: tuple[tuple[str, str], ...] = (("content", content),) if content else ()
        return c.event(
            NAME,
            name,
            EventKind.READ,
            "Read",
            session_id=session,
            cwd=cwd,
            paths=(path,),
            texts=texts,
        )
    if name == "beforeSubmitPrompt":
        prompt = c.req_str(payload, "prompt", "input")
        return c.prompt_event(NAME, name, prompt, session_id=session, cwd=cwd)
    if name == "beforeMCPExecution":
        tool = c.req_str(payload, "tool_name", "input")
        texts = tuple(c.string_leaves(c.tool_input(payload), "tool_input", json_strings=True))
        url = c.opt_str(payload, "url")
        return c.event(
            NAME,
            name,
            EventKind.MCP,
            f"mcp:{tool}",
            session_id=session,
            cwd=cwd,
            texts=texts,
            urls=(url,) if url else (),
        )
    if name == "preToolUse":
        tool = c.req_str(payload, "tool_name", "input")
        args = c.tool_input(payload)
        return c.tool_event(NAME, name, tool, args, TOOLS, session_id=session, cwd=cwd)
    raise UnknownEvent(name)


def render(event: str, action: str, message: str) -> tuple[bytes, int]:
    stop = action != "allow"
    if event == "beforeSubmitPrompt":
        reply = {"continue": False, "user_message": message} if stop else {"continue": True}
        return dumps(reply), 0
    if not stop:
        return b"{}\n", 0  # valid JSON (failClosed blocks on invalid), no decision
    if event == "beforeReadFile":
        return dumps({"permission": action}), 0
    return dumps({"permission": action, "user_message": message, "agent_message": message}), 0


def probe(command: str, cwd: str) -> dict[str, Any]:
    return {
        "hook_event_name": "beforeShellExecution",
        "conversation_id": "domestique-doctor",
        "command": command,
        "cwd": cwd,
    }


def stops(stdout: bytes, code: int) -> bool:
    reply = c.json_reply(stdout)
    if code == 2 or reply is None:
        return True  # Cursor blocks on invalid JSON (failClosed)
    return (reply or {}).get("permission") in ("deny", "ask")


def _entries(command: str) -> dict[str, list[dict[str, Any]]]:
    handler = {"command": command, "timeout": TIMEOUT_S, "failClosed": True}
    events = ("beforeShellExecution", "beforeReadFile", "beforeSubmitPrompt", "beforeMCPExecution")
    return {e: [dict(handler)] for e in events}


HOST = Host(
    name=NAME,
    parse=parse,
    render=render,
    event_name=c.event_name,
    settings=Settings(
        user_file=lambda home: home / ".cursor" / "hooks.json",
        project_file=lambda root: root / ".cursor" / "hooks.json",
        entries=_entries,
        fail_closed="failClosed: true",
        base=(Setting(("version",), 1, only_if_absent=True),),
        switch_on=lambda entry: entry.get("failClosed") is True,
    ),
    self_protect=(
        "*/.cursor/hooks.json",
        "/etc/cursor/*",
        "/Library/Application Support/Cursor/hooks.json",
    ),
    dirs=(".cursor",),
    commands=("cursor", "cursor-agent"),
    probe=probe,
    stops=stops,
    can_ask=lambda event: event not in ("beforeSubmitPrompt", "beforeReadFile"),
)
