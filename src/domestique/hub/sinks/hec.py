"""Splunk HTTP Event Collector: ``POST {url}`` (default ``/services/collector/event``).

``Authorization: Splunk TOKEN`` (the token from the environment variable the sink names,
``DOMESTIQUE_HEC_TOKEN`` by default; never from the config file or a flag, so it stays out of
process listings and files). One batch is one request of concatenated JSON objects::

    {"time": 1764612000.123, "host": "<endpoint host>", "source": "domestique-hub",
     "sourcetype": "ocsf", "event": {<OCSF>},
     "fields": {"record_id": "<dedup key>", "endpoint_id": "…", "kind": "decision"}}

HTTP 200 delivers the batch; any other status is ``hub.sink.rejected`` and the batch is sent
again after backoff.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import orjson

from domestique.hub.sinks._base import HttpPoster, SinkError
from domestique.hub.sinks.config import SinkSpec
from domestique.hub.sinks.events import Event

TIMEOUT_S = 30.0


def encode_batch(events: Sequence[Event]) -> bytes:
    parts = []
    for e in events:
        head = orjson.dumps(
            {
                "time": round(e.time_ms / 1000, 3),
                "host": e.endpoint.host or e.endpoint.id,
                "source": "domestique-hub",
                "sourcetype": "ocsf",
                "fields": {"record_id": e.uid, "endpoint_id": e.endpoint.id, "kind": e.kind},
            }
        )
        # The OCSF body is already JSON: splice it in rather than parse and re-encode it.
        parts.append(head[:-1] + b',"event":' + e.body + b"}")
    return b"\n".join(parts)


class HecSink:
    def __init__(self, spec: SinkSpec) -> None:
        self.spec = spec
        token = os.environ.get(spec.token_env or "DOMESTIQUE_HEC_TOKEN", "")
        self._http = HttpPoster(
            spec, {"authorization": f"Splunk {token}", "content-type": "application/json"}
        )

    def send(self, events: Sequence[Event]) -> None:
        if not events:
            return
        status, _ = self._http.post(encode_batch(events), TIMEOUT_S)
        if status != 200:
            raise SinkError("hub.sink.rejected", f"POST {self.spec.shown_url}: HTTP {status}")

    def close(self) -> None:
        self._http.close()
