"""Issue 12 holes and false blocks, issue 19.6: the real detectors and the built-in policy.

Each test pins one cause: data-URL-looking text, identifier keys, provider field names out of
place, base64 judged by content, duplicate keys in JSON strings, numbers, the model's own
output, credentials the API takes on purpose, and vendor addresses in tool definitions.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from domestique.detect import default_scanner
from domestique.keys import Fingerprinter, install_key
from domestique.proxy.pipeline import Inspection, inspect_request
from domestique.proxy.routes import Route, classify
from domestique.records import Action
from domestique.redact import PlaceholderMaker

from .conftest import BoundPolicy

KEY_ID = "AKIAZ3MHQX7B2LKWP4RN"  # made-up AWS access key id
STRIPE = "sk_live_abcdefghijklmnopqrstuvwx"  # made-up; letters and "_" only: an identifier
CARD = 4270961196796815  # made-up, Luhn-valid (not a famous test card): a JSON number
EMAIL = "jane.roe@corp-mail.de"
LINE = f"aws_access_key_id = {KEY_ID}\n"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DOMESTIQUE_HOME", str(tmp_path))
    return tmp_path


def _inspect(home: Path, body: dict[str, Any], path: str = "/v1/messages") -> Inspection:
    route = classify("POST", path, {})
    assert isinstance(route, Route)
    key = install_key(home)
    return inspect_request(
        route,
        json.dumps(body).encode(),
        content_encoding="",
        scanner=default_scanner(home),
        policy=BoundPolicy(home),
        maker=PlaceholderMaker(key),
        fingerprinter=Fingerprinter(key),
    )


def _user(content: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": content}]}


def _codes(ins: Inspection) -> list[str]:
    return [r.code for r in ins.reasons]


def _safe(ins: Inspection, *probes: bytes) -> bool:
    """Blocked, or none of ``probes`` is in what is forwarded."""
    return ins.body is None or not any(p in ins.body for p in probes)


# -- hole 1: text that looks like a data URL ---------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(f"data:text/plain;base64,{KEY_ID} is my key", id="not-base64"),
        pytest.param(
            "data:image/png;base64," + base64.b64encode(LINE.encode()).decode(),
            id="text-labelled-image",
        ),
        pytest.param(
            "data:;base64," + base64.urlsafe_b64encode(LINE.encode()).decode().rstrip("="),
            id="unknown-type-urlsafe",
        ),
    ],
)
def test_a_data_url_in_text_is_scanned_as_text_and_decoded(home: Path, text: str) -> None:
    """The string itself is scanned; a textual payload is decoded and scanned too."""
    for body, path in (
        (_user(text), "/v1/messages"),
        ({"model": "m", "system": text, "messages": []}, "/v1/messages"),
        ({"model": "e", "input": [text]}, "/v1/embeddings"),
        ({"contents": [{"parts": [{"text": text}]}]}, "/v1beta/models/g:generateContent"),
    ):
        ins = _inspect(home, body, path)
        assert _safe(ins, KEY_ID.encode(), text.encode()), path
        assert not ins.blocked, _codes(ins)


# -- hole 2: object keys -----------------------------------------------------------------------


@pytest.mark.parametrize("where", ["tool_input", "schema", "metadata"])
def test_an_identifier_shaped_secret_as_a_key_is_redacted(home: Path, where: str) -> None:
    """A key made only of letters and "_" is scanned like any value."""
    body: dict[str, Any] = _user("hi")
    if where == "tool_input":
        block = {"type": "tool_use", "id": "t", "name": "x", "input": {STRIPE: 1}}
        body["messages"].append({"role": "assistant", "content": [block]})
    elif where == "schema":
        schema = {"type": "object", "properties": {STRIPE: {"type": "string"}}}
        body["tools"] = [{"name": "t", "description": "d", "input_schema": schema}]
    else:
        body["metadata"] = {STRIPE: "x"}
    ins = _inspect(home, body)
    assert ins.action is Action.REDACT
    assert _safe(ins, STRIPE.encode())


# -- hole 3: provider field names out of place -------------------------------------------------


@pytest.mark.parametrize(
    "name", ["encrypted_content", "signature", "thoughtSignature", "thought_signature", "data"]
)
def test_provider_field_names_elsewhere_are_ordinary_text(home: Path, name: str) -> None:
    """In a tool input, a schema or metadata these names are text: redacted, not trusted."""
    block = {"type": "tool_use", "id": "t", "name": "x", "input": {name: KEY_ID}}
    body = _user("hi")
    body["messages"].append({"role": "assistant", "content": [block]})
    body["metadata"] = {"user_id": "u", name: {"deep": KEY_ID}}
    body["tools"] = [{"name": "t", "input_schema": {"properties": {name: {"default": KEY_ID}}}}]
    ins = _inspect(home, body)
    assert ins.action is Action.REDACT, _codes(ins)
    assert _safe(ins, KEY_ID.encode())


def test_gemini_function_call_args_named_like_signatures_are_text(home: Path) -> None:
    part = {"functionCall": {"name": "f", "args": {"thoughtSignature": KEY_ID}}}
    ins = _inspect(
        home, {"contents": [{"role": "model", "parts": [part]}]}, "/v1beta/models/g:generateContent"
    )
    assert ins.action is Action.REDACT
    assert _safe(ins, KEY_ID.encode())


@pytest.mark.parametrize(
    ("body", "path"),
    [
        pytest.param(
            {"model": "m", "input": [{"type": "reasoning", "encrypted_content": f"gAAA{KEY_ID}"}]},
            "/v1/responses",
            id="responses-encrypted_content",
        ),
        pytest.param(
            {"model": "m", "input": [{"type": "compaction", "encrypted_content": KEY_ID}]},
            "/v1/responses",
            id="responses-compaction",
        ),
        pytest.param(
            {"contents": [{"role": "model", "parts": [{"text": "a", "thoughtSignature": KEY_ID}]}]},
            "/v1beta/models/g:generateContent",
            id="gemini-thoughtSignature",
        ),
        pytest.param(
            {
                "model": "m",
                "messages": [
                    {
                        "role": "assistant",
                        "content": [{"type": "redacted_thinking", "data": KEY_ID}],
                    }
                ],
            },
            "/v1/messages",
            id="anthropic-redacted_thinking",
        ),
    ],
)
def test_ciphertext_at_its_position_that_matches_a_detector_blocks(
    home: Path, body: dict[str, Any], path: str
) -> None:
    ins = _inspect(home, body, path)
    assert ins.blocked
    assert _codes(ins) == ["proxy.secret_in_signed_part"]


# -- hole 4: base64 judged by content ----------------------------------------------------------

_VARIANTS = {
    "standard": base64.b64encode(LINE.encode()).decode(),
    "urlsafe-unpadded": base64.urlsafe_b64encode(("x?>" + LINE).encode()).decode().rstrip("="),
    "line-breaks": base64.encodebytes(LINE.encode() * 3).decode(),
    "latin-1": base64.b64encode(("caf\xe9 " + LINE).encode("latin-1")).decode(),
    "utf-16-bom": base64.b64encode(LINE.encode("utf-16")).decode(),
    "utf-16-le-no-bom": base64.b64encode(LINE.encode("utf-16-le")).decode(),
    "utf-16-be-no-bom": base64.b64encode(LINE.encode("utf-16-be")).decode(),
}
_MIMES = [
    "application/x-javascript",
    "application/rtf",
    "application/x-ndjson",
    "application/octet-stream",
    "application/pdf",
    "image/png",
]


@pytest.mark.parametrize("variant", sorted(_VARIANTS))
@pytest.mark.parametrize("mime", _MIMES)
def test_base64_text_is_found_whatever_the_label_and_encoding(
    home: Path, variant: str, mime: str
) -> None:
    """Gemini inlineData and OpenAI file_data: decoded, scanned, re-encoded as they came."""
    data = _VARIANTS[variant]
    gemini = {"contents": [{"parts": [{"inlineData": {"mimeType": mime, "data": data}}]}]}
    ins = _inspect(home, gemini, "/v1beta/models/g:generateContent")
    assert ins.action is Action.REDACT, _codes(ins)
    assert ins.body is not None
    sent = json.loads(ins.body)["contents"][0]["parts"][0]["inlineData"]["data"]
    raw = base64.b64decode(sent + "=" * (-len(sent) % 4), altchars=b"-_")
    for codec in ("utf-8", "utf-16", "latin-1"):
        assert KEY_ID.encode(codec)[2:] not in raw
    file = {"filename": "f", "file_data": f"data:{mime};base64,{data}"}
    chat = {
        "model": "m",
        "messages": [{"role": "user", "content": [{"type": "file", "file": file}]}],
    }
    ins = _inspect(home, chat, "/v1/chat/completions")
    assert ins.action is Action.REDACT, _codes(ins)


def test_reencoded_text_keeps_its_encoding(home: Path) -> None:
    """A UTF-16 payload with a BOM goes back as UTF-16 with the BOM; URL-safe stays URL-safe."""
    data = base64.urlsafe_b64encode((LINE + "!").encode("utf-16")).decode()  # 86 bytes
    assert data.endswith("=")
    data = data.rstrip("=")
    body = {"contents": [{"parts": [{"inlineData": {"mimeType": "text/plain", "data": data}}]}]}
    ins = _inspect(home, body, "/v1beta/models/g:generateContent")
    assert ins.body is not None
    sent = json.loads(ins.body)["contents"][0]["parts"][0]["inlineData"]["data"]
    assert "=" not in sent
    raw = base64.urlsafe_b64decode(sent + "=" * (-len(sent) % 4))
    assert raw.startswith(b"\xff\xfe")
    assert raw.decode("utf-16").startswith("aws_access_key_id = [REDACTED:aws_access_key_id:")


def test_a_non_base64_payload_is_scanned_as_the_text_it_is(home: Path) -> None:
    source = {"type": "base64", "media_type": "image/png", "data": f"not base64: {KEY_ID}"}
    ins = _inspect(home, _user([{"type": "image", "source": source}]))
    assert ins.action is Action.REDACT
    assert _safe(ins, KEY_ID.encode())


def test_real_images_stay_binary_and_recorded(home: Path) -> None:
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))).decode()
    source = {"type": "base64", "media_type": "image/png", "data": png}
    ins = _inspect(home, _user([{"type": "image", "source": source}]))
    assert ins.action is Action.ALLOW
    assert _codes(ins) == ["proxy.binary_unscanned"]


# -- hole 5: duplicate keys inside a JSON string -----------------------------------------------


def test_duplicate_keys_in_tool_arguments_are_all_scanned(home: Path) -> None:
    """``{"cmd": SECRET, "cmd": "ls"}``: a reader may take either; the string is scanned as it
    is forwarded, so the first value cannot hide behind the second."""
    args = f'{{"cmd": "{KEY_ID}", "cmd": "ls"}}'
    call = {"id": "c", "type": "function", "function": {"name": "sh", "arguments": args}}
    body = {"model": "m", "messages": [{"role": "assistant", "tool_calls": [call]}]}
    ins = _inspect(home, body, "/v1/chat/completions")
    assert ins.action is Action.REDACT
    assert _safe(ins, KEY_ID.encode())
    assert ins.body is not None
    sent = json.loads(ins.body)["messages"][0]["tool_calls"][0]["function"]["arguments"]
    assert sent.count('"cmd"') == 2  # forwarded as the text it is, redacted in place


# -- hole 6: numbers ---------------------------------------------------------------------------


@pytest.mark.parametrize("number", [CARD, float(CARD)])
def test_a_card_number_written_as_a_json_number_is_redacted(home: Path, number: float) -> None:
    block = {"type": "tool_use", "id": "t", "name": "pay", "input": {"card": number}}
    body = {"model": "m", "messages": [{"role": "assistant", "content": [block]}]}
    ins = _inspect(home, body)
    assert ins.action is Action.REDACT, _codes(ins)
    assert _safe(ins, str(CARD).encode())
    args = json.dumps({"card": number})
    call = {"id": "c", "type": "function", "function": {"name": "pay", "arguments": args}}
    ins = _inspect(
        home,
        {"model": "m", "messages": [{"role": "assistant", "tool_calls": [call]}]},
        "/v1/chat/completions",
    )
    assert ins.action is Action.REDACT
    assert _safe(ins, str(CARD).encode())


def test_ordinary_numbers_pass_unchanged(home: Path) -> None:
    body = {"model": "m", "max_tokens": 32000, "temperature": 0.7, "messages": [], "top_k": 5}
    ins = _inspect(home, body)
    assert ins.action is Action.ALLOW
    assert ins.body is not None
    assert json.loads(ins.body) == body


# -- false blocks: the model's own output ------------------------------------------------------


def test_replayed_model_thinking_never_blocks_a_session(home: Path) -> None:
    """Anthropic thinking, Responses reasoning summaries and Gemini thought parts that mention
    an e-mail are passed unmodified on every later turn (recorded, not refused)."""
    text = f"The user could mail {EMAIL} about it."
    cases = [
        (
            {
                "model": "m",
                "messages": [
                    {"role": "user", "content": "hi"},
                    {
                        "role": "assistant",
                        "content": [{"type": "thinking", "thinking": text, "signature": "c2ln"}],
                    },
                    {"role": "user", "content": "go on"},
                ],
            },
            "/v1/messages",
        ),
        (
            {
                "model": "m",
                "input": [
                    {
                        "type": "reasoning",
                        "id": "rs_1",
                        "summary": [{"type": "summary_text", "text": text}],
                        "encrypted_content": "gAAAAABn",
                    }
                ],
            },
            "/v1/responses",
        ),
        (
            {
                "contents": [
                    {
                        "role": "model",
                        "parts": [{"text": text, "thought": True, "thoughtSignature": "c2ln"}],
                    }
                ]
            },
            "/v1beta/models/g:generateContent",
        ),
    ]
    for body, path in cases:
        for _ in range(2):  # the next turn resends it: still fine
            ins = _inspect(home, body, path)
            assert not ins.blocked, (path, _codes(ins))
            assert ins.body is not None
            assert json.loads(ins.body) == body
            assert _codes(ins) == ["proxy.secret_in_model_output"]


def test_gemini_text_parts_that_are_not_thoughts_are_redacted(home: Path) -> None:
    body = {"contents": [{"role": "model", "parts": [{"text": f"mail {EMAIL}"}]}]}
    ins = _inspect(home, body, "/v1beta/models/g:generateContent")
    assert ins.action is Action.REDACT


# -- false blocks: credentials the API takes on purpose ----------------------------------------

TOKEN = "glpat-Zx8Kq2Lm4Np6Rt8Vw0Yb"  # made-up GitLab token


def test_mcp_connector_token_passes_and_is_recorded(home: Path) -> None:
    server = {
        "type": "url",
        "url": "https://mcp.example",
        "name": "gh",
        "authorization_token": TOKEN,
    }
    body = {**_user("hi"), "mcp_servers": [server]}
    ins = _inspect(home, body)
    assert ins.action is Action.ALLOW, _codes(ins)
    assert _codes(ins) == ["proxy.credential_by_design"]
    assert ins.body is not None
    assert json.loads(ins.body)["mcp_servers"] == [server]


def test_openai_mcp_tool_authorization_passes_and_is_recorded(home: Path) -> None:
    tool = {"type": "mcp", "server_label": "gh", "server_url": "https://m", "authorization": TOKEN}
    ins = _inspect(home, {"model": "m", "input": "hi", "tools": [tool]}, "/v1/responses")
    assert ins.action is Action.ALLOW
    assert _codes(ins) == ["proxy.credential_by_design"]


def test_the_same_token_elsewhere_is_still_redacted(home: Path) -> None:
    body = _user(f"my token is {TOKEN}")
    body["metadata"] = {"authorization_token": TOKEN}
    ins = _inspect(home, body)
    assert ins.action is Action.REDACT
    assert _safe(ins, TOKEN.encode())


def test_a_company_can_block_credentials_sent_by_design(home: Path) -> None:
    (home / "policy.toml").write_text(
        'version = 1\n[[rules]]\nid = "proxy-credential-by-design"\n'
        'codes = ["proxy.credential_by_design"]\naction = "block"\ncomponents = ["proxy"]\n'
    )
    server = {"type": "url", "url": "https://m", "name": "gh", "authorization_token": TOKEN}
    ins = _inspect(home, {**_user("hi"), "mcp_servers": [server]})
    assert ins.blocked
    assert _codes(ins) == ["proxy.credential_by_design"]


# -- issue 19.6: vendor addresses in the agent's own tool definitions --------------------------

BASH_TOOL = (
    "Executes a bash command. When committing, end the message with\n"
    "Co-Authored-By: Claude <noreply@anthropic.com>"
)


def test_vendor_noreply_address_in_a_tool_definition_is_not_altered(home: Path) -> None:
    schema = {"type": "object", "properties": {"command": {"type": "string"}}}
    tools = [{"name": "Bash", "description": BASH_TOOL, "input_schema": schema}]
    ins = _inspect(home, {**_user("hi"), "tools": tools})
    assert ins.action is Action.ALLOW, _codes(ins)
    assert ins.reasons == ()
    assert ins.body is not None
    assert json.loads(ins.body)["tools"] == tools


@pytest.mark.parametrize(
    "text", [f"Mail {EMAIL} for access", f"Use the key {KEY_ID} to deploy"], ids=["pii", "secret"]
)
def test_personal_data_and_secrets_in_tool_definitions_are_still_redacted(
    home: Path, text: str
) -> None:
    tools = [{"name": "Deploy", "description": text, "input_schema": {"type": "object"}}]
    ins = _inspect(home, {**_user("hi"), "tools": tools})
    assert ins.action is Action.REDACT
    assert ins.body is not None
    assert "[REDACTED:" in json.loads(ins.body)["tools"][0]["description"]


def test_a_role_address_is_exempt_in_tool_definitions_only(home: Path) -> None:
    """``security@…`` in the agent's own tool text is not altered (a role mailbox is no
    person's, issue 17 round 8); a person's address in a user message is redacted."""
    text = "Report issues to security@vendor-tools.io"
    tools = [{"name": "Report", "description": text, "input_schema": {"type": "object"}}]
    ins = _inspect(home, {**_user("hi"), "tools": tools})
    assert ins.action is Action.ALLOW, _codes(ins)
    ins = _inspect(home, _user("Report issues to maria.lopez@vendor-tools.io"))
    assert ins.action is Action.REDACT


def test_provider_member_names_hold_nothing_the_detectors_find(home: Path) -> None:
    """The member names the walker does not scan as keys are fixed words: the real detectors
    find nothing in any of them, alone or side by side."""
    from domestique.proxy.fields import PROVIDER_KEYS

    scanner = default_scanner(home)
    assert not scanner.scan("\n\n".join(sorted(PROVIDER_KEYS)))
    assert not scanner.scan(" ".join(sorted(PROVIDER_KEYS)))


# -- hole 7: the query string and headers ------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "credential"),
    [
        ("/v1/messages", "x-api-key"),
        ("/v1/messages", "authorization"),
        ("/v1/chat/completions", "authorization"),
        ("/v1/chat/completions", "api-key"),
        ("/v1beta/models/g:generateContent", "x-goog-api-key"),
    ],
)
def test_request_line_findings_spare_only_the_provider_credential(
    home: Path, path: str, credential: str
) -> None:
    from domestique.proxy.pipeline import RequestLine, request_line_findings

    route = classify("POST", path, {})
    assert isinstance(route, Route)
    scanner, policy = default_scanner(home), BoundPolicy(home)
    ok = RequestLine("alt=sse", ((credential, f"Bearer {KEY_ID}"), ("user-agent", "cli/1.0")))
    assert request_line_findings(route, ok, scanner, policy) == []
    encoded = KEY_ID[:4] + "%" + KEY_ID[4].encode().hex().upper() + KEY_ID[5:]
    bad = RequestLine(f"note={encoded}", (("cookie", f"s={KEY_ID}"), ("x-note", KEY_ID)))
    found = request_line_findings(route, bad, scanner, policy)
    assert [(code, ev.where) for code, _, ev in found] == [
        ("proxy.secret_in_path", "query.note"),
        ("proxy.secret_in_header", "header.cookie"),
        ("proxy.secret_in_header", "header.x-note"),
    ]
    assert all(KEY_ID not in message for _, message, _ in found)


def test_the_binary_memory_tells_payloads_apart_character_by_character() -> None:
    """The memory of payloads found not to be text is keyed by every character: two payloads
    that differ only in a non-ASCII character never share a verdict."""
    from domestique.proxy.payloads import _BinaryVerdicts

    memo = _BinaryVerdicts(min_chars=8)
    a, b = "QUJD" * 4 + "é", "QUJD" * 4 + "ü"
    memo.add(memo.digest(a))
    assert memo.known(memo.digest(a))
    assert not memo.known(memo.digest(b))
