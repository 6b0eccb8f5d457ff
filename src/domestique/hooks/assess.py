"""The verdict on one hook event: pure classification, every input handed in.

What is judged, by kind of event (see :class:`domestique.hooks.protocol.EventKind`):

- shell: the command guard's verdict (:func:`domestique.guard.judge_command`), judged in the
  hook's own context (component ``hook``, the agent, the tool), so policy rules scoped to hooks,
  agents or tools apply to it;
- read: ``hook.credential_read`` for credential files, directories and search globs, plus the
  detection engine on the content the host passes along (Cursor passes the file) or, when it
  passes none, on what :class:`Inputs.read` returns for the file;
- write: ``hook.guard_tamper`` for hook settings files, Domestique's state and policy;
- prompt, MCP call, web fetch: the detection engine on every text field (an MCP call naming a
  protected or credential path is judged like the write or read it is);
- a tool the adapter does not know: ``hook.unknown_tool`` with ``settings.unknown_tool``.

The caller (:mod:`domestique.hooks.decide`) hands in the scanner and the file reader: nothing
here opens a file but through :attr:`Inputs.read` (path matching resolves symlinks, see
:mod:`domestique.hooks.paths`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from domestique import frozen_class
from domestique.frozen_class import dataclass
from domestique.hooks.hosts._common import absolute
from domestique.hooks.paths import (
    glob_reads_credentials,
    is_credential_dir,
    is_credential_file,
    is_guard_file,
)
from domestique.hooks.protocol import EventKind, HookEvent
from domestique.records import Action, Evidence, JSONValue, Reason, Verdict

TYPE_CHECKING = False  # not typing's: a hook deciding in-process does not load typing

if TYPE_CHECKING:
    from domestique.detect import Scanner
    from domestique.policy import DecisionContext, EffectivePolicy

# Personal data the developer types into a prompt is theirs to send: the hook records it and
# leaves it to the firewall, which redacts it in transit. Only a policy that blocks it outright
# (not ask or redact) stops the prompt.
PERSONAL_PREFIXES = ("pii.", "records.")

Texts = list[tuple[str, str]]  # (where, text) pairs to scan


@dataclass(frozen=True, slots=True)
class Inputs:
    """What an assessment may consult besides the event: handed in by the shell."""

    home: Path  # DOMESTIQUE_HOME: its state and keys are protected
    scanner: Callable[[], Scanner]  # the caller's detection engine, built on first use
    read: Callable[[str], Texts]  # a read tool's file → the text it would return ([] if none)
    eager_scanner: bool = False  # hand the scanner to the guard too (the daemon's callers)


def assess(
    event: HookEvent, policy: EffectivePolicy, ctx: DecisionContext, inputs: Inputs
) -> tuple[Verdict, dict[str, JSONValue]]:
    """The verdict on ``event`` and what the record's ``object`` says about it."""
    obj: dict[str, JSONValue] = {"kind": event.kind.value}
    if event.kind is EventKind.SHELL:
        return _shell(event, policy, ctx, inputs, obj)
    if event.kind is EventKind.UNKNOWN:
        reason = Reason(
            "hook.unknown_tool",
            f"{event.host} tool {event.tool!r} is not known to Domestique's hook adapter",
        )
        return policy.unknown_tool_verdict(reason, ctx), obj
    texts: Texts = list(event.texts)
    reasons: list[Reason] = []
    if event.kind is EventKind.READ:
        reasons += _read_reasons(event, inputs, texts)
    elif event.kind is EventKind.WRITE:
        reasons += [_tamper(event.tool, p) for p in event.paths if is_guard_file(p, inputs.home)]
    elif event.kind is EventKind.MCP:
        reasons += _mcp_reasons(event, inputs.home)
    if texts:
        reasons += scan_reasons(texts, inputs.scanner())
        obj["fields_scanned"] = [w for w, _ in texts]
        obj["chars_scanned"] = sum(len(t) for _, t in texts)
    if event.paths:
        obj["paths"] = list(event.paths)
    if event.urls:
        obj["urls"] = [url_without_query(u) for u in event.urls]
    if event.kind is EventKind.PROMPT and policy.valid:
        return _prompt(reasons, policy, ctx, obj)
    return policy.decide(reasons, ctx), obj


