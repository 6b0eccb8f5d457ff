"""One adapter per agent host: the host's hook JSON → a :class:`HookEvent` the judge understands.

Pure functions on parsed JSON. Anything that does not have the documented shape raises
:class:`MalformedInput` (the caller denies with ``hook.malformed_input``); an event the adapter does
not handle raises :class:`UnknownEvent`. A tool name the adapter does not know becomes an event of
kind ``unknown`` (the policy's ``settings.unknown_tool`` decides), never an allow by default.

Field names follow each host's documentation (checked late 2026):

- Claude Code / Codex: ``hook_event_name`` PreToolUse (``tool_name``, ``tool_input``) or
  UserPromptSubmit (``prompt``); ``session_id``, ``cwd``.
- Gemini CLI: BeforeTool (``tool_name``, ``tool_input``) or BeforeAgent (``prompt``).
- Cursor: beforeShellExecution (``command``, ``cwd``), beforeReadFile (``file_path``,
  ``content``), beforeSubmitPrompt (``prompt``), beforeMCPExecution (``tool_name``,
  ``tool_input`` object or JSON string, ``url`` | ``command``), preToolUse; ``conversation_id``.
- Copilot: preToolUse (``toolName``, ``toolArgs`` = a JSON *string*), userPromptSubmitted
  (``prompt``); no session id.
- Windsurf: ``agent_action_name`` pre_run_command / pre_read_code / pre_write_code /
  pre_mcp_tool_use / pre_user_prompt with ``tool_info``; ``trajectory_id``.
- Cline: ``hookName`` PreToolUse (``preToolUse.toolName``, ``preToolUse.parameters``) or
  UserPromptSubmit (``userPromptSubmit.prompt``); ``taskId``, ``workspaceRoots``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class MalformedInput(ValueError):
    """The payload lacks a field the host's protocol promises, or has the wrong type."""


class UnknownEvent(ValueError):
    """An event name this adapter has no handling for."""


class EventKind(StrEnum):
    SHELL = "shell"  # a shell command: judged by the command guard
    READ = "read"  # a file read: credential files by policy, content scanned when given
    WRITE = "write"  # a file write or edit: hook settings and Domestique's state are protected
    PROMPT = "prompt"  # the user's prompt: scanned for secrets and customer records
    MCP = "mcp"  # an MCP tool call: every string argument scanned
    FETCH = "fetch"  # a web fetch or search: URL and query scanned
    BENIGN = "benign"  # a known tool with no data leaving and no file touched (todo lists, …)
    UNKNOWN = "unknown"  # a tool this adapter does not know: settings.unknown_tool decides


@dataclass(frozen=True, slots=True)
class HookEvent:
    """One hook call, normalised across hosts."""

    host: str
    event: str
    kind: EventKind
    tool: str
    session_id: str | None = None
    cwd: str | None = None
    command: str | None = None
    paths: tuple[str, ...] = ()  # absolute, normalised
    texts: tuple[tuple[str, str], ...] = ()  # (where, text) to scan
    urls: tuple[str, ...] = ()
    globs: tuple[str, ...] = ()  # file-name globs a search tool reads through (``*.env``)


# --- helpers -------------------------------------------------------------------------------


