"""The decision record: UUIDv7 ids, canonical JSON, round trips, action severity."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _helpers.records import make_record
from domestique.records import (
    Action,
    Actor,
    Ancestor,
    CanonicalJSONError,
    Component,
    DecisionRecord,
    Subject,
    canonical_json,
    most_severe,
    new_record_id,
    to_canonical_json,
    utc_now_iso,
)

UUID7 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


@settings(max_examples=200, deadline=None)
@given(
    st.integers(min_value=0, max_value=2**47),
    st.integers(min_value=1, max_value=2**20),
)
def test_uuid7_sorts_by_time(ms: int, later_by_ms: int) -> None:
    """An id made a millisecond or more later sorts after, whatever the random bits."""
    first = new_record_id(ms * 1_000_000)
    second = new_record_id((ms + later_by_ms) * 1_000_000)
    assert UUID7.match(first)
    assert UUID7.match(second)
    assert first < second


def test_uuid7_version_variant_and_uniqueness() -> None:
    """Ids in one millisecond are distinct and carry version 7 and the RFC variant."""
    ids = {new_record_id(1_700_000_000_000_000_000) for _ in range(1000)}
    assert len(ids) == 1000
    assert all(UUID7.match(i) for i in ids)


def test_canonical_json_is_sorted_compact_utf8() -> None:
    """Sorted keys, no spaces, UTF-8 (not \\u escapes); same input, same bytes."""
    value = {"b": [1, "é"], "a": {"z": None, "y": True}}
    out = canonical_json(value)
    assert out == '{"a":{"y":true,"z":null},"b":[1,"é"]}'.encode()
    assert canonical_json(json.loads(out)) == out


@pytest.mark.parametrize(
    "value",
    [1.0, {"a": [1, 2.5]}, float("nan"), {1: "x"}, {"a": {"b": object()}}],
    ids=["float", "nested-float", "nan", "int-key", "object"],
)
def test_canonical_json_rejects_values_without_one_form(value: object) -> None:
    """Floats, NaN, non-string keys and non-JSON objects are refused, never rendered."""
    with pytest.raises(CanonicalJSONError):
        canonical_json(value)


def test_record_round_trips_through_its_json() -> None:
    """from_json(to_json) rebuilds an equal record, ancestry and evidence included."""
    record = make_record(codes=("secret.github_token", "cmd.pipe_to_shell"))
    record = DecisionRecord(
        component=Component.HOOK,
        action=Action.ASK,
        reasons=record.reasons,
        subject=Subject(
            user="dev",
            host="box",
            actor=Actor.HUMAN,
            agent=None,
            session_id="s1",
            ancestry=(Ancestor(10, "bash", "/bin/bash", "bash -c x", 123), Ancestor(1, "init")),
            markers=("env:CLAUDECODE",),
        ),
        object={"command": "x", "unfolded": ["a", "b"], "nested": {"k": [1, None]}},
        policy=record.policy,
        engine={"rules": "1"},
        latency_us=7,
    )
    data = json.loads(to_canonical_json(record))
    assert DecisionRecord.from_json(data) == record
    assert to_canonical_json(DecisionRecord.from_json(data)) == to_canonical_json(record)


def test_record_time_is_an_iso_string() -> None:
    """Times are fixed-width UTC strings (they sort, and they are not floats)."""
    assert utc_now_iso(1_700_000_000_123_456_789) == "2023-11-14T22:13:20.123456Z"
    assert isinstance(make_record().time, str)


def test_most_severe_and_stops() -> None:
    """Severity order allow < redact < ask < deny = block; on a deny/block tie block wins."""
    assert most_severe([]) is Action.ALLOW
    assert most_severe([Action.REDACT, Action.ALLOW]) is Action.REDACT
    assert most_severe([Action.ASK, Action.REDACT]) is Action.ASK
    assert most_severe([Action.DENY, Action.BLOCK]) is Action.BLOCK
    assert most_severe([Action.BLOCK, Action.DENY]) is Action.BLOCK
    assert [a.stops for a in Action] == [False, False, True, True, True]
