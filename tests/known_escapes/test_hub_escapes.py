"""Known escapes around the fleet hub (docs/known-escapes.md, "Fleet hub").

Blocked escapes have passing tests; open ones are strict xfail, so a change in behaviour shows.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from domestique.audit import DB_NAME, HEAD_NAME, AuditStore
from domestique.hub.batch import encode_batch, parse_batch
from domestique.hub.bundle import generate_key, sign_bundle
from domestique.hub.endpoint import BUNDLE_NAME, EndpointConfig, hub_dir, install_bundle
from domestique.hub.store import EndpointInfo, HubStore
from domestique.policy import DecisionContext, load_policy
from domestique.records import (
    Action,
    Actor,
    Component,
    DecisionRecord,
    PolicyRef,
    Reason,
    Subject,
)

HUMAN = DecisionContext(Component.GUARD, Actor.HUMAN)
PIPE = [Reason("cmd.pipe_to_shell", "test")]
ORG_POLICY = """version = 1

[[rules]]
id = "org-no-pipe-to-shell"
codes = ["cmd.pipe_to_shell"]
action = "deny"
actors = ["human"]
"""


def _record(action: Action) -> DecisionRecord:
    code = (Reason("cmd.pipe_to_shell", "test"),) if action is Action.DENY else ()
    return DecisionRecord(
        component=Component.GUARD,
        action=action,
        reasons=code,
        subject=Subject(user="dev", host="box"),
        object={"command": "x"},
        policy=PolicyRef("test", "0" * 64),
        engine={"domestique": "test"},
        latency_us=1,
    )


def _upload(store: HubStore, endpoint_id: str, home: Path) -> list[str]:
    with AuditStore.open(home) as log:
        rows = [
            {"seq": r.seq, "prev_hash": r.prev_hash, "hash": r.hash, "record": r.record}
            for r in log.rows()
        ]
        head = log.head()
    result = store.ingest(endpoint_id, parse_batch(encode_batch(endpoint_id, head, rows), "gzip"))
    return [a["code"] for a in result.alerts]


def _enrolled(tmp_path: Path) -> tuple[Path, EndpointConfig, Path]:
    home = tmp_path / "laptop"
    key = tmp_path / "org.key"
    public = generate_key(key)
    config = EndpointConfig("http://127.0.0.1:1", "ep_x", "org_x", (public,), False, None, False)
    config.save(home)
    envelope = sign_bundle(policy=ORG_POLICY, org="org_x", revision=1, key_path=key)
    assert install_bundle(envelope.encode(), home=home, config=config, state={}) == (1, None)
    return home, config, key


@pytest.mark.xfail(
    strict=True,
    reason="open: records that never reached the hub can be rewritten consistently by the "
    "key holder before the first sync",
)
def test_a_log_rewritten_before_its_first_sync_is_caught(tmp_path: Path) -> None:
    """The endpoint drops its deny records and rebuilds the chain before it ever syncs."""
    store = HubStore.open(None, tmp_path / "hub")
    try:
        token = store.create_enroll_token(expires_s=60, uses=1)
        endpoint_id, _ = store.enroll(token, EndpointInfo("h", "u", "o", "v", "f"))
        home = tmp_path / "laptop"
        with AuditStore.open(home) as log:
            log.append_many([_record(Action.ALLOW), _record(Action.DENY)])
        (home / DB_NAME).unlink()
        (home / HEAD_NAME).unlink()
        with AuditStore.open(home) as log:
            log.append(_record(Action.ALLOW))
        assert _upload(store, endpoint_id, home) != []
    finally:
        store.close()


def test_an_endpoint_that_stops_syncing_shows_as_silent(tmp_path: Path) -> None:
    """Guard removed, hub blocked or enrolment deleted: the hub cannot see decisions that are
    never sent, but the endpoint goes silent in the report (mitigated, not blocked)."""
    store = HubStore.open(None, tmp_path / "hub")
    try:
        token = store.create_enroll_token(expires_s=60, uses=1)
        store.enroll(token, EndpointInfo("h", "u", "o", "v", "f"))
        (endpoint,) = store.report()["endpoints"]
        assert endpoint["silent"] is True
        assert endpoint["last_sync"] is None
    finally:
        store.close()


def test_replacing_the_installed_bundle_by_hand_denies(tmp_path: Path) -> None:
    """A bundle signed by a key the endpoint did not pin, copied into place: the loader
    re-verifies it and the policy denies everything (blocked)."""
    home, _, _ = _enrolled(tmp_path)
    rogue = tmp_path / "rogue.key"
    generate_key(rogue)
    forged = sign_bundle(
        policy=ORG_POLICY.replace('"deny"', '"allow"'), org="org_x", revision=9, key_path=rogue
    )
    (hub_dir(home) / BUNDLE_NAME).write_text(forged)
    policy = load_policy(home=home, system_file=None)
    assert policy.decide(PIPE, HUMAN).action is Action.DENY
    assert not policy.valid


@pytest.mark.xfail(
    strict=True,
    reason="open: the endpoint's user owns DOMESTIQUE_HOME; re-pinning their own key (or "
    "deleting the enrolment) takes the organisation layer away on that machine",
)
def test_re_pinning_a_users_own_key_keeps_the_organisation_policy(tmp_path: Path) -> None:
    """The user writes their own key into ``hub/endpoint.json`` and installs a bundle they
    signed, which allows what the organisation denies."""
    home, config, _ = _enrolled(tmp_path)
    mine = tmp_path / "mine.key"
    public = generate_key(mine)
    dataclasses.replace(config, signing_keys=(public,)).save(home)
    loose = sign_bundle(
        policy=ORG_POLICY.replace('"deny"', '"allow"'), org="org_x", revision=2, key_path=mine
    )
    (hub_dir(home) / BUNDLE_NAME).write_text(loose)
    assert load_policy(home=home, system_file=None).decide(PIPE, HUMAN).action is Action.DENY


@pytest.mark.xfail(strict=True, reason="open: see the row above (deleting the enrolment)")
def test_deleting_the_enrolment_keeps_the_organisation_policy(tmp_path: Path) -> None:
    home, _, _ = _enrolled(tmp_path)
    shutil.rmtree(hub_dir(home))
    assert load_policy(home=home, system_file=None).decide(PIPE, HUMAN).action is Action.DENY
