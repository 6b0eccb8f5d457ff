"""OCSF export: class per component, action and disposition per action, fields carried over."""

from __future__ import annotations

import pytest

from _helpers.records import make_record
from domestique.audit.export import iso_to_epoch_ms, to_ocsf
from domestique.records import Action, Component


@pytest.mark.parametrize(
    ("action", "action_id", "disposition_id"),
    [
        (Action.ALLOW, 1, 1),
        (Action.REDACT, 4, 11),
        (Action.ASK, 0, 99),
        (Action.DENY, 2, 2),
        (Action.BLOCK, 2, 2),
    ],
)
def test_actions_map_to_ocsf_action_and_disposition(
    action: Action, action_id: int, disposition_id: int
) -> None:
    """Each action has its OCSF action_id and disposition_id."""
    event = to_ocsf(make_record(action=action).to_json())
    assert (event["action_id"], event["disposition_id"]) == (action_id, disposition_id)


def test_proxy_record_is_api_activity() -> None:
    """A proxy record becomes 6003 API Activity with provider, route and upstream host."""
    record = make_record(
        component=Component.PROXY,
        action=Action.REDACT,
        codes=("secret.github_token",),
        obj={
            "provider": "anthropic",
            "route": "/v1/messages",
            "upstream_host": "api.x",
            "bytes_out": 5,
        },
    )
    event = to_ocsf(record.to_json())
    assert (event["class_uid"], event["category_uid"], event["type_uid"]) == (6003, 6, 600301)
    assert event["api"] == {"operation": "/v1/messages", "service": {"name": "anthropic"}}
    assert event["dst_endpoint"] == {"hostname": "api.x"}
    assert event["unmapped"]["bytes_out"] == 5
    assert event["unmapped"]["reasons"][0]["code"] == "secret.github_token"
    assert event["metadata"]["uid"] == record.id
    assert event["time"] == iso_to_epoch_ms(record.time)


def test_guard_record_is_process_activity() -> None:
    """A guard record becomes 1007 Process Activity with the masked command line."""
    event = to_ocsf(make_record(obj={"command": "ls", "cwd": "/r"}).to_json())
    assert (event["class_uid"], event["type_uid"]) == (1007, 100701)
    assert event["process"] == {"cmd_line": "ls"}
    assert event["unmapped"]["cwd"] == "/r"
    assert event["actor"]["user"]["name"] == "dev"


def test_missing_fields_do_not_break_export() -> None:
    """A sparse record still renders (unknown parts are left out)."""
    event = to_ocsf({"component": "proxy", "action": "weird"})
    assert event["class_uid"] == 6003
    assert event["action_id"] == 0
    assert iso_to_epoch_ms("not a time") == 0
    assert iso_to_epoch_ms("1970-01-01T00:00:01.5Z") == 1500
