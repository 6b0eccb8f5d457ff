"""``domestique explain``: why a command or a recorded decision got its verdict.

    domestique explain [--json] [--actor agent|human] [--policy FILE] [--] COMMAND ...
    domestique explain [--json] RECORD-ID

For each reason: the code and what it means, the message, the evidence (masked previews and
keyed fingerprints, never a raw value), the action the current policy gives it and the rule that
decided, by id, layer and ``file:line``; then the narrowest rule that would allow it and the
``domestique allow`` command that writes it. Explaining a command judges it without recording
a decision. Exit 0 when explained; 2 on an error (an unknown record id, an unreadable store).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from domestique.cli._args import Parser, UsageError
from domestique.policy import DecisionContext, EffectivePolicy, load_policy
from domestique.policy._allow import SCOPE_HELP, AllowPlan, plan_allow, render_rule
from domestique.policy._whatif import record_context
from domestique.records import Action, Actor, Component, Reason

_RECORD_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
# Reasons whose evidence the audit gate masks: a record's command holding one is not the
# command that ran, and is never copied into a policy file.
_SENSITIVE_PREFIXES = ("secret.", "pii.", "records.")


class ExplainError(Exception):
    """The target could not be explained (no such record, unreadable store)."""


@dataclass(frozen=True, slots=True)
class Judged:
    """One decision to explain: what was judged, in which context, and why."""

    kind: str  # "command" | "record"
    component: Component
    action: Action  # what was (or would be) enforced
    would: Action | None  # monitor mode: what the policy decided
    reasons: tuple[Reason, ...]
    ctx: DecisionContext
    shown: str  # masked command, or a short description of the request
    command: str | None  # the command line as it ran (None when unknown or masked)
    command_has_secret: bool
    project_root: str | None
    record_id: str | None = None
    time: str | None = None
    policy_then: str | None = None  # sha256 of the policy that decided (records)
    host_limit: str = ""  # the agent host does not act on this answer (recorded, not enforced)


def project_root_of(directory: str | None) -> str | None:
    """The repository holding ``directory`` (nearest ``.git``), else the directory itself."""
    if not directory:
        return None
    from domestique.hooks.install import project_root

    try:
        return str(project_root(Path(directory)))
    except OSError:
        return os.path.abspath(directory)


def judge_command_target(
    command: str, *, policy: EffectivePolicy, actor: Actor, cwd: str
) -> Judged:
    """Judge ``command`` as ``domestique check`` would, without recording a decision."""
    from domestique.guard import judge_command

    judgement = judge_command(command, policy=policy, actor=actor, cwd=cwd)
    secret = judgement.masked_command != command or any(
        r.code.startswith(_SENSITIVE_PREFIXES) for r in judgement.verdict.reasons
    )
    root = project_root_of(cwd)
    ctx = DecisionContext(
        Component.GUARD, actor, hosts=judgement.hosts, project=cwd, command=command
    )
    return Judged(
        kind="command",
        component=Component.GUARD,
        action=judgement.verdict.action,
        would=judgement.verdict.would,
        reasons=judgement.verdict.reasons,
        ctx=ctx,
        shown=judgement.masked_command,
        command=command,
        command_has_secret=secret,
        project_root=root,
    )


def find_record(ident: str, home: Path | None = None) -> dict[str, Any]:
    """The stored record with id ``ident``; ExplainError when there is none."""
    from domestique.audit import AuditStore, AuditStoreError
    from domestique.records import utc_now_iso

    ident = ident.strip().lower()
    if not _RECORD_ID.match(ident):
        raise ExplainError(f"{ident!r} is not a record id (a UUID like 0190…-7…)")
    # A UUIDv7 starts with its millisecond time: read from a little before it, not the whole log.
    ms = int(ident.replace("-", "")[:12], 16)
    since = utc_now_iso(max(0, ms - 60_000) * 1_000_000)
    try:
        with AuditStore.open(home, create=False) as store:
            for row in store.rows(since=since):
                if row.id == ident:
                    return row.data()
    except (AuditStoreError, OSError, ValueError) as exc:
        raise ExplainError(f"cannot read the audit log: {exc}") from None
    raise ExplainError(f"no record {ident} in the audit log")


def _strings(value: object) -> tuple[str, ...]:
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, str) and v)
    return ()


def _string(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def record_target(data: dict[str, Any]) -> Judged:
    """A stored record as a :class:`Judged` (its context rebuilt from ``subject``/``object``)."""
    from domestique.records import DecisionRecord

    try:
        record = DecisionRecord.from_json(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise ExplainError(f"record cannot be read ({type(exc).__name__})") from None
    obj = record.object
    component = record.component
    cwd = _string(obj.get("cwd"))
    command = _string(obj.get("command"))
    secret = any(r.code.startswith(_SENSITIVE_PREFIXES) for r in record.reasons)
    # The context the component decided in, rebuilt as `policy whatif` rebuilds it.
    ctx = record_context(
        component,
        record.subject.actor,
        record.subject.agent,
        obj,
        # Stored masked (a preview in it): not the line judged, as `policy whatif` reads it.
        command=None if secret or (command is not None and "…" in command) else command,
    )
    if command is not None:
        shown = str(command)
    elif component is Component.PROXY:
        shown = f"{obj.get('provider', '?')} {obj.get('route', '?')} model {obj.get('model', '?')}"
    else:
        shown = f"{obj.get('tool', obj.get('kind', '?'))} ({obj.get('event', '?')})"
    return Judged(
        kind="record",
        component=component,
        action=record.action,
        would=record.would_action,
        reasons=record.reasons,
        ctx=ctx,
        shown=shown,
        command=None if secret else command,
        command_has_secret=secret,
        project_root=project_root_of(cwd),
        record_id=record.id,
        time=record.time,
        policy_then=record.policy.sha256,
        host_limit=_string(obj.get("host_limit")) or "",
    )


def _strip_rule_note(message: str) -> str:
    """A decision's message without the ``(rule …)`` the policy appended to it."""
    return re.sub(
        r" \((?:rule [^()]+|no rule matches: [^()]+|always stops: [^()]+)\)$", "", message
    )


