"""Wiring the firewall: the real scanner, policy, audit store and vault, under uvicorn.

``build_app`` assembles a :class:`~domestique.proxy.app.FirewallApp` from ``DOMESTIQUE_HOME``
and options; ``serve`` runs it under uvicorn. Several workers (``DOMESTIQUE_PROXY_WORKERS``)
share nothing but the audit store and the vault on disk: the redaction mapping travels with
each request.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from domestique.proxy.app import DEFAULT_UPSTREAMS, Engine, FirewallApp, ProxyConfig
from domestique.proxy.routes import Provider
from domestique.records import Action, Actor, Component, DecisionRecord


class UpstreamError(ValueError):
    """A bad ``--upstream NAME=URL``."""


def parse_upstreams(items: list[str]) -> dict[Provider, str]:
    """``NAME=URL`` pairs over the defaults. Only http(s) URLs without query or fragment."""
    from urllib.parse import urlsplit

    out = dict(DEFAULT_UPSTREAMS)
    for item in items:
        name, sep, url = item.partition("=")
        try:
            provider = Provider(name.strip().lower())
        except ValueError:
            raise UpstreamError(
                f"unknown upstream name {name!r}: anthropic, openai or gemini"
            ) from None
        parts = urlsplit(url.strip())
        if not sep or parts.scheme not in ("http", "https") or not parts.hostname:
            raise UpstreamError(f"upstream {name}: expected an http(s) URL, got {url!r}")
        if parts.query or parts.fragment or parts.username or parts.password:
            raise UpstreamError(f"upstream {name}: no credentials, query or fragment in the URL")
        out[provider] = url.strip().rstrip("/")
    return out


def build_engine(home: Path | None = None, policy_file: Path | None = None) -> Engine:
    """The real judging parts. Never fails open: an invalid policy blocks every request."""
    from domestique.audit import record_decision
    from domestique.detect import default_scanner
    from domestique.keys import domestique_home, install_key
    from domestique.policy import DecisionContext, load_policy
    from domestique.proxy.vault import PlaceholderVault

    home = home or domestique_home()
    policy = load_policy(home=home, project_dir=Path.cwd(), policy_file=policy_file)
    scanner = default_scanner(home)
    key = install_key(home)

    def context_for(agent: str | None, upstream_host: str) -> Any:
        hosts = (upstream_host,) if upstream_host else ()
        return DecisionContext(Component.PROXY, actor=Actor.AGENT, agent=agent, hosts=hosts)

    def recorder(record: DecisionRecord) -> DecisionRecord:
        return record_decision(record, home=home, stop=Action.BLOCK)

    group = None
    # DOMESTIQUE_PROXY_AUDIT_BATCH=0 writes one transaction per request, inline (benchmarks).
    if os.environ.get("DOMESTIQUE_PROXY_AUDIT_BATCH", "1") != "0":
        from domestique.audit import mask_or_stop, store_for
        from domestique.proxy.audit_batch import GroupRecorder

        audit_home = home

        def append_many(records: Sequence[DecisionRecord]) -> object:
            return store_for(audit_home).append_many(records)

        def mask(record: DecisionRecord) -> tuple[DecisionRecord, bool]:
            return mask_or_stop(record, audit_home, stop=Action.BLOCK)

        group = GroupRecorder(append_many, mask, stop=Action.BLOCK)

    vault = PlaceholderVault(home / "proxy-vault", key)
    vault.sweep()
    return Engine(
        scanner=scanner,
        policy=policy,
        context_for=context_for,
        install_key=key,
        recorder=recorder,
        vault=vault,
        scanner_source=lambda: default_scanner(home),
        group=group,
    )


def build_app(
    upstreams: Mapping[Provider, str],
    *,
    home: Path | None = None,
    policy_file: Path | None = None,
    log: Callable[[str], None] | None = None,
) -> FirewallApp:
    """The firewall app; ``log`` gets one line per request (``domestique proxy``: stderr)."""
    engine = build_engine(home, policy_file)
    from domestique.hub.background import start_background_sync
    from domestique.keys import domestique_home

    start_background_sync(home or domestique_home())  # enrolled endpoints only; never raises
    # DOMESTIQUE_PROXY_SCAN_CACHE=0 scans every field of every request afresh (benchmarks).
    cache = os.environ.get("DOMESTIQUE_PROXY_SCAN_CACHE", "1") != "0"
    config = ProxyConfig(upstreams=dict(upstreams), scan_cache=cache)
    return FirewallApp(config, engine, log=log)


def tcp_listener(host: str, port: int, *, reuse_port: bool = False) -> socket.socket:
    """A bound TCP socket made with ``IPPROTO_TCP`` explicitly.

    asyncio turns Nagle off (TCP_NODELAY) only on sockets whose ``proto`` is IPPROTO_TCP; a
    socket made with ``socket.socket()`` has proto 0, so every connection it accepts would keep
    Nagle on and, with delayed ACKs, add ~40 ms to each answer on a kept-alive connection.
    """
    family, _, _, _, addr = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
    )[0]
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        # Each worker binds its own socket; the kernel spreads connections over them.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind(addr)
    return sock


def _uvicorn_config(app: Any) -> Any:
    import uvicorn

    return uvicorn.Config(
        app,
        access_log=False,  # Gemini clients may put ?key= in the URL: never log it
        log_level="warning",
        lifespan="on",
        server_header=False,
        date_header=False,  # the upstream's Date passes through; no second one
        timeout_graceful_shutdown=5,
    )


def is_loopback(host: str) -> bool:
    """True when every address ``host`` resolves to is a loopback address (127/8, ::1).

    A name that does not resolve is not loopback: the caller refuses it.
    """
    import ipaddress

    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return False
    addresses = {info[4][0] for info in infos}
    return bool(addresses) and all(
        ipaddress.ip_address(str(a).split("%", 1)[0]).is_loopback for a in addresses
    )


def stderr_line(line: str) -> None:
    """Write one request line to stderr at once (the line is built without content)."""
    sys.stderr.write(line)
    sys.stderr.flush()


def _worker(host: str, port: int, options: str) -> None:
    """One worker process: its own app (nothing shared) on its own SO_REUSEPORT socket."""
    import uvicorn

    raw = json.loads(options)
    upstreams = {Provider(k): v for k, v in raw["upstreams"].items()}
    policy = Path(raw["policy_file"]) if raw.get("policy_file") else None
    home = Path(raw["home"]) if raw.get("home") else None
    log = None if raw.get("quiet") else stderr_line
    app = build_app(upstreams, home=home, policy_file=policy, log=log)
    sock = tcp_listener(host, port, reuse_port=True)
    uvicorn.Server(_uvicorn_config(app)).run(sockets=[sock])


def serve(
    host: str,
    port: int,
    upstreams: Mapping[Provider, str],
    *,
    policy_file: Path | None = None,
    home: Path | None = None,
    workers: int = 1,
    quiet: bool = False,
    on_bound: Callable[[], None] | None = None,
) -> None:
    """Run the firewall until interrupted. The access log is off: URLs can carry keys.

    The port is bound first: a port in use raises ``OSError`` before ``on_bound`` runs (the
    caller says "listening" only from there). Unless ``quiet``, each request writes one line
    to stderr (:meth:`FirewallApp` ``log``: no content, no secret). Several workers are
    separate processes, each with its own listening socket (``SO_REUSEPORT``, Linux); if one
    dies the others are stopped too, so the proxy is either fully up or down, never
    half-judging.
    """
    import uvicorn

    log = None if quiet else stderr_line
    if workers <= 1:
        sock = tcp_listener(host, port)
        app = build_app(upstreams, home=home, policy_file=policy_file, log=log)
        if on_bound is not None:
            on_bound()
        uvicorn.Server(_uvicorn_config(app)).run(sockets=[sock])
        return
    import multiprocessing
    import signal
    import time

    # SIGTERM ends the parent through ``finally`` below, which stops every worker.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))

    options = json.dumps(
        {
            "upstreams": {p.value: u for p, u in upstreams.items()},
            "policy_file": str(policy_file) if policy_file else None,
            "home": str(home) if home else None,
            "quiet": quiet,
        }
    )
    tcp_listener(host, port, reuse_port=True).close()  # fail early if the port is taken
    if on_bound is not None:
        on_bound()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_worker, args=(host, port, options)) for _ in range(workers)]
    for proc in procs:
        proc.start()
    try:
        while all(proc.is_alive() for proc in procs):
            time.sleep(0.5)
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.join(10)
