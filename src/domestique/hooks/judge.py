"""Judge one hook call: host JSON → event → verdict → recorded decision → host reply.

Used in-process by :mod:`domestique.hooks.entry` and, with its caches kept warm, by the per-user
daemon (:mod:`domestique.hooks.daemon`). Every path fails closed: bad input denies with
``hook.malformed_input``, an unknown event with ``hook.unknown_event``, any exception with
``engine.internal_error``, an audit write that fails with ``audit.write_failed`` (the record is
turned into a deny by :func:`domestique.audit.record_decision`).

What is judged, by kind of event (see :mod:`domestique.hooks.hosts`):

- shell: the command guard's verdict (:func:`domestique.guard.judge_command`);
- read: ``hook.credential_read`` for credential files, plus the detection engine on any content
  the host passes along (Cursor passes the file);
- write: ``hook.guard_tamper`` for hook settings files, Domestique's state and policy;
- prompt, MCP call, web fetch: the detection engine on every text field;
- a tool the adapter does not know: ``hook.unknown_tool`` with ``settings.unknown_tool``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fnmatch
import os
import re
import stat
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from domestique import __version__
from domestique.audit._mask import may_hold_secret
from domestique.hooks.entry import Reply, host_action, render
from domestique.hooks.hosts import (
    EventKind,
    HookEvent,
    MalformedInput,
    UnknownEvent,
    absolute,
    parse_event,
)
from domestique.records import (
    Action,
    Actor,
    Component,
    DecisionRecord,
    Evidence,
    JSONValue,
    PolicyRef,
    Reason,
    Subject,
    Verdict,
    current_user_and_host,
)
from domestique.sensitive_paths import is_credential_path

if TYPE_CHECKING:
    from domestique.detect import Scanner
    from domestique.policy import DecisionContext, EffectivePolicy

# --- protected and credential paths ---------------------------------------------------------

# Settings files that hold the hosts' hooks: writing one can switch the guard off.
HOOK_SETTINGS_GLOBS: tuple[str, ...] = (
    "*/.claude/settings.json",
    "*/.claude/settings.local.json",
    "*/.claude/hooks/*",
    "/etc/claude-code/*",
    "/Library/Application Support/ClaudeCode/*",
    "*/.codex/hooks.json",
    "*/.codex/config.toml",
    "*/.codex/requirements.toml",
    "*/.gemini/settings.json",
    "/etc/gemini-cli/*",
    "*/.cursor/hooks.json",
    "/etc/cursor/*",
    "/Library/Application Support/Cursor/hooks.json",
    "*/.github/hooks/*",
    "*/.copilot/hooks/*",
    "*/.codeium/windsurf/hooks.json",
    "*/.windsurf/hooks.json",
    "/etc/windsurf/*",
    "/Library/Application Support/Windsurf/hooks.json",
    "*/.clinerules/hooks/*",
    "*/Documents/Cline/Rules/Hooks/*",
    "*/Documents/Cline/Hooks/*",
    # Domestique's own policy layers (project, system).
    "*/.domestique/*",
    "/etc/domestique/*",
    # Git hooks and config run code later, outside any agent hook (`git commit` runs
    # .git/hooks/pre-commit; core.fsmonitor runs on `git status`): an edit tool writing them
    # plants a command the guard never sees.
    "*/.git/hooks/*",
    "*/.git/config",
)

# Files whose whole purpose is to hold credentials. Environment files (.env, …) and every path
# the command guard counts as a credential read come from the shared catalogue
# (domestique.sensitive_paths), so `cat .env` and the Read tool get the same decision.
CREDENTIAL_NAME_GLOBS: tuple[str, ...] = (
    ".netrc",
    "_netrc",
    ".pgpass",
    ".pypirc",
    ".git-credentials",
    ".vault-token",
    "credentials.tfrc.json",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "id_ecdsa_sk",
    "id_ed25519_sk",
    "*.keychain",
    "*.keychain-db",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.kdbx",
)
CREDENTIAL_PATH_GLOBS: tuple[str, ...] = (
    "*/.aws/credentials",
    "*/.aws/sso/cache/*",
    "*/.ssh/id_*",
    "*/.gnupg/*",
    "*/.docker/config.json",
    "*/.kube/config",
    "*/.config/gcloud/*credentials*",
    "*/.config/gh/hosts.yml",
    "*/.azure/accessTokens.json",
    "*/.azure/msal_token_cache.*",
    "*/Library/Keychains/*",
    "*/.local/share/keyrings/*",
    "*/.password-store/*",
    # Another process's environment holds the developer's tokens (the agent's own API key).
    "/proc/*/environ",
    "/proc/*/task/*/environ",
)
# Directories that hold nothing but credentials: a search tool (Grep, Glob, LS) pointed at one
# reads them as surely as a Read of the file inside.
CREDENTIAL_DIR_GLOBS: tuple[str, ...] = (
    "*/.ssh",
    "*/.aws",
    "*/.aws/sso",
    "*/.aws/sso/cache",
    "*/.gnupg",
    "*/.gnupg/*",
    "*/.password-store",
    "*/.password-store/*",
    "*/.local/share/keyrings",
    "*/Library/Keychains",
    "*/.config/gcloud",
    "*/.config/gh",
    "*/.azure",
    "*/.kube",
    "*/.docker",
)
# File names a search tool's glob may aim at: a glob (``*.env``, ``**/.env*``, ``id_*``) that
# selects one of them reads credential files through Grep/Glob even past .gitignore.
CREDENTIAL_SAMPLE_NAMES: tuple[str, ...] = (
    ".env",
    ".env.local",
    ".env.production",
    "prod.env",
    ".netrc",
    ".pgpass",
    ".pypirc",
    ".git-credentials",
    ".vault-token",
    "credentials",
    "id_rsa",
    "id_ed25519",
    "id_ecdsa",
    "key.p12",
    "key.pfx",
    "store.jks",
    "vault.kdbx",
)
NOT_CREDENTIAL_NAME_GLOBS: tuple[str, ...] = (
    ".env.example",
    ".env.sample",
    ".env.template",
    ".env.dist",
    "*.pub",
)


def _domestique_dirs(home: Path) -> tuple[str, ...]:
    """Domestique's state (``DOMESTIQUE_HOME``) and its installed code."""
    import domestique

    dirs = [str(home.expanduser())]
    with contextlib.suppress(OSError):
        dirs.append(str(home.expanduser().resolve()))
    dirs.append(os.path.dirname(os.path.abspath(domestique.__file__)))
    return tuple(dict.fromkeys(dirs))


