"""The host adapters: each host's documented payload becomes the right normalised event."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _helpers.hooks import HOSTS, file_payload, prompt_payload, shell_payload
from domestique.hooks.hosts import parse_event
from domestique.hooks.hosts._common import string_leaves
from domestique.hooks.hosts.codex import patch_paths
from domestique.hooks.protocol import EventKind, MalformedInput, UnknownEvent

REPO = Path("/work/repo")


def _parse(host: str, payload: object) -> object:
    return parse_event(host, json.dumps(payload).encode())


@pytest.mark.parametrize("host", HOSTS)
def test_shell_payload_yields_the_command(host: str) -> None:
    """Every host's shell hook becomes a shell event carrying the exact command."""
    event = parse_event(host, json.dumps(shell_payload(host, "ls -la 'a b'", REPO)).encode())
    assert event.kind is EventKind.SHELL
    assert event.command == "ls -la 'a b'"


@pytest.mark.parametrize("host", HOSTS)
def test_prompt_payload_yields_the_prompt_text(host: str) -> None:
    """Every host's prompt hook becomes a prompt event whose text is scanned."""
    event = parse_event(host, json.dumps(prompt_payload(host, "fix the bug", REPO)).encode())
    assert event.kind is EventKind.PROMPT
    assert event.texts == (("prompt", "fix the bug"),)


@pytest.mark.parametrize("host", [h for h in HOSTS if h != "codex"])
def test_read_payload_yields_an_absolute_path(host: str) -> None:
    """File reads name the path, made absolute against the working directory.

    Windsurf's read hook carries no cwd (its paths are absolute), so it gets an absolute one.
    """
    path = str(REPO / ".env") if host == "windsurf" else ".env"
    event = parse_event(host, json.dumps(file_payload(host, path, REPO, write=False)).encode())
    assert event.kind is EventKind.READ
    assert event.paths == (str(REPO / ".env"),)


@pytest.mark.parametrize("host", [h for h in HOSTS if h != "cursor"])
def test_write_payload_yields_the_written_path(host: str) -> None:
    """Edits and writes (Codex: the apply_patch envelope) name the file they change."""
    payload = file_payload(host, "/home/u/.claude/settings.json", REPO, write=True)
    event = parse_event(host, json.dumps(payload).encode())
    assert event.kind is EventKind.WRITE
    assert event.paths == ("/home/u/.claude/settings.json",)


def test_session_ids_are_taken_from_each_hosts_field() -> None:
    """session_id (Claude/Codex/Gemini), conversation_id (Cursor), trajectory_id, taskId."""
    got = {
        h: parse_event(h, json.dumps(shell_payload(h, "ls", REPO)).encode()).session_id
        for h in HOSTS
    }
    assert got == {
        "claude-code": "sess-1",
        "codex": "sess-1",
        "gemini": "sess-1",
        "cursor": "conv-1",
        "copilot": None,
        "windsurf": "traj-1",
        "cline": "task-1",
    }


def test_copilot_tool_args_must_be_json_when_a_string() -> None:
    """Copilot's toolArgs is a JSON string; one that does not parse is malformed."""
    with pytest.raises(MalformedInput):
        _parse("copilot", {"toolName": "bash", "toolArgs": "{not json"})


def test_mcp_tools_scan_every_string_argument() -> None:
    """An MCP call (mcp__server__tool) is scanned leaf by leaf with JSON paths."""
    payload = {
        "hook_event_name": "PreToolUse",
        "session_id": "s",
        "tool_name": "mcp__jira__create_issue",
        "tool_input": {"title": "t", "body": {"lines": ["x", "y"]}, "n": 3},
    }
    event = _parse("claude-code", payload)
    assert event.kind is EventKind.MCP
    assert dict(event.texts) == {
        "tool_input.title": "t",
        "tool_input.body.lines[0]": "x",
        "tool_input.body.lines[1]": "y",
    }


