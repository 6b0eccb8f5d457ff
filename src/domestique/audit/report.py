"""``domestique report``: what left through AI tools, what was redacted or blocked, and why.

Built from the audit log alone (the stored records' JSON). Every field of ``object`` is read
defensively: records from older versions, other components or a damaged field still count,
under ``unknown``.

Breakdowns by repository (the repository holding the directory a command or tool call ran in),
agent, model and session; a timeline (per hour for windows up to two days, else per day); and
the decisions that redacted, asked, stopped, or in monitor mode would have, with their masked
evidence. A label says why a value is missing: ``human`` (a person at a terminal), ``other:
<user agent>`` (a client the firewall does not recognise), ``(firewall request)`` (the firewall
does not know the repository), ``(no session id)``; ``unknown`` is left for a record that
truly does not say.
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

from domestique.records import Action, utc_now_iso

_SINCE = re.compile(r"^\s*([0-9]+)\s*([smhdw])\s*$")
# Dates and times in ASCII digits only (int() and fromisoformat() would accept other scripts).
_ISO = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9:.]+(Z|[+-][0-9]{2}:?[0-9]{2})?)?$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
UNKNOWN = "unknown"
SENT_ACTIONS = ("allow", "redact")  # the proxy forwarded the request (redact: cleaned)
HUMAN = "human"
FIREWALL_REQUEST = "(firewall request)"
NO_SESSION = "(no session id)"
NOT_A_MODEL_CALL = "(not a model request)"
MAX_DECISIONS = 1000  # the newest decisions listed with their evidence (all are counted)


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


def agent_of(record: Mapping[str, Any]) -> str:
    """The agent that asked; ``human``, ``other: <client>`` or ``unknown`` when none is named."""
    subject = record.get("subject")
    if not isinstance(subject, Mapping):
        return UNKNOWN
    agent = subject.get("agent")
    if isinstance(agent, str) and agent:
        return agent
    if subject.get("actor") == "human":
        return HUMAN
    markers = subject.get("markers")
    for marker in markers if isinstance(markers, list) else []:
        if isinstance(marker, str) and marker.startswith("user-agent:"):
            client = marker.removeprefix("user-agent:").strip()
            if client:
                return f"other: {client}"
    return UNKNOWN


_REPO_CACHE: dict[str, str] = {}


def repository_of(record: Mapping[str, Any]) -> str:
    """The repository a decision was made in: the nearest folder with ``.git`` above the
    record's ``cwd`` (the ``cwd`` itself when there is none or it is gone)."""
    obj = record.get("object")
    cwd = obj.get("cwd") if isinstance(obj, Mapping) else None
    if not isinstance(cwd, str) or not cwd:
        if record.get("component") == "proxy":
            return FIREWALL_REQUEST
        return UNKNOWN
    cached = _REPO_CACHE.get(cwd)
    if cached is not None:
        return cached
    import os

    found = cwd
    try:
        here = os.path.abspath(cwd)
        while True:
            if os.path.exists(os.path.join(here, ".git")):
                found = here
                break
            parent = os.path.dirname(here)
            if parent == here:
                break
            here = parent
    except (OSError, ValueError):
        found = cwd
    if len(_REPO_CACHE) < 10_000:
        _REPO_CACHE[cwd] = found
    return found


def model_of(record: Mapping[str, Any]) -> str:
    obj = record.get("object")
    model = obj.get("model") if isinstance(obj, Mapping) else None
    if isinstance(model, str) and model:
        return model
    return UNKNOWN if record.get("component") == "proxy" else NOT_A_MODEL_CALL


def session_of(record: Mapping[str, Any]) -> str:
    subject = record.get("subject")
    session = subject.get("session_id") if isinstance(subject, Mapping) else None
    return session if isinstance(session, str) and session else NO_SESSION


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
class Decision:
    """One decision listed with its evidence (masked previews and fingerprints only)."""

    id: str
    time: str
    component: str
    action: str
    would_action: str | None
    agent: str
    repository: str
    session: str
    model: str
    subject: str  # the masked command, or provider and route
    reasons: list[dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "time": self.time,
            "component": self.component,
            "action": self.action,
            "would_action": self.would_action,
            "agent": self.agent,
            "repository": self.repository,
            "session": self.session,
            "model": self.model,
            "subject": self.subject,
            "reasons": self.reasons,
        }


