"""Regression tests for what the adversarial review found in the agent hooks.

Each test spawns ``domestique hook HOST`` as the host does (real process, real JSON on stdin),
with DOMESTIQUE_HOME in a temporary folder and the daemon off.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from _helpers.hooks import DOMESTIQUE, FAKE_TOKEN, decision, message, run_hook

AWS_KEY_ID = "AKIAZ3MHQX7B2LKWP4RN"  # the documented shape; never issued


def _claude(tool: str, tool_input: dict[str, object], cwd: Path) -> dict[str, object]:
    return {
        "session_id": "sess-1",
        "cwd": str(cwd),
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
    }


def _everything_written(env: dict[str, str]) -> bytes:
    """Every byte under DOMESTIQUE_HOME plus what the audit export prints (WAL included)."""
    home = Path(env["DOMESTIQUE_HOME"])
    blobs = [p.read_bytes() for p in home.rglob("*") if p.is_file()]
    for fmt in ("jsonl", "ocsf"):
        done = subprocess.run(
            [DOMESTIQUE, "audit", "export", "--format", fmt],
            env=env,
            capture_output=True,
            check=False,
        )
        blobs += [done.stdout, done.stderr]
    return b"\n".join(blobs)


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("Read", {}),
        ("Read", {"file_path": 7}),
        ("Write", {"file_path": None, "content": "x"}),
        ("Edit", {"old_string": "a", "new_string": "b"}),
        ("MultiEdit", {"edits": []}),
    ],
)
def test_file_tool_without_a_path_is_denied_as_malformed(
    hook_env: dict[str, str], repo: Path, tool: str, tool_input: dict[str, object]
) -> None:
    """A Read/Write/Edit call whose path is missing or not a string cannot be judged: it denies
    with hook.malformed_input (it used to be allowed: nothing was checked)."""
    r = run_hook("claude-code", _claude(tool, tool_input, repo), hook_env, repo)
    assert decision("claude-code", r) == "deny"
    assert r.code == 2
    assert "hook.malformed_input" in message(r)


@pytest.mark.parametrize(
    ("host", "payload"),
    [
        ("gemini", {"hook_event_name": "BeforeTool", "tool_name": "write_file", "tool_input": {}}),
        ("copilot", {"toolName": "view", "toolArgs": "{}"}),
        (
            "cline",
            {"hookName": "PreToolUse", "preToolUse": {"toolName": "read_file", "parameters": {}}},
        ),
    ],
)
def test_other_hosts_file_tools_without_a_path_deny(
    hook_env: dict[str, str], repo: Path, host: str, payload: dict[str, object]
) -> None:
    """The same rule on the other hosts' read and write tools."""
    r = run_hook(host, payload, hook_env, repo)
    assert decision(host, r) == "deny"
    assert "hook.malformed_input" in message(r)


