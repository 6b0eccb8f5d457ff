"""Policy validation: every error names file:line:col and what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from _helpers.policy import GUARD, load, write
from domestique.records import Action

# --- every error names file:line:col -----------------------------------------------------

ERROR_CASES = [
    ("toml-syntax", 'version = 1\n[[rules]]\nid = "x"\ncodes = ["secret.*"\n', 5, 1, "TOML syntax"),
    ("toml-duplicate-key", "version = 1\nversion = 1\n", 2, 1, "'version' is set twice"),
    ("toml-bad-value", "version = 1\nx = \n", 2, 5, "TOML syntax error: Invalid value"),
    ("unknown-top-key", "version = 1\nrulez = []\n", 2, 1, "unknown key 'rulez'"),
    (
        "unknown-rule-key",
        '[[rules]]\nid = "a"\ncodes = ["pii.email"]\naction = "deny"\ncolour = "red"\n',
        6,
        1,
        "unknown key 'colour'",
    ),
    ("unknown-settings-key", '[settings]\nunmatchd = "deny"\n', 3, 1, "did you mean 'unmatched'"),
    (
        "unknown-action",
        '[[rules]]\nid = "a"\ncodes = ["pii.email"]\naction = "alow"\n',
        5,
        10,
        "unknown action 'alow'",
    ),
    (
        "wrong-type",
        '[[rules]]\nid = "a"\ncodes = "pii.email"\naction = "deny"\n',
        4,
        9,
        "expected an array of strings, got a string",
    ),
    (
        "wrong-type-item",
        '[[rules]]\nid = "a"\ncodes = ["pii.email", 3]\naction = "deny"\n',
        4,
        23,
        "expected a string, got an integer",
    ),
    (
        "unknown-code",
        '[[rules]]\nid = "a"\ncodes = ["pii.emial"]\naction = "deny"\n',
        4,
        10,
        "unknown reason code 'pii.emial' (did you mean 'pii.email'?)",
    ),
    (
        "unmatched-glob",
        '[[rules]]\nid = "a"\ncodes = ["nope.*"]\naction = "deny"\n',
        4,
        10,
        "no registered reason code matches 'nope.*'",
    ),
    (
        "bad-code-pattern",
        '[[rules]]\nid = "a"\ncodes = ["secret.*key"]\naction = "deny"\n',
        4,
        10,
        "bad code pattern",
    ),
    (
        "bad-host-glob",
        '[[rules]]\nid = "a"\ncodes = ["pii.email"]\naction = "deny"\n'
        'hosts = ["https://x.example"]\n',
        6,
        10,
        "bad host glob",
    ),
    (
        "bad-path-glob",
        '[[rules]]\nid = "a"\ncodes = ["pii.email"]\naction = "deny"\npaths = ["~/[abc"]\n',
        6,
        10,
        "bad path glob",
    ),
    (
        "unknown-component",
        '[[rules]]\nid = "a"\ncodes = ["pii.email"]\naction = "deny"\n'
        'components = ["proxy", "gaurd"]\n',
        6,
        24,
        "unknown component 'gaurd'",
    ),
    (
        "except-unknown-key",
        '[[rules]]\nid = "a"\ncodes = ["pii.email"]\naction = "deny"\n'
        '[[rules.except]]\nhost = ["x"]\n',
        7,
        1,
        "unknown key 'host' in an exception",
    ),
    ("missing-id", '[[rules]]\ncodes = ["pii.email"]\naction = "deny"\n', 2, 1, "rule has no 'id'"),
    (
        "duplicate-id",
        '[[rules]]\nid = "a"\ncodes = ["pii.email"]\naction = "deny"\n'
        '[[rules]]\nid = "a"\ncodes = ["pii.email"]\naction = "ask"\n',
        7,
        6,
        "duplicate rule id",
    ),
    (
        "protected-loosened",
        '[[rules]]\nid = "a"\ncodes = ["engine.*"]\naction = "ask"\n',
        5,
        10,
        "cannot set 'ask' for engine.",
    ),
    (
        "inline-table-rule",
        'rules = [{id = "a", codes = ["pii.email"], action = "alow"}]\n',
        2,
        53,
        "unknown action 'alow'",
    ),
    (
        "empty-list",
        '[[rules]]\nid = "a"\ncodes = ["pii.email"]\naction = "deny"\nagents = []\n',
        6,
        10,
        "empty array",
    ),
]


@pytest.mark.parametrize(
    ("text", "line", "col", "fragment"),
    [pytest.param(t, ln, c, f, id=name) for name, t, ln, c, f in ERROR_CASES],
)
def test_every_error_kind_reports_file_line_col(
    policy_dir: Path, text: str, line: int, col: int, fragment: str
) -> None:
    """Each kind of mistake is reported as file:line:col at the offending key or value."""
    body = text if text.startswith("version") else "version = 1\n" + text
    path = write(policy_dir / "p.toml", body)
    policy = load(policy_dir, policy_file=path)
    assert not policy.valid
    prefix = f"{path}:{line}:{col}: "
    assert any(e.startswith(prefix) and fragment in e for e in policy.errors), policy.errors


def test_missing_version_and_non_utf8_are_errors(policy_dir: Path) -> None:
    """A file without version, and a file that is not UTF-8, are errors with a position."""
    no_version = write(policy_dir / "a.toml", '[settings]\nunmatched = "deny"\n')
    policy = load(policy_dir, policy_file=no_version)
    assert any(e.startswith(f"{no_version}:1:1: missing 'version") for e in policy.errors)
    binary = policy_dir / "b.toml"
    binary.write_bytes(b"version = 1\n# caf\xe9\n")
    policy = load(policy_dir, policy_file=binary)
    assert policy.errors == (f"{binary}:2:6: not UTF-8 text",)


def test_unreadable_or_missing_explicit_file_fails_closed(policy_dir: Path) -> None:
    """A --policy path that is missing or a directory is an error, never a silent skip."""
    missing = load(policy_dir, policy_file=policy_dir / "nope.toml")
    assert not missing.valid
    assert missing.errors[0].startswith(f"{policy_dir / 'nope.toml'}:1:1:")
    directory = load(policy_dir, policy_file=policy_dir)
    assert not directory.valid
    assert directory.decide([], GUARD).action is Action.DENY
