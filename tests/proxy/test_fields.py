"""Field extraction: every text-bearing field is found, signed and binary parts are told apart."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from domestique.proxy.body import BodyError
from domestique.proxy.fields import FieldKind, apply_replacements, extract_fields

S = "SECRET"
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01").decode()
PDF = base64.b64encode(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<</Filter/FlateDecode>>\n").decode()
WAV = base64.b64encode(b"RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00").decode()


def _kinds(body: dict[str, Any]) -> dict[str, tuple[str, FieldKind]]:
    return {f.path: (f.text, f.kind) for f in extract_fields(body).fields}


def _paths_with_secret(body: dict[str, Any]) -> set[str]:
    return {p for p, (t, k) in _kinds(body).items() if S in t and k is FieldKind.TEXT}


def test_anthropic_positions_are_all_text_fields() -> None:
    """System, text, tool_result (string and blocks), tool_use input, documents, tools."""
    body = {
        "model": "claude",
        "system": [{"type": "text", "text": S}],
        "messages": [
            {"role": "user", "content": S},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t", "content": S},
                    {
                        "type": "tool_result",
                        "tool_use_id": "t",
                        "content": [{"type": "text", "text": S}],
                    },
                    {
                        "type": "document",
                        "source": {"type": "text", "media_type": "text/plain", "data": S},
                        "title": S,
                        "context": S,
                    },
                    {
                        "type": "document",
                        "source": {"type": "content", "content": [{"type": "text", "text": S}]},
                    },
                    {
                        "type": "search_result",
                        "source": "u",
                        "title": "t",
                        "content": [{"type": "text", "text": S}],
                    },
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t",
                        "name": "Bash",
                        "input": {"command": S, "nested": {"deep": [S]}},
                    }
                ],
            },
        ],
        "tools": [
            {
                "name": "n",
                "description": S,
                "input_schema": {"properties": {"x": {"description": S}}},
            }
        ],
    }
    assert _paths_with_secret(body) == {
        "system[0].text",
        "messages[0].content",
        "messages[1].content[0].content",
        "messages[1].content[1].content[0].text",
        "messages[1].content[2].source.data",
        "messages[1].content[2].title",
        "messages[1].content[2].context",
        "messages[1].content[3].source.content[0].text",
        "messages[1].content[4].content[0].text",
        "messages[2].content[0].input.command",
        "messages[2].content[0].input.nested.deep[0]",
        "tools[0].description",
        "tools[0].input_schema.properties.x.description",
    }


def test_thinking_is_signed_and_its_signature_opaque() -> None:
    """Thinking text, the signature and redacted data are scanned but marked signed (never
    modified): ciphertext that matches a detector is not ciphertext."""
    body = {
        "messages": [
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": S, "signature": "sig" + S},
                    {"type": "redacted_thinking", "data": "enc" + S},
                ],
            }
        ]
    }
    ex = extract_fields(body)
    kinds = {f.path: f.kind for f in ex.fields}
    assert kinds["messages[0].content[0].thinking"] is FieldKind.MODEL
    assert kinds["messages[0].content[0].signature"] is FieldKind.SIGNED
    assert kinds["messages[0].content[1].data"] is FieldKind.SIGNED
    assert ex.opaque == 2


def test_binary_parts_are_reported_not_scanned() -> None:
    """Base64 images, PDFs, audio and files whose bytes are not text are binary fields;
    a data: URL in a text position is text (the model reads it), its binary payload aside."""
    body = {
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": PNG},
                    },
                    {
                        "type": "document",
                        "source": {
                            "type": "base64",
                            "media_type": "application/pdf",
                            "data": PDF,
                        },
                    },
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                    {"type": "input_audio", "input_audio": {"data": WAV, "format": "wav"}},
                    {
                        "type": "file",
                        "file": {"file_data": f"data:application/pdf;base64,{PDF}", "filename": S},
                    },
                    {
                        "type": "image_url",
                        "image_url": {"url": "https://example.com/x.png?sig=" + S},
                    },
                ],
            }
        ]
    }
    kinds = _kinds(body)
    binary = {p for p, (_, k) in kinds.items() if k is FieldKind.BINARY}
    assert binary == {
        "messages[0].content[0].source.data",
        "messages[0].content[1].source.data",
        "messages[0].content[3].input_audio.data",
        "messages[0].content[4].file.file_data",
    }
    assert kinds["messages[0].content[2].image_url.url"][1] is FieldKind.TEXT
    # A file name and a plain URL are text, scanned.
    assert _paths_with_secret(body) == {
        "messages[0].content[4].file.filename",
        "messages[0].content[5].image_url.url",
    }


def test_openai_chat_tool_call_arguments_are_parsed_and_every_leaf_scanned() -> None:
    """JSON-string arguments are parsed; each leaf is a field with a path into the JSON."""
    args = json.dumps({"cmd": S, "env": {"K": S}, "list": [1, S]})
    body = {
        "messages": [
            {"role": "system", "content": S},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": "sh", "arguments": args}},
                ],
                "function_call": {"name": "f", "arguments": "not json " + S},
            },
            {"role": "tool", "tool_call_id": "c", "content": [{"type": "text", "text": S}]},
        ],
        "tools": [
            {
                "type": "function",
                "function": {"name": "f", "description": S, "parameters": {"x": S}},
            }
        ],
    }
    assert _paths_with_secret(body) == {
        "messages[0].content",
        "messages[1].tool_calls[0].function.arguments<json>.cmd",
        "messages[1].tool_calls[0].function.arguments<json>.env.K",
        "messages[1].tool_calls[0].function.arguments<json>.list[1]",
        "messages[1].function_call.arguments",
        "messages[2].content[0].text",
        "tools[0].function.description",
        "tools[0].function.parameters.x",
    }


def test_responses_items_including_local_shell_env() -> None:
    """Responses input items: outputs, arguments, shell env, patches; reasoning is signed."""
    body = {
        "instructions": S,
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": S}]},
            {
                "type": "function_call",
                "call_id": "c",
                "name": "f",
                "arguments": json.dumps({"a": S}),
            },
            {"type": "function_call_output", "call_id": "c", "output": S},
            {
                "type": "local_shell_call",
                "action": {"type": "exec", "command": ["ls"], "env": {"TOKEN": S}},
            },
            {
                "type": "apply_patch_call",
                "operation": {"type": "update_file", "path": "p", "diff": S},
            },
            {"type": "mcp_call", "arguments": json.dumps([S]), "output": S},
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": S}],
                "encrypted_content": S,
            },
            {"type": "brand_new_item", "whatever": {"deep": S}},
        ],
    }
    kinds = _kinds(body)
    assert _paths_with_secret(body) == {
        "instructions",
        "input[0].content[0].text",
        "input[1].arguments<json>.a",
        "input[2].output",
        "input[3].action.env.TOKEN",
        "input[4].operation.diff",
        "input[5].arguments<json>[0]",
        "input[5].output",
        "input[7].whatever.deep",
    }
    assert kinds["input[6].summary[0].text"][1] is FieldKind.MODEL
    assert kinds["input[6].encrypted_content"][1] is FieldKind.SIGNED  # scanned, kept


def test_gemini_parts_function_args_and_responses() -> None:
    """Gemini: parts text, functionCall.args, functionResponse.response, systemInstruction."""
    body = {
        "systemInstruction": {"parts": [{"text": S}]},
        "contents": [
            {
                "role": "user",
                "parts": [{"text": S}, {"inlineData": {"mimeType": "image/png", "data": PNG}}],
            },
            {
                "role": "model",
                "parts": [
                    {"functionCall": {"name": "f", "args": {"q": S}}, "thoughtSignature": "sig" + S}
                ],
            },
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "f", "response": {"out": [S]}}}],
            },
        ],
        "tools": [{"functionDeclarations": [{"name": "f", "description": S}]}],
    }
    kinds = _kinds(body)
    assert _paths_with_secret(body) == {
        "systemInstruction.parts[0].text",
        "contents[0].parts[0].text",
        "contents[1].parts[0].functionCall.args.q",
        "contents[2].parts[0].functionResponse.response.out[0]",
        "tools[0].functionDeclarations[0].description",
    }
    assert kinds["contents[0].parts[1].inlineData.data"][1] is FieldKind.BINARY
    assert kinds["contents[1].parts[0].thoughtSignature"][1] is FieldKind.SIGNED


def test_unusual_object_keys_are_fields_too() -> None:
    """A key that is not a plain identifier (a secret used as a key) is scanned."""
    body = {
        "messages": [{"role": "user", "content": [{"type": "tool_use", "input": {S + "-123": 1}}]}]
    }
    assert 'messages[0].content[0].input["SECRET-123"]<key>' in _kinds(body)


def test_nesting_deeper_than_the_limit_is_refused() -> None:
    """The walker stops at max_depth with proxy.nesting_too_deep."""
    deep: Any = S
    for _ in range(80):
        deep = {"a": deep}
    with pytest.raises(BodyError) as info:
        extract_fields({"messages": deep}, max_depth=64)
    assert info.value.code == "proxy.nesting_too_deep"


def test_apply_replacements_writes_values_keys_and_json_arguments() -> None:
    """Redacted texts go back into values, keys, and re-serialised JSON-string arguments."""
    body: dict[str, Any] = {
        "a": [S],
        "k": {S + "!": "v"},
        "tool_calls": [{"function": {"arguments": json.dumps({"x": S, "y": 2})}}],
    }
    ex = extract_fields(body)
    new = {i: f.text.replace(S, "[X]") for i, f in enumerate(ex.fields) if S in f.text}
    apply_replacements(ex, new)
    assert body["a"] == ["[X]"]
    assert body["k"] == {"[X]!": "v"}
    assert json.loads(body["tool_calls"][0]["function"]["arguments"]) == {"x": "[X]", "y": 2}


def test_signed_fields_cannot_be_rewritten() -> None:
    """apply_replacements refuses to touch a signed field or the model's own output."""
    block = {"type": "thinking", "thinking": S, "signature": "x"}
    ex = extract_fields({"messages": [{"role": "assistant", "content": [block]}]})
    for kind in (FieldKind.SIGNED, FieldKind.MODEL):
        index = next(i for i, f in enumerate(ex.fields) if f.kind is kind)
        with pytest.raises(ValueError, match="only text"):
            apply_replacements(ex, {index: "x"})


