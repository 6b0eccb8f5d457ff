"""Wiring the firewall: the real scanner, policy, audit store and vault, under uvicorn.

``build_app`` assembles a :class:`~domestique.proxy.app.FirewallApp` from ``DOMESTIQUE_HOME``
and options; ``serve`` runs it under uvicorn. Several workers (``DOMESTIQUE_PROXY_WORKERS``)
share nothing but the audit store and the vault on disk: the redaction mapping travels with
each request.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
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
    sync: bool = True,
) -> FirewallApp:
    """The firewall app; ``log`` gets one line per request (``domestique proxy``: stderr).

    ``sync``: start the hub's background sync (enrolled endpoints only; never raises); the
    workers of a multi-worker proxy leave it to their parent.
    """
    engine = build_engine(home, policy_file)
    if sync:
        from domestique.hub.background import start_background_sync
        from domestique.keys import domestique_home

        start_background_sync(home or domestique_home())
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


@dataclass(frozen=True)
class ClientLimits:
    """What one client connection may take of the firewall (slowloris, slow bodies, huge heads).

    The two deadlines follow Apache's mod_reqtimeout: a phase (the request head, then the body)
    must end within its timeout, extended by one second per ``min_rate`` bytes received, the
    head's up to twice its timeout. A client that sends nothing at all is cut at the head's
    timeout; one that trickles a byte a second gains almost nothing; a real client on loopback
    sends its head and body within milliseconds. ``keep_alive`` is uvicorn's idle timeout
    after an answer. Measured without these (uvicorn 0.54 alone): a connection that never sent a
    byte, a head trickled one header a second and a body trickled one byte a second were all
    still open after 20 s, and a 70 KB header arriving in one read was forwarded upstream.
    """

    header_timeout: float = 20.0
    body_timeout: float = 20.0
    send_timeout: float = 60.0  # an answer the client has not taken any of for this long
    min_rate: int = 500  # bytes per second that extend a deadline by one second
    max_head: int = 64 * 1024  # request line and headers; past it: 431, nothing forwarded
    keep_alive: int = 5
    # Client connections held at once before the oldest one still waiting for a head (idle or
    # slow) is closed to make room; None: half the open-file limit less 128 (a connection with
    # a request in flight also holds an upstream socket), so ``accept`` never runs out.
    max_connections: int | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> ClientLimits:
        """Defaults, overridden by ``DOMESTIQUE_PROXY_HEADER_TIMEOUT`` / ``_BODY_TIMEOUT`` /
        ``_SEND_TIMEOUT`` (seconds).

        A value that is not a positive number is refused (``ValueError``), never ignored.
        """

        def seconds(name: str, default: float) -> float:
            raw = environ.get(name)
            if raw is None:
                return default
            try:
                value = float(raw)
            except ValueError:
                value = -1.0
            if not 0 < value < 86400:  # NaN fails this too
                raise ValueError(f"{name} must be a number of seconds above 0, got {raw!r}")
            return value

        return cls(
            header_timeout=seconds("DOMESTIQUE_PROXY_HEADER_TIMEOUT", cls.header_timeout),
            body_timeout=seconds("DOMESTIQUE_PROXY_BODY_TIMEOUT", cls.body_timeout),
            send_timeout=seconds("DOMESTIQUE_PROXY_SEND_TIMEOUT", cls.send_timeout),
        )


def _limits_or_exit(environ: Mapping[str, str] = os.environ) -> ClientLimits:
    try:
        return ClientLimits.from_env(environ)
    except ValueError as exc:
        sys.stderr.write(f"domestique proxy: {exc}\n")
        raise SystemExit(2) from None


def guarded_protocol(limits: ClientLimits) -> type[Any]:
    """uvicorn's h11 protocol with ``limits`` enforced on every connection.

    * Head: a head over ``max_head`` bytes (checked before h11 parses it, pipelined heads
      included) is answered 431 and the connection closed: the app never sees it, nothing is
      forwarded. h11's own incomplete-event limit is set to the same size, so the answer does
      not depend on how the head was split into reads.
    * Room: past ``max_connections`` a new connection closes the one that has waited longest for
      a head, so idle and slowloris clients cannot use up the descriptors a real client needs;
      a connection with a request in flight is never closed for room.
    * Deadlines: while a request head or body is being received, a timer checks the phase's
      deadline (above); past it the client gets 408 (if nothing was answered yet) and the
      connection is closed. A body cut that way reaches the app as a client that left, which
      it refuses and records (``proxy.truncated_body``). No deadline runs while the app is
      answering, or while uvicorn itself has paused reading (back-pressure is not the client's
      fault).
    * Send: when the client has stopped reading an answer (the transport's buffer stays full)
      for ``send_timeout``, the connection is dropped; the app sees a client that left and
      closes the upstream stream (nginx's ``send_timeout`` is the same idea).
    """
    from domestique.proxy.client_guard import protocol_for

    return protocol_for(limits, limits.max_connections or connection_cap())


def run_guarded(config: Any, sock: socket.socket, name: str = "domestique proxy") -> None:
    """Serve ``config`` on ``sock`` until stopped, running out of descriptors handled
    (:func:`domestique.proxy.client_guard.keep_room`).

    What start-up built (modules, the policy, the detector's rule tables: tens of thousands
    of objects that live as long as the process) is moved out of the collector's view first
    (``gc.freeze``), so a full collection during a request walks only what requests made:
    measured in a firewall worker under load, a full collection's pause went from 18-23 ms
    to 6-11 ms (docs/benchmarks.md, "Round 4 (issue 13, 2026-12-02)").
    """
    import gc

    from domestique.proxy.client_guard import GuardedServer

    server = GuardedServer(config, name)
    gc.collect()
    gc.freeze()
    server.run(sockets=[sock])


def connection_cap() -> int:
    """Client connections to hold at once: half of (the open-file soft limit less 128)."""
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        soft = 1 << 20
    return max(16, (soft - 128) // 2)


def raise_open_file_limit() -> int:
    """Raise this process's soft limit on open files to its hard limit; return the new soft one.

    Every connection costs a descriptor; the usual soft limit (1,024) would let a few hundred
    idle clients make ``accept`` fail for everyone else.
    """
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else 1 << 20
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):
            pass
    return soft


def _uvicorn_config(app: Any, limits: ClientLimits | None = None) -> Any:
    import uvicorn

    limits = limits or ClientLimits()
    return uvicorn.Config(
        app,
        http=guarded_protocol(limits),
        h11_max_incomplete_event_size=limits.max_head,
        timeout_keep_alive=limits.keep_alive,
        access_log=False,  # Gemini clients may put ?key= in the URL: never log it
        log_level="warning",
        lifespan="on",
        server_header=False,
        date_header=False,  # the upstream's Date passes through; no second one
        timeout_graceful_shutdown=5,
        # The firewall is no reverse proxy's backend and never reads the client address: no
        # X-Forwarded-* rewriting of the scope (uvicorn's default trusts them from 127.0.0.1),
        # and one middleware call less per request.
        proxy_headers=False,
        # Not "auto" (uvloop when some other package installed it): uvloop and httptools were
        # measured and did not win (docs/benchmarks.md, "Firewall proxy", round 3).
        loop="asyncio",
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


MAX_DEFAULT_WORKERS = 4


def default_workers(environ: Mapping[str, str] = os.environ) -> int:
    """Worker processes: ``DOMESTIQUE_PROXY_WORKERS``, else one per usable core, at most 4.

    Off Linux the default is one: elsewhere ``SO_REUSEPORT`` does not spread connections over
    the sockets. A value that is not a whole number from 1 to 64 is refused (``ValueError``).
    """
    raw = environ.get("DOMESTIQUE_PROXY_WORKERS")
    if raw is None:
        if not sys.platform.startswith("linux"):
            return 1
        return max(1, min(len(os.sched_getaffinity(0)), MAX_DEFAULT_WORKERS))
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if not 1 <= value <= 64:
        raise ValueError(f"DOMESTIQUE_PROXY_WORKERS must be a number from 1 to 64, got {raw!r}")
    return value


@dataclass(frozen=True)
class _WorkerSpec:
    """What a forked worker builds its app from (the parent parsed and checked it all)."""

    upstreams: Mapping[Provider, str]
    home: Path | None
    policy_file: Path | None
    log: Callable[[str], None] | None
    limits: ClientLimits


def _worker(sock: socket.socket, spec: _WorkerSpec) -> None:
    """One forked worker: its own app and event loop on its own listening socket.

    Nothing is shared between workers but the audit store and the vault on disk (SQLite and
    the chain serialise writers across processes; a request's placeholders live in that
    request, restored by the worker that made them).
    """
    app = build_app(
        spec.upstreams, home=spec.home, policy_file=spec.policy_file, log=spec.log, sync=False
    )
    run_guarded(_uvicorn_config(app, spec.limits), sock)


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
    to stderr (:meth:`FirewallApp` ``log``: no content, no secret). Each connection is held to
    :class:`ClientLimits` (``from_env``: a bad ``DOMESTIQUE_PROXY_*_TIMEOUT`` stops the start
    with exit 2 and one line).

    Several workers (:func:`default_workers`) are forked processes. The parent binds and
    listens on one ``SO_REUSEPORT`` socket per worker before ``on_bound``, so a client that
    connects as soon as "listening" is printed waits in the kernel's queue until its worker
    is ready, and the kernel spreads connections over the workers. If one worker dies the
    others are stopped too and the command fails (exit 1), so the proxy is either fully up or
    down, never half-judging. SIGTERM or Ctrl-C stop every worker gracefully (uvicorn's
    shutdown: answers in flight finish, for up to 5 s).
    """
    log = None if quiet else stderr_line
    limits = _limits_or_exit()
    raise_open_file_limit()
    if workers <= 1:
        sock = tcp_listener(host, port)
        app = build_app(upstreams, home=home, policy_file=policy_file, log=log)
        if on_bound is not None:
            on_bound()
        run_guarded(_uvicorn_config(app, limits), sock)
        return
    socks = [tcp_listener(host, port, reuse_port=True) for _ in range(workers)]
    for sock in socks:
        sock.listen(2048)
    if on_bound is not None:
        on_bound()
    spec = _WorkerSpec(dict(upstreams), home, policy_file, log, limits)
    _supervise(socks, spec, home)


def _supervise(socks: list[socket.socket], spec: _WorkerSpec, home: Path | None) -> None:
    """Fork one worker per socket, then wait: see :func:`serve`."""
    import multiprocessing
    import signal
    import time

    from domestique.hub.background import start_background_sync
    from domestique.keys import domestique_home

    # SIGTERM ends the parent through ``finally`` below, which stops every worker.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    # Fork, not spawn: a worker inherits its bound socket, and the parent has started no
    # thread yet (the background sync starts after the workers).
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_worker, args=(sock, spec), daemon=False) for sock in socks]
    for proc, sock in zip(procs, socks, strict=True):
        proc.start()
        sock.close()  # the worker's copy only: when the workers are gone, the port is free
    start_background_sync(home or domestique_home())  # one for the proxy, not one per worker
    try:
        while all(proc.is_alive() for proc in procs):
            time.sleep(0.5)
        dead = next(p for p in procs if not p.is_alive())
        sys.stderr.write(
            f"domestique proxy: a worker stopped (exit code {dead.exitcode}); stopping the others\n"
        )
        raise SystemExit(1)
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.terminate()  # SIGTERM: uvicorn's graceful shutdown
        for proc in procs:
            proc.join(10)
            if proc.is_alive():
                proc.kill()
                proc.join(5)
