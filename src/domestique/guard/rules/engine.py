"""The rule engine: run every registered rule whose derived gate passes, collect the hits.

Per-invocation rules are selected by their gates over :class:`~.registry.Facts`, cached per
``Facts`` value (bounded); whole-line rules by their gates over :class:`~.registry.LineFacts`.
Importing this module imports every topic module, so the registry is complete before the first
judgement.
"""

from __future__ import annotations

import operator
import re

from domestique.guard.env import GuardEnv
from domestique.guard.model import Hit, Invocation, Word
from domestique.guard.names import SHELLS
from domestique.guard.parse import Unfolded
from domestique.guard.paths import guard_paths
from domestique.guard.rules import (  # noqa: F401 - imported for their registrations
    abuse,
    escapes,
    evasion,
    files,
    git,
    grants,
    inside,
    links,
    network,
    outbound,
    proxy,
    recon,
    sources,
    staging,
    streams,
    table,
    tamper,
)
from domestique.guard.rules.common import DB_CLIENTS, cred_hint, is_egress
from domestique.guard.rules.registry import (
    LINE_FACTS,
    LINE_RULES,
    RULES,
    Context,
    Facts,
    InvocationRule,
    line_mask,
)
from domestique.guard.rules.vocab import NETWORK
from domestique.guard.wrappers import PROJECT_RUNNERS, WRAPPERS

_SHELL_ESCAPE_SKIP = SHELLS | escapes.SHELL_ESCAPE_OK | (WRAPPERS - PROJECT_RUNNERS)
_ENDS_DELETER = operator.methodcaller("endswith", ("rm", "shred", "unlink", "truncate"))
_RULES_FOR: dict[tuple[object, ...], tuple[InvocationRule, ...]] = {}


def find_may_delete(inv: Invocation) -> bool:
    """Could a find delete (``-delete``, or an argument naming rm, shred or unlink)?"""
    args = inv.args
    return "-delete" in args or any(map(_ENDS_DELETER, args))


def rules_for(inv: Invocation) -> tuple[InvocationRule, ...]:
    """The rules whose gate passes for ``inv``, in registration order.

    Cached per :class:`Facts` value (bounded), built here as a plain tuple: cheaper than the
    named tuple on every invocation, which is made only when the selection is worked out.
    """
    words = inv.words
    n = inv.name
    many = len(words) > 1
    key = (
        n,
        bool(inv.redirects),
        bool(inv.env),
        many,
        "/" in words[0].text,
        many and words[1].text == "shell",
        many and n not in _SHELL_ESCAPE_SKIP and "sh" in "\n".join(inv.args),
        n == "find" and find_may_delete(inv),
        bool(inv.wrapped),
    )
    rules = _RULES_FOR.get(key)
    if rules is None:
        f = Facts(*key)
        rules = tuple(r.fn for r in RULES if r.gate(f))
        if len(_RULES_FOR) >= 4096:
            _RULES_FOR.clear()
        _RULES_FOR[key] = rules
    return rules


_EGRESS, _CRED_READS, _EXEC_DATA, _PRIVILEGED, _NON_ASCII, _ASSIGNMENTS = (
    line_mask((f,)) for f in LINE_FACTS
)
_LINE_PROGRAMS = frozenset().union(*(spec.programs for spec in LINE_RULES))
# (mask, programs, rule, id) per line rule: the gate tested inline (it runs on most lines)
_LINE_GATES = tuple((spec.mask, spec.programs, spec.fn, spec.id) for spec in LINE_RULES)
_PRIVILEGED_VIA = evasion.PRIVILEGED_VIA
_TEMP_EXEC = evasion.TEMP_EXEC


def judge_unfolded(
    command: str,
    unfolded: Unfolded,
    *,
    cwd: str | None,
    env: GuardEnv,
    only: frozenset[str] | None = None,
) -> tuple[list[Hit], bool]:
    """Every hit for the unfolded command line, and whether it reaches the network.

    ``only`` runs just the rules with those ids (and not the unfold step's own hits): what the
    examples test uses to check one rule at a time, through the same gates.
    """
    invs = unfolded.invocations
    egress: list[int] = []
    ctx = Context(
        command=command,
        cwd=cwd,
        env=env,
        guard_re=_guard_re(env.domestique_home),
        invs=invs,
        egress=egress,
        cred_reads=[],
        index={},
        assignments=unfolded.assignments,
    )
    hits = list(unfolded.hits) if only is None else []
    chosen = None if only is None else {r.fn for r in RULES if r.id in only}
    # One pass: the per-invocation rules (none reads the egress list or the credential reads),
    # and the facts the line rules share or that decide whether they can fire at all.
    names: set[str] = set()
    texts: list[str] = []
    exec_data = code_creds = privileged = False
    for i, inv in enumerate(invs):
        n = inv.name
        names.add(n)
        texts += inv.args
        if inv.wrapped:  # xargs -a FILE: the wrapper's own options may name a file it reads
            texts += [w.text for _, ws in inv.wrapped for w in ws]
        if inv.redirects:
            texts += [r.target.text for r in inv.redirects]
            if is_egress(inv):
                egress.append(i)
        elif (n in NETWORK or n in DB_CLIENTS or inv.code_network) and is_egress(inv):
            egress.append(i)
        if inv.exec_data:
            exec_data = True
        if inv.code_creds:
            code_creds = True
        words = inv.words
        if (inv.via and not _PRIVILEGED_VIA.isdisjoint(inv.via)) or (
            words and words[0].text.startswith(_TEMP_EXEC)
        ):
            privileged = True
        if not words:
            continue
        for fn in rules_for(inv):
            if chosen is None or fn in chosen:
                hits.extend(fn(inv, ctx))
    # One test over every word first: most command lines name no credential file at all.
    hinted = cred_hint("\n".join(texts))
    if hinted or code_creds:
        _collect_cred_reads(ctx, words_too=hinted)
    mask = (
        (_EGRESS if egress else 0)
        | (_CRED_READS if ctx.cred_reads else 0)
        | (_EXEC_DATA if exec_data else 0)
        | (_PRIVILEGED if privileged else 0)
        | (0 if command.isascii() else _NON_ASCII)
        | (_ASSIGNMENTS if unfolded.assignments else 0)
    )
    if mask or not _LINE_PROGRAMS.isdisjoint(names):  # most lines: no line rule can fire
        for bits, programs, line_fn, rid in _LINE_GATES:
            if (bits & mask or not programs.isdisjoint(names)) and (only is None or rid in only):
                hits.extend(line_fn(ctx))
    return hits, bool(egress)


def _collect_cred_reads(ctx: Context, *, words_too: bool) -> None:
    for i, inv in enumerate(ctx.invs):
        if words_too:
            ctx.cred_reads += [(i, w) for w in network.cred_words(inv, ctx)]
        if inv.code_creds:
            ctx.cred_reads += [(i, Word(c, True, inv.span)) for c in inv.code_creds]


_GUARD_RE: dict[str | None, re.Pattern[str]] = {}


def _guard_re(home: str | None) -> re.Pattern[str]:
    pattern = _GUARD_RE.get(home)
    if pattern is None:
        pattern = _GUARD_RE[home] = guard_paths(home)
    return pattern