def _variants(path: str) -> tuple[str, ...]:
    """``path`` as given and with symlinks resolved, so a link cannot hide the target; each also
    case-folded, because macOS and Windows file systems ignore case (``~/.AWS/credentials`` is
    ``~/.aws/credentials`` there). Matching the folded form too can only add protection."""
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        real = path
    return tuple(dict.fromkeys((path, real, path.lower(), real.lower())))


def _fold(globs: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys((*globs, *(g.lower() for g in globs))))


def _expand_braces(pattern: str) -> list[str]:
    """``*.{env,json}`` → ``*.env``, ``*.json`` (one level, as ripgrep and minimatch read it)."""
    m = re.search(r"\{([^{}]*)\}", pattern)
    if not m:
        return [pattern]
    return [pattern[: m.start()] + part + pattern[m.end() :] for part in m.group(1).split(",")]


def glob_reads_credentials(pattern: str) -> bool:
    """True when a search tool's file glob selects credential files (``.env``, ``id_rsa``, …).

    A glob with no literal letter or digit in its last part (``*``, ``**/*``) is the tool's
    ordinary search, judged by its path; only globs that aim at credential names count.
    """
    for expanded in _expand_braces(pattern):
        last = expanded.rstrip("/").rsplit("/", 1)[-1]
        if not any(c.isalnum() for c in last):
            continue
        for variant in dict.fromkeys((last, last.lower())):
            if any(fnmatch.fnmatchcase(name, variant) for name in CREDENTIAL_SAMPLE_NAMES):
                return True
    return False