def test_base64_text_parts_are_decoded_and_re_encoded() -> None:
    """A base64 part holding text is scanned as its text whatever its label; a redaction goes
    back encoded; bytes that are not text stay binary."""
    import base64

    data = base64.b64encode(f"token {S}".encode()).decode()
    body: dict[str, Any] = {
        "a": {"type": "file", "file": {"file_data": f"data:text/plain;base64,{data}"}},
        "b": {"inlineData": {"mimeType": "application/json", "data": data}},
        "c": {"inlineData": {"mimeType": "application/octet-stream", "data": data}},
        "d": {"inlineData": {"mimeType": "text/plain", "data": PNG}},
    }
    ex = extract_fields(body)
    kinds = {f.path: (f.text, f.kind) for f in ex.fields}
    assert kinds["a.file.file_data<base64>"] == (f"token {S}", FieldKind.TEXT)
    assert kinds["b.inlineData.data<base64>"] == (f"token {S}", FieldKind.TEXT)
    assert kinds["c.inlineData.data<base64>"] == (f"token {S}", FieldKind.TEXT)  # by content
    assert kinds["d.inlineData.data"][1] is FieldKind.BINARY  # an image labelled text
    new = {i: f.text.replace(S, "[X]") for i, f in enumerate(ex.fields) if S in f.text}
    apply_replacements(ex, new)
    assert (
        body["a"]["file"]["file_data"]
        == "data:text/plain;base64," + base64.b64encode(b"token [X]").decode()
    )
    assert base64.b64decode(body["b"]["inlineData"]["data"]) == b"token [X]"


