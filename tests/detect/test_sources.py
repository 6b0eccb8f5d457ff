"""The default scanner (cached per process, fail-closed on bad data) and redact_text."""

from __future__ import annotations

from pathlib import Path

import pytest

from domestique.detect import Finding, default_scanner, redact_text
from domestique.detect import sources as scanner_module
from domestique.detect.sources import add_records, clear_cache
from domestique.keys import Fingerprinter

GITHUB = "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"


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    clear_cache()


def test_default_scanner_is_cached_per_home(home: Path, tmp_path: Path) -> None:
    """The same home gives the same compiled scanner; another home another one."""
    a = default_scanner(home)
    assert default_scanner(home) is a
    other = tmp_path / "other"
    other.mkdir()
    assert default_scanner(other) is not a


def test_default_scanner_includes_env_known_values(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A secret-named environment variable's value is found as secret.known_value."""
    monkeypatch.setenv("MY_SERVICE_TOKEN", "opaque-Value-7788-zz")
    s = default_scanner(home)
    (f,) = s.scan("echo opaque-Value-7788-zz")
    assert f.code == "secret.known_value"


def test_default_scanner_reads_dotenv_of_the_cwd(home: Path, tmp_path: Path) -> None:
    """Values from .env in the working directory are known values."""
    (tmp_path / ".env").write_text("STRIPE_SECRET=local-dev-Secret-4242\n")
    s = default_scanner(home)
    assert [f.code for f in s.scan("key local-dev-Secret-4242")] == ["secret.known_value"]


def test_damaged_records_fail_closed(home: Path) -> None:
    """A damaged record index makes every scan report engine.detector_error, never clean."""
    (home / "records").mkdir()
    (home / "records" / "x.json").write_text("[]")
    s = default_scanner(home)
    assert [f.code for f in s.scan("nothing here")] == ["engine.detector_error"]


def test_redact_text_replaces_spans_and_unions_overlaps() -> None:
    """Each span becomes one placeholder; overlapping spans are redacted once."""
    text = f"a {GITHUB} b"
    s, e = 2, 2 + len(GITHUB)
    findings = [Finding("x.a", s, e, "", ""), Finding("x.b", s + 3, e, "", "")]
    assert redact_text(text, findings) == "a [REDACTED] b"
    assert redact_text(text, []) == text


def test_default_scanner_takes_the_callers_env_and_cwd(home: Path, tmp_path: Path) -> None:
    """A daemon passes the hook caller's environment and working directory: their values are
    known values, and this process's own environment is not consulted."""
    project = tmp_path / "project"
    project.mkdir()
    (project / ".env").write_text("LOCAL_API_KEY=dotenv-Value-5151-qq\n")
    s = default_scanner(home, env={"CALLER_TOKEN": "caller-Value-9090-xy"}, cwd=project)
    assert [f.code for f in s.scan("a caller-Value-9090-xy b")] == ["secret.known_value"]
    assert [f.code for f in s.scan("a dotenv-Value-5151-qq b")] == ["secret.known_value"]
    empty = default_scanner(home, env={}, cwd=tmp_path)
    assert empty.scan("a caller-Value-9090-xy b dotenv-Value-5151-qq") == []


def test_default_scanner_cache_key_follows_env_cwd_and_files(home: Path, tmp_path: Path) -> None:
    """Same caller data: the same scanner. Other env values, another directory, an edited .env
    or a newly registered record set: another scanner."""
    env = {"A_TOKEN": "first-Value-1212-ab", "EDITOR": "vi"}
    a = default_scanner(home, env=env, cwd=tmp_path)
    assert default_scanner(home, env=dict(env), cwd=tmp_path) is a
    assert default_scanner(home, env={**env, "EDITOR": "nano"}, cwd=tmp_path) is a
    assert default_scanner(home, env={"A_TOKEN": "other-Value-3434-cd"}, cwd=tmp_path) is not a
    sub = tmp_path / "sub"
    sub.mkdir()
    assert default_scanner(home, env=env, cwd=sub) is not a
    (tmp_path / ".env").write_text("DB_PASSWORD=edited-Value-5656-ef\n")
    b = default_scanner(home, env=env, cwd=tmp_path)
    assert b is not a
    assert [f.code for f in b.scan("x edited-Value-5656-ef")] == ["secret.known_value"]
    csv_file = tmp_path / "crm.csv"
    csv_file.write_text("email,account\nada@example.org,ACC-000417\n")
    add_records(csv_file, ["email", "account"], Fingerprinter.for_home(home), home=home)
    c = default_scanner(home, env=env, cwd=tmp_path)
    assert c is not b
    assert "records.customer" in [f.code for f in c.scan("ada@example.org owns ACC-000417")]


def test_default_scanner_cache_is_bounded_and_holds_no_raw_value(
    home: Path, tmp_path: Path
) -> None:
    """At most MAX_CACHED_SCANNERS are kept, and no cache key contains a secret value."""
    for i in range(scanner_module.MAX_CACHED_SCANNERS + 5):
        default_scanner(home, env={"K_TOKEN": f"value-Number-{i:04d}-zz"}, cwd=tmp_path)
    assert len(scanner_module._CACHE) == scanner_module.MAX_CACHED_SCANNERS
    assert "value-Number-" not in repr(list(scanner_module._CACHE))
    first = default_scanner(home, env={"K_TOKEN": "value-Number-0000-zz"}, cwd=tmp_path)
    assert [f.code for f in first.scan("value-Number-0000-zz")] == ["secret.known_value"]
