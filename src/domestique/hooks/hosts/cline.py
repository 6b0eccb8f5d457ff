"""Cline: ``hookName`` PreToolUse (``preToolUse.toolName``, ``preToolUse.parameters``) or
UserPromptSubmit (``userPromptSubmit.prompt``); ``taskId``, ``workspaceRoots``. The reply is
``{"cancel": …}``; a non-zero exit, invalid JSON or a timeout cancels by itself. The hooks are
one executable script per event in a folder, not a settings file."""

from __future__ import annotations

from typing import Any

import domestique.hooks.hosts._common as c
from domestique.hooks.protocol import (
    EventKind,
    HookEvent,
    Host,
    Settings,
    ToolSpec,
    UnknownEvent,
    dumps,
)

TOOLS: dict[str, ToolSpec] = {
    "execute_command": ToolSpec(EventKind.SHELL, command="command"),
    "read_file": ToolSpec(EventKind.READ, paths=("path",), required=True),
    "list_files": ToolSpec(EventKind.READ, paths=("path",)),
    "search_files": ToolSpec(EventKind.READ, paths=("path",), globs=("file_pattern",)),
    "list_code_definition_names": ToolSpec(EventKind.READ, paths=("path",)),
    "write_to_file": ToolSpec(EventKind.WRITE, paths=("path",), required=True),
    "replace_in_file": ToolSpec(EventKind.WRITE, paths=("path",), required=True),
    "use_mcp_tool": ToolSpec(EventKind.MCP),
    "access_mcp_resource": ToolSpec(EventKind.MCP),
    "web_fetch": ToolSpec(EventKind.FETCH, texts=("url",), urls=("url",)),
    "browser_action": ToolSpec(EventKind.FETCH, texts=("url", "text"), urls=("url",)),
    "ask_followup_question": c.BENIGN,
    "attempt_completion": c.BENIGN,
    "plan_mode_respond": c.BENIGN,
    "new_task": c.BENIGN,
    "load_mcp_documentation": c.BENIGN,
}
NAME = "cline"
EVENTS = ("PreToolUse", "UserPromptSubmit")


def parse(payload: dict[str, Any]) -> HookEvent:
    name = c.req_str(payload, "hookName", "input")
    session = c.opt_str(payload, "taskId")
    cwd = c.first_root(payload.get("workspaceRoots"))
    if name == "PreToolUse":
        body = c.obj(payload.get("preToolUse"), "preToolUse")
        tool = c.req_str(body, "toolName", "preToolUse")
        args = c.obj(body.get("parameters", {}), "preToolUse.parameters")
        return c.tool_event(NAME, name, tool, args, TOOLS, session_id=session, cwd=cwd)
    if name == "UserPromptSubmit":
        body = c.obj(payload.get("userPromptSubmit"), "userPromptSubmit")
        prompt = c.req_str(body, "prompt", "userPromptSubmit")
        return c.prompt_event(NAME, name, prompt, session_id=session, cwd=cwd)
    raise UnknownEvent(name)


def render(event: str, action: str, message: str) -> tuple[bytes, int]:
    del event
    stop = action != "allow"
    return dumps({"cancel": True, "errorMessage": message} if stop else {"cancel": False}), 0


def probe(command: str, cwd: str) -> dict[str, Any]:
    return {
        "hookName": "PreToolUse",
        "taskId": "domestique-doctor",
        "workspaceRoots": [cwd],
        "preToolUse": {"toolName": "execute_command", "parameters": {"command": command}},
    }


def stops(stdout: bytes, code: int) -> bool:
    reply = c.json_reply(stdout)
    return reply is None or code != 0 or reply.get("cancel") is True


HOST = Host(
    name=NAME,
    parse=parse,
    render=render,
    event_name=c.event_name,
    settings=Settings(
        user_file=lambda home: home / "Documents" / "Cline" / "Rules" / "Hooks",
        project_file=lambda root: root / ".clinerules" / "hooks",
        entries=lambda command: {},
        fail_closed="built in: a non-zero exit, invalid JSON or a timeout blocks",
        layout="scripts",
        builtin_fail_closed=True,
        script_events=EVENTS,
    ),
    self_protect=(
        "*/.clinerules/hooks/*",
        "*/Documents/Cline/Rules/Hooks/*",
        "*/Documents/Cline/Hooks/*",
    ),
    dirs=("Documents/Cline",),
    commands=(),
    probe=probe,
    stops=stops,
)
