"""`domestique install/uninstall HOST`: keep every other setting, idempotent, backed up, undone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from _helpers.hooks import CLIENT, DOMESTIQUE, HOSTS, INSTALLED
from domestique.hooks.install import is_hook_command

JSON_HOSTS = [h for h in HOSTS if h != "cline"]

USER_FILES = {
    "claude-code": ".claude/settings.json",
    "codex": ".codex/hooks.json",
    "gemini": ".gemini/settings.json",
    "cursor": ".cursor/hooks.json",
    "copilot": ".copilot/hooks/domestique.json",
    "windsurf": ".codeium/windsurf/hooks.json",
}

# Settings a user already has: unrelated keys and someone else's hook on the same event.
UNRELATED: dict[str, dict[str, object]] = {
    "claude-code": {
        "model": "opus",
        "permissions": {"allow": ["Bash(git status:*)"], "deny": []},
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "/opt/lint.sh"}]}
            ]
        },
        "env": {"FOO": "bär"},
    },
    "codex": {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify"}]}]}},
    "gemini": {"theme": "dark", "tools": {"sandbox": True}, "hooks": {}},
    "cursor": {"version": 1, "hooks": {"afterFileEdit": [{"command": "./fmt.sh"}]}},
    "copilot": {
        "version": 1,
        "hooks": {"preToolUse": [{"type": "command", "bash": "./audit.sh"}]},
    },
    "windsurf": {"hooks": {"pre_run_command": [{"command": "python3 other.py"}]}},
}


def _run(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [DOMESTIQUE, *args], env=env, cwd=cwd, capture_output=True, text=True, check=False
    )


def _entries(doc: object) -> list[str]:
    """Every Domestique hook command in a settings document."""
    found: list[str] = []

    def visit(v: object) -> None:
        if isinstance(v, dict):
            for key in ("command", "bash"):
                if isinstance(v.get(key), str) and is_hook_command(v[key]):
                    found.append(v[key])
            for x in v.values():
                visit(x)
        elif isinstance(v, list):
            for x in v:
                visit(x)

    visit(doc)
    return found


@pytest.mark.parametrize("host", JSON_HOSTS)
def test_install_keeps_unrelated_settings_and_is_idempotent(
    host: str, hook_env: dict[str, str], repo: Path
) -> None:
    """Install adds one hook copy and keeps every other key; a second run changes nothing."""
    path = Path(hook_env["HOME"]) / USER_FILES[host]
    path.parent.mkdir(parents=True, exist_ok=True)
    original = json.dumps(UNRELATED[host], indent=4, ensure_ascii=False) + "\n"
    path.write_text(original, encoding="utf-8")

    first = _run(hook_env, repo, "install", host)
    assert first.returncode == 0, first.stderr
    after_first = path.read_text(encoding="utf-8")
    doc = json.loads(after_first)
    n = len(_entries(doc))
    assert n >= 1
    for key, value in UNRELATED[host].items():
        if key not in ("hooks", "tools"):
            assert doc[key] == value
    if host == "gemini":
        assert doc["tools"] == {"sandbox": True, "enableHooks": True}
    # The other tool's hooks are still there, in their place.
    theirs = UNRELATED[host].get("hooks", {})
    assert isinstance(theirs, dict)
    for event, entries in theirs.items():
        assert doc["hooks"][event][: len(entries)] == entries

    second = _run(hook_env, repo, "install", host)
    assert second.returncode == 0
    assert "already installed" in second.stdout
    assert path.read_text(encoding="utf-8") == after_first
    assert len(_entries(json.loads(path.read_text(encoding="utf-8")))) == n

    backups = list((Path(hook_env["DOMESTIQUE_HOME"]) / "backups" / host).glob("*-*"))
    assert [b.read_text(encoding="utf-8") for b in backups] == [original]

    gone = _run(hook_env, repo, "uninstall", host)
    assert gone.returncode == 0, gone.stderr
    assert path.read_text(encoding="utf-8") == original


def test_claude_code_entries_fail_closed_with_a_timeout(
    hook_env: dict[str, str], repo: Path
) -> None:
    """Claude Code: every tool and every prompt, onFailure block, a timeout, the console script."""
    assert _run(hook_env, repo, "install", "claude-code").returncode == 0
    doc = json.loads((Path(hook_env["HOME"]) / USER_FILES["claude-code"]).read_text())
    pre = doc["hooks"]["PreToolUse"][0]
    assert pre["matcher"] == "*"
    handler = pre["hooks"][0]
    assert handler["onFailure"] == "block"
    assert handler["timeout"] == 10
    assert handler["command"] == f"{INSTALLED} claude-code"
    assert doc["hooks"]["UserPromptSubmit"][0]["hooks"][0]["onFailure"] == "block"


def test_cursor_entries_fail_closed(hook_env: dict[str, str], repo: Path) -> None:
    """Cursor: shell, file reads, prompts and MCP, each with failClosed true and a timeout."""
    assert _run(hook_env, repo, "install", "cursor").returncode == 0
    doc = json.loads((Path(hook_env["HOME"]) / USER_FILES["cursor"]).read_text())
    assert doc["version"] == 1
    events = {"beforeShellExecution", "beforeReadFile", "beforeSubmitPrompt", "beforeMCPExecution"}
    assert set(doc["hooks"]) == events
    for entries in doc["hooks"].values():
        assert entries[0]["failClosed"] is True
        assert entries[0]["timeout"] == 10


def test_dry_run_prints_the_diff_and_writes_nothing(hook_env: dict[str, str], repo: Path) -> None:
    """--dry-run shows the added lines as a unified diff and leaves no file behind."""
    r = _run(hook_env, repo, "install", "gemini", "--dry-run")
    assert r.returncode == 0
    assert r.stdout.startswith("--- /dev/null")
    assert f'"command": "{INSTALLED} gemini || exit 2",' in r.stdout
    assert not (Path(hook_env["HOME"]) / USER_FILES["gemini"]).exists()


def test_project_install_writes_the_repositorys_file(hook_env: dict[str, str], repo: Path) -> None:
    """--project targets the repository (found from a subdirectory), not HOME."""
    sub = repo / "src" / "pkg"
    sub.mkdir(parents=True)
    assert _run(hook_env, sub, "install", "windsurf", "--project").returncode == 0
    assert _entries(json.loads((repo / ".windsurf" / "hooks.json").read_text()))
    assert not (Path(hook_env["HOME"]) / USER_FILES["windsurf"]).exists()


@pytest.mark.parametrize("host", ["claude-code", "gemini", "copilot"])
def test_project_install_carries_no_machine_path(
    host: str, hook_env: dict[str, str], repo: Path
) -> None:
    """A --project entry is `domestique hook HOST` from PATH (no absolute path, portable); for a
    colleague without Domestique on PATH it blocks rather than letting the call run."""
    r = _run(hook_env, repo, "install", host, "--project")
    assert r.returncode == 0, r.stderr
    changed = [p for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts]
    (path,) = [p for p in changed if p.suffix == ".json"]
    text = path.read_text()
    assert str(Path(DOMESTIQUE).parent) not in text
    assert hook_env["HOME"] not in text
    (command,) = set(_entries(json.loads(text)))
    assert command.startswith(f"domestique hook {host}")
    without = dict(hook_env, PATH="/usr/bin:/bin")
    done = subprocess.run(
        ["sh", "-c", command], input=b"{}", capture_output=True, env=without, check=False
    )
    if host == "copilot":
        assert json.loads(done.stdout)["permissionDecision"] == "deny"
    elif host == "gemini":
        assert done.returncode == 2
    else:  # Claude Code blocks a command that cannot start (onFailure: "block")
        assert done.returncode == 127


def test_unparsable_settings_are_never_overwritten(hook_env: dict[str, str], repo: Path) -> None:
    """A settings file that is not JSON (even with comments allowed) makes install fail (exit 2)
    and stay untouched."""
    path = Path(hook_env["HOME"]) / USER_FILES["claude-code"]
    path.parent.mkdir(parents=True)
    path.write_text('{ "model": }\n')
    r = _run(hook_env, repo, "install", "claude-code")
    assert r.returncode == 2
    assert "not valid JSON" in r.stderr
    assert path.read_text() == '{ "model": }\n'


def test_uninstall_keeps_changes_made_after_install(hook_env: dict[str, str], repo: Path) -> None:
    """When the user changed the file after installing, uninstall removes only the hook."""
    path = Path(hook_env["HOME"]) / USER_FILES["cursor"]
    assert _run(hook_env, repo, "install", "cursor").returncode == 0
    doc = json.loads(path.read_text())
    doc["hooks"]["stop"] = [{"command": "./notify.sh"}]
    path.write_text(json.dumps(doc))
    assert _run(hook_env, repo, "uninstall", "cursor").returncode == 0
    assert json.loads(path.read_text()) == {
        "version": 1,
        "hooks": {"stop": [{"command": "./notify.sh"}]},
    }


def test_uninstall_removes_a_file_install_created(hook_env: dict[str, str], repo: Path) -> None:
    """A settings file that did not exist before install is gone after uninstall."""
    path = Path(hook_env["HOME"]) / USER_FILES["copilot"]
    assert _run(hook_env, repo, "install", "copilot").returncode == 0
    assert path.exists()
    assert _run(hook_env, repo, "uninstall", "copilot").returncode == 0
    assert not path.exists()


def test_cline_hooks_are_executables_and_foreign_ones_are_kept(
    hook_env: dict[str, str], repo: Path
) -> None:
    """Cline: executable PreToolUse/UserPromptSubmit scripts; someone else's file is refused."""
    hooks = Path(hook_env["HOME"]) / "Documents" / "Cline" / "Rules" / "Hooks"
    assert _run(hook_env, repo, "install", "cline").returncode == 0
    script = hooks / "PreToolUse"
    assert os.access(script, os.X_OK)
    assert script.read_text().endswith(f"\nexec {INSTALLED} cline\n")
    assert _run(hook_env, repo, "install", "cline").stdout.count("already installed") == 2
    assert _run(hook_env, repo, "uninstall", "cline").returncode == 0
    assert not script.exists()

    script.write_text("#!/bin/sh\necho '{\"cancel\": false}'\n")
    r = _run(hook_env, repo, "install", "cline")
    assert r.returncode == 2
    assert "not Domestique's" in r.stderr
    assert "cancel" in script.read_text()


