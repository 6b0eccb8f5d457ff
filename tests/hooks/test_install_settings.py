"""`domestique install`: everything a host needs for the hook to run (Codex's trust in
config.toml), `--proxy` per host, and settings files edited in place (JSONC, TOML)."""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path

import pytest

from _helpers.hooks import DOMESTIQUE
from domestique.hooks import jsonc
from domestique.hooks.hosts.codex import hook_hash as codex_hook_hash
from domestique.hooks.install import codex_trust_entries

# Where the real Codex CLI may be cached by the end-to-end suite (absent: those tests skip).
_CODEX_CACHE = Path.home() / ".cache" / "domestique-e2e"


def _run(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [DOMESTIQUE, *args], env=env, cwd=cwd, capture_output=True, text=True, check=False
    )


def test_codex_hash_is_the_one_codex_computes() -> None:
    """The trusted_hash for a handler equals what Codex 0.171.0 itself reports in `hooks/list`
    for the same hooks.json entries (values taken from that binary)."""
    handler = {"type": "command", "command": "echo hi", "timeout": 10}
    assert codex_hook_hash("PreToolUse", None, handler) == (
        "sha256:7a71ee914aae1e8851a62cc0bb833b0269c1789a3d6103a49a5e6544a18c5fbc"
    )
    assert codex_hook_hash("UserPromptSubmit", None, handler) == (
        "sha256:d1cae2592e7f8e6aee100211ab5d4d746d693ce20dd381c184248461aa0d63b2"
    )
    # A different command, timeout or matcher is a different hash (a changed hook is untrusted).
    assert codex_hook_hash("PreToolUse", "Bash", handler) != codex_hook_hash(
        "PreToolUse", None, handler
    )
    assert codex_hook_hash("PreToolUse", None, {**handler, "timeout": 11}) != (
        codex_hook_hash("PreToolUse", None, handler)
    )


CODEX_CONFIG = """# my Codex settings
model = "o3"   # the one I like
model_provider = "azure"

[features]
# keep this comment
web_search = true

[model_providers.azure]
base_url = "https://example.invalid/openai"
"""


def test_codex_install_trusts_its_hooks_and_uninstall_is_byte_exact(
    hook_env: dict[str, str], repo: Path
) -> None:
    """config.toml gets features.hooks and one trusted_hash per Domestique handler, keyed the way
    Codex keys hooks.json handlers; comments and order stay; uninstall gives the bytes back."""
    codex = Path(hook_env["HOME"]) / ".codex"
    codex.mkdir()
    (codex / "config.toml").write_text(CODEX_CONFIG)
    r = _run(hook_env, repo, "install", "codex")
    assert r.returncode == 0, r.stderr
    text = (codex / "config.toml").read_text()
    assert text.startswith(CODEX_CONFIG.split("[features]", maxsplit=1)[0])  # untouched head
    assert "# keep this comment\nweb_search = true\nhooks = true\n" in text
    config = tomllib.loads(text)
    hooks_path = codex / "hooks.json"
    expected = codex_trust_entries(hooks_path, json.loads(hooks_path.read_text()))
    assert set(expected) == {
        f"{hooks_path}:pre_tool_use:0:0",
        f"{hooks_path}:user_prompt_submit:0:0",
    }
    assert {k: v["trusted_hash"] for k, v in config["hooks"]["state"].items()} == expected
    assert config["model_provider"] == "azure"  # no --proxy: the provider is left alone

    assert _run(hook_env, repo, "install", "codex").stdout.count("already installed") == 2
    assert _run(hook_env, repo, "uninstall", "codex").returncode == 0
    assert (codex / "config.toml").read_text() == CODEX_CONFIG
    assert not hooks_path.exists()


def test_codex_trust_follows_the_handler_position(hook_env: dict[str, str], repo: Path) -> None:
    """With someone else's PreToolUse group first, Domestique's handler is group 1: that is the
    key trusted; the other hook's trust is not Domestique's to give."""
    codex = Path(hook_env["HOME"]) / ".codex"
    codex.mkdir()
    other = {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "lint"}]}]}}
    (codex / "hooks.json").write_text(json.dumps(other, indent=2) + "\n")
    assert _run(hook_env, repo, "install", "codex").returncode == 0
    state = tomllib.loads((codex / "config.toml").read_text())["hooks"]["state"]
    assert sorted(k.rsplit(":", 3)[1:] == ["pre_tool_use", "1", "0"] for k in state) == [
        False,
        True,
    ]
    assert not any(k.endswith("pre_tool_use:0:0") for k in state)


def test_codex_uninstall_keeps_later_changes(hook_env: dict[str, str], repo: Path) -> None:
    """A setting the user added after install stays; the values install replaced come back."""
    codex = Path(hook_env["HOME"]) / ".codex"
    codex.mkdir()
    (codex / "config.toml").write_text(CODEX_CONFIG)
    assert (
        _run(hook_env, repo, "install", "codex", "--proxy", "http://127.0.0.1:8787").returncode == 0
    )
    path = codex / "config.toml"
    path.write_text(
        path.read_text().replace('model = "o3"', 'model = "o3"\nsandbox_mode = "read-only"')
    )
    assert _run(hook_env, repo, "uninstall", "codex").returncode == 0
    assert path.read_text() == CODEX_CONFIG.replace(
        'model = "o3"', 'model = "o3"\nsandbox_mode = "read-only"'
    )


