"""The hook vocabulary every other hook module shares: stdlib only, imports no hook module.

- :class:`HookEvent` (with :class:`EventKind` and :class:`ToolSpec`): one hook call, normalised
  across hosts; the host modules (:mod:`domestique.hooks.hosts`) build it, the assessment
  (:mod:`domestique.hooks.assess`) judges it.
- :class:`Host`: everything Domestique knows about one agent host (parse, render, install
  settings, self-protection globs, doctor's probe), one instance per module in
  :mod:`domestique.hooks.hosts`.
- :data:`Reply`: the bytes and exit code a hook answers with.

Keeping these here, apart from both the process entry and the decision, is what lets the entry
stay stdlib-only and the decision import the rendering without an import cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import StrEnum

from domestique.frozen_class import dataclass, field

TYPE_CHECKING = False  # not typing's: a hook deciding in-process does not load typing
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    Entries = dict[str, list[dict[str, Any]]]  # settings event name → Domestique's entries

Reply = tuple[bytes, bytes, int]  # stdout, stderr, exit code
TIMEOUT_S = 10  # seconds: the timeout every installed hook entry has


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


@dataclass(frozen=True, slots=True)
class Setting:
    """One value the installer sets in a host's settings file (and puts back on uninstall)."""

    path: tuple[str, ...]
    value: Any
    only_if_absent: bool = False  # a default the file may already define its own way


@dataclass(frozen=True, slots=True)
class Settings:
    """Where a host keeps its hooks and how Domestique's entries look there."""

    user_file: Callable[[Path], Path]  # home directory → settings file (or folder: scripts)
    project_file: Callable[[Path], Path]  # repository root → settings file (or folder)
    entries: Callable[[str], Entries]  # hook command → {event: entries}
    fail_closed: str  # how a crash or timeout of the hook ends on this host (for doctor)
    grouped: bool = False  # entries are matcher groups with an inner "hooks" list (Claude style)
    # "json": entries in a JSON settings file; "scripts": one executable per event in a folder.
    layout: str = "json"
    script_events: tuple[str, ...] = ()  # the scripts' names ("scripts" layout)
    base: tuple[Setting, ...] = ()  # what the host needs besides the entries for hooks to run
    # How an entry whose command cannot start blocks where the host would run the tool anyway.
    missing_fallback: str | None = None
    # The entry's own fail-closed switch, for doctor (None: the host has none).
    switch_on: Callable[[Mapping[str, Any]], bool] | None = None
    builtin_fail_closed: bool = False  # the host blocks by itself when its hook fails
    # ``--proxy BASE``: per file kind ("hooks" = the hooks file, "config", "env") what to set so
    # the host's model traffic, and nothing else, goes to the firewall; None: not possible.
    proxy: Callable[[str], dict[str, list[Setting]]] | None = None


def never(event: str) -> bool:
    """For :attr:`Host.can_ask` of a host with no "ask the person" answer."""
    del event
    return False


@dataclass(frozen=True, slots=True)
class Host:
    """One agent host: its hook protocol, its settings and what doctor probes it with."""

    name: str  # as on the command line: ``domestique hook NAME``
    parse: Callable[[dict[str, Any]], HookEvent]  # raises MalformedInput / UnknownEvent
    # ``render(event, action, message)`` → (stdout, exit code) for allow | ask | deny, where ask
    # reaches it only when :attr:`can_ask` said so.
    render: Callable[[str, str, str], tuple[bytes, int]]
    event_name: Callable[[object], str]  # the event name in a payload ('' when unknown)
    settings: Settings
    self_protect: tuple[str, ...]  # globs of the files that hold this host's hooks
    dirs: tuple[str, ...]  # per-user state folders under HOME (doctor: is the host here?)
    commands: tuple[str, ...]  # commands that start the host (doctor: is the host here?)
    probe: Callable[[str, str], dict[str, Any]]  # (shell command, cwd) → a shell-hook payload
    stops: Callable[[bytes, int], bool]  # (stdout, exit code) → does the host stop the call?
    exit2_blocks: bool = True  # the host blocks on exit code 2 (a fail-closed reply adds it)
    can_ask: Callable[[str], bool] = never  # the event has a working "ask the person" answer
    # Events whose answer the host does not act on (a deny there is recorded, not enforced),
    # each with the sentence doctor and explain show.
    unenforced: Mapping[str, str] = field(default_factory=dict)


def dumps(obj: object) -> bytes:
    """Compact JSON and a newline, as every host reads it."""
    import json

    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