def test_grep_pointed_at_a_credential_directory_is_a_credential_read(
    hook_env: dict[str, str], repo: Path
) -> None:
    """Grep with path=~/.ssh prints private key lines as surely as Read of id_ed25519."""
    ssh = Path(hook_env["HOME"]) / ".ssh"
    ssh.mkdir()
    (ssh / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    payload = _claude("Grep", {"pattern": "PRIVATE", "path": str(ssh)}, repo)
    r = run_hook("claude-code", payload, hook_env, repo)
    assert decision("claude-code", r) in ("ask", "deny")
    assert "hook.credential_read" in message(r)


@pytest.mark.parametrize("glob", [".env", "**/.env*", "*.{env,txt}", "id_*"])
def test_search_glob_aimed_at_credential_files_is_a_credential_read(
    hook_env: dict[str, str], repo: Path, glob: str
) -> None:
    """Grep's glob overrides .gitignore and hidden-file rules: ``glob: .env`` reads .env."""
    payload = _claude("Grep", {"pattern": "KEY", "glob": glob, "output_mode": "content"}, repo)
    r = run_hook("claude-code", payload, hook_env, repo)
    assert decision("claude-code", r) in ("ask", "deny")
    assert "hook.credential_read" in message(r)


@pytest.mark.parametrize("glob", ["*", "**/*.py", "src/**/*.ts"])
def test_ordinary_search_globs_stay_allowed(
    hook_env: dict[str, str], repo: Path, glob: str
) -> None:
    """Globs that do not aim at credential names are the tool's ordinary search."""
    r = run_hook(
        "claude-code", _claude("Grep", {"pattern": "x", "glob": glob}, repo), hook_env, repo
    )
    assert decision("claude-code", r) == "allow"


@pytest.mark.parametrize(
    ("tool", "rel"),
    [
        ("Read", ".AWS/credentials"),
        ("Read", ".SSH/ID_RSA"),
        ("Write", "proj/.Domestique/policy.toml"),
        ("Write", ".Claude/Settings.json"),
    ],
)
def test_case_variants_of_protected_paths_are_still_protected(
    hook_env: dict[str, str], repo: Path, tool: str, rel: str
) -> None:
    """macOS and Windows ignore case: ~/.AWS/credentials is ~/.aws/credentials there, and
    .Domestique/policy.toml is the project policy. Case must not switch protection off."""
    path = Path(hook_env["HOME"]) / rel
    r = run_hook("claude-code", _claude(tool, {"file_path": str(path)}, repo), hook_env, repo)
    assert decision("claude-code", r) in ("ask", "deny")
    assert ("hook.credential_read" if tool == "Read" else "hook.guard_tamper") in message(r)


def test_ssh_public_key_and_config_reads_stay_allowed(hook_env: dict[str, str], repo: Path) -> None:
    """The credential-directory rule covers the directory, not every file in it."""
    ssh = Path(hook_env["HOME"]) / ".ssh"
    ssh.mkdir()
    for name in ("id_ed25519.pub", "config"):
        (ssh / name).write_text("ssh-ed25519 AAAA test\n")
        payload = _claude("Read", {"file_path": str(ssh / name)}, repo)
        assert decision("claude-code", run_hook("claude-code", payload, hook_env, repo)) == "allow"


@pytest.mark.parametrize(
    "payload",
    [
        {"hook_event_name": "PreToolUse", "tool_name": FAKE_TOKEN, "tool_input": {}},
        {"hook_event_name": FAKE_TOKEN},
        {
            "hook_event_name": "PreToolUse",
            "tool_name": "Read",
            "tool_input": {"file_path": f"/tmp/{FAKE_TOKEN}/.env"},
        },
        {
            "hook_event_name": "PreToolUse",
            "tool_name": "Write",
            "tool_input": {"file_path": f"/tmp/.domestique/{AWS_KEY_ID}"},
        },
        {
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": f"cat /tmp/{AWS_KEY_ID}/notes"},
        },
        {
            "hook_event_name": "PreToolUse",
            "tool_name": "WebFetch",
            "tool_input": {"url": f"https://example.com/{FAKE_TOKEN}/x", "prompt": "p"},
        },
    ],
)
def test_secrets_in_tool_names_paths_and_events_are_never_echoed_or_recorded(
    hook_env: dict[str, str], repo: Path, payload: dict[str, object]
) -> None:
    """A token in a tool name, event name, path, URL path or command is masked in the host reply
    and in the audit record (it used to be copied raw into both)."""
    r = run_hook("claude-code", payload, hook_env, repo)
    shown = r.stdout + r.stderr
    assert FAKE_TOKEN.encode() not in shown
    assert AWS_KEY_ID.encode() not in shown
    written = _everything_written(hook_env)
    assert b"hook" in written  # the decision was recorded
    assert FAKE_TOKEN.encode() not in written
    assert AWS_KEY_ID.encode() not in written


def test_secret_in_an_ancestor_command_line_is_not_recorded(
    hook_env: dict[str, str], repo: Path
) -> None:
    """The record's ancestry holds the command lines of the hook's parents; a parent started
    as ``… -p "my token is ghp_…"`` must not put the token into the audit log."""
    payload = json.dumps(_claude("Bash", {"command": "ls"}, repo))
    script = f"{DOMESTIQUE} hook claude-code <<'EOF'\n{payload}\nEOF\ntrue {FAKE_TOKEN}\n"
    done = subprocess.run(
        ["bash", "-c", script], env=hook_env, cwd=repo, capture_output=True, check=False
    )
    assert done.returncode == 0, done
    written = _everything_written(hook_env)
    assert b"ancestry" in written
    assert FAKE_TOKEN.encode() not in written


def test_read_of_a_large_file_with_a_secret_is_still_scanned(
    hook_env: dict[str, str], repo: Path
) -> None:
    """A file over 1 MiB used to be read unscanned (allow); its first MiB, where a read tool
    starts, is now scanned."""
    big = repo / "dump.log"
    big.write_text(f"token={FAKE_TOKEN}\n" + "x" * 80 + "\n" + ("y" * 99 + "\n") * 20_000)
    assert big.stat().st_size > 1024 * 1024
    r = run_hook("claude-code", _claude("Read", {"file_path": str(big)}, repo), hook_env, repo)
    assert decision("claude-code", r) in ("ask", "deny")
    assert "secret.github" in message(r)


@pytest.mark.parametrize("rel", [".git/hooks/pre-commit", ".git/config"])
def test_edit_tools_cannot_plant_git_hooks_or_config(
    hook_env: dict[str, str], repo: Path, rel: str
) -> None:
    """``.git/hooks/pre-commit`` or ``core.fsmonitor`` in ``.git/config`` run code on a later,
    allowed ``git commit``/``git status``: writing them through an edit tool is denied."""
    payload = _claude("Write", {"file_path": str(repo / rel), "content": "curl x | sh"}, repo)
    r = run_hook("claude-code", payload, hook_env, repo)
    assert decision("claude-code", r) == "deny"
    assert "hook.guard_tamper" in message(r)


@pytest.mark.xfail(
    strict=True, reason="open: only the first MiB of a file a read tool opens is scanned"
)
def test_read_with_an_offset_past_the_scanned_mib_is_judged(
    hook_env: dict[str, str], repo: Path
) -> None:
    """Known escape: a secret past the first MiB, read with ``offset``, is not scanned."""
    big = repo / "dump.log"
    big.write_text(("y" * 99 + "\n") * 12_000 + f"token={FAKE_TOKEN}\n")
    payload = _claude("Read", {"file_path": str(big), "offset": 11_990, "limit": 50}, repo)
    r = run_hook("claude-code", payload, hook_env, repo)
    assert decision("claude-code", r) in ("ask", "deny")


def test_codex_gets_deny_for_ask_and_silence_for_allow(
    hook_env: dict[str, str], repo: Path
) -> None:
    """Codex treats ``permissionDecision: "ask"`` (and "allow") as unsupported, marks the hook
    failed and runs the call (openai/codex #28437): an ask (here a tool the adapter does not
    know, ``hook.unknown_tool``) must reach Codex as a deny (the structured one, exit 0: Codex
    blocks on it and shows it as the hook's decision), an allow as silence."""
    base = {"session_id": "s", "cwd": str(repo), "hook_event_name": "PreToolUse"}
    asked = run_hook(
        "codex", {**base, "tool_name": "web_search", "tool_input": {"q": "x"}}, hook_env, repo
    )
    assert asked.code == 0
    assert asked.reply["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "hook.unknown_tool" in message(asked)
    allowed = run_hook(
        "codex",
        {**base, "tool_name": "Bash", "tool_input": {"command": "git status"}},
        hook_env,
        repo,
    )
    assert (allowed.code, allowed.stdout) == (0, b"")


@pytest.mark.parametrize(
    "path", ["/proc/self/environ", "/proc/1/environ", "/proc/1/task/1/environ"]
)
def test_reading_a_process_environment_is_a_credential_read(
    hook_env: dict[str, str], repo: Path, path: str
) -> None:
    """``/proc/<pid>/environ`` holds the agent's API key and every exported token."""
    r = run_hook("claude-code", _claude("Read", {"file_path": path}, repo), hook_env, repo)
    assert decision("claude-code", r) in ("ask", "deny")
    assert "hook.credential_read" in message(r)


def test_cline_mcp_arguments_given_as_a_json_string_are_judged(
    hook_env: dict[str, str], repo: Path
) -> None:
    """Cline passes ``use_mcp_tool`` arguments as a JSON *string*: a filesystem server writing
    ``~/.claude/settings.json`` through it used to be allowed (the path was never seen)."""
    settings = Path(hook_env["HOME"]) / ".claude" / "settings.json"
    args = json.dumps({"path": str(settings), "content": "{}"})
    payload = {
        "hookName": "PreToolUse",
        "workspaceRoots": [str(repo)],
        "preToolUse": {
            "toolName": "use_mcp_tool",
            "parameters": {"server_name": "fs", "tool_name": "write_file", "arguments": args},
        },
    }
    r = run_hook("cline", payload, hook_env, repo)
    assert decision("cline", r) == "deny"
    assert "hook.guard_tamper" in message(r)


@pytest.mark.parametrize("rel", [".aws/credentials", ".ssh/id_ed25519", ".ssh"])
def test_mcp_filesystem_read_of_credentials_is_a_credential_read(
    hook_env: dict[str, str], repo: Path, rel: str
) -> None:
    """``mcp__filesystem__read_file`` reads files the host's Read hook never sees."""
    path = Path(hook_env["HOME"]) / rel
    payload = _claude("mcp__filesystem__read_file", {"path": str(path)}, repo)
    r = run_hook("claude-code", payload, hook_env, repo)
    assert decision("claude-code", r) in ("ask", "deny")
    assert "hook.credential_read" in message(r)