def explain(judged: Judged, policy: EffectivePolicy) -> dict[str, Any]:
    """What ``explain --json`` prints: the decision, each reason and how it is decided."""
    from domestique.reason_codes import registry

    codes = registry()
    reasons: list[dict[str, Any]] = []
    for reason in judged.reasons:
        decision = policy.explain_code(reason.code, judged.ctx)
        rule = decision.deciding_rule
        decided: dict[str, Any] = {"label": decision.decided_by}
        if rule is not None:
            decided.update(rule=rule.id, layer=rule.layer, source=rule.source)
        if decision.project_rule is not None and decision.rule is not None:
            decided["base_rule"] = decision.rule.id
            decided["base_source"] = decision.rule.source
        meaning = codes.get(reason.code)
        reasons.append(
            {
                "code": reason.code,
                "meaning": meaning.meaning if meaning else "",
                "message": _strip_rule_note(reason.message),
                "evidence": [e.to_json() for e in reason.evidence],
                "action": decision.action.value,
                "decided_by": decided,
            }
        )
    out: dict[str, Any] = {
        "kind": judged.kind,
        "component": judged.component.value,
        "actor": judged.ctx.actor.value,
        "decision": judged.action.value,
        "judged": judged.shown,
        "reasons": reasons,
        "policy": {
            "sha256": policy.ref.sha256,
            "valid": policy.valid,
            "mode": policy.settings.mode,
            "errors": list(policy.errors[:5]),
        },
    }
    if judged.would is not None:
        out["enforced"] = False
        out["would_decision"] = judged.would.value
    if judged.host_limit:
        out["enforced"] = False
        out["host_limit"] = judged.host_limit
    if judged.record_id is not None:
        out["record_id"] = judged.record_id
        out["time"] = judged.time
        out["policy_changed_since"] = judged.policy_then != policy.ref.sha256
    stopping = [r.code for r in judged.reasons]
    plan = plan_allow(
        policy,
        stopping,
        judged.ctx,
        scope="once" if judged.command and not judged.command_has_secret else "repo",
        project_root=judged.project_root,
        command=judged.command,
        command_has_secret=judged.command_has_secret,
    )
    if plan.problem and plan.scope != "user":
        plan = plan_allow(
            policy,
            stopping,
            judged.ctx,
            scope="user",
            project_root=judged.project_root,
            command=judged.command,
        )
    out["to_allow"] = _allow_json(plan, judged)
    return out


def allow_command_line(scope: str, judged: Judged) -> str:
    """The ``domestique allow`` command that writes the rule for ``judged``."""
    if judged.record_id is not None:
        return f"domestique allow --{scope} {judged.record_id}"
    assert judged.command is not None
    return f"domestique allow --{scope} -- {shlex.quote(judged.command)}"


def _allow_json(plan: AllowPlan, judged: Judged) -> dict[str, Any]:
    out: dict[str, Any] = {
        "scope": plan.scope,
        "scope_means": SCOPE_HELP[plan.scope],
        "refused": [{"code": c, "why": why} for c, why in plan.refused],
    }
    if plan.rule is None:
        out["problem"] = plan.problem
        return out
    out["rule"] = plan.rule
    out["toml"] = render_rule(plan.rule)
    if judged.record_id is not None or (judged.command and not judged.command_has_secret):
        out["command"] = allow_command_line(plan.scope, judged)
    return out