def is_credential_dir(path: str) -> bool:
    """True when ``path`` is a directory that holds only credentials (or one inside it)."""
    globs = _fold(CREDENTIAL_DIR_GLOBS)
    for p in _variants(path):
        if any(fnmatch.fnmatchcase(p, g) for g in globs):
            return True
        # A subdirectory (``~/.gnupg/private-keys-v1.d``); files inside are judged by name.
        if any(fnmatch.fnmatchcase(p, g + "/*") for g in globs) and os.path.isdir(path):
            return True
    return False


def is_guard_file(path: str, home: Path) -> bool:
    """True when writing ``path`` could switch the guard off (hook settings, policy, state)."""
    roots = _fold(_domestique_dirs(home))
    globs = _fold(HOOK_SETTINGS_GLOBS)
    for p in _variants(path):
        if any(fnmatch.fnmatchcase(p, g) for g in globs):
            return True
        if any(p == r or p.startswith(r.rstrip("/") + "/") for r in roots):
            return True
    return False


def is_credential_file(path: str, home: Path) -> bool:
    """True when ``path`` is a credential file (by name or by place), or Domestique's keys."""
    keys = str(home.expanduser() / "keys")
    name_globs = _fold(CREDENTIAL_NAME_GLOBS)
    path_globs = _fold(CREDENTIAL_PATH_GLOBS)
    for p in _variants(path):
        name = os.path.basename(p)
        if any(fnmatch.fnmatchcase(name, g) for g in NOT_CREDENTIAL_NAME_GLOBS):
            continue
        if is_credential_path(p):
            return True
        if any(fnmatch.fnmatchcase(name, g) for g in name_globs):
            return True
        if any(fnmatch.fnmatchcase(p, g) for g in path_globs):
            return True
        if p in (keys, keys.lower()) or p.startswith((keys + "/", keys.lower() + "/")):
            return True
    return False


# Codes that mean "could not judge": their deny also exits 2 on every host that blocks on it.
ERROR_PREFIXES: tuple[str, ...] = (
    "engine.",
    "audit.",
    "policy.invalid",
    "hook.malformed_input",
    "hook.unknown_event",
    "hook.unknown_host",
    "hook.import_failed",
)

# --- messages -------------------------------------------------------------------------------

# What to do instead, by reason-code prefix (first match wins); one sentence each.
ALTERNATIVES: tuple[tuple[str, str], ...] = (
    (
        "cmd.pipe_to_shell",
        "download the script to a file, show it to the user, and run it only "
        "after they have reviewed it.",
    ),
    (
        "cmd.destructive.",
        "delete only specific paths inside the project, or ask the user to do it.",
    ),
    (
        "cmd.exfiltration",
        "do not send credentials or files off the machine; ask the user to do "
        "this step themselves.",
    ),
    (
        "cmd.opaque_command",
        "write the command out literally, without eval, encoded text or a "
        "variable as the command name.",
    ),
    (
        "cmd.guard_tamper",
        "leave hook settings and Domestique's policy unchanged; ask the user if a change is "
        "really needed.",
    ),
    (
        "cmd.credential_read",
        "ask the user for the specific non-secret setting you need instead of reading the "
        "credential file.",
    ),
    ("cmd.", "use a narrower command that does only what the task needs, or ask the user."),
    ("secret.", "leave the secret out and refer to it by its environment variable or file name."),
    ("records.", "leave the customer data out; describe the record or use synthetic data."),
    ("pii.", "leave the personal data out or replace it with synthetic values."),
    (
        "hook.credential_read",
        "ask the user for the specific non-secret setting you need instead "
        "of reading the credential file.",
    ),
    (
        "hook.guard_tamper",
        "leave hook settings and Domestique's policy unchanged; ask the user if "
        "a change is really needed.",
    ),
    (
        "hook.unknown_tool",
        "use a standard tool (shell, read, edit) or ask the user to allow this "
        "tool in the Domestique policy.",
    ),
)


def instead_for(codes: Sequence[str]) -> str | None:
    for prefix, sentence in ALTERNATIVES:
        if any(c.startswith(prefix) for c in codes):
            return sentence
    return None


_WHAT = {
    EventKind.SHELL: "command",
    EventKind.READ: "file read",
    EventKind.WRITE: "file write",
    EventKind.PROMPT: "prompt",
    EventKind.MCP: "MCP tool call",
    EventKind.FETCH: "web request",
    EventKind.BENIGN: "tool call",
    EventKind.UNKNOWN: "tool call",
}


