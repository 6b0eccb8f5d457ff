"""The request pipeline: scan once, decide per code, redact or block, forward what was judged."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest

from domestique.keys import Fingerprinter
from domestique.proxy.body import BodyLimits
from domestique.proxy.pipeline import Inspection, inspect_request
from domestique.proxy.routes import Route, classify
from domestique.records import Action
from domestique.redact import PlaceholderMaker

from .conftest import CANARY, CanaryScanner, TablePolicy

KEY = b"p" * 32


def _route(path: str = "/v1/messages") -> Route:
    route = classify("POST", path, {})
    assert isinstance(route, Route)
    return route


def _inspect(
    body: dict[str, Any] | bytes,
    *,
    path: str = "/v1/messages",
    encoding: str = "",
    policy: TablePolicy | None = None,
    scanner: CanaryScanner | None = None,
    limits: BodyLimits | None = None,
) -> Inspection:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return inspect_request(
        _route(path),
        raw,
        content_encoding=encoding,
        scanner=scanner or CanaryScanner(),
        policy=policy or TablePolicy(),
        maker=PlaceholderMaker(KEY),
        fingerprinter=Fingerprinter(KEY),
        limits=limits,
    )


def _anthropic(text: str) -> dict[str, Any]:
    return {"model": "claude-x", "max_tokens": 10, "messages": [{"role": "user", "content": text}]}


def test_clean_request_is_allowed_and_reserialised() -> None:
    """No finding: allow; the body forwarded is the parsed object, re-serialised."""
    ins = _inspect(b'{"model": "claude-x",  "messages": [{"role":"user","content":"hi"}]}')
    assert ins.action is Action.ALLOW
    assert ins.body == b'{"model":"claude-x","messages":[{"role":"user","content":"hi"}]}'
    assert (ins.model, ins.mapping, ins.fields_scanned) == ("claude-x", {}, 3)


def test_secret_is_redacted_with_mapping_for_restoring() -> None:
    """A secret becomes its placeholder in the forwarded body; the mapping restores it."""
    ins = _inspect(_anthropic(f"key {CANARY} end"))
    assert ins.action is Action.REDACT
    assert ins.body is not None
    assert CANARY.encode() not in ins.body
    ((ph, value),) = ins.mapping.items()
    assert value == CANARY
    assert json.loads(ins.body)["messages"][0]["content"] == f"key {ph} end"
    assert ins.reasons[0].code == "secret.canary"
    assert ins.reasons[0].evidence[0].where == "messages[0].content"


def test_placeholders_are_identical_across_requests() -> None:
    """The same secret gives the same placeholder in two requests (caching keeps working)."""
    a = _inspect(_anthropic(f"{CANARY}"))
    b = _inspect({"model": "m", "system": f"sys {CANARY}", "messages": []})
    assert list(a.mapping) == list(b.mapping)


def test_duplicate_keys_cannot_smuggle_a_secret() -> None:
    """With a duplicate key, the value scanned is the value forwarded (the other is gone)."""
    raw = b'{"messages": [{"role":"user","content":"' + CANARY.encode() + b'"}], "messages": []}'
    ins = _inspect(raw)
    assert ins.body is not None
    assert CANARY.encode() not in ins.body


@pytest.mark.parametrize(
    ("raw", "forwarded"),
    [
        # Beyond 64 bits: orjson refuses it, the standard library writes it exactly.
        (b'{"n": 123456789012345678901234567890}', b'{"n":123456789012345678901234567890}'),
        (b'{"n": -9223372036854775809}', b'{"n":-9223372036854775809}'),
        # A lone surrogate escape cannot be written as UTF-8: it stays an escape.
        (b'{"s": "a\\ud800b"}', b'{"s":"a\\ud800b"}'),
        (b'{"\\udc00": 1}', b'{"\\udc00":1}'),
        (b'{"a": 1, "a": 2, "f": 1e16, "z": -0.0, "u": "\\u00e9\\u2028"}', None),
    ],
)
def test_reserialised_body_is_the_parsed_value_exactly(raw: bytes, forwarded: bytes | None) -> None:
    """The fast encoder and its fallback forward exactly the value parsed, never a lossy one."""
    ins = _inspect(raw)
    assert ins.body is not None
    if forwarded is not None:
        assert ins.body == forwarded
    assert json.loads(ins.body) == json.loads(raw)


def test_blocking_code_blocks_with_no_body() -> None:
    """A code the policy blocks (customer record) stops the whole request."""
    ins = _inspect(_anthropic(f"blockme and {CANARY}"))
    assert ins.blocked
    assert ins.action is Action.BLOCK
    assert "records.customer" in [r.code for r in ins.reasons]


def test_allow_and_record_leaves_the_text_but_reports_it() -> None:
    """A policy of allow forwards the value and still names the finding in the reasons."""
    policy = TablePolicy({"secret.": Action.ALLOW})
    ins = _inspect(_anthropic(CANARY), policy=policy)
    assert ins.action is Action.ALLOW
    assert ins.body is not None
    assert CANARY.encode() in ins.body
    assert [r.code for r in ins.reasons] == ["secret.canary"]


def test_secret_in_a_signature_blocks_and_is_not_modified() -> None:
    """A finding inside a thinking block's signature cannot be redacted, and ciphertext that
    matches a detector is not ciphertext: proxy.secret_in_signed_part."""
    body = {
        "model": "m",
        "messages": [
            {
                "role": "assistant",
                "content": [{"type": "thinking", "thinking": "t", "signature": CANARY}],
            }
        ],
    }
    ins = _inspect(body)
    assert ins.blocked
    assert [r.code for r in ins.reasons] == ["proxy.secret_in_signed_part"]


@pytest.mark.parametrize("action", [Action.ALLOW, Action.BLOCK])
def test_finding_in_the_models_own_thinking_follows_its_policy(action: Action) -> None:
    """The model's replayed thinking is never modified; a finding there is recorded as
    proxy.secret_in_model_output, which passes by default and can be made to block."""
    body = {
        "model": "m",
        "messages": [
            {
                "role": "assistant",
                "content": [{"type": "thinking", "thinking": CANARY, "signature": "s"}],
            }
        ],
    }
    table = {"proxy.secret_in_model_output": action, **TablePolicy().table}
    ins = _inspect(body, policy=TablePolicy(table))
    assert [r.code for r in ins.reasons] == ["proxy.secret_in_model_output"]
    assert ins.blocked is (action is Action.BLOCK)
    if ins.body is not None:
        assert json.loads(ins.body) == body


def test_binary_part_is_recorded_and_follows_policy() -> None:
    """An image is reported as proxy.binary_unscanned; allow forwards, block stops."""
    body = {
        "model": "m",
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "image",
                        "source": {
                            "type": "base64",
                            "media_type": "image/png",
                            "data": "iVBORw0KGgo=",
                        },
                    }
                ],
            }
        ],
    }
    ins = _inspect(body)
    assert ins.action is Action.ALLOW
    assert [r.code for r in ins.reasons] == ["proxy.binary_unscanned"]
    strict = TablePolicy({"proxy.binary_unscanned": Action.BLOCK})
    assert _inspect(body, policy=strict).blocked


@pytest.mark.parametrize(
    ("raw", "encoding", "code"),
    [
        (b'{"a":', "", "proxy.truncated_body"),
        (b"not json", "", "proxy.malformed_body"),
        (b"{}", "x-unknown", "proxy.unsupported_encoding"),
        (gzip.compress(b'{"a": 1}')[:10], "gzip", "proxy.truncated_body"),
        (b'{"a":' + b"[" * 70 + b"]" * 70 + b"}", "", "proxy.nesting_too_deep"),
    ],
)
def test_unreadable_bodies_block_with_their_code(raw: bytes, encoding: str, code: str) -> None:
    """A body that cannot be decoded or parsed is blocked with its own code, nothing forwarded."""
    ins = _inspect(raw, encoding=encoding)
    assert ins.blocked
    assert code in [r.code for r in ins.reasons]


def test_unreadable_body_blocks_even_if_policy_allows_its_code() -> None:
    """Nothing unscanned is ever forwarded, whatever the policy says about the code."""
    lax = TablePolicy({"proxy.": Action.ALLOW})
    assert _inspect(b"not json", policy=lax).blocked


def test_compressed_body_is_scanned_after_decoding() -> None:
    """A gzip body is decoded, scanned, and forwarded decoded (and redacted)."""
    raw = gzip.compress(json.dumps(_anthropic(CANARY)).encode())
    ins = _inspect(raw, encoding="gzip")
    assert ins.action is Action.REDACT
    assert ins.body is not None
    assert CANARY.encode() not in ins.body


def test_detector_error_spanning_everything_blocks() -> None:
    """A scanner crash reported as engine.detector_error blocks the request."""

    class Broken(CanaryScanner):
        def scan(self, text: str) -> list[Any]:
            from .conftest import CanaryFinding

            return [CanaryFinding("engine.detector_error", 0, len(text), "", "")]

    assert _inspect(_anthropic("hello"), scanner=Broken()).blocked


def test_one_scan_per_request() -> None:
    """All fields are scanned in a single pass over their joined text, and the seams between
    conversation texts in one more (a body with one text has no seam)."""
    scanner = CanaryScanner()
    _inspect(
        {"model": "m", "system": "a", "messages": [{"role": "user", "content": "b"}]},
        scanner=scanner,
    )
    assert scanner.calls == 2
    scanner = CanaryScanner()
    _inspect(_anthropic("just one text"), scanner=scanner)
    assert scanner.calls == 1


def test_a_finding_split_across_messages_is_redacted_in_both_parts() -> None:
    """A secret split over adjacent messages (roles and keys between them left out) is found
    by the seam scan; each part is redacted where it lies."""
    body = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "text before " + CANARY[:12]},
            {"role": "user", "content": [{"type": "text", "text": CANARY[12:] + " after"}]},
        ],
    }
    ins = _inspect(body)
    assert ins.action is Action.REDACT
    assert ins.body is not None
    sent = json.loads(ins.body)["messages"]
    assert sent[0]["content"].startswith("text before [REDACTED:canary:")
    assert sent[1]["content"][0]["text"].startswith("[REDACTED:canary:")
    assert sent[1]["content"][0]["text"].endswith(" after")
    assert "".join(ins.mapping.values()) == CANARY


def test_a_finding_around_a_placeholder_shaped_string_is_redacted() -> None:
    """``first half[REDACTED:x:12345678]second half``: the model can drop the insert."""
    ins = _inspect(_anthropic(f"key {CANARY[:9]}[REDACTED:x:12345678]{CANARY[9:]} ok"))
    assert ins.action is Action.REDACT
    assert ins.body is not None
    assert CANARY[:9].encode() not in ins.body
    assert CANARY[9:].encode() not in ins.body


def test_placeholder_hash_is_not_found_again() -> None:
    """A resent placeholder's hex tail is not treated as a new secret."""

    class HexScanner(CanaryScanner):
        def scan(self, text: str) -> list[Any]:
            import re

            from .conftest import CanaryFinding

            return [
                CanaryFinding("secret.hex", m.start(), m.end(), "", "")
                for m in re.finditer(r"[0-9a-f]{8}", text)
            ]

    ph = PlaceholderMaker(KEY).placeholder("secret.canary", CANARY)
    ins = _inspect(_anthropic(f"earlier {ph}"), scanner=HexScanner())
    assert ins.action is Action.ALLOW