def test_python_without_domestique_is_refused(
    hook_env: dict[str, str], repo: Path, tmp_path: Path
) -> None:
    """``--python`` must import Domestique: otherwise the install is refused, nothing written."""
    stub = tmp_path / "python"
    # An interpreter that has no Domestique: the venv's python in isolated mode, no site.
    stub.write_text(f'#!/bin/sh\nexec {sys.executable} -I -S "$@"\n')
    stub.chmod(0o755)
    r = _run(hook_env, repo, "install", "claude-code", "--python", str(stub))
    assert r.returncode == 2
    assert f"--python {stub}: this Python cannot import Domestique" in r.stderr
    assert not (Path(hook_env["HOME"]) / USER_FILES["claude-code"]).exists()
    # The Python that has it is accepted, and the entry is its client.
    assert (
        _run(hook_env, repo, "install", "claude-code", "--python", sys.executable).returncode == 0
    )
    path = Path(hook_env["HOME"]) / USER_FILES["claude-code"]
    assert set(_entries(json.loads(path.read_text()))) == {f"{INSTALLED} claude-code"}


@pytest.mark.parametrize("host", ["claude-code", "codex", "gemini", "windsurf", "copilot"])
@pytest.mark.parametrize("missing", ["python", "client"])
def test_installed_command_is_readable_and_blocks_when_it_cannot_start(
    host: str, missing: str, hook_env: dict[str, str], repo: Path
) -> None:
    """The entry is ``<python> -I -S <client.py> HOST``; where the host would run the tool when
    the command cannot start (the environment removed, or a new Python version in it moved the
    client file), a short fallback blocks (exit 2; Copilot: a JSON deny)."""
    assert _run(hook_env, repo, "install", host).returncode == 0
    path = Path(hook_env["HOME"]) / USER_FILES[host]
    (command,) = set(_entries(json.loads(path.read_text())))
    assert command.startswith(f"{INSTALLED} {host}")
    assert len(command) < 300
    if missing == "python":
        gone = command.replace(sys.executable, str(repo / "moved" / "python"))
    else:
        gone = command.replace(CLIENT, str(repo / "moved" / "client.py"))
    done = subprocess.run(
        ["sh", "-c", gone], input=b"{}", capture_output=True, env=hook_env, check=False
    )
    if host == "claude-code":  # blocked by the host itself: onFailure "block"
        assert command == f"{INSTALLED} {host}"
        assert done.returncode == (127 if missing == "python" else 2)
    elif host == "copilot":
        assert json.loads(done.stdout)["permissionDecision"] == "deny"
        assert done.returncode == 0
    else:
        assert done.returncode == 2


