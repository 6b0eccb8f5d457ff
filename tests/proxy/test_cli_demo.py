"""``domestique demo``: runs end to end with no key and no network, and checks itself."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_demo_succeeds_and_shows_the_three_stages(private_home: Path) -> None:
    """Exit 0; the provider saw placeholders; the answer came back restored; a record exists."""
    proc = subprocess.run(
        [sys.executable, "-m", "domestique", "demo"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    received = out.split("2. What the provider received")[1].split("3. What came back")[0]
    assert "[REDACTED:slack_token:" in received
    assert "xoxb-" not in received
    assert "AKIA" not in received
    answer = out.split("3. What came back")[1].split("4. The decision record")[0]
    assert "xoxb-284619370521" in answer
    assert "[REDACTED:" not in answer
    assert "action redact" in out
    assert "Demo complete" in out
    # The demo uses its own temporary home: the developer's audit store is untouched.
    assert not (private_home / "audit.sqlite3").exists()


def test_demo_rejects_arguments() -> None:
    """Arguments are an error (exit 2)."""
    proc = subprocess.run(
        [sys.executable, "-m", "domestique", "demo", "--nope"],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
