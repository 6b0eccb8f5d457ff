"""What the host modules share: reading tool arguments into a :class:`HookEvent`. Stdlib only.

Pure functions on parsed JSON. Anything that does not have the documented shape raises
:class:`MalformedInput`; a tool name a host's table does not know becomes an event of kind
``unknown`` (the policy's ``settings.unknown_tool`` decides), never an allow by default.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator, Mapping

from domestique.hooks.protocol import EventKind, HookEvent, MalformedInput, ToolSpec, UnknownEvent

TYPE_CHECKING = False  # not typing's: a hook deciding in-process does not load typing
if TYPE_CHECKING:
    from typing import Any


def obj(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise MalformedInput(f"{where} is not an object")
    return value


def req_str(payload: Mapping[str, Any], key: str, where: str) -> str:
    value = payload.get(key)
    if not isinstance(value, str):
        raise MalformedInput(f"{where}.{key} is missing or not a string")
    return value


def opt_str(payload: Mapping[str, Any], key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) and value else None


def first_root(value: object) -> str | None:
    """The first of a host's workspace roots (Cursor, Cline), if it names one."""
    return value[0] if isinstance(value, list) and value and isinstance(value[0], str) else None


def absolute(path: str, cwd: str | None) -> str:
    """``path`` made absolute against ``cwd`` (``~`` expanded) and normalised."""
    path = os.path.expanduser(path)
    if not os.path.isabs(path):
        path = os.path.join(cwd or os.getcwd(), path)
    return os.path.normpath(path)


def string_leaves(
    value: object, where: str, *, json_strings: bool = False, _depth: int = 0
) -> Iterator[tuple[str, str]]:
    """Every string inside ``value`` with its JSON path (``input.body[2].text``).

    ``json_strings``: a string that is itself a JSON object or array (Cline passes MCP
    ``arguments`` that way) is also descended into, as ``where<json>.key``, so a path named
    inside it is seen like any other argument.
    """
    if isinstance(value, str):
        yield where, value
        if json_strings and _depth < 4 and value.lstrip()[:1] in ("{", "["):
            try:
                inner = json.loads(value)
            except (ValueError, RecursionError):
                return
            yield from string_leaves(inner, f"{where}<json>", json_strings=True, _depth=_depth + 1)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from string_leaves(
                item, f"{where}.{key}", json_strings=json_strings, _depth=_depth
            )
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from string_leaves(
                item, f"{where}[{i}]", json_strings=json_strings, _depth=_depth
            )


def _paths_from(args: Mapping[str, Any], keys: tuple[str, ...], cwd: str | None) -> tuple[str, ...]:
    found: list[str] = []
    for key in keys:
        value = args.get(key)
        items = value if isinstance(value, list) else [value]
        found.extend(absolute(v, cwd) for v in items if isinstance(v, str) and v)
    return tuple(found)


_URL = re.compile(r"https?://[^\s\"'<>]+")

READ_PATHS = ("file_path", "path", "absolute_path", "notebook_path", "dir_path", "paths")
BENIGN = ToolSpec(EventKind.BENIGN)


def event(
    host: str,
    name: str,
    kind: EventKind,
    tool: str,
    *,
    session_id: str | None,
    cwd: str | None,
    **fields: Any,
) -> HookEvent:
    return HookEvent(
        host=host, event=name, kind=kind, tool=tool, session_id=session_id, cwd=cwd, **fields
    )