def _obj(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise MalformedInput(f"{where} is not an object")
    return value


def _str(obj: Mapping[str, Any], key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise MalformedInput(f"{where}.{key} is missing or not a string")
    return value


def _opt_str(obj: Mapping[str, Any], key: str) -> str | None:
    value = obj.get(key)
    return value if isinstance(value, str) and value else None


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


_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.M)


def patch_paths(text: str) -> list[str]:
    """Files named by a Codex ``apply_patch`` envelope (add, update, delete, move)."""
    return [(m.group(1) or m.group(2)).strip() for m in _PATCH_FILE.finditer(text)]


def _paths_from(args: Mapping[str, Any], keys: tuple[str, ...], cwd: str | None) -> tuple[str, ...]:
    found: list[str] = []
    for key in keys:
        value = args.get(key)
        items = value if isinstance(value, list) else [value]
        found.extend(absolute(v, cwd) for v in items if isinstance(v, str) and v)
    return tuple(found)


_URL = re.compile(r"https?://[^\s\"'<>]+")


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """How to read one host tool's arguments."""

    kind: EventKind
    command: str | None = None  # argument holding the shell command
    paths: tuple[str, ...] = ()  # arguments holding file paths
    texts: tuple[str, ...] = ()  # arguments to scan (all string leaves when kind is MCP)
    urls: tuple[str, ...] = ()  # arguments holding URLs
    required: bool = False  # the tool cannot run without one of ``paths``: none ⇒ malformed
    globs: tuple[str, ...] = ()  # arguments holding file-name globs (search tools)


_READ_PATHS = ("file_path", "path", "absolute_path", "notebook_path", "dir_path", "paths")
_B = ToolSpec(EventKind.BENIGN)

CLAUDE_TOOLS: dict[str, ToolSpec] = {
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
    "Task": _B,
    "Agent": _B,
    "TodoWrite": _B,
    "ExitPlanMode": _B,
    "BashOutput": _B,
    "KillShell": _B,
    "KillBash": _B,
}

CODEX_TOOLS: dict[str, ToolSpec] = {
    "Bash": ToolSpec(EventKind.SHELL, command="command"),
    "apply_patch": ToolSpec(EventKind.WRITE),  # paths come from the patch text
}

GEMINI_TOOLS: dict[str, ToolSpec] = {
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
    "write_todos": _B,
}

CURSOR_TOOLS: dict[str, ToolSpec] = {  # the generic preToolUse event
    "Shell": ToolSpec(EventKind.SHELL, command="command"),
    "Read": ToolSpec(EventKind.READ, paths=_READ_PATHS, required=True),
    "Grep": ToolSpec(EventKind.READ, paths=_READ_PATHS, globs=("glob", "pattern")),
    "Glob": ToolSpec(EventKind.READ, paths=_READ_PATHS, globs=("glob", "pattern")),
    "Write": ToolSpec(EventKind.WRITE, paths=_READ_PATHS, required=True),
    "Edit": ToolSpec(EventKind.WRITE, paths=_READ_PATHS, required=True),
    "Delete": ToolSpec(EventKind.WRITE, paths=_READ_PATHS, required=True),
}

COPILOT_TOOLS: dict[str, ToolSpec] = {
    "bash": ToolSpec(EventKind.SHELL, command="command"),
    "view": ToolSpec(EventKind.READ, paths=("path",), required=True),
    "edit": ToolSpec(EventKind.WRITE, paths=("path",), required=True),
    "create": ToolSpec(EventKind.WRITE, paths=("path",), required=True),
}

CLINE_TOOLS: dict[str, ToolSpec] = {
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
    "ask_followup_question": _B,
    "attempt_completion": _B,
    "plan_mode_respond": _B,
    "new_task": _B,
    "load_mcp_documentation": _B,
}


@dataclass(frozen=True, slots=True)
class _Base:
    """The fields every event of one call shares."""

    host: str
    event: str
    session_id: str | None
    cwd: str | None

    def make(self, kind: EventKind, tool: str, **fields: Any) -> HookEvent:
        return HookEvent(
            host=self.host,
            event=self.event,
            kind=kind,
            tool=tool,
            session_id=self.session_id,
            cwd=self.cwd,
            **fields,
        )


def _tool_event(
    host: str,
    event: str,
    tool: str,
    args: Mapping[str, Any],
    table: Mapping[str, ToolSpec],
    *,
    session_id: str | None,
    cwd: str | None,
) -> HookEvent:
    """A tool call judged by its spec; MCP names (``mcp__server__tool``) are always MCP."""
    spec = table.get(tool)
    if spec is None and tool.startswith("mcp__"):
        spec = ToolSpec(EventKind.MCP)
    base = _Base(host, event, session_id, cwd)
    if spec is None:
        return base.make(EventKind.UNKNOWN, tool)
    if spec.kind is EventKind.SHELL:
        command = args.get(spec.command or "command")
        if not isinstance(command, str):
            raise MalformedInput(f"{tool} call without a command string")
        run_cwd = _opt_str(args, "dir_path")
        if run_cwd:
            base = _Base(host, event, session_id, absolute(run_cwd, cwd))
        return base.make(spec.kind, tool, command=command)
    paths = _paths_from(args, spec.paths, cwd)
    if host == "codex" and tool == "apply_patch":
        text = "\n".join(v for _, v in string_leaves(dict(args), "input"))
        paths = tuple(absolute(p, cwd) for p in patch_paths(text))
        if not paths:
            raise MalformedInput("apply_patch without a file header")
    elif spec.required and not paths:
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
    return base.make(spec.kind, tool, paths=paths, texts=texts, urls=urls, globs=tuple(globs))


def _prompt_event(
    host: str, event: str, prompt: str, *, session_id: str | None, cwd: str | None
) -> HookEvent:
    return HookEvent(
        host=host,
        event=event,
        kind=EventKind.PROMPT,
        tool="prompt",
        session_id=session_id,
        cwd=cwd,
        texts=(("prompt", prompt),),
    )


def _tool_input(payload: Mapping[str, Any], key: str = "tool_input") -> dict[str, Any]:
    value = payload.get(key)
    if isinstance(value, str):
        # Some hosts (Cursor's MCP hook, Copilot's toolArgs) pass arguments as a JSON string.
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise MalformedInput(f"{key} is a string but not JSON") from exc
    return _obj(value, key)


# --- one adapter per host ------------------------------------------------------------------


def _claude_like(host: str, payload: dict[str, Any], table: Mapping[str, ToolSpec]) -> HookEvent:
    event = _str(payload, "hook_event_name", "input")
    session = _opt_str(payload, "session_id")
    cwd = _opt_str(payload, "cwd")
    if event == "PreToolUse":
        tool = _str(payload, "tool_name", "input")
        args = _tool_input(payload)
        return _tool_event(host, event, tool, args, table, session_id=session, cwd=cwd)
    if event == "UserPromptSubmit":
        prompt = _str(payload, "prompt", "input")
        return _prompt_event(host, event, prompt, session_id=session, cwd=cwd)
    raise UnknownEvent(event)


def adapt_claude_code(payload: dict[str, Any]) -> HookEvent:
    return _claude_like("claude-code", payload, CLAUDE_TOOLS)


def adapt_codex(payload: dict[str, Any]) -> HookEvent:
    return _claude_like("codex", payload, CODEX_TOOLS)


def adapt_gemini(payload: dict[str, Any]) -> HookEvent:
    event = _str(payload, "hook_event_name", "input")
    session = _opt_str(payload, "session_id")
    cwd = _opt_str(payload, "cwd")
    if event == "BeforeTool":
        tool = _str(payload, "tool_name", "input")
        args = _tool_input(payload)
        return _tool_event("gemini", event, tool, args, GEMINI_TOOLS, session_id=session, cwd=cwd)
    if event == "BeforeAgent":
        prompt = _str(payload, "prompt", "input")
        return _prompt_event("gemini", event, prompt, session_id=session, cwd=cwd)
    raise UnknownEvent(event)


def adapt_cursor(payload: dict[str, Any]) -> HookEvent:
    event = _str(payload, "hook_event_name", "input")
    session = _opt_str(payload, "conversation_id")
    roots = payload.get("workspace_roots")
    root = roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else None
    cwd = _opt_str(payload, "cwd") or root
    base = _Base("cursor", event, session, cwd)
    if event == "beforeShellExecution":
        command = _str(payload, "command", "input")
        return base.make(EventKind.SHELL, "Shell", command=command)
    if event == "beforeReadFile":
        path = absolute(_str(payload, "file_path", "input"), cwd)
        content = _opt_str(payload, "content")
        texts: tuple[tuple[str, str], ...] = (("content", content),) if content else ()
        return base.make(EventKind.READ, "Read", paths=(path,), texts=texts)
    if event == "beforeSubmitPrompt":
        prompt = _str(payload, "prompt", "input")
        return _prompt_event("cursor", event, prompt, session_id=session, cwd=cwd)
    if event == "beforeMCPExecution":
        tool = _str(payload, "tool_name", "input")
        args = _tool_input(payload)
        texts = tuple(string_leaves(args, "tool_input", json_strings=True))
        url = _opt_str(payload, "url")
        return base.make(EventKind.MCP, f"mcp:{tool}", texts=texts, urls=(url,) if url else ())
    if event == "preToolUse":
        tool = _str(payload, "tool_name", "input")
        args = _tool_input(payload)
        return _tool_event("cursor", event, tool, args, CURSOR_TOOLS, session_id=session, cwd=cwd)
    raise UnknownEvent(event)


def adapt_copilot(payload: dict[str, Any]) -> HookEvent:
    cwd = _opt_str(payload, "cwd")
    if "toolName" in payload:
        tool = _str(payload, "toolName", "input")
        raw_args = payload.get("toolArgs")
        if isinstance(raw_args, str):
            args = _tool_input(payload, "toolArgs")
        elif raw_args is None:
            args = {}
        else:
            args = _obj(raw_args, "toolArgs")  # the Copilot SDK passes an object
        return _tool_event(
            "copilot", "preToolUse", tool, args, COPILOT_TOOLS, session_id=None, cwd=cwd
        )
    if "prompt" in payload:
        prompt = _str(payload, "prompt", "input")
        return _prompt_event("copilot", "userPromptSubmitted", prompt, session_id=None, cwd=cwd)
    raise MalformedInput("neither toolName nor prompt in input")


def adapt_windsurf(payload: dict[str, Any]) -> HookEvent:
    event = _str(payload, "agent_action_name", "input")
    info = _obj(payload.get("tool_info"), "tool_info")
    session = _opt_str(payload, "trajectory_id")
    cwd = _opt_str(info, "cwd")
    base = _Base("windsurf", event, session, cwd)
    if event == "pre_run_command":
        command = _str(info, "command_line", "tool_info")
        return base.make(EventKind.SHELL, "run_command", command=command)
    if event == "pre_read_code":
        path = absolute(_str(info, "file_path", "tool_info"), cwd)
        return base.make(EventKind.READ, "read_code", paths=(path,))
    if event == "pre_write_code":
        path = absolute(_str(info, "file_path", "tool_info"), cwd)
        return base.make(EventKind.WRITE, "write_code", paths=(path,))
    if event == "pre_mcp_tool_use":
        server = _opt_str(info, "mcp_server_name") or "?"
        tool = _opt_str(info, "mcp_tool_name") or "?"
        texts = tuple(
            string_leaves(info.get("mcp_tool_arguments"), "mcp_tool_arguments", json_strings=True)
        )
        return base.make(EventKind.MCP, f"mcp:{server}/{tool}", texts=texts)
    if event == "pre_user_prompt":
        prompt = _str(info, "user_prompt", "tool_info")
        return _prompt_event("windsurf", event, prompt, session_id=session, cwd=cwd)
    raise UnknownEvent(event)


def adapt_cline(payload: dict[str, Any]) -> HookEvent:
    event = _str(payload, "hookName", "input")
    session = _opt_str(payload, "taskId")
    roots = payload.get("workspaceRoots")
    cwd = roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else None
    if event == "PreToolUse":
        body = _obj(payload.get("preToolUse"), "preToolUse")
        tool = _str(body, "toolName", "preToolUse")
        params = body.get("parameters", {})
        args = _obj(params, "preToolUse.parameters")
        return _tool_event("cline", event, tool, args, CLINE_TOOLS, session_id=session, cwd=cwd)
    if event == "UserPromptSubmit":
        body = _obj(payload.get("userPromptSubmit"), "userPromptSubmit")
        prompt = _str(body, "prompt", "userPromptSubmit")
        return _prompt_event("cline", event, prompt, session_id=session, cwd=cwd)
    raise UnknownEvent(event)


ADAPTERS = {
    "claude-code": adapt_claude_code,
    "codex": adapt_codex,
    "gemini": adapt_gemini,
    "cursor": adapt_cursor,
    "copilot": adapt_copilot,
    "windsurf": adapt_windsurf,
    "cline": adapt_cline,
}


def parse_event(host: str, raw: bytes) -> HookEvent:
    """Decode ``raw`` and adapt it; raises MalformedInput / UnknownEvent / KeyError (host)."""
    adapter = ADAPTERS[host]
    try:
        payload = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise MalformedInput("input is not JSON") from exc
    return adapter(_obj(payload, "input"))
