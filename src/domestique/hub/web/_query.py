"""The web report's reads: a time window and filters over the rollups, the records, the index.

A window is whole hours, ``[start, end)`` (``YYYY-MM-DDTHH``; ``7d``, ``30d`` and ``90d`` are
today and the days before it from midnight UTC, ``24h`` the last 24 hours): the rollups are per
hour and per day, so the numbers of every page are exact for the window they show. The whole
days of a window are read from the per-day rollup, its partial days at the ends from the
per-hour one. Filters are equalities on the
dimensions (:mod:`domestique.hub.web._facts`) and the action.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from domestique.hub.sinks.forwarder import sink_status
from domestique.hub.store import HubStore

FILTERS = ("developer", "endpoint", "repository", "agent", "destination", "action")
_COLUMN = {
    "developer": "developer",
    "endpoint": "endpoint_id",
    "repository": "repository",
    "agent": "agent",
    "destination": "destination",
    "action": "action",
}
WINDOWS = {"24h": 24, "7d": 24 * 7, "30d": 24 * 30, "90d": 24 * 90, "all": 0}
ACTIONS = ("allow", "redact", "ask", "deny", "block")
PAGE = 50
MAX_OPTIONS = 300


def _hour(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H")


@dataclass(frozen=True, slots=True)
class Filters:
    window: str = "7d"
    start: str = "0000-00-00T00"  # first hour in (inclusive)
    end: str = "9999-99-99T99"  # first hour out (exclusive)
    values: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, query: Mapping[str, str], now: dt.datetime | None = None) -> Filters:
        """From the page's query: ``window`` (24h, 7d, 30d, 90d, all) or ``from``/``to``
        (``YYYY-MM-DD`` or ``YYYY-MM-DDTHH``, UTC), and one value per filter. ValueError for
        a window it cannot read."""
        now = now or dt.datetime.now(dt.UTC)
        values = {k: query[k][:300] for k in FILTERS if query.get(k)}
        if values.get("action") and values["action"] not in ACTIONS:
            raise ValueError("action must be one of " + ", ".join(ACTIONS))
        start_q, end_q = query.get("from", ""), query.get("to", "")
        if start_q or end_q:
            start = _parse_hour(start_q) if start_q else "0000-00-00T00"
            end = _parse_hour(end_q, end=True) if end_q else "9999-99-99T99"
            return cls("custom", start, end, values)
        window = query.get("window") or "7d"
        if window not in WINDOWS:
            raise ValueError("window must be one of " + ", ".join(WINDOWS))
        hours = WINDOWS[window]
        if hours == 0:
            return cls(window, values=values)
        top = now.replace(minute=0, second=0, microsecond=0) + dt.timedelta(hours=1)
        if hours < 48:
            return cls(window, _hour(top - dt.timedelta(hours=hours)), _hour(top), values)
        # N days: today and the N-1 days before it, from midnight (UTC).
        first = now.replace(hour=0, minute=0, second=0, microsecond=0)
        return cls(window, _hour(first - dt.timedelta(days=hours // 24 - 1)), _hour(top), values)

    def query(self) -> dict[str, str]:
        """The query string that gives these filters back."""
        out: dict[str, str] = {}
        if self.window == "custom":
            if not self.start.startswith("0000"):
                out["from"] = self.start
            if not self.end.startswith("9999"):
                out["to"] = self.end
        else:
            out["window"] = self.window
        return out | dict(self.values)

    def start_iso(self) -> str:
        return (
            "2000-01-01T00:00:00.000000Z" if self.start < "2000" else f"{self.start}:00:00.000000Z"
        )

    def end_iso(self) -> str:
        return "2100-01-01T00:00:00.000000Z" if self.end > "2099" else f"{self.end}:00:00.000000Z"


def _parse_hour(text: str, *, end: bool = False) -> str:
    text = text.strip()
    try:
        if len(text) == 10:
            day = dt.datetime.strptime(text, "%Y-%m-%d")
            return _hour(day + dt.timedelta(days=1) if end else day)
        hour = dt.datetime.strptime(text[:13], "%Y-%m-%dT%H")
    except ValueError:
        raise ValueError("from/to must be YYYY-MM-DD or YYYY-MM-DDTHH") from None
    return _hour(hour + dt.timedelta(hours=1) if end else hour)


LOW, HIGH = "0000-00-00T00", "9999-99-99T99"


def _where(f: Filters, *, time_col: str = "period") -> tuple[str, list[Any]]:
    parts = [f"{time_col} >= %s", f"{time_col} < %s"]
    params: list[Any] = [f.start, f.end]
    for name, value in f.values.items():
        parts.append(f"{_COLUMN[name]} = %s")
        params.append(value)
    return " AND ".join(parts), params


def _hour_after(hour: str) -> str:
    return _hour(dt.datetime.strptime(hour, "%Y-%m-%dT%H") + dt.timedelta(hours=1))


def _next_day(day: str) -> str:
    d = dt.datetime.strptime(day, "%Y-%m-%d") + dt.timedelta(days=1)
    return d.strftime("%Y-%m-%d")


def split(start: str, end: str) -> tuple[list[tuple[str, str]], tuple[str, str] | None]:
    """A window of hours as the hour ranges at its ends and the whole days between them:
    the days are read from the per-day rollup (about 24 times fewer rows)."""
    if start == LOW:
        first_day = "0000-00-00"
    elif start[11:13] == "00":
        first_day = start[:10]
    else:
        first_day = _next_day(start[:10])
    last_day = "9999-99-99" if end == HIGH else end[:10]
    if first_day >= last_day:
        return [(start, end)], None
    hours = []
    if start != LOW and start < f"{first_day}T00":
        hours.append((start, f"{first_day}T00"))
    if end != HIGH and f"{last_day}T00" < end:
        hours.append((f"{last_day}T00", end))
    return hours, (first_day, last_day)


def _source(
    f: Filters, cols: str, *, codes: bool = False, hours_only: bool = False, extra: str = ""
) -> tuple[str, list[Any]]:
    """``SELECT cols`` over the window and filters, from the per-hour rollup at the window's
    ends and the per-day rollup between (one ``UNION ALL``)."""
    hour_table, day_table = ("fact_codes", "fact_codes_day") if codes else ("facts", "facts_day")
    hours, days = ([(f.start, f.end)], None) if hours_only else split(f.start, f.end)
    filters = "".join(f" AND {_COLUMN[name]} = %s" for name in f.values) + extra
    values = list(f.values.values())
    parts: list[str] = []
    params: list[Any] = []
    for table, (a, b) in [
        *((hour_table, h) for h in hours),
        *([(day_table, days)] if days else []),
    ]:
        parts.append(f"SELECT {cols} FROM {table} WHERE period >= %s AND period < %s{filters}")  # noqa: S608 - fixed names
        params += [a, b, *values]
    return " UNION ALL ".join(parts), params


class WebQueries:
    """Every read the pages make, over one :class:`HubStore`."""

    def __init__(self, store: HubStore) -> None:
        self.store = store

    # -- filters --------------------------------------------------------------------------
    def options(self, f: Filters) -> dict[str, list[str]]:
        """The values each filter can take in the window (for the form's lists)."""
        with self.store.db.tx() as tx:
            rows = tx.q(
                "SELECT DISTINCT name, value FROM dim_values WHERE last_period >= %s AND "
                "first_period < %s "
                "ORDER BY name, value",
                (f.start, f.end),
            )
        out: dict[str, list[str]] = {name: [] for name in FILTERS[:-1]}
        for name, value in rows:
            if name in out and len(out[name]) < MAX_OPTIONS:
                out[str(name)].append(str(value))
        out["action"] = list(ACTIONS)
        return out

    # -- overview -------------------------------------------------------------------------
    def overview(self, f: Filters) -> dict[str, Any]:
        cols = (
            "component, action, destination, substr(period, 1, {n}) AS b, n, bytes, "
            "red_secret + red_pii + red_records AS red"
        )
        with self.store.db.tx() as tx:
            hourly = self._hourly(f)
            src, params = _source(f, cols.format(n=13 if hourly else 10), hours_only=hourly)
            rows = tx.q(
                f"SELECT component, action, destination, b, sum(n), sum(bytes), sum(red) "  # noqa: S608
                f"FROM ({src}) AS t GROUP BY component, action, destination, b",
                params,
            )
            src, params = _source(f, "code, n", codes=True)
            codes = tx.q(
                f"SELECT code, sum(n) AS total FROM ({src}) AS t "  # noqa: S608
                "GROUP BY code ORDER BY total DESC, code LIMIT 10",
                params,
            )
        actions = dict.fromkeys(ACTIONS, 0)
        requests = commands = 0
        buckets: dict[str, dict[str, int]] = {}
        dests: dict[str, list[int]] = {}
        for component, action, destination, b, count, size, red in rows:
            n = int(count)
            actions[str(action)] = actions.get(str(action), 0) + n
            buckets.setdefault(str(b), dict.fromkeys(ACTIONS, 0))
            buckets[str(b)][str(action)] = buckets[str(b)].get(str(action), 0) + n
            if component == "proxy":
                requests += n
                acc = dests.setdefault(str(destination) or "(none)", [0, 0, 0])
                acc[0] += n
                acc[1] += int(size)
                acc[2] += int(red)
            else:
                commands += n
        return {
            "requests": requests,
            "commands": commands,
            "by_action": actions,
            "series": dict(sorted(buckets.items())),
            "hourly": hourly,
            "codes": [(str(c), int(n)) for c, n in codes],
            "destinations": [
                (d, *v) for d, v in sorted(dests.items(), key=lambda kv: (-kv[1][1], kv[0]))
            ][:20],
        }

    @staticmethod
    def _hourly(f: Filters) -> bool:
        """Bars per hour for a window of up to 48 hours, else per day."""
        if f.window == "24h":
            return True
        if f.window != "custom" or f.start == LOW or f.end == HIGH:
            return False
        first = dt.datetime.strptime(f.start, "%Y-%m-%dT%H")
        last = dt.datetime.strptime(f.end, "%Y-%m-%dT%H")
        return (last - first) <= dt.timedelta(hours=48)

    # -- what left ------------------------------------------------------------------------
    def what_left(self, f: Filters) -> dict[str, list[tuple[Any, ...]]]:
        """Model traffic (the firewall's records) per destination and model, developer,
        repository and agent: requests, bytes sent, values redacted by kind."""
        src, params = _source(
            f,
            "destination, model, developer, repository, agent, n, bytes, red_secret, red_pii, "
            "red_records",
            extra=" AND component = 'proxy'",
        )
        with self.store.db.tx() as tx:
            rows = tx.q(
                "SELECT destination, model, developer, repository, agent, sum(n), sum(bytes), "  # noqa: S608
                f"sum(red_secret), sum(red_pii), sum(red_records) FROM ({src}) AS t "
                "GROUP BY destination, model, developer, repository, agent",
                params,
            )
        groups: dict[str, dict[tuple[str, ...], list[int]]] = {
            "destination": {},
            "developer": {},
            "repository": {},
            "agent": {},
        }
        for dest, model, dev, repo, agent, *sums in rows:
            for name, key in (
                ("destination", (dest, model)),
                ("developer", (dev,)),
                ("repository", (repo,)),
                ("agent", (agent,)),
            ):
                label = tuple(str(k) or "(none)" for k in key)
                acc = groups[name].setdefault(label, [0, 0, 0, 0, 0])
                for i, v in enumerate(sums):
                    acc[i] += int(v)
        out: dict[str, list[tuple[Any, ...]]] = {}
        for name, table in groups.items():
            ordered = sorted(table.items(), key=lambda kv: (-kv[1][1], kv[0]))[:500]
            out[name] = [(*k, *v) for k, v in ordered]
        return out

    def totals(self, f: Filters) -> int:
        src, params = _source(f, "n")
        with self.store.db.tx() as tx:
            row = tx.one(f"SELECT sum(n) FROM ({src}) AS t", params)  # noqa: S608
        return int(row[0]) if row and row[0] is not None else 0

    # -- decisions ------------------------------------------------------------------------
    def decisions(
        self, f: Filters, *, before: tuple[str, str] | None = None, limit: int = PAGE
    ) -> list[dict[str, Any]]:
        """The newest records first (keyset paging: ``before`` is the last row's time, id)."""
        pg = self.store.db.postgres
        cast = "::timestamptz" if pg else ""
        where, params = _where(f, time_col="time")  # the records' own time, exact
        where = where.replace("time >= %s", f"time >= %s{cast}").replace(
            "time < %s", f"time < %s{cast}"
        )
        params[0], params[1] = f.start_iso(), f.end_iso()
        if before is not None:
            where += f" AND (time < %s{cast} OR (time = %s{cast} AND id < %s))"
            params += [before[0], before[0], before[1]]
        when = _time_text(pg)
        with self.store.db.tx() as tx:
            if f.values or pg:
                # The per-hour rollup names the newest hours holding enough matches; only
                # those hours' records are read (a filter can match few records spread over
                # the window, and on PostgreSQL the time index is a BRIN: it finds ranges,
                # it does not walk them in order).
                ranges = self._hours_holding(tx, f, before, limit + 1)
                if not ranges:
                    return []
                # The hours replace the window's bounds (they lie inside it), so that the
                # time index is read for those hours only.
                where = " AND ".join(["1 = 1", *where.split(" AND ")[2:]])
                params = params[2:]
                where += (
                    " AND ("
                    + " OR ".join(f"(time >= %s{cast} AND time < %s{cast})" for _ in ranges)
                    + ")"
                )
                params += [t for r in ranges for t in r]
            rows = tx.q(
                f"SELECT endpoint_id, id, {when}, component, action, codes, developer, "  # noqa: S608
                f"repository, agent, destination FROM records WHERE {where} "
                f"ORDER BY time DESC, id DESC LIMIT {int(limit) + 1}",
                params,
            )
        keys = (
            "endpoint",
            "id",
            "time",
            "component",
            "action",
            "codes",
            "developer",
            "repository",
            "agent",
            "destination",
        )
        return [dict(zip(keys, (str(v) for v in r), strict=True)) for r in rows]

    @staticmethod
    def _hours_holding(
        tx: Any, f: Filters, before: tuple[str, str] | None, want: int
    ) -> list[tuple[str, str]]:
        """The newest hours of the window (before ``before``) whose records match ``f``, as
        few as hold ``want`` matches (or all there are), as merged [start, end) time ranges."""
        top = f.end if before is None else min(f.end, _hour_after(before[0][:13]))
        where = "".join(f" AND {_COLUMN[name]} = %s" for name in f.values)
        rows = tx.q(
            f"SELECT period, sum(n) FROM facts WHERE period >= %s AND period < %s{where} "  # noqa: S608 - fixed names
            f"GROUP BY period ORDER BY period DESC LIMIT {int(want) + 1}",
            [f.start, top, *f.values.values()],
        )
        hours: list[str] = []
        total = 0
        for period, n in rows:
            hours.append(str(period))
            # The hour of ``before`` is only partly left: its count does not count.
            if before is None or str(period) != before[0][:13]:
                total += int(n)
            if total >= want:
                break
        ranges: list[list[str]] = []
        for hour in sorted(hours):
            start, end = f"{hour}:00:00.000000Z", f"{_hour_after(hour)}:00:00.000000Z"
            if ranges and ranges[-1][1] == start:
                ranges[-1][1] = end
            else:
                ranges.append([start, end])
        return [(a, b) for a, b in ranges]

    def record(self, endpoint_id: str, record_id: str) -> dict[str, Any] | None:
        with self.store.db.tx() as tx:
            row = tx.one(
                "SELECT seq, hash, prev_hash, received_at, record FROM records "
                "WHERE endpoint_id = %s AND id = %s",
                (endpoint_id, record_id),
            )
            if row is None:
                return None
            ep = tx.one("SELECT host, os_user FROM endpoints WHERE id = %s", (endpoint_id,))
        data = orjson.loads(row[4])
        return {
            "endpoint": endpoint_id,
            "endpoint_host": ep[0] if ep else "",
            "endpoint_user": ep[1] if ep else "",
            "seq": int(row[0]),
            "hash": str(row[1]),
            "prev_hash": str(row[2]),
            "received_at": str(row[3]),
            "record": data if isinstance(data, dict) else {},
        }

    # -- one leaked value -----------------------------------------------------------------
    def leaked(self, fingerprint: str, f: Filters) -> list[dict[str, Any]]:
        """Every record whose evidence cites ``fingerprint`` (either key's), newest first."""
        pg = self.store.db.postgres
        when = _time_text(pg, "f.time")
        extra, params = "", [fingerprint]
        for name, value in f.values.items():
            extra += f" AND r.{_COLUMN[name]} = %s"
            params.append(value)
        with self.store.db.tx() as tx:
            rows = tx.q(
                f"SELECT f.endpoint_id, f.record_id, {when}, f.code, f.place, r.component, "  # noqa: S608
                "r.action, r.developer, r.repository, r.agent, r.destination, e.host "
                "FROM findings f JOIN records r ON r.endpoint_id = f.endpoint_id AND "
                "r.id = f.record_id AND r.time = f.time LEFT JOIN endpoints e ON "
                f"e.id = f.endpoint_id WHERE f.fingerprint = %s{extra} "
                "ORDER BY f.time DESC LIMIT 1000",
                params,
            )
        keys = (
            "endpoint",
            "id",
            "time",
            "code",
            "where",
            "component",
            "action",
            "developer",
            "repository",
            "agent",
            "destination",
            "host",
        )
        return [dict(zip(keys, (str(v or "") for v in r), strict=True)) for r in rows]

    # -- endpoints ------------------------------------------------------------------------
    def endpoints(self, f: Filters) -> dict[str, Any]:
        report = self.store.report()
        with self.store.db.tx() as tx:
            doctor = tx.q(
                "SELECT endpoint_id, host, reported_at, found, installed, fail_closed, "
                "answering, ok, problems FROM doctor ORDER BY endpoint_id, host"
            )
            alerts = tx.q(
                "SELECT time, endpoint_id, code, seq, record_id, message FROM alerts "
                "ORDER BY id DESC LIMIT 500"
            )
        want_ep = f.values.get("endpoint")
        want_dev = f.values.get("developer")
        endpoints = [
            e
            for e in report["endpoints"]
            if (not want_ep or e["id"] == want_ep) and (not want_dev or e["user"] == want_dev)
        ]
        ids = {e["id"] for e in endpoints}
        return {
            "endpoints": endpoints,
            "doctor": [
                {
                    "endpoint": str(r[0]),
                    "host": str(r[1]),
                    "reported_at": str(r[2]),
                    "found": bool(r[3]),
                    "installed": bool(r[4]),
                    "fail_closed": bool(r[5]),
                    "answering": bool(r[6]),
                    "ok": bool(r[7]),
                    "problems": "; ".join(orjson.loads(r[8])),
                }
                for r in doctor
                if r[0] in ids
            ],
            "alerts": [
                dict(
                    zip(("time", "endpoint", "code", "seq", "record_id", "message"), r, strict=True)
                )
                for r in alerts
                if r[1] in ids
            ],
            # The SIEM sinks are the hub's own, not an endpoint's: shown whatever the filter.
            "sinks": sink_status(self.store.db),
        }

    # -- doctor upload --------------------------------------------------------------------
    def store_doctor(self, endpoint_id: str, hosts: list[dict[str, Any]]) -> int:
        from domestique.records import utc_now_iso

        now = utc_now_iso()
        rows = []
        for h in hosts[:32]:
            problems = [str(p)[:300] for p in h.get("problems", [])][:20]
            rows.append(
                (
                    endpoint_id,
                    str(h["host"])[:40],
                    now,
                    int(bool(h.get("found"))),
                    int(bool(h.get("installed"))),
                    int(bool(h.get("fail_closed"))),
                    int(bool(h.get("answering"))),
                    int(bool(h.get("ok"))),
                    orjson.dumps(problems).decode(),
                )
            )
        with self.store.db.tx() as tx:
            tx.run("DELETE FROM doctor WHERE endpoint_id = %s", (endpoint_id,))
            tx.many(
                "INSERT INTO doctor (endpoint_id, host, reported_at, found, installed, "
                "fail_closed, answering, ok, problems) VALUES (%s, %s, %s, %s, %s, %s, %s, "
                "%s, %s)",
                rows,
            )
        return len(rows)


def _time_text(pg: bool, col: str = "time") -> str:
    """The time column as the endpoint wrote it (``…T…Z`` with microseconds)."""
    if pg:
        return f"to_char({col} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
    return col
