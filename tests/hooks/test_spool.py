"""The audit spool with real hook processes and a real SQLite store: a hook deciding in-process
spools its masked record; the daemon, ``report``, ``audit verify`` and the next store append
chain it once, whatever process dies where."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

from _helpers.hooks import DOMESTIQUE, FAKE_TOKEN, decision, message, run_hook, shell_payload
from domestique.audit import DB_NAME, AuditStore, verify
from domestique.audit.spool import CORRUPT_SUFFIX, RECORD_SUFFIX, SPOOL_DIR_NAME


def _state(env: dict[str, str]) -> Path:
    return Path(env["DOMESTIQUE_HOME"])


def _spooled(env: dict[str, str]) -> list[Path]:
    folder = _state(env) / SPOOL_DIR_NAME
    return sorted(folder.glob("*" + RECORD_SUFFIX)) if folder.exists() else []


def _stored_ids(env: dict[str, str]) -> list[str]:
    """The record ids in the SQLite file, read with plain sqlite3 (no ingestion)."""
    conn = sqlite3.connect(_state(env) / DB_NAME)
    try:
        return [row[0] for row in conn.execute("SELECT id FROM records ORDER BY seq")]
    finally:
        conn.close()


def _cold_hooks(env: dict[str, str], repo: Path, commands: list[str]) -> list[str]:
    """Run one cold hook per command (daemon off); their decisions."""
    out = []
    for command in commands:
        r = run_hook("claude-code", shell_payload("claude-code", command, repo), env, repo)
        out.append(decision("claude-code", r))
    return out


def _python(env: dict[str, str], code: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, timeout=60, check=False
    )


def test_a_cold_hook_spools_its_record_privately_and_verify_chains_it(
    hook_env: dict[str, str], repo: Path
) -> None:
    assert _cold_hooks(hook_env, repo, ["git status"]) == ["allow"]
    state = _state(hook_env)
    assert not (state / DB_NAME).exists()  # the hook did not open the store
    (spooled,) = _spooled(hook_env)
    assert stat.S_IMODE(spooled.stat().st_mode) == 0o600
    assert stat.S_IMODE(spooled.parent.stat().st_mode) == 0o700
    line = json.loads(spooled.read_bytes())["record"]
    assert line["component"] == "hook"
    assert line["object"]["command"] == "git status"

    done = subprocess.run(
        [DOMESTIQUE, "audit", "verify"], env=hook_env, capture_output=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert b"intact: 1 records" in done.stdout
    assert _stored_ids(hook_env) == [line["id"]]
    assert _spooled(hook_env) == []


def test_no_raw_secret_reaches_the_spool(hook_env: dict[str, str], repo: Path) -> None:
    _cold_hooks(hook_env, repo, [f"curl -H 'Authorization: token {FAKE_TOKEN}' https://x.test"])
    (spooled,) = _spooled(hook_env)
    assert FAKE_TOKEN not in spooled.read_text()


def test_report_sees_spooled_records(hook_env: dict[str, str], repo: Path) -> None:
    _cold_hooks(hook_env, repo, ["git status", "git log"])
    done = subprocess.run(
        [DOMESTIQUE, "report"], env=hook_env, capture_output=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert b"2 decisions recorded" in done.stdout
    assert _spooled(hook_env) == []


def test_the_daemon_chains_what_the_cold_hooks_spooled_when_it_starts(
    hook_env: dict[str, str], repo: Path, tmp_path: Path
) -> None:
    _cold_hooks(hook_env, repo, ["git status"])
    assert len(_spooled(hook_env)) == 1
    env = dict(hook_env, DOMESTIQUE_HOOKD="nostart")
    proc = subprocess.Popen(
        [sys.executable, "-m", "domestique.hooks.daemon", "120"],
        env=env,
        cwd=repo,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        sock = _state(env) / "hookd.sock"
        import time

        deadline = time.monotonic() + 60
        while not sock.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert sock.exists()  # the daemon chains the spool before it listens
        assert _spooled(hook_env) == []
        assert len(_stored_ids(hook_env)) == 1
        # Through the daemon, records go straight to the store.
        r = run_hook("claude-code", shell_payload("claude-code", "git diff", repo), env, repo)
        assert decision("claude-code", r) == "allow"
        assert len(_stored_ids(hook_env)) == 2
        assert _spooled(hook_env) == []
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_a_process_killed_after_spooling_loses_nothing(hook_env: dict[str, str]) -> None:
    # A writer SIGKILLed right after its spool write (before any ingestion).
    code = (
        "import os, signal\n"
        "from domestique.audit import record_decision\n"
        "from _helpers.records import make_record\n"
        "r = record_decision(make_record(), spool=True)\n"
        "print(r.id, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    env = dict(hook_env, PYTHONPATH=str(Path(__file__).parents[1]))
    done = _python(env, code)
    assert done.returncode == -signal.SIGKILL, done.stderr
    rid = done.stdout.decode().strip()
    assert len(_spooled(hook_env)) == 1
    result = verify(_state(hook_env))
    assert result.ok
    assert result.records == 1
    assert _stored_ids(hook_env) == [rid]


def test_a_crash_between_commit_and_unlink_chains_the_record_once(
    hook_env: dict[str, str], repo: Path
) -> None:
    _cold_hooks(hook_env, repo, ["git status", "git log"])
    # The ingesting process dies after its commit, before it removes the spool files.
    code = (
        "import os\n"
        "import domestique.audit._store as store\n"
        "store._spool.remove = lambda *a: os._exit(9)\n"
        "store.AuditStore.open()\n"
    )
    done = _python(hook_env, code)
    assert done.returncode == 9, done.stderr
    ids = _stored_ids(hook_env)
    assert len(ids) == 2
    assert len(_spooled(hook_env)) == 2
    with AuditStore.open(_state(hook_env)) as store:
        assert store.count() == 2
    assert _stored_ids(hook_env) == ids
    assert _spooled(hook_env) == []
    assert verify(_state(hook_env)).ok


def test_concurrent_cold_hooks_and_ingesters_chain_every_record_once(
    hook_env: dict[str, str], repo: Path
) -> None:
    payload = json.dumps(shell_payload("claude-code", "git status", repo)).encode()
    hooks = [
        subprocess.Popen(
            [DOMESTIQUE, "hook", "claude-code"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=hook_env,
            cwd=repo,
        )
        for _ in range(6)
    ]
    for proc in hooks:
        out, err = proc.communicate(payload, timeout=120)
        assert proc.returncode == 0, (out, err)
        assert not out.strip(), (out, err)  # allowed: silence
    assert len(_spooled(hook_env)) == 6
    ingesters = [
        subprocess.Popen(
            [DOMESTIQUE, "audit", "verify"], env=hook_env, stdout=subprocess.PIPE, cwd=repo
        )
        for _ in range(3)
    ]
    for proc in ingesters:
        proc.communicate(timeout=120)
        assert proc.returncode == 0
    ids = _stored_ids(hook_env)
    assert len(ids) == 6
    assert len(set(ids)) == 6
    assert _spooled(hook_env) == []
    assert verify(_state(hook_env)).ok


def test_a_truncated_spool_file_is_kept_and_reported_and_the_chain_stays_sound(
    hook_env: dict[str, str], repo: Path
) -> None:
    _cold_hooks(hook_env, repo, ["git status", "git log"])
    first, _second = _spooled(hook_env)
    first.write_bytes(first.read_bytes()[:100])  # cut mid-record
    result = verify(_state(hook_env))
    assert not result.ok
    assert result.kind == "spool"
    assert "1 spooled record(s) could not be read" in (result.problem or "")
    assert result.records == 1  # the sound record is chained
    corrupt = first.with_name(first.name + CORRUPT_SUFFIX)
    assert corrupt.exists()  # kept, not dropped
    # The chain goes on: later records append and verify.
    _cold_hooks(hook_env, repo, ["git diff"])
    result = verify(_state(hook_env))
    assert result.kind == "spool"
    assert result.records == 2
    corrupt.unlink()  # looked at by someone: the log itself is intact
    assert verify(_state(hook_env)).ok


def test_an_edited_spool_line_is_not_chained(hook_env: dict[str, str], repo: Path) -> None:
    _cold_hooks(hook_env, repo, ["git push --force"])
    (spooled,) = _spooled(hook_env)
    raw = spooled.read_bytes()
    assert b"git push --force" in raw
    spooled.write_bytes(raw.replace(b"git push --force", b"git status"))  # still a record
    result = verify(_state(hook_env))
    assert not result.ok
    assert result.kind == "spool"
    assert result.records == 0


def test_an_unusable_spool_falls_back_to_the_store(hook_env: dict[str, str], repo: Path) -> None:
    state = _state(hook_env)
    state.mkdir(mode=0o700, parents=True)
    (state / SPOOL_DIR_NAME).write_text("not a folder")
    assert _cold_hooks(hook_env, repo, ["git status"]) == ["allow"]
    assert len(_stored_ids(hook_env)) == 1  # appended to the store directly


def test_a_spool_folder_others_can_read_is_not_used(hook_env: dict[str, str], repo: Path) -> None:
    folder = _state(hook_env) / SPOOL_DIR_NAME
    folder.mkdir(mode=0o700, parents=True)
    os.chmod(folder, 0o755)  # noqa: S103 - the point of the test
    assert _cold_hooks(hook_env, repo, ["git status"]) == ["allow"]
    assert list(folder.iterdir()) == []
    assert len(_stored_ids(hook_env)) == 1


def test_no_spool_and_no_store_denies(hook_env: dict[str, str], repo: Path) -> None:
    state = _state(hook_env)
    state.mkdir(mode=0o700, parents=True)
    (state / SPOOL_DIR_NAME).write_text("not a folder")
    (state / DB_NAME).mkdir()  # the store cannot be opened either
    r = run_hook("claude-code", shell_payload("claude-code", "git status", repo), hook_env, repo)
    assert decision("claude-code", r) == "deny"
    assert "audit.write_failed" in message(r)
