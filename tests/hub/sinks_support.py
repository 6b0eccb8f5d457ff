"""Receivers for the SIEM sink tests: Debian's rsyslogd with a private config, an OTLP/HTTP
receiver that decodes each request with opentelemetry-proto, a Splunk HEC receiver, a test CA,
and a seeded hub store."""

from __future__ import annotations

import contextlib
import datetime as dt
import ipaddress
import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from domestique.audit import AuditStore
from domestique.hub.batch import encode_batch, parse_batch
from domestique.hub.store import EndpointInfo, HubStore

from .support import free_port, write_log

BOM = "\ufeff"


def wait_for(condition: Callable[[], bool], timeout: float = 60.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what or condition}")


# -- the hub's store, seeded ------------------------------------------------------------------


def enroll(store: HubStore, host: str) -> str:
    token = store.create_enroll_token(expires_s=60, uses=1)
    endpoint_id, _ = store.enroll(
        token, EndpointInfo(host, "dev", "Linux", "0.1.0", "hmac-sha256:" + "a" * 32)
    )
    return endpoint_id


def upload(store: HubStore, endpoint_id: str, home: Path, *, after: int = 0, skip: int = 0) -> int:
    """Upload the endpoint log's rows after ``after`` (``skip``: leave that seq out, a gap)."""
    with AuditStore.open(home) as log:
        rows = [
            {"seq": r.seq, "prev_hash": r.prev_hash, "hash": r.hash, "record": r.record}
            for r in log.rows(after_seq=after)
            if r.seq != skip
        ]
        head = log.head()
    for k in range(0, len(rows), 1000):  # the endpoint's real head goes with every batch
        part = rows[k : k + 1000]
        store.ingest(endpoint_id, parse_batch(encode_batch(endpoint_id, head, part), "gzip"))
    return len(rows)


def record_ids(store: HubStore) -> set[str]:
    with store.db.tx() as tx:
        return {str(r[0]) for r in tx.q("SELECT id FROM records")}


def alert_uids(store: HubStore) -> set[str]:
    with store.db.tx() as tx:
        return {"alert-" + str(r[0]) for r in tx.q("SELECT dedupe FROM alerts")}


class Fleet:
    """Endpoints with real audit logs, uploaded into a store through the real ingest path."""

    def __init__(self, store: HubStore, root: Path) -> None:
        self.store = store
        self.root = root
        self.endpoints: dict[str, tuple[str, Path, int]] = {}

    def add(self, host: str, count: int, *, skip: int = 0) -> str:
        endpoint_id = enroll(self.store, host)
        home = self.root / host
        write_log(home, count)
        upload(self.store, endpoint_id, home, skip=skip)
        self.endpoints[host] = (endpoint_id, home, count)
        return endpoint_id

    def more(self, host: str, count: int) -> None:
        endpoint_id, home, done = self.endpoints[host]
        write_log(home, count, start=done)
        upload(self.store, endpoint_id, home, after=done)
        self.endpoints[host] = (endpoint_id, home, done + count)

    def expected(self) -> set[str]:
        return record_ids(self.store) | alert_uids(self.store)


# -- rsyslog ------------------------------------------------------------------------------------

RSYSLOG_TEMPLATE = (
    "%msgid%\\t%hostname%\\t%app-name%\\t%pri%\\t%timereported:::date-rfc3339%\\t"
    "%$!rfc5424-sd%\\t%msg%\\n"
)


