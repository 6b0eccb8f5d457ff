"""The effective policy: rules in resolution order, settings, and the decision on reasons.

Pure: no file I/O. :mod:`domestique.policy._load` builds an :class:`EffectivePolicy` from the
layers; this module answers ``action_for(code, ctx)`` and ``decide(reasons, ctx)``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase

from domestique.digest import sha256
from domestique.frozen_class import dataclass, field
from domestique.records import (
    Action,
    Actor,
    Component,
    PolicyRef,
    Reason,
    Verdict,
    canonical_json,
    most_severe,
)

TYPE_CHECKING = False  # not typing's: a hook deciding in-process does not load typing
if TYPE_CHECKING:
    from typing import Any

POLICY_VERSION = 1

# Codes whose action can never drop below deny/block: the ones that mean "we could not judge"
# (an unparsable body, an unknown route or event, a failed write) or "we cannot redact it".
# The firewall and the hooks stop on them whatever the policy says; refusing them in a policy
# file says so at load time instead of silently ignoring the rule.
PROTECTED_PREFIXES: tuple[str, ...] = ("engine.",)
PROTECTED_CODES: frozenset[str] = frozenset(
    {
        "policy.invalid",
        "audit.write_failed",
        "proxy.unknown_route",
        "proxy.unsupported_encoding",
        "proxy.malformed_body",
        "proxy.truncated_body",
        "proxy.nesting_too_deep",
        "proxy.body_too_large",
        "proxy.decompression_limit",
        "proxy.secret_in_signed_part",
        "proxy.secret_in_path",
        "proxy.unredactable_part",
        "proxy.secret_in_header",
        "hook.malformed_input",
        "hook.unknown_event",
        "hook.unknown_host",
        "hook.import_failed",
    }
)
# The one allowed relaxation: a person at a terminal may be asked about an unparsable command.
HUMAN_ASK_CODE = "engine.parse_error"

MATCH_FIELDS: tuple[str, ...] = (
    "components",
    "actors",
    "agents",
    "tools",
    "hosts",
    "paths",
    "projects",
    "commands",
)
# Fields that scope a rule to one repository or one exact command (``domestique allow``).
SCOPE_FIELDS: tuple[str, ...] = ("projects", "commands")

# ``[settings] mode``: "enforce" (the default) acts on every decision; "monitor" decides and
# records everything but enforces only errors (the protected codes above), for a roll-out.
ENFORCE, MONITOR = "enforce", "monitor"
MODES: tuple[str, ...] = (ENFORCE, MONITOR)


def is_protected(code: str) -> bool:
    """True for codes that always stop (engine.*, :data:`PROTECTED_CODES`)."""
    return code in PROTECTED_CODES or code.startswith(PROTECTED_PREFIXES)


def stop_for(component: Component) -> Action:
    """The word a component stops with: block for the firewall, deny for guard and hooks."""
    return Action.BLOCK if component is Component.PROXY else Action.DENY


def normalize(action: Action, component: Component) -> Action:
    """deny and block are one severity; each component reports its own word for it."""
    if action in (Action.DENY, Action.BLOCK):
        return stop_for(component)
    return action


@dataclass(frozen=True, slots=True)
class DecisionContext:
    """What a decision is about, beyond its reason codes."""

    component: Component
    actor: Actor = Actor.AGENT
    agent: str | None = None
    tool: str | None = None  # hooks: the host's tool name
    hosts: tuple[str, ...] = ()  # network destinations involved
    paths: tuple[str, ...] = ()  # file paths involved
    project: str | None = None  # the directory the decision was asked in (cwd)
    command: str | None = None  # the command line judged (guard and shell hooks)


def code_pattern_specificity(pattern: str, code: str) -> int | None:
    """How specifically ``pattern`` names ``code``; None when it does not match.

    Exact code > longer prefix glob (``a.b.*``) > shorter (``a.*``) > ``*``.
    """
    if pattern == code:
        return 1_000
    if pattern == "*":
        return 0
    if pattern.endswith(".*") and code.startswith(pattern[:-1]):
        return pattern.count(".")
    return None


def _expand_path_glob(pattern: str) -> str:
    return os.path.expanduser(pattern) if pattern.startswith("~") else pattern


def _in_project(directory: str, globs: Sequence[str]) -> bool:
    """True when ``directory`` or one of its parents matches one of ``globs``."""
    full = os.path.normpath(os.path.expanduser(directory))
    while True:
        if any(fnmatchcase(full, g) for g in globs):
            return True
        parent = os.path.dirname(full)
        if parent == full:
            return False
        full = parent


@dataclass(frozen=True, slots=True)
class Match:
    """The context conditions of a rule, or of one of its exceptions. Empty field = any."""

    codes: tuple[str, ...] = ()  # only used in exceptions
    components: frozenset[str] = frozenset()
    actors: frozenset[str] = frozenset()
    agents: frozenset[str] = frozenset()
    tools: frozenset[str] = frozenset()
    hosts: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    projects: tuple[str, ...] = ()
    commands: frozenset[str] = frozenset()
    _paths_expanded: tuple[str, ...] = field(default=(), compare=False, repr=False)
    _projects_expanded: tuple[str, ...] = field(default=(), compare=False, repr=False)

    @classmethod
    def build(cls, data: Mapping[str, Any]) -> Match:
        paths = tuple(data.get("paths", ()))
        projects = tuple(data.get("projects", ()))
        return cls(
            codes=tuple(data.get("codes", ())),
            components=frozenset(data.get("components", ())),
            actors=frozenset(data.get("actors", ())),
            agents=frozenset(data.get("agents", ())),
            tools=frozenset(data.get("tools", ())),
            hosts=tuple(h.lower() for h in data.get("hosts", ())),
            paths=paths,
            projects=projects,
            commands=frozenset(data.get("commands", ())),
            _paths_expanded=tuple(_expand_path_glob(p) for p in paths),
            _projects_expanded=tuple(os.path.normpath(_expand_path_glob(p)) for p in projects),
        )

    @property
    def scoped(self) -> bool:
        """True when the match names a project or an exact command."""
        return bool(self.projects or self.commands)

    def applies(self, code: str, ctx: DecisionContext, host: str | None, path: str | None) -> bool:
        """True when every condition given holds for one host and one path of the context."""
        if self.codes and not any(
            code_pattern_specificity(p, code) is not None for p in self.codes
        ):
            return False
        if self.components and ctx.component.value not in self.components:
            return False
        if self.actors and ctx.actor.value not in self.actors:
            return False
        if self.agents and ctx.agent not in self.agents:
            return False
        if self.tools and ctx.tool not in self.tools:
            return False
        if self.hosts and (
            host is None or not any(fnmatchcase(host.lower(), g) for g in self.hosts)
        ):
            return False
        if self.paths:
            if path is None:
                return False
            full = os.path.expanduser(path) if path.startswith("~") else path
            if not any(fnmatchcase(full, g) for g in self._paths_expanded):
                return False
        if self.projects and (
            ctx.project is None or not _in_project(ctx.project, self._projects_expanded)
        ):
            return False
        return not (self.commands and ctx.command not in self.commands)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.codes:
            out["codes"] = list(self.codes)
        for name in MATCH_FIELDS:
            value = getattr(self, name)
            if value:
                out[name] = sorted(value) if isinstance(value, frozenset) else list(value)
        return out


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule after validation. ``layer`` is the kind of layer it came from."""

    id: str
    codes: tuple[str, ...]
    action: Action
    match: Match
    exceptions: tuple[Match, ...] = ()
    description: str = ""
    layer: str = "builtin"
    source: str = ""  # "file:line" of the rule, for explanations; not part of the hash

    def specificity(self, code: str) -> int | None:
        best: int | None = None
        for pattern in self.codes:
            s = code_pattern_specificity(pattern, code)
            if s is not None and (best is None or s > best):
                best = s
        return best

    def applies(self, code: str, ctx: DecisionContext, host: str | None, path: str | None) -> bool:
        if not self.match.applies(code, ctx, host, path):
            return False
        return not any(e.applies(code, ctx, host, path) for e in self.exceptions)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "codes": list(self.codes),
            "action": self.action.value,
            "layer": self.layer,
        }
        if self.description:
            out["description"] = self.description
        out.update(self.match.to_json())
        if self.exceptions:
            out["except"] = [e.to_json() for e in self.exceptions]
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any], *, source: str = "") -> Rule:
        """Rebuild from :meth:`to_json` (the validated form; the cache stores this)."""
        return cls(
            id=str(data["id"]),
            codes=tuple(data["codes"]),
            action=Action(data["action"]),
            match=Match.build({k: data[k] for k in MATCH_FIELDS if k in data}),
            exceptions=tuple(Match.build(e) for e in data.get("except", ())),
            description=str(data.get("description", "")),
            layer=str(data.get("layer", "builtin")),
            source=source,
        )


