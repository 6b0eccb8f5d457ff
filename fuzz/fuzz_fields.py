"""The JSON field walker: every string of a body found, and a redaction that sticks.

Invariants, for any JSON object shaped like the providers' bodies (messages, parts, tool calls
with JSON-string arguments, base64 text parts, thinking blocks): ``extract_fields`` returns or
raises ``BodyError`` with a registered code, nothing else; a plain text field's ``text`` is
the value it names; after every text field holding a secret is rewritten and
``apply_replacements`` runs, walking the result again finds the secret in no text field (it
may only remain in a signed or binary part, which the pipeline blocks on or reports); and
rewriting nothing leaves the body exactly as it was.
"""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

from hypothesis import strategies as st

from domestique.proxy.body import BodyError, parse_json_object
from domestique.proxy.codes import REASON_CODES
from domestique.proxy.fields import FieldKind, apply_replacements, extract_fields

from ._harness import Target, mutated

CODES = frozenset(c.code for c in REASON_CODES)
SECRET = "dq_canary_7Rk2Qm9Lx4Vb8Nw3Zp6T"
KEYS = [
    "type",
    "text",
    "content",
    "arguments",
    "input",
    "data",
    "mimeType",
    "media_type",
    "thinking",
    "signature",
    "parts",
    "messages",
    "role",
    "name",
    "args",
    "inlineData",
    "functionCall",
    "encrypted_content",
    "tool_use",
    "output",
    "format",
    "x y",
    SECRET,
]
TYPES = [
    "text",
    "thinking",
    "redacted_thinking",
    "base64",
    "tool_use",
    "function_call",
    "input_text",
    "reasoning",
    "image",
    "document",
]
TEXTS = st.one_of(
    st.sampled_from(["", "hello", SECRET, f"use {SECRET} now", "text/plain", "image/png"]),
    st.sampled_from(TYPES),
    st.text(max_size=12),
)


def _b64_part(text: str) -> dict[str, Any]:
    return {"mimeType": "text/plain", "data": base64.b64encode(text.encode()).decode()}


def _json_arg(value: Any) -> dict[str, Any]:
    return {"type": "function_call", "arguments": json.dumps(value)}


VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | TEXTS,
    lambda c: st.one_of(
        st.lists(c, max_size=4),
        st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), c, max_size=5),
        c.map(_json_arg),
        TEXTS.map(_b64_part),
    ),
    max_leaves=30,
)


def _bodies(corpus: list[bytes]) -> st.SearchStrategy[bytes]:
    objects = st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=6)
    return st.one_of(objects.map(lambda o: json.dumps(o).encode()), mutated(corpus))


def check(raw: bytes) -> None:
    try:
        body = parse_json_object(raw)
    except BodyError as exc:
        assert exc.code in CODES
        return None
    before = json.dumps(body, sort_keys=True)
    try:
        ex = extract_fields(body)
    except BodyError as exc:
        assert exc.code in CODES, exc.code
        return None
    for f in ex.fields:
        if f.is_key:
            assert f.key in f.holder
            assert f.text == f.key
        elif f.json_string is None and f.encoding is None and f.payload is None and not f.number:
            assert f.holder[f.key] == f.text
    apply_replacements(ex, {})
    assert json.dumps(body, sort_keys=True) == before, "rewriting nothing changed the body"
    body = copy.deepcopy(body)
    ex = extract_fields(body)
    new = {
        i: f.text.replace(SECRET, "[REDACTED]")
        for i, f in enumerate(ex.fields)
        if f.kind is FieldKind.TEXT and SECRET in f.text
    }
    apply_replacements(ex, new)
    for f in extract_fields(body).fields:
        if f.kind is FieldKind.TEXT:
            assert SECRET not in f.text, f"the secret survived redaction at {f.path}"
    return False


TARGET = Target("fields", _bodies, check)
