"""Everyday developer commands: allowed for an agent, and at most 1 % of them stopped (issue 17)."""

from __future__ import annotations

from pathlib import Path

import pytest
from everyday_cases import (
    ALL,
    BORDERLINE_STOPPED,
    EVERYDAY,
    FIRST_ROUND,
    NEAR_ATTACKS,
    STOPPED_ON_PURPOSE,
)

from domestique.guard import judge_command
from domestique.policy import EffectivePolicy, load_policy
from domestique.records import Actor


@pytest.fixture(scope="module")
def policy() -> EffectivePolicy:
    return load_policy()


def _action(command: str, policy: EffectivePolicy, cwd: Path) -> tuple[str, tuple[str, ...]]:
    j = judge_command(command, policy=policy, actor=Actor.AGENT, cwd=str(cwd))
    return j.verdict.action.value, j.verdict.codes


@pytest.mark.parametrize(
    "command",
    [pytest.param(c, id=f"{tool}-{i}") for tool, cases in EVERYDAY.items()
     for i, c in enumerate(cases)],
)  # fmt: skip
def test_everyday_command_is_allowed(command: str, policy: EffectivePolicy, tmp_path: Path) -> None:
    """An agent's routine command in a project runs without a question."""
    action, codes = _action(command, policy, tmp_path)
    assert action == "allow", codes


@pytest.mark.parametrize("command", [*STOPPED_ON_PURPOSE, *BORDERLINE_STOPPED])
def test_stopped_on_purpose_is_still_stopped(
    command: str, policy: EffectivePolicy, tmp_path: Path
) -> None:
    """The few everyday-looking commands kept asked or denied stay so (their reason is given)."""
    action, codes = _action(command, policy, tmp_path)
    assert action in ("ask", "deny"), codes


def _stopped(commands: list[str], policy: EffectivePolicy, cwd: Path) -> list[str]:
    return [c for c in commands if _action(c, policy, cwd)[0] != "allow"]


def test_at_most_one_percent_of_everyday_work_is_stopped(
    policy: EffectivePolicy, tmp_path: Path
) -> None:
    """The goal of issue 17, on the first round (a sample of everyday work, the kept stops in)."""
    assert len(FIRST_ROUND) >= 300
    stopped = _stopped(FIRST_ROUND, policy, tmp_path)
    assert len(stopped) / len(FIRST_ROUND) <= 0.01, stopped


def test_only_the_kept_stops_are_stopped(policy: EffectivePolicy, tmp_path: Path) -> None:
    """Over all three rounds, what is stopped is exactly the written-down lists (no new stop)."""
    commands = [*ALL, *STOPPED_ON_PURPOSE, *BORDERLINE_STOPPED]
    assert len(set(commands)) == len(commands)
    kept = {*STOPPED_ON_PURPOSE, *BORDERLINE_STOPPED}
    assert set(_stopped(commands, policy, tmp_path)) == kept


@pytest.mark.parametrize(("command", "want"), list(NEAR_ATTACKS.items()))
def test_the_same_shape_pointed_elsewhere_is_still_stopped(
    command: str, want: str, policy: EffectivePolicy, tmp_path: Path
) -> None:
    """Each allowance is narrow: home deletes through ``..`` deny, other places still ask."""
    action, codes = _action(command, policy, tmp_path)
    assert action == "deny" if want == "deny" else action in ("ask", "deny"), codes