@pytest.mark.parametrize(
    "context",
    [
        "{ph}",
        "token={ph}",
        'api_key = "{ph}"',
        "key={ph}&x=1",
        "postgres://u:{ph}@h/db",
        "x{ph}y",
        "secret {ph} {ph}",
        "export AWS_SECRET_ACCESS_KEY={ph}",
    ],
)
@pytest.mark.parametrize(
    "code", ["secret.password_assignment", "secret.generic_secret", "secret.github_token"]
)
def test_resent_placeholders_are_not_found_again_by_the_real_scanner(
    context: str, code: str, tmp_path: Any
) -> None:
    """A history holding placeholders passes unchanged through the real detection engine.

    ``password_assignment:`` in a placeholder's type reads as a keyword, its hex tail (and
    what follows up to a space) as the value: that artefact must not be redacted again.
    """
    from domestique.detect import default_scanner

    ph = PlaceholderMaker(KEY).placeholder(code, "an earlier value")
    text = context.format(ph=ph)
    ins = _inspect(_anthropic(text), scanner=default_scanner(tmp_path))  # type: ignore[arg-type]
    assert ins.action is Action.ALLOW, [r.code for r in ins.reasons]
    assert ins.body is not None
    assert json.loads(ins.body)["messages"][0]["content"] == text


