"""``domestique check`` as a process, whatever state the rule cache is in: the decision is the
same and the audit record still has the secret in its process ancestry masked.

The secret is on the command line of the shell that starts ``domestique check`` (``sh -c
'domestique check ...; : TOKEN'``), so only the audit gate's masking of the ancestry, which
runs the detection rules, keeps it out of the log.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from _helpers import github_token
from domestique.detect import rule_cache

DOMESTIQUE = str(Path(sys.executable).with_name("domestique"))
TOKEN = github_token("Qm7Rt2Xw9Vb4Nc8Hd1Jf6Gs3Pa5Lz0")


def _check_under_a_shell_holding_the_token(env: dict[str, str], cwd: Path) -> dict[str, object]:
    script = f"{shlex.quote(DOMESTIQUE)} check --json -- git status; : {TOKEN}"
    done = subprocess.run(
        ["sh", "-c", script],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    body: dict[str, object] = json.loads(done.stdout)
    return body


def _stored(env: dict[str, str]) -> str:
    done = subprocess.run(
        [DOMESTIQUE, "audit", "export"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _corrupt(path: Path) -> None:
    path.write_bytes(b"\x00garbage" * 64)


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:200])


def _other_version(path: Path) -> None:
    # The right magic and layout, written for other rule files (another key).
    blob = path.read_bytes()
    head = len(rule_cache.MAGIC)
    path.write_bytes(blob[:head] + bytes(32) + blob[head + 32 :])


def _unwritable(path: Path) -> None:
    shutil.rmtree(path.parent)  # (the policy cache lives there too)
    path.parent.write_text("a file where the cache directory should be")


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(_corrupt, id="corrupt"),
        pytest.param(_truncate, id="truncated"),
        pytest.param(_other_version, id="wrong-version"),
        pytest.param(_unwritable, id="unwritable-dir"),
    ],
)
def test_a_broken_rule_cache_changes_neither_the_decision_nor_the_masking(
    env: dict[str, str], home: Path, tmp_path: Path, damage: Callable[[Path], None]
) -> None:
    """First run writes the cache; then it is damaged; the next run decides the same, masks the
    token in the stored ancestry, and (where it can) leaves a valid cache behind."""
    first = _check_under_a_shell_holding_the_token(env, tmp_path)
    path = rule_cache.cache_path(home)
    assert path.is_file()
    damage(path)
    again = _check_under_a_shell_holding_the_token(env, tmp_path)
    assert again["decision"] == first["decision"] == "allow"
    log = _stored(env)
    assert TOKEN not in log
    assert f"{TOKEN[:4]}…{TOKEN[-4:]}" in log  # masked, not dropped
    records = [json.loads(line) for line in log.splitlines()]
    assert len(records) == 2
    if damage is not _unwritable:
        files = rule_cache.rule_files()
        secret = rule_cache.mac_key(home)
        assert rule_cache.read_cache(path, rule_cache.cache_key(files), secret) is not None
