"""The fast path: plainly harmless commands, answered without the parser, never wrongly."""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from domestique.guard.fastpath import _ANY_ARGS, _SUBCOMMANDS, SAFE_CHARS, is_plainly_safe
from domestique.guard.judge import _analyze


def test_accepts_everyday_commands() -> None:
    """git status, ls -la, pytest -q and friends take the fast path."""
    for cmd in ("git status", "git diff --stat", "ls -la src", "pytest -q tests", "npm test"):
        assert is_plainly_safe(cmd), cmd


def test_rejects_anything_with_syntax_or_risk() -> None:
    """Pipes, quotes, variables, unknown programs, risky subcommands and paths go to the parser."""
    for cmd in (
        "git status | sh",
        "git push --force",
        "git branch -D x",
        "rm -rf /",
        "ls ~/.ssh",
        "echo $HOME",
        "ls 'a b'",
        "curl https://x",
        "git -c core.pager=sh log",
        "echo sh",
        "date --x=bash",
        "ls /etc/",
        "",
        "сurl x",
    ):
        assert not is_plainly_safe(cmd), cmd


_PROGRAMS = sorted(_ANY_ARGS | set(_SUBCOMMANDS))
_SUBS = sorted({s for subs in _SUBCOMMANDS.values() for s in subs})
_TOKEN = st.text(alphabet=sorted(SAFE_CHARS - {" "}), min_size=1, max_size=12)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(_PROGRAMS),
    st.lists(st.one_of(st.sampled_from(_SUBS), _TOKEN), max_size=5),
)
def test_fast_path_never_disagrees_with_the_parser(prog: str, args: list[str]) -> None:
    """Whatever the fast path accepts, the full analysis finds no reason either."""
    command = " ".join([prog, *args])
    if is_plainly_safe(command):
        reasons, *_ = _analyze(command, cwd="/work/repo", scanner=None, env=None)
        assert reasons == (), (command, [r.code for r in reasons])


def test_git_status_imports_nothing_heavy(tmp_path: object) -> None:
    """Judging git status in a fresh process loads no tree-sitter, RE2 or Aho-Corasick."""
    code = (
        "import sys\n"
        "from domestique.guard import judge_command\n"
        "from domestique.policy import EffectivePolicy, PolicySettings\n"
        "p = EffectivePolicy(settings=PolicySettings(), rules=())\n"
        "j = judge_command('git status', policy=p)\n"
        "assert j.fast and j.verdict.action.value == 'allow', j\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in "
        "('tree_sitter', 'tree_sitter_bash', 're2', 'ahocorasick', 'psutil')]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