def test_a_data_url_prefix_and_payload_are_rewritten_together() -> None:
    """A data URL in text whose payload is text: its prefix and decoded payload are separate
    fields; redacting both writes one string (new prefix, payload re-encoded)."""
    payload = base64.b64encode(f"token {S}".encode()).decode()
    body: dict[str, Any] = {"messages": [{"role": "user", "content": f"data:{S};base64,{payload}"}]}
    ex = extract_fields(body)
    kinds = {f.path: f.text for f in ex.fields}
    assert kinds["messages[0].content<prefix>"] == f"data:{S};base64,"
    assert kinds["messages[0].content<base64>"] == f"token {S}"
    new = {i: f.text.replace(S, "[X]") for i, f in enumerate(ex.fields) if S in f.text}
    assert len(new) == 2
    apply_replacements(ex, new)
    head, _, data = body["messages"][0]["content"].partition(",")
    assert head == "data:[X];base64"
    assert base64.b64decode(data) == b"token [X]"


def test_payload_verdicts_never_skip_a_text_payload() -> None:
    """The per-process memory of payloads found not to be text only ever answers "not text"
    for the very same string; a text payload is decoded every time."""
    from domestique.proxy.payloads import read_payload

    text = base64.b64encode(("line of text\n" * 1000).encode()).decode()
    noise = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40).decode()
    for _ in range(2):
        found = read_payload(text)
        assert found is not None
        assert found[0].startswith("line of text")
        assert read_payload(noise) is None
