"""Policy files that are not what they claim to be: not a small regular file, not a file at
all, or a rule that would allow input nobody could judge. Each fails closed at load."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from _helpers import run_domestique
from domestique.policy import load_policy


@pytest.mark.slow
@pytest.mark.parametrize("target", ["/dev/zero", "fifo", "big"])
def test_policy_file_that_is_not_a_small_regular_file_fails_closed_fast(
    tmp_path: Path, target: str
) -> None:
    """``policy check /dev/zero`` used to read forever; a FIFO blocked; a huge file was read
    whole on every decision. Each is now an error naming the file, and decisions deny."""
    if target == "fifo":
        path = tmp_path / "policy.toml"
        os.mkfifo(path)
    elif target == "big":
        path = tmp_path / "policy.toml"
        path.write_bytes(b"# " + b"x" * (2 * 1024 * 1024) + b"\n")
    else:
        path = Path(target)
    done = run_domestique(["policy", "check", str(path)], tmp_path / "home")
    assert done.returncode == 1
    assert f"{path}:1:1:" in done.stderr + done.stdout
    check = run_domestique(
        ["check", "--policy", str(path), "--", "git", "status"], tmp_path / "home"
    )
    assert check.returncode == 2
    assert "policy.invalid" in check.stdout + check.stderr


def test_project_policy_that_is_not_a_file_denies_instead_of_vanishing(tmp_path: Path) -> None:
    """A project ``.domestique/policy.toml`` that is a directory used to be skipped silently,
    dropping the project's tightening; now it makes the policy invalid (deny everything)."""
    project = tmp_path / "proj"
    (project / ".domestique" / "policy.toml").mkdir(parents=True)
    policy = load_policy(home=tmp_path / "home", project_dir=project, system_file=None)
    assert not policy.valid
    assert "policy.toml:1:1:" in policy.errors[0]


@pytest.mark.slow
@pytest.mark.parametrize(
    "code", ["proxy.unsupported_encoding", "proxy.unknown_route", "hook.malformed_input"]
)
def test_a_rule_that_allows_unreadable_input_is_refused_at_load(tmp_path: Path, code: str) -> None:
    """The firewall and hooks stop on unreadable input whatever the policy says; a rule that
    tries to allow it is an error with file:line:col, not a rule silently ignored."""
    path = tmp_path / "policy.toml"
    path.write_text(f'version = 1\n[[rules]]\nid = "x"\ncodes = ["{code}"]\naction = "allow"\n')
    done = run_domestique(["policy", "check", str(path)], tmp_path / "home")
    assert done.returncode == 1
    assert f"{path}:5:" in done.stderr
    assert "could not judge" in done.stderr
