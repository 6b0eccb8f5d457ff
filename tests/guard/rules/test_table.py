"""The command table: every row's examples, the loader's refusals, and every-match-fires."""

from __future__ import annotations

from pathlib import Path

import pytest

from domestique.guard import analyze_command, judge_command
from domestique.guard.env import GuardEnv
from domestique.guard.rules import registry, table
from domestique.guard.unfold import unfold_command
from domestique.policy import EffectivePolicy
from domestique.records import Actor

CASES = [
    (row, kind, c) for row in table.ROWS for kind in ("fires", "quiet") for c in getattr(row, kind)
]


def _row_matches(row: table.Row, command: str, cwd: str) -> bool:
    unfolded = unfold_command(command, cwd=cwd, env=GuardEnv.from_process())
    return any(
        inv.name in row.programs and row.matches(table.Args(inv.args, frozenset(inv.args)))
        for inv in unfolded.invocations
    )


@pytest.mark.parametrize(
    ("row", "kind", "command"), CASES, ids=[f"{r.id}:{k}:{i}" for i, (r, k, _) in enumerate(CASES)]
)
def test_row_example(row: table.Row, kind: str, command: str, project: Path) -> None:
    """A ``fires`` example matches its row and yields its code end to end; a ``quiet`` one does
    not match the row."""
    matched = _row_matches(row, command, str(project))
    if kind == "fires":
        assert matched, command
        codes = {r.code for r in analyze_command(command, cwd=str(project))}
        assert row.code in codes, (command, codes)
    else:
        assert not matched, command


def test_gate_is_derived_from_the_rows() -> None:
    """The table rule runs for exactly the programs its rows name (no name list kept by hand)."""
    (spec,) = [r for r in registry.RULES if r.id == "commands-table"]
    assert spec.programs == frozenset(p for row in table.ROWS for p in row.programs)
    assert spec.programs == frozenset(table.BY_PROGRAM)


def test_every_matching_row_fires(policy: EffectivePolicy, project: Path) -> None:
    """``unset HISTFILE DOMESTIQUE_HOME`` is a history wipe and guard tampering: both rows fire,
    so a person is refused, not asked (guard tampering denies for every actor)."""
    command = "unset HISTFILE DOMESTIQUE_HOME"
    codes = {r.code for r in analyze_command(command, cwd=str(project))}
    assert {"cmd.history_wipe", "cmd.guard_tamper"} <= codes
    human = judge_command(command, policy=policy, actor=Actor.HUMAN, cwd=str(project))
    assert human.verdict.action.value == "deny", human.verdict.codes


_GOOD = """
[[rule]]
id = "x"
code = "cmd.persistence"
programs = ["crontab"]
message = "m"
fires = ["crontab f"]
quiet = ["crontab -l"]
"""


def test_a_good_row_loads() -> None:
    (row,) = table.load_rows(_GOOD)
    assert row.id == "x"
    assert row.code == "cmd.persistence"


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (('code = "cmd.persistence"', 'code = "cmd.persistance"'), "no registered guard reason"),
        (('message = "m"', 'message = "m"\nany_argz = ["-l"]'), "unknown key 'any_argz'"),
        (('quiet = ["crontab -l"]', ""), "quiet is missing"),
        (('fires = ["crontab f"]', "fires = []"), "non-empty list"),
        (('message = "m"', 'message = "m"\nany_args = "NO_SUCH_SET"'), "no word set in vocab"),
        (('message = "m"', 'message = "m"\nargs_match = "DOWNLOADERS"'), "no pattern in vocab"),
        (('message = "m"', 'message = "m"\nargs_regex = "("'), "no valid pattern"),
        (('message = "m"', 'message = "m"\nmin_args = -1'), "whole number"),
        (('message = "m"', 'message = "m"\nunless = [{ code = "x" }]'), "conditions only"),
        (('id = "x"', 'id = "x'), "commands.toml"),
    ],
)
def test_a_bad_row_is_a_load_error(change: tuple[str, str], error: str) -> None:
    """A typo in the table fails loudly, naming the row; it never drops a rule silently."""
    text = _GOOD.replace(*change)
    with pytest.raises(table.TableError, match=error):
        table.load_rows(text)


def test_duplicate_ids_are_refused() -> None:
    with pytest.raises(table.TableError, match="duplicate row ids"):
        table.load_rows(_GOOD + _GOOD)


def test_every_matching_row_fires_within_one_program() -> None:
    """Two rows for one program that both match both fire (rows are not a first-match chain)."""
    rows = table.load_rows(
        _GOOD + _GOOD.replace('id = "x"', 'id = "y"').replace("cmd.persistence", "cmd.guard_tamper")
    )
    a = table.Args(["f"], frozenset(["f"]))
    assert [r.id for r in table.by_program(rows)["crontab"] if r.matches(a)] == ["x", "y"]