class Rsyslog:
    """``rsyslogd -n`` with a private config: one TCP (or TLS) input, one file output whose
    lines are ``MSGID HOSTNAME APP PRI TIME SD-as-JSON MSG`` (tab-separated; the structured
    data parsed by rsyslog's own mmpstrucdata)."""

    def __init__(self, folder: Path, *, tls: tuple[Path, Path, Path] | None = None) -> None:
        binary = shutil.which("rsyslogd") or "/usr/sbin/rsyslogd"
        if not Path(binary).exists():
            if os.environ.get("CI"):  # .ci/run installs it: missing there is a failure
                pytest.fail("rsyslogd is not installed (apt-get install rsyslog rsyslog-openssl)")
            pytest.skip("rsyslogd is not installed (apt-get install rsyslog rsyslog-openssl)")
        self.binary = binary
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "work").mkdir(exist_ok=True)
        self.port = free_port()
        self.out = folder / "out.log"
        self.proc: subprocess.Popen[bytes] | None = None
        driver = ""
        module = 'module(load="imtcp")'
        if tls is not None:
            ca, cert, key = tls
            driver = (
                f'global(DefaultNetstreamDriver="ossl" DefaultNetstreamDriverCAFile="{ca}" '
                f'DefaultNetstreamDriverCertFile="{cert}" DefaultNetstreamDriverKeyFile="{key}")\n'
            )
            module = (
                'module(load="imtcp" StreamDriver.Name="ossl" StreamDriver.Mode="1" '
                'StreamDriver.AuthMode="anon")'
            )
        (folder / "rsyslog.conf").write_text(
            f'global(workDirectory="{folder / "work"}" maxMessageSize="256k")\n'
            f"{driver}{module}\n"
            'module(load="mmpstrucdata")\n'
            f'template(name="out" type="string" string="{RSYSLOG_TEMPLATE}")\n'
            'ruleset(name="in") {\n'
            '  action(type="mmpstrucdata")\n'
            f'  action(type="omfile" file="{self.out}" template="out")\n'
            "}\n"
            f'input(type="imtcp" port="{self.port}" address="127.0.0.1" ruleset="in")\n'
        )

    def start(self) -> Rsyslog:
        log = (self.folder / "rsyslogd.log").open("ab")
        self.proc = subprocess.Popen(
            [
                self.binary,
                "-n",
                "-f",
                str(self.folder / "rsyslog.conf"),
                "-i",
                str(self.folder / "rsyslogd.pid"),
            ],
            stdout=log,
            stderr=log,
        )
        log.close()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError((self.folder / "rsyslogd.log").read_text())
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2),
            ):
                return self
            time.sleep(0.05)
        raise RuntimeError("rsyslogd did not listen")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None

    def lines(self) -> list[dict[str, Any]]:
        if not self.out.exists():
            return []
        out = []
        for line in self.out.read_text(encoding="utf-8").splitlines():
            msgid, host, app, pri, when, sd, msg = line.split("\t", 6)
            out.append(
                {
                    "msgid": msgid,
                    "hostname": host,
                    "app": app,
                    "pri": int(pri),
                    "time": when,
                    "sd": json.loads(sd),
                    "msg": msg,
                }
            )
        return out


# -- OTLP/HTTP and HEC receivers ---------------------------------------------------------------


class HttpReceiver:
    """A local HTTP server; ``status`` answers every request (200: decode and keep it)."""

    def __init__(self, decode: Callable[[bytes, dict[str, str]], list[Any]]) -> None:
        self.decode = decode
        self.status = 200
        self.response = b""
        self.requests: list[list[Any]] = []
        self.headers: list[dict[str, str]] = []
        self.refused = 0
        self.port = free_port()
        self._server: ThreadingHTTPServer | None = None
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1/logs"

    def start(self) -> HttpReceiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                size = int(self.headers.get("content-length", "0"))
                body = self.rfile.read(size)
                headers = {k.lower(): v for k, v in self.headers.items()}
                with receiver._lock:
                    status = receiver.status
                    if status == 200:
                        receiver.requests.append(receiver.decode(body, headers))
                        receiver.headers.append(headers)
                    else:
                        receiver.refused += 1
                self.send_response(status)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", str(len(receiver.response)))
                self.end_headers()
                self.wfile.write(receiver.response)

            def log_message(self, *args: object) -> None:
                return

        ThreadingHTTPServer.allow_reuse_address = True
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def items(self) -> list[Any]:
        with self._lock:
            return [item for request in self.requests for item in request]


def decode_otlp(body: bytes, headers: dict[str, str]) -> list[dict[str, Any]]:
    """Every log record of an ExportLogsServiceRequest, with its resource's attributes."""
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    assert headers["content-type"] == "application/x-protobuf"
    request = ExportLogsServiceRequest()
    request.ParseFromString(body)
    out = []
    for resource_logs in request.resource_logs:
        resource = {kv.key: _any(kv.value) for kv in resource_logs.resource.attributes}
        for scope_logs in resource_logs.scope_logs:
            for record in scope_logs.log_records:
                out.append(
                    {
                        "resource": resource,
                        "scope": scope_logs.scope.name,
                        "body_kind": record.body.WhichOneof("value"),
                        "body": json.loads(record.body.string_value),
                        "attributes": {kv.key: _any(kv.value) for kv in record.attributes},
                        "time_unix_nano": record.time_unix_nano,
                        "observed_time_unix_nano": record.observed_time_unix_nano,
                        "severity_number": record.severity_number,
                        "severity_text": record.severity_text,
                        "event_name": record.event_name,
                    }
                )
    return out


def _any(value: Any) -> Any:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else None


def decode_hec(body: bytes, headers: dict[str, str]) -> list[dict[str, Any]]:
    decoder = json.JSONDecoder()
    text, i, out = body.decode("utf-8"), 0, []
    while i < len(text):
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            break
        obj, i = decoder.raw_decode(text, i)
        out.append({"auth": headers.get("authorization"), **obj})
    return out


# -- a test CA ---------------------------------------------------------------------------------


def make_ca(folder: Path) -> tuple[Path, Path, Path]:
    """A CA and a server certificate it signed for 127.0.0.1: (ca.pem, server.pem, server.key)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "domestique test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    paths = (folder / "ca.pem", folder / "server.pem", folder / "server.key")
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths
