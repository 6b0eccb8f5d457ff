"""``domestique report``: what left through AI tools, what was redacted or blocked, and why.

Built from the audit log alone (the stored records' JSON). Every field of ``object`` is read
defensively: records from older versions, other components or a damaged field still count,
under ``unknown``.
"""

from __future__ import annotations

import html
import re
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from domestique.records import utc_now_iso

_SINCE = re.compile(r"^\s*([0-9]+)\s*([smhdw])\s*$")
# Dates and times in ASCII digits only (int() and fromisoformat() would accept other scripts).
_ISO = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9:.]+(Z|[+-][0-9]{2}:?[0-9]{2})?)?$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
UNKNOWN = "unknown"
SENT_ACTIONS = ("allow", "redact")  # the proxy forwarded the request (redact: cleaned)


def parse_since(value: str, *, now_ns: int | None = None) -> str:
    """``7d``, ``24h``, ``30m``, ``2w``, ``90s`` or an ISO date/time → ISO UTC lower bound.

    Raises ValueError for anything else, and for a window that starts in the future or before
    1970 (no record can be there: an empty report would look like "nothing happened").
    An ISO time with an offset (``2026-11-01T09:00:00+05:00``) is converted to UTC.
    """
    m = _SINCE.match(value)
    now = now_ns if now_ns is not None else time.time_ns()
    if m:
        seconds = int(m.group(1)) * _UNITS[m.group(2)]
        start = now - seconds * 1_000_000_000
        if start < 0:
            raise ValueError(f"--since: {value.strip()!r} reaches back before 1970")
        return utc_now_iso(start)
    text = value.strip()
    parsed: datetime | None = None
    if _ISO.match(text):
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            parsed = None
    if parsed is None:
        raise ValueError(f"--since: expected e.g. 7d, 24h, 30m or 2026-11-01, got {value!r}")
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    start_ns = int((parsed - datetime(1970, 1, 1, tzinfo=UTC)).total_seconds()) * 1_000_000_000
    start_ns += parsed.microsecond * 1000
    if start_ns < 0:
        raise ValueError(f"--since: {text!r} is before 1970")
    if start_ns > now:
        raise ValueError(f"--since: {text!r} is in the future (now is {utc_now_iso(now)})")
    return utc_now_iso(start_ns)


def _str(value: object) -> str:
    return value if isinstance(value, str) and value else UNKNOWN


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def destination_of(record: Mapping[str, Any]) -> str:
    """``provider (upstream host)`` for the proxy; '' for components without a destination."""
    obj = record.get("object")
    if not isinstance(obj, Mapping) or record.get("component") != "proxy":
        return ""
    provider = obj.get("provider")
    host = obj.get("upstream_host")
    if isinstance(provider, str) and provider and isinstance(host, str) and host:
        return f"{provider} ({host})"
    if isinstance(host, str) and host:
        return host
    return _str(provider)


@dataclass
class Destination:
    """What was forwarded to one destination (allowed or redacted proxy requests)."""

    requests: int = 0
    redacted: int = 0
    bytes_in: int = 0  # request bytes the firewall received
    bytes_out: int = 0  # request bytes it forwarded upstream
    models: Counter[str] = field(default_factory=Counter)

    def to_json(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "redacted": self.redacted,
            "bytes_in": self.bytes_in,
            "bytes_out": self.bytes_out,
            "models": dict(self.models.most_common()),
        }


@dataclass
class Report:
    """Totals over a window of the audit log."""

    since: str | None
    until: str
    records: int = 0
    by_component: Counter[str] = field(default_factory=Counter)
    by_action: Counter[str] = field(default_factory=Counter)
    by_code: Counter[str] = field(default_factory=Counter)
    by_destination: Counter[str] = field(default_factory=Counter)
    by_agent: Counter[str] = field(default_factory=Counter)
    sent: dict[str, Destination] = field(default_factory=dict)
    # (component, action, code) for every decision that redacted or stopped something
    interventions: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    first: str | None = None
    last: str | None = None

    def add(self, record: Mapping[str, Any]) -> None:
        self.records += 1
        component = _str(record.get("component"))
        action = _str(record.get("action"))
        subject = record.get("subject")
        agent = _str(subject.get("agent")) if isinstance(subject, Mapping) else UNKNOWN
        rtime = record.get("time")
        if isinstance(rtime, str):
            self.first = rtime if self.first is None or rtime < self.first else self.first
            self.last = rtime if self.last is None or rtime > self.last else self.last
        self.by_component[component] += 1
        self.by_action[action] += 1
        self.by_agent[agent] += 1
        reasons = record.get("reasons")
        codes = [
            _str(r.get("code"))
            for r in (reasons if isinstance(reasons, list) else [])
            if isinstance(r, Mapping)
        ]
        for code in dict.fromkeys(codes):
            self.by_code[code] += 1
            if action != "allow":
                self.interventions[(component, action, code)] += 1
        destination = destination_of(record)
        if destination:
            self.by_destination[destination] += 1
            if action in SENT_ACTIONS:
                obj = record.get("object")
                obj = obj if isinstance(obj, Mapping) else {}
                sent = self.sent.setdefault(destination, Destination())
                sent.requests += 1
                sent.redacted += action == "redact"
                sent.bytes_in += _int(obj.get("bytes_in"))
                sent.bytes_out += _int(obj.get("bytes_out"))
                sent.models[_str(obj.get("model"))] += 1

    def to_json(self) -> dict[str, Any]:
        return {
            "since": self.since,
            "until": self.until,
            "records": self.records,
            "first": self.first,
            "last": self.last,
            "by_component": dict(self.by_component.most_common()),
            "by_action": dict(self.by_action.most_common()),
            "by_code": dict(self.by_code.most_common()),
            "by_destination": dict(self.by_destination.most_common()),
            "by_agent": dict(self.by_agent.most_common()),
            "sent": {k: v.to_json() for k, v in sorted(self.sent.items())},
            "interventions": [
                {"component": c, "action": a, "code": code, "count": n}
                for (c, a, code), n in self.interventions.most_common()
            ],
        }


