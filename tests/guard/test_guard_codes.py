"""Reason codes: every code the guard can emit is declared, and the policy decides each."""

from __future__ import annotations

import re
from pathlib import Path

from domestique.guard.codes import REASON_CODES
from domestique.policy import DecisionContext, EffectivePolicy
from domestique.records import Action, Actor, Component

GUARD_SRC = Path(__file__).resolve().parents[2] / "src" / "domestique" / "guard"


def test_codes_are_unique_and_dotted() -> None:
    """Each code is declared once, under cmd.*."""
    codes = [rc.code for rc in REASON_CODES]
    assert len(codes) == len(set(codes))
    assert all(re.fullmatch(r"cmd\.[a-z_]+(\.[a-z_]+)?", c) for c in codes)


def test_every_emitted_code_is_declared() -> None:
    """Every "cmd.…" literal in the guard's source (rules/ included) is a declared code."""
    declared = {rc.code for rc in REASON_CODES}
    used: set[str] = set()
    for path in GUARD_SRC.rglob("*.py"):
        if path.name in ("codes.py", "examples.py"):
            continue
        used |= set(re.findall(r"[\"'](cmd\.[a-z_.]+[a-z_])[\"']", path.read_text()))
    assert used <= declared, used - declared


def test_policy_decides_every_code(policy: EffectivePolicy) -> None:
    """No guard code falls to `unmatched`: each is ask or deny for agents, never allow."""
    ctx = DecisionContext(component=Component.GUARD, actor=Actor.AGENT)
    for rc in REASON_CODES:
        rule = policy.rule_for(rc.code, ctx)
        assert rule is not None, rc.code
        assert rule.id.startswith("guard-"), rc.code
        assert policy.action_for(rc.code, ctx) in (Action.ASK, Action.DENY), rc.code


def test_most_dangerous_codes_deny(policy: EffectivePolicy) -> None:
    """Download-to-shell, rm of /, reverse shells, exfiltration and tampering deny for everyone."""
    for actor in (Actor.AGENT, Actor.HUMAN):
        ctx = DecisionContext(component=Component.GUARD, actor=actor)
        for code in ("cmd.destructive.rm_root", "cmd.reverse_shell", "cmd.exfiltration",
                     "cmd.guard_tamper", "cmd.device_write"):  # fmt: skip
            assert policy.action_for(code, ctx) is Action.DENY
    agent = DecisionContext(component=Component.GUARD, actor=Actor.AGENT)
    assert policy.action_for("cmd.pipe_to_shell", agent) is Action.DENY
