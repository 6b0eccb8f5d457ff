"""The reason-code registry: every code the package can emit, declared once with its meaning.

Core codes (engine, policy, audit) are declared here; each component declares its own in its
``codes`` module (``domestique.detect.codes``, ``domestique.guard.codes``,
``domestique.proxy.codes``, ``domestique.hooks.codes``) as a ``REASON_CODES`` tuple. The detection
rules' ids are reason codes too and reach the registry through ``domestique.detect.codes``.

``docs/reason-codes.md`` is generated from this registry (``python -m domestique.reason_codes``)
and a test fails when the two disagree.
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from functools import cache


@dataclass(frozen=True, slots=True)
class ReasonCode:
    """A stable, dotted reason code and its one-line meaning."""

    code: str
    meaning: str


CORE_CODES: tuple[ReasonCode, ...] = (
    ReasonCode(
        "engine.internal_error", "An unexpected error inside Domestique; the decision denies."
    ),
    ReasonCode(
        "engine.parse_error", "The input could not be parsed with confidence; it is denied."
    ),
    ReasonCode(
        "engine.detector_error", "A detector crashed on the input; the input is treated as unsafe."
    ),
    ReasonCode("engine.timeout", "Judging took longer than its budget; the decision denies."),
    ReasonCode(
        "policy.invalid",
        "A policy layer is invalid or unreadable; every decision denies until it is fixed.",
    ),
    ReasonCode("policy.rule", "A policy rule matched and set the action."),
    ReasonCode(
        "policy.default",
        "No rule matched a finding; the policy's explicit default action applied.",
    ),
    ReasonCode(
        "policy.changed",
        "A policy file was changed through Domestique (domestique allow); the record names "
        "the file, the line and the rule.",
    ),
    ReasonCode(
        "audit.write_failed",
        "The decision could not be written to the audit store; it denies.",
    ),
)

COMPONENT_CODE_MODULES: tuple[str, ...] = (
    "domestique.detect.codes",
    "domestique.guard.codes",
    "domestique.proxy.codes",
    "domestique.hooks.codes",
    "domestique.hub.codes",
    "domestique.hub.sinks.codes",
)


class DuplicateReasonCode(ValueError):
    """Two declarations of one code: the registry must name each code once."""


@cache
def registry() -> dict[str, ReasonCode]:
    """Every declared reason code, by code. Imports each component's ``codes`` module."""
    out: dict[str, ReasonCode] = {}
    groups: list[tuple[ReasonCode, ...]] = [CORE_CODES]
    for name in COMPONENT_CODE_MODULES:
        module = importlib.import_module(name)
        groups.append(tuple(module.REASON_CODES))
    for group in groups:
        for rc in group:
            if rc.code in out:
                raise DuplicateReasonCode(rc.code)
            out[rc.code] = rc
    return out


def is_known(code: str) -> bool:
    return code in registry()


def render_markdown() -> str:
    """``docs/reason-codes.md``: every code, grouped by its first segment, sorted."""
    codes = sorted(registry().values(), key=lambda rc: rc.code)
    lines = [
        "# Reason codes",
        "",
        "Every code Domestique can emit, generated from the registry in",
        "`src/domestique/reason_codes.py`:",
        "`python -m domestique.reason_codes > docs/reason-codes.md`.",
        "A test fails when this file and the registry disagree.",
    ]
    group = None
    for rc in codes:
        head = rc.code.split(".", 1)[0]
        if head != group:
            group = head
            lines += ["", f"## `{head}.*`", "", "| code | meaning |", "|---|---|"]
        lines.append(f"| `{rc.code}` | {rc.meaning} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render_markdown())
