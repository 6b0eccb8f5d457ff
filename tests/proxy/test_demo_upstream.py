"""The demo's stand-in provider: records bodies, echoes placeholders one character per event."""

from __future__ import annotations

import json

from domestique.cli.demo_upstream import DemoUpstream


def test_answer_echoes_every_placeholder_it_saw() -> None:
    """Each placeholder in the body appears in the streamed text and the tool call."""
    ph = "[REDACTED:slack_token:0123abcd]"
    events = DemoUpstream().answer_events(json.dumps({"messages": [{"content": ph}]}).encode())
    text = args = ""
    for raw in events:
        data = json.loads(raw.decode().split("data: ", 1)[1])
        delta = data.get("delta", {})
        if data["type"] == "content_block_delta":
            assert len(delta.get("text", "x")) == 1  # one character per text event
            text += delta.get("text", "")
            args += delta.get("partial_json", "")
    assert ph in text
    assert json.loads(args)["command"].endswith(ph)


def test_nothing_to_echo() -> None:
    """No placeholder: it says so."""
    events = DemoUpstream().answer_events(b"{}")
    assert any(b"N" in e for e in events)
