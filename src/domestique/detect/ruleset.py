"""Detection rules as data: loaded from the TOML files in ``rules/``, checked, compiled once.

A rule names its reason code (``id``), the keywords that make it worth running, the RE2 regex
that confirms it (the first capture group that took part in the match is the secret;
without groups, the whole match), and the filters that keep
look-alikes out: minimum entropy, validators, allowlisted values and contexts, the generic
placeholder filter and the
code-reference filter (``os.environ[...]``, ``self.token``). Every rule carries ``examples`` it
must find and ``counter_examples`` it must
not; the test suite runs them for every rule, and a rule without examples fails that test.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import re2

from domestique.detect.context import CONTEXT_FILTERS
from domestique.detect.re2opts import compile_once
from domestique.detect.validators import VALIDATORS

RULE_FILES_PACKAGE = "domestique.detect.rules"  # the data package next to this module

_FIELDS = {
    "id",
    "description",
    "keywords",
    "regex",
    "entropy",
    "min_length",
    "validators",
    "allow_values",
    "allow_patterns",
    "deny_context",
    "placeholder_filter",
    "reference_filter",
    "claims_match",
    "example_filter",
    "context_filters",
    "priority",
    "window_before",
    "window_after",
    "examples",
    "counter_examples",
}


class RuleError(ValueError):
    """A rule file is malformed: unknown field, bad regex, unknown validator, duplicate id."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One detection rule. ``keywords`` are lower-case; an empty tuple means "scan everything"."""

    id: str
    description: str
    keywords: tuple[str, ...]
    regex: str
    entropy: float | None = None
    min_length: int = 1
    validators: tuple[str, ...] = ()
    allow_values: frozenset[str] = frozenset()
    allow_patterns: tuple[str, ...] = ()
    deny_context: tuple[str, ...] = ()
    placeholder_filter: bool = False
    reference_filter: bool = False
    # The whole match is context this rule has read (scheme://user:password@host): a
    # lower-priority finding inside it that crosses an edge of the value (an "email"
    # password@host) is the same text misread, and is dropped rather than widening the span.
    claims_match: bool = False
    # A value that documentation shows as an example (a doctest session, "for example" just
    # above) is not reported: see domestique.detect.doc_examples.
    example_filter: bool = False
    # Checks of the text around a value that say it is not what the rule names (a number
    # under an order_number header, an address in a public key's comment): see
    # domestique.detect.context.
    context_filters: tuple[str, ...] = ()
    priority: int = 50
    window_before: int = 64
    window_after: int = 256
    examples: tuple[str, ...] = ()
    counter_examples: tuple[str, ...] = ()
    source: str = ""


def _str_list(raw: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RuleError(f"{where}: {key} must be a list of strings")
    return tuple(value)


def parse_rule(raw: dict[str, Any], source: str, *, compile_patterns: bool = True) -> Rule:
    """Check one ``[[rules]]`` table and build its :class:`Rule`; raises :class:`RuleError`.

    ``compile_patterns=False`` skips compiling the patterns here (the engine compiles each on
    first use): only for the shipped rules, which the test suite compiles."""
    rid = raw.get("id")
    where = f"{source}:{rid or '?'}"
    if not isinstance(rid, str) or "." not in rid:
        raise RuleError(f"{where}: id must be a dotted reason code")
    unknown = set(raw) - _FIELDS
    if unknown:
        raise RuleError(f"{where}: unknown fields {sorted(unknown)}")
    regex = raw.get("regex")
    if not isinstance(regex, str) or not regex:
        raise RuleError(f"{where}: regex is required")
    try:
        # Kept by compile_once for the engine: compiled once, failing early with the rule's name.
        if compile_patterns:
            compile_once(regex)
    except re2.error as exc:
        raise RuleError(f"{where}: regex does not compile under RE2: {exc}") from None
    validators = _str_list(raw, "validators", where)
    for name in validators:
        if name not in VALIDATORS:
            raise RuleError(f"{where}: unknown validator {name!r}")
    context_filters = _str_list(raw, "context_filters", where)
    for name in context_filters:
        if name not in CONTEXT_FILTERS:
            raise RuleError(f"{where}: unknown context filter {name!r}")
    for key in ("allow_patterns", "deny_context"):
        for pattern in _str_list(raw, key, where):
            try:
                if compile_patterns:
                    compile_once(pattern)
            except re2.error:
                raise RuleError(f"{where}: {key} pattern does not compile under RE2") from None
    entropy = raw.get("entropy")
    if entropy is not None and not isinstance(entropy, int | float):
        raise RuleError(f"{where}: entropy must be a number")
    return Rule(
        id=rid,
        description=str(raw.get("description", "")),
        keywords=tuple(k.lower() for k in _str_list(raw, "keywords", where)),
        regex=regex,
        entropy=float(entropy) if entropy is not None else None,
        min_length=int(raw.get("min_length", 1)),
        validators=validators,
        allow_values=frozenset(_str_list(raw, "allow_values", where)),
        allow_patterns=_str_list(raw, "allow_patterns", where),
        deny_context=_str_list(raw, "deny_context", where),
        placeholder_filter=bool(raw.get("placeholder_filter", False)),
        reference_filter=bool(raw.get("reference_filter", False)),
        claims_match=bool(raw.get("claims_match", False)),
        example_filter=bool(raw.get("example_filter", False)),
        context_filters=context_filters,
        priority=int(raw.get("priority", 50)),
        window_before=int(raw.get("window_before", 64)),
        window_after=int(raw.get("window_after", 256)),
        examples=_str_list(raw, "examples", where),
        counter_examples=_str_list(raw, "counter_examples", where),
        source=source,
    )


def rule_tables(text: str, source: str) -> list[Any]:
    """The ``[[rules]]`` tables of one TOML document (``version = 1`` required), unchecked;
    raises :class:`RuleError`. :func:`parse_rule` checks each table."""
    import tomllib  # here, not at the top: a process that reads the rule cache never parses TOML

    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RuleError(f"{source}: {exc}") from None
    if doc.get("version") != 1:
        raise RuleError(f"{source}: version = 1 is required")
    tables = doc.get("rules", [])
    if not isinstance(tables, list):
        raise RuleError(f"{source}: rules must be an array of tables")
    return tables


def load_rules_text(text: str, source: str, *, compile_patterns: bool = True) -> list[Rule]:
    """Rules from one TOML document (``version = 1`` and ``[[rules]]`` tables); see
    :func:`parse_rule` for ``compile_patterns``."""
    return [
        parse_rule(t, source, compile_patterns=compile_patterns) for t in rule_tables(text, source)
    ]


def unique_rules(rules: list[Rule]) -> tuple[Rule, ...]:
    """``rules`` as a tuple; raises :class:`RuleError` when two share an id."""
    seen: set[str] = set()
    for r in rules:
        if r.id in seen:
            raise RuleError(f"{r.source}: duplicate rule id {r.id}")
        seen.add(r.id)
    return tuple(rules)


def builtin_rules() -> tuple[Rule, ...]:
    """Every rule shipped in the package, in file order; ids are unique.

    Their patterns are not compiled here: a short-lived command would compile ~200 patterns it
    mostly never runs. ``tests/detect`` compiles every shipped pattern."""
    from importlib import resources

    rules: list[Rule] = []
    files = sorted(
        (f for f in resources.files(RULE_FILES_PACKAGE).iterdir() if f.name.endswith(".toml")),
        key=lambda f: f.name,
    )
    for f in files:
        text = f.read_text(encoding="utf-8")
        rules.extend(load_rules_text(text, f.name, compile_patterns=False))
    return unique_rules(rules)
