"""``domestique policy check|show`` as a process, and ``check`` under a broken policy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from domestique.policy import load_policy

TYPOS = {
    "unknown-key": (
        'version = 1\n[[rules]]\nid = "x"\ncodes = ["pii.email"]\nacton = "deny"\n',
        ":5:1: unknown key 'acton'",
    ),
    "toml-syntax": ('version = 1\n[[rules]\nid = "x"\n', ":2:8: TOML syntax error"),
    "unknown-action": (
        'version = 1\n[[rules]]\nid = "x"\ncodes = ["pii.email"]\naction = "alow"\n',
        ":5:10: unknown action 'alow'",
    ),
}
GOOD = 'version = 1\n[[rules]]\nid = "x"\ncodes = ["pii.email"]\naction = "ask"\n'


def _run(home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "domestique", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "DOMESTIQUE_HOME": str(home)},
        cwd=cwd,
        timeout=60,
        check=False,
    )


@pytest.mark.slow
def test_policy_check_reports_each_typo_with_file_line_col(home: Path, tmp_path: Path) -> None:
    """policy check FILE: exit 1 and file:line:col on stderr for each kind of typo."""
    for name, (text, where) in TYPOS.items():
        path = tmp_path / f"{name}.toml"
        path.write_text(text)
        out = _run(home, "policy", "check", str(path), cwd=tmp_path)
        assert out.returncode == 1, name
        assert f"{path}{where}" in out.stderr, (name, out.stderr)
        assert "every decision denies" in out.stderr
    good = tmp_path / "good.toml"
    good.write_text(GOOD)
    out = _run(home, "policy", "check", str(good), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "policy ok" in out.stdout


@pytest.mark.slow
def test_policy_check_treats_a_project_file_as_tighten_only(home: Path, tmp_path: Path) -> None:
    """A FILE at <repo>/.domestique/policy.toml is checked as a project layer."""
    project = tmp_path / "repo" / ".domestique" / "policy.toml"
    project.parent.mkdir(parents=True)
    project.write_text('version = 1\n[[rules]]\nid = "p"\ncodes = ["secret.*"]\naction = "allow"\n')
    out = _run(home, "policy", "check", str(project), cwd=tmp_path)
    assert out.returncode == 1
    assert f"{project}:2:1: a project policy may only tighten" in out.stderr


@pytest.mark.slow
def test_policy_show_prints_the_effective_policy_and_sha(home: Path, tmp_path: Path) -> None:
    """policy show --json carries the same sha256 as load_policy; text names the layers."""
    out = _run(home, "policy", "show", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    expected = load_policy(home=home, project_dir=tmp_path, use_cache=False)
    assert data["ref"]["sha256"] == expected.ref.sha256
    assert data["valid"] is True
    assert data["policy"]["rules"]
    text = _run(home, "policy", "show", cwd=tmp_path)
    assert expected.ref.sha256 in text.stdout
    assert "core.toml" in text.stdout


@pytest.mark.slow
def test_check_denies_everything_under_a_typo_and_recovers(home: Path, tmp_path: Path) -> None:
    """With a typo in the user policy, `check -- git status` denies with policy.invalid;
    fixing the file restores allow."""
    user = home / "policy.toml"
    for text, _ in TYPOS.values():
        user.write_text(text)
        out = _run(home, "check", "--json", "--", "git", "status", cwd=tmp_path)
        assert out.returncode != 0
        decision = json.loads(out.stdout.splitlines()[-1])
        assert decision["decision"] == "deny"
        assert decision["reasons"][0]["code"] == "policy.invalid"
        assert str(user) in decision["reasons"][0]["message"]
    user.write_text(GOOD)
    out = _run(home, "check", "--json", "--", "git", "status", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert json.loads(out.stdout.splitlines()[-1])["decision"] == "allow"