# Personal data the developer types into a prompt is theirs to send: the hook records it and
# leaves it to the firewall, which redacts it in transit. Only a policy that blocks it outright
# (not ask or redact) stops the prompt.
PERSONAL_PREFIXES = ("pii.", "records.")

PROMPT_STOPPED = (
    "Your prompt was not sent. Remove the secret from it (it is shown masked above) and send the "
    "prompt again; refer to the secret by its environment variable or file name instead. If it "
    "was pasted anywhere else, rotate it."
)


def compose_message(action: Action, reasons: Sequence[Reason], what: str) -> str:
    """One message citing the reason codes and, for a stop, what to do instead.

    ``action`` is what the host will actually do (an ask the host cannot offer arrives here as
    a deny), so the message never promises a confirmation that will not come.
    """
    codes = list(dict.fromkeys(r.code for r in reasons))
    if not action.stops:
        cited = f" [{', '.join(codes)}]" if codes else ""
        return f"Domestique allowed this {what}{cited}."
    detail = "; ".join(f"{r.code}: {r.message}" for r in reasons[:4])
    more = f" (+{len(reasons) - 4} more)" if len(reasons) > 4 else ""
    if what == "prompt" and not any(c.startswith(ERROR_PREFIXES) for c in codes):
        return f"Domestique stopped this prompt [{', '.join(codes)}]: {detail}{more}. " + (
            PROMPT_STOPPED
            if any(c.startswith("secret.") for c in codes)
            else "Your prompt was not sent. Remove what is cited above and send it again."
        )
    verb = "asks you to confirm" if action is Action.ASK else "denied"
    instead = instead_for(codes) or "ask the user to check `domestique doctor` and the policy."
    return f"Domestique {verb} this {what} [{', '.join(codes)}]: {detail}{more}. Instead: {instead}"


# --- judging --------------------------------------------------------------------------------


def _url_host(url: str) -> str | None:
    from urllib.parse import urlsplit

    try:
        return urlsplit(url).hostname
    except ValueError:
        return None


def _url_without_query(url: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable url>"
    return urlunsplit((parts.scheme, parts.hostname or "", parts.path, "", ""))


MAX_READ_SCAN_BYTES = 1024 * 1024  # how much of a file a read tool returns is scanned


def _file_text(path: str) -> list[tuple[str, str]]:
    """The text of a regular file a read tool is about to return ([] for anything else).

    Credential files are not read here: their policy (hook.credential_read) decides them.
    """
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            return []
        with open(path, "rb") as fh:
            # A larger file is scanned over its first MiB (what a read tool returns first)
            # rather than not at all.
            data = fh.read(MAX_READ_SCAN_BYTES)
    except OSError:
        return []
    where = f"file:{path}" if st.st_size <= MAX_READ_SCAN_BYTES else f"file:{path}[:1MiB]"
    return [(where, data.decode("utf-8", "replace"))]


def _looks_like_path(text: str) -> bool:
    return len(text) < 4096 and "\n" not in text and text.startswith(("/", "~", "./", "../"))


def scan_reasons(texts: Sequence[tuple[str, str]], scanner: Scanner) -> list[Reason]:
    """One reason per finding code, citing every field it was found in."""
    by_code: dict[str, list[Evidence]] = {}
    for where, text in texts:
        for f in scanner.scan(text):
            by_code.setdefault(f.code, []).append(f.evidence(f"{where}[{f.start}:{f.end}]"))
    reasons = []
    for code, ev in by_code.items():
        fields = ", ".join(dict.fromkeys(e.where.split("[")[0] for e in ev))
        reasons.append(Reason(code, f"{len(ev)} finding(s) in {fields}", tuple(ev)))
    return reasons


# Only strings that could hold a secret are scanned before they are echoed or recorded, so the
# common hook call does not load the scanner just to mask its tool name and paths.
_may_hold_secret = may_hold_secret


def mask_secrets(text: str, scanner: Scanner) -> str:
    """``text`` with every finding replaced by its masked preview (``AKIA…MPLE``).

    Infrastructure identifiers (``infra.*``: ARNs, bucket hosts) are no secret and stay.
    """
    findings = sorted(
        (f for f in scanner.scan(text) if not f.code.startswith("infra.")),
        key=lambda f: f.start,
        reverse=True,
    )
    last = len(text) + 1
    for f in findings:
        if f.end > last:  # overlapping: the earlier replacement already covers it
            continue
        text = text[: f.start] + (f.preview or "…") + text[f.end :]
        last = f.start
    return text


class _Masker:
    """Masks raw secrets in what a hook echoes and records (tool names, paths, event names,
    URLs, commands): the host's JSON is the agent's to fill, and DESIGN says no raw secret is
    ever written to the terminal or the audit log."""

    def __init__(self, judge: Judge) -> None:
        self._judge = judge

    def text(self, value: str) -> str:
        if not _may_hold_secret(value):
            return value
        return mask_secrets(value, self._judge.scanner())

    def json(self, value: JSONValue) -> JSONValue:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.json(v) for v in value]
        if isinstance(value, dict):
            return {k: self.json(v) for k, v in value.items()}
        return value

    def subject(self, subject: Subject) -> Subject:
        """The ancestry's command lines (``claude -p "my key is …"``) masked too."""
        ancestry = tuple(
            dataclasses.replace(a, cmdline=self.text(a.cmdline)) if a.cmdline else a
            for a in subject.ancestry
        )
        return dataclasses.replace(subject, ancestry=ancestry)

    def reason(self, reason: Reason) -> Reason:
        evidence = tuple(dataclasses.replace(e, where=self.text(e.where)) for e in reason.evidence)
        return dataclasses.replace(reason, message=self.text(reason.message), evidence=evidence)


