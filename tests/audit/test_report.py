"""``domestique report``: totals over a small log, answered from the log alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from _helpers.records import make_record
from domestique.audit import AuditStore
from domestique.audit.report import build_report, parse_since, render_html, render_text
from domestique.records import Action, Component, utc_now_iso

NOW = 1_800_000_000_000_000_000


def _proxy(action: Action, codes: tuple[str, ...], **obj: object) -> dict[str, object]:
    base: dict[str, object] = {
        "provider": "anthropic",
        "route": "/v1/messages",
        "model": "claude-x",
        "upstream_host": "api.anthropic.com",
        "bytes_in": 1000,
        "bytes_out": 990,
        "fields_scanned": 4,
    }
    base.update(obj)
    return make_record(
        component=Component.PROXY,
        action=action,
        codes=codes,
        obj=base,  # type: ignore[arg-type]
    ).to_json()


LOG = [
    _proxy(Action.ALLOW, ()),
    _proxy(Action.REDACT, ("secret.github_token", "pii.email"), bytes_in=500, bytes_out=480),
    _proxy(Action.BLOCK, ("records.customer",)),
    _proxy(Action.ALLOW, (), provider="openai", upstream_host="api.openai.com", model="gpt"),
    make_record(action=Action.DENY, codes=("cmd.pipe_to_shell",)).to_json(),
    make_record(action=Action.ALLOW, agent=None).to_json(),
    # A record from elsewhere with missing and odd fields still counts.
    {"component": "proxy", "action": "allow", "object": {"bytes_out": "many"}, "reasons": None},
]


def test_totals_by_component_action_code_destination_agent() -> None:
    """Counts per component, action, reason code, destination and agent."""
    report = build_report(LOG, since=None)
    assert report.records == 7
    assert report.by_component == {"proxy": 5, "guard": 2}
    assert report.by_action == {"allow": 4, "redact": 1, "block": 1, "deny": 1}
    assert report.by_code == {
        "secret.github_token": 1,
        "pii.email": 1,
        "records.customer": 1,
        "cmd.pipe_to_shell": 1,
    }
    assert report.by_destination == {
        "anthropic (api.anthropic.com)": 3,
        "openai (api.openai.com)": 1,
        "unknown": 1,
    }
    assert report.by_agent == {"claude-code": 5, "unknown": 2}


def test_what_was_sent_out_and_what_was_stopped() -> None:
    """Forwarded requests with bytes per destination; every redaction or stop with its code."""
    report = build_report(LOG, since=None)
    anthropic = report.sent["anthropic (api.anthropic.com)"]
    assert (anthropic.requests, anthropic.redacted) == (2, 1)
    assert (anthropic.bytes_in, anthropic.bytes_out) == (1500, 1470)
    assert report.sent["unknown"].bytes_out == 0  # "many" is not a byte count
    assert report.interventions == {
        ("proxy", "redact", "secret.github_token"): 1,
        ("proxy", "redact", "pii.email"): 1,
        ("proxy", "block", "records.customer"): 1,
        ("guard", "deny", "cmd.pipe_to_shell"): 1,
    }
    text = render_text(report)
    assert "What was sent out" in text
    assert "anthropic (api.anthropic.com)" in text
    assert "1,470" in text
    assert "records.customer" in text
    data = report.to_json()
    assert json.loads(json.dumps(data)) == data


def test_html_escapes_values() -> None:
    """Values from the log are escaped in the HTML page."""
    evil = make_record(action=Action.DENY, codes=("cmd.<script>",)).to_json()
    page = render_html(build_report([evil], since=None))
    assert "<script>" not in page
    assert "cmd.&lt;script&gt;" in page


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("7d", utc_now_iso(NOW - 7 * 86400 * 10**9)),
        ("24h", utc_now_iso(NOW - 86400 * 10**9)),
        ("30m", utc_now_iso(NOW - 1800 * 10**9)),
        ("2026-11-01", "2026-11-01T00:00:00.000000Z"),
    ],
)
def test_parse_since(value: str, expected: str) -> None:
    """Relative windows and dates become an ISO lower bound."""
    assert parse_since(value, now_ns=NOW) == expected


def test_parse_since_rejects_nonsense() -> None:
    """An unreadable window is an error, not 'everything'."""
    with pytest.raises(ValueError, match="since"):
        parse_since("last tuesday")


@pytest.mark.slow
def test_report_command_over_a_real_log(home: Path, tmp_path: Path) -> None:
    """`domestique report --since` filters by time; --json and --html work on the real store."""
    with AuditStore.open(home) as store:
        store.append(
            make_record(
                action=Action.DENY, codes=("cmd.pipe_to_shell",), time="2020-01-01T00:00:00.000000Z"
            )
        )
        store.append(
            make_record(
                component=Component.PROXY,
                action=Action.REDACT,
                codes=("secret.github_token",),
                obj={"provider": "openai", "upstream_host": "api.openai.com", "bytes_out": 77},
            )
        )
    env = {**os.environ, "DOMESTIQUE_HOME": str(home)}
    page = tmp_path / "r.html"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "domestique",
            "report",
            "--since",
            "7d",
            "--json",
            "--html",
            str(page),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["records"] == 1
    assert data["sent"]["openai (api.openai.com)"]["bytes_out"] == 77
    assert "openai (api.openai.com)" in page.read_text()
    everything = subprocess.run(
        [sys.executable, "-m", "domestique", "report", "--since", "all"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert "2 decisions recorded" in everything.stdout
    assert "cmd.pipe_to_shell" in everything.stdout
