"""Command rules as data: ``commands.toml`` loaded once into program -> rows; every match fires.

A row names its programs, argument conditions, a reason code and a message, and carries the
commands it must fire on and stay quiet on (``tests/guard/rules/test_table.py`` runs them all).
The loader refuses a file with an unknown key, an unregistered code, a vocabulary that does not
exist or a row without examples: a bad row is a load error, never a silently missing rule.

Conditions (all given ones must hold; ``any_of``: at least one of the listed condition tables;
``unless``: none of them):

- ``any_args`` / ``all_args`` / ``no_args``: arguments equal to any / all / none of the words
  (a list, or the name of a vocabulary in :mod:`.vocab` such as ``"CONTROL_VARIABLES"``)
- ``arg_prefix``: some argument starts with one of the strings
- ``first_arg`` / ``first_arg_regex``: the first argument is one of the words / matches
- ``args_regex``: the arguments joined by spaces match (``re.search``)
- ``args_match`` / ``operands_match``: a named vocabulary pattern (``"SECURITY_UNITS"``) is
  found in the joined arguments / in the joined arguments that are not options
- ``min_args`` / ``max_args``: bounds on the number of arguments

A message may name ``{program}``, ``{first}`` (first argument), ``{first_two}`` and
``{matched}`` (the ``any_args`` words present, sorted).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

from domestique.guard.codes import REASON_CODES
from domestique.guard.model import Hit, Invocation
from domestique.guard.rules import vocab
from domestique.guard.rules.registry import Context, rule

Check = Callable[["Args"], bool]


class TableError(ValueError):
    """``commands.toml`` is not a valid rule table (names the row and the problem)."""


@dataclass(slots=True)
class Args:
    """One invocation's arguments, with the joined forms computed on first use."""

    args: list[str]
    set: frozenset[str]
    _joined: str | None = None
    _operands: str | None = None

    @property
    def joined(self) -> str:
        if self._joined is None:
            self._joined = " ".join(self.args)
        return self._joined

    @property
    def operands(self) -> str:
        if self._operands is None:
            self._operands = " ".join(x for x in self.args if not x.startswith("-"))
        return self._operands


@dataclass(frozen=True, slots=True)
class Row:
    """One table row: when its checks hold for an invocation of one of its programs, it fires."""

    id: str
    code: str
    programs: tuple[str, ...]
    message: str
    checks: tuple[Check, ...]
    any_args: frozenset[str]
    fires: tuple[str, ...]
    quiet: tuple[str, ...]

    def matches(self, a: Args) -> bool:
        return all(check(a) for check in self.checks)

    def hit(self, inv: Invocation, a: Args) -> Hit:
        first = a.args[0] if a.args else ""
        message = self.message.format(
            program=inv.name,
            first=first,
            first_two=" ".join(a.args[:2]),
            matched=", ".join(sorted(self.any_args & a.set)),
        )
        return Hit(self.code, message, inv.span, inv.render())


_ROW_KEYS = frozenset({"id", "code", "programs", "message", "fires", "quiet", "any_of", "unless"})


def _words(row: str, key: str, value: Any) -> frozenset[str]:
    if isinstance(value, str):
        words = getattr(vocab, value, None)
        if not isinstance(words, frozenset):
            raise TableError(f"row {row}: {key} names {value!r}, no word set in vocab")
        return words
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value) or not value:
        raise TableError(f"row {row}: {key} must be a non-empty list of strings or a vocab name")
    return frozenset(value)


def _pattern(row: str, key: str, value: Any) -> re.Pattern[str]:
    if key in ("args_match", "operands_match"):
        pattern = getattr(vocab, str(value), None)
        if not isinstance(pattern, re.Pattern):
            raise TableError(f"row {row}: {key} names {value!r}, no pattern in vocab")
        return pattern
    try:
        return re.compile(str(value))
    except re.error as exc:
        raise TableError(f"row {row}: {key} is no valid pattern ({exc})") from None


