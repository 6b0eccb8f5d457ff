"""SIEM forwarding into real receivers: Debian's rsyslogd (TCP and TLS with a test CA), an OTLP/HTTP
receiver decoding each request with opentelemetry-proto, and a Splunk HEC receiver. Each test
runs on the embedded SQLite default and on PostgreSQL (``database_url``)."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from domestique.hub.sinks import Forwarder, collect, sink_status
from domestique.hub.sinks.config import SinkSpec, make_spec
from domestique.hub.store import HubStore

from .sinks_support import (
    BOM,
    Fleet,
    HttpReceiver,
    Rsyslog,
    decode_hec,
    decode_otlp,
    make_ca,
    wait_for,
)


@pytest.fixture
def store(tmp_path: Path, database_url: str | None) -> Iterator[HubStore]:
    opened = HubStore.open(database_url, tmp_path / "hub-home")
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def fleet(store: HubStore, tmp_path: Path) -> Fleet:
    """Two endpoints, 260 records, one integrity alert (endpoint b's record 7 never arrived)."""
    seeded = Fleet(store, tmp_path / "endpoints")
    seeded.add("laptop-a", 150)
    seeded.add("laptop-b", 110, skip=7)
    return seeded


def drain(forwarder: Forwarder, expected: int | None = None, timeout: float = 60.0) -> int:
    """Steps until nothing is new (and, given ``expected``, until that many were delivered:
    on a shared PostgreSQL server another client's open write transaction holds rows back
    until it ends); returns the events delivered."""
    import time

    total = 0
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = forwarder.step()
        assert done is not None, "lost the lease"
        total += done
        if done == 0:
            if expected is None or total >= expected:
                return total
            time.sleep(0.05)
    raise AssertionError(f"delivered {total} of {expected} in {timeout}s")


def step(forwarder: Forwarder, timeout: float = 60.0) -> int | None:
    """One step that delivers something (retried while rows are held back, as in drain)."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        done = forwarder.step()
        if done != 0 or time.monotonic() > deadline:
            return done
        time.sleep(0.05)


def forward_all(store: HubStore, fleet: Fleet, spec: SinkSpec, receiver: HttpReceiver) -> set[str]:
    """Forward everything to a started receiver, then stop both; returns the dedup keys due."""
    try:
        forwarder = Forwarder(store.db, spec)
        expected = fleet.expected()
        assert drain(forwarder, len(expected)) == len(expected)
        forwarder.stop()
    finally:
        receiver.stop()
    return expected


def _spec(kind: str, url: str, **options: object) -> SinkSpec:
    return make_spec(kind, url, "test", **options)


def test_syslog_into_rsyslog_every_record_framed_with_structured_data(
    store: HubStore, fleet: Fleet, tmp_path: Path
) -> None:
    """rsyslogd receives every record and the alert, each as one octet-counted RFC 5424 message
    whose structured data it parses (mmpstrucdata): the dedup key, endpoint, action, codes;
    HOSTNAME is the endpoint, PRI facility 13 with the action's severity, MSG the OCSF JSON."""
    rsyslog = Rsyslog(tmp_path / "rsyslog").start()
    try:
        forwarder = Forwarder(
            store.db, _spec("syslog", f"tcp://127.0.0.1:{rsyslog.port}", batch=64)
        )
        expected = fleet.expected()
        assert drain(forwarder, len(expected)) == len(expected) == 260
        wait_for(lambda: len(rsyslog.lines()) >= len(expected), what="rsyslog output")
        forwarder.stop()
        lines = rsyslog.lines()
    finally:
        rsyslog.stop()
    ids = [line["sd"]["domestique@32473"]["id"] for line in lines]
    assert Counter(ids) == Counter(expected)  # every one, none twice
    endpoints = {h: e for h, (e, _, _) in fleet.endpoints.items()}
    for line in lines:
        sd = line["sd"]["domestique@32473"]
        assert line["msg"].startswith(BOM)
        body = json.loads(line["msg"][len(BOM) :])
        assert body["metadata"]["uid"] == sd["id"]
        assert line["app"] == "domestique"
        assert line["hostname"] in endpoints
        assert sd["endpoint"] == endpoints[line["hostname"]] == body["device"]["uid"]
        if line["msgid"] == "integrity":
            assert sd["kind"] == "integrity"
            assert sd["codes"] == "hub.integrity.gap"
            assert body["class_uid"] == 2004
            assert body["finding_info"]["title"] == sd["codes"]
            assert line["pri"] == 13 * 8 + 2
            continue
        assert line["msgid"] == "decision"
        assert body["class_uid"] == 1007
        assert sd["class_uid"] == "1007"
        assert body["process"]["cmd_line"].startswith("echo ")
        if sd["action"] == "deny":
            assert sd["codes"] == "cmd.pipe_to_shell"
            assert line["pri"] == 13 * 8 + 4
        else:
            assert sd["action"] == "allow"
            assert sd["codes"] == ""
            assert line["pri"] == 13 * 8 + 6
        assert line["time"].startswith(body["metadata"]["original_time"][:19])
    assert Counter(line["sd"]["domestique@32473"]["action"] for line in lines) == {
        "allow": 207,
        "deny": 52,
        "hub.integrity.gap": 1,
    }


def test_otlp_every_record_one_log_record_with_ocsf_body_and_resource(
    store: HubStore, fleet: Fleet
) -> None:
    """Every record and the alert arrive as one OTLP log record each, decoded with
    opentelemetry-proto: the OCSF JSON as a string body, the dedup key attribute, and the
    resource naming the service and the endpoint (one ResourceLogs per endpoint)."""
    receiver = HttpReceiver(decode_otlp).start()
    expected = forward_all(store, fleet, _spec("otlp", receiver.url, batch=100), receiver)
    items = receiver.items()
    assert Counter(i["attributes"]["domestique.record_id"] for i in items) == Counter(expected)
    assert max(len(r) for r in receiver.requests) <= 100  # one batch per request
    hosts = {e: h for h, (e, _, _) in fleet.endpoints.items()}
    for item in items:
        resource, attrs, body = item["resource"], item["attributes"], item["body"]
        assert item["body_kind"] == "string_value"
        assert body["metadata"]["uid"] == attrs["domestique.record_id"]
        assert resource["service.name"] == "domestique-hub"
        assert resource["service.version"] == "0.1.0"
        assert resource["service.instance.id"]
        assert resource["host.name"] == hosts[resource["domestique.endpoint.id"]]
        assert body["device"]["uid"] == resource["domestique.endpoint.id"]
        assert item["scope"] == "domestique.hub"
        assert attrs["ocsf.class_uid"] == body["class_uid"]
        assert item["time_unix_nano"] == body["time"] * 1_000_000
        if attrs["domestique.kind"] == "integrity":
            assert item["event_name"] == "domestique.integrity"
            assert item["severity_text"] == "ERROR"
            assert item["severity_number"] == 17
        else:
            assert item["event_name"] == "domestique.decision"
            assert attrs["domestique.action"] in ("allow", "deny")
            assert isinstance(attrs["domestique.seq"], int)


def test_a_sink_stopped_then_restarted_receives_everything_none_twice(
    store: HubStore, fleet: Fleet, tmp_path: Path
) -> None:
    """rsyslogd stops while records keep arriving; the forwarder fails (hub.sink.unreachable,
    kept on the sink's row), backs off, and once rsyslogd is back it resumes at its cursor:
    every record arrives, none twice."""
    rsyslog = Rsyslog(tmp_path / "rsyslog").start()
    lines = []
    spec = _spec("syslog", f"tcp://127.0.0.1:{rsyslog.port}", batch=50)
    logged: list[str] = []
    forwarder = Forwarder(store.db, spec, idle_s=0.05, max_backoff_s=0.4, log=logged.append)
    stop = threading.Event()
    thread = threading.Thread(target=forwarder.run_until, args=(stop,), daemon=True)
    thread.start()
    try:
        first = fleet.expected()
        wait_for(lambda: len(rsyslog.lines()) >= len(first), what="first delivery")
        wait_for(lambda: sink_status(store.db)[0]["forwarded"] == len(first))
        rsyslog.stop()
        fleet.more("laptop-a", 120)
        fleet.add("laptop-c", 80)
        wait_for(lambda: sink_status(store.db)[0]["error_code"] == "hub.sink.unreachable")
        status = sink_status(store.db)[0]
        assert status["failures"] >= 1
        assert status["forwarded"] == len(first)
        rsyslog.start()
        everything = fleet.expected()
        wait_for(lambda: len(rsyslog.lines()) >= len(everything), what="resumed delivery")
        wait_for(lambda: sink_status(store.db)[0]["forwarded"] == len(everything))
    finally:
        stop.set()
        thread.join(10)
        forwarder.stop()
        lines = rsyslog.lines()
        rsyslog.stop()
    ids = Counter(line["sd"]["domestique@32473"]["id"] for line in lines)
    assert ids == Counter(everything)
    assert max(ids.values()) == 1
    status = sink_status(store.db)[0]
    assert status["error_code"] is None
    assert status["failures"] == 0
    assert any("hub.sink.unreachable" in line for line in logged)
    assert any("delivering again" in line for line in logged)


def test_otlp_receiver_refusing_then_accepting_loses_nothing(store: HubStore, fleet: Fleet) -> None:
    """A collector answering 503 (then 400) keeps the cursor where it is (hub.sink.rejected);
    when it accepts again, everything arrives once, the dedup key on each."""
    receiver = HttpReceiver(decode_otlp).start()
    try:
        receiver.status = 503
        forwarder = Forwarder(store.db, _spec("otlp", receiver.url, batch=40))
        from domestique.hub.sinks._base import SinkError

        for status in (503, 400):
            receiver.status = status
            with pytest.raises(SinkError) as failed:
                step(forwarder)
            assert failed.value.code == "hub.sink.rejected"
            assert f"HTTP {status}" in failed.value.message
        assert receiver.items() == []
        assert receiver.refused == 2
        assert sink_status(store.db)[0]["forwarded"] == 0
        receiver.status = 200
        expected = fleet.expected()
        assert drain(forwarder, len(expected)) == len(expected)
        forwarder.stop()
    finally:
        receiver.stop()
    ids = Counter(i["attributes"]["domestique.record_id"] for i in receiver.items())
    assert ids == Counter(expected)


def test_tls_syslog_with_a_test_ca_and_an_untrusted_one(
    store: HubStore, fleet: Fleet, tmp_path: Path
) -> None:
    """tls:// to rsyslogd (OpenSSL driver) with the test CA named in the hub config file:
    everything arrives. Without that CA the handshake fails (hub.sink.tls) and nothing counts
    as delivered."""
    ca, cert, key = make_ca(tmp_path)
    rsyslog = Rsyslog(tmp_path / "rsyslog", tls=(ca, cert, key)).start()
    try:
        untrusted = Forwarder(
            store.db, _spec("syslog", f"tls://127.0.0.1:{rsyslog.port}", name="untrusted")
        )
        from domestique.hub.sinks._base import SinkError

        with pytest.raises(SinkError) as failed:
            step(untrusted)
        untrusted.stop()
        assert failed.value.code == "hub.sink.tls"
        assert "certificate" in failed.value.message
        config = tmp_path / "hub.toml"
        config.write_text(
            f'[[sinks]]\nurl = "tls://127.0.0.1:{rsyslog.port}"\nca = "{ca}"\nname = "soc"\n'
        )
        (spec,) = collect(otlp=[], syslog=[], config=config)
        assert spec.kind == "syslog"
        assert spec.tls
        assert spec.ca == ca
        forwarder = Forwarder(store.db, spec)
        expected = fleet.expected()
        assert drain(forwarder, len(expected)) == len(expected)
        wait_for(lambda: len(rsyslog.lines()) >= len(expected), what="TLS delivery")
        forwarder.stop()
        lines = rsyslog.lines()
    finally:
        rsyslog.stop()
    assert Counter(line["sd"]["domestique@32473"]["id"] for line in lines) == Counter(expected)
    rows = {r["name"]: r for r in sink_status(store.db)}
    assert rows["soc"]["forwarded"] == len(expected)
    assert rows["untrusted"]["forwarded"] == 0


def test_only_one_hub_forwards_a_sink_and_another_takes_over(store: HubStore, fleet: Fleet) -> None:
    """Two hubs (two forwarders with their own owners) on one sink: the lease lets one
    forward; the other waits. When the first stops, the second resumes at the shared cursor:
    everything once."""
    receiver = HttpReceiver(decode_otlp).start()
    try:
        spec = _spec("otlp", receiver.url, batch=30, name="soc-otlp")
        first = Forwarder(store.db, spec, owner="hub-1")
        second = Forwarder(store.db, spec, owner="hub-2")
        expected = fleet.expected()
        sent = step(first)  # the alert (or 30 records while it is held back: see drain)
        assert sent in (1, 30)
        assert second.step() is None  # hub-1 holds the lease
        sent += step(first) or 0
        first.release()
        rest = drain(second, len(expected) - sent)
        assert first.step() is None  # now hub-2 holds it
        assert sent + rest == len(expected)
        assert sink_status(store.db)[0]["owner"] == "hub-2"
        first.stop()
        second.stop()  # and releases the lease
        assert sink_status(store.db)[0]["owner"] is None
    finally:
        receiver.stop()
    ids = Counter(i["attributes"]["domestique.record_id"] for i in receiver.items())
    assert ids == Counter(expected)


def test_postgres_a_batch_committing_late_is_not_passed_over(tmp_path: Path, pg_url: str) -> None:
    """On PostgreSQL, a batch whose transaction started first but commits last (a lower
    sequence number) is still forwarded: the forwarder waits below the oldest open
    transaction instead of moving its cursor past it."""
    import psycopg

    store = HubStore.open(pg_url, tmp_path / "hub-home")
    receiver = HttpReceiver(decode_otlp).start()
    try:
        fleet = Fleet(store, tmp_path / "endpoints")
        fleet.add("laptop-a", 5)
        forwarder = Forwarder(store.db, _spec("otlp", receiver.url))
        assert drain(forwarder, 5) == 5
        with psycopg.connect(pg_url) as slow:
            # A transaction writes first (lower sequence) and stays open...
            slow.execute(
                "INSERT INTO records (endpoint_id, seq, id, time, component, action, codes, "
                "prev_hash, hash, record, received_at) SELECT endpoint_id, seq + 1000, "
                "'late-' || id, time, component, action, codes, prev_hash, hash, "
                "replace(record, id, 'late-' || id), received_at FROM records LIMIT 1"
            )
            fleet.add("laptop-b", 3)  # ...while a later one commits
            assert drain(forwarder) == 0  # held back: nothing may pass the open one
            slow.commit()
        assert drain(forwarder, 4) == 4
        forwarder.stop()
    finally:
        receiver.stop()
        store.close()
    ids = [i["attributes"]["domestique.record_id"] for i in receiver.items()]
    assert len(ids) == len(set(ids)) == 9
    assert ids[5].startswith("late-")  # in commit-safe order: the open transaction's first


def test_splunk_hec_with_token_and_dedup_field(
    store: HubStore, fleet: Fleet, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HEC: ``Authorization: Splunk TOKEN`` from the environment, one JSON event per record
    with the OCSF event and ``fields.record_id``."""
    monkeypatch.setenv("TEST_HEC_TOKEN", "hec-test-token-1")
    receiver = HttpReceiver(decode_hec).start()
    url = f"http://127.0.0.1:{receiver.port}/services/collector/event"
    spec = _spec("hec", url, token_env="TEST_HEC_TOKEN")
    expected = forward_all(store, fleet, spec, receiver)
    items = receiver.items()
    assert Counter(i["fields"]["record_id"] for i in items) == Counter(expected)
    for item in items:
        assert item["auth"] == "Splunk hec-test-token-1"
        assert item["event"]["metadata"]["uid"] == item["fields"]["record_id"]
        assert item["sourcetype"] == "ocsf"
        assert item["host"] in fleet.endpoints


def test_postgres_transaction_ids_are_ordered_as_numbers(tmp_path: Path, pg_url: str) -> None:
    """The cursor's transaction ids compare as numbers (xid8), never as text: rows written by
    transactions 9 and 10 are both forwarded, 9 first."""
    store = HubStore.open(pg_url, tmp_path / "hub-home")
    receiver = HttpReceiver(decode_otlp).start()
    try:
        Fleet(store, tmp_path / "endpoints").add("laptop-a", 1)
        with store.db.tx() as tx:
            tx.run("DELETE FROM alerts")
            for xid in ("10", "9"):
                tx.run(
                    "INSERT INTO records (endpoint_id, seq, id, time, component, action, codes, "
                    "prev_hash, hash, record, received_at, fwd_xid) SELECT endpoint_id, seq, "
                    "%s || id, time, component, action, codes, prev_hash, hash, "
                    "replace(record, id, %s || id), received_at, %s::xid8 FROM records "
                    "WHERE id NOT LIKE 'x%%'",
                    (f"x{xid}-", f"x{xid}-", xid),
                )
        forwarder = Forwarder(store.db, _spec("otlp", receiver.url, batch=1))
        assert drain(forwarder, 3) == 3
        forwarder.stop()
    finally:
        receiver.stop()
        store.close()
    ids = [i["attributes"]["domestique.record_id"] for i in receiver.items()]
    assert ids[0].startswith("x9-")
    assert ids[1].startswith("x10-")


def test_otlp_partial_success_is_logged_and_not_resent(store: HubStore, fleet: Fleet) -> None:
    """A collector that accepts a batch but reports records rejected (OTLP partial success):
    hub.sink.partial is logged with the count and message, and the batch is not sent again."""
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse

    answer = ExportLogsServiceResponse()
    answer.partial_success.rejected_log_records = 2
    answer.partial_success.error_message = "body too deep"
    receiver = HttpReceiver(decode_otlp).start()
    receiver.response = answer.SerializeToString()
    logged: list[str] = []
    try:
        forwarder = Forwarder(store.db, _spec("otlp", receiver.url, batch=100), log=logged.append)
        expected = fleet.expected()
        assert drain(forwarder, len(expected)) == len(expected)
        forwarder.stop()
    finally:
        receiver.stop()
    assert len(receiver.items()) == len(expected)  # nothing sent twice
    assert sink_status(store.db)[0]["forwarded"] == len(expected)
    partial = [line for line in logged if "hub.sink.partial" in line]
    assert len(partial) == len(receiver.requests) >= 3
    assert any("rejected 2 of 100 log records: body too deep" in line for line in partial)


def test_an_unexpected_error_in_a_forwarder_is_retried_not_fatal(
    store: HubStore, fleet: Fleet, tmp_path: Path
) -> None:
    """Review: only sink and store errors were caught, so any other exception (a bug in
    encoding an event) ended the forwarder's thread silently while the hub kept serving. It is
    now noted as hub.sink.internal (type only, never the message) and retried."""
    rsyslog = Rsyslog(tmp_path / "rsyslog").start()
    spec = _spec("syslog", f"tcp://127.0.0.1:{rsyslog.port}", batch=50)
    logged: list[str] = []
    forwarder = Forwarder(store.db, spec, idle_s=0.05, max_backoff_s=0.4, log=logged.append)
    real_step, calls = forwarder.step, []

    def flaky_step() -> bool:
        calls.append(1)
        if len(calls) <= 2:
            raise KeyError("a field a bug expected, with ghp_notlogged")
        return real_step()

    forwarder.step = flaky_step  # type: ignore[method-assign]
    stop = threading.Event()
    thread = threading.Thread(target=forwarder.run_until, args=(stop,), daemon=True)
    thread.start()
    try:
        expected = fleet.expected()
        wait_for(lambda: len(rsyslog.lines()) >= len(expected), what="delivery after the bug")
        assert any("hub.sink.internal: KeyError" in line for line in logged)
        assert not any("ghp_notlogged" in line for line in logged)
        assert thread.is_alive()
    finally:
        stop.set()
        thread.join(10)
        forwarder.stop()
        rsyslog.stop()


def test_the_endpoints_page_shows_each_sink_failing_then_delivering(
    store: HubStore, fleet: Fleet
) -> None:
    """The web report's Endpoints page carries the sinks' rows: a collector refusing shows
    its error code and the failures counted; once it accepts, the error is gone and the
    forwarded count is every record and alert."""
    from domestique.hub.web._app import WebReport

    def sinks_table() -> tuple[list[list[object]], int]:
        _title, body, tables = WebReport(store)._endpoints({})
        table = next(t for t in tables if t.name == "sinks")
        failing = body.split('data-figure="Sinks failing"', 1)[1]
        return table.rows, int(failing.split('class="value">', 1)[1].split("<", 1)[0])

    rows, failing = sinks_table()
    assert rows == []
    assert failing == 0
    receiver = HttpReceiver(decode_otlp).start()
    try:
        receiver.status = 503
        forwarder = Forwarder(
            store.db,
            _spec("otlp", receiver.url, batch=40),
            idle_s=0.05,
            max_backoff_s=0.4,
            log=lambda _line: None,
        )
        stop = threading.Event()
        thread = threading.Thread(target=forwarder.run_until, args=(stop,), daemon=True)
        thread.start()
        try:
            wait_for(lambda: sink_status(store.db)[0]["failures"] >= 1, what="a failure")
            rows, failing = sinks_table()
            assert failing == 1
            (row,) = rows
            assert row[0] == f"otlp:{receiver.url}"
            assert row[1:4] == ["otlp", 0, "never"]
            assert row[4] == "hub.sink.rejected"
            assert "HTTP 503" in str(row[5])
            assert row[6] != ""
            assert isinstance(row[7], int)
            assert row[7] >= 1
            receiver.status = 200
            expected = fleet.expected()
            wait_for(lambda: sink_status(store.db)[0]["forwarded"] == len(expected))
        finally:
            stop.set()
            thread.join(10)
            forwarder.stop()
    finally:
        receiver.stop()
    rows, failing = sinks_table()
    assert failing == 0
    (row,) = rows
    assert row[2] == len(expected)
    assert row[3] != "never"
    assert row[4:8] == ["", "", "", 0]