def build_report(records: Iterable[Mapping[str, Any]], *, since: str | None) -> Report:
    report = Report(since=since, until=utc_now_iso())
    for record in records:
        report.add(record)
    return report


# -- rendering -------------------------------------------------------------------------------


def _table(title: str, headers: list[str], rows: list[list[str]]) -> list[str]:
    if not rows:
        return [title, "  (none)", ""]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        out = []
        for i, cell in enumerate(cells):
            out.append(cell.rjust(widths[i]) if i else cell.ljust(widths[i]))
        return "  " + "  ".join(out).rstrip()

    return [title, line(headers), "  " + "  ".join("-" * w for w in widths), *map(line, rows), ""]


def _counter_rows(counter: Counter[str], total: int) -> list[list[str]]:
    return [
        [key, str(n), f"{100 * n / total:.0f}%" if total else "-"]
        for key, n in counter.most_common()
    ]


def render_text(report: Report) -> str:
    """A terminal report: what left, what was stopped or redacted and why, then totals."""
    window = f"since {report.since}" if report.since else "all records"
    lines = [
        f"Domestique report ({window}, until {report.until})",
        f"{report.records} decisions recorded"
        + (f", {report.first} .. {report.last}" if report.first else ""),
        "",
    ]
    sent_rows = [
        [
            dest,
            str(d.requests),
            str(d.redacted),
            f"{d.bytes_out:,}",
            ", ".join(f"{m} ×{n}" for m, n in d.models.most_common(3)),
        ]
        for dest, d in sorted(report.sent.items(), key=lambda kv: -kv[1].requests)
    ]
    lines += _table(
        "What was sent out (requests the firewall forwarded):",
        ["destination", "requests", "redacted", "bytes sent", "models"],
        sent_rows,
    )
    lines += _table(
        "What was redacted, asked about or stopped, and why:",
        ["component", "action", "reason code", "count"],
        [[c, a, code, str(n)] for (c, a, code), n in report.interventions.most_common()],
    )
    total = report.records
    lines += _table(
        "By component:", ["component", "count", "share"], _counter_rows(report.by_component, total)
    )
    lines += _table(
        "By action:", ["action", "count", "share"], _counter_rows(report.by_action, total)
    )
    lines += _table(
        "By reason code:", ["code", "decisions", "share"], _counter_rows(report.by_code, total)
    )
    lines += _table(
        "By destination:",
        ["destination", "requests", "share"],
        _counter_rows(report.by_destination, total),
    )
    lines += _table(
        "By agent:", ["agent", "decisions", "share"], _counter_rows(report.by_agent, total)
    )
    return "\n".join(lines).rstrip() + "\n"


def render_html(report: Report) -> str:
    """A self-contained HTML page with the same tables (every value escaped)."""
    esc = html.escape

    def table(title: str, headers: list[str], rows: list[list[str]]) -> str:
        head = "".join(f"<th>{esc(h)}</th>" for h in headers)
        body = (
            "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in rows)
            or f'<tr><td colspan="{len(headers)}">(none)</td></tr>'
        )
        return f"<h2>{esc(title)}</h2><table><tr>{head}</tr>{body}</table>"

    total = report.records
    parts = [
        table(
            "What was sent out",
            ["destination", "requests", "redacted", "bytes received", "bytes sent"],
            [
                [k, str(d.requests), str(d.redacted), str(d.bytes_in), str(d.bytes_out)]
                for k, d in sorted(report.sent.items())
            ],
        ),
        table(
            "What was redacted, asked about or stopped, and why",
            ["component", "action", "reason code", "count"],
            [[c, a, code, str(n)] for (c, a, code), n in report.interventions.most_common()],
        ),
        table(
            "By component",
            ["component", "count", "share"],
            _counter_rows(report.by_component, total),
        ),
        table("By action", ["action", "count", "share"], _counter_rows(report.by_action, total)),
        table(
            "By reason code", ["code", "decisions", "share"], _counter_rows(report.by_code, total)
        ),
        table(
            "By destination",
            ["destination", "requests", "share"],
            _counter_rows(report.by_destination, total),
        ),
        table("By agent", ["agent", "decisions", "share"], _counter_rows(report.by_agent, total)),
    ]
    window = f"since {report.since}" if report.since else "all records"
    style = (
        "body{font-family:system-ui,sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}"
    )
    return (
        '<!doctype html><html><head><meta charset="utf-8"><title>Domestique report</title>'
        f"<style>{style}</style></head><body><h1>Domestique report</h1>"
        f"<p>{esc(window)}, until {esc(report.until)}: {report.records} decisions.</p>"
        + "".join(parts)
        + "</body></html>\n"
    )
