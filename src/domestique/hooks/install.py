"""``domestique install HOST`` / ``domestique uninstall HOST``: the hook in each host's settings.

Writes the user-level settings file by default (``--project`` for the repository's), keeps every
other setting as it was, never adds a second copy of the hook (an install replaces its own
entries), copies the file to ``$DOMESTIQUE_HOME/backups/`` before changing it, and with
``--dry-run`` prints the diff and writes nothing. Where the host has a fail-closed switch it is
set (Claude Code ``onFailure: "block"``, Cursor ``failClosed: true``), and every entry has a
timeout. A file that does not parse is never overwritten.

The hook command is ``'<this python>' -m domestique.hooks.entry HOST``: the interpreter that has
Domestique installed, without the console-script wrapper (which costs an ``import re``).
Uninstall removes exactly Domestique's entries; when nothing else changed since the install, the
backup is restored byte for byte.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from domestique.hooks.entry import HOSTS

MARK = "domestique.hooks.entry"  # how an entry is recognised as Domestique's
TIMEOUT_S = 10
CLINE_MARK = "# domestique hook (installed by `domestique install cline`)"


class InstallError(Exception):
    """The settings file cannot be changed safely (unparsable, not ours, …)."""


# What the host runs: the entry point through ``python -c`` (no runpy, no console-script
# wrapper), and a deny in every host's protocol when Domestique itself cannot be imported.
ENTRY_SHIM = f"""import sys
try:
    from {MARK} import main
except BaseException:
    r = "Domestique denied this (hook.import_failed): Domestique cannot be imported; run domestique doctor"
    print('{{"permissionDecision":"deny","permissionDecisionReason":"%s","decision":"deny","reason":"%s","permission":"deny","cancel":true,"errorMessage":"%s"}}' % (r, r, r))
    sys.stderr.write(r + "\\n")
    sys.exit(0 if sys.argv[1:] == ["copilot"] else 2)
main()"""  # noqa: E501 - a script, kept on the lines Python needs


# ``-P`` (Python 3.11+): do not put the current directory on ``sys.path``. Hosts run hooks in the
# project folder, which the agent (or a cloned repository) controls: without it a ``domestique/``
# package in the project would be imported instead of ours and could answer "allow" to all.
SAFE_PATH_FLAG = "-P"


def hook_command(host: str, python: str | None = None) -> str:
    """The shell command a host runs for the hook."""
    interpreter = shlex.quote(python or sys.executable)
    return f"{interpreter} {SAFE_PATH_FLAG} -c {shlex.quote(ENTRY_SHIM)} {host}"


def project_root(start: Path | None = None) -> Path:
    """The repository that contains ``start`` (nearest ``.git``), else ``start`` itself."""
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / ".git").exists():
            return d
    return here


@dataclass(frozen=True, slots=True)
class HostSettings:
    """Where a host keeps its hooks and how Domestique's entries look there."""

    host: str
    user_file: Callable[[Path], Path]  # home directory → settings file
    project_file: Callable[[Path], Path]  # repository root → settings file
    build: Callable[[str], dict[str, list[dict[str, Any]]]]  # command → {event: entries}
    grouped: bool  # entries are matcher groups with an inner "hooks" list (Claude style)
    fail_closed: str  # how a crash or timeout of the hook ends on this host (for doctor)


def _claude_entries(command: str) -> dict[str, list[dict[str, Any]]]:
    handler = {"type": "command", "command": command, "timeout": TIMEOUT_S, "onFailure": "block"}
    return {
        "PreToolUse": [{"matcher": "*", "hooks": [dict(handler)]}],
        "UserPromptSubmit": [{"hooks": [dict(handler)]}],
    }


def _codex_entries(command: str) -> dict[str, list[dict[str, Any]]]:
    handler = {"type": "command", "command": command, "timeout": TIMEOUT_S}
    return {
        "PreToolUse": [{"hooks": [dict(handler)]}],
        "UserPromptSubmit": [{"hooks": [dict(handler)]}],
    }


