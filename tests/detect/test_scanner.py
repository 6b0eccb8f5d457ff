"""The default scanner (cached per process, fail-closed on bad data) and redact_text."""

from __future__ import annotations

from pathlib import Path

import pytest

from domestique.detect import Finding, default_scanner, redact_text
from domestique.detect.scanner import clear_cache

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
