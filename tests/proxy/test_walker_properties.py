"""Property tests: the request walker and the answer restorer take any valid JSON.

Bodies are drawn from all of JSON, biased towards the keys and ``type`` values the providers
give meaning to (``type`` holding an object, as in a tool schema with a property named
``type``; ``data`` beside ``mimeType``; ``arguments`` holding JSON; …). For every route the
pipeline answers with an :class:`Inspection`, never an exception; and a secret placed at any
key, value or nested-string position of such a body is redacted or the request is blocked.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domestique.keys import Fingerprinter
from domestique.proxy.answer import AnswerStream, JsonArrayStream, restore_body
from domestique.proxy.fields import extract_fields
from domestique.proxy.pipeline import Inspection, inspect_request
from domestique.proxy.routes import Operation, Provider, Route, classify
from domestique.records import Action
from domestique.redact import PlaceholderMaker

from .conftest import CANARY, CanaryScanner, TablePolicy

KEY = b"w" * 32
MAKER = PlaceholderMaker(KEY)
PH = MAKER.placeholder("secret.canary", CANARY)
PATHS = (
    "/v1/messages",
    "/v1/messages/count_tokens",
    "/v1/chat/completions",
    "/v1/responses",
    "/v1/completions",
    "/v1/embeddings",
    "/v1beta/models/gemini-x:generateContent",
    "/v1beta/models/gemini-x:streamGenerateContent",
)
# Keys and type names that steer the walker and the restorer.
SPECIAL_KEYS = (
    "type",
    "data",
    "text",
    "content",
    "parts",
    "signature",
    "encrypted_content",
    "thoughtSignature",
    "thought_signature",
    "thought",
    "arguments",
    "partial_json",
    "mimeType",
    "mime_type",
    "media_type",
    "format",
    "file_data",
    "source",
    "index",
    "delta",
    "choices",
    "candidates",
    "tool_calls",
    "function",
    "finish_reason",
    "finishReason",
    "output_index",
    "content_index",
    "sequence_number",
    "response",
    "properties",
)
SPECIAL_STRINGS = (
    "thinking",
    "redacted_thinking",
    "reasoning",
    "base64",
    "text",
    "image/png",
    "text/plain",
    "content_block_delta",
    "content_block_stop",
    "message_stop",
    "text_delta",
    "input_json_delta",
    "response.output_text.delta",
    "response.output_text.done",
    "response.created",
    "data:text/plain;base64,aGVsbG8=",
    "data:image/png;base64,iVBORw0KGgo=",
    '{"a": 1, "type": {"type": "string"}}',
)
# The policy the properties use: secrets redact, records block, and every proxy.* code
# (an unscanned binary part included) blocks, so "not forwarded" is the only way out.
POLICY_TABLE = {"secret.": Action.REDACT, "records.": Action.BLOCK, "proxy.": Action.BLOCK}

keys = st.one_of(st.sampled_from(SPECIAL_KEYS), st.text(max_size=12))
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(SPECIAL_STRINGS),
    st.text(max_size=20),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(keys, inner, max_size=6),
    ),
    max_leaves=40,
)
bodies = st.dictionaries(keys, json_values, max_size=8)


def _route(path: str) -> Route:
    route = classify("POST", path, {})
    assert isinstance(route, Route)
    return route


NUMBER = 7391826405173  # what NumberScanner finds as a number's text
IDENT_CANARY = "dq_canary_AbCdEfGhIjKlMnOpQrSt"  # letters and "_" only: an identifier


class NumberScanner(CanaryScanner):
    """The canary scanner that also finds NUMBER's digits (a card number, say)."""

    def scan(self, text: str) -> list[Any]:
        from .conftest import CanaryFinding

        found: list[Any] = super().scan(text)
        at = text.find(str(NUMBER))
        while at >= 0:
            found.append(CanaryFinding("secret.number", at, at + 13, "hmac-sha256:n", "73…73"))
            at = text.find(str(NUMBER), at + 1)
        return found


def _inspect(path: str, raw: bytes, policy: TablePolicy | None = None) -> Inspection:
    return inspect_request(
        _route(path),
        raw,
        content_encoding="",
        scanner=NumberScanner(),
        policy=policy or TablePolicy(),
        maker=MAKER,
        fingerprinter=Fingerprinter(KEY),
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=bodies)
def test_walker_takes_any_json_object(body: dict[str, Any]) -> None:
    """Any JSON object (within the depth limit) is walked, every string found as text."""
    extraction = extract_fields(body)
    for f in extraction.fields:
        assert isinstance(f.text, str)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=bodies, path=st.sampled_from(PATHS))
def test_pipeline_answers_any_json_body_on_every_route(body: dict[str, Any], path: str) -> None:
    """Every route: an Inspection, and what is forwarded is JSON that parses."""
    ins = _inspect(path, json.dumps(body).encode())
    assert isinstance(ins, Inspection)
    if ins.body is not None:
        assert isinstance(json.loads(ins.body), dict)


def test_tool_schema_with_a_property_named_type_is_scanned() -> None:
    """The Codex shape that crashed the walker: ``properties.type`` is an object."""
    body = {
        "model": "gpt-x",
        "input": [{"role": "user", "content": f"hi {CANARY}"}],
        "tools": [
            {
                "type": "function",
                "name": "apply_patch",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "type": {"type": "string", "description": f"kind {CANARY}"},
                        "n": {"type": ["integer", "null"]},
                    },
                },
            }
        ],
    }
    ins = _inspect("/v1/responses", json.dumps(body).encode())
    assert ins.action is Action.REDACT
    assert ins.body is not None
    assert CANARY.encode() not in ins.body
    sent = json.loads(ins.body)
    props = sent["tools"][0]["parameters"]["properties"]
    assert props["type"]["description"].startswith("kind [REDACTED:canary:")
    assert props["n"] == {"type": ["integer", "null"]}


