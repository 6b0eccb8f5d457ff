"""HTML for the hub's pages and ``report --html``: one layout, one stylesheet, no inline script.

Every value is escaped (:func:`esc`); the only markup built from data is tables, definition
lists and the SVG chart. The stylesheet (``static/style.css``) is shared with the endpoint's
``domestique report --html``, which inlines it (a single file to hand over).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any
from urllib.parse import urlencode

ACTION_ORDER = ("allow", "redact", "ask", "deny", "block")


def esc(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def stylesheet() -> str:
    return resources.files("domestique.hub.web").joinpath("static/style.css").read_text("utf-8")


def asset(name: str) -> bytes:
    return resources.files("domestique.hub.web").joinpath(f"static/{name}").read_bytes()


@dataclass(slots=True)
class Table:
    """A table on a page, also served as CSV and JSON (``?format=csv&table=NAME``)."""

    name: str
    title: str
    columns: Sequence[str]
    rows: list[Any] = field(default_factory=list)  # each a sequence of cells
    links: list[str | None] = field(default_factory=list)  # per row: the drill-down URL
    numeric: frozenset[int] = frozenset()
    empty: str = "nothing in this window"  # what an empty table says

    def to_json(self) -> dict[str, Any]:
        return {
            "columns": list(self.columns),
            "rows": [dict(zip(self.columns, r, strict=True)) for r in self.rows],
        }

    def csv(self) -> str:
        import csv
        import io

        out = io.StringIO()
        w = csv.writer(out, lineterminator="\r\n")
        w.writerow(self.columns)
        for r in self.rows:
            # A cell starting with = + - @ is text to a spreadsheet, never a formula.
            w.writerow(
                [("'" + v) if isinstance(v, str) and v and v[0] in "=+-@\t\r" else v for v in r]
            )
        return out.getvalue()


def fmt(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    return esc(value)


def render_table(t: Table, export_query: Mapping[str, str] | None = None) -> str:
    head = "".join(
        f'<th class="num">{esc(c)}</th>' if i in t.numeric else f"<th>{esc(c)}</th>"
        for i, c in enumerate(t.columns)
    )
    body = []
    for n, row in enumerate(t.rows):
        link = t.links[n] if n < len(t.links) else None
        cells = []
        for i, v in enumerate(row):
            text = fmt(v)
            if i == 0 and link:
                text = f'<a href="{esc(link)}">{text}</a>'
            cls = ' class="num"' if i in t.numeric else ""
            cells.append(f"<td{cls}>{text}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    if not body:
        body.append(f'<tr><td colspan="{len(t.columns)}" class="empty">{esc(t.empty)}</td></tr>')
    exports = ""
    if export_query is not None:
        links = []
        for fmt_name in ("csv", "json"):
            q = urlencode({**export_query, "format": fmt_name, "table": t.name})
            links.append(f'<a class="export" href="?{esc(q)}">{fmt_name.upper()}</a>')
        exports = f'<span class="exports">{" ".join(links)}</span>'
    return (
        f'<section class="card" id="table-{esc(t.name)}"><h2>{esc(t.title)}{exports}</h2>'
        f'<table data-table="{esc(t.name)}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></section>"
    )


def page(
    title: str, body: str, *, nav: str = "", active: str = "", standalone: bool = False
) -> str:
    """A whole page. ``standalone``: the stylesheet inlined (``report --html``), no script."""
    if standalone:
        head = f"<style>{stylesheet()}</style>"
    else:
        head = (
            '<link rel="icon" href="/static/icon.svg">'
            '<link rel="stylesheet" href="/static/style.css">'
            '<script src="/static/app.js" defer></script>'
        )
    links = ""
    if nav:
        links = "".join(
            f'<a href="{esc(href)}"{" class=active" if name == active else ""}>{esc(name)}</a>'
            for name, href in NAV
        )
        links = f'<nav>{links}<a href="/logout" class="logout">log out</a></nav>'
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)} · Domestique</title>{head}</head><body>"
        f'<header><span class="brand">Domestique</span>{links}</header>'
        f"<main><h1>{esc(title)}</h1>{body}</main></body></html>"
    )


NAV = (
    ("Overview", "/"),
    ("What left", "/what-left"),
    ("Decisions", "/decisions"),
    ("One leaked value", "/leaked"),
    ("Endpoints", "/endpoints"),
    ("What-if", "/whatif"),
)


def numbers(items: Sequence[tuple[str, int]], *, cls: str = "") -> str:
    """Big figures in a row: ``[(label, value), …]``."""
    cells = "".join(
        f'<div class="figure {esc(label.lower().replace(" ", "-"))}" data-figure="{esc(label)}">'
        f'<span class="value">{v:,}</span><span class="label">{esc(label)}</span></div>'
        for label, v in items
    )
    return f'<section class="figures {cls}">{cells}</section>'


def chart(series: Mapping[str, Mapping[str, int]], *, hourly: bool) -> str:
    """A stacked bar chart (SVG, server-rendered) of decisions per bucket, by action."""
    width, height, pad_left, pad_bottom = 900, 220, 56, 28
    buckets = sorted(series)
    if not buckets:
        return (
            '<section class="card"><h2>Decisions over time</h2>'
            '<p class="empty">nothing in this window</p></section>'
        )
    top = max(sum(v.values()) for v in series.values()) or 1
    inner_w, inner_h = width - pad_left - 8, height - pad_bottom - 8
    step = inner_w / len(buckets)
    bar = min(48.0, max(1.0, step * 0.8))
    parts = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="decisions per {"hour" if hourly else "day"}, by action">'
    ]
    for frac in (0, 0.5, 1):
        y = 8 + inner_h * (1 - frac)
        parts.append(
            f'<line class="grid" x1="{pad_left}" x2="{width - 8}" y1="{y:.1f}" y2="{y:.1f}"/>'
        )
        parts.append(
            f'<text class="axis" x="{pad_left - 6}" y="{y + 4:.1f}" '
            f'text-anchor="end">{int(top * frac):,}</text>'
        )
    label_every = max(1, len(buckets) // 8)
    for i, b in enumerate(buckets):
        x = pad_left + i * step + (step - bar) / 2
        y = 8 + inner_h
        for action in ACTION_ORDER:
            n = series[b].get(action, 0)
            if not n:
                continue
            h = inner_h * n / top
            y -= h
            parts.append(
                f'<rect class="bar {action}" data-bucket="{esc(b)}" data-action="{action}" '
                f'data-n="{n}" x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{h:.1f}">'
                f"<title>{esc(b)} {action}: {n:,}</title></rect>"
            )
        if i % label_every == 0:
            label = b[5:13].replace("T", " ") + "h" if hourly else b[5:10]
            parts.append(
                f'<text class="axis" x="{x + bar / 2:.1f}" y="{height - 8}" '
                f'text-anchor="middle">{esc(label)}</text>'
            )
    parts.append("</svg>")
    legend = "".join(f'<span class="key {a}">{a}</span>' for a in ACTION_ORDER)
    return (
        f'<section class="card"><h2>Decisions over time</h2>{"".join(parts)}'
        f'<div class="legend">{legend}</div></section>'
    )


def filter_form(
    action: str,
    query: Mapping[str, str],
    options: Mapping[str, Sequence[str]],
    windows: Sequence[str],
    extra: str = "",
) -> str:
    """The time window and the filters, as a GET form (works without script)."""

    def select(name: str, values: Sequence[str], current: str, blank: str) -> str:
        opts = [f'<option value="">{esc(blank)}</option>']
        if current and current not in values:
            values = [current, *values]
        opts += [
            f'<option value="{esc(v)}"{" selected" if v == current else ""}>{esc(v)}</option>'
            for v in values
        ]
        return f'<label>{esc(name)}<select name="{esc(name)}">{"".join(opts)}</select></label>'

    window = query.get("window", "7d") if not (query.get("from") or query.get("to")) else ""
    parts = [select("window", list(windows), window, "custom")]
    parts.append(
        '<label>from<input type="text" name="from" placeholder="YYYY-MM-DD" '
        f'value="{esc(query.get("from", ""))}"></label>'
    )
    parts.append(
        '<label>to<input type="text" name="to" placeholder="YYYY-MM-DD" '
        f'value="{esc(query.get("to", ""))}"></label>'
    )
    for name, values in options.items():
        parts.append(select(name, values, query.get(name, ""), "all"))
    return (
        f'<form class="filters" method="get" action="{esc(action)}">{extra}{"".join(parts)}'
        '<button type="submit">Apply</button></form>'
    )


def definition(items: Sequence[tuple[str, object]]) -> str:
    rows = "".join(f"<dt>{esc(k)}</dt><dd>{fmt(v)}</dd>" for k, v in items)
    return f"<dl>{rows}</dl>"
