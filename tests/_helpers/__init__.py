"""Helpers shared by the tests, imported as ``_helpers.<topic>`` (``tests/`` is on the import
path through pytest's ``pythonpath`` setting; nothing here patches ``sys.path``).

- :mod:`_helpers.hooks`: real hook processes, host payloads, the hook fixtures;
- :mod:`_helpers.records`: small valid decision records;
- :mod:`_helpers.policy`: a private builtin policy directory for policy tests.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zlib
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
DOMESTIQUE = str(Path(sys.executable).with_name("domestique"))  # the console script


def child_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) with ``tests/`` on ``PYTHONPATH``, so a
    child interpreter imports ``_helpers`` the way the tests do."""
    env = dict(os.environ if base is None else base)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(TESTS), env.get("PYTHONPATH")) if p)
    return env


def run_domestique(
    args: list[str], home: Path, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """The ``domestique`` command with ``args``, its state in ``home``, the hook daemon off."""
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


def github_token(body: str) -> str:
    """A GitHub token shape: ghp_ + 30 characters + their CRC32 in base62 (never issued)."""
    alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    n, check = zlib.crc32(body.encode()), ""
    while n:
        n, r = divmod(n, 62)
        check = alphabet[r] + check
    return f"ghp_{body}{check.rjust(6, '0')}"
