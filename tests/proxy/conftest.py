"""Shared fixtures for the firewall tests: a private DOMESTIQUE_HOME and a canary scanner.

The pure-core tests inject :class:`CanaryScanner` (the pipeline's scanner interface), so they
pin the proxy's own behaviour without depending on the detection rules; the server tests use
the real ``domestique.detect.default_scanner``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from domestique.records import Action, Reason, Verdict, most_severe

CANARY = "dq_canary_7Rk2Qm9Lx4Vb8Nw3Zp6T"  # what CanaryScanner finds
CANARY_RE = re.compile(r"dq_canary_[A-Za-z0-9]{20}")


@dataclass(frozen=True, slots=True)
class CanaryFinding:
    code: str
    start: int
    end: int
    fingerprint: str
    preview: str


class CanaryScanner:
    """Finds ``dq_canary_…`` as ``secret.canary`` and ``blockme`` as ``records.customer``."""

    def __init__(self) -> None:
        self.calls = 0

    def scan(self, text: str) -> list[CanaryFinding]:
        self.calls += 1
        out = [
            CanaryFinding("secret.canary", m.start(), m.end(), "hmac-sha256:x", "dq_c…6Z")
            for m in CANARY_RE.finditer(text)
        ]
        out += [
            CanaryFinding("records.customer", m.start(), m.end(), "hmac-sha256:y", "bl…me")
            for m in re.finditer("blockme", text)
        ]
        return out


class TablePolicy:
    """A policy as the pipeline asks it: a code-prefix table, most severe wins."""

    def __init__(self, table: dict[str, Action] | None = None) -> None:
        self.table = table or {
            "secret.": Action.REDACT,
            "records.": Action.BLOCK,
            "proxy.binary_unscanned": Action.ALLOW,
            "proxy.": Action.BLOCK,
        }

    def action_for(self, code: str) -> Action:
        for prefix, action in self.table.items():
            if code.startswith(prefix):
                return action
        return Action.BLOCK

    def decide(self, reasons: Sequence[Reason]) -> Verdict:
        return Verdict(most_severe([self.action_for(r.code) for r in reasons]), tuple(reasons))


class BoundPolicy:
    """The real policy of ``home`` as the pipeline asks it, for requests to Anthropic."""

    def __init__(self, home: Path) -> None:
        from domestique.policy import DecisionContext, load_policy
        from domestique.records import Component

        self.policy = load_policy(home=home)
        self.ctx = DecisionContext(Component.PROXY, hosts=("api.anthropic.com",))

    def action_for(self, code: str) -> Action:
        return self.policy.action_for(code, self.ctx)

    def decide(self, reasons: Sequence[Reason]) -> Verdict:
        return self.policy.decide(reasons, self.ctx)


@pytest.fixture(autouse=True)
def private_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("dq-home")
    monkeypatch.setenv("DOMESTIQUE_HOME", str(home))
    return home


@pytest.fixture
def scanner() -> Iterator[CanaryScanner]:
    return CanaryScanner()


@pytest.fixture
def table_policy() -> TablePolicy:
    return TablePolicy()
