"""Which SIEM sinks a hub forwards to: ``hub serve --export-*`` flags and the hub config file.

Flags::

    --export-otlp http(s)://HOST[:PORT][/PATH]     OTLP/HTTP logs (default path /v1/logs)
    --export-syslog tcp://HOST:PORT | tls://HOST:PORT   RFC 5424 over TCP/TLS (repeatable)
    --config FILE                                   the hub config file (TOML, below)

The config file (every key but ``url`` optional)::

    [[sinks]]
    type = "syslog"                     # syslog (tcp:// tls://), otlp or hec (http(s)://)
    url = "tls://siem.corp.example:6514"
    name = "soc"                        # the cursor's name (default: type + URL)
    ca = "/etc/domestique/siem-ca.pem"  # trust this CA instead of the system's (TLS, https)
    cert = "/etc/domestique/hub-client.pem"   # client certificate and key (mutual TLS)
    key = "/etc/domestique/hub-client.key"
    facility = 13                       # syslog facility 0..23 (13: log audit)
    headers = { "X-Tenant" = "corp" }   # OTLP/HEC request headers
    token_env = "SPLUNK_HEC_TOKEN"      # HEC: the environment variable holding the token
    batch = 1000                        # events per send, 1..10000

Everything is checked before the hub listens: an unknown key, a wrong type, a URL without a
port, an unreadable CA file or an unset token variable is a :class:`SinkConfigError` naming
``file:line:col`` (or the flag), and ``hub serve`` exits 2 without serving. A hub never runs
quietly without the forwarding it was asked for.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

KINDS = ("otlp", "syslog", "hec")
DEFAULT_BATCH = 1000
MAX_BATCH = 10_000
DEFAULT_FACILITY = 13  # "log audit" (RFC 5424 table 1)
MAX_CONFIG_BYTES = 1024 * 1024
_KEYS = ("type", "url", "name", "ca", "cert", "key", "facility", "headers", "token_env", "batch")


class SinkConfigError(ValueError):
    """An invalid sink configuration; the message starts with where (``file:line:col``)."""

    code = "hub.sink.config"


@dataclass(frozen=True, slots=True)
class SinkSpec:
    """One sink, validated. ``name`` keys its cursor in the central store."""

    kind: str
    url: str
    name: str
    host: str
    port: int
    tls: bool
    ca: Path | None = None
    cert: Path | None = None
    key: Path | None = None
    facility: int = DEFAULT_FACILITY
    headers: tuple[tuple[str, str], ...] = ()
    token_env: str | None = None
    batch: int = DEFAULT_BATCH

    @property
    def shown_url(self) -> str:
        """The URL for messages and the default name: without its query, which may hold a
        collector's API key."""
        return self.url.partition("?")[0]

    def describe(self) -> str:
        """Name and URL without credentials (for logs)."""
        default = f"{self.kind}:{self.shown_url}"
        return self.name if self.name == default else f"{self.name} ({self.shown_url})"


def _parse_url(kind: str, url: str, where: str) -> tuple[str, str, int, bool]:
    """(normalised URL, host, port, tls) or SinkConfigError."""
    if not isinstance(url, str) or not url or not url.isprintable() or " " in url:
        raise SinkConfigError(f"{where}: the URL must be non-empty printable text")
    parts = urlsplit(url)
    shown = parts._replace(query="…" if parts.query else "").geturl()
    if "@" in parts.netloc:  # never repeat what may be a password (or a key in the query)
        shown = parts._replace(
            netloc="…@" + parts.netloc.rpartition("@")[2], query="…" if parts.query else ""
        ).geturl()
    try:
        port = parts.port
    except ValueError:
        raise SinkConfigError(f"{where}: {shown!r}: the port must be 1..65535") from None
    host = parts.hostname or ""
    if parts.username or parts.password:
        raise SinkConfigError(
            f"{where}: {shown!r}: no credentials in the URL (headers or token_env hold them)"
        )
    if kind == "syslog":
        if parts.scheme not in ("tcp", "tls"):
            raise SinkConfigError(
                f"{where}: {shown!r}: a syslog sink is tcp://HOST:PORT or tls://HOST:PORT"
            )
        if not host or port is None:
            raise SinkConfigError(f"{where}: {shown!r}: a syslog sink needs a host and a port")
        if parts.path not in ("", "/") or parts.query or parts.fragment:
            raise SinkConfigError(f"{where}: {shown!r}: a syslog URL has no path or query")
        return f"{parts.scheme}://{_host_port(host, port)}", host, port, parts.scheme == "tls"
    if parts.scheme not in ("http", "https") or not host:
        raise SinkConfigError(f"{where}: {shown!r}: an {kind} sink is http(s)://HOST[:PORT]/PATH")
    if parts.fragment:
        raise SinkConfigError(f"{where}: {shown!r}: no #fragment in a sink URL")
    tls = parts.scheme == "https"
    port = port or (443 if tls else 80)
    path = parts.path or ("/v1/logs" if kind == "otlp" else "/services/collector/event")
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme}://{_host_port(host, port)}{path}{query}", host, port, tls


def _host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _readable(path: object, name: str, where: str) -> Path:
    if not isinstance(path, str) or not path:
        raise SinkConfigError(f"{where}: {name} must be a file path")
    p = Path(path)
    try:
        with p.open("rb") as fh:
            fh.read(1)
    except OSError as exc:
        raise SinkConfigError(f"{where}: {name} {path!r}: {exc.strerror or 'unreadable'}") from None
    return p


