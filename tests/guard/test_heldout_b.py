"""Held-out set b of issue 17 (interpreters, links between steps, PowerShell, deny-not-ask).

Both sets were written before the fixes they measured (the second after the first round); the
figures are in docs/benchmarks.md, "Round 5b". Attacks deny for an agent (or ask, where
``ASK_OK`` says why); everyday look-alikes are allowed.
"""

from __future__ import annotations

import pytest
from heldout_b_cases import (
    ASK_OK,
    ASKED_LOOK_ALIKES,
    ATTACKS,
    ATTACKS_2,
    ATTACKS_3,
    BENIGN,
    BENIGN_2,
    BENIGN_3,
)

from domestique.guard import judge_command
from domestique.policy import EffectivePolicy, load_policy
from domestique.records import Actor


@pytest.fixture(scope="module")
def policy() -> EffectivePolicy:
    return load_policy()


def _cases(*tables: dict[str, list[str]]) -> list[object]:
    return [pytest.param(c, id=f"{n}-{cause}-{i}") for n, table in enumerate(tables, 1)
            for cause, cases in table.items() for i, c in enumerate(cases)]  # fmt: skip


def _action(command: str, policy: EffectivePolicy, cwd: str) -> tuple[str, tuple[str, ...]]:
    j = judge_command(command, policy=policy, actor=Actor.AGENT, cwd=cwd)
    return j.verdict.action.value, j.verdict.codes


@pytest.mark.parametrize("command", _cases(ATTACKS, ATTACKS_2, ATTACKS_3))
def test_attack_is_denied(command: str, policy: EffectivePolicy, tmp_path: object) -> None:
    action, codes = _action(command, policy, str(tmp_path))
    assert action == ("ask" if command in ASK_OK else "deny"), codes


@pytest.mark.parametrize("command", _cases(BENIGN, BENIGN_2, BENIGN_3))
def test_look_alike_is_allowed(command: str, policy: EffectivePolicy, tmp_path: object) -> None:
    action, codes = _action(command, policy, str(tmp_path))
    if command in ASKED_LOOK_ALIKES:
        assert action in ("allow", "ask"), codes  # never refused; see heldout_b_cases
    else:
        assert action == "allow", codes


def test_every_documented_ask_is_an_attack_of_the_sets() -> None:
    every = {c for table in (ATTACKS, ATTACKS_2) for cases in table.values() for c in cases}
    assert every >= ASK_OK
    benign = {c for t in (BENIGN, BENIGN_2) for cs in t.values() for c in cs}
    assert benign >= ASKED_LOOK_ALIKES