@dataclass(frozen=True, slots=True)
class PolicySettings:
    """``[settings]``: the action for a reason no rule matches; for a host tool not known;
    the mode (``enforce`` or ``monitor``)."""

    unmatched: Action = Action.DENY
    unknown_tool: Action = Action.ASK
    mode: str = ENFORCE

    @property
    def monitor(self) -> bool:
        return self.mode == MONITOR

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "unmatched": self.unmatched.value,
            "unknown_tool": self.unknown_tool.value,
        }
        if self.mode != ENFORCE:
            # Only when set: an enforcing policy keeps the sha256 it had before modes existed.
            out["mode"] = self.mode
        return out


@dataclass(frozen=True, slots=True)
class CodeDecision:
    """How the policy decides one reason code in one context, and which rule decided it.

    ``action`` is what the policy says (before monitor mode); ``rule`` the base rule that
    matched (None: ``settings.unmatched``); ``project_rule`` a project rule that raised the
    action; ``clamped`` when a protected code was raised to deny whatever the rule said.
    """

    code: str
    action: Action
    rule: Rule | None = None
    project_rule: Rule | None = None
    clamped: bool = False

    @property
    def decided_by(self) -> str:
        """A short label naming what decided: ``rule ID``, or the setting or clamp."""
        if self.project_rule is not None:
            return f"rule {self.project_rule.id}"
        if self.clamped:
            return "always stops: Domestique could not judge the input"
        if self.rule is not None:
            return f"rule {self.rule.id}"
        return "no rule matches: settings.unmatched"

    @property
    def deciding_rule(self) -> Rule | None:
        return self.project_rule if self.project_rule is not None else self.rule