def _count(row: str, key: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise TableError(f"row {row}: {key} must be a whole number")
    return value


def _check(row: str, key: str, value: Any) -> Check:
    """One condition compiled into a test over the arguments."""
    if key == "any_args":
        s = _words(row, key, value)
        return lambda a: not s.isdisjoint(a.set)
    if key == "all_args":
        s = _words(row, key, value)
        return lambda a: s <= a.set
    if key == "no_args":
        s = _words(row, key, value)
        return lambda a: s.isdisjoint(a.set)
    if key == "first_arg":
        s = _words(row, key, value)
        return lambda a: bool(a.args) and a.args[0] in s
    if key == "arg_prefix":
        prefixes = tuple(_words(row, key, value))
        return lambda a: any(x.startswith(prefixes) for x in a.args)
    if key == "first_arg_regex":
        p = _pattern(row, key, value)
        return lambda a: bool(a.args) and p.search(a.args[0]) is not None
    if key in ("args_regex", "args_match"):
        p = _pattern(row, key, value)
        return lambda a: p.search(a.joined) is not None
    if key == "operands_match":
        p = _pattern(row, key, value)
        return lambda a: p.search(a.operands) is not None
    if key == "min_args":
        n = _count(row, key, value)
        return lambda a: len(a.args) >= n
    if key == "max_args":
        n = _count(row, key, value)
        return lambda a: len(a.args) <= n
    raise TableError(f"row {row}: unknown key {key!r}")


def _conditions(row: str, table: dict[str, Any]) -> tuple[Check, ...]:
    return tuple(_check(row, k, v) for k, v in table.items() if k not in _ROW_KEYS)


def _alternatives(row: str, key: str, value: Any) -> tuple[tuple[Check, ...], ...]:
    if not isinstance(value, list) or not value or not all(isinstance(t, dict) for t in value):
        raise TableError(f"row {row}: {key} must be a list of condition tables")
    alts = tuple(_conditions(row, t) for t in value)
    if any(set(t) & _ROW_KEYS for t in value):
        raise TableError(f"row {row}: {key} holds conditions only")
    return alts


def _strings(row: str, key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(x, str) for x in value):
        raise TableError(f"row {row}: {key} must be a non-empty list of commands")
    return tuple(value)


def _row(raw: dict[str, Any], known: frozenset[str]) -> Row:
    rid = str(raw.get("id", "?"))
    for key in ("id", "code", "programs", "message", "fires", "quiet"):
        if key not in raw:
            raise TableError(f"row {rid}: {key} is missing")
    if raw["code"] not in known:
        raise TableError(f"row {rid}: {raw['code']!r} is no registered guard reason code")
    checks = list(_conditions(rid, raw))
    if "any_of" in raw:
        alts = _alternatives(rid, "any_of", raw["any_of"])
        checks.append(lambda a: any(all(c(a) for c in alt) for alt in alts))
    if "unless" in raw:
        nots = _alternatives(rid, "unless", raw["unless"])
        checks.append(lambda a: not any(all(c(a) for c in alt) for alt in nots))
    any_args = _words(rid, "any_args", raw["any_args"]) if "any_args" in raw else frozenset()
    return Row(
        rid,
        raw["code"],
        _strings(rid, "programs", raw["programs"]),
        str(raw["message"]),
        tuple(checks),
        any_args,
        _strings(rid, "fires", raw["fires"]),
        _strings(rid, "quiet", raw["quiet"]),
    )


def load_rows(text: str) -> tuple[Row, ...]:
    """Parse and check a rule table (raises :class:`TableError` naming the row at fault)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TableError(f"commands.toml: {exc}") from None
    if set(data) != {"rule"} or not isinstance(data["rule"], list):
        raise TableError("commands.toml holds [[rule]] tables only")
    known = frozenset(c.code for c in REASON_CODES)
    rows = tuple(_row(raw, known) for raw in data["rule"])
    ids = [r.id for r in rows]
    if len(set(ids)) != len(ids):
        raise TableError(f"duplicate row ids: {sorted({i for i in ids if ids.count(i) > 1})}")
    return rows


def by_program(rows: tuple[Row, ...]) -> dict[str, tuple[Row, ...]]:
    """Program -> its rows, in table order."""
    out: dict[str, list[Row]] = {}
    for r in rows:
        for p in r.programs:
            out.setdefault(p, []).append(r)
    return {p: tuple(rs) for p, rs in out.items()}


ROWS = load_rows(files("domestique.guard.rules").joinpath("commands.toml").read_text())
BY_PROGRAM = by_program(ROWS)


@rule(programs=frozenset(BY_PROGRAM), rule_id="commands-table")
def _rule_table(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """Every row of ``commands.toml`` that matches the invocation fires."""
    a = Args(inv.args, frozenset(inv.args))
    for row in BY_PROGRAM[inv.name]:
        if row.matches(a):
            yield row.hit(inv, a)