def test_a_value_glued_to_a_placeholder_is_still_redacted() -> None:
    """A finding starting in a hex tail keeps what lies after the placeholder if long enough."""
    from .conftest import CanaryFinding

    ph = PlaceholderMaker(KEY).placeholder("secret.password_assignment", "old")
    text = f"password: {ph}Hunter2Hunter2 and {ph}@h/db"

    class Greedy(CanaryScanner):  # reads from each hex tail to the next space
        def scan(self, text: str) -> list[Any]:
            import re

            return [
                CanaryFinding("secret.password_assignment", m.start(), m.end(), "", "")
                for m in re.finditer(r"[0-9a-f]{8}\][^ ]*", text)
            ]

    ins = _inspect(_anthropic(text), scanner=Greedy())
    assert ins.body is not None
    out = json.loads(ins.body)["messages"][0]["content"]
    assert "Hunter2Hunter2" not in out
    assert out.startswith(f"password: {ph}[REDACTED:password_assignment:")
    assert out.endswith(f" and {ph}@h/db")


def test_responses_previous_response_id_and_stream_flags() -> None:
    """The pipeline reports stream and previous_response_id for the shell."""
    ins = _inspect(
        {"model": "gpt", "input": "hi", "stream": True, "previous_response_id": "resp_1"},
        path="/v1/responses",
    )
    assert (ins.stream, ins.previous_response_id) == (True, "resp_1")
    gem = _inspect({"contents": []}, path="/v1beta/models/gemini-x:streamGenerateContent")
    assert (gem.stream, gem.model) == (True, "gemini-x")