def _gemini_entries(command: str) -> dict[str, list[dict[str, Any]]]:
    handler = {"type": "command", "command": command, "name": "domestique", "timeout": 10_000}
    return {
        "BeforeTool": [{"matcher": ".*", "hooks": [dict(handler)]}],
        "BeforeAgent": [{"hooks": [dict(handler)]}],
    }


def _cursor_entries(command: str) -> dict[str, list[dict[str, Any]]]:
    handler = {"command": command, "timeout": TIMEOUT_S, "failClosed": True}
    events = ("beforeShellExecution", "beforeReadFile", "beforeSubmitPrompt", "beforeMCPExecution")
    return {e: [dict(handler)] for e in events}


def _copilot_entries(command: str) -> dict[str, list[dict[str, Any]]]:
    handler = {"type": "command", "bash": command, "timeoutSec": TIMEOUT_S}
    return {"preToolUse": [dict(handler)], "userPromptSubmitted": [dict(handler)]}


def _windsurf_entries(command: str) -> dict[str, list[dict[str, Any]]]:
    handler = {"command": command, "show_output": True}
    events = ("pre_run_command", "pre_read_code", "pre_write_code", "pre_mcp_tool_use")
    return {e: [dict(handler)] for e in (*events, "pre_user_prompt")}


CLINE_EVENTS = ("PreToolUse", "UserPromptSubmit")

SETTINGS: dict[str, HostSettings] = {
    "claude-code": HostSettings(
        "claude-code",
        lambda h: h / ".claude" / "settings.json",
        lambda r: r / ".claude" / "settings.json",
        _claude_entries,
        grouped=True,
        fail_closed='onFailure: "block" (Claude Code 2.1.295+); older versions fail open',
    ),
    "codex": HostSettings(
        "codex",
        lambda h: h / ".codex" / "hooks.json",
        lambda r: r / ".codex" / "hooks.json",
        _codex_entries,
        grouped=True,
        fail_closed="no switch: a crashed or timed-out hook does not block",
    ),
    "gemini": HostSettings(
        "gemini",
        lambda h: h / ".gemini" / "settings.json",
        lambda r: r / ".gemini" / "settings.json",
        _gemini_entries,
        grouped=True,
        fail_closed="no switch: exit codes other than 2 only warn",
    ),
    "cursor": HostSettings(
        "cursor",
        lambda h: h / ".cursor" / "hooks.json",
        lambda r: r / ".cursor" / "hooks.json",
        _cursor_entries,
        grouped=False,
        fail_closed="failClosed: true",
    ),
    "copilot": HostSettings(
        "copilot",
        lambda h: h / ".copilot" / "hooks" / "domestique.json",
        lambda r: r / ".github" / "hooks" / "domestique.json",
        _copilot_entries,
        grouped=False,
        fail_closed="no switch: only a JSON deny blocks",
    ),
    "windsurf": HostSettings(
        "windsurf",
        lambda h: h / ".codeium" / "windsurf" / "hooks.json",
        lambda r: r / ".windsurf" / "hooks.json",
        _windsurf_entries,
        grouped=False,
        fail_closed="no switch: only exit code 2 blocks",
    ),
    "cline": HostSettings(
        "cline",
        lambda h: h / "Documents" / "Cline" / "Rules" / "Hooks",
        lambda r: r / ".clinerules" / "hooks",
        lambda c: {},
        grouped=False,
        fail_closed="built in: a non-zero exit, invalid JSON or a timeout blocks",
    ),
}


# --- JSON documents -----------------------------------------------------------------------


def _is_ours(value: object) -> bool:
    if isinstance(value, str):
        return MARK in value
    if isinstance(value, dict):
        return any(_is_ours(v) for v in value.values())
    if isinstance(value, list):
        return any(_is_ours(v) for v in value)
    return False


def remove_entries(doc: dict[str, Any], grouped: bool) -> dict[str, Any]:
    """``doc`` without Domestique's hook entries; other entries and keys untouched."""
    hooks = doc.get("hooks")
    if not isinstance(hooks, dict):
        return doc
    new_hooks: dict[str, Any] = {}
    for event, entries in hooks.items():
        if not isinstance(entries, list):
            new_hooks[event] = entries
            continue
        kept: list[Any] = []
        for entry in entries:
            if grouped and isinstance(entry, dict) and isinstance(entry.get("hooks"), list):
                inner = [h for h in entry["hooks"] if not _is_ours(h)]
                if len(inner) == len(entry["hooks"]):
                    kept.append(entry)
                elif inner:
                    kept.append({**entry, "hooks": inner})
            elif not _is_ours(entry):
                kept.append(entry)
        if kept or not entries:
            new_hooks[event] = kept
    out = dict(doc)
    if new_hooks or not hooks:
        out["hooks"] = new_hooks
    else:
        del out["hooks"]
    return out


def add_entries(doc: dict[str, Any], settings: HostSettings, command: str) -> dict[str, Any]:
    """``doc`` with exactly one copy of Domestique's entries (any older copy replaced)."""
    out = remove_entries(doc, settings.grouped)
    hooks = out.get("hooks")
    if hooks is None:
        hooks = {}
    if not isinstance(hooks, dict):
        raise InstallError("'hooks' is not an object")
    hooks = dict(hooks)
    for event, entries in settings.build(command).items():
        current = hooks.get(event, [])
        if not isinstance(current, list):
            raise InstallError(f"hooks.{event} is not a list")
        hooks[event] = [*current, *entries]
    out["hooks"] = hooks
    if settings.host in ("cursor", "copilot"):
        out.setdefault("version", 1)
    if settings.host == "gemini":
        tools = out.get("tools", {})
        if not isinstance(tools, dict):
            raise InstallError("'tools' is not an object")
        out["tools"] = {**tools, "enableHooks": True}
    return out