def test_cursor_mcp_tool_input_may_be_a_json_string() -> None:
    """Cursor's beforeMCPExecution passes tool_input as a JSON string; it is decoded."""
    payload = {
        "hook_event_name": "beforeMCPExecution",
        "conversation_id": "c",
        "tool_name": "post",
        "tool_input": json.dumps({"text": "hello"}),
        "url": "https://mcp.example/sse",
    }
    event = _parse("cursor", payload)
    assert event.texts == (("tool_input.text", "hello"),)
    assert event.urls == ("https://mcp.example/sse",)


def test_web_fetch_collects_urls_from_prompt_text() -> None:
    """Gemini's web_fetch carries URLs inside its prompt: they are extracted for the policy."""
    payload = {
        "hook_event_name": "BeforeTool",
        "tool_name": "web_fetch",
        "tool_input": {"prompt": "summarise https://a.example/x?k=1 please"},
    }
    event = _parse("gemini", payload)
    assert event.kind is EventKind.FETCH
    assert event.urls == ("https://a.example/x?k=1",)


def test_unknown_tools_are_kind_unknown_not_allowed() -> None:
    """A tool name the adapter does not know is UNKNOWN (policy decides), never benign."""
    payload = {"hook_event_name": "PreToolUse", "tool_name": "Teleport", "tool_input": {}}
    assert _parse("claude-code", payload).kind is EventKind.UNKNOWN


@pytest.mark.parametrize(
    ("host", "payload"),
    [
        ("claude-code", {"hook_event_name": "PostToolUse", "tool_name": "Bash"}),
        ("gemini", {"hook_event_name": "AfterTool"}),
        ("cursor", {"hook_event_name": "afterFileEdit"}),
        ("windsurf", {"agent_action_name": "post_run_command", "tool_info": {}}),
        ("cline", {"hookName": "TaskStart"}),
    ],
)
def test_events_without_handling_raise_unknown_event(host: str, payload: object) -> None:
    """An event the adapter does not handle is reported, so the hook can deny it."""
    with pytest.raises(UnknownEvent):
        _parse(host, payload)


def test_codex_patch_paths_include_moves() -> None:
    """apply_patch headers: add, update, delete and move targets are all named."""
    patch = (
        "*** Begin Patch\n*** Add File: a.py\n+x\n*** Update File: b.py\n*** Move to: c.py\n"
        "*** Delete File: d.py\n*** End Patch\n"
    )
    assert patch_paths(patch) == ["a.py", "b.py", "c.py", "d.py"]


def test_string_leaves_walks_nested_json() -> None:
    """string_leaves yields every string with its path and skips numbers and nulls."""
    assert list(string_leaves({"a": [1, "x", {"b": None, "c": "y"}]}, "$")) == [
        ("$.a[1]", "x"),
        ("$.a[2].c", "y"),
    ]


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=5)
    ),
    max_leaves=20,
)
_keys = st.sampled_from(
    ["hook_event_name", "tool_name", "tool_input", "command", "toolName", "toolArgs", "prompt",
     "agent_action_name", "tool_info", "hookName", "preToolUse", "file_path", "cwd"]
)  # fmt: skip
_events = st.sampled_from(
    ["PreToolUse", "UserPromptSubmit", "BeforeTool", "BeforeAgent", "beforeShellExecution",
     "beforeReadFile", "pre_run_command", "pre_read_code", "Bash", "run_shell_command"]
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    host=st.sampled_from(HOSTS),
    payload=st.dictionaries(_keys, _json | _events, max_size=6),
)
def test_adapters_never_fail_with_anything_but_their_own_errors(host: str, payload: dict) -> None:  # type: ignore[type-arg]
    """Any JSON object is either an event or MalformedInput/UnknownEvent: no crash, no None."""
    try:
        event = parse_event(host, json.dumps(payload).encode())
    except (MalformedInput, UnknownEvent):
        return
    assert event.host == host
    if event.kind is EventKind.SHELL:
        assert isinstance(event.command, str)