def make_spec(kind: str, url: str, where: str | Callable[[str], str], **options: Any) -> SinkSpec:
    """Validate one sink. ``where``: the flag, or a function giving ``file:line:col`` of a key
    (``"url"``, an option's name) for the message."""

    def at(key: str) -> str:
        return where if isinstance(where, str) else where(key)

    if kind not in KINDS:
        raise SinkConfigError(f"{at('type')}: type must be one of {', '.join(KINDS)}, not {kind!r}")
    norm, host, port, tls = _parse_url(kind, url, at("url"))
    name = options.get("name") or f"{kind}:{norm.partition('?')[0]}"
    if not isinstance(name, str) or not name.isprintable() or len(name) > 200:
        raise SinkConfigError(f"{at('name')}: name must be printable text up to 200 characters")
    files: dict[str, Path | None] = {}
    for opt in ("ca", "cert", "key"):
        value = options.get(opt)
        files[opt] = _readable(value, opt, at(opt)) if value is not None else None
        if value is not None and not tls:
            raise SinkConfigError(f"{at(opt)}: {opt} needs a TLS URL (tls:// or https://)")
    if (files["cert"] is None) != (files["key"] is None):
        raise SinkConfigError(f"{at('cert' if files['cert'] else 'key')}: cert and key go together")
    facility = options.get("facility", DEFAULT_FACILITY)
    if isinstance(facility, bool) or not isinstance(facility, int) or not 0 <= facility <= 23:
        raise SinkConfigError(f"{at('facility')}: facility must be an integer 0..23")
    batch = options.get("batch", DEFAULT_BATCH)
    if isinstance(batch, bool) or not isinstance(batch, int) or not 1 <= batch <= MAX_BATCH:
        raise SinkConfigError(f"{at('batch')}: batch must be an integer 1..{MAX_BATCH}")
    raw_headers = options.get("headers") or {}
    if not isinstance(raw_headers, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and k.isprintable() and v.isprintable()
        for k, v in raw_headers.items()
    ):
        raise SinkConfigError(f"{at('headers')}: headers must be a table of text values")
    if raw_headers and kind == "syslog":
        raise SinkConfigError(f"{at('headers')}: headers are for otlp and hec sinks")
    token_env = options.get("token_env")
    if kind == "hec":
        token_env = token_env or "DOMESTIQUE_HEC_TOKEN"
        if not isinstance(token_env, str) or not os.environ.get(token_env):
            raise SinkConfigError(
                f"{at('token_env')}: the HEC token variable {token_env!s} is not set in the "
                "environment"
            )
    elif token_env is not None:
        raise SinkConfigError(f"{at('token_env')}: token_env is for hec sinks only")
    return SinkSpec(
        kind=kind,
        url=norm,
        name=name,
        host=host,
        port=port,
        tls=tls,
        ca=files["ca"],
        cert=files["cert"],
        key=files["key"],
        facility=facility,
        headers=tuple(sorted(raw_headers.items())),
        token_env=token_env,
        batch=batch,
    )


def load_config(path: Path) -> list[SinkSpec]:
    """The sinks of a hub config file; :class:`SinkConfigError` with ``file:line:col``."""
    from domestique.policy._load import _toml_error_position
    from domestique.policy._locate import locate

    try:
        st = path.stat()
        if st.st_size > MAX_CONFIG_BYTES:
            raise SinkConfigError(f"{path}:1:1: larger than {MAX_CONFIG_BYTES} bytes")
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SinkConfigError(f"{path}: {exc.strerror or 'unreadable'}") from None
    except UnicodeDecodeError:
        raise SinkConfigError(f"{path}:1:1: not UTF-8 text") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line, col, message = _toml_error_position(text, str(exc))
        raise SinkConfigError(f"{path}:{line}:{col}: {message}") from None
    positions = locate(text)

    def at(*p: str | int) -> str:
        line, col = positions.of_key(tuple(p))
        return f"{path}:{line}:{col}"

    for key in data:
        if key != "sinks":
            raise SinkConfigError(f"{at(key)}: unknown key {key!r} (known: sinks)")
    sinks = data.get("sinks", [])
    if not isinstance(sinks, list) or not all(isinstance(s, dict) for s in sinks):
        raise SinkConfigError(f"{at('sinks')}: sinks must be an array of tables ([[sinks]])")
    out: list[SinkSpec] = []
    for i, table in enumerate(sinks):
        for key in table:
            if key not in _KEYS:
                raise SinkConfigError(
                    f"{at('sinks', i, key)}: unknown key {key!r} in [[sinks]] "
                    f"(known: {', '.join(_KEYS)})"
                )
        url = table.get("url")
        if not isinstance(url, str):
            raise SinkConfigError(f'{at("sinks", i)}: [[sinks]] needs url = "…"')
        kind = table.get("type", _kind_of(url))
        if not isinstance(kind, str):
            raise SinkConfigError(f"{at('sinks', i, 'type')}: type must be text")
        options = {k: v for k, v in table.items() if k not in ("type", "url")}

        def key_at(key: str, i: int = i, table: dict[str, Any] = table) -> str:
            return at("sinks", i, key) if key in table else at("sinks", i)

        out.append(make_spec(kind, url, key_at, **options))
    return out


def _kind_of(url: str) -> str:
    scheme = url.partition("://")[0].lower()
    return "syslog" if scheme in ("tcp", "tls", "udp") else "otlp"


def collect(*, otlp: list[str], syslog: list[str], config: Path | None) -> list[SinkSpec]:
    """Every sink from the flags and the config file; names must be unique."""
    specs = [make_spec("otlp", u, "--export-otlp") for u in otlp]
    specs += [make_spec("syslog", u, "--export-syslog") for u in syslog]
    if config is not None:
        specs += load_config(config)
    seen: set[str] = set()
    for spec in specs:
        if spec.name in seen:
            raise SinkConfigError(f"sink {spec.name!r} is configured twice")
        seen.add(spec.name)
    return specs
