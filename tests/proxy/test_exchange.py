"""The pure exchange plans: the vault merge and its failure policy, and the restorer choice."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import httpx
import pytest

from domestique.audit import AuditStore
from domestique.proxy import exchange
from domestique.proxy.app import FirewallApp, ProxyConfig
from domestique.proxy.pipeline import Inspection
from domestique.proxy.routes import Operation, Provider, Route
from domestique.proxy.server import build_engine, parse_upstreams
from domestique.proxy.vault import PlaceholderVault
from domestique.records import Action, Reason

from .conftest import TablePolicy
from .upstream import run_asgi, run_upstream

RESPONSES = Route(Provider.OPENAI, Operation.OPENAI_RESPONSES, "/v1/responses")
GEMINI_STREAM = Route(
    Provider.GEMINI, Operation.GEMINI_STREAM, "/v1beta/models/g:streamGenerateContent", "g"
)
MESSAGES = Route(Provider.ANTHROPIC, Operation.ANTHROPIC_MESSAGES, "/v1/messages")
FAILED = Reason("proxy.vault_unavailable", "cannot read the vault")


def _judged(**changes: object) -> Inspection:
    base = Inspection(
        Action.REDACT,
        (Reason("secret.canary", "found"),),
        b"{}",
        {"[REDACTED:canary:00000001]": "new"},
        previous_response_id="resp_1",
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_the_previous_turns_mapping_is_merged_and_this_turn_wins() -> None:
    earlier = {"[REDACTED:canary:00000001]": "old", "[REDACTED:canary:00000002]": "older"}
    plan = exchange.plan_request(RESPONSES, _judged(), TablePolicy(), "h", earlier=earlier)
    assert plan.mapping == {
        "[REDACTED:canary:00000001]": "new",
        "[REDACTED:canary:00000002]": "older",
    }
    assert plan.verdict.action is Action.REDACT
    assert plan.forwards


@pytest.mark.parametrize(
    ("stance", "action", "forwards"),
    [(Action.ALLOW, Action.REDACT, True), (Action.BLOCK, Action.BLOCK, False)],
)
def test_a_vault_failure_stops_the_request_only_when_the_policy_says_so(
    stance: Action, action: Action, forwards: bool
) -> None:
    policy = TablePolicy({"proxy.vault_unavailable": stance, "secret.": Action.REDACT})
    judged = _judged(would=Action.BLOCK)
    plan = exchange.plan_request(RESPONSES, judged, policy, "h", vault_failure=FAILED)
    assert plan.verdict.action is action
    assert plan.verdict.codes == ("secret.canary", "proxy.vault_unavailable")
    assert plan.forwards is forwards
    # monitor mode's "would" stays only when the vault failure did not change the action
    assert plan.verdict.would is (Action.BLOCK if forwards else None)


def test_a_blocked_request_never_asks_the_vault() -> None:
    assert exchange.needs_vault(_judged()) == "resp_1"
    assert exchange.needs_vault(_judged(body=None, action=Action.BLOCK)) is None


@pytest.mark.parametrize(
    ("status", "ctype", "route", "mapping", "kind"),
    [
        (200, "text/event-stream; charset=utf-8", MESSAGES, {"p": "v"}, exchange.SSE),
        (200, "text/event-stream", MESSAGES, {}, exchange.Passthrough),
        (200, "application/json", GEMINI_STREAM, {}, exchange.JsonArray),
        (400, "application/json", GEMINI_STREAM, {"p": "v"}, exchange.Whole),
        (200, "application/json", MESSAGES, {"p": "v"}, exchange.Whole),
    ],
)
def test_the_restorer_follows_the_answer_and_the_route(
    status: int, ctype: str, route: Route, mapping: dict[str, str], kind: type
) -> None:
    headers = {"content-type": ctype, "content-length": "9", "x-upstream": "1"}
    plan = exchange.plan_response(status, headers, route, mapping, ("redact", "rec-1"))
    assert isinstance(plan.restorer, kind)
    names = [k for k, _ in plan.headers]
    assert b"content-length" not in names  # recomputed for what is sent
    assert (b"x-domestique-record", b"rec-1") in plan.headers
    assert plan.judge_end is (200 <= status < 300)


def test_only_a_responses_answer_with_placeholders_is_remembered() -> None:
    headers = {"content-type": "application/json"}
    keep = exchange.plan_response(200, headers, RESPONSES, {"p": "v"}, ("redact", "r"))
    assert keep.keep
    assert not exchange.plan_response(200, headers, RESPONSES, {}, ("allow", "r")).keep
    assert not exchange.plan_response(200, headers, MESSAGES, {"p": "v"}, ("redact", "r")).keep


def test_an_unreadable_vault_is_recorded_and_the_request_forwarded(tmp_path: Path) -> None:
    """Through the app, a real vault whose folder is a file: the built-in policy forwards the
    request and records proxy.vault_unavailable beside the decision."""
    blocked_dir = tmp_path / "vault-is-a-file"
    blocked_dir.write_text("x")
    engine = build_engine(tmp_path)
    engine = dataclasses.replace(
        engine, vault=PlaceholderVault(blocked_dir, engine.install_key), group=None
    )
    body = {"model": "m", "previous_response_id": "resp_1", "input": "hello"}
    with run_upstream() as up:
        config = ProxyConfig(upstreams=parse_upstreams([f"openai={up.url}"]))
        with run_asgi(FirewallApp(config, engine)) as url:
            resp = httpx.post(
                url + "/v1/responses", content=json.dumps(body), trust_env=False, timeout=30
            )
        assert resp.status_code == 200
        assert len(up.received) == 1
    with AuditStore.open(tmp_path, create=False) as store:
        last = list(store.records())[-1]
    assert "proxy.vault_unavailable" in last.codes
    assert last.action is Action.ALLOW