def test_uninstall_keeps_a_comment_added_after_install(
    hook_env: dict[str, str], repo: Path
) -> None:
    """A comment or reformatting after install is a change: uninstall removes only the hook
    and keeps it, instead of handing back the pre-install backup (equal once parsed)."""
    path = Path(hook_env["HOME"]) / USER_FILES["claude-code"]
    path.parent.mkdir(parents=True)
    original = '{\n  "model": "opus"\n}\n'
    path.write_text(original)
    assert _run(hook_env, repo, "install", "claude-code").returncode == 0
    edited = "// my notes: keep opus\n" + path.read_text()
    path.write_text(edited)
    assert _run(hook_env, repo, "uninstall", "claude-code").returncode == 0
    after = path.read_text()
    assert after.startswith("// my notes: keep opus\n")
    assert _entries(json.loads(after.split("\n", 1)[1])) == []
    assert '"model": "opus"' in after


def test_uninstall_right_after_install_restores_the_bytes(
    hook_env: dict[str, str], repo: Path
) -> None:
    """Nothing touched since install: uninstall gives back the original bytes exactly."""
    path = Path(hook_env["HOME"]) / USER_FILES["claude-code"]
    path.parent.mkdir(parents=True)
    original = '{ "model":"opus",\n\n   "env": {"A": "1"} }\n'
    path.write_text(original)
    assert _run(hook_env, repo, "install", "claude-code").returncode == 0
    assert path.read_text() != original
    assert _run(hook_env, repo, "uninstall", "claude-code").returncode == 0
    assert path.read_text() == original


@pytest.mark.parametrize("host", JSON_HOSTS)
def test_a_symlinked_settings_file_stays_a_symlink(
    host: str, hook_env: dict[str, str], repo: Path, tmp_path: Path
) -> None:
    """Settings kept in a dotfiles folder and linked into place: install and uninstall write
    the file the link points to; the link itself is never replaced by a regular file."""
    path = Path(hook_env["HOME"]) / USER_FILES[host]
    path.parent.mkdir(parents=True, exist_ok=True)
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / path.name
    real.write_text(json.dumps(UNRELATED[host], indent=2) + "\n")
    path.symlink_to(real)
    r = _run(hook_env, repo, "install", host)
    assert r.returncode == 0, r.stderr
    assert path.is_symlink()
    assert os.readlink(path) == str(real)
    assert _entries(json.loads(real.read_text()))
    assert not any(p.name.endswith("domestique-tmp") for p in dotfiles.iterdir())
    r = _run(hook_env, repo, "uninstall", host)
    assert r.returncode == 0, r.stderr
    assert path.is_symlink()
    assert _entries(json.loads(real.read_text())) == []