def test_scan_cache_skips_text_scanned_before_with_the_same_result() -> None:
    """Resent history is not scanned again; the redaction is the same as without the cache."""
    from domestique.proxy.pipeline import ScanCache

    cache = ScanCache(min_chars=10)
    long_text = "x" * 50 + CANARY + "y" * 50
    body = {"model": "m", "messages": [{"role": "user", "content": long_text}]}
    seen: list[str] = []

    class Recording(CanaryScanner):
        def scan(self, text: str) -> list[Any]:
            seen.append(text)
            return super().scan(text)

    recording = Recording()

    def run(b: dict[str, Any]) -> Inspection:
        return inspect_request(
            _route(),
            json.dumps(b).encode(),
            content_encoding="",
            scanner=recording,
            policy=TablePolicy(),
            maker=PlaceholderMaker(KEY),
            fingerprinter=Fingerprinter(KEY),
            cache=cache,
        )

    first = run(body)
    second_body = {
        "model": "m",
        "messages": [*body["messages"], {"role": "user", "content": "new"}],
    }
    second = run(second_body)
    assert long_text in seen[0]
    assert long_text not in seen[1]  # only the new and the short fields were scanned
    assert first.mapping == second.mapping
    assert (
        json.loads(second.body or b"{}")["messages"][0]
        == json.loads(first.body or b"{}")["messages"][0]
    )
    # Cached: the long text, and the seam window around it and the new message.
    assert (cache.hits, len(cache)) == (1, 2)


def test_scan_cache_never_keeps_engine_errors_and_stays_bounded() -> None:
    """A detector error is not cached (it is retried); the cache holds at most max_entries."""
    from domestique.proxy.pipeline import ScanCache

    cache = ScanCache(max_entries=2, min_chars=1)
    cache.put("a", (("engine.detector_error", 0, 1, "", ""),))
    assert cache.get("a") is None
    for text in ("b", "c", "d"):
        cache.put(text, ())
    assert len(cache) == 2
    assert cache.get("b") is None  # least recently used, evicted
    assert cache.get("d") == ()


def test_scan_cache_answers_only_for_the_scanner_that_filled_it() -> None:
    """New detector data (a new scanner) empties the cache: text cached clean is scanned again."""
    from domestique.proxy.pipeline import ScanCache

    cache = ScanCache(min_chars=20)  # the text only, not the keys
    text = "the deploy password is hunter2-hunter2 " * 3

    class KnowsValue(CanaryScanner):  # like a scanner rebuilt after ``records add``
        def scan(self, text: str) -> list[Any]:
            from .conftest import CanaryFinding

            found = super().scan(text)
            at = text.find("hunter2-hunter2")
            while at >= 0:
                found.append(CanaryFinding("secret.known_value", at, at + 15, "fp", "hu…r2"))
                at = text.find("hunter2-hunter2", at + 1)
            return found

    def run(scanner: CanaryScanner) -> Inspection:
        return inspect_request(
            _route(),
            json.dumps(_anthropic(text)).encode(),
            content_encoding="",
            scanner=scanner,
            policy=TablePolicy(),
            maker=PlaceholderMaker(KEY),
            fingerprinter=Fingerprinter(KEY),
            cache=cache,
        )

    old = CanaryScanner()
    assert run(old).action is Action.ALLOW
    assert run(old).action is Action.ALLOW
    assert cache.hits == 1
    ins = run(KnowsValue())
    assert ins.action is Action.REDACT
    assert ins.body is not None
    assert b"hunter2-hunter2" not in ins.body


