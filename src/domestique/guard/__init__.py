"""The command guard: judge a shell command line before it runs, and who started it.

Public surface::

    judge_command(command, *, policy, actor, cwd, scanner, env) -> CommandJudgement
    analyze_command(command, *, cwd, scanner, env) -> reasons before policy
    command_record(judgement, ...) -> DecisionRecord
    identify_subject(pid=None, env=None) -> Subject
    GuardEnv.from_process() -> what the guard may know of the machine (HOME, TMPDIR,
        DOMESTIQUE_HOME, script reads); built once by a shell and passed as ``env``

Importing this package is cheap: the shell parser (tree-sitter) and the detection engine load
only when a command is not plainly harmless (see :mod:`domestique.guard.fastpath`).
"""

from __future__ import annotations

from domestique.guard.ancestry import identify_subject
from domestique.guard.env import GuardEnv
from domestique.guard.judge import CommandJudgement, analyze_command, command_record, judge_command

__all__ = [
    "CommandJudgement",
    "GuardEnv",
    "analyze_command",
    "command_record",
    "identify_subject",
    "judge_command",
]
