"""``domestique codes``: every reason code and its meaning, or one code explained.

    domestique codes [--markdown]       every code (``--markdown``: docs/reason-codes.md)
    domestique codes CODE [--json]      one code: its meaning, whether it can be allowed, the
                                        rules of the effective policy that name it, and the
                                        action it gets in each component for agents and people

Exit 0; 2 for a code that is not registered (with the closest codes).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from domestique.reason_codes import registry, render_markdown


def describe(code: str) -> dict[str, Any]:
    """What ``codes CODE --json`` prints. KeyError for an unregistered code."""
    from domestique.policy import DecisionContext, is_protected, load_policy
    from domestique.records import JUDGING_COMPONENTS, Actor

    rc = registry()[code]
    policy = load_policy(project_dir=Path.cwd())
    rules = [
        {
            "id": rule.id,
            "layer": rule.layer,
            "source": rule.source,
            "action": rule.action.value,
            "codes": list(rule.codes),
            **{k: v for k, v in rule.match.to_json().items() if k != "codes"},
        }
        for rule in (*policy.rules, *policy.project_rules)
        if rule.specificity(code) is not None
    ]
    actions: dict[str, dict[str, str]] = {}
    for component in JUDGING_COMPONENTS:
        actions[component.value] = {}
        for actor in Actor:
            decision = policy.explain_code(code, DecisionContext(component, actor))
            actions[component.value][actor.value] = (
                f"{decision.action.value} ({decision.decided_by})"
            )
    return {
        "code": code,
        "meaning": rc.meaning,
        "family": code.split(".", 1)[0],
        "protected": is_protected(code),
        "can_be_allowed": not is_protected(code),
        "policy_valid": policy.valid,
        "actions": actions,
        "rules": rules,
    }


def _text(data: dict[str, Any]) -> str:
    lines = [f"{data['code']}: {data['meaning']}"]
    if data["protected"]:
        lines.append(
            "  always stops: it means Domestique could not judge the input; no rule can allow it"
        )
    if not data["policy_valid"]:
        lines.append("  the effective policy is INVALID: every decision stops (policy check)")
    lines.append("  action in the effective policy (agent / human):")
    for component, by_actor in data["actions"].items():
        lines.append(f"    {component:<6} agent: {by_actor['agent']}")
        lines.append(f"    {'':<6} human: {by_actor['human']}")
    lines.append(
        "  rules that name it (resolution order):" if data["rules"] else "  no rule names it"
    )
    for rule in data["rules"]:
        scope = ", ".join(
            f"{k}={','.join(v)}" for k, v in rule.items() if isinstance(v, list) and k != "codes"
        )
        lines.append(
            f"    {rule['action']:<6} {rule['id']} [{rule['layer']}] {rule['source']}"
            + (f" ({scope})" if scope else "")
        )
    if data["can_be_allowed"]:
        lines.append(
            "  a false positive? domestique explain RECORD-ID shows why; domestique allow "
            "writes the rule"
        )
    return "\n".join(lines) + "\n"


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="domestique codes", description=__doc__)
    parser.add_argument("code", nargs="?", help="one reason code to explain")
    parser.add_argument("--markdown", action="store_true", help="print docs/reason-codes.md")
    parser.add_argument("--json", action="store_true", help="with CODE: one JSON object")
    args = parser.parse_args(argv)
    if args.markdown:
        sys.stdout.write(render_markdown())
        return 0
    if args.code:
        try:
            data = describe(args.code)
        except KeyError:
            import difflib

            close = difflib.get_close_matches(args.code, list(registry()), n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            sys.stderr.write(f"domestique codes: unknown reason code {args.code!r}{hint}\n")
            return 2
        if args.json:
            sys.stdout.write(json.dumps(data, indent=2) + "\n")
        else:
            sys.stdout.write(_text(data))
        return 0
    for code, rc in sorted(registry().items()):
        sys.stdout.write(f"{code}\t{rc.meaning}\n")
    return 0
