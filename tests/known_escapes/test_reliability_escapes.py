"""Reliability escapes (docs/known-escapes.md, "Reliability"): an upstream's cut answer taken
as complete, a damaged audit store crashing its verifier instead of being reported, hostile
clients against the hub."""

from __future__ import annotations

import socket
from pathlib import Path

from domestique.proxy.answer import AnswerStream
from domestique.proxy.routes import Operation, Provider
from domestique.proxy.stream_end import StreamEnd

ANTHROPIC_HEAD = (
    b'event: message_start\ndata: {"type":"message_start","message":{"id":"m"}}\n\n'
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
    b'"delta":{"type":"text_delta","text":"half an ans"}}\n\n'
)
CUT = {
    Operation.ANTHROPIC_MESSAGES: ANTHROPIC_HEAD,
    Operation.OPENAI_CHAT: b'data: {"choices":[{"index":0,"delta":{"content":"half"}}]}\n\n',
    Operation.OPENAI_RESPONSES: b'event: response.output_text.delta\ndata: {"type":'
    b'"response.output_text.delta","delta":"half"}\n\n',
    Operation.GEMINI_STREAM: b'data: {"candidates":[{"content":{"parts":[{"text":"half"}]}}]}\n\n',
}
DONE = {
    Operation.ANTHROPIC_MESSAGES: b'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    Operation.OPENAI_CHAT: b"data: [DONE]\n\n",
    Operation.OPENAI_RESPONSES: b'event: response.completed\ndata: {"type":"response.completed"}',
    Operation.GEMINI_STREAM: b'data: {"candidates":[{"finishReason":"STOP"}]}\n\n',
}
PROVIDER = {
    Operation.ANTHROPIC_MESSAGES: Provider.ANTHROPIC,
    Operation.OPENAI_CHAT: Provider.OPENAI,
    Operation.OPENAI_RESPONSES: Provider.OPENAI,
    Operation.GEMINI_STREAM: Provider.GEMINI,
}


def test_a_stream_cut_before_its_terminal_event_is_not_taken_as_complete() -> None:
    """Blocked: a close-delimited stream the upstream hung up on is judged by the provider's
    terminal event, and ends with the provider's error event (tests/reliability/
    test_stream_cut.py drives it end to end, official SDKs included)."""
    for op, head in CUT.items():
        cut = StreamEnd(op)
        cut.feed(head)
        assert not cut.complete, op
        whole = StreamEnd(op)
        whole.feed(head + DONE[op])  # the Responses end has no blank line: still complete
        assert whole.complete, op
        if op is Operation.GEMINI_STREAM:  # a refused prompt: no candidates, still an end
            refused = StreamEnd(op)
            refused.feed(b'data: {"promptFeedback":{"blockReason":"SAFETY"}}\n\n')
            assert refused.complete
        tail = AnswerStream(op, PROVIDER[op], {}).abort("cut [proxy.upstream_error]")
        assert b"error" in tail
        assert b"proxy.upstream_error" in tail


def test_the_hub_refuses_a_huge_request_head_like_the_firewall(tmp_path: Path) -> None:
    """The hub listens for a whole fleet (often beyond loopback, behind TLS): a 70 KB header
    should be refused with 431 before it is parsed, as the firewall does; idle and slowloris
    connections should be cut by the same deadlines."""
    from hub.support import HubProcess

    hub = HubProcess(tmp_path / "hub", None).start()
    try:
        with socket.create_connection(("127.0.0.1", hub.port), timeout=10) as sock:
            sock.sendall(
                b"POST /v1/records HTTP/1.1\r\nHost: hub\r\nx-big: "
                + b"a" * (70 * 1024)
                + b"\r\ncontent-length: 0\r\n\r\n"
            )
            answer = sock.recv(200)
    finally:
        hub.stop()
    assert answer.startswith(b"HTTP/1.1 431 ")
