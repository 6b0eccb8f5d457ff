"""``--since`` for ``domestique report`` and ``audit export``: a window that can only give an
empty report is an error, ISO times with an offset are read as such."""

from __future__ import annotations

from pathlib import Path

import pytest

from _helpers import run_domestique
from domestique.audit.report import parse_since

NOW = 1_796_000_000 * 10**9  # 2026-11-30


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


@pytest.mark.slow
def test_report_and_export_exit_2_for_a_future_since(tmp_path: Path) -> None:
    """The command line says what is wrong and exits 2; it prints no report."""
    home = tmp_path / "home"
    assert run_domestique(["check", "--", "git", "status"], home).returncode == 0
    for args in (["report", "--since", "2999-01-01"], ["audit", "export", "--since", "2999-01-01"]):
        done = run_domestique(args, home)
        assert done.returncode == 2, args
        assert "in the future" in done.stderr
        assert done.stdout == ""
