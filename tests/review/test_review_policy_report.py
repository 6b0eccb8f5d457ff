"""Regression tests for what the review found in policy loading and ``domestique report``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from domestique.audit.report import parse_since
from domestique.policy import load_policy

DOMESTIQUE = str(Path(sys.executable).with_name("domestique"))
NOW = 1_796_000_000 * 10**9  # 2026-11-30


def _run(args: list[str], home: Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, DOMESTIQUE_HOME=str(home), DOMESTIQUE_HOOKD="off")
    return subprocess.run(
        [DOMESTIQUE, *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


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
    done = _run(["policy", "check", str(path)], tmp_path / "home")
    assert done.returncode == 1
    assert f"{path}:1:1:" in done.stderr + done.stdout
    check = _run(["check", "--policy", str(path), "--", "git", "status"], tmp_path / "home")
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


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("2027-01-01", "in the future"),
        ("99999999999d", "before 1970"),
        ("1969-12-31", "before 1970"),
        ("\u0663d", "expected"),  # an Arabic-Indic digit: int() accepts it, we do not
    ],
)
def test_since_that_can_only_give_an_empty_report_is_an_error(value: str, problem: str) -> None:
    """A window in the future or before 1970 used to print an empty report (or a negative
    year) with exit 0, which reads as "nothing happened"."""
    with pytest.raises(ValueError, match=problem):
        parse_since(value, now_ns=NOW)


def test_since_accepts_an_iso_time_with_an_offset() -> None:
    """``2026-11-01T05:00:00+05:00`` is midnight UTC (it used to be rejected)."""
    assert parse_since("2026-11-01T05:00:00+05:00", now_ns=NOW) == "2026-11-01T00:00:00.000000Z"


def test_report_and_export_exit_2_for_a_future_since(tmp_path: Path) -> None:
    """The command line says what is wrong and exits 2; it prints no report."""
    home = tmp_path / "home"
    assert _run(["check", "--", "git", "status"], home).returncode == 0
    for args in (["report", "--since", "2999-01-01"], ["audit", "export", "--since", "2999-01-01"]):
        done = _run(args, home)
        assert done.returncode == 2, args
        assert "in the future" in done.stderr
        assert done.stdout == ""


@pytest.mark.parametrize(
    "code", ["proxy.unsupported_encoding", "proxy.unknown_route", "hook.malformed_input"]
)
def test_a_rule_that_allows_unreadable_input_is_refused_at_load(tmp_path: Path, code: str) -> None:
    """The firewall and hooks stop on unreadable input whatever the policy says; a rule that
    tries to allow it is an error with file:line:col, not a rule silently ignored."""
    path = tmp_path / "policy.toml"
    path.write_text(f'version = 1\n[[rules]]\nid = "x"\ncodes = ["{code}"]\naction = "allow"\n')
    done = _run(["policy", "check", str(path)], tmp_path / "home")
    assert done.returncode == 1
    assert f"{path}:5:" in done.stderr
    assert "could not judge" in done.stderr
