"""Strict validation of one parsed policy layer, with ``file:line:col`` for every error.

Unknown keys, wrong types, unknown actions, reason codes or patterns that no registered code
matches, bad globs, a project layer that sets ``settings``, replaces a base rule or loosens: each
is an error that names the place in the file. A layer with any error makes the whole policy
invalid (and every decision stops), so nothing here guesses what a typo meant.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Collection, Mapping

from domestique.frozen_class import dataclass, field
from domestique.policy._locate import Path as KeyPath
from domestique.policy._locate import Positions
from domestique.policy._model import (
    HUMAN_ASK_CODE,
    MATCH_FIELDS,
    MODES,
    POLICY_VERSION,
    Match,
    Rule,
    code_pattern_specificity,
    is_protected,
)
from domestique.records import JUDGING_COMPONENTS, Action, Actor

TYPE_CHECKING = False  # not typing's: a hook deciding in-process does not load typing
if TYPE_CHECKING:
    from typing import Any

TOP_KEYS = ("version", "settings", "rules")
SETTINGS_KEYS = ("unmatched", "unknown_tool", "mode")
ACTION_SETTINGS = ("unmatched", "unknown_tool")
RULE_KEYS = ("id", "description", "codes", "action", *MATCH_FIELDS, "except")
EXCEPT_KEYS = ("codes", *MATCH_FIELDS)
ACTIONS = tuple(a.value for a in Action)
COMPONENTS = tuple(c.value for c in JUDGING_COMPONENTS)
ACTORS = tuple(a.value for a in Actor)
PROJECT = "project"

_RULE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]*\Z")
_HOST_GLOB = re.compile(r"[A-Za-z0-9.*?\[\]!_:-]+\Z")


@dataclass
class LayerResult:
    """What one layer contributes: settings it sets, its rules, and its errors (formatted)."""

    settings: dict[str, Action] = field(default_factory=dict)
    mode: str | None = None  # [settings] mode, when this layer sets it
    rules: list[Rule] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class _Reporter:
    def __init__(self, filename: str, positions: Positions, out: list[str]) -> None:
        self.filename = filename
        self.positions = positions
        self.out = out

    def key(self, path: KeyPath, message: str) -> None:
        line, col = self.positions.of_key(path)
        self.out.append(f"{self.filename}:{line}:{col}: {message}")

    def value(self, path: KeyPath, message: str) -> None:
        line, col = self.positions.of_value(path)
        self.out.append(f"{self.filename}:{line}:{col}: {message}")


def _type_name(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return f"a {type(value).__name__}"


def _suggest(word: str, choices: Collection[str]) -> str:
    import difflib  # only on the error path

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.75)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _unknown_keys(
    table: Mapping[str, Any], allowed: tuple[str, ...], path: KeyPath, rep: _Reporter, what: str
) -> None:
    for key in table:
        if key not in allowed:
            rep.key(
                (*path, key),
                f"unknown key {key!r} in {what}{_suggest(key, allowed)}; "
                f"allowed: {', '.join(allowed)}",
            )


def _action(value: object, path: KeyPath, rep: _Reporter) -> Action | None:
    if not isinstance(value, str):
        rep.value(path, f"expected an action (a string), got {_type_name(value)}")
        return None
    if value not in ACTIONS:
        rep.value(
            path,
            f"unknown action {value!r}{_suggest(value, ACTIONS)}; one of {', '.join(ACTIONS)}",
        )
        return None
    return Action(value)


def _string_list(
    value: object,
    path: KeyPath,
    rep: _Reporter,
    check: Callable[[str, KeyPath], bool] | None = None,
) -> list[str] | None:
    if not isinstance(value, list):
        rep.value(path, f"expected an array of strings, got {_type_name(value)}")
        return None
    if not value:
        rep.value(path, "empty array: omit the key to match anything")
        return None
    ok = True
    out: list[str] = []
    for i, item in enumerate(value):
        if not isinstance(item, str):
            rep.value((*path, i), f"expected a string, got {_type_name(item)}")
            ok = False
        elif not item:
            rep.value((*path, i), "empty string")
            ok = False
        elif check is not None and not check(item, (*path, i)):
            ok = False
        else:
            out.append(item)
    return out if ok else None


def _glob_ok(glob: str) -> bool:
    """A glob is bad when a ``[`` class is left open (fnmatch would match it literally)."""
    i = 0
    while i < len(glob):
        if glob[i] == "[":
            j = i + 1
            if j < len(glob) and glob[j] == "!":
                j += 1
            if j < len(glob) and glob[j] == "]":
                j += 1
            close = glob.find("]", j)
            if close < 0:
                return False
            i = close + 1
        else:
            i += 1
    try:
        re.compile(fnmatch.translate(glob))
    except re.error:
        return False
    return True


class LayerValidator:
    """Validates one parsed layer against the registered reason codes."""

    def __init__(self, registered: Collection[str]) -> None:
        self.registered = frozenset(registered)

    # -- fields ----------------------------------------------------------------------------
    def _code_ok(self, pattern: str, path: KeyPath, rep: _Reporter) -> bool:
        if pattern == "*":
            return True
        if pattern.endswith(".*") and not any(ch in pattern[:-2] for ch in "*?[]"):
            if not any(code_pattern_specificity(pattern, c) is not None for c in self.registered):
                rep.value(path, f"no registered reason code matches {pattern!r}")
                return False
            return True
        if any(ch in pattern for ch in "*?[]"):
            rep.value(
                path,
                f"bad code pattern {pattern!r}: use an exact code or a prefix glob like 'secret.*'",
            )
            return False
        if pattern not in self.registered:
            rep.value(path, f"unknown reason code {pattern!r}{_suggest(pattern, self.registered)}")
            return False
        return True

    def _match_fields(
        self, table: Mapping[str, Any], path: KeyPath, rep: _Reporter
    ) -> dict[str, list[str]] | None:
        out: dict[str, list[str]] = {}
        ok = True

        def member(choices: tuple[str, ...], what: str) -> Callable[[str, KeyPath], bool]:
            def check(item: str, at: KeyPath) -> bool:
                if item not in choices:
                    rep.value(
                        at,
                        f"unknown {what} {item!r}{_suggest(item, choices)}; "
                        f"one of {', '.join(choices)}",
                    )
                    return False
                return True

            return check

        def host(item: str, at: KeyPath) -> bool:
            if "/" in item or not _HOST_GLOB.match(item) or not _glob_ok(item):
                rep.value(at, f"bad host glob {item!r}: a host name glob like '*.example.com'")
                return False
            return True

        def path_glob(item: str, at: KeyPath) -> bool:
            if not _glob_ok(item):
                rep.value(at, f"bad path glob {item!r}: unclosed '['")
                return False
            return True

        def project_glob(item: str, at: KeyPath) -> bool:
            if not _glob_ok(item):
                rep.value(at, f"bad project glob {item!r}: unclosed '['")
                return False
            if not (item.startswith(("/", "~")) or item[1:3] in (":\\", ":/")):
                rep.value(at, f"project {item!r} must be an absolute directory (or start with ~)")
                return False
            return True

        def code(item: str, at: KeyPath) -> bool:
            return self._code_ok(item, at, rep)

        checks: dict[str, Callable[[str, KeyPath], bool] | None] = {
            "codes": code,
            "components": member(COMPONENTS, "component"),
            "actors": member(ACTORS, "actor"),
            "agents": None,
            "tools": None,
            "hosts": host,
            "paths": path_glob,
            "projects": project_glob,
            "commands": None,
        }
        for name, check in checks.items():
            if name in table:
                got = _string_list(table[name], (*path, name), rep, check)
                if got is None:
                    ok = False
                else:
                    out[name] = got
        return out if ok else None

    # -- tables ----------------------------------------------------------------------------
    def _rule(self, table: object, path: KeyPath, rep: _Reporter, kind: str) -> Rule | None:
        if not isinstance(table, dict):
            rep.value(path, f"a rule must be a table, got {_type_name(table)}")
            return None
        errors_before = len(rep.out)
        _unknown_keys(table, RULE_KEYS, path, rep, "a rule")
        rule_id = table.get("id")
        if rule_id is None:
            rep.key(path, "rule has no 'id'")
        elif not isinstance(rule_id, str) or not _RULE_ID.match(rule_id):
            rep.value((*path, "id"), "rule id must be a string of letters, digits, _ . : -")
        description = table.get("description", "")
        if not isinstance(description, str):
            rep.value((*path, "description"), "description must be a string")
        if "codes" not in table:
            rep.key(path, "rule has no 'codes'")
        if "action" not in table:
            rep.key(path, "rule has no 'action'")
            action = None
        else:
            action = _action(table["action"], (*path, "action"), rep)
        fields = self._match_fields(
            {k: v for k, v in table.items() if k in ("codes", *MATCH_FIELDS)}, path, rep
        )
        exceptions: list[Match] = []
        if "except" in table:
            excepts = table["except"]
            if not isinstance(excepts, list):
                rep.value((*path, "except"), "'except' must be an array of tables")
            else:
                for i, exc in enumerate(excepts):
                    epath: KeyPath = (*path, "except", i)
                    if not isinstance(exc, dict):
                        rep.value(epath, f"an exception must be a table, got {_type_name(exc)}")
                        continue
                    if not exc:
                        rep.key(epath, "empty exception: give at least one field")
                        continue
                    _unknown_keys(exc, EXCEPT_KEYS, epath, rep, "an exception")
                    efields = self._match_fields(exc, epath, rep)
                    if efields is not None:
                        exceptions.append(Match.build(efields))
        if len(rep.out) > errors_before or fields is None or action is None:
            return None
        if not isinstance(rule_id, str):
            return None
        codes = fields.pop("codes")
        self._protected(
            rule_id=rule_id,
            codes=codes,
            action=action,
            fields=fields,
            path=(*path, "action"),
            rep=rep,
        )
        if len(rep.out) > errors_before:
            return None
        return Rule(
            id=rule_id,
            codes=tuple(codes),
            action=action,
            match=Match.build(fields),
            exceptions=tuple(exceptions),
            description=str(description),
            layer=kind,
        )

    def _protected(
        self,
        *,
        rule_id: str,
        codes: list[str],
        action: Action,
        fields: Mapping[str, list[str]],
        path: KeyPath,
        rep: _Reporter,
    ) -> None:
        """Protected codes (engine.*, policy.invalid, audit.write_failed, unreadable input)
        cannot be set below deny/block."""
        if action.severity >= Action.DENY.severity:
            return
        human_only = fields.get("actors") == [Actor.HUMAN.value]
        for pattern in codes:
            if pattern == "*":
                continue  # "*" is clamped at decision time; naming these codes is an error
            for code in sorted(self.registered):
                if not is_protected(code) or code_pattern_specificity(pattern, code) is None:
                    continue
                if code == HUMAN_ASK_CODE and action is Action.ASK and human_only:
                    continue
                rep.value(
                    path,
                    f"rule {rule_id!r} cannot set {action.value!r} for {code}: codes that "
                    "mean Domestique could not judge the input always deny/block "
                    "(engine.parse_error may be 'ask' with actors = [\"human\"] only)",
                )
                return

    def validate(
        self, data: Mapping[str, Any], *, kind: str, filename: str, positions: Positions
    ) -> LayerResult:
        result = LayerResult()
        rep = _Reporter(filename, positions, result.errors)
        _unknown_keys(data, TOP_KEYS, (), rep, "a policy file")
        version = data.get("version")
        if version is None:
            rep.key((), f"missing 'version = {POLICY_VERSION}'")
        elif type(version) is not int or version != POLICY_VERSION:
            rep.value(("version",), f"unsupported version {version!r}; expected {POLICY_VERSION}")
        if "settings" in data:
            settings = data["settings"]
            if kind == PROJECT:
                rep.key(
                    ("settings",),
                    "a project policy cannot set [settings]; it may only add stricter rules",
                )
            elif not isinstance(settings, dict):
                rep.value(("settings",), "'settings' must be a table")
            else:
                _unknown_keys(settings, SETTINGS_KEYS, ("settings",), rep, "[settings]")
                for key in ACTION_SETTINGS:
                    if key in settings:
                        act = _action(settings[key], ("settings", key), rep)
                        if act is not None:
                            result.settings[key] = act
                if "mode" in settings:
                    mode = settings["mode"]
                    if not isinstance(mode, str) or mode not in MODES:
                        shown = repr(mode) if isinstance(mode, str) else _type_name(mode)
                        hint = _suggest(mode, MODES) if isinstance(mode, str) else ""
                        rep.value(
                            ("settings", "mode"),
                            f"unknown mode {shown}{hint}; one of {', '.join(MODES)}",
                        )
                    else:
                        result.mode = mode
        rules = data.get("rules", [])
        if not isinstance(rules, list):
            rep.value(("rules",), "'rules' must be an array of tables ([[rules]])")
            return result
        seen: dict[str, KeyPath] = {}
        for i, table in enumerate(rules):
            path: KeyPath = ("rules", i)
            rule = self._rule(table, path, rep, kind)
            if rule is None:
                continue
            if rule.id in seen:
                rep.value((*path, "id"), f"duplicate rule id {rule.id!r} in this file")
                continue
            seen[rule.id] = path
            line, _ = positions.of_key(path)
            rule = Rule(
                id=rule.id,
                codes=rule.codes,
                action=rule.action,
                match=rule.match,
                exceptions=rule.exceptions,
                description=rule.description,
                layer=rule.layer,
                source=f"{filename}:{line}",
            )
            result.rules.append(rule)
        result.errors.sort(key=lambda e: _line_col(e, filename))
        return result


def _line_col(error: str, filename: str) -> tuple[int, int]:
    head = error[len(filename) + 1 :].split(":", 2)
    try:
        return int(head[0]), int(head[1])
    except (IndexError, ValueError):
        return (0, 0)
