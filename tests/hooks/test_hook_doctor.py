"""`domestique doctor`: per host found, installed? fail-closed? answering?"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from hook_helpers import DOMESTIQUE

from domestique.hooks.doctor import reply_stops


def _env(hook_env: dict[str, str]) -> dict[str, str]:
    # Only the virtualenv and the system directories: no real agent CLI is found on PATH.
    return dict(hook_env, PATH=f"{Path(DOMESTIQUE).parent}:/usr/bin:/bin")


def _doctor(env: dict[str, str], cwd: Path) -> tuple[int, list[dict[str, object]]]:
    done = subprocess.run(
        [DOMESTIQUE, "doctor", "--json"],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode, json.loads(done.stdout)


def test_no_host_found_is_fine(hook_env: dict[str, str], repo: Path) -> None:
    """With no agent host under HOME or on PATH, doctor reports nothing and exits 0."""
    code, reports = _doctor(_env(hook_env), repo)
    assert (code, reports) == (0, [])


def test_found_but_not_installed_is_a_problem(hook_env: dict[str, str], repo: Path) -> None:
    """A host whose settings directory exists but has no hook is reported, exit 1."""
    (Path(hook_env["HOME"]) / ".codex").mkdir()
    code, reports = _doctor(_env(hook_env), repo)
    assert code == 1
    assert [(r["host"], r["installed"], r["ok"]) for r in reports] == [("codex", False, False)]


def test_installed_hook_is_probed_and_fail_closed_reported(
    hook_env: dict[str, str], repo: Path
) -> None:
    """After install: Claude Code is installed, fail-closed and answering; Gemini answering but
    without a fail-closed switch."""
    env = _env(hook_env)
    for host in ("claude-code", "gemini"):
        subprocess.run([DOMESTIQUE, "install", host], env=env, cwd=repo, check=True)
    code, reports = _doctor(env, repo)
    by_host = {r["host"]: r for r in reports}
    assert code == 0, reports
    assert by_host["claude-code"]["fail_closed"] is True
    assert by_host["claude-code"]["answering"] is True
    assert by_host["gemini"]["fail_closed"] is False
    assert by_host["gemini"]["answering"] is True


def test_broken_hook_command_is_not_answering(hook_env: dict[str, str], repo: Path) -> None:
    """An installed entry whose interpreter is gone is reported as not answering, exit 1."""
    path = Path(hook_env["HOME"]) / ".cursor" / "hooks.json"
    path.parent.mkdir(parents=True)
    cmd = "/nonexistent/python -m domestique.hooks.entry cursor"
    path.write_text(
        json.dumps({"version": 1, "hooks": {"beforeShellExecution": [{"command": cmd}]}})
    )
    code, reports = _doctor(_env(hook_env), repo)
    assert code == 1
    (report,) = reports
    assert report["installed"] is True
    assert report["answering"] is False
    assert report["fail_closed"] is False


def test_reply_stops_reads_each_protocol() -> None:
    """The probe reads answers the way each host does (exit 2, JSON fields, invalid JSON)."""
    assert reply_stops("claude-code", b"", 2)
    assert not reply_stops("copilot", b"", 2)
    assert reply_stops("copilot", b'{"permissionDecision":"deny"}', 0)
    assert reply_stops("cursor", b"not json", 0)
    assert not reply_stops("gemini", b'{"decision":"allow"}', 0)
    assert reply_stops("cline", b'{"cancel":true}', 0)
    assert not reply_stops("windsurf", b"", 0)