def test_proxy_codex_provider(hook_env: dict[str, str], repo: Path) -> None:
    """--proxy: a model provider on the firewall (Responses, no WebSockets), selected, and the
    features that call other hosts off."""
    r = _run(hook_env, repo, "install", "codex", "--proxy", "http://127.0.0.1:8787/")
    assert r.returncode == 0, r.stderr
    config = tomllib.loads((Path(hook_env["HOME"]) / ".codex" / "config.toml").read_text())
    assert config["model_provider"] == "domestique"
    provider = config["model_providers"]["domestique"]
    assert provider["base_url"] == "http://127.0.0.1:8787/v1"
    assert provider["wire_api"] == "responses"
    assert provider["supports_websockets"] is False
    assert config["features"]["hooks"] is True
    assert config["features"]["plugins"] is False
    assert config["features"]["apps"] is False


def test_proxy_claude_code_env(hook_env: dict[str, str], repo: Path) -> None:
    """--proxy: ANTHROPIC_BASE_URL (no /v1) and non-essential traffic off, in settings env."""
    path = Path(hook_env["HOME"]) / ".claude" / "settings.json"
    path.parent.mkdir()
    original = '{\n    "env": {"FOO": "1"},\n    "model": "opus"\n}\n'
    path.write_text(original)
    r = _run(hook_env, repo, "install", "claude-code", "--proxy", "http://127.0.0.1:8787/v1")
    assert r.returncode == 0, r.stderr
    doc = json.loads(path.read_text())
    assert doc["env"] == {
        "FOO": "1",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:8787",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    assert list(doc) == ["env", "model", "hooks"]  # the user's order, ours at the end
    assert _run(hook_env, repo, "uninstall", "claude-code").returncode == 0
    assert path.read_text() == original


def test_proxy_gemini_privacy_and_base_url(hook_env: dict[str, str], repo: Path) -> None:
    """--proxy: usage statistics off in settings.json, the base URL in ~/.gemini/.env."""
    home = Path(hook_env["HOME"])
    r = _run(hook_env, repo, "install", "gemini", "--proxy", "http://127.0.0.1:8787")
    assert r.returncode == 0, r.stderr
    doc = json.loads((home / ".gemini" / "settings.json").read_text())
    assert doc["privacy"] == {"usageStatisticsEnabled": False}
    assert (
        home / ".gemini" / ".env"
    ).read_text() == "GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:8787\n"
    assert _run(hook_env, repo, "uninstall", "gemini").returncode == 0
    assert not (home / ".gemini" / "settings.json").exists()
    assert not (home / ".gemini" / ".env").exists()


@pytest.mark.parametrize(
    ("host", "url"),
    [("cursor", "http://127.0.0.1:8787"), ("claude-code", "ftp://x"), ("codex", "http://h/?a=1")],
)
def test_proxy_refused_where_it_cannot_work(
    host: str, url: str, hook_env: dict[str, str], repo: Path
) -> None:
    """No proxy setting for the host, or not an http(s) URL: exit 2, nothing written."""
    r = _run(hook_env, repo, "install", host, "--proxy", url)
    assert r.returncode == 2
    assert "--proxy" in r.stderr
    assert not any(Path(hook_env["HOME"]).rglob("*.json"))


GEMINI_JSONC = """{
    // Gemini allows comments in settings.json (JSONC)
    "theme": "Dracula",   /* my theme */
    "tools": {
        "sandbox": false,
    },
    "hooks": {
        "BeforeTool": [
            {"matcher": "write_file", "hooks": [{"type": "command", "command": "./fmt.sh"}]},
        ],
    },
}
"""


def test_gemini_settings_with_comments_are_edited_not_rewritten(
    hook_env: dict[str, str], repo: Path
) -> None:
    """JSONC is accepted; comments, trailing commas, indentation and order stay; uninstall gives
    the original bytes back."""
    path = Path(hook_env["HOME"]) / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text(GEMINI_JSONC)
    r = _run(hook_env, repo, "install", "gemini")
    assert r.returncode == 0, r.stderr
    text = path.read_text()
    assert "// Gemini allows comments in settings.json (JSONC)" in text
    assert '"theme": "Dracula",   /* my theme */' in text
    theirs = '{"matcher": "write_file", "hooks": [{"type": "command", "command": "./fmt.sh"}]},'
    assert f"\n            {theirs}\n" in text
    doc = jsonc.loads(text)
    assert doc["tools"] == {"sandbox": False, "enableHooks": True}
    assert [g["matcher"] for g in doc["hooks"]["BeforeTool"]] == ["write_file", ".*"]
    assert "BeforeAgent" in doc["hooks"]
    assert _run(hook_env, repo, "uninstall", "gemini").returncode == 0
    assert path.read_text() == GEMINI_JSONC


def test_uninstall_after_a_later_edit_removes_only_ours_from_jsonc(
    hook_env: dict[str, str], repo: Path
) -> None:
    """The user edited the file after install: uninstall cuts out Domestique's entries and the
    settings it added, and leaves the edit and the comments."""
    path = Path(hook_env["HOME"]) / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text(GEMINI_JSONC)
    assert _run(hook_env, repo, "install", "gemini").returncode == 0
    path.write_text(path.read_text().replace('"Dracula"', '"GitHub"'))
    assert _run(hook_env, repo, "uninstall", "gemini").returncode == 0
    assert path.read_text() == GEMINI_JSONC.replace('"Dracula"', '"GitHub"')


def _doctor(env: dict[str, str], cwd: Path) -> dict[str, dict[str, object]]:
    env = dict(env, PATH=f"{Path(DOMESTIQUE).parent}:/usr/bin:/bin")
    done = subprocess.run(
        [DOMESTIQUE, "doctor", "--json"],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    return {r["host"]: r for r in json.loads(done.stdout)}


def test_doctor_sees_an_untrusted_codex_hook(hook_env: dict[str, str], repo: Path) -> None:
    """A hooks.json Codex would skip (no trust in config.toml) is a problem, not "ok"."""
    assert _run(hook_env, repo, "install", "codex").returncode == 0
    assert _doctor(hook_env, repo)["codex"]["ok"] is True
    config = Path(hook_env["HOME"]) / ".codex" / "config.toml"
    config.write_text(
        config.read_text().replace('trusted_hash = "sha256:', 'trusted_hash = "sha256:0')
    )
    report = _doctor(hook_env, repo)["codex"]
    assert report["ok"] is False
    assert report["runs"] is False
    assert report["answering"] is True
    assert any("not trusted" in p for p in report["problems"])  # type: ignore[attr-defined]


def test_doctor_sees_hooks_switched_off(hook_env: dict[str, str], repo: Path) -> None:
    """Claude Code's disableAllHooks and Gemini's hooksConfig.enabled=false stop the hook."""
    for host in ("claude-code", "gemini"):
        assert _run(hook_env, repo, "install", host).returncode == 0
    home = Path(hook_env["HOME"])
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.local.json").write_text('{"disableAllHooks": true}')
    gemini = home / ".gemini" / "settings.json"
    gemini.write_text(gemini.read_text().replace("{", '{"hooksConfig": {"enabled": false},', 1))
    reports = _doctor(hook_env, repo)
    for host in ("claude-code", "gemini"):
        assert reports[host]["ok"] is False
        assert reports[host]["runs"] is False


def test_doctor_says_when_traffic_goes_around_the_proxy(
    hook_env: dict[str, str], repo: Path
) -> None:
    """Without --proxy each CLI reaches its provider directly; with it, nothing is reported."""
    env = {k: v for k, v in hook_env.items() if k != "GOOGLE_GEMINI_BASE_URL"}
    env = {k: v for k, v in env.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    for host in ("claude-code", "codex", "gemini"):
        assert _run(env, repo, "install", host).returncode == 0
    before = _doctor(env, repo)
    assert all(before[h]["traffic"] for h in ("claude-code", "codex", "gemini"))
    for host in ("claude-code", "codex", "gemini"):
        assert _run(env, repo, "install", host, "--proxy", "http://127.0.0.1:9").returncode == 0
    after = _doctor(env, repo)
    assert {h: after[h]["traffic"] for h in ("claude-code", "codex", "gemini")} == {
        "claude-code": [],
        "codex": [],
        "gemini": [],
    }


def _real_codex() -> Path | None:
    found = sorted(
        _CODEX_CACHE.glob("codex-*/node_modules/@openai/codex-linux-*/vendor/*/bin/codex")
    )
    return found[-1] if found and os.access(found[-1], os.X_OK) else None


@pytest.mark.skipif(_real_codex() is None, reason="no Codex CLI cached by the end-to-end suite")
def test_real_codex_lists_the_installed_hook_as_trusted(
    hook_env: dict[str, str], repo: Path, tmp_path: Path
) -> None:
    """The Codex CLI itself (app-server hooks/list, via doctor) sees both handlers trusted."""
    codex = _real_codex()
    assert codex is not None
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "codex").symlink_to(codex)
    assert _run(hook_env, repo, "install", "codex").returncode == 0
    env = dict(hook_env, PATH=f"{bin_dir}:{Path(DOMESTIQUE).parent}:/usr/bin:/bin")
    done = subprocess.run(
        [DOMESTIQUE, "doctor", "--json"],
        env=env,
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    report = {r["host"]: r for r in json.loads(done.stdout)}["codex"]
    assert report["runs"] is True, report
    config = Path(hook_env["HOME"]) / ".codex" / "config.toml"
    config.write_text(
        config.read_text().replace('trusted_hash = "sha256:', 'trusted_hash = "sha256:0')
    )
    done = subprocess.run(
        [DOMESTIQUE, "doctor", "--json"],
        env=env,
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    report = {r["host"]: r for r in json.loads(done.stdout)}["codex"]
    assert any("as modified" in p for p in report["problems"]), report
