"""What every sink implements, and its one error type."""

from __future__ import annotations

import ssl
from collections.abc import Sequence
from typing import Any, Protocol

from domestique.hub.sinks.config import SinkSpec
from domestique.hub.sinks.events import Event


class SinkError(RuntimeError):
    """A batch was not delivered. ``code``: a registered ``hub.sink.*`` reason code. The message
    names the sink and the failure, never a header, token or record content."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Sink(Protocol):
    spec: SinkSpec

    def send(self, events: Sequence[Event]) -> None:
        """Deliver every event or raise :class:`SinkError` (then none counts as delivered)."""

    def close(self) -> None:
        """Drop the connection; the next :meth:`send` opens a new one."""


def tls_context(spec: SinkSpec) -> ssl.SSLContext:
    """Verify the server (the spec's CA, else the system's), with the client cert if given."""
    context = ssl.create_default_context(cafile=str(spec.ca) if spec.ca else None)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if spec.cert is not None and spec.key is not None:
        context.load_cert_chain(str(spec.cert), str(spec.key))
    return context


def os_error_code(exc: BaseException) -> str:
    return "hub.sink.tls" if isinstance(exc, ssl.SSLError) else "hub.sink.unreachable"


def describe_os_error(exc: BaseException) -> str:
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"TLS certificate not trusted: {exc.verify_message or exc.reason}"
    if isinstance(exc, ssl.SSLError):
        return f"TLS error: {exc.reason or type(exc).__name__}"
    if isinstance(exc, TimeoutError):
        return "timed out"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return type(exc).__name__


def root_os_error(exc: BaseException) -> BaseException | None:
    """The first OSError (ssl.SSLError included) in an exception's cause chain."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, OSError):
            return cur
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return None


class HttpPoster:
    """One kept-alive HTTPS/HTTP connection for a sink's POSTs (httpx), reopened after an
    error. Headers (which may hold credentials) are never part of an error message."""

    def __init__(self, spec: SinkSpec, headers: dict[str, str]) -> None:
        from domestique import __version__

        self.spec = spec
        self.headers = {
            **dict(spec.headers),
            **headers,
            "user-agent": f"domestique-hub/{__version__}",
        }
        self._client: Any = None

    def post(self, body: bytes, timeout: float) -> tuple[int, bytes]:
        import httpx

        if self._client is None:
            verify: Any = True
            if self.spec.ca is not None or self.spec.cert is not None:
                verify = tls_context(self.spec)
            self._client = httpx.Client(timeout=timeout, verify=verify, headers=self.headers)
        try:
            response = self._client.post(self.spec.url, content=body)
        except httpx.HTTPError as exc:
            self.close()
            cause = root_os_error(exc)
            raise SinkError(
                os_error_code(cause) if cause is not None else "hub.sink.unreachable",
                f"POST {self.spec.shown_url}: "
                + (describe_os_error(cause) if cause is not None else type(exc).__name__),
            ) from None
        return response.status_code, response.content

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
