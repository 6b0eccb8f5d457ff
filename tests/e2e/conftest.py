"""The real agent CLIs, installed once from the npm registry at pinned versions.

Each CLI goes into its own folder of a cache outside the repository
(``$DOMESTIQUE_E2E_CACHE``, default ``~/.cache/domestique-e2e/NAME-VERSION``), installed with
``npm install --ignore-scripts`` into a temporary folder that is renamed into place only when
complete, so an interrupted install is never taken for a finished one. Claude Code's
postinstall (which only puts the platform's binary in place of ``bin/claude.exe``) is run by
hand afterwards.

Without node and npm the suite is skipped, unless ``DOMESTIQUE_E2E_REQUIRED=1`` (``.ci/run``
sets it): in CI a missing tool is a failure, never a silent skip.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest

INSTALL_TIMEOUT_S = 600


@dataclass(frozen=True)
class AgentCli:
    host: str  # the name `domestique install` takes
    package: str
    version: str
    command: str  # the executable's name in node_modules/.bin

    @property
    def folder(self) -> str:
        return f"{self.package.rsplit('/', 1)[-1]}-{self.version}"


CLIS = {
    "claude-code": AgentCli("claude-code", "@anthropic-ai/claude-code", "2.1.197", "claude"),
    "codex": AgentCli("codex", "@openai/codex", "0.171.0", "codex"),
    "gemini": AgentCli("gemini", "@google/gemini-cli", "0.61.0", "gemini"),
}


def cache_root() -> Path:
    env = os.environ.get("DOMESTIQUE_E2E_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "domestique-e2e"


def missing(what: str) -> NoReturn:
    """Skip, or fail when the suite is required (CI)."""
    if os.environ.get("DOMESTIQUE_E2E_REQUIRED") == "1":
        pytest.fail(f"end-to-end suite: {what}")
    pytest.skip(f"end-to-end suite: {what}")


def _works(bin_dir: Path, cli: AgentCli) -> bool:
    exe = bin_dir / cli.command
    try:
        with tempfile.TemporaryDirectory() as home:  # whatever the CLI writes there goes
            out = subprocess.run(
                [str(exe), "--version"],
                capture_output=True,
                timeout=60,
                env={"PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin", "HOME": home},
                check=False,
            )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and cli.version in out.stdout.decode(errors="replace")


def install_cli(cli: AgentCli) -> Path:
    """The folder holding the CLI's executable, installing it first when needed."""
    final = cache_root() / cli.folder
    bin_dir = final / "node_modules" / ".bin"
    if _works(bin_dir, cli):
        return bin_dir
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        missing("node and npm are needed to install the agent CLIs")
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{cli.folder}-", dir=final.parent))
    try:
        done = subprocess.run(
            [npm, "install", "--ignore-scripts", "--no-audit", "--no-fund", "--prefix",
             str(staging), f"{cli.package}@{cli.version}"],
            capture_output=True, timeout=INSTALL_TIMEOUT_S, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            missing(f"npm install {cli.package}@{cli.version} failed: {done.stderr[-2000:]!r}")
        if cli.host == "claude-code":
            # The postinstall replaces bin/claude.exe by the platform package's binary.
            pkg = staging / "node_modules" / cli.package
            subprocess.run(
                ["node", "install.cjs"], cwd=pkg, capture_output=True, timeout=120, check=True
            )
        shutil.rmtree(final, ignore_errors=True)
        staging.rename(final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    if not _works(bin_dir, cli):
        missing(f"{cli.package}@{cli.version} installed but `{cli.command} --version` fails")
    return bin_dir
