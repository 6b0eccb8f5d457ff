"""The policy loader on any bytes given as a ``--policy`` file.

Inputs are TOML-shaped token soups (tables, rules, settings, wrong types, unknown keys,
duplicate keys, deep inline tables) and byte mutations of valid seeds. Invariants:
``load_policy`` never raises; the result is either valid or invalid with every error located as
``file:line:col: message``; an invalid policy denies (its verdict for a harmless context is a
stop carrying ``policy.invalid``); a valid one still never lets a must-deny code through
(``engine.internal_error`` is never below deny).
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from hypothesis import strategies as st

from domestique.policy import DecisionContext, load_policy
from domestique.records import Action, Actor, Component, Reason

from ._harness import Target, mutated

LOCATED = re.compile(r"^.+:\d+:\d+: .+", re.DOTALL)
PIECES = [
    "version = 1\n",
    "[settings]\n",
    'unmatched = "allow"\n',
    'unmatched = "deny"\n',
    'mode = "monitor"\n',
    "[[rules]]\n",
    'id = "r1"\n',
    'id = "r1"\n',
    'codes = ["*"]\n',
    'codes = ["engine.*"]\n',
    'codes = ["secret.aws.access_key"]\n',
    "codes = 3\n",
    'action = "allow"\n',
    'action = "deny"\n',
    'action = "nope"\n',
    'components = ["proxy"]\n',
    'actors = ["human"]\n',
    'agents = ["claude-code"]\n',
    'hosts = ["*.example.com"]\n',
    'paths = ["~/.ssh/*"]\n',
    "[[rules.except]]\n",
    "unknown = true\n",
    "x = {a = {b = {c = 1}}}\n",
    "= \n",
    "[\n",
    '"\n',
    "'''\n",
    "\x00",
    "\xff",
    "é = 1\n",
    "codes = []\n",
    "[rules]\n",
]


def _files(corpus: list[bytes]) -> st.SearchStrategy[bytes]:
    soup = st.lists(st.sampled_from(PIECES), max_size=16).map(
        lambda p: "".join(p).encode("utf-8", "surrogateescape")
    )
    return st.one_of(soup, mutated(corpus), st.binary(max_size=64))


_DIR = Path(tempfile.mkdtemp(prefix="dq-fuzz-policy-"))


def check(data: bytes) -> None:
    path = _DIR / "policy.toml"
    path.write_bytes(data)
    policy = load_policy(home=_DIR, policy_file=path, system_file=None, use_cache=False)
    ctx = DecisionContext(Component.GUARD, Actor.AGENT)
    if not policy.valid:
        assert policy.errors
        for error in policy.errors:
            assert LOCATED.match(error), f"an error without file:line:col: {error!r}"
        verdict = policy.decide((), ctx)
        assert verdict.action in (Action.DENY, Action.BLOCK), "an invalid policy did not deny"
        assert "policy.invalid" in [r.code for r in verdict.reasons]
        return
    crash = Reason("engine.internal_error", "fuzz")
    for actor in (Actor.AGENT, Actor.HUMAN):
        for component in Component:
            verdict = policy.decide((crash,), DecisionContext(component, actor))
            assert verdict.action in (Action.DENY, Action.BLOCK), (
                f"engine.internal_error is {verdict.action} for {component}/{actor}"
            )


TARGET = Target("policy", _files, check)

os.environ.setdefault("DOMESTIQUE_HOME", str(_DIR))
