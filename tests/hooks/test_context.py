"""A hook's shell command is judged in the hook's own context (component ``hook``, the agent,
the host's tool), and that context is recorded, so ``explain`` and ``policy whatif`` re-decide
the stored decision in the context it was made in, and agree with each other."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from _helpers.hooks import decision, run_hook, shell_payload
from domestique.audit import AuditStore
from domestique.cli import main

CONTAINER = "docker run --privileged x"  # cmd.privilege.container: ask under the builtin policy


def _policy(hook_env: dict[str, str], text: str) -> None:
    home = Path(hook_env["DOMESTIQUE_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "policy.toml").write_text("version = 1\n" + text)


def _rule(rule_id: str, action: str, **match: list[str]) -> str:
    scoped = "".join(f"{k} = {json.dumps(v)}\n" for k, v in match.items())
    return (
        f'[[rules]]\nid = "{rule_id}"\ncodes = ["cmd.privilege.container"]\n'
        f'action = "{action}"\n{scoped}\n'
    )


def _records(hook_env: dict[str, str]) -> list[dict[str, Any]]:
    with AuditStore.open(Path(hook_env["DOMESTIQUE_HOME"]), create=False) as store:
        return [r.to_json() for r in store.records()]


def test_a_rule_for_one_agent_applies_to_its_hooks_shell_commands_only(
    hook_env: dict[str, str], repo: Path
) -> None:
    """agents = ["codex"], allow: Codex's `docker run --privileged` is allowed (silence), the
    same command from Claude Code is still asked; the records name each agent."""
    _policy(hook_env, _rule("codex-containers", "allow", agents=["codex"]))
    codex = run_hook("codex", shell_payload("codex", CONTAINER, repo), hook_env, repo)
    claude = run_hook("claude-code", shell_payload("claude-code", CONTAINER, repo), hook_env, repo)
    assert decision("codex", codex) == "allow", codex
    assert decision("claude-code", claude) == "ask", claude
    by_agent = {r["subject"]["agent"]: r["action"] for r in _records(hook_env)}
    assert by_agent == {"codex": "allow", "claude-code": "ask"}


def test_rules_for_the_hook_component_and_the_tool_apply_to_shell_commands(
    hook_env: dict[str, str], repo: Path
) -> None:
    """components = ["hook"] and tools = ["Bash"] reach a hook's shell command; a rule for
    another tool does not."""
    _policy(hook_env, _rule("hook-bash", "deny", components=["hook"], tools=["Bash"]))
    r = run_hook("claude-code", shell_payload("claude-code", CONTAINER, repo), hook_env, repo)
    assert decision("claude-code", r) == "deny", r
    _policy(hook_env, _rule("hook-other-tool", "deny", components=["hook"], tools=["Write"]))
    r = run_hook("claude-code", shell_payload("claude-code", CONTAINER, repo), hook_env, repo)
    assert decision("claude-code", r) == "ask", r


def test_explain_and_whatif_redecide_a_hook_shell_command_in_its_own_context(
    hook_env: dict[str, str],
    repo: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A candidate rule for Codex only: whatif moves the Codex record (ask → deny) and not
    Claude's; explain of each record under the same candidate says the same, rule included."""
    run_hook("codex", shell_payload("codex", CONTAINER, repo), hook_env, repo)
    run_hook("claude-code", shell_payload("claude-code", CONTAINER, repo), hook_env, repo)
    ids = {r["subject"]["agent"]: r["id"] for r in _records(hook_env)}
    candidate = tmp_path / "candidate.toml"
    candidate.write_text("version = 1\n" + _rule("codex-deny", "deny", agents=["codex"]))
    for key in ("DOMESTIQUE_HOME", "HOME"):
        monkeypatch.setenv(key, hook_env[key])
    monkeypatch.chdir(repo)

    assert main(["policy", "whatif", "--since", "all", "--json", str(candidate)]) == 1
    report = json.loads(capsys.readouterr().out)
    moved = [(g["from"], g["to"], [e["id"] for e in g["examples"]]) for g in report["changes"]]
    assert moved == [("ask", "deny", [ids["codex"]])]

    said = {}
    for agent, ident in ids.items():
        assert main(["explain", "--json", "--policy", str(candidate), ident]) == 0
        [reason] = json.loads(capsys.readouterr().out)["reasons"]
        said[agent] = (reason["action"], reason["decided_by"].get("rule"))
    assert said["codex"] == ("deny", "codex-deny")
    assert said["claude-code"][0] == "ask"
