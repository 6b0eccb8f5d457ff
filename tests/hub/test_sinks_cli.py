"""``hub serve --export-*`` and the hub config file: a real hub process forwarding what enrolled
endpoints sync, and every configuration mistake refused with where it is, before serving."""

from __future__ import annotations

import socket
from collections import Counter
from pathlib import Path

import pytest

from domestique.hub.sinks import SinkConfigError, collect
from domestique.hub.store import HubStore

from .sinks_support import HttpReceiver, Rsyslog, decode_otlp, wait_for
from .support import HubProcess, cli, free_port, write_log


def _enroll_and_sync(hub: HubProcess, home: Path, count: int) -> None:
    token = hub.admin("enroll-token", "--uses", "1")
    assert token.returncode == 0, token.stderr
    done = cli(home, "enroll", hub.url, "--token", token.stdout.splitlines()[-1])
    assert done.returncode == 0, done.stderr
    write_log(home, count)
    synced = cli(home, "sync", "--json")
    assert synced.returncode == 0, synced.stderr


def _held_ids(hub: HubProcess) -> set[str]:
    store = HubStore.open(hub.database, hub.home)
    try:
        with store.db.tx() as tx:
            return {str(r[0]) for r in tx.q("SELECT id FROM records")}
    finally:
        store.close()


def test_hub_serve_forwards_synced_records_to_otlp_and_syslog(
    tmp_path: Path, database_url: str | None
) -> None:
    """``hub serve --export-otlp URL --export-syslog tcp://…``: records two endpoints sync
    through the real CLI reach both sinks, each once."""
    receiver = HttpReceiver(decode_otlp).start()
    rsyslog = Rsyslog(tmp_path / "rsyslog").start()
    hub = HubProcess(
        tmp_path / "hub-home",
        database_url,
        extra=(
            "--export-otlp",
            receiver.url,
            "--export-syslog",
            f"tcp://127.0.0.1:{rsyslog.port}",
        ),
    ).start()
    try:
        _enroll_and_sync(hub, tmp_path / "ep1", 40)
        _enroll_and_sync(hub, tmp_path / "ep2", 25)
        held = _held_ids(hub)
        assert len(held) == 65
        wait_for(lambda: len(receiver.items()) >= 65, what="OTLP delivery")
        wait_for(lambda: len(rsyslog.lines()) >= 65, what="syslog delivery")
    finally:
        hub.stop()
        receiver.stop()
        lines = rsyslog.lines()
        rsyslog.stop()
    otlp = Counter(i["attributes"]["domestique.record_id"] for i in receiver.items())
    syslog = Counter(line["sd"]["domestique@32473"]["id"] for line in lines)
    assert otlp == syslog == Counter(held)


def _serve(tmp_path: Path, *args: str) -> tuple[int, str, bool]:
    """``hub serve ARGS`` that must exit by itself; (exit code, stderr, did it listen)."""
    port = free_port()
    done = cli(tmp_path / "hub-home", "hub", "serve", "--port", str(port), *args, timeout=60)
    with socket.socket() as s:
        listening = s.connect_ex(("127.0.0.1", port)) == 0
    return done.returncode, done.stderr, listening


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ('[[sinks]]\nurl = "tcp://127.0.0.1:514"\nfacilty = 4\n', ":3:1:", "unknown key 'facilty'"),
        ('[[sinks]]\nurl = "udp://127.0.0.1:514"\n', ":2:1:", "tcp://HOST:PORT or tls://"),
        ('[[sinks]]\nurl = "tcp://siem.example"\n', ":2:1:", "needs a host and a port"),
        ('[[sinks]]\nurl = "tls://127.0.0.1:6514"\nca = "/nonexistent/ca.pem"\n', ":3:1:", "ca"),
        ('[[sinks]]\nurl = "tcp://127.0.0.1:514"\nca = "/etc/passwd"\n', ":3:1:", "TLS URL"),
        ('[[sinks]]\ntype = "hec"\nurl = "https://splunk:8088"\n', ":1:1:", "HEC token"),
        ('[[sinks]]\nurl = "tcp://127.0.0.1:514"\nbatch = 0\n', ":3:1:", "batch"),
        ('[[sinks]]\ntype = "kafka"\nurl = "tcp://a:1"\n', ":2:1:", "type must be one of"),
        ('[[sinks]]\nurl = "tcp://a:1"\n[server]\nport = 1\n', ":3:", "unknown key 'server'"),
        ('[[sinks]]\nurl = "tcp://a:1\n', ":2:", "Illegal character"),
    ],
)
def test_a_config_mistake_names_file_line_and_the_hub_refuses_to_start(
    tmp_path: Path, text: str, where: str, message: str
) -> None:
    """Each mistake is a SinkConfigError starting ``FILE:LINE:COL``, and ``hub serve`` exits 2
    with it (hub.sink.config) without listening: never a hub that silently does not forward."""
    config = tmp_path / "hub.toml"
    config.write_text(text)
    with pytest.raises(SinkConfigError) as refused:
        collect(otlp=[], syslog=[], config=config)
    assert str(refused.value).startswith(f"{config}{where}"), str(refused.value)
    assert message in str(refused.value)
    code, stderr, listening = _serve(tmp_path, "--config", str(config))
    assert code == 2
    assert f"hub.sink.config: {config}{where}" in stderr
    assert message in stderr
    assert "Traceback" not in stderr
    assert not listening