def test_answer_with_a_schema_property_named_type_is_restored() -> None:
    """The answer-side crash: a Responses answer echoing a tool schema with ``type`` objects."""
    answer = {
        "id": "resp_1",
        "output": [{"type": "message", "content": [{"type": "output_text", "text": PH}]}],
        "tools": [{"type": "function", "parameters": {"properties": {"type": {"type": "string"}}}}],
    }
    out = json.loads(restore_body(json.dumps(answer).encode(), {PH: CANARY}))
    assert out["output"][0]["content"][0]["text"] == CANARY
    assert out["tools"] == answer["tools"]


# -- a secret anywhere -------------------------------------------------------------------------


def _slots(value: Any) -> list[tuple[Any, Any]]:
    """Every (container, key-or-index) position in ``value``."""
    out: list[tuple[Any, Any]] = []
    if isinstance(value, dict):
        for k, v in value.items():
            out.append((value, k))
            out.extend(_slots(v))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.append((value, i))
            out.extend(_slots(v))
    return out


def _rename(holder: dict[str, Any], old: str, new: str) -> None:
    items = list(holder.items())
    holder.clear()
    for k, v in items:
        holder[new if k == old else k] = v


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    body=bodies,
    path=st.sampled_from(PATHS),
    where=st.sampled_from(
        ("value", "key", "ident-key", "inside", "json-string", "number", "json-number")
    ),
    pick=st.integers(min_value=0),
    around=st.tuples(st.text(max_size=6), st.text(max_size=6)),
)
def test_a_secret_anywhere_is_redacted_or_blocked(
    body: dict[str, Any], path: str, where: str, pick: int, around: tuple[str, str]
) -> None:
    """A secret as a key (an identifier too), a value, inside a longer string, inside JSON
    held in a string, or a number (plain or inside JSON held in a string).

    Whatever surrounds it, the request is blocked or what is forwarded no longer holds it.
    """
    slots = _slots(body) or [(body, "k")]
    holder, slot = slots[pick % len(slots)]
    secret = around[0] + " " + CANARY + " " + around[1]
    probe = CANARY
    if where in ("key", "ident-key"):
        probe = CANARY if where == "key" else IDENT_CANARY
        if isinstance(holder, dict) and slot in holder and probe not in holder:
            _rename(holder, slot, probe)
        else:
            holder[slot] = {probe: "v"}
    elif where == "inside":
        holder[slot] = secret
    elif where == "json-string":
        holder[slot] = json.dumps({"cmd": secret, "type": {"type": "string"}})
    elif where == "number":
        holder[slot], probe = NUMBER, str(NUMBER)
    elif where == "json-number":
        holder[slot], probe = json.dumps({"n": [NUMBER]}), str(NUMBER)
    else:
        holder[slot] = CANARY
    raw = json.dumps(body).encode()
    assert probe.encode() in raw
    ins = _inspect(path, raw, TablePolicy(dict(POLICY_TABLE)))
    assert ins.blocked or probe.encode() not in (ins.body or b"")


# -- the answer side ---------------------------------------------------------------------------

STREAMS = (
    (Operation.ANTHROPIC_MESSAGES, Provider.ANTHROPIC),
    (Operation.OPENAI_CHAT, Provider.OPENAI),
    (Operation.OPENAI_RESPONSES, Provider.OPENAI),
    (Operation.GEMINI_STREAM, Provider.GEMINI),
)
answer_values = st.recursive(
    st.one_of(scalars, st.just(f"see {PH}")),
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(keys, inner, max_size=6)),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=answer_values)
def test_restoring_a_whole_answer_takes_any_json(value: Any) -> None:
    """A non-streamed answer of any JSON shape is restored or passed, never a crash."""
    raw = json.dumps(value).encode()
    out = restore_body(raw, {PH: CANARY})
    json.loads(out)
    assert PH.encode() not in out or b"[REDACTED:" in raw


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    events=st.lists(answer_values, max_size=6),
    stream=st.sampled_from(STREAMS),
    step=st.sampled_from((1, 5, 10_000)),
)
def test_restoring_a_stream_takes_any_json_events(
    events: list[Any], stream: tuple[Operation, Provider], step: int
) -> None:
    """SSE events holding any JSON, fed in pieces of any size, are relayed without a crash."""
    raw = "".join(f"data: {json.dumps(e)}\n\n" for e in events).encode()
    restorer = AnswerStream(stream[0], stream[1], {PH: CANARY})
    out = b"".join(restorer.feed(raw[i : i + step]) for i in range(0, len(raw), step))
    out += restorer.close()
    assert out.count(b"data:") >= len(events)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=st.lists(answer_values, max_size=6))
def test_restoring_a_gemini_array_takes_any_json(events: list[Any]) -> None:
    """Gemini's JSON-array stream of any elements is relayed without a crash."""
    raw = json.dumps(events).encode()
    restorer = JsonArrayStream(AnswerStream(Operation.GEMINI_STREAM, Provider.GEMINI, {}))
    out = b"".join(restorer.feed(raw[i : i + 3]) for i in range(0, len(raw), 3))
    out += restorer.close()
    json.loads(out)
