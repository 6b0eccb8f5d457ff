"""Regression tests for the audit head checkpoint: tampering evidence must not heal itself."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from _helpers import child_env
from domestique.audit import DB_NAME, HEAD_NAME

DOMESTIQUE = str(Path(sys.executable).with_name("domestique"))


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, DOMESTIQUE_HOME=str(home), DOMESTIQUE_HOOKD="off")
    return subprocess.run(
        [DOMESTIQUE, *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def _cut_tail(home: Path, keep: int) -> None:
    conn = sqlite3.connect(home / DB_NAME)
    with conn:
        conn.execute("DROP TRIGGER records_no_delete")
        conn.execute("DELETE FROM records WHERE seq > ?", (keep,))
    conn.close()


@pytest.mark.slow
@pytest.mark.parametrize("how", ["deleted", "emptied", "garbled"])
def test_cut_tail_plus_removed_checkpoint_stays_detected_after_new_decisions(
    tmp_path: Path, how: str
) -> None:
    """Cut records off the end, remove (or garble) the head checkpoint, let the next decision be
    written: ``audit verify`` used to say "intact" because the append re-created the checkpoint
    from the shortened log. It must keep exiting 1."""
    home = tmp_path / "home"
    for i in range(4):
        assert _cli(home, "check", "--", "echo", str(i)).returncode == 0
    _cut_tail(home, keep=2)
    head = home / HEAD_NAME
    if how == "deleted":
        head.unlink()
    elif how == "emptied":
        head.write_bytes(b"")
    else:
        head.write_bytes(b"{not json" + b" " * 200)
    assert _cli(home, "check", "--", "echo", "after").returncode == 0  # still records
    result = _cli(home, "audit", "verify")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "checkpoint" in result.stdout


@pytest.mark.slow
def test_fresh_log_still_gets_its_checkpoint(tmp_path: Path) -> None:
    """The rule only keeps evidence: a new log still creates and advances its checkpoint."""
    home = tmp_path / "home"
    for i in range(3):
        assert _cli(home, "check", "--", "echo", str(i)).returncode == 0
    result = _cli(home, "audit", "verify")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 records" in result.stdout


@pytest.mark.slow
@pytest.mark.parametrize("n", ["-5", "abc", "\u0663"])
def test_tail_with_a_bad_count_is_an_error_not_an_empty_log(tmp_path: Path, n: str) -> None:
    """``audit tail -n -5`` printed nothing and exited 0, which reads as an empty log."""
    home = tmp_path / "home"
    assert _cli(home, "check", "--", "echo", "x").returncode == 0
    result = _cli(home, "audit", "tail", "-n", n)
    assert result.returncode == 2
    assert "-n" in result.stderr
    assert result.stdout == ""


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="open on a machine that is not enrolled: a saved, validly signed old checkpoint can "
    "be put back (an enrolled endpoint: tests/known_escapes/test_audit_escapes.py)",
)
def test_restoring_an_old_checkpoint_after_cutting_the_tail_is_caught(tmp_path: Path) -> None:
    """Known escape: copy ``audit.head.json`` early, later cut every record after it and put the
    copy back. The HMAC is valid (it was written by Domestique), so only an off-machine copy of
    a later head can tell."""
    home = tmp_path / "home"
    for i in range(2):
        assert _cli(home, "check", "--", "echo", str(i)).returncode == 0
    saved = (home / HEAD_NAME).read_bytes()
    for i in range(3):
        assert _cli(home, "check", "--", "echo", "later", str(i)).returncode == 0
    _cut_tail(home, keep=2)
    (home / HEAD_NAME).write_bytes(saved)
    assert _cli(home, "audit", "verify").returncode == 1


GITHUB_TOKEN_SHAPE = "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"  # valid checksum, never issued
AWS_KEY_ID = "AKIAZ3MHQX7B2LKWP4RN"


def _stored(home: Path) -> bytes:
    return b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())


@pytest.mark.slow
def test_a_command_the_guard_allowed_is_stored_masked(tmp_path: Path) -> None:
    """``check -- ls AKIA…`` is allowed without a scan; its record used to hold the raw key."""
    home = tmp_path / "home"
    done = _cli(home, "check", "--json", "--", "ls", AWS_KEY_ID)
    assert done.returncode == 0
    assert AWS_KEY_ID not in done.stdout
    assert AWS_KEY_ID.encode() not in _stored(home)
    assert "AKIA" in _cli(home, "audit", "tail").stdout  # the masked preview is kept


@pytest.mark.slow
@pytest.mark.parametrize(
    ("argument", "secret"),
    [
        (GITHUB_TOKEN_SHAPE, GITHUB_TOKEN_SHAPE),
        ("postgres://admin:Tr0ub4dor-x9Q@db.internal:5432/prod", "Tr0ub4dor-x9Q"),
    ],
)
def test_a_secret_in_an_ancestor_command_line_is_stored_masked(
    tmp_path: Path, argument: str, secret: str
) -> None:
    """The ancestry of every record holds its parents' command lines; a parent started with a
    token (or a short password in a URL) in its arguments must not put it into the log."""
    home = tmp_path / "home"
    env = dict(os.environ, DOMESTIQUE_HOME=str(home), DOMESTIQUE_HOOKD="off")
    script = f"{DOMESTIQUE} check -- git status; true '{argument}'"
    done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, check=False)
    assert done.returncode == 0, done
    assert _cli(home, "audit", "verify").returncode == 0  # the decision was recorded
    assert secret.encode() not in _stored(home)


@pytest.mark.slow
def test_records_without_token_like_text_never_load_the_detection_engine(tmp_path: Path) -> None:
    """The mask costs one regex in the common case: ``git status`` does not import detect."""
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from _helpers.records import make_record\n"
        "from domestique.audit import record_decision\n"
        f"r = record_decision(make_record(), home=Path({str(tmp_path / 'h')!r}))\n"
        "assert r.action.value == 'allow', r\n"
        "assert 'domestique.detect' not in sys.modules\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=child_env(), capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr


def test_an_evidence_preview_holding_a_raw_secret_is_masked_at_the_gate(tmp_path: Path) -> None:
    """Defence in depth: a component that forgot to mask an evidence preview does not put the
    raw value into the log; the gate scans previews as it scans messages and commands."""
    import dataclasses
    import json

    from _helpers.records import make_record
    from domestique.audit._mask import mask_record
    from domestique.records import Evidence, to_canonical_json

    base = make_record(codes=("cmd.password_attack",))
    leaky = Evidence("command[0:40]", f"login with {GITHUB_TOKEN_SHAPE}", "")
    reason = dataclasses.replace(base.reasons[0], evidence=(leaky,))
    stored = mask_record(dataclasses.replace(base, reasons=(reason,)), tmp_path / "h")
    assert GITHUB_TOKEN_SHAPE.encode() not in to_canonical_json(stored)
    (kept,) = json.loads(to_canonical_json(stored))["reasons"][0]["evidence"]
    assert kept["preview"].startswith("login with ghp_")  # masked, not dropped


def test_audit_gate_masks_a_secret_in_the_subject_markers(tmp_path: Path) -> None:
    """Review: the firewall records the client's user-agent as a subject marker; a secret put
    there was blocked but stored raw. The audit gate masks markers like every other free text."""
    import dataclasses

    from _helpers.records import make_record
    from domestique.audit._mask import mask_record
    from domestique.records import to_canonical_json

    base = make_record(codes=("proxy.secret_in_header",))
    subject = dataclasses.replace(base.subject, markers=(f"user-agent:{GITHUB_TOKEN_SHAPE}",))
    stored = mask_record(dataclasses.replace(base, subject=subject), tmp_path / "h")
    assert GITHUB_TOKEN_SHAPE.encode() not in to_canonical_json(stored)
    (marker,) = stored.subject.markers
    assert marker.startswith("user-agent:ghp_")  # masked, not dropped
