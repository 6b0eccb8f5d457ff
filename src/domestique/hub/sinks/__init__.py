"""Forwarding to the SOC's SIEM: every accepted record and integrity alert, as OCSF events.

Three kinds of sink, each configured with ``hub serve --export-otlp URL``,
``--export-syslog tcp://HOST:PORT | tls://HOST:PORT`` (both repeatable) or the hub config file
(:mod:`.config`, also Splunk HEC):

- :mod:`.otlp`: OTLP/HTTP logs, one log record per event, the OCSF JSON as its body;
- :mod:`.syslog`: RFC 5424 over TCP or TLS, octet-counted, with structured data;
- :mod:`.hec`: Splunk's HTTP Event Collector.

What is sent: :mod:`.events`. How (cursor per sink in the central store, at-least-once with the
record id as dedup key, bounded memory, capped backoff, one forwarder per sink across hubs):
:mod:`.forwarder`.
"""

from __future__ import annotations

from domestique.hub.sinks.config import SinkConfigError, SinkSpec, collect, load_config
from domestique.hub.sinks.forwarder import Forwarder, sink_status, start_forwarders

__all__ = [
    "Forwarder",
    "SinkConfigError",
    "SinkSpec",
    "collect",
    "load_config",
    "sink_status",
    "start_forwarders",
]
