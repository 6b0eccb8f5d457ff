"""The command guard's shell parser, unfolder and judge on any command text.

Commands are drawn from a shell-token grammar (quotes, substitutions, here-documents, pipes,
``eval``/``bash -c``/``base64 -d`` wrappers, escapes, control bytes) and from byte mutations of
the seeds. Invariants: ``unfold_command`` never raises; ``judge_command`` never raises and
returns a verdict whose every reason code is registered; a stop (deny or ask) carries a reason;
an ``engine.*`` reason (an input that could not be judged) is never an allow; and
``rm -rf ~`` hidden behind any of the wrappers is never allowed.
"""

from __future__ import annotations

from functools import cache

from hypothesis import strategies as st

from domestique.guard.judge import judge_command
from domestique.guard.unfold import unfold_command
from domestique.policy import EffectivePolicy, load_policy
from domestique.reason_codes import is_known
from domestique.records import Action

from ._harness import Target, mutated

TOKENS = [
    "ls",
    "rm",
    "-rf",
    "~",
    "/",
    "git",
    "status",
    "echo",
    "cat",
    "curl",
    "http://127.0.0.1/x",
    "|",
    "||",
    "&&",
    ";",
    "&",
    "\n",
    "$(",
    ")",
    "`",
    "'",
    '"',
    "\\",
    "<<EOF\n",
    "\nEOF\n",
    "<<-'X'\n",
    "${HOME}",
    "$HOME",
    "${a:-b}",
    "$((1+2))",
    "<(",
    ">",
    ">>",
    "2>&1",
    "eval",
    "bash -c",
    "sh -c",
    "python3 -c",
    "base64 -d",
    "xargs",
    "env",
    "sudo",
    "{",
    "}",
    "(",
    ")",
    "#",
    "*",
    "?",
    "[",
    "]",
    "=",
    "a=b",
    "\t",
    " ",
    "\x00",
    "\x1b[0m",
    "é",
    "if",
    "then",
    "fi",
    "for",
    "do",
    "done",
    "function",
    "f()",
    "!",
    "~/.ssh/id_rsa",
    ".env",
    "AKIAZ3MHQX7B2LKWP4RN",
]
DANGER = "rm -rf ~"
WRAPPERS = [
    "{}",
    "bash -c '{}'",
    'sh -c "{}"',
    "eval '{}'",
    "echo ok; {}",
    "true && {}",
    "$({})",
    "echo cm0gLXJmIH4= | base64 -d | sh",
    "x='rm -rf'; $x ~",
    "env {}",
    "sudo {}",
]


@cache
def _policy() -> EffectivePolicy:
    import tempfile
    from pathlib import Path

    return load_policy(home=Path(tempfile.mkdtemp()), system_file=None, use_cache=False)


def _commands(corpus: list[bytes]) -> st.SearchStrategy[str]:
    grammar = st.lists(st.sampled_from(TOKENS) | st.text(max_size=4), max_size=24).map(" ".join)
    return st.one_of(
        grammar,
        mutated(corpus).map(lambda b: b.decode("utf-8", "replace")),
        st.sampled_from(WRAPPERS).map(lambda w: w.replace("{}", DANGER)),
    )


def check(command: str) -> None:
    unfold_command(command)
    judgement = judge_command(command, policy=_policy())
    verdict = judgement.verdict
    codes = [r.code for r in verdict.reasons]
    assert all(is_known(c) for c in codes), codes
    if verdict.action in (Action.DENY, Action.BLOCK, Action.ASK):
        assert codes, "a stop without a reason"
    if any(c.startswith("engine.") for c in codes):
        assert verdict.action in (Action.DENY, Action.BLOCK), "an unjudgeable command allowed"
    if any(w.replace("{}", DANGER) == command for w in WRAPPERS):
        assert verdict.action is not Action.ALLOW, f"allowed: {command!r}"


TARGET = Target(
    "shell",
    _commands,
    check,
    from_bytes=lambda b: b.decode("utf-8", "replace"),
    to_bytes=lambda s: s.encode("utf-8", "surrogatepass"),
)
