"""GitHub Copilot CLI: preToolUse (``toolName``, ``toolArgs`` = a JSON *string*, an object from
the SDK) and userPromptSubmitted (``prompt``); no event name and no session id in the payload.
Only the JSON ``permissionDecision: "deny"`` blocks (not exit 2): a hook that cannot start
prints that JSON from the entry's fallback. No ask."""

from __future__ import annotations

from typing import Any

import domestique.hooks.hosts._common as c
from domestique.hooks.protocol import (
    TIMEOUT_S,
    EventKind,
    HookEvent,
    Host,
    MalformedInput,
    Setting,
    Settings,
    ToolSpec,
    dumps,
)

TOOLS: dict[str, ToolSpec] = {
    "bash": ToolSpec(EventKind.SHELL, command="command"),
    "view": ToolSpec(EventKind.READ, paths=("path",), required=True),
    "edit": ToolSpec(EventKind.WRITE, paths=("path",), required=True),
    "create": ToolSpec(EventKind.WRITE, paths=("path",), required=True),
}
NAME = "copilot"
DENY_JSON = (
    '{"permissionDecision":"deny","permissionDecisionReason":'
    '"Domestique cannot start; run domestique doctor"}'
)


def parse(payload: dict[str, Any]) -> HookEvent:
    cwd = c.opt_str(payload, "cwd")
    if "toolName" in payload:
        tool = c.req_str(payload, "toolName", "input")
        raw_args = payload.get("toolArgs")
        if isinstance(raw_args, str):
            args = c.tool_input(payload, "toolArgs")
        elif raw_args is None:
            args = {}
        else:
            args = c.obj(raw_args, "toolArgs")  # the Copilot SDK passes an object
        return c.tool_event(NAME, "preToolUse", tool, args, TOOLS, session_id=None, cwd=cwd)
    if "prompt" in payload:
        prompt = c.req_str(payload, "prompt", "input")
        return c.prompt_event(NAME, "userPromptSubmitted", prompt, session_id=None, cwd=cwd)
    raise MalformedInput("neither toolName nor prompt in input")


def event_name(payload: object) -> str:
    """Copilot's payloads carry no event name: they are told apart by their fields."""
    if not isinstance(payload, dict):
        return ""
    if "toolName" in payload:
        return "preToolUse"
    if "prompt" in payload:
        return "userPromptSubmitted"
    return c.event_name(payload)


def render(event: str, action: str, message: str) -> tuple[bytes, int]:
    if event == "userPromptSubmitted" or action == "allow":
        return b"{}\n", 0  # no decision (Copilot ignores the prompt hook's output anyway)
    return dumps({"permissionDecision": "deny", "permissionDecisionReason": message}), 0


def probe(command: str, cwd: str) -> dict[str, Any]:
    import json

    return {
        "timestamp": 0,
        "cwd": cwd,
        "toolName": "bash",
        "toolArgs": json.dumps({"command": command}),
    }


def stops(stdout: bytes, code: int) -> bool:
    del code  # Copilot documents only the JSON decision
    return (c.json_reply(stdout) or {}).get("permissionDecision") == "deny"


def _entries(command: str) -> dict[str, list[dict[str, Any]]]:
    handler = {"type": "command", "bash": command, "timeoutSec": TIMEOUT_S}
    return {"preToolUse": [dict(handler)], "userPromptSubmitted": [dict(handler)]}


HOST = Host(
    name=NAME,
    parse=parse,
    render=render,
    event_name=event_name,
    settings=Settings(
        user_file=lambda home: home / ".copilot" / "hooks" / "domestique.json",
        project_file=lambda root: root / ".github" / "hooks" / "domestique.json",
        entries=_entries,
        fail_closed="no switch: only a JSON deny blocks",
        base=(Setting(("version",), 1, only_if_absent=True),),
        missing_fallback=f"echo '{DENY_JSON}'",  # only a JSON deny is processed
    ),
    self_protect=("*/.github/hooks/*", "*/.copilot/hooks/*"),
    dirs=(".copilot",),
    commands=("copilot",),
    probe=probe,
    stops=stops,
    exit2_blocks=False,
    unenforced={
        "userPromptSubmitted": (
            "Copilot does not act on the prompt hook's answer: a prompt the guard denies (a "
            "secret in it) is recorded but still sent; only the firewall keeps it from the "
            "model (docs/known-escapes.md)"
        )
    },
)