@pytest.mark.parametrize(
    ("flag", "url", "message"),
    [
        ("--export-syslog", "udp://127.0.0.1:514", "tcp://HOST:PORT or tls://HOST:PORT"),
        ("--export-syslog", "tcp://127.0.0.1:99999", "port must be 1..65535"),
        ("--export-otlp", "ftp://collector/v1/logs", "http(s)://"),
        ("--export-otlp", "https://user:pw@collector/v1/logs", "no credentials in the URL"),
        ("--export-otlp", "ftp://collector/v1/logs?api_key=pw42", "http(s)://"),
    ],
)
def test_a_bad_export_flag_is_refused(tmp_path: Path, flag: str, url: str, message: str) -> None:
    code, stderr, listening = _serve(tmp_path, flag, url)
    assert code == 2
    assert f"hub.sink.config: {flag}:" in stderr
    assert message in stderr
    assert "pw" not in stderr
    assert not listening


def test_config_file_and_flags_together_and_names_must_be_unique(tmp_path: Path) -> None:
    config = tmp_path / "hub.toml"
    config.write_text(
        '[[sinks]]\nurl = "https://collector.example"\nheaders = { "X-Tenant" = "corp" }\n'
        '[[sinks]]\nurl = "tls://siem.example:6514"\nname = "soc"\nfacility = 10\n'
    )
    specs = collect(otlp=["http://127.0.0.1:4318"], syslog=["tcp://127.0.0.1:514"], config=config)
    assert [(s.kind, s.url, s.name) for s in specs] == [
        ("otlp", "http://127.0.0.1:4318/v1/logs", "otlp:http://127.0.0.1:4318/v1/logs"),
        ("syslog", "tcp://127.0.0.1:514", "syslog:tcp://127.0.0.1:514"),
        (
            "otlp",
            "https://collector.example:443/v1/logs",
            "otlp:https://collector.example:443/v1/logs",
        ),
        ("syslog", "tls://siem.example:6514", "soc"),
    ]
    assert specs[2].headers == (("X-Tenant", "corp"),)
    assert specs[3].facility == 10
    with pytest.raises(SinkConfigError, match="configured twice"):
        collect(otlp=[], syslog=["tls://siem.example:6514"] * 2, config=None)


def test_two_hubs_on_one_database_forward_each_record_once(
    tmp_path: Path, database_url: str | None
) -> None:
    """Two ``hub serve`` processes on one database (as behind a load balancer), both told to
    forward to the same collector: endpoints sync to either, every record arrives once (the
    lease lets one hub forward). The lease holder stops; the other carries on from the cursor."""
    database = database_url or f"sqlite:///{tmp_path / 'shared' / 'hub.sqlite3'}"
    receiver = HttpReceiver(decode_otlp).start()
    extra = ("--export-otlp", receiver.url)
    first = HubProcess(tmp_path / "hub-1", database, extra=extra).start()
    second = HubProcess(tmp_path / "hub-2", database, extra=extra).start()
    try:
        _enroll_and_sync(first, tmp_path / "ep1", 30)
        _enroll_and_sync(second, tmp_path / "ep2", 20)
        wait_for(lambda: len(receiver.items()) >= 50, what="delivery from two hubs")
        owners = {i["resource"]["service.instance.id"] for i in receiver.items()}
        assert len(owners) == 1
        assert first.proc is not None
        forwarding = owners.pop()
        holder, other = (
            (first, second) if forwarding.endswith(f":{first.proc.pid}") else (second, first)
        )
        holder.stop()  # a clean stop gives the lease up
        _enroll_and_sync(other, tmp_path / "ep3", 10)
        held = _held_ids(other)
        assert len(held) == 60
        wait_for(lambda: len(receiver.items()) >= len(held), what="delivery after take-over")
    finally:
        first.stop()
        second.stop()
        receiver.stop()
    ids = Counter(i["attributes"]["domestique.record_id"] for i in receiver.items())
    assert ids == Counter(held)
    instances = {i["resource"]["service.instance.id"] for i in receiver.items()}
    assert len(instances) == 2