def render_text(data: dict[str, Any]) -> str:
    lines = [
        f"{data['component']} decision: {data['decision']}"
        + (
            f" (monitor mode: would have been {Action(data['would_decision']).past})"
            if "would_decision" in data
            else ""
        )
        + f"  [actor {data['actor']}]",
        f"judged: {data['judged']}",
    ]
    if "host_limit" in data:
        lines.append(f"NOT ENFORCED by the agent host: {data['host_limit']}")
    if "record_id" in data:
        lines.append(f"record: {data['record_id']} at {data['time']}")
        if data["policy_changed_since"]:
            lines.append("note: the policy has changed since; below is how it decides now")
    if not data["policy"]["valid"]:
        lines.append(f"policy INVALID, every decision stops: {data['policy']['errors'][0]}")
    if not data["reasons"]:
        lines.append("no reasons: nothing was found, the command is allowed")
    for r in data["reasons"]:
        lines.append(f"- {r['code']} -> {r['action']}")
        if r["meaning"]:
            lines.append(f"    means:      {r['meaning']}")
        lines.append(f"    message:    {r['message']}")
        for e in r["evidence"]:
            extra = f" {e['preview']!r}" if e.get("preview") else ""
            extra += f" fingerprint {e['fingerprint'][:16]}" if e.get("fingerprint") else ""
            lines.append(f"    evidence:   {e['where']}{extra}")
        d = r["decided_by"]
        where = f", {d['layer']} layer, {d['source']}" if "source" in d else ""
        lines.append(f"    decided by: {d['label']}{where}")
        if "base_rule" in d:
            lines.append(f"    (raised from rule {d['base_rule']} at {d['base_source']})")
    allow = data["to_allow"]
    for item in allow["refused"]:
        lines.append(f"cannot be allowed: {item['code']}: {item['why']}")
    if "rule" in allow:
        lines.append(f"to allow it ({allow['scope']}: {allow['scope_means']}):")
        if "command" in allow:
            lines.append(f"  {allow['command']}")
        lines.append("  which adds to your policy (domestique policy show lists the layers):")
        lines += [f"    {line}" for line in allow["toml"].splitlines()]
    elif allow.get("problem") and data["decision"] != "allow":
        lines.append(f"to allow it: {allow['problem']}")
    return "\n".join(lines) + "\n"


def _parser() -> Parser:
    p = Parser(
        prog="domestique explain",
        description="Why a command or a recorded decision got its verdict: reason codes, the "
        "rule and layer (file:line) that decided, the masked evidence, and the rule that would "
        "allow it.",
    )
    p.add_argument("--json", action="store_true", help="one JSON object")
    p.add_argument("--actor", choices=("agent", "human"), default="agent")
    p.add_argument("--policy", type=Path, help="an extra policy file (as for check)")
    p.add_argument("target", nargs="*", help="RECORD-ID, or the command (after --)")
    return p


def resolve_target(
    words: list[str], *, policy: EffectivePolicy, actor: Actor, forced_command: bool
) -> Judged:
    """A record id (one word shaped like one) or a command line."""
    if not forced_command and len(words) == 1 and _RECORD_ID.match(words[0].strip().lower()):
        return record_target(find_record(words[0]))
    command = words[0] if len(words) == 1 else " ".join(words)
    return judge_command_target(command, policy=policy, actor=actor, cwd=os.getcwd())


def split_dashdash(
    argv: list[str], valued: tuple[str, ...] = ("--actor", "--policy", "--file")
) -> tuple[list[str], list[str] | None]:
    """Options, and the words of the command (None when it may be a record id).

    After ``--`` everything is the command. Without ``--``, options are read up to the first
    word that is not one (``explain git push --force`` judges ``git push --force``).
    """
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1 :]
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        i += 2 if argv[i] in valued else 1
    rest = argv[i:]
    if len(rest) > 1:
        return argv[:i], rest
    return argv, None


def run(argv: list[str]) -> int:
    options, after = split_dashdash(argv)
    try:
        args = _parser().parse_args(options)
    except UsageError as exc:
        sys.stderr.write(f"domestique explain: {exc}\n")
        return 2
    words = list(args.target) + (after or [])
    if not words:
        sys.stderr.write("domestique explain: give a RECORD-ID or -- COMMAND ...\n")
        return 2
    try:
        policy = load_policy(policy_file=args.policy, project_dir=Path.cwd())
        judged = resolve_target(
            words, policy=policy, actor=Actor(args.actor), forced_command=after is not None
        )
        data = explain(judged, policy)
    except ExplainError as exc:
        sys.stderr.write(f"domestique explain: {exc}\n")
        return 2
    if args.json:
        sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(render_text(data))
    return 0