class Judge:
    """Decides hook calls. The daemon keeps one alive, so its scanner is compiled once."""

    def __init__(self, home: Path | None = None) -> None:
        from domestique.keys import domestique_home

        self.home = home if home is not None else domestique_home()
        # The daemon sets this: its own environment and folder are not the caller's, so the
        # guard must get the caller's scanner (known values), not build one from the daemon's.
        self.eager_scanner = False
        self._caller: tuple[Mapping[str, str] | None, str | None] = (None, None)

    def scanner(self) -> Scanner:
        """The detection engine for the current caller: its environment's secret values and the
        ``.env`` files of its working directory are known values (cached by detect)."""
        from domestique.detect import default_scanner

        env, cwd = self._caller
        return default_scanner(self.home, env=env, cwd=Path(cwd) if cwd else None)

    def policy(self, cwd: str | None) -> EffectivePolicy:
        from domestique.policy import load_policy

        return load_policy(home=self.home, project_dir=Path(cwd) if cwd else None)

    # -- one event ----------------------------------------------------------------------------
    def verdict(
        self, event: HookEvent, policy: EffectivePolicy, ctx: DecisionContext
    ) -> tuple[Verdict, dict[str, JSONValue]]:
        """The verdict on ``event`` and what the record's ``object`` says about it."""
        obj: dict[str, JSONValue] = {"kind": event.kind.value}
        if event.kind is EventKind.SHELL:
            from domestique.guard import judge_command

            assert event.command is not None  # the adapter guarantees it
            judgement = judge_command(
                event.command,
                policy=policy,
                actor=Actor.AGENT,
                cwd=event.cwd,
                scanner=self.scanner() if self.eager_scanner else None,
            )
            obj["command"] = judgement.masked_command
            obj["unfolded"] = list(judgement.unfolded)
            return judgement.verdict, obj
        reasons: list[Reason] = []
        if event.kind is EventKind.UNKNOWN:
            reason = Reason(
                "hook.unknown_tool",
                f"{event.host} tool {event.tool!r} is not known to Domestique's hook adapter",
            )
            return policy.unknown_tool_verdict(reason, ctx), obj
        texts = list(event.texts)
        if event.kind is EventKind.READ:
            for pattern in event.globs:
                if glob_reads_credentials(pattern):
                    reasons.append(
                        Reason(
                            "hook.credential_read",
                            f"{event.tool} searches files matching {pattern!r}, which selects "
                            "credential files",
                            (Evidence(where=f"glob:{pattern}"),),
                        )
                    )
            for path in event.paths:
                if is_credential_dir(path):
                    reasons.append(
                        Reason(
                            "hook.credential_read",
                            f"{event.tool} reads credential directory {path}",
                            (Evidence(where=path),),
                        )
                    )
                elif is_credential_file(path, self.home):
                    reasons.append(
                        Reason(
                            "hook.credential_read",
                            f"{event.tool} reads credential file {path}",
                            (Evidence(where=path),),
                        )
                    )
                elif not event.texts:  # the host passes no content: scan what the tool returns
                    texts += _file_text(path)
        if event.kind is EventKind.WRITE:
            for path in event.paths:
                if is_guard_file(path, self.home):
                    reasons.append(
                        Reason(
                            "hook.guard_tamper",
                            f"{event.tool} would change {path}",
                            (Evidence(where=path),),
                        )
                    )
        if event.kind is EventKind.MCP:
            # An MCP filesystem server can write (and read) files the host's own edit and read
            # hooks never see.
            for where, text in event.texts:
                if not _looks_like_path(text):
                    continue
                full = absolute(text, event.cwd)
                if is_guard_file(full, self.home):
                    reasons.append(
                        Reason(
                            "hook.guard_tamper",
                            f"{event.tool} names {text} in {where}",
                            (Evidence(where=where),),
                        )
                    )
                elif is_credential_file(full, self.home) or is_credential_dir(full):
                    reasons.append(
                        Reason(
                            "hook.credential_read",
                            f"{event.tool} names credential file {text} in {where}",
                            (Evidence(where=where),),
                        )
                    )
        if texts:
            reasons += scan_reasons(texts, self.scanner())
            obj["fields_scanned"] = [w for w, _ in texts]
            obj["chars_scanned"] = sum(len(t) for _, t in texts)
        if event.paths:
            obj["paths"] = list(event.paths)
        if event.urls:
            obj["urls"] = [_url_without_query(u) for u in event.urls]
        if event.kind is EventKind.PROMPT and policy.valid:
            left = [
                r
                for r in reasons
                if r.code.startswith(PERSONAL_PREFIXES)
                and policy.action_for(r.code, ctx) in (Action.ASK, Action.REDACT)
            ]
            if left:
                verdict = policy.decide([r for r in reasons if r not in left], ctx)
                obj["left_to_firewall"] = [r.code for r in left]
                return dataclasses.replace(verdict, reasons=(*verdict.reasons, *left)), obj
        return policy.decide(reasons, ctx), obj

    def decide(
        self,
        host: str,
        raw: bytes,
        *,
        pid: int | None,
        env: Mapping[str, str] | None,
        cwd: str | None,
    ) -> Reply:
        """The host reply for one hook call; every failure is a recorded deny."""
        t0 = time.perf_counter_ns()
        self._caller = (env, cwd)
        event_name = ""
        policy_ref = PolicyRef("unloaded", "")
        obj: dict[str, JSONValue] = {"host": host}
        if env is not None and is_probe(env, self.home):
            # `domestique doctor`'s own probe: recorded like any call, left out of reports.
            obj["probe"] = True
        subject: Subject | None = None
        what = "tool call"
        try:
            try:
                event = parse_event(host, raw)
            except MalformedInput as exc:
                verdict = Verdict(Action.DENY, (Reason("hook.malformed_input", str(exc)),))
            except UnknownEvent as exc:
                event_name = str(exc)
                verdict = Verdict(
                    Action.DENY, (Reason("hook.unknown_event", f"event {event_name!r}"),)
                )
            else:
                event_name = event.event
                what = _WHAT[event.kind]
                obj.update(event=event.event, tool=event.tool, cwd=event.cwd)
                subject = self.subject(host, event.session_id, pid, env)
                from domestique.policy import DecisionContext

                policy = self.policy(event.cwd or cwd)
                policy_ref = policy.ref
                ctx = DecisionContext(
                    component=Component.HOOK,
                    actor=Actor.AGENT,
                    agent=subject.agent,
                    tool=event.tool,
                    hosts=tuple(h for u in event.urls if (h := _url_host(u))),
                    paths=event.paths,
                    project=event.cwd or cwd,
                    command=event.command,
                )
                verdict, detail = self.verdict(event, policy, ctx)
                obj.update(detail)
        except Exception as exc:  # noqa: BLE001 - the boundary: an error denies
            from domestique.boundary import error_reason

            verdict = Verdict(Action.DENY, (error_reason(exc),))
        # A hook cannot redact what the host is about to do: redact stops like deny there.
        action: Action = verdict.action
        if action in (Action.BLOCK, Action.REDACT):
            action = Action.DENY
        would = Action.DENY if verdict.would in (Action.BLOCK, Action.REDACT) else verdict.would
        reasons = verdict.reasons
        try:
            masker = _Masker(self)
            reasons = tuple(masker.reason(r) for r in reasons)
            masked = masker.json(dict(obj))
            obj = dict(masked) if isinstance(masked, dict) else {"host": host}
            event_name = masker.text(event_name)
        except Exception as exc:  # noqa: BLE001 - cannot mask: echo and record nothing raw
            from domestique.boundary import error_reason

            action, would = Action.DENY, None
            reasons = (error_reason(exc, "engine.detector_error"),)
            obj, event_name = {"host": host}, ""
        try:
            if subject is None:
                try:
                    subject = self.subject(host, None, pid, env)
                except Exception:  # noqa: BLE001 - the decision is a deny already; record it
                    subject = fallback_subject()
            subject = _Masker(self).subject(subject)
            record = DecisionRecord(
                component=Component.HOOK,
                action=action,
                reasons=reasons,
                subject=subject,
                object=obj,
                policy=policy_ref,
                engine={"domestique": __version__, "hooks": "1"},
                latency_us=(time.perf_counter_ns() - t0) // 1000,
                would_action=would,
            )
            from domestique.audit import record_decision

            record = record_decision(record, home=self.home, stop=Action.DENY)
            action, reasons = record.action, record.reasons
        except Exception as exc:  # noqa: BLE001 - an unrecorded decision must not allow
            from domestique.boundary import error_reason

            action, reasons = Action.DENY, (*reasons, error_reason(exc, "audit.write_failed"))
        error = action.stops and any(r.code.startswith(ERROR_PREFIXES) for r in reasons)
        shown = Action(host_action(host, event_name, action.value))
        return render(
            host, event_name, shown.value, compose_message(shown, reasons, what), error=error
        )

    def subject(
        self, host: str, session_id: str | None, pid: int | None, env: Mapping[str, str] | None
    ) -> Subject:
        """Who asked: the ancestry of the hook process; the host itself when none is named."""
        from domestique.guard import identify_subject

        subject: Subject = identify_subject(pid=pid, env=env)
        agent = subject.agent
        markers = subject.markers
        if agent is None:
            agent, markers = host, (*markers, f"hook:{host}")
        return dataclasses.replace(subject, session_id=session_id, agent=agent, markers=markers)