def tool_event(
    host: str,
    name: str,
    tool: str,
    args: Mapping[str, Any],
    table: Mapping[str, ToolSpec],
    *,
    session_id: str | None,
    cwd: str | None,
    paths: tuple[str, ...] | None = None,
) -> HookEvent:
    """A tool call judged by its spec; MCP names (``mcp__server__tool``) are always MCP.

    ``paths``: the files the call touches when the host module read them itself (Codex's
    ``apply_patch`` names them in the patch text), instead of the spec's arguments.
    """
    spec = table.get(tool)
    if spec is None and tool.startswith("mcp__"):
        spec = ToolSpec(EventKind.MCP)
    if spec is None:
        return event(host, name, EventKind.UNKNOWN, tool, session_id=session_id, cwd=cwd)
    if spec.kind is EventKind.SHELL:
        command = args.get(spec.command or "command")
        if not isinstance(command, str):
            raise MalformedInput(f"{tool} call without a command string")
        run_cwd = opt_str(args, "dir_path")
        if run_cwd:
            cwd = absolute(run_cwd, cwd)
        return event(host, name, spec.kind, tool, session_id=session_id, cwd=cwd, command=command)
    if paths is None:
        paths = _paths_from(args, spec.paths, cwd)
        if spec.required and not paths:
            raise MalformedInput(f"{tool} call without a path string")
    if spec.kind is EventKind.MCP:
        texts = tuple(string_leaves(dict(args), "tool_input", json_strings=True))
    else:
        texts = tuple(
            (f"tool_input.{k}", v) for k in spec.texts if isinstance(v := args.get(k), str) and v
        )
    urls = tuple(v for k in spec.urls if isinstance(v := args.get(k), str) and v)
    if spec.kind is EventKind.FETCH:
        urls += tuple(u for _, t in texts for u in _URL.findall(t) if u not in urls)
    globs: list[str] = []
    for key in spec.globs:
        value = args.get(key)
        globs.extend(
            v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str)
        )
    return event(
        host,
        name,
        spec.kind,
        tool,
        session_id=session_id,
        cwd=cwd,
        paths=paths,
        texts=texts,
        urls=urls,
        globs=tuple(globs),
    )


def prompt_event(
    host: str, name: str, prompt: str, *, session_id: str | None, cwd: str | None
) -> HookEvent:
    return event(
        host,
        name,
        EventKind.PROMPT,
        "prompt",
        session_id=session_id,
        cwd=cwd,
        texts=(("prompt", prompt),),
    )


def tool_input(payload: Mapping[str, Any], key: str = "tool_input") -> dict[str, Any]:
    value = payload.get(key)
    if isinstance(value, str):
        # Some hosts (Cursor's MCP hook, Copilot's toolArgs) pass arguments as a JSON string.
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise MalformedInput(f"{key} is a string but not JSON") from exc
    return obj(value, key)


def event_name(payload: object) -> str:
    """The event name a payload carries under any host's key ('' when none); never raises."""
    if not isinstance(payload, dict):
        return ""
    for key in ("hook_event_name", "agent_action_name", "hookName"):
        value = payload.get(key)
        if isinstance(value, str):
            return value
    return ""


def claude_like(
    host: str,
    payload: dict[str, Any],
    table: Mapping[str, ToolSpec],
    *,
    tool_call: str = "PreToolUse",
    prompt: str = "UserPromptSubmit",
    paths_of: Callable[[str, dict[str, Any], str | None], tuple[str, ...] | None] | None = None,
) -> HookEvent:
    """Claude Code's payload shape, which Codex and Gemini CLI share under their own event
    names (``tool_call``, ``prompt``). ``paths_of(tool, arguments, cwd)``: the files a tool call
    touches when the host module reads them itself (None: from the tool's spec)."""
    name = req_str(payload, "hook_event_name", "input")
    session = opt_str(payload, "session_id")
    cwd = opt_str(payload, "cwd")
    if name == tool_call:
        tool = req_str(payload, "tool_name", "input")
        args = tool_input(payload)
        paths = paths_of(tool, args, cwd) if paths_of is not None else None
        return tool_event(host, name, tool, args, table, session_id=session, cwd=cwd, paths=paths)
    if name == prompt:
        text = req_str(payload, "prompt", "input")
        return prompt_event(host, name, text, session_id=session, cwd=cwd)
    raise UnknownEvent(name)


def json_reply(stdout: bytes) -> dict[str, Any] | None:
    """A hook's stdout read as a host reads it: None when it is not JSON, {} when it is empty
    or not an object (no decision)."""
    try:
        reply = json.loads(stdout) if stdout.strip() else {}
    except ValueError:
        return None
    return reply if isinstance(reply, dict) else {}
