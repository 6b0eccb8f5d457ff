"""Benchmark of the hub's SIEM forwarding: records/s from the central store into each sink.

    .venv/bin/python bench/bench_sinks.py [--database URL|sqlite] [--endpoints 20]
        [--records 2500] [--batch 1000] [--repeats 3] [--json]

Seeds a fresh store (a PostgreSQL schema dropped at the end, or a temporary SQLite file) through
the real ingest path (``bench_hub``'s realistic guard records, 30 days), then for each sink and
repeat forwards **everything from the start** with a new cursor and times it until the sink
acknowledged the last batch (the forwarder's own ``step``: read after the cursor in commit
order, map to OCSF, encode, send, wait for the acknowledgement, move the cursor):

- ``null``: a sink that sends nothing: the store read and the OCSF mapping alone;
- ``syslog``: Debian's ``rsyslogd`` (private config, TCP input, file output), octet-counted
  RFC 5424; the lines it wrote are counted afterwards;
- ``otlp``: an OTLP/HTTP receiver in a child process that stores each request; every request
  is decoded afterwards with opentelemetry-proto and the log records counted.

It also times the OTLP request encoding alone, A/B alternately in one run: the OpenTelemetry
SDK's encoder (``encode_logs`` over ``ReadableLogRecord``\\ s, the ``bench`` extra) against the
hub's direct protobuf encoder, on the same 1,000 events.

Figures go to docs/benchmarks.md ("SIEM forwarding").
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from bench_hub import SPAN_NS, _batches  # noqa: E402 - after the path setup
from domestique.hub.batch import parse_batch  # noqa: E402
from domestique.hub.sinks.config import make_spec  # noqa: E402
from domestique.hub.sinks.events import Event  # noqa: E402
from domestique.hub.sinks.forwarder import Forwarder  # noqa: E402
from domestique.hub.store import EndpointInfo, HubStore  # noqa: E402

RECEIVER = textwrap.dedent(
    """
    import sys
    from http.server import BaseHTTPRequestHandler, HTTPServer
    out = open(sys.argv[2], "ab")
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def do_POST(self):
            body = self.rfile.read(int(self.headers["content-length"]))
            out.write(len(body).to_bytes(8, "little") + body)
            out.flush()
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()
        def log_message(self, *a):
            pass
    HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
    """
)


class NullSink:
    def __init__(self, spec: Any) -> None:
        self.spec = spec

    def send(self, events: Any) -> None:
        return

    def close(self) -> None:
        return


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, proc: subprocess.Popen[bytes]) -> None:
    import socket

    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("receiver exited")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("receiver did not listen")


def _rsyslog(folder: Path) -> tuple[subprocess.Popen[bytes], int, Path]:
    port, out = _free_port(), folder / "out.log"
    (folder / "work").mkdir(parents=True)
    conf = folder / "rsyslog.conf"
    conf.write_text(
        f'global(workDirectory="{folder / "work"}" maxMessageSize="256k")\n'
        'module(load="imtcp")\n'
        'template(name="out" type="string" string="%msgid% %hostname% %msg%\\n")\n'
        f'input(type="imtcp" port="{port}" address="127.0.0.1" ruleset="in")\n'
        f'ruleset(name="in") {{ action(type="omfile" file="{out}" template="out") }}\n'
    )
    proc = subprocess.Popen(
        ["rsyslogd", "-n", "-f", str(conf), "-i", str(folder / "pid")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _wait_port(port, proc)
    return proc, port, out


def _otlp_receiver(folder: Path) -> tuple[subprocess.Popen[bytes], int, Path]:
    port, out = _free_port(), folder / "otlp.bin"
    proc = subprocess.Popen([sys.executable, "-c", RECEIVER, str(port), str(out)])
    _wait_port(port, proc)
    return proc, port, out


def _count_otlp(path: Path) -> int:
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    data, i, n = path.read_bytes(), 0, 0
    while i < len(data):
        size = int.from_bytes(data[i : i + 8], "little")
        request = ExportLogsServiceRequest()
        request.ParseFromString(data[i + 8 : i + 8 + size])
        n += sum(len(s.log_records) for r in request.resource_logs for s in r.scope_logs)
        i += 8 + size
    return n


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


def _seed(store: HubStore, endpoints: int, records: int) -> int:
    info = EndpointInfo("laptop", "dev", "Linux", "0.1.0", "fp")
    token = store.create_enroll_token(expires_s=3600, uses=endpoints)
    ids = [store.enroll(token, info)[0] for _ in range(endpoints)]
    start_ns = time.time_ns() - SPAN_NS
    total = 0
    for n, endpoint_id in enumerate(ids):
        for count, body in _batches(endpoint_id, n, records, 500, start_ns):
            store.ingest(endpoint_id, parse_batch(body, "gzip"))
            total += count
    return total


def _forward(store: HubStore, spec: Any, sink: Any, total: int) -> float:
    forwarder = Forwarder(store.db, spec, sink=sink, log=lambda _line: None)
    t0 = time.perf_counter()
    done = 0
    while done < total:
        step = forwarder.step()
        assert step, f"forwarder stopped at {done} of {total}"
        done += step
    took = time.perf_counter() - t0
    forwarder.stop()
    return took


def _encode_ab(store: HubStore, rounds: int) -> dict[str, float]:
    """The SDK's OTLP log encoder vs the hub's, on the same 1,000 events, alternately."""
    from opentelemetry._logs import LogRecord, SeverityNumber
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
    from opentelemetry.sdk._logs import ReadableLogRecord
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope

    from domestique.hub.sinks.events import read_records
    from domestique.hub.sinks.otlp import encode_request, resource_attributes

    with store.db.tx() as tx:
        events, _ = read_records(tx, ("0", 0), 1000, {})

    def sdk(batch: list[Event]) -> bytes:
        scope = InstrumentationScope("domestique.hub", "0.1.0")
        resources: dict[str, Resource] = {}
        out = []
        for e in batch:
            resource = resources.get(e.endpoint.id)
            if resource is None:
                resource = Resource(dict(resource_attributes(e, "bench", "0.1.0")))
                resources[e.endpoint.id] = resource
            attrs: dict[str, Any] = {
                "domestique.record_id": e.uid,
                "domestique.kind": e.kind,
                "domestique.action": e.action,
                "domestique.codes": " ".join(e.codes),
                "ocsf.class_uid": e.class_uid,
            }
            if e.seq is not None:
                attrs["domestique.seq"] = e.seq
            record = LogRecord(
                timestamp=e.time_ms * 1_000_000,
                observed_timestamp=time.time_ns(),
                severity_number=SeverityNumber(e.severity[1]),
                severity_text=e.severity[2],
                body=e.body.decode("utf-8"),
                attributes=attrs,
                event_name=f"domestique.{e.kind}",
            )
            out.append(ReadableLogRecord(record, resource=resource, instrumentation_scope=scope))
        return bytes(encode_logs(out).SerializeToString())

    def direct(batch: list[Event]) -> bytes:
        return encode_request(batch, instance="bench", version="0.1.0", now_ns=time.time_ns())

    times: dict[str, list[float]] = {"sdk": [], "direct": []}
    for _ in range(rounds):
        for name, fn in (("sdk", sdk), ("direct", direct)):
            t0 = time.perf_counter()
            fn(events)
            times[name].append(time.perf_counter() - t0)
    sdk_us = statistics.median(times["sdk"]) / len(events) * 1e6
    direct_us = statistics.median(times["direct"]) / len(events) * 1e6
    return {
        "encode_sdk_us_per_record": round(sdk_us, 1),
        "encode_direct_us_per_record": round(direct_us, 1),
        "encode_sdk_over_direct": round(sdk_us / direct_us, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--database",
        default=os.environ.get("DOMESTIQUE_TEST_DATABASE_URL")
        or "postgresql://postgres@127.0.0.1:5432/test",
        help="postgresql://… or 'sqlite' (a temporary embedded store)",
    )
    parser.add_argument("--endpoints", type=int, default=20)
    parser.add_argument("--records", type=int, default=2500, help="per endpoint")
    parser.add_argument("--batch", type=int, default=1000, help="events per send")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sinks", default="null,syslog,otlp")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="bench-sinks-"))
    schema = None
    if args.database == "sqlite":
        url = None
    else:
        import psycopg

        schema = "bench_sinks_" + secrets.token_hex(4)
        with psycopg.connect(args.database, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        sep = "&" if "?" in args.database else "?"
        url = f"{args.database}{sep}options=-csearch_path%3D{schema}"
    store = HubStore.open(url, folder / "home")
    procs: list[subprocess.Popen[bytes]] = []
    figures: dict[str, Any] = {"backend": "postgresql" if url else "sqlite"}
    try:
        t0 = time.perf_counter()
        total = _seed(store, args.endpoints, args.records)
        figures["records"] = total
        figures["ingest_records_per_s"] = round(total / (time.perf_counter() - t0))
        sinks = args.sinks.split(",")
        receivers: dict[str, tuple[int, Path]] = {}
        if "syslog" in sinks:
            proc, port, out = _rsyslog(folder / "rsyslog")
            procs.append(proc)
            receivers["syslog"] = (port, out)
        if "otlp" in sinks:
            proc, port, out = _otlp_receiver(folder)
            procs.append(proc)
            receivers["otlp"] = (port, out)
        times: dict[str, list[float]] = {name: [] for name in sinks}
        for r in range(args.repeats):  # the sinks alternate within each repeat
            for name in sinks:
                if name == "null":
                    spec = make_spec(
                        "syslog", "tcp://127.0.0.1:9", "bench", batch=args.batch, name=f"null-{r}"
                    )
                    times[name].append(_forward(store, spec, NullSink(spec), total))
                    continue
                port = receivers[name][0]
                url_ = (
                    f"tcp://127.0.0.1:{port}"
                    if name == "syslog"
                    else f"http://127.0.0.1:{port}/v1/logs"
                )
                spec = make_spec(name, url_, "bench", batch=args.batch, name=f"{name}-{r}")
                times[name].append(_forward(store, spec, None, total))
        for name in sinks:
            per_s = [total / t for t in times[name]]
            figures[f"{name}_records_per_s_median"] = round(statistics.median(per_s))
            figures[f"{name}_records_per_s_runs"] = [round(x) for x in per_s]
        if "syslog" in receivers:
            out = receivers["syslog"][1]
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                lines = sum(1 for _ in out.open("rb")) if out.exists() else 0
                if lines >= total * args.repeats:
                    break
                time.sleep(0.2)
            figures["syslog_lines_written"] = lines
        if "otlp" in receivers:
            figures["otlp_log_records_decoded"] = _count_otlp(receivers["otlp"][1])
        figures.update(_encode_ab(store, 7))
    finally:
        for proc in procs:
            _stop(proc)
        store.close()
        if schema is not None:
            import psycopg

            with psycopg.connect(args.database, autocommit=True) as conn:
                conn.execute(f"DROP SCHEMA {schema} CASCADE")
        shutil.rmtree(folder, ignore_errors=True)
    if args.json:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            print(f"{key:>34}: {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
