"""``domestique install HOST`` / ``domestique uninstall HOST``: the hook in each host's settings.

Writes the user-level settings file by default (``--project`` for the repository's), keeps every
other setting as it was, never adds a second copy of the hook (an install replaces its own
entries), copies the file to ``$DOMESTIQUE_HOME/backups/`` before changing it, and with
``--dry-run`` prints the diff and writes nothing. Where the host has a fail-closed switch it is
set (Claude Code ``onFailure: "block"``, Cursor ``failClosed: true``), and every entry has a
timeout. A file that does not parse is never overwritten.

The hook command is ``'<python>' -I -S '<…>/domestique/hooks/client.py' HOST``
(:func:`hook_command`): the interpreter of the environment that has Domestique installed and the
stdlib-only daemon client of that installation, both by absolute path; ``-I`` keeps the project
folder and ``PYTHON*`` variables out. In project settings it is ``domestique hook HOST`` from
``PATH``. Where a host does not block by itself when a hook command cannot start, the entry ends
with a short fallback that blocks (``Settings.missing_fallback``; the per-host behaviour is in
docs/agents.md). ``--python PATH`` must import Domestique, or the install is refused. A re-run
of ``install`` replaces the entries of any earlier version (console script, inline ``python
-c``) with the current command. Uninstall removes exactly Domestique's entries (the older
inline ``python -c`` entries too); when the file is byte for byte what the install wrote, the
backup is restored byte for byte, else only Domestique's entries are taken out (a comment or a
reformatting made since is kept). A settings file that is a symlink stays one: the file it points
to is written.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from domestique.hooks import jsonc, settings_doc
from domestique.hooks.hosts import HOSTS, get
from domestique.hooks.hosts.codex import EVENT_LABELS as CODEX_EVENT_LABELS
from domestique.hooks.hosts.codex import codex_home, hook_hash
from domestique.hooks.protocol import Setting, Settings

MARK = "domestique.hooks.entry"  # how an entry is recognised as Domestique's
HOOK_NAME_MARK = "domestique-hook"  # the launcher's name: also Domestique's


def script_mark(host: str) -> str:
    """The line that marks a hook script (the "scripts" layout, Cline's) as Domestique's."""
    return f"# domestique hook (installed by `domestique install {host}`)"


class InstallError(ValueError):
    """The settings file cannot be changed safely (unparsable, not ours, …)."""


# An entry is Domestique's when it runs ``… domestique/hooks/client.py HOST`` (what install
# writes), ``… domestique hook HOST`` (project settings; user settings of earlier versions) or is
# an older inline entry.
_HOST_NAMES = "|".join(map(re.escape, HOSTS))
_HOOK_RE = re.compile(
    rf"(?:domestique'?\s+hook|domestique[/\\]hooks[/\\]client\.py'?)\s+({_HOST_NAMES})\b"
)


def is_hook_command(text: str) -> bool:
    """True when ``text`` (a settings value) is a Domestique hook command of any version."""
    return MARK in text or HOOK_NAME_MARK in text or _HOOK_RE.search(text) is not None


def hook_client(python: str | None = None) -> tuple[str, str]:
    """(interpreter, client file) of the hook: ``python`` (default: the running one, as
    invoked, so a virtualenv stays one) and the absolute path of its
    :mod:`domestique.hooks.client`. Raises :class:`InstallError` when ``python`` cannot import
    Domestique."""
    if python is None:
        from domestique.hooks import client

        return sys.executable, os.path.abspath(client.__file__)
    probe = "import domestique.hooks.client as c, os; print(os.path.abspath(c.__file__))"
    try:
        done = subprocess.run(
            [python, "-I", "-c", probe], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InstallError(f"--python {python}: cannot run it ({type(exc).__name__})") from None
    found = done.stdout.strip()
    if done.returncode != 0 or not os.path.isabs(found):
        raise InstallError(
            f"--python {python}: this Python cannot import Domestique; install Domestique in it "
            "(pip install domestique) or leave out --python"
        )
    interpreter = python if os.path.isabs(python) else shutil.which(python) or python
    return os.path.abspath(interpreter), found


def hook_command(host: str, python: str | None = None, *, portable: bool = False) -> str:
    """The shell command a host runs for the hook, with the host's fallback that blocks when
    the command cannot start.

    By default ``'<python>' -I -S '<…>/domestique/hooks/client.py' HOST``: the stdlib-only
    client of the hook daemon (:mod:`domestique.hooks.client`), which starts faster than a bare
    ``python -c pass`` and loads the package only when the daemon cannot answer. Both paths are
    absolute and stay valid across upgrades of Domestique in the same environment; a new
    Python version in it moves the file, and the entry then blocks every call until
    ``domestique install`` is run again (``domestique doctor`` says so).

    ``portable`` (project settings, committed to the repository): ``domestique hook HOST``, the
    command found on each developer's ``PATH``, no machine's absolute path; without it the call
    is blocked.
    """
    if portable and python is None:
        command = f"domestique hook {host}"
    else:
        interpreter, client = hook_client(python)
        command = f"{shlex.quote(interpreter)} -I -S {shlex.quote(client)} {host}"
    # Where the host does not block by itself when the command cannot start (Domestique
    # uninstalled, moved), the entry ends with what blocks there (exit 2, or Copilot's JSON deny).
    fallback = get(host).settings.missing_fallback
    return f"{command} || {fallback}" if fallback else command


def in_development_clone(command: str) -> Path | None:
    """The git work tree the hook command points into, if any (it breaks when the clone moves)."""
    try:
        first = Path(shlex.split(command)[0])
    except (ValueError, IndexError):
        return None
    if not first.is_absolute():  # found on PATH at run time: nothing of this machine's
        return None
    for parent in first.parents:
        if (parent / ".git").exists():
            return parent
    return None


def project_root(start: Path | None = None) -> Path:
    """The repository that contains ``start`` (nearest ``.git``), else ``start`` itself."""
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / ".git").exists():
            return d
    return here


def settings_of(host: str) -> Settings:
    """Where ``host`` keeps its hooks and how Domestique's entries look there."""
    return get(host).settings


# --- hook entries in a JSON settings file (edited in place) -----------------------------------


def _is_ours(value: object) -> bool:
    if isinstance(value, str):
        return is_hook_command(value)
    if isinstance(value, dict):
        return any(_is_ours(v) for v in value.values())
    if isinstance(value, list):
        return any(_is_ours(v) for v in value)
    return False


def strip_entries(text: str, grouped: bool) -> str:
    """``text`` without Domestique's hook entries; other entries, keys and bytes untouched.

    An event list (or the ``hooks`` object) that only held Domestique's entries goes with them.
    """
    if not text.strip():
        return text
    doc = jsonc.loads(text)
    hooks = doc.get("hooks") if isinstance(doc, dict) else None
    if not isinstance(hooks, dict):
        return text
    for event in reversed(list(hooks)):
        entries = hooks[event]
        if not isinstance(entries, list) or not _is_ours(entries):
            continue
        removed_all = True
        for i in range(len(entries) - 1, -1, -1):
            entry = entries[i]
            if grouped and isinstance(entry, dict) and isinstance(entry.get("hooks"), list):
                inner = entry["hooks"]
                ours = [j for j, h in enumerate(inner) if _is_ours(h)]
                if len(ours) == len(inner) and ours:
                    text = jsonc.remove_item(text, ("hooks", event), i)
                else:
                    removed_all = False
                    for j in reversed(ours):
                        text = jsonc.remove_item(text, ("hooks", event, i, "hooks"), j)
            elif _is_ours(entry):
                text = jsonc.remove_item(text, ("hooks", event), i)
            else:
                removed_all = False
        if removed_all:
            text = jsonc.remove_member(text, ("hooks", event))
    doc = jsonc.loads(text)
    if isinstance(doc, dict) and doc.get("hooks") == {} and hooks:
        text = jsonc.remove_member(text, ("hooks",))
    return text


def add_entries(text: str, settings: Settings, command: str) -> str:
    """``text`` with exactly one copy of Domestique's entries (any older copy replaced)."""
    text = strip_entries(text, settings.grouped)
    doc = jsonc.loads(text) if text.strip() else {}
    hooks = doc.get("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError("'hooks' is not an object")
    for event, entries in settings.entries(command).items():
        if not isinstance(hooks.get(event, []), list):
            raise InstallError(f"hooks.{event} is not a list")
        for entry in entries:
            text = jsonc.append_item(text or "{}\n", ("hooks", event), entry)
    return text


# --- settings besides the hook entries ----------------------------------------------------


def _manifest_path(host: str, path: Path) -> Path:
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
    return backup_dir(host) / f"{path.name}.{digest}.settings.json"


def _read_manifest(host: str, path: Path) -> list[dict[str, Any]]:
    try:
        value = json.loads(_manifest_path(host, path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [e for e in value if isinstance(e, dict)] if isinstance(value, list) else []


def _apply_settings(
    host: str, path: Path, text: str, settings: list[Setting], *, keep_old: bool = True
) -> tuple[str, list[dict[str, Any]]]:
    """``text`` with ``settings`` made, and the manifest that lets uninstall put back what was
    there (the first install's previous values survive a re-install)."""
    kind = settings_doc.kind_of(path)
    old = {tuple(e.get("path", ())): e for e in _read_manifest(host, path)}
    doc = settings_doc.load(kind, text, path)
    manifest: list[dict[str, Any]] = []
    for s in settings:
        current = settings_doc.get(doc, s.path)
        if s.only_if_absent:
            # A format marker (``version``): written when absent, never taken back while
            # other entries may still need it.
            if current is settings_doc.MISSING:
                text = settings_doc.set_value(kind, text, s.path, s.value)
                doc = settings_doc.load(kind, text, path)
            continue
        entry = old.pop(s.path, None)
        if entry is None:
            missing = settings_doc.first_missing(doc, s.path)
            entry = {
                "path": list(s.path),
                "had": current is not settings_doc.MISSING,
                "previous": None if current is settings_doc.MISSING else current,
                "created": list(missing) if missing and len(missing) < len(s.path) else None,
            }
        entry["value"] = s.value
        manifest.append(entry)
        if current != s.value:
            text = settings_doc.set_value(kind, text, s.path, s.value)
            doc = settings_doc.load(kind, text, path)
    # Values set by an earlier install and not set now: kept (a re-install without --proxy
    # leaves the proxy alone), except trust entries that no longer match an entry of ours.
    stale = [e for p, e in old.items() if p[:2] == ("hooks", "state") or not keep_old]
    text = _restore(kind, path, text, stale)
    manifest = [e for p, e in old.items() if e not in stale] + manifest
    return text, manifest


def _restore(kind: str, path: Path, text: str, entries: list[dict[str, Any]]) -> str:
    """``text`` with each recorded setting put back as it was before install, unless the user
    changed it since (then it stays as they left it)."""
    for entry in reversed(entries):
        p = tuple(entry.get("path", ()))
        if not p:
            continue
        doc = settings_doc.load(kind, text, path)
        if settings_doc.get(doc, p) != entry.get("value"):
            continue
        if entry.get("had"):
            text = settings_doc.set_value(kind, text, p, entry.get("previous"))
            continue
        text = settings_doc.remove(kind, text, p)
        created = entry.get("created")
        if created:
            # Tables created for this value go when nothing else was put in them.
            for n in range(len(p) - 1, len(created) - 1, -1):
                doc = settings_doc.load(kind, text, path)
                if settings_doc.get(doc, p[:n]) == {}:
                    text = settings_doc.remove(kind, text, p[:n])
    return text


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
    (directory / _latest_name(path)).write_text(str(dest), encoding="utf-8")
    return dest


def _latest_name(path: Path) -> str:
    # The hooks file keeps its historical name; other files are told apart by their path.
    if path.name in ("settings.json", "hooks.json", "domestique.json"):
        return f"{path.name}.latest"
    return f"{path.name}.{hashlib.sha256(str(path).encode()).hexdigest()[:12]}.latest"


def _latest_backup(host: str, path: Path) -> str | None:
    try:
        latest = backup_dir(host) / _latest_name(path)
        return Path(latest.read_text(encoding="utf-8")).read_text(encoding="utf-8")
    except OSError:
        return None


def _written_record(host: str, path: Path) -> Path:
    """Where the digest of the bytes Domestique last wrote to ``path`` is kept."""
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
    return backup_dir(host) / f"{path.name}.{digest}.written"


def _unchanged_since_written(host: str, path: Path, text: str) -> bool:
    """``text`` is byte for byte what Domestique last wrote to ``path`` (nobody edited it since).
    No record (an install by an older version) is "changed": uninstall then keeps the file's
    bytes and removes only Domestique's entries, so no later edit can be lost."""
    try:
        recorded = _written_record(host, path).read_text(encoding="utf-8").strip()
    except OSError:
        return False
    return recorded == hashlib.sha256(text.encode("utf-8")).hexdigest()


def _write_atomic(path: Path, text: str, mode: int | None = None) -> None:
    # A settings file that is a symlink (dotfiles kept in a repository) stays one: the file it
    # points to is replaced, never the link.
    if path.is_symlink():
        path = Path(os.path.realpath(path))
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
    manifest: list[dict[str, Any]] | None = None  # settings record to keep ([]: drop it)
    note: str = ""  # something the user must know (printed after the change)

    @property
    def changed(self) -> bool:
        return self.old != self.new


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise InstallError(f"{path} is not UTF-8 text; left unchanged") from exc


def _comparable(doc: Any) -> Any:
    """``doc`` without an empty ``hooks`` object (install may leave one behind)."""
    if not isinstance(doc, dict):
        return doc
    return {k: v for k, v in doc.items() if k != "hooks" or v}


def _empty(doc: dict[str, Any], host: str) -> bool:
    """Nothing left but what the install itself put there (a format marker like ``version``)."""
    rest = _comparable(doc)
    for marker in settings_of(host).base:
        (key, *deeper) = marker.path
        if marker.only_if_absent and not deeper and rest.get(key) == marker.value:
            rest = {k: v for k, v in rest.items() if k != key}
    return not rest


def _finish_uninstall(host: str, path: Path, old: str, text: str) -> str | None:
    """The bytes uninstall leaves: the original file when nothing else changed since install,
    no file when install created it and nothing else is in it, else ``text``. "Nothing else
    changed" is byte for byte (a comment or a reformatting after install is a change, kept)."""
    if not _unchanged_since_written(host, path, old):
        return text
    kind = settings_doc.kind_of(path)
    doc = settings_doc.load(kind, text, path)
    backup = _latest_backup(host, path)
    if backup is not None:
        try:
            if _comparable(settings_doc.load(kind, backup, path)) == _comparable(doc):
                return backup
        except settings_doc.SettingsError:
            pass
    elif _empty(doc, host):
        return None
    return text


def plan_settings_file(
    host: str, path: Path, settings: list[Setting], *, install: bool, note: str = ""
) -> Change:
    """The change to a file that holds only settings (Codex's config.toml, Gemini's .env)."""
    old = _read_text(path)
    text = old or ""
    if install:
        new, manifest = _apply_settings(host, path, text, settings)
        return Change(path, old, new, manifest, note)
    if old is None:
        return Change(path, old, old, [])
    text = _restore(settings_doc.kind_of(path), path, text, _read_manifest(host, path))
    if text == old:
        return Change(path, old, old, [])
    return Change(path, old, _finish_uninstall(host, path, old, text), [])


def plan_json(
    host: str, path: Path, command: str, *, install: bool, settings: list[Setting] | None = None
) -> Change:
    host_settings = settings_of(host)
    old = _read_text(path)
    text = old or ""
    settings_doc.load("json", text, path)  # refuse a file that does not parse, before anything
    if install:
        text = add_entries(text, host_settings, command)
        new, manifest = _apply_settings(
            host, path, text, [*_base_settings(host), *(settings or [])]
        )
        return Change(path, old, new, manifest)
    if old is None:
        return Change(path, old, old, [])
    manifest = _read_manifest(host, path)
    text = strip_entries(text, host_settings.grouped)
    text = _restore("json", path, text, manifest)
    if text == old:
        return Change(path, old, old, [])
    return Change(path, old, _finish_uninstall(host, path, old, text), [])


def _base_settings(host: str) -> list[Setting]:
    """What the host needs besides the entries for the hooks to run."""
    return list(settings_of(host).base)


def plan_scripts(host: str, directory: Path, command: str, *, install: bool) -> list[Change]:
    """The "scripts" layout (Cline): one executable per event in ``directory``."""
    changes = []
    mark = script_mark(host)
    script = f"#!/bin/sh\n{mark}\nexec {command}\n"
    for name in settings_of(host).script_events:
        path = directory / name
        try:
            old: str | None = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            old = None
        except UnicodeDecodeError as exc:
            raise InstallError(f"{path} exists and is not Domestique's; left unchanged") from exc
        if old is not None and mark not in old:
            raise InstallError(
                f"{path} exists and is not Domestique's: {host} runs one hook per name; "
                "merge it by hand (call the Domestique hook from it) and re-run"
            )
        changes.append(Change(path, old, script if install else None))
    return changes


def apply(host: str, change: Change) -> Path | None:
    """Make one change, backing the file up first; returns the backup's path."""
    saved = None
    if change.changed:
        saved = _backup(host, change.path, change.old)
        if change.new is None:
            change.path.unlink(missing_ok=True)
        else:
            executable = settings_of(host).layout == "scripts"
            mode = 0o755 if executable else None
            if not executable and change.path.exists():
                mode = change.path.stat().st_mode & 0o777
            _write_atomic(change.path, change.new, mode)
        _note_written(host, change)
    if change.manifest is not None:
        record = _manifest_path(host, change.path)
        if change.manifest:
            from domestique.keys import ensure_private_dir

            ensure_private_dir(record.parent)
            record.write_text(json.dumps(change.manifest, indent=1), encoding="utf-8")
        else:
            record.unlink(missing_ok=True)
    return saved


def _note_written(host: str, change: Change) -> None:
    record = _written_record(host, change.path)
    if change.new is None:
        record.unlink(missing_ok=True)
        return
    from domestique.keys import ensure_private_dir

    ensure_private_dir(record.parent)
    digest = hashlib.sha256(change.new.encode("utf-8")).hexdigest()
    record.write_text(digest + "\n", encoding="utf-8")


def target(host: str, *, project: bool) -> Path:
    settings = settings_of(host)
    return settings.project_file(project_root()) if project else settings.user_file(Path.home())


# --- Codex: hooks run only once trusted in config.toml --------------------------------------


def codex_trust_entries(hooks_path: Path, doc: Any) -> dict[str, str]:
    """``{state key: trusted_hash}`` for every Domestique handler in a Codex ``hooks.json``."""
    out: dict[str, str] = {}
    hooks = doc.get("hooks") if isinstance(doc, dict) else None
    if not isinstance(hooks, dict):
        return out
    for event, label in CODEX_EVENT_LABELS.items():
        groups = hooks.get(event)
        if not isinstance(groups, list):
            continue
        for g, group in enumerate(groups):
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list):
                continue
            matcher = group.get("matcher") if isinstance(group.get("matcher"), str) else None
            for h, handler in enumerate(inner):
                if isinstance(handler, dict) and _is_ours(handler):
                    key = f"{hooks_path}:{label}:{g}:{h}"
                    out[key] = hook_hash(event, matcher, handler)
    return out


def codex_config_settings(hooks_path: Path, hooks_doc: Any) -> list[Setting]:
    """config.toml values that make Codex run the hooks: the feature on, each handler trusted."""
    settings = [Setting(("features", "hooks"), True)]
    for key, digest in codex_trust_entries(hooks_path, hooks_doc).items():
        settings.append(Setting(("hooks", "state", key, "trusted_hash"), digest))
    return settings


# --- --proxy: every model request through the firewall --------------------------------------

PROXY_HOSTS = tuple(h for h in HOSTS if get(h).settings.proxy is not None)


def proxy_base(url: str) -> str:
    """``url`` checked (http or https, a host, no query) and without a trailing ``/``."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InstallError(f"--proxy {url!r} is not a URL ({exc})") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InstallError(f"--proxy {url!r}: give the firewall's URL, e.g. http://127.0.0.1:8787")
    if parts.query or parts.fragment or parts.username or parts.password:
        raise InstallError(f"--proxy {url!r}: no query, fragment or credentials in the URL")
    del port
    base = url.rstrip("/")
    return base[: -len("/v1")] if base.endswith("/v1") else base


def proxy_settings(host: str, base: str) -> dict[str, list[Setting]]:
    """Per file kind (``hooks`` = the host's hooks file, ``config``, ``env``): what ``--proxy``
    writes so the host sends its model traffic, and nothing else, to the firewall."""
    make = settings_of(host).proxy
    if make is None:
        raise InstallError(
            f"--proxy: {host} cannot be pointed at a local firewall "
            "(Cursor sends model requests from its own servers; see docs/agents.md)"
        )
    return make(base)


def plan(
    host: str,
    *,
    project: bool,
    install: bool,
    python: str | None = None,
    proxy: str | None = None,
) -> list[Change]:
    # Uninstall needs no command: it removes every entry that is Domestique's.
    command = hook_command(host, python, portable=project) if install else ""
    path = target(host, project=project)
    if settings_of(host).layout == "scripts":
        if proxy:
            proxy_settings(host, proxy_base(proxy))  # raises: no proxy setting for scripts
        return plan_scripts(host, path, command, install=install)
    extra = proxy_settings(host, proxy_base(proxy)) if proxy and install else {}
    changes = [plan_json(host, path, command, install=install, settings=extra.get("hooks"))]
    if host == "codex":
        config = codex_home() / "config.toml"
        hooks_doc = jsonc.loads(changes[0].new) if install and changes[0].new else {}
        settings = codex_config_settings(path, hooks_doc) if install else []
        note = ""
        if install and project:
            note = _codex_project_note(config, project_root())
        changes.append(
            plan_settings_file(
                host, config, [*settings, *extra.get("config", [])], install=install, note=note
            )
        )
    env_file = Path.home() / ".gemini" / ".env"
    if host == "gemini" and (extra.get("env") or _read_manifest(host, env_file)):
        changes.append(plan_settings_file(host, env_file, extra.get("env", []), install=install))
    return changes


def _codex_project_note(config: Path, root: Path) -> str:
    """Codex loads a project's .codex/ only once the project is trusted; say so if it is not."""
    try:
        doc = settings_doc.load("toml", config.read_text(encoding="utf-8"), config)
    except (OSError, settings_doc.SettingsError):
        doc = {}
    level = settings_doc.get(doc, ("projects", str(root), "trust_level"))
    if level == "trusted":
        return ""
    return (
        f"Codex reads {root}/.codex/ only in a trusted project: trust it when Codex asks "
        f'(or set [projects."{root}"] trust_level = "trusted" in {config})'
    )


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
    if verb == "install":
        parser.add_argument(
            "--proxy",
            metavar="URL",
            help="also point the host's model traffic at the firewall at URL and keep its other "
            "traffic off the internet (claude-code, codex, gemini)",
        )
    args = parser.parse_args(argv[1:])
    install = verb == "install"
    try:
        if install and not args.dry_run:
            command = hook_command(args.host, args.python, portable=args.project)
            if command.startswith("domestique ") and shutil.which("domestique") is None:
                sys.stderr.write(
                    "domestique install: note: the project entry runs `domestique` from PATH, "
                    "and none is on this PATH: every hooked call is blocked until it is\n"
                )
            clone = in_development_clone(command)
            if clone is not None:
                sys.stderr.write(
                    f"domestique install: note: the hook runs Domestique from the clone {clone}; "
                    "it stops working when the clone moves (pipx install domestique or uv tool "
                    "install domestique gives a stable command)\n"
                )
        changes = plan(
            args.host,
            project=args.project,
            install=install,
            python=args.python,
            proxy=getattr(args, "proxy", None),
        )
        for change in changes:
            if args.dry_run:
                if change.changed:
                    sys.stdout.write(_diff(change.path, change.old, change.new))
                continue
            saved = apply(args.host, change)
            if not change.changed:
                sys.stdout.write(f"{change.path}: already {'installed' if install else 'clean'}\n")
                continue
            note = f" (backup: {saved})" if saved else ""
            sys.stdout.write(f"{change.path}: {'installed' if install else 'removed'}{note}\n")
            if change.note:
                sys.stdout.write(f"  note: {change.note}\n")
    except (InstallError, settings_doc.SettingsError, jsonc.JSONCError, OSError) as exc:
        sys.stderr.write(f"domestique {verb}: {exc}\n")
        return 2
    return 0
