"""Allow rules for a false positive: which codes can be allowed, the narrowest rule, its TOML.

Pure: no file I/O. ``domestique explain`` shows the rule that would allow a decision and
``domestique allow`` writes it (into the user layer: a project layer may only tighten).

Scopes, narrowest first:

- ``once``: this exact command line, in this repository (``commands`` and ``projects``);
- ``repo``: these reason codes in this repository (``projects``);
- ``user``: these reason codes for this user everywhere.

Codes that mean Domestique could not judge the input (protected codes) are never allowed, and a
code a project layer tightens cannot be loosened from another layer: both are named as refused.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from domestique.policy._model import (
    MATCH_FIELDS,
    DecisionContext,
    EffectivePolicy,
    is_protected,
)
from domestique.records import Action, Component

SCOPES: tuple[str, ...] = ("once", "repo", "user")
SCOPE_HELP = {
    "once": "this exact command line, in this repository",
    "repo": "these reason codes, in this repository",
    "user": "these reason codes, for you everywhere",
}


@dataclass(frozen=True, slots=True)
class AllowPlan:
    """The rule that would allow a decision, or why it cannot be written.

    ``rule`` is the rule table (TOML keys → values), None when nothing can be allowed;
    ``refused`` lists ``(code, why)`` for codes no allow rule may change.
    """

    scope: str
    codes: tuple[str, ...]
    rule: dict[str, Any] | None
    refused: tuple[tuple[str, str], ...] = ()
    problem: str = ""  # why no rule can be planned (e.g. "once" without a command)
    notes: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return self.rule is not None


def allow_components(component: Component) -> list[str]:
    """The components an allow rule names: a command is judged by ``check`` and by the
    hooks alike, so both get the same answer; the firewall only for the firewall."""
    if component is Component.PROXY:
        return [Component.PROXY.value]
    return [Component.GUARD.value, Component.HOOK.value]


def plan_allow(
    policy: EffectivePolicy,
    codes: Sequence[str],
    ctx: DecisionContext,
    *,
    scope: str,
    project_root: str | None,
    command: str | None,
    command_has_secret: bool = False,
) -> AllowPlan:
    """The narrowest allow rule for the stopping ``codes`` of one decision in ``ctx``."""
    if scope not in SCOPES:
        raise ValueError(f"unknown scope {scope!r}")
    wanted: list[str] = []
    refused: list[tuple[str, str]] = []
    for code in dict.fromkeys(codes):
        decision = policy.explain_code(code, ctx)
        if decision.action is Action.ALLOW:
            continue
        if is_protected(code):
            refused.append(
                (code, "means Domestique could not judge the input: it always stops; fix the cause")
            )
            continue
        if decision.project_rule is not None:
            refused.append(
                (
                    code,
                    f"tightened by project rule {decision.project_rule.id} at "
                    f"{decision.project_rule.source}: only that file can change it",
                )
            )
            continue
        wanted.append(code)
    if not wanted:
        problem = "nothing to allow: the policy already allows it" if not refused else ""
        return AllowPlan(scope, (), None, tuple(refused), problem or "no code can be allowed")
    if scope in ("once", "repo") and ctx.component is Component.PROXY:
        return AllowPlan(
            scope,
            tuple(wanted),
            None,
            tuple(refused),
            "the firewall does not know which repository a request comes from: use --user",
        )
    if scope in ("once", "repo") and not project_root:
        return AllowPlan(scope, tuple(wanted), None, tuple(refused), "no repository to scope to")
    if scope == "once":
        if not command:
            return AllowPlan(
                scope, tuple(wanted), None, tuple(refused), "no command line to allow once"
            )
        if command_has_secret:
            return AllowPlan(
                scope,
                tuple(wanted),
                None,
                tuple(refused),
                "the command holds a value that looks like a secret; Domestique does not copy "
                "it into a policy file: use --repo or --user",
            )
    rule: dict[str, Any] = {
        "id": rule_id(wanted, scope, project_root, command),
        "description": f"allowed by `domestique allow --{scope}`: {SCOPE_HELP[scope]}",
        "codes": list(wanted),
        "action": Action.ALLOW.value,
        "components": allow_components(ctx.component),
    }
    if scope in ("once", "repo"):
        rule["projects"] = [project_root]
    if scope == "once":
        rule["commands"] = [command]
    return AllowPlan(scope, tuple(wanted), rule, tuple(refused))


def rule_id(codes: Sequence[str], scope: str, project_root: str | None, command: str | None) -> str:
    """``allow-<scope>-<first code>-<6 hex>``: readable, and unique per what it allows."""
    digest = hashlib.sha256(
        json.dumps([sorted(codes), scope, project_root, command]).encode()
    ).hexdigest()[:6]
    first = codes[0].replace("*", "any")
    return f"allow-{scope}-{first}-{digest}"


def _toml_value(value: object) -> str:
    if isinstance(value, str):
        # JSON string escapes (\", \\, \n, \uXXXX) are valid TOML basic-string escapes.
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def render_rule(rule: Mapping[str, Any], comment: Sequence[str] = ()) -> str:
    """A ``[[rules]]`` table in the order a person writes it, led by ``# comment`` lines."""
    order = ("id", "description", "codes", "action", *MATCH_FIELDS)
    lines = [f"# {c}".rstrip() for text in comment for c in text.splitlines()]
    lines.append("[[rules]]")
    lines += [f"{key} = {_toml_value(rule[key])}" for key in order if key in rule]
    return "\n".join(lines) + "\n"


def comment_text(text: str, limit: int = 160) -> str:
    """One line, no control characters, at most ``limit`` characters (for a ``#`` comment)."""
    flat = "".join(ch if ch.isprintable() else " " for ch in text)
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