def _shell(
    event: HookEvent,
    policy: EffectivePolicy,
    ctx: DecisionContext,
    inputs: Inputs,
    obj: dict[str, JSONValue],
) -> tuple[Verdict, dict[str, JSONValue]]:
    from domestique.guard import judge_command

    assert event.command is not None  # the adapter guarantees it
    judgement = judge_command(
        event.command,
        policy=policy,
        actor=ctx.actor,
        cwd=event.cwd,
        scanner=inputs.scanner() if inputs.eager_scanner else None,
        agent=ctx.agent,
        tool=ctx.tool,
        component=ctx.component,
    )
    obj["command"] = judgement.masked_command
    obj["unfolded"] = list(judgement.unfolded)
    obj["hosts"] = list(judgement.hosts)  # part of the context: explain and whatif re-decide in it
    return judgement.verdict, obj


def _tamper(tool: str, path: str) -> Reason:
    return Reason("hook.guard_tamper", f"{tool} would change {path}", (Evidence(where=path),))


def _read_reasons(event: HookEvent, inputs: Inputs, texts: Texts) -> list[Reason]:
    """Credential globs, directories and files a read names; ``texts`` gains the files' text
    when the host passes no content (what the tool returns is scanned)."""
    reasons = [
        Reason(
            "hook.credential_read",
            f"{event.tool} searches files matching {pattern!r}, which selects credential files",
            (Evidence(where=f"glob:{pattern}"),),
        )
        for pattern in event.globs
        if glob_reads_credentials(pattern)
    ]
    for path in event.paths:
        if is_credential_dir(path):
            what = "credential directory"
        elif is_credential_file(path, inputs.home):
            what = "credential file"
        else:
            if not event.texts:
                texts += inputs.read(path)
            continue
        reasons.append(
            Reason("hook.credential_read", f"{event.tool} reads {what} {path}", (Evidence(path),))
        )
    return reasons


def _mcp_reasons(event: HookEvent, home: Path) -> list[Reason]:
    """An MCP filesystem server can write (and read) files the host's own edit and read hooks
    never see: a path argument naming a protected or credential file counts as that."""
    reasons = []
    for where, text in event.texts:
        if not looks_like_path(text):
            continue
        full = absolute(text, event.cwd)
        if is_guard_file(full, home):
            message, code = f"{event.tool} names {text} in {where}", "hook.guard_tamper"
        elif is_credential_file(full, home) or is_credential_dir(full):
            message = f"{event.tool} names credential file {text} in {where}"
            code = "hook.credential_read"
        else:
            continue
        reasons.append(Reason(code, message, (Evidence(where=where),)))
    return reasons


def _prompt(
    reasons: list[Reason], policy: EffectivePolicy, ctx: DecisionContext, obj: dict[str, JSONValue]
) -> tuple[Verdict, dict[str, JSONValue]]:
    """Personal data the policy would only ask about or redact is left to the firewall."""
    left = [
        r
        for r in reasons
        if r.code.startswith(PERSONAL_PREFIXES)
        and policy.action_for(r.code, ctx) in (Action.ASK, Action.REDACT)
    ]
    if not left:
        return policy.decide(reasons, ctx), obj
    verdict = policy.decide([r for r in reasons if r not in left], ctx)
    obj["left_to_firewall"] = [r.code for r in left]
    return frozen_class.replace(verdict, reasons=(*verdict.reasons, *left)), obj


def url_host(url: str) -> str | None:
    from urllib.parse import urlsplit

    try:
        return urlsplit(url).hostname
    except ValueError:
        return None


def url_without_query(url: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable url>"
    return urlunsplit((parts.scheme, parts.hostname or "", parts.path, "", ""))


def looks_like_path(text: str) -> bool:
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
