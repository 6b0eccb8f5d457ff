"""Policy what-if: re-decide recorded decisions under a candidate policy, from the records alone.

A decision record carries its reason codes, their masked evidence and the context they were
judged in (component, actor, agent, tool, hosts, paths, directory). :class:`WhatIf` rebuilds
the :class:`DecisionContext` each component built, asks the *baseline* policy (the layers in
force now) and the *candidate* policy (the same layers with the candidate file in one of them)
through :meth:`EffectivePolicy.decide` and :meth:`EffectivePolicy.unknown_tool_verdict`, the
same calls the components make, and counts what changes.

Nothing is guessed. A record is counted as **not re-decidable**, with the reason, when:

- it carries an error code (``engine.*``, ``audit.write_failed``, ``policy.invalid`` and every
  other protected code): what was judged could not be judged, and the raw input is not stored;
- it follows another decision (``proxy.upstream_error``) or records a policy change;
- it was decided with a project policy layer (the record does not carry which one);
- a reason code is no longer registered (the detectors changed since; re-detecting needs the
  raw text, which is never stored);
- a rule that could decide one of its codes looks at context the record does not carry (hook
  shell commands do not record their hosts; a command holding a secret is stored masked);
- the baseline policy does not reproduce the recorded decision (the policy changed since the
  record was made): a change could not be told from the candidate's.

Pure: the caller streams stored records in; memory stays bounded (counters per code, rule and
direction; at most :data:`EXAMPLES` examples each).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from domestique.policy._model import DecisionContext, EffectivePolicy, is_protected
from domestique.records import Action, Actor, Component, Reason, Verdict

EXAMPLES = 3  # example records kept per group
SCHEMA = 1  # of the JSON report (docs/policy.md)

# Context fields a rule can look at, and the Match attribute holding each.
_FIELD_OF_MATCH = {"hosts": "hosts", "paths": "paths", "project": "projects", "command": "commands"}
# Reasons whose evidence the audit gate masks: a command holding one is stored masked.
_SENSITIVE_PREFIXES = ("secret.", "pii.", "records.")


def _strings(value: object) -> tuple[str, ...]:
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, str) and v)
    return ()


def _string(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _url_host(url: str) -> str | None:
    from urllib.parse import urlsplit

    try:
        return urlsplit(url).hostname
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class Rebuilt:
    """A record's decision as the component made it: reasons, context, what the policy
    decided (``would_action`` in monitor mode), and the context fields that were not stored."""

    component: Component
    reasons: tuple[Reason, ...]
    ctx: DecisionContext
    decided: Action
    unknown: frozenset[str] = frozenset()
    unknown_tool: bool = False


# (why not re-decidable or "", before, after, per changed code: (code, from, to, rule, source))
Judged = tuple[str, Action, Action, tuple[tuple[str, str, str, str, str], ...]]


class NotRedecidable(Exception):
    """The record cannot be re-decided from what was stored; the message says why."""


def record_context(
    component: Component,
    actor: Actor,
    agent: str | None,
    obj: Mapping[str, Any],
    *,
    command: str | None,
) -> DecisionContext:
    """The context ``component`` decided the recorded call in, rebuilt from the record's subject
    (``actor``, ``agent``) and ``object``; ``command`` as the caller may use it (None when it is
    stored masked). ``domestique explain`` and ``policy whatif`` both call this, so they re-decide
    in the same context.

    Guard (``check``): the subject's actor and agent, the command's hosts, its directory and
    command. Hooks judge for the agent, as component ``hook`` with the host's tool, whatever the
    kind of call: a shell command with the hosts the guard found in it, other calls with the
    URLs' hosts and the paths. Firewall: the agent and the upstream host.
    """
    cwd = _string(obj.get("cwd"))
    hosts: tuple[str, ...]
    if component is Component.PROXY:
        upstream = _string(obj.get("upstream_host"))
        hosts = (upstream,) if upstream else ()
        return DecisionContext(Component.PROXY, Actor.AGENT, agent=agent, hosts=hosts)
    if component is Component.GUARD:
        hosts = _strings(obj.get("hosts"))
        return DecisionContext(
            Component.GUARD, actor, agent=agent, hosts=hosts, project=cwd, command=command
        )
    if obj.get("kind") == "shell":
        if "hosts" not in obj:
            # Recorded before hooks judged shell commands in their own context: the guard's
            # context for the agent, no agent, tool or hosts (hooks/judge.py then).
            return DecisionContext(Component.GUARD, Actor.AGENT, project=cwd, command=command)
        hosts = _strings(obj.get("hosts"))
    else:
        hosts = tuple(h for u in _strings(obj.get("urls")) if (h := _url_host(u)))
    return DecisionContext(
        component,
        Actor.AGENT,
        agent=agent,
        tool=_string(obj.get("tool")),
        hosts=hosts,
        paths=_strings(obj.get("paths")),
        project=cwd,
        command=command,
    )


def rebuild(data: Mapping[str, Any]) -> Rebuilt:
    """The context each component built for the stored record ``data``.

    The context is :func:`record_context`'s; the fields it needs that the record does not hold
    are named in :attr:`Rebuilt.unknown`. Raises :class:`NotRedecidable`.
    """
    try:
        component = Component(data["component"])
        action = Action(data["action"])
        would = data.get("would_action")
        decided = Action(would) if would else action
        reasons = tuple(
            Reason(str(r["code"]), str(r.get("message", "")), ()) for r in data["reasons"]
        )
        subject = data.get("subject") or {}
        obj = data.get("object") or {}
        actor = Actor(subject.get("actor", "agent"))
        agent = _string(subject.get("agent"))
        policy_id = str((data.get("policy") or {}).get("id", ""))
    except (KeyError, TypeError, ValueError, AttributeError):
        raise NotRedecidable("record cannot be read") from None
    if component is Component.POLICY:
        raise NotRedecidable("a policy change, not a decision")
    for r in reasons:
        if is_protected(r.code):
            raise NotRedecidable(f"error code {r.code}: the input could not be judged")
    if obj.get("follows"):
        raise NotRedecidable("follows another decision (an upstream failure)")
    if "project" in policy_id.split("+"):
        raise NotRedecidable("decided with a project policy layer the record does not name")
    cwd = _string(obj.get("cwd"))
    command = _string(obj.get("command"))
    unknown: set[str] = set()
    if command is not None and (
        "…" in command or any(r.code.startswith(_SENSITIVE_PREFIXES) for r in reasons)
    ):
        command = None  # stored masked (the audit gate's previews): not the line judged
        unknown.add("command")
    if cwd is None and component is not Component.PROXY:
        unknown.add("project")  # hooks fall back to a directory the record does not hold
    if component is Component.HOOK and obj.get("kind") == "shell" and "hosts" not in obj:
        unknown.add("hosts")  # recorded before hook records kept the command's hosts
    ctx = record_context(component, actor, agent, obj, command=command)
    unknown_tool = component is Component.HOOK and tuple(r.code for r in reasons) == (
        "hook.unknown_tool",
    )
    return Rebuilt(component, reasons, ctx, decided, frozenset(unknown), unknown_tool)


def decide(policy: EffectivePolicy, rebuilt: Rebuilt) -> Verdict:
    """What ``policy`` decides for the record, through the call its component makes."""
    if rebuilt.unknown_tool:
        return policy.unknown_tool_verdict(rebuilt.reasons[0], rebuilt.ctx)
    return policy.decide(rebuilt.reasons, rebuilt.ctx)


def decided_action(verdict: Verdict, component: Component) -> Action:
    """The action the policy decided (monitor mode: the would-action) as the component
    records it: the firewall blocks whatever stops; a hook cannot redact, so it denies."""
    action = verdict.would if verdict.would is not None else verdict.action
    if component is Component.PROXY and action.stops:
        return Action.BLOCK
    if component is Component.HOOK and action in (Action.REDACT, Action.BLOCK):
        return Action.DENY
    return action


def _depends_on(policy: EffectivePolicy, codes: Sequence[str], fields: frozenset[str]) -> str:
    """The first context field in ``fields`` that a rule able to decide one of ``codes``
    looks at (in its match or an exception); '' when none does."""
    for rule in (*policy.rules, *policy.project_rules):
        if not any(rule.specificity(c) is not None for c in codes):
            continue
        for name in sorted(fields):
            attr = _FIELD_OF_MATCH[name]
            if getattr(rule.match, attr) or any(getattr(e, attr) for e in rule.exceptions):
                return f"{name} not recorded, and rule {rule.id} ({rule.source}) looks at {name}"
    return ""


def _rule_label(policy: EffectivePolicy, code: str, ctx: DecisionContext) -> tuple[str, str]:
    decision = policy.explain_code(code, ctx)
    rule = decision.deciding_rule
    if rule is None:
        return decision.decided_by, ""
    return rule.id, rule.source


@dataclass(slots=True)
class Group:
    """One group of changed decisions: how many, and a few examples."""

    count: int = 0
    examples: list[dict[str, Any]] = field(default_factory=list)

    def add(self, example: dict[str, Any]) -> None:
        self.count += 1
        if len(self.examples) < EXAMPLES:
            self.examples.append(example)

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "examples": list(self.examples)}


class WhatIf:
    """Re-decides records one by one and keeps the totals (bounded memory)."""

    def __init__(
        self, baseline: EffectivePolicy, candidate: EffectivePolicy, registered: frozenset[str]
    ) -> None:
        self.baseline = baseline
        self.candidate = candidate
        self.registered = registered
        self.records = 0
        self.redecided = 0
        self.unchanged = 0
        self.changes: dict[tuple[str, str], Group] = {}
        self.by_code: dict[tuple[str, str, str], Group] = {}
        self.by_rule: dict[tuple[str, str, str, str], Group] = {}
        self.not_redecidable: Counter[str] = Counter()
        self.not_redecidable_examples: dict[str, list[str]] = {}
        # Records share few contexts: one result per (reasons, context, decided) key.
        self._memo: dict[tuple[Any, ...], Judged] = {}
        self._scoped = baseline.scoped or candidate.scoped

    def _skip(self, reason: str, record_id: str) -> None:
        self.not_redecidable[reason] += 1
        ids = self.not_redecidable_examples.setdefault(reason, [])
        if len(ids) < EXAMPLES:
            ids.append(record_id)

    def add(self, data: Mapping[str, Any]) -> tuple[Action, Action] | None:
        """Re-decide one stored record (its canonical JSON, parsed): (before, after), or None
        when it is not re-decidable (counted with its reason)."""
        self.records += 1
        record_id = str(data.get("id", "?"))
        key = self._raw_key(data)
        memo = self._memo.get(key) if key is not None else None
        if memo is None:
            try:
                rebuilt = rebuild(data)
            except NotRedecidable as exc:
                memo = (str(exc), Action.ALLOW, Action.ALLOW, ())
            else:
                memo = self._judge(rebuilt, tuple(r.code for r in rebuilt.reasons))
            if key is not None and len(self._memo) < 65536:
                self._memo[key] = memo
        problem, before, after, per_code = memo
        if problem:
            self._skip(problem, record_id)
            return None
        self.redecided += 1
        if before is after:
            self.unchanged += 1
            return before, after
        example = _example(data, before, after)
        self.changes.setdefault((before.value, after.value), Group()).add(example)
        for code, old, new, rule, source in per_code:
            self.by_code.setdefault((code, old, new), Group()).add(example)
            self.by_rule.setdefault((rule, source, old, new), Group()).add(example)
        return before, after

    def _raw_key(self, data: Mapping[str, Any]) -> tuple[Any, ...] | None:
        """Every stored value :func:`rebuild` reads, as a hashable key (None: no memo).

        The directory and command are left out when no rule in either policy looks at them
        (then they cannot change a decision), so records of one kind share one entry."""
        try:
            subject = data.get("subject") or {}
            obj = data.get("object") or {}
            scoped = self._scoped
            return (
                data["component"],
                data["action"],
                data.get("would_action"),
                tuple(r["code"] for r in data["reasons"]),
                subject.get("actor"),
                subject.get("agent"),
                (data.get("policy") or {}).get("id"),
                bool(obj.get("follows")),
                obj.get("kind"),
                obj.get("tool"),
                obj.get("upstream_host"),
                tuple(obj.get("hosts") or ()),
                "hosts" in obj,  # a hook shell record without them: the older context
                tuple(obj.get("paths") or ()),
                tuple(obj.get("urls") or ()),
                obj.get("cwd") if scoped else obj.get("cwd") is None,
                obj.get("command") if scoped else None,
            )
        except (KeyError, TypeError, AttributeError):
            return None

    def _judge(self, rebuilt: Rebuilt, codes: tuple[str, ...]) -> Judged:
        same = rebuilt.decided
        for code in codes:
            if code not in self.registered:
                why = f"code {code} is no longer registered: re-detecting needs the raw text"
                return why, same, same, ()
        if rebuilt.unknown:
            for policy in (self.baseline, self.candidate):
                why = _depends_on(policy, codes, rebuilt.unknown)
                if why:
                    return why, same, same, ()
        before = decided_action(decide(self.baseline, rebuilt), rebuilt.component)
        if before is not rebuilt.decided:
            why = (
                "the current policy does not reproduce the recorded decision "
                "(the policy changed since it was recorded)"
            )
            return why, same, same, ()
        after = decided_action(decide(self.candidate, rebuilt), rebuilt.component)
        per_code: list[tuple[str, str, str, str, str]] = []
        if after is not before:
            # Which codes moved, and the candidate rule that now decides each.
            for reason in dict.fromkeys(rebuilt.reasons):
                one = Rebuilt(
                    rebuilt.component,
                    (reason,),
                    rebuilt.ctx,
                    same,
                    unknown_tool=rebuilt.unknown_tool,
                )
                old = decided_action(decide(self.baseline, one), rebuilt.component)
                new = decided_action(decide(self.candidate, one), rebuilt.component)
                if old is not new:
                    if rebuilt.unknown_tool:
                        rule, source = "settings.unknown_tool", ""
                    else:
                        rule, source = _rule_label(self.candidate, reason.code, rebuilt.ctx)
                    per_code.append((reason.code, old.value, new.value, rule, source))
        return "", before, after, tuple(per_code)

    def to_json(self) -> dict[str, Any]:
        """The report (schema in docs/policy.md); groups sorted by count, then name."""
        changed = sum(g.count for g in self.changes.values())
        return {
            "schema": SCHEMA,
            "records": self.records,
            "redecided": self.redecided,
            "unchanged": self.unchanged,
            "changed": changed,
            "changes": [
                {"from": k[0], "to": k[1], **g.to_json()}
                for k, g in sorted(self.changes.items(), key=lambda kv: (-kv[1].count, kv[0]))
            ],
            "by_code": [
                {"code": k[0], "from": k[1], "to": k[2], **g.to_json()}
                for k, g in sorted(self.by_code.items(), key=lambda kv: (-kv[1].count, kv[0]))
            ],
            "by_rule": [
                {"rule": k[0], "source": k[1], "from": k[2], "to": k[3], **g.to_json()}
                for k, g in sorted(self.by_rule.items(), key=lambda kv: (-kv[1].count, kv[0]))
            ],
            "not_redecidable": {
                "count": sum(self.not_redecidable.values()),
                "reasons": [
                    {
                        "reason": reason,
                        "count": n,
                        "examples": self.not_redecidable_examples.get(reason, []),
                    }
                    for reason, n in sorted(
                        self.not_redecidable.items(), key=lambda kv: (-kv[1], kv[0])
                    )
                ],
            },
        }


LAYERS: tuple[str, ...] = ("user", "system", "file")


def whatif_policies(
    candidate: Path, *, layer: str, home: Path, system_file: Path | None
) -> tuple[EffectivePolicy, EffectivePolicy]:
    """(baseline, candidate): the layers in force now (builtin, system, user; no project
    layer, no cache read or written), and the same with ``candidate`` in ``layer``: in place
    of the system or user file, or as the explicit ``--policy`` layer (``file``)."""
    from domestique.policy._load import LayerFile, build_policy, discover_layers

    layers = discover_layers(home=home, project_dir=None, policy_file=None, system_file=system_file)
    path = Path(os.path.abspath(candidate))
    kind = "system" if layer == "system" else "user" if layer == "user" else "file"
    replaced = [x for x in layers if x.kind != kind or kind == "file"]
    new = LayerFile(kind, path, required=True)
    order = {"builtin": 0, "system": 1, "user": 2, "file": 3}
    at = sum(1 for x in replaced if order.get(x.kind, 9) <= order[kind])
    with_candidate = [*replaced[:at], new, *replaced[at:]]
    return build_policy(layers), build_policy(with_candidate)


def candidate_errors(candidate: EffectivePolicy, path: Path) -> list[str]:
    """The candidate's errors, those in the candidate file first (``file:line:col: …``)."""
    own = [e for e in candidate.errors if e.startswith(f"{os.path.abspath(path)}:")]
    return own + [e for e in candidate.errors if e not in own]


def _example(data: Mapping[str, Any], before: Action, after: Action) -> dict[str, Any]:
    """A changed record as an example: id, time, component, codes and masked evidence only."""
    evidence: list[dict[str, str]] = []
    for r in data.get("reasons") or ():
        for e in r.get("evidence") or ():
            if len(evidence) < EXAMPLES:
                # Only the stored, masked preview and where it was: never a value.
                evidence.append(
                    {
                        "code": str(r.get("code", "")),
                        "where": str(e.get("where", "")),
                        "preview": str(e.get("preview", "")),
                    }
                )
    return {
        "id": str(data.get("id", "")),
        "time": str(data.get("time", "")),
        "component": str(data.get("component", "")),
        "from": before.value,
        "to": after.value,
        "codes": [str(r.get("code", "")) for r in data.get("reasons") or ()],
        "evidence": evidence,
    }