def fallback_subject() -> Subject:
    """Who asked, when the ancestry could not be read: user and host only, marked so."""
    user, hostname = current_user_and_host()
    return Subject(user=user, host=hostname, markers=("ancestry-unavailable",))


# Set by `domestique doctor` in the environment of the hook it runs: the record is a probe. The
# value must equal the one-time token doctor wrote in DOMESTIQUE_HOME (a guarded path), so a
# project's .env that a host loads into its environment cannot hide real calls from reports.
PROBE_ENV = "DOMESTIQUE_PROBE"
PROBE_FILE_NAME = "doctor-probe.token"


def is_probe(env: Mapping[str, str], home: Path | None) -> bool:
    """True when ``env`` carries doctor's current probe token (never on a read error)."""
    given = env.get(PROBE_ENV)
    if not given:
        return False
    import hmac

    from domestique.keys import domestique_home

    try:
        token = ((home or domestique_home()) / PROBE_FILE_NAME).read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        return False
    return len(token) >= 32 and hmac.compare_digest(token.strip(), given)


def decide_in_process(
    host: str, raw: bytes, *, pid: int | None, env: Mapping[str, str] | None, cwd: str | None
) -> Reply:
    """One decision in this process (no daemon), with a fresh :class:`Judge`."""
    return Judge().decide(host, raw, pid=pid, env=env, cwd=cwd)
