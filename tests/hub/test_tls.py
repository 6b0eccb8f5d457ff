"""Transport: TLS with a private CA, certificate errors never ignored, plain http only on
loopback unless asked for explicitly."""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from .support import HubProcess, cli


def _self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 that is its own CA, and its key."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "domestique test hub")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "hub.crt", folder / "hub.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.fixture
def tls_hub(tmp_path: Path) -> Iterator[tuple[HubProcess, Path]]:
    cert, key = _self_signed(tmp_path)
    extra = ("--certfile", str(cert), "--keyfile", str(key))
    process = HubProcess(tmp_path / "hub-home", None, extra=extra, scheme="https").start()
    try:
        yield process, cert
    finally:
        process.stop()


def test_enrol_and_sync_over_tls_with_a_private_ca(
    tls_hub: tuple[HubProcess, Path], tmp_path: Path
) -> None:
    hub, cert = tls_hub
    home = tmp_path / "laptop"
    token = hub.admin("enroll-token").stdout.splitlines()[-1]
    done = cli(home, "enroll", hub.url, "--token", token, "--ca", str(cert))
    assert done.returncode == 0, done.stderr
    cli(home, "check", "--", "ls")
    assert cli(home, "sync").returncode == 0
    status = json.loads(cli(home, "sync", "--status", "--json").stdout)
    assert (status["pending"], status["hub"]) == (0, hub.url)
    assert oct((home / "hub" / "credential").stat().st_mode & 0o777) == "0o600"


def test_a_certificate_that_does_not_verify_is_never_accepted(
    tls_hub: tuple[HubProcess, Path], tmp_path: Path
) -> None:
    """Without the CA the hub's certificate is unknown: enrolment fails, nothing is stored."""
    hub, _ = tls_hub
    home = tmp_path / "laptop"
    token = hub.admin("enroll-token").stdout.splitlines()[-1]
    done = cli(home, "enroll", hub.url, "--token", token)
    assert done.returncode == 2
    assert "certificate" in done.stderr
    assert not (home / "hub" / "credential").exists()


def test_plain_http_off_loopback_is_refused_on_both_sides(tmp_path: Path) -> None:
    """The hub will not serve plain http on a non-loopback address, and an endpoint will not
    enrol over plain http with a hub elsewhere, unless --insecure-http is given."""
    served = cli(tmp_path / "hub", "hub", "serve", "--host", "0.0.0.0", "--port", "1")
    assert served.returncode == 2
    assert "refusing plain http" in served.stderr
    enrolled = cli(tmp_path / "laptop", "enroll", "http://192.0.2.10:8789", "--token", "t")
    assert enrolled.returncode == 2
    assert "plain http" in enrolled.stderr