def _reasons_of(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    reasons = record.get("reasons")
    for r in reasons if isinstance(reasons, list) else []:
        if not isinstance(r, Mapping):
            continue
        evidence = r.get("evidence")
        out.append(
            {
                "code": _str(r.get("code")),
                "message": r.get("message") if isinstance(r.get("message"), str) else "",
                "evidence": [
                    {
                        "where": _str(e.get("where")),
                        "preview": e.get("preview") if isinstance(e.get("preview"), str) else "",
                        "fingerprint": (
                            e.get("fingerprint") if isinstance(e.get("fingerprint"), str) else ""
                        ),
                    }
                    for e in (evidence if isinstance(evidence, list) else [])[:20]
                    if isinstance(e, Mapping)
                ],
            }
        )
    return out


def _subject_line(record: Mapping[str, Any]) -> str:
    obj = record.get("object")
    obj = obj if isinstance(obj, Mapping) else {}
    for key in ("command", "tool"):
        value = obj.get(key)
        if isinstance(value, str) and value:
            return value[:300]
    if record.get("component") == "proxy":
        return f"{_str(obj.get('provider'))} {_str(obj.get('route'))}"
    if record.get("component") == "policy":
        return f"{_str(obj.get('rule_id'))} in {_str(obj.get('file'))}"
    return _str(obj.get("kind"))


def _bucket(time_text: str, hourly: bool) -> str:
    return time_text[:13] + ":00Z" if hourly else time_text[:10]


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
    by_repository: Counter[str] = field(default_factory=Counter)
    by_model: Counter[str] = field(default_factory=Counter)
    by_session: Counter[str] = field(default_factory=Counter)
    # Monitor mode: records not enforced, and what each would have done.
    monitored: int = 0
    by_would_action: Counter[str] = field(default_factory=Counter)
    # time bucket -> action (a "would_" prefix for monitor mode) -> count
    timeline: dict[str, Counter[str]] = field(default_factory=dict)
    decisions: list[Decision] = field(default_factory=list)
    decisions_total: int = 0
    # Changes made to policy files through Domestique (component "policy": domestique allow).
    policy_changes: list[dict[str, Any]] = field(default_factory=list)
    hourly: bool = True

    def add(self, record: Mapping[str, Any]) -> None:
        self.records += 1
        component = _str(record.get("component"))
        action = _str(record.get("action"))
        agent = agent_of(record)
        would = record.get("would_action")
        would = would if isinstance(would, str) and would else None
        repository = repository_of(record)
        model = model_of(record)
        session = session_of(record)
        self.by_repository[repository] += 1
        if model != NOT_A_MODEL_CALL:  # model calls only: commands would drown them
            self.by_model[model] += 1
        self.by_session[session] += 1
        if would is not None:
            self.monitored += 1
            self.by_would_action[would] += 1
        rtime = record.get("time")
        if component == "policy":
            self._policy_change(record)
        if isinstance(rtime, str) and len(rtime) >= 13:
            counts = self.timeline.setdefault(_bucket(rtime, self.hourly), Counter())
            counts[action] += 1
            if would is not None and would != action:
                counts[f"would_{would}"] += 1
        if action != "allow" or (would is not None and would != "allow"):
            self.decisions_total += 1
            self.decisions.append(
                Decision(
                    id=_str(record.get("id")),
                    time=rtime if isinstance(rtime, str) else UNKNOWN,
                    component=component,
                    action=action,
                    would_action=would,
                    agent=agent,
                    repository=repository,
                    session=session,
                    model=model,
                    subject=_subject_line(record),
                    reasons=_reasons_of(record),
                )
            )
            if len(self.decisions) > 2 * MAX_DECISIONS:  # keep the newest, in bounded memory
                self.decisions = self.decisions[-MAX_DECISIONS:]
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
            if would is not None and would not in (action, "allow"):
                self.interventions[(component, f"would {would}", code)] += 1
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
            "by_repository": dict(self.by_repository.most_common()),
            "by_model": dict(self.by_model.most_common()),
            "by_session": dict(self.by_session.most_common()),
            "monitor": {
                "records": self.monitored,
                "by_would_action": dict(self.by_would_action.most_common()),
                "would_have_stopped": sum(
                    n for a, n in self.by_would_action.items() if a in ("ask", "deny", "block")
                ),
            },
            "timeline": {
                "unit": "hour" if self.hourly else "day",
                "buckets": [
                    {"start": start, **dict(sorted(counts.items()))}
                    for start, counts in sorted(self.timeline.items())
                ],
            },
            "decisions_total": self.decisions_total,
            "policy_changes": sorted(self.policy_changes, key=lambda c: c["time"], reverse=True)[
                :MAX_DECISIONS
            ],
            "decisions": [d.to_json() for d in self.newest_decisions()],
        }

    def _policy_change(self, record: Mapping[str, Any]) -> None:
        obj = record.get("object")
        obj = obj if isinstance(obj, Mapping) else {}
        subject = record.get("subject")
        user = subject.get("user") if isinstance(subject, Mapping) else None
        line = obj.get("line")
        self.policy_changes.append(
            {
                "id": _str(record.get("id")),
                "time": _str(record.get("time")),
                "user": _str(user),
                "file": _str(obj.get("file")),
                "line": _int(line),
                "rule_id": _str(obj.get("rule_id")),
                "scope": _str(obj.get("scope")),
                "codes": [c for c in obj.get("codes") or [] if isinstance(c, str)]
                if isinstance(obj.get("codes"), list)
                else [],
                "for_record": obj.get("for_record")
                if isinstance(obj.get("for_record"), str)
                else None,
            }
        )
        if len(self.policy_changes) > 2 * MAX_DECISIONS:
            self.policy_changes = self.policy_changes[-MAX_DECISIONS:]

    def newest_decisions(self, limit: int = MAX_DECISIONS) -> list[Decision]:
        """The newest decisions that redacted, asked or stopped (or would have), newest first."""
        return sorted(self.decisions, key=lambda d: d.time, reverse=True)[:limit]


def build_report(records: Iterable[Mapping[str, Any]], *, since: str | None) -> Report:
    """The report over ``records``; `domestique doctor`'s probe decisions are left out."""
    until = utc_now_iso()
    report = Report(since=since, until=until, hourly=_hourly(since, until))
    for record in records:
        if not is_probe(record):
            report.add(record)
    return report


def is_probe(record: Mapping[str, Any]) -> bool:
    """True for a decision made on `domestique doctor`'s own probe (never counted)."""
    obj = record.get("object")
    return isinstance(obj, Mapping) and obj.get("probe") is True


def _hourly(since: str | None, until: str) -> bool:
    """Per hour for a window up to two days, else per day (no window: per day)."""
    if since is None:
        return False
    try:
        start = datetime.fromisoformat(since.replace("Z", "+00:00"))
        end = datetime.fromisoformat(until.replace("Z", "+00:00"))
    except ValueError:
        return False
    return (end - start).total_seconds() <= 2 * 86400


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
    if report.monitored:
        lines += [_monitor_line(report), ""]
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
    lines += _table(
        "By repository:",
        ["repository", "decisions", "share"],
        _counter_rows(report.by_repository, total),
    )
    lines += _table(
        "By model:", ["model", "decisions", "share"], _counter_rows(report.by_model, total)
    )
    lines += _table(
        "By session:", ["session", "decisions", "share"], _counter_rows(report.by_session, total)
    )
    lines += _table(f"Timeline (per {_unit(report)}):", *_timeline_rows(report))
    shown = report.newest_decisions(TEXT_DECISIONS)
    title = "Decisions that redacted, asked or stopped (or would have), newest first"
    more = report.decisions_total - len(shown)
    lines.append(f"{title}" + (f" ({more} more: --json or --html)" if more > 0 else "") + ":")
    if not shown:
        lines.append("  (none)")
    for d in shown:
        lines += ["  " + line for line in _decision_lines(d)]
    lines += ["", *_table("Policy changes (domestique allow):", *_policy_change_rows(report))]
    return "\n".join(lines).rstrip() + "\n"


def _policy_change_rows(report: Report) -> tuple[list[str], list[list[str]]]:
    rows = [
        [
            c["time"],
            c["user"],
            f"{c['rule_id']} ({c['scope']}: {', '.join(c['codes'])})",
            f"{c['file']}:{c['line']}",
        ]
        for c in sorted(report.policy_changes, key=lambda c: c["time"], reverse=True)
    ]
    return ["time", "user", "rule", "where"], rows


TEXT_DECISIONS = 20


def _unit(report: Report) -> str:
    return "hour" if report.hourly else "day"


def _timeline_rows(report: Report) -> tuple[list[str], list[list[str]]]:
    columns = sorted({a for counts in report.timeline.values() for a in counts})
    rows = [
        [start, str(sum(v for k, v in counts.items() if not k.startswith("would_")))]
        + [str(counts.get(c, 0)) for c in columns]
        for start, counts in sorted(report.timeline.items())
    ]
    return ["start", "decisions", *columns], rows


def _decision_action(d: Decision) -> str:
    if d.would_action is not None and d.would_action != d.action:
        return f"{d.action} (monitor: would have {_past(d.would_action)})"
    return d.action


def _past(action: str) -> str:
    try:
        return Action(action).past
    except ValueError:
        return action


def _decision_lines(d: Decision) -> list[str]:
    lines = [
        f"{d.time}  {d.component} {_decision_action(d)}  {d.id}",
        f"    {d.subject}",
        f"    agent {d.agent} · repository {d.repository} · session {d.session}"
        + (f" · model {d.model}" if d.model not in (NOT_A_MODEL_CALL, UNKNOWN) else ""),
    ]
    for r in d.reasons:
        lines.append(f"    {r['code']}: {r['message']}")
        for e in r["evidence"]:
            preview = f" {e['preview']!r}" if e["preview"] else ""
            fp = f" {e['fingerprint']}" if e["fingerprint"] else ""
            lines.append(f"      at {e['where']}{preview}{fp}")
    return lines


def _monitor_line(report: Report) -> str:
    stopped = report.by_would_action
    parts = [f"{n} would have been {_past(a)}" for a, n in stopped.most_common() if a != "allow"]
    return (
        f"Monitor mode: {report.monitored} decisions were recorded but not enforced"
        + (f"; {', '.join(parts)}" if parts else "; none would have been stopped")
        + "."
    )


def _decision_rows(report: Report) -> tuple[list[str], list[list[str]]]:
    """The newest decisions that redacted, asked or stopped: headers and rows, evidence masked."""
    headers = ["time", "record", "component", "action", "agent", "repository", "what"]
    rows = [
        [
            d.time,
            d.id,
            d.component,
            _decision_action(d),
            d.agent,
            d.repository,
            d.subject,
            "; ".join(
                f"{r['code']}: {r['message']}"
                + "".join(
                    f" [{e['where']} {e['preview']} {e['fingerprint']}]".replace("  ", " ")
                    for e in r["evidence"]
                )
                for r in d.reasons
            ),
        ]
        for d in report.newest_decisions()
    ]
    return [*headers, "reasons and evidence"], rows


def render_html(report: Report) -> str:
    """A self-contained HTML page with the same tables (every value escaped), in the look of
    the hub's web report (its stylesheet inlined, its SVG chart; no script)."""
    from domestique.hub.web._html import Table, chart, numbers, page, render_table

    esc = html.escape

    def table(title: str, headers: list[str], rows: list[list[str]]) -> str:
        name = title.split(" (", maxsplit=1)[0].lower().replace(" ", "-")
        return render_table(Table(name, title, headers, rows))

    total = report.records
    series = {
        start: {k: v for k, v in counts.items() if not k.startswith("would_")}
        for start, counts in report.timeline.items()
    }
    parts = [
        numbers(
            [("Decisions", total)]
            + [
                (_past(a).capitalize(), report.by_action.get(a, 0))
                for a in ("redact", "ask", "deny", "block", "allow")
            ]
        ),
        chart(series, hourly=report.hourly),
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
        table(
            "By repository",
            ["repository", "decisions", "share"],
            _counter_rows(report.by_repository, total),
        ),
        table("By model", ["model", "decisions", "share"], _counter_rows(report.by_model, total)),
        table(
            "By session", ["session", "decisions", "share"], _counter_rows(report.by_session, total)
        ),
        table(f"Timeline (per {_unit(report)})", *_timeline_rows(report)),
        table(
            "Decisions that redacted, asked or stopped (or would have), newest first",
            *_decision_rows(report),
        ),
    ]
    parts.append(table("Policy changes (domestique allow)", *_policy_change_rows(report)))
    if report.monitored:
        parts.insert(0, f"<p><strong>{esc(_monitor_line(report))}</strong></p>")
    window = f"since {report.since}" if report.since else "all records"
    intro = f"<p class=note>{esc(window)}, until {esc(report.until)}: {total} decisions.</p>"
    return page("Domestique report", intro + "".join(parts), standalone=True) + "\n"
