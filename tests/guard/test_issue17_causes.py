"""The causes of the misses and false blocks of issue 17, many variants each (written here)."""

from __future__ import annotations

import pytest
from issue17_cases import ATTACKS, BENIGN, STOPPED

from domestique.guard import judge_command
from domestique.policy import EffectivePolicy, load_policy
from domestique.records import Actor


@pytest.fixture(scope="module")
def policy() -> EffectivePolicy:
    return load_policy()


def _cases(table: dict[str, list[str]]) -> list[object]:
    return [pytest.param(c, id=f"{cause}-{i}") for cause, cases in table.items()
            for i, c in enumerate(cases)]  # fmt: skip


def _action(command: str, policy: EffectivePolicy, cwd: str) -> tuple[str, tuple[str, ...]]:
    j = judge_command(command, policy=policy, actor=Actor.AGENT, cwd=cwd)
    return j.verdict.action.value, j.verdict.codes


@pytest.mark.parametrize("command", _cases(ATTACKS))
def test_attack_is_denied(command: str, policy: EffectivePolicy, tmp_path: object) -> None:
    action, codes = _action(command, policy, str(tmp_path))
    assert action == "deny", codes


@pytest.mark.parametrize("command", _cases(STOPPED))
def test_ambiguous_is_at_least_asked(
    command: str, policy: EffectivePolicy, tmp_path: object
) -> None:
    action, codes = _action(command, policy, str(tmp_path))
    assert action in ("ask", "deny"), codes


@pytest.mark.parametrize("command", _cases(BENIGN))
def test_everyday_command_is_allowed(
    command: str, policy: EffectivePolicy, tmp_path: object
) -> None:
    action, codes = _action(command, policy, str(tmp_path))
    assert action == "allow", codes


def test_every_matching_command_rule_fires(policy: EffectivePolicy, tmp_path: object) -> None:
    """W1: ``unset HISTFILE DOMESTIQUE_HOME`` is a history wipe *and* guard tampering, and a
    person is refused (guard_tamper denies people too), not only asked (history_wipe)."""
    command = "unset HISTFILE DOMESTIQUE_HOME"
    agent = judge_command(command, policy=policy, actor=Actor.AGENT, cwd=str(tmp_path))
    assert {"cmd.history_wipe", "cmd.guard_tamper"} <= set(agent.verdict.codes)
    human = judge_command(command, policy=policy, actor=Actor.HUMAN, cwd=str(tmp_path))
    assert human.verdict.action.value == "deny", human.verdict.codes
