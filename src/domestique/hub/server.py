"""Running the hub: migrations at start, the signing key, and uvicorn with or without TLS.

Plain http is served only on a loopback address unless ``insecure_http`` is given: the
endpoints' credentials and records cross this connection.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from domestique.hub.store import HubStore

if TYPE_CHECKING:
    from domestique.hub.sinks import SinkSpec

SIGNING_KEY_NAME = "signing.key"


class ServeError(ValueError):
    """The hub cannot start with these options."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def local_signing_key(home: Path) -> Path:
    return home / "hub" / SIGNING_KEY_NAME


def ensure_signing_key(store: HubStore, home: Path) -> list[str]:
    """The organisation's trusted keys; when none is registered yet, a new key is made under
    the hub's home (``hub/signing.key``, 0600) and registered (a one-command trial)."""
    from domestique.hub.bundle import generate_key, public_key_of

    keys = store.signing_keys()
    if keys:
        return keys
    path = local_signing_key(home)
    public = public_key_of(path) if path.exists() else generate_key(path)
    return store.trust_key(public)


def public_origin(url: str) -> str:
    """``scheme://host[:port]`` of ``--public-url``; :class:`ServeError` for anything else."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ServeError(f"--public-url {url!r}: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ServeError(f"--public-url {url!r}: give http(s)://HOST[:PORT]")
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username:
        raise ServeError(f"--public-url {url!r}: only scheme, host and port (the hub serves /)")
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}" + (f":{port}" if port is not None else "")


def serve(
    *,
    host: str,
    port: int,
    database: str | None,
    home: Path,
    certfile: Path | None = None,
    keyfile: Path | None = None,
    insecure_http: bool = False,
    sinks: Sequence[SinkSpec] = (),
    public_url: str | None = None,
) -> None:
    """Migrate, then serve until interrupted; forward to ``sinks`` (validated by the caller
    with :func:`domestique.hub.sinks.collect`) while serving."""
    import uvicorn

    from domestique.hub.app import HubApp
    from domestique.proxy.server import (
        ClientLimits,
        guarded_protocol,
        raise_open_file_limit,
        run_guarded,
        tcp_listener,
    )

    if (certfile is None) != (keyfile is None):
        raise ServeError("--certfile and --keyfile go together")
    if certfile is None and not is_loopback(host) and not insecure_http:
        raise ServeError(
            f"refusing plain http on {host}: give --certfile/--keyfile, put a TLS reverse proxy "
            "in front and listen on 127.0.0.1, or pass --insecure-http explicitly"
        )
    origin = public_origin(public_url) if public_url is not None else None
    store = HubStore.open(database, home)
    store.org_id()
    ensure_signing_key(store, home)
    # The firewall's limits on every connection: head and body deadlines, 431 past 64 KiB, a
    # connection cap (the hub listens for a whole fleet, often beyond loopback).
    limits = ClientLimits()
    raise_open_file_limit()
    config = uvicorn.Config(
        HubApp(store, public_origin=origin),
        http=guarded_protocol(limits),
        h11_max_incomplete_event_size=limits.max_head,
        timeout_keep_alive=limits.keep_alive,
        access_log=False,
        log_level="warning",
        lifespan="on",
        server_header=False,
        ssl_certfile=str(certfile) if certfile else None,
        ssl_keyfile=str(keyfile) if keyfile else None,
        timeout_graceful_shutdown=5,
        loop="asyncio",  # not "auto": the loop it was measured and tested on
    )
    sock = tcp_listener(host, port)
    forwarders = []
    try:
        if sinks:
            from domestique.hub.sinks import start_forwarders

            forwarders = start_forwarders(store.db, sinks)
        run_guarded(config, sock, "domestique hub")
    finally:
        for forwarder in forwarders:
            forwarder.stop()
        store.close()
