"""The rule registry: what a rule is, when it runs, and the facts it is given.

A rule is a small function registered with :func:`rule` (one invocation at a time) or
:func:`line_rule` (the whole command line). Its metadata says when it could fire, and the engine
derives every gate from that metadata: there is no list of program names kept anywhere else.

Per-invocation gates read only :class:`Facts` (the program name and seven cheap facts about the
invocation), so the engine can cache the selection of rules per ``Facts`` value: a gate that read
anything else would make the cache wrong, and the type makes that impossible to write.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

from domestique.guard.env import GuardEnv
from domestique.guard.model import Hit, Invocation, Word


class Facts(NamedTuple):
    """What a per-invocation gate may look at (and the key of the rule-selection cache)."""

    name: str
    redirects: bool  # the invocation has redirections
    env: bool  # it is given environment assignments (``X=1 cmd``)
    args: bool  # it has at least one argument
    slash: bool  # the command word holds a slash (``./x``, ``/usr/bin/x``)
    shell_subcommand: bool  # its first argument is ``shell`` (``poetry shell``)
    mentions_sh: bool  # an argument holds ``sh`` (and the program is no shell or wrapper)
    find_deletes: bool  # a find that may delete (``-delete``, ``-exec rm``)
    wrapped: bool  # it runs through a wrapper (``sudo``, ``xargs``, ``systemd-run`` …)


# What a whole-line gate may look at, besides the program names in the line (a bit each):
LINE_FACTS = (
    "egress",  # some invocation reaches the network
    "cred_reads",  # some word names a credential file
    "exec_data",  # some invocation runs data it is fed as code
    "privileged",  # sudo and friends, or a program run from a temp folder
    "non_ascii",  # the command line holds a non-ASCII character
    "assignments",  # the line holds bare ``NAME=value`` statements
)


@dataclass(slots=True)
class Context:
    """Facts about the whole command line the rules share."""

    command: str
    cwd: str | None
    env: GuardEnv
    guard_re: re.Pattern[str]
    invs: list[Invocation]
    egress: list[int]
    cred_reads: list[tuple[int, Word]]
    index: dict[int, int]  # id(invocation) -> its position (filled on first use: position)
    assignments: list[tuple[str, Word]] = field(default_factory=list)


def position(ctx: Context, inv: Invocation) -> int:
    """The position of ``inv`` in the command line."""
    index = ctx.index
    if not index:
        index.update((id(v), i) for i, v in enumerate(ctx.invs))
    return index[id(inv)]


InvocationRule = Callable[[Invocation, Context], Iterator[Hit]]
LineRule = Callable[[Context], Iterator[Hit]]
_FACT_NAMES = frozenset(Facts._fields) - {"name"}
_LINE_FACT_NAMES = frozenset(LINE_FACTS)


@dataclass(frozen=True, slots=True)
class Rule:
    """A per-invocation rule and the metadata its gate is derived from.

    It runs when its program test passes (``programs``/``prefixes``, or every program but
    ``except_programs`` when ``programs`` is None), and ``args``/``when`` hold; or whenever one
    of the ``also`` facts is true, whatever the program.
    """

    id: str
    fn: InvocationRule
    programs: frozenset[str] | None
    prefixes: tuple[str, ...]
    except_programs: frozenset[str]
    args: bool
    when: str | None
    also: tuple[str, ...]
    also_at: tuple[int, ...]  # positions of ``also`` in Facts
    when_at: int  # position of ``when`` in Facts, -1 for none

    def gate(self, f: Facts) -> bool:
        """Could the rule fire on an invocation with these facts? (Runs on a cache miss.)"""
        for i in self.also_at:
            if f[i]:
                return True
        n = f[0]
        programs = self.programs
        if programs is None:
            if n in self.except_programs:
                return False
        elif n not in programs and not (self.prefixes and n.startswith(self.prefixes)):
            return False
        if self.args and not f.args:
            return False
        return self.when_at < 0 or bool(f[self.when_at])


def line_mask(facts: Collection[str]) -> int:
    """The bits of ``LINE_FACTS`` named in ``facts``."""
    return sum(1 << LINE_FACTS.index(f) for f in set(facts))


@dataclass(frozen=True, slots=True)
class LineRuleSpec:
    """A whole-line rule: it runs when a program it names is in the line or a fact holds."""

    id: str
    fn: LineRule
    programs: frozenset[str]
    facts: tuple[str, ...]
    mask: int  # line_mask(facts)

    def gate(self, names: set[str], mask: int) -> bool:
        """``names``: the programs in the line; ``mask``: the line facts that hold."""
        return bool(self.mask & mask) or not self.programs.isdisjoint(names)


RULES: list[Rule] = []
LINE_RULES: list[LineRuleSpec] = []


def _rule_id(fn: Callable[..., object]) -> str:
    return fn.__name__.removeprefix("_rule_").removeprefix("_").replace("_", "-")


def _unique(rule_id: str) -> None:
    if rule_id in {r.id for r in RULES} | {r.id for r in LINE_RULES}:
        raise ValueError(f"guard rule {rule_id!r} registered twice")


def rule(
    *,
    programs: Collection[str] | None,
    prefixes: tuple[str, ...] = (),
    except_programs: Collection[str] = (),
    args: bool = False,
    when: str | None = None,
    also: tuple[str, ...] = (),
    rule_id: str | None = None,
) -> Callable[[InvocationRule], InvocationRule]:
    """Register a per-invocation rule (see :class:`Rule` for what the arguments mean)."""
    unknown = ({when} - {None}) | set(also)
    if not unknown <= _FACT_NAMES:
        raise ValueError(f"unknown gate facts {sorted(str(x) for x in unknown - _FACT_NAMES)}")

    def register(fn: InvocationRule) -> InvocationRule:
        rid = rule_id or _rule_id(fn)
        _unique(rid)
        RULES.append(
            Rule(
                rid,
                fn,
                None if programs is None else frozenset(programs),
                prefixes,
                frozenset(except_programs),
                args,
                when,
                also,
                tuple(Facts._fields.index(a) for a in also),
                -1 if when is None else Facts._fields.index(when),
            )
        )
        return fn

    return register


def line_rule(
    *, programs: Collection[str] = (), facts: tuple[str, ...] = ()
) -> Callable[[LineRule], LineRule]:
    """Register a whole-line rule that runs when one of ``programs`` or ``facts`` is present."""
    if not set(facts) <= _LINE_FACT_NAMES:
        raise ValueError(f"unknown line facts {sorted(set(facts) - _LINE_FACT_NAMES)}")

    def register(fn: LineRule) -> LineRule:
        rid = _rule_id(fn)
        _unique(rid)
        LINE_RULES.append(LineRuleSpec(rid, fn, frozenset(programs), facts, line_mask(facts)))
        return fn

    return register
