"""Codex CLI: Claude Code's payload and reply shape (PreToolUse / UserPromptSubmit) with its own
tools, ``apply_patch`` naming its files in the patch text. No ask: Codex parses
``permissionDecision: "ask"`` (and "allow") as unsupported, marks the hook failed and runs the
tool call (openai/codex #28437, #21753), so an ask is a deny and an allow silence. No fail-closed
switch: the entry ends with ``|| exit 2``. Hooks run only once trusted in ``config.toml``
(:func:`hook_hash`)."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any

import domestique.hooks.hosts._common as c
from domestique.hooks.hosts.claude_code import (
    probe_claude_like,
    render_claude_like,
    stops_claude_like,
)
from domestique.hooks.protocol import (
    TIMEOUT_S,
    EventKind,
    HookEvent,
    Host,
    MalformedInput,
    Setting,
    Settings,
    ToolSpec,
)

if TYPE_CHECKING:
    from pathlib import Path

TOOLS: dict[str, ToolSpec] = {
    "Bash": ToolSpec(EventKind.SHELL, command="command"),
    "apply_patch": ToolSpec(EventKind.WRITE),  # paths come from the patch text
}

_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.M)


def patch_paths(text: str) -> list[str]:
    """Files named by a Codex ``apply_patch`` envelope (add, update, delete, move)."""
    return [(m.group(1) or m.group(2)).strip() for m in _PATCH_FILE.finditer(text)]


def _paths_of(tool: str, args: dict[str, Any], cwd: str | None) -> tuple[str, ...] | None:
    if tool != "apply_patch":
        return None
    text = "\n".join(v for _, v in c.string_leaves(dict(args), "input"))
    paths = tuple(c.absolute(p, cwd) for p in patch_paths(text))
    if not paths:
        raise MalformedInput("apply_patch without a file header")
    return paths


def parse(payload: dict[str, Any]) -> HookEvent:
    return c.claude_like(HOST.name, payload, TOOLS, paths_of=_paths_of)


def codex_home() -> Path:
    """``$CODEX_HOME``, else ``~/.codex`` (where Codex keeps config.toml and hooks.json)."""
    from pathlib import Path

    value = os.environ.get("CODEX_HOME")
    return Path(value).expanduser() if value else Path.home() / ".codex"


EVENT_LABELS = {"PreToolUse": "pre_tool_use", "UserPromptSubmit": "user_prompt_submit"}
DEFAULT_TIMEOUT_S = 600


def hook_hash(event: str, matcher: str | None, handler: dict[str, Any]) -> str:
    """The ``trusted_hash`` Codex computes for one command handler of ``hooks.json``.

    Codex (0.129+, checked against 0.171.0's own ``hooks/list``) hashes a normalised identity:
    the event's snake_case label, the matcher (none for UserPromptSubmit), and the handler with
    ``timeout`` filled in (600 s by default) and ``async`` as a boolean, unset fields left out;
    then sha256 over the key-sorted, compact JSON.
    """
    import hashlib
    import json

    normal: dict[str, Any] = {
        "type": "command",
        "command": handler.get("command"),
        "timeout": max(1, int(handler.get("timeout", DEFAULT_TIMEOUT_S))),
        "async": bool(handler.get("async", False)),
    }
    if isinstance(handler.get("statusMessage"), str):
        normal["statusMessage"] = handler["statusMessage"]
    identity: dict[str, Any] = {"event_name": EVENT_LABELS[event], "hooks": [normal]}
    if matcher is not None and event != "UserPromptSubmit":
        identity["matcher"] = matcher
    blob = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _entries(command: str) -> dict[str, list[dict[str, Any]]]:
    handler = {"type": "command", "command": command, "timeout": TIMEOUT_S}
    return {
        "PreToolUse": [{"hooks": [dict(handler)]}],
        "UserPromptSubmit": [{"hooks": [dict(handler)]}],
    }


PROVIDER = "domestique"
# Codex features that reach hosts other than the model provider (plugin and app catalogues,
# connectors, update checks): off, so all of an agent's traffic takes the firewall's path.
FEATURES_OFF = ("plugins", "remote_plugin", "plugin_sharing", "apps", "in_app_updates")


def _proxy(base: str) -> dict[str, list[Setting]]:
    provider = ("model_providers", PROVIDER)
    return {
        "config": [
            Setting(("model_provider",), PROVIDER),
            Setting((*provider, "name"), "Domestique firewall"),
            Setting((*provider, "base_url"), base + "/v1"),
            Setting((*provider, "env_key"), "OPENAI_API_KEY"),
            Setting((*provider, "wire_api"), "responses"),
            # Otherwise each session first tries WebSockets the firewall refuses (~6 s).
            Setting((*provider, "supports_websockets"), False),
            *(Setting(("features", f), False) for f in FEATURES_OFF),
            Setting(("check_for_update_on_startup",), False),
            Setting(("analytics", "enabled"), False),
            Setting(("feedback", "enabled"), False),
        ]
    }


HOST = Host(
    name="codex",
    parse=parse,
    render=render_claude_like,
    event_name=c.event_name,
    settings=Settings(
        user_file=lambda home: codex_home() / "hooks.json",
        project_file=lambda root: root / ".codex" / "hooks.json",
        entries=_entries,
        grouped=True,
        fail_closed="no switch: a crashed or timed-out hook does not block",
        missing_fallback="exit 2",  # exit 2 blocks; any other failure lets the tool run
        proxy=_proxy,
    ),
    self_protect=("*/.codex/hooks.json", "*/.codex/config.toml", "*/.codex/requirements.toml"),
    dirs=(".codex",),
    commands=("codex",),
    probe=probe_claude_like,
    stops=stops_claude_like,
)
