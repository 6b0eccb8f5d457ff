"""Each hook host's input parser, and the whole in-process decision, on any JSON.

Payloads are drawn per host from the hosts' own keys and event names (REFERENCE.md) with wrong
types, missing fields, nesting and junk, plus byte mutations of real payloads. Invariants:
``parse_event`` raises only ``MalformedInput`` / ``UnknownEvent``; ``Judge.decide`` never
raises and returns ``(stdout, stderr, exit)`` in the host's protocol (stdout empty or one JSON
value); input it cannot parse is a stop naming ``hook.malformed_input`` /
``hook.unknown_event`` (on stderr, exit 2 where the host blocks on it); ``rm -rf ~`` in a
shell tool call is never allowed.
"""

from __future__ import annotations

import json
import os
import tempfile
from functools import cache
from typing import Any

from hypothesis import strategies as st

from domestique.hooks.decide import Judge
from domestique.hooks.hosts import HOSTS, parse_event
from domestique.hooks.protocol import MalformedInput, UnknownEvent

from ._harness import Target, mutated

EVENTS = [
    "PreToolUse",
    "UserPromptSubmit",
    "BeforeTool",
    "BeforeAgent",
    "beforeShellExecution",
    "beforeReadFile",
    "beforeMCPExecution",
    "beforeSubmitPrompt",
    "preToolUse",
    "userPromptSubmitted",
    "pre_run_command",
    "pre_read_code",
    "pre_write_code",
    "pre_user_prompt",
    "pre_mcp_tool_use",
    "PostToolUse",
    "",
]
TOOLS = [
    "Bash",
    "Read",
    "Write",
    "Edit",
    "Glob",
    "Grep",
    "WebFetch",
    "Shell",
    "run_shell_command",
    "read_file",
    "write_file",
    "apply_patch",
    "bash",
    "view",
    "Task",
    "unknown_tool",
]
STRINGS = st.one_of(
    st.sampled_from(
        [
            "rm -rf ~",
            "git status",
            "/etc/passwd",
            "~/.ssh/id_rsa",
            ".env",
            "*.env",
            "http://127.0.0.1/",
            "AKIAZ3MHQX7B2LKWP4RN",
            "",
            "../x",
            "/tmp",
        ]
    ),
    st.sampled_from(EVENTS),
    st.sampled_from(TOOLS),
    st.text(max_size=8),
)
KEYS = [
    "hook_event_name",
    "tool_name",
    "tool_input",
    "command",
    "file_path",
    "path",
    "cwd",
    "session_id",
    "prompt",
    "toolName",
    "toolArgs",
    "agent_action_name",
    "tool_info",
    "command_line",
    "hookName",
    "content",
    "url",
    "pattern",
    "workspace_roots",
    "conversation_id",
    "mcp_tool_arguments",
    "input",
    "user_prompt",
    "trajectory_id",
]
JSONS = st.recursive(
    st.none() | st.booleans() | st.integers() | STRINGS,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.sampled_from(KEYS), c, max_size=6),
    max_leaves=16,
)


def _payloads(corpus: list[bytes]) -> st.SearchStrategy[tuple[str, bytes]]:
    shaped = st.dictionaries(st.sampled_from(KEYS), JSONS, max_size=8).map(
        lambda d: json.dumps(d).encode()
    )
    raw = st.one_of(shaped, mutated(corpus), st.binary(max_size=32))
    return st.tuples(st.sampled_from(HOSTS), raw)


@cache
def _judge() -> tuple[Judge, dict[str, str]]:
    home = tempfile.mkdtemp(prefix="dq-fuzz-hooks-")
    os.environ["DOMESTIQUE_HOME"] = home
    return Judge(), {"DOMESTIQUE_HOME": home, "PATH": "/usr/bin:/bin"}


def _shell_danger(payload: Any) -> bool:
    """A shell tool call whose command is exactly ``rm -rf ~`` (any host's shape)."""
    if not isinstance(payload, dict):
        return False
    ti = payload.get("tool_input")
    return (
        payload.get("hook_event_name") == "PreToolUse"
        and payload.get("tool_name") == "Bash"
        and isinstance(ti, dict)
        and ti.get("command") == "rm -rf ~"
    )


def check(case: tuple[str, bytes]) -> None:
    host, raw = case
    parsed_ok = True
    try:
        parse_event(host, raw)
    except (MalformedInput, UnknownEvent):
        parsed_ok = False
    judge, env = _judge()
    out, err, code = judge.decide(host, raw, pid=None, env=env, cwd=env["DOMESTIQUE_HOME"])
    assert isinstance(out, bytes)
    assert isinstance(err, bytes)
    assert isinstance(code, int)
    if out.strip():
        json.loads(out)
    if not parsed_ok:
        said = err + out  # a host with a structured deny (Copilot) reads it on stdout
        assert said.strip(), "unparseable input was not a stop"
        assert b"hook.malformed_input" in said or b"hook.unknown_event" in said, said[:200]
        if host != "copilot":
            assert code != 0, "unparseable input exited 0"
    try:
        payload = json.loads(raw)
    except ValueError:
        return
    if host in ("claude-code", "codex") and _shell_danger(payload):
        # A deny is exit 2 (errors) or the structured permissionDecision (exit 0).
        said = json.loads(out).get("hookSpecificOutput", {}) if out.strip() else {}
        assert code == 2 or said.get("permissionDecision") == "deny", "rm -rf ~ was allowed"


TARGET = Target(
    "hooks",
    _payloads,
    check,
    from_bytes=lambda b: (
        b.split(b"\n", 1)[0].decode(),
        b.split(b"\n", 1)[1] if b"\n" in b else b"",
    ),
    to_bytes=lambda c: c[0].encode() + b"\n" + c[1],
)
