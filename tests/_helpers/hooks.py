"""Helpers and fixtures for the hook tests: real processes, real host payloads, private state,
and a fake daemon socket that answers what a test says (or nothing)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from _helpers import github_token
from domestique.hooks import client as _client
from domestique.hooks.hosts import HOSTS as _REGISTERED

DOMESTIQUE = str(Path(sys.executable).with_name("domestique"))
# What `domestique install` writes before the host name: this venv's python and the client file.
CLIENT = os.path.abspath(_client.__file__)
INSTALLED = f"{sys.executable} -I -S {CLIENT}"
# Every registered host: a host module added to the registry is run through every test over
# HOSTS (its payloads below must exist, or those tests fail).
HOSTS = _REGISTERED
# Hosts whose protocol has no "ask": an ask arrives there as a deny (Codex parses "ask" but
# treats it as unsupported and runs the call).
NO_ASK = ("codex", "gemini", "copilot", "windsurf", "cline")


FAKE_TOKEN = github_token("Zq8Lm3Rt7Xw2Vb9Nc4Hd6Jf1Gs5Pa0")

# Environment markers of real agents: the test process may itself run under one.
AGENT_ENV = ("CLAUDE", "GEMINI_", "CODEX_", "CURSOR_", "CLINE_", "CODEIUM_", "AI_AGENT")


@dataclass(frozen=True)
class HookResult:
    stdout: bytes
    stderr: bytes
    code: int

    @property
    def reply(self) -> Any:
        return json.loads(self.stdout) if self.stdout.strip() else None


@pytest.fixture
def hook_env(tmp_path: Path) -> dict[str, str]:
    """An environment with HOME and DOMESTIQUE_HOME in tmp, the daemon off, no agent markers."""
    home = tmp_path / "home"
    home.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(AGENT_ENV) and k != "PYTHONDONTWRITEBYTECODE"
    }
    env.update(
        HOME=str(home),
        DOMESTIQUE_HOME=str(tmp_path / "state"),
        DOMESTIQUE_HOOKD="off",
        XDG_STATE_HOME=str(tmp_path / "xdg"),
    )
    return env


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A project directory (a git repository) the hooks run in."""
    path = tmp_path / "repo"
    (path / ".git").mkdir(parents=True)
    return path