def _real(body: dict[str, Any], path: str = "/v1/messages") -> Inspection:
    """The real detection engine and the built-in policy, bound to the firewall."""
    from domestique.detect import default_scanner
    from domestique.policy import DecisionContext, load_policy
    from domestique.records import Component

    pol = load_policy()
    assert pol.valid, pol.errors
    ctx = DecisionContext(component=Component.PROXY)

    class Bound:
        def action_for(self, code: str) -> Action:
            return pol.action_for(code, ctx)

        def decide(self, reasons: Any) -> Any:
            return pol.decide(reasons, ctx)

    return inspect_request(
        _route(path),
        json.dumps(body).encode(),
        content_encoding="",
        scanner=default_scanner(),
        policy=Bound(),
        maker=PlaceholderMaker(KEY),
        fingerprinter=Fingerprinter(KEY),
    )


ARN = "arn:aws:iam::298941966085:role/deploy-ci"


def test_infra_identifier_is_forwarded_unchanged_and_recorded() -> None:
    """Under the built-in policy an ARN passes as it is and is named in the reasons."""
    ins = _real(_anthropic(f"why can {ARN} not assume the role?"))
    assert ins.action is Action.ALLOW
    assert ins.body is not None
    assert ARN.encode() in ins.body
    assert not ins.mapping
    assert "infra.aws_arn" in [r.code for r in ins.reasons]


def test_infra_identifier_next_to_a_secret_only_the_secret_is_redacted() -> None:
    """A secret in the same request is redacted; the ARN beside it stays."""
    ins = _real(_anthropic(f"{ARN} and password = 'Tr0ub4dor-3x-Qm7'"))
    assert ins.action is Action.REDACT
    assert ins.body is not None
    assert ARN.encode() in ins.body
    assert b"Tr0ub4dor-3x-Qm7" not in ins.body


def test_infra_identifier_in_signed_thinking_is_not_a_block() -> None:
    """An allowed identifier needs no redaction, so a signed part holding one is no block."""
    body = {
        "model": "m",
        "max_tokens": 10,
        "messages": [
            {
                "role": "assistant",
                "content": [{"type": "thinking", "thinking": f"use {ARN}", "signature": "s"}],
            },
            {"role": "user", "content": "go on"},
        ],
    }
    ins = _real(body)
    assert ins.action is Action.ALLOW
    assert [r.code for r in ins.reasons] == ["infra.aws_arn"]


ARN_WITH_KEY = "arn:aws:iam::298941966085:role/AKIANND6YZ2EMRVFTVA2"


def test_secret_inside_an_infra_identifier_is_redacted() -> None:
    """An access key written inside an ARN is the secret's finding: redacted, not allowed."""
    ins = _real(_anthropic(f"assume {ARN_WITH_KEY} now"))
    assert ins.action is Action.REDACT
    assert ins.body is not None
    assert b"AKIANND6YZ2EMRVFTVA2" not in ins.body
    assert "infra.aws_arn" not in [r.code for r in ins.reasons]


def test_secret_inside_an_infra_identifier_in_signed_thinking_is_recorded() -> None:
    """Only allowed codes pass as themselves inside the model's thinking; a key inside an ARN
    there is recorded as proxy.secret_in_model_output (passed unmodified by default)."""
    body = {
        "model": "m",
        "max_tokens": 10,
        "messages": [
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": f"use {ARN_WITH_KEY}", "signature": "s"}
                ],
            },
            {"role": "user", "content": "go on"},
        ],
    }
    ins = _real(body)
    assert ins.action is Action.ALLOW
    assert "proxy.secret_in_model_output" in [r.code for r in ins.reasons]
    assert ins.body is not None
    assert json.loads(ins.body)["messages"][0] == body["messages"][0]
