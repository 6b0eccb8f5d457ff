"""The judgement the held-out and round case files share: an agent, the built-in policy, cwd a
git work tree (a ``.git`` folder is made in it)."""

from __future__ import annotations

from pathlib import Path

from domestique.guard import judge_command
from domestique.policy import EffectivePolicy
from domestique.records import Actor


def judge_as_agent(command: str, policy: EffectivePolicy, cwd: Path) -> tuple[str, tuple[str, ...]]:
    """The action and reason codes for ``command`` run by an agent in ``cwd``."""
    (cwd / ".git").mkdir(exist_ok=True)
    j = judge_command(command, policy=policy, actor=Actor.AGENT, cwd=str(cwd))
    return j.verdict.action.value, j.verdict.codes
