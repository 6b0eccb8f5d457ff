"""Small valid decision records for the audit, boundary and record tests."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from domestique.records import (
    Action,
    Component,
    DecisionRecord,
    Evidence,
    JSONValue,
    PolicyRef,
    Reason,
    Subject,
)

POLICY = PolicyRef("test", "0" * 64)


def make_record(
    *,
    component: Component = Component.GUARD,
    action: Action = Action.ALLOW,
    codes: tuple[str, ...] = (),
    obj: Mapping[str, JSONValue] | None = None,
    agent: str | None = "claude-code",
    time: str | None = None,
) -> DecisionRecord:
    """A small, valid decision record; ``codes`` become reasons with one evidence each."""
    reasons = tuple(
        Reason(code, f"test reason {code}", (Evidence("command[0:4]", "AK…LE", "hmac-sha256:00"),))
        for code in codes
    )
    record = DecisionRecord(
        component=component,
        action=action,
        reasons=reasons,
        subject=Subject(user="dev", host="box", agent=agent),
        object=dict(obj) if obj is not None else {"command": "git status", "cwd": "/repo"},
        policy=POLICY,
        engine={"domestique": "test"},
        latency_us=42,
    )
    return dataclasses.replace(record, time=time) if time is not None else record