def render_json(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _read_doc(path: Path) -> tuple[str | None, dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, {}
    if not text.strip():
        return text, {}
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InstallError(f"{path} is not valid JSON ({exc.msg}); left unchanged") from exc
    if not isinstance(doc, dict):
        raise InstallError(f"{path} does not hold a JSON object; left unchanged")
    return text, doc


# --- file operations ----------------------------------------------------------------------


def backup_dir(host: str) -> Path:
    from domestique.keys import domestique_home

    return domestique_home() / "backups" / host


def _backup(host: str, path: Path, text: str | None) -> Path | None:
    if text is None:
        return None
    from domestique.keys import ensure_private_dir

    directory = ensure_private_dir(backup_dir(host))
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + f"-{time.time_ns() % 10**9:09d}"
    dest = directory / f"{stamp}-{path.name}"
    dest.write_text(text, encoding="utf-8")
    (directory / f"{path.name}.latest").write_text(str(dest), encoding="utf-8")
    return dest


def _write_atomic(path: Path, text: str, mode: int | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.domestique-tmp")
    tmp.write_text(text, encoding="utf-8")
    if mode is not None:
        os.chmod(tmp, mode)
    os.replace(tmp, path)


def _diff(path: Path, old: str | None, new: str | None) -> str:
    return "".join(
        difflib.unified_diff(
            (old or "").splitlines(keepends=True),
            (new or "").splitlines(keepends=True),
            fromfile=f"{path} (before)" if old is not None else "/dev/null",
            tofile=f"{path} (after)" if new is not None else "/dev/null",
        )
    )


@dataclass(frozen=True, slots=True)
class Change:
    """One file the command changes (or would change, with ``--dry-run``)."""

    path: Path
    old: str | None
    new: str | None  # None: the file is removed

    @property
    def changed(self) -> bool:
        return self.old != self.new


def plan_json(host: str, path: Path, command: str, *, install: bool) -> Change:
    settings = SETTINGS[host]
    old, doc = _read_doc(path)
    if install:
        return Change(path, old, render_json(add_entries(doc, settings, command)))
    if old is None or not _is_ours(doc):
        return Change(path, old, old)
    stripped = remove_entries(doc, settings.grouped)
    # Nothing else changed since the install: put the original bytes back.
    latest = backup_dir(host) / f"{path.name}.latest"
    try:
        backup_text = Path(latest.read_text(encoding="utf-8")).read_text(encoding="utf-8")
        if _comparable(host, json.loads(backup_text)) == _comparable(host, stripped):
            return Change(path, old, backup_text)
    except (OSError, ValueError):
        pass
    if (
        not stripped
        or stripped == {"hooks": {}}
        or (host in ("cursor", "copilot") and _only_version(stripped))
    ):
        return Change(path, old, None)
    return Change(path, old, render_json(stripped))


def _comparable(host: str, doc: Any) -> Any:
    """``doc`` without what install adds besides hook entries: an empty ``hooks`` object, and
    Gemini's ``tools.enableHooks``."""
    if not isinstance(doc, dict):
        return doc
    out = {k: v for k, v in doc.items() if k != "hooks" or v}
    if host == "gemini" and isinstance(out.get("tools"), dict):
        tools = {k: v for k, v in out["tools"].items() if k != "enableHooks"}
        out = {k: v for k, v in {**out, "tools": tools}.items() if k != "tools" or tools}
    return out


def _only_version(doc: dict[str, Any]) -> bool:
    return set(doc) <= {"version", "hooks"} and not doc.get("hooks")


def plan_cline(directory: Path, command: str, *, install: bool) -> list[Change]:
    changes = []
    script = f"#!/bin/sh\n{CLINE_MARK}\nexec {command}\n"
    for name in CLINE_EVENTS:
        path = directory / name
        try:
            old: str | None = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            old = None
        except UnicodeDecodeError as exc:
            raise InstallError(f"{path} exists and is not Domestique's; left unchanged") from exc
        if old is not None and CLINE_MARK not in old:
            raise InstallError(
                f"{path} exists and is not Domestique's: Cline runs one hook per name; "
                "merge it by hand (call the Domestique hook from it) and re-run"
            )
        changes.append(Change(path, old, script if install else None))
    return changes


def apply(host: str, change: Change) -> Path | None:
    """Make one change, backing the file up first; returns the backup's path."""
    if not change.changed:
        return None
    saved = _backup(host, change.path, change.old)
    if change.new is None:
        change.path.unlink(missing_ok=True)
    else:
        executable = host == "cline"
        mode = 0o755 if executable else None
        if not executable and change.path.exists():
            mode = change.path.stat().st_mode & 0o777
        _write_atomic(change.path, change.new, mode)
    return saved


def target(host: str, *, project: bool) -> Path:
    settings = SETTINGS[host]
    return settings.project_file(project_root()) if project else settings.user_file(Path.home())


def plan(host: str, *, project: bool, install: bool, python: str | None = None) -> list[Change]:
    command = hook_command(host, python)
    path = target(host, project=project)
    if host == "cline":
        return plan_cline(path, command, install=install)
    return [plan_json(host, path, command, install=install)]


def run(argv: list[str]) -> int:
    """``install HOST [--project] [--dry-run]`` or ``uninstall HOST [...]``; exit 2 on error."""
    verb = argv[0] if argv else "install"
    parser = argparse.ArgumentParser(
        prog=f"domestique {verb}",
        description=f"{verb} the Domestique hook in an agent host's settings",
    )
    parser.add_argument("host", choices=HOSTS)
    parser.add_argument(
        "--project", action="store_true", help="the repository's settings, not the user's"
    )
    parser.add_argument("--dry-run", action="store_true", help="print the change, write nothing")
    parser.add_argument("--python", help="interpreter for the hook (default: this one)")
    args = parser.parse_args(argv[1:])
    install = verb == "install"
    try:
        changes = plan(args.host, project=args.project, install=install, python=args.python)
        for change in changes:
            if not change.changed:
                sys.stdout.write(f"{change.path}: already {'installed' if install else 'clean'}\n")
                continue
            if args.dry_run:
                sys.stdout.write(_diff(change.path, change.old, change.new))
                continue
            saved = apply(args.host, change)
            note = f" (backup: {saved})" if saved else ""
            sys.stdout.write(f"{change.path}: {'installed' if install else 'removed'}{note}\n")
    except (InstallError, OSError) as exc:
        sys.stderr.write(f"domestique {verb}: {exc}\n")
        return 2
    return 0