def run_hook(
    host: str,
    payload: dict[str, Any] | bytes,
    env: dict[str, str],
    cwd: Path,
    *,
    argv: list[str] | None = None,
    timeout: float = 60,
) -> HookResult:
    """Spawn ``domestique hook HOST`` with ``payload`` on stdin, as the host does."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    done = subprocess.run(
        argv or [DOMESTIQUE, "hook", host],
        input=data,
        capture_output=True,
        env=env,
        cwd=cwd,
        timeout=timeout,
        check=False,
    )
    return HookResult(done.stdout, done.stderr, done.returncode)


def decision(host: str, r: HookResult, event: str = "tool") -> str:
    """allow | ask | deny, read exactly the way ``host`` reads a hook's answer.

    "allow" means *silence*: no decision, so the host's own permission rules still apply. An
    explicit allow (which would switch the host's own prompt off) reads as "explicit-allow", so
    every test expecting "allow" also pins that Domestique stayed silent.
    """
    if host in ("claude-code", "codex", "gemini", "cursor") and r.code == 2:
        return "deny"
    if host in ("claude-code", "codex"):
        assert r.code == 0, r
        if not r.stdout.strip():
            return "allow"
        if event == "prompt":
            return "deny" if r.reply.get("decision") == "block" else "explicit-allow"
        said = str(r.reply["hookSpecificOutput"]["permissionDecision"])
        return said if said in ("deny", "ask") else f"explicit-{said}"
    if host == "gemini":
        assert r.code == 0, r
        if not r.stdout.strip():
            assert not r.stderr.strip(), r  # Gemini reads stderr when stdout is empty
            return "allow"
        return "deny" if r.reply.get("decision") in ("deny", "block") else "explicit-allow"
    if host == "cursor":
        if event == "prompt":
            return "allow" if r.reply.get("continue", True) else "deny"
        if r.reply == {}:
            return "allow"
        said = str(r.reply["permission"])
        return said if said in ("deny", "ask") else f"explicit-{said}"
    if host == "copilot":
        if r.reply and r.reply.get("permissionDecision") == "deny":
            return "deny"
        return "allow" if r.reply == {} else "explicit-allow"
    if host == "windsurf":
        return "deny" if r.code == 2 else "allow"
    assert host == "cline"
    if r.code != 0:
        return "deny"
    return "deny" if r.reply.get("cancel") is True else "allow"


def message(r: HookResult) -> str:
    """Everything the host could show: stdout and stderr."""
    return (r.stdout + r.stderr).decode()


def shell_payload(host: str, command: str, cwd: Path) -> dict[str, Any]:
    if host in ("claude-code", "codex"):
        return {
            "session_id": "sess-1",
            "transcript_path": str(cwd / "t.jsonl"),
            "cwd": str(cwd),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_use_id": "toolu_01",
            "tool_input": {"command": command, "description": "run", "timeout": 120000},
            **({"model": "gpt-5-codex"} if host == "codex" else {}),
        }
    if host == "gemini":
        return {
            "session_id": "sess-1",
            "transcript_path": str(cwd / "t.json"),
            "cwd": str(cwd),
            "hook_event_name": "BeforeTool",
            "timestamp": "2026-11-30T01:00:00Z",
            "tool_name": "run_shell_command",
            "tool_input": {"command": command, "description": "run"},
        }
    if host == "cursor":
        return {
            "hook_event_name": "beforeShellExecution",
            "conversation_id": "conv-1",
            "generation_id": "gen-1",
            "workspace_roots": [str(cwd)],
            "command": command,
            "cwd": str(cwd),
        }
    if host == "copilot":
        return {
            "timestamp": 1704614600000,
            "cwd": str(cwd),
            "toolName": "bash",
            "toolArgs": json.dumps({"command": command, "description": "run"}),
        }
    if host == "windsurf":
        return {
            "agent_action_name": "pre_run_command",
            "trajectory_id": "traj-1",
            "execution_id": "exec-1",
            "timestamp": "2026-11-30T01:00:00Z",
            "tool_info": {"command_line": command, "cwd": str(cwd)},
        }
    return {
        "clineVersion": "3.40.0",
        "hookName": "PreToolUse",
        "timestamp": "1764464400000",
        "taskId": "task-1",
        "workspaceRoots": [str(cwd)],
        "userId": "u1",
        "preToolUse": {"toolName": "execute_command", "parameters": {"command": command}},
    }


def prompt_payload(host: str, prompt: str, cwd: Path) -> dict[str, Any]:
    if host in ("claude-code", "codex"):
        return {
            "session_id": "sess-1",
            "transcript_path": None,
            "cwd": str(cwd),
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
        }
    if host == "gemini":
        return {
            "session_id": "s",
            "cwd": str(cwd),
            "hook_event_name": "BeforeAgent",
            "prompt": prompt,
        }
    if host == "cursor":
        return {
            "hook_event_name": "beforeSubmitPrompt",
            "conversation_id": "conv-1",
            "workspace_roots": [str(cwd)],
            "prompt": prompt,
            "attachments": [],
        }
    if host == "copilot":
        return {"timestamp": 1, "cwd": str(cwd), "prompt": prompt}
    if host == "windsurf":
        return {
            "agent_action_name": "pre_user_prompt",
            "trajectory_id": "traj-1",
            "tool_info": {"user_prompt": prompt},
        }
    return {
        "hookName": "UserPromptSubmit",
        "taskId": "task-1",
        "workspaceRoots": [str(cwd)],
        "userPromptSubmit": {"prompt": prompt, "attachments": []},
    }


def file_payload(host: str, path: str, cwd: Path, *, write: bool) -> dict[str, Any]:
    """A read (or write/edit) of ``path`` through the host's file tool."""
    if host in ("claude-code", "codex"):
        if host == "codex":
            assert write, "Codex has no read tool hook"
            patch = f"*** Begin Patch\n*** Update File: {path}\n@@\n-a\n+b\n*** End Patch\n"
            tool, args = "apply_patch", {"command": patch}
        else:
            tool = "Edit" if write else "Read"
            args = {"file_path": path}
            if write:
                args |= {"old_string": "a", "new_string": "b"}
        return {
            "session_id": "sess-1",
            "cwd": str(cwd),
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_use_id": "toolu_02",
            "tool_input": args,
        }
    if host == "gemini":
        tool = "write_file" if write else "read_file"
        key = "file_path" if write else "absolute_path"
        return {
            "session_id": "s",
            "cwd": str(cwd),
            "hook_event_name": "BeforeTool",
            "tool_name": tool,
            "tool_input": {key: path, **({"content": "x"} if write else {})},
        }
    if host == "cursor":
        assert not write, "Cursor has no pre-write hook event"
        return {
            "hook_event_name": "beforeReadFile",
            "conversation_id": "conv-1",
            "workspace_roots": [str(cwd)],
            "file_path": path,
            "content": "placeholder=1\n",
            "attachments": [],
        }
    if host == "copilot":
        return {
            "timestamp": 1,
            "cwd": str(cwd),
            "toolName": "edit" if write else "view",
            "toolArgs": json.dumps({"path": path}),
        }
    if host == "windsurf":
        info: dict[str, Any] = {"file_path": path}
        if write:
            info["edits"] = [{"old_string": "a", "new_string": "b"}]
        return {
            "agent_action_name": "pre_write_code" if write else "pre_read_code",
            "trajectory_id": "traj-1",
            "tool_info": info,
        }
    return {
        "hookName": "PreToolUse",
        "taskId": "task-1",
        "workspaceRoots": [str(cwd)],
        "preToolUse": {
            "toolName": "write_to_file" if write else "read_file",
            "parameters": {"path": path, **({"content": "x"} if write else {})},
        },
    }


@pytest.fixture
def daemon(hook_env: dict[str, str], repo: Path, tmp_path: Path) -> Iterator[dict[str, str]]:
    """A running hook daemon for the test's DOMESTIQUE_HOME; yields the env that uses it."""
    import time

    env = dict(hook_env, DOMESTIQUE_HOOKD="nostart")
    log = tmp_path / "daemon.log"
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "domestique.hooks.daemon", "120"],
            env=env,
            cwd=repo,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    sock = Path(env["DOMESTIQUE_HOME"]) / "hookd.sock"
    deadline = time.monotonic() + 60
    try:
        while not sock.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"daemon did not start: {log.read_text()}")
            time.sleep(0.05)
        yield env
    finally:
        proc.terminate()
        proc.wait(timeout=10)


class FakeDaemon:
    """A socket at the daemon's path that answers ``reply`` (None: accepts and never answers)."""

    def __init__(self, path: Path, reply: bytes | None) -> None:
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(8)
        # Polled accept: close() stops the thread and joins it before any socket is closed, so
        # no socket is ever closed while another thread uses it (a closed number reused by a
        # later test's connection would otherwise be closed again when the object is collected).
        self.server.settimeout(0.05)
        self.reply = reply
        self.conns: list[socket.socket] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.conns.append(conn)
            if self.reply is not None:
                with contextlib.suppress(OSError):
                    conn.sendall(self.reply)
                conn.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=10)
        for c in self.conns:
            c.close()
        self.server.close()
