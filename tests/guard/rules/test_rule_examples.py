"""Every guard rule written as code has examples, run one rule at a time through its own gate."""

from __future__ import annotations

import tomllib
from importlib.resources import files
from pathlib import Path

import pytest

from domestique.guard.env import GuardEnv
from domestique.guard.rules import judge_unfolded, registry
from domestique.guard.unfold import unfold_command

EXAMPLES = tomllib.loads(files("domestique.guard.rules").joinpath("examples.toml").read_text())
CODE_RULES = sorted(
    [r.id for r in registry.RULES if r.id != "commands-table"] + [r.id for r in registry.LINE_RULES]
)
CASES = [
    (rid, kind, c)
    for rid in CODE_RULES
    for kind in ("fires", "quiet")
    for c in EXAMPLES.get(rid, {}).get(kind, ())
]


def test_every_code_rule_has_both_kinds_of_example() -> None:
    """A rule without must-fire and must-stay-quiet examples is unfinished; no stale entries."""
    for rid in CODE_RULES:
        assert EXAMPLES.get(rid, {}).get("fires"), rid
        assert EXAMPLES.get(rid, {}).get("quiet"), rid
    assert set(EXAMPLES) == set(CODE_RULES)


@pytest.mark.parametrize(
    ("rule_id", "kind", "command"), CASES, ids=[f"{r}:{k}:{i}" for i, (r, k, _) in enumerate(CASES)]
)
def test_rule_example(rule_id: str, kind: str, command: str, project: Path, home: Path) -> None:
    """The rule alone (through its derived gate) yields a hit on ``fires``, none on ``quiet``."""
    env = GuardEnv.from_process()
    unfolded = unfold_command(command, cwd=str(project), env=env)
    hits, _ = judge_unfolded(
        command,
        unfolded,
        cwd=str(project),
        env=env,
        only=frozenset({rule_id}),
    )
    if kind == "fires":
        assert hits, command
    else:
        assert not hits, (command, [h.code for h in hits])


def test_registering_a_rule_twice_fails() -> None:
    """Two rules with one id would shadow each other's examples: refused at import."""
    fn = registry.RULES[0].fn
    with pytest.raises(ValueError, match="registered twice"):
        registry.rule(programs={"x"}, rule_id=registry.RULES[0].id)(fn)


def test_a_gate_names_only_known_facts() -> None:
    with pytest.raises(ValueError, match="unknown gate facts"):
        registry.rule(programs=None, when="argz")