@dataclass(frozen=True, slots=True)
class LayerInfo:
    """One layer that was read: its kind (builtin|system|user|file|project) and path."""

    kind: str
    path: str

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "path": self.path}


def policy_document(
    settings: PolicySettings, rules: Sequence[Rule], project_rules: Sequence[Rule]
) -> dict[str, Any]:
    """The effective policy as data: what ``policy show`` prints and its sha256 covers."""
    return {
        "version": POLICY_VERSION,
        "settings": settings.to_json(),
        "rules": [r.to_json() for r in rules],
        "project_rules": [r.to_json() for r in project_rules],
    }


class EffectivePolicy:
    """The merged policy that decides. Built by :func:`domestique.policy.load_policy`.

    ``valid`` is False when any layer was invalid or unreadable: then every decision stops
    (deny, or block for the firewall) with reason ``policy.invalid`` citing the first error.
    """

    __slots__ = (
        "_cache",
        "_labels",
        "_scoped",
        "errors",
        "layers",
        "project_rules",
        "ref",
        "rules",
        "settings",
        "valid",
    )

    def __init__(
        self,
        *,
        settings: PolicySettings,
        rules: Sequence[Rule],
        project_rules: Sequence[Rule] = (),
        layers: Sequence[LayerInfo] = (),
        errors: Sequence[str] = (),
        ref: PolicyRef | None = None,
    ) -> None:
        """``ref`` skips hashing the document: the loader passes it from its verified cache."""
        self.errors: tuple[str, ...] = tuple(errors)
        self.valid: bool = not self.errors
        self.layers: tuple[LayerInfo, ...] = tuple(layers)
        self.settings = settings if self.valid else PolicySettings()
        self.rules: tuple[Rule, ...] = tuple(rules) if self.valid else ()
        self.project_rules: tuple[Rule, ...] = tuple(project_rules) if self.valid else ()
        if ref is not None:
            self.ref = ref
        elif self.valid:
            digest = sha256(canonical_json(self.document())).hexdigest()
            kinds = "+".join(dict.fromkeys(layer.kind for layer in self.layers)) or "empty"
            self.ref = PolicyRef(id=kinds, sha256=digest)
        else:
            digest = sha256(canonical_json({"invalid": list(self.errors)})).hexdigest()
            self.ref = PolicyRef(id="invalid", sha256=digest)
        self._cache: dict[tuple[str, DecisionContext], Action] = {}
        self._labels: dict[tuple[str, DecisionContext], str] = {}
        # Whether any rule looks at the project or the command: if none does, they are left
        # out of the cache key (one entry per code and context, not per command line).
        self._scoped = any(
            r.match.scoped or any(e.scoped for e in r.exceptions)
            for r in (*self.rules, *self.project_rules)
        )

    @classmethod
    def invalid(cls, errors: Sequence[str], layers: Sequence[LayerInfo] = ()) -> EffectivePolicy:
        return cls(settings=PolicySettings(), rules=(), layers=layers, errors=errors or ["?"])

    def document(self) -> dict[str, Any]:
        return policy_document(self.settings, self.rules, self.project_rules)

    # -- deciding ----------------------------------------------------------------------------
    def invalid_reason(self) -> Reason:
        first = self.errors[0] if self.errors else "policy invalid"
        more = f" (+{len(self.errors) - 1} more)" if len(self.errors) > 1 else ""
        # An enrolled endpoint without the bundle its organisation requires says so by code.
        code = "hub.bundle.required" if ": hub.bundle.required: " in first else "policy.invalid"
        return Reason(code, f"policy invalid, failing closed: {first}{more}")

    def rule_for(self, code: str, ctx: DecisionContext) -> Rule | None:
        """The base rule that decides ``code`` for a context with at most one host and path."""
        host = ctx.hosts[0] if ctx.hosts else None
        path = ctx.paths[0] if ctx.paths else None
        return self._base_rule(code, ctx, host, path)

    def _base_rule(
        self, code: str, ctx: DecisionContext, host: str | None, path: str | None
    ) -> Rule | None:
        best: Rule | None = None
        best_spec = -1
        for rule in self.rules:  # resolution order: later layer, then later rule, wins ties
            spec = rule.specificity(code)
            if spec is None or spec < best_spec:
                continue
            if rule.applies(code, ctx, host, path):
                best, best_spec = rule, spec
        return best

    def _decision_one(
        self, code: str, ctx: DecisionContext, host: str | None, path: str | None
    ) -> CodeDecision:
        rule = self._base_rule(code, ctx, host, path)
        action = rule.action if rule is not None else self.settings.unmatched
        clamped = False
        if is_protected(code) and action.severity < Action.DENY.severity:
            # The one relaxation: a rule for people only may ask about an unparsable command.
            human_ask = (
                code == HUMAN_ASK_CODE
                and action is Action.ASK
                and ctx.actor is Actor.HUMAN
                and rule is not None
                and rule.match.actors == frozenset({Actor.HUMAN.value})
            )
            if not human_ask:
                action, clamped = Action.DENY, True
        # Project rules may only tighten: applied last, they raise the action, never lower it.
        raised_by: Rule | None = None
        for prule in self.project_rules:
            if prule.specificity(code) is not None and prule.applies(code, ctx, host, path):
                raised = most_severe((action, prule.action))
                if raised.severity > action.severity:
                    raised_by = prule
                action = raised
        return CodeDecision(code, normalize(action, ctx.component), rule, raised_by, clamped)

    def _action_one(
        self, code: str, ctx: DecisionContext, host: str | None, path: str | None
    ) -> Action:
        return self._decision_one(code, ctx, host, path).action

    def explain_code(self, code: str, ctx: DecisionContext) -> CodeDecision:
        """The policy's action for ``code`` (before monitor mode) and the rule that decided.

        Several hosts or paths: the decision for the one that gives the most severe action.
        An invalid policy: stop, decided by no rule.
        """
        if not self.valid:
            return CodeDecision(code, stop_for(ctx.component), clamped=True)
        hosts: tuple[str | None, ...] = ctx.hosts or (None,)
        paths: tuple[str | None, ...] = ctx.paths or (None,)
        best: CodeDecision | None = None
        for h in hosts:
            for p in paths:
                one = self._decision_one(code, ctx, h, p)
                if best is None or one.action.severity > best.action.severity:
                    best = one
        assert best is not None
        return best

    def policy_action_for(self, code: str, ctx: DecisionContext) -> Action:
        """The action the rules give ``code`` (several hosts or paths: the most severe over
        each), whatever the mode. ``scan``, ``explain`` and project-layer checks use it."""
        if not self.valid:
            return stop_for(ctx.component)
        ctx = self._unscoped(ctx)
        key = (code, ctx)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        hosts: tuple[str | None, ...] = ctx.hosts or (None,)
        paths: tuple[str | None, ...] = ctx.paths or (None,)
        action = most_severe(
            [self._action_one(code, ctx, h, p) for h in hosts for p in paths], Action.ALLOW
        )
        action = normalize(action, ctx.component)
        if len(self._cache) < 4096:
            self._cache[key] = action
        return action

    def _enforced(self, code: str, action: Action, ctx: DecisionContext) -> Action:
        """Monitor mode enforces errors only (protected codes); everything else passes."""
        if self.settings.monitor and not is_protected(code):
            return Action.ALLOW
        return action

    def action_for(self, code: str, ctx: DecisionContext) -> Action:
        """The action to enforce for one reason code. Several hosts or paths: the most severe
        over each. In monitor mode only errors (protected codes) stop; anything else is allow
        (:meth:`policy_action_for` gives what the rules say)."""
        return self._enforced(code, self.policy_action_for(code, ctx), ctx)

    def decide(self, reasons: Sequence[Reason], ctx: DecisionContext) -> Verdict:
        """The verdict on ``reasons``: the most severe action over them; none ⇒ allow.

        An invalid policy stops everything (``policy.invalid`` first, then the reasons given).
        A reason whose action stops gets the deciding rule appended to its message (``(rule
        guard-deny-dangerous)``), so every deny or ask message names the rule. In monitor mode
        the verdict enforces only errors (protected codes) and ``Verdict.would`` carries what
        the policy decided ("would have denied").
        """
        if not self.valid:
            return Verdict(stop_for(ctx.component), (self.invalid_reason(), *reasons))
        actions = [self.policy_action_for(r.code, ctx) for r in reasons]
        decided = normalize(most_severe(actions), ctx.component)
        if decided.stops:
            reasons = tuple(
                self._cite_rule(r, ctx) if a.stops else r
                for r, a in zip(reasons, actions, strict=True)
            )
        if not self.settings.monitor:
            return Verdict(decided, tuple(reasons))
        enforced = normalize(
            most_severe(
                [self._enforced(r.code, a, ctx) for r, a in zip(reasons, actions, strict=True)]
            ),
            ctx.component,
        )
        if enforced is decided and enforced.stops:
            return Verdict(decided, tuple(reasons))  # an error: enforced in every mode
        return Verdict(enforced, tuple(reasons), would=decided)

    def _unscoped(self, ctx: DecisionContext) -> DecisionContext:
        """``ctx`` without project and command when no rule looks at them (one cache entry
        per code and context, not one per command line)."""
        if not self._scoped and (ctx.command is not None or ctx.project is not None):
            return DecisionContext(
                ctx.component, ctx.actor, ctx.agent, ctx.tool, ctx.hosts, ctx.paths
            )
        return ctx

    def _cite_rule(self, reason: Reason, ctx: DecisionContext) -> Reason:
        key = (reason.code, self._unscoped(ctx))
        label = self._labels.get(key)
        if label is None:
            label = self.explain_code(reason.code, ctx).decided_by
            if len(self._labels) < 4096:
                self._labels[key] = label
        return Reason(reason.code, f"{reason.message} ({label})", reason.evidence)

    def unknown_tool_action(self, ctx: DecisionContext) -> Action:
        """hooks: the action for a host tool the policy does not know (invalid ⇒ stop)."""
        if not self.valid:
            return stop_for(ctx.component)
        if self.settings.monitor:
            return Action.ALLOW
        return normalize(self.settings.unknown_tool, ctx.component)

    def unknown_tool_verdict(self, reason: Reason, ctx: DecisionContext) -> Verdict:
        """hooks: the verdict for a host tool the policy does not know; monitor mode records
        what would have happened."""
        if not self.valid:
            return Verdict(stop_for(ctx.component), (self.invalid_reason(), reason))
        decided = normalize(self.settings.unknown_tool, ctx.component)
        if decided.stops:
            reason = Reason(reason.code, f"{reason.message} (settings.unknown_tool)")
        if self.settings.monitor:
            return Verdict(Action.ALLOW, (reason,), would=decided)
        return Verdict(decided, (reason,))

    @property
    def scoped(self) -> bool:
        """True when a rule looks at the project directory or the exact command: callers
        then put them in the :class:`DecisionContext` (they cost a cache entry each)."""
        return self._scoped

    def __repr__(self) -> str:
        state = "valid" if self.valid else f"invalid ({len(self.errors)} errors)"
        return f"<EffectivePolicy {self.ref.id} {self.ref.sha256[:12]} {state}>"
