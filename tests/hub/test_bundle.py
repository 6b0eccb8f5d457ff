"""Signed policy bundles: verification, installation rules, and the organisation layer."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from domestique.hub.bundle import (
    BundleRejected,
    generate_key,
    sign_bundle,
    validate_policy_text,
    verify_bundle,
)
from domestique.hub.endpoint import (
    BUNDLE_NAME,
    EndpointConfig,
    hub_dir,
    install_bundle,
    load_state,
)
from domestique.policy import DecisionContext, load_policy
from domestique.records import Action, Actor, Component, Reason

ORG = "org_test"
DENY_PIPE = """version = 1

[[rules]]
id = "org-no-pipe-to-shell"
codes = ["cmd.pipe_to_shell"]
action = "deny"
actors = ["human"]
"""
ALLOW_PIPE_FOR_HUMANS = """version = 1

[[rules]]
id = "mine-allow-pipe"
codes = ["cmd.pipe_to_shell"]
action = "allow"
actors = ["human"]
"""
HUMAN = DecisionContext(Component.GUARD, Actor.HUMAN)
PIPE = [Reason("cmd.pipe_to_shell", "test")]


@pytest.fixture
def key(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "keys" / "org.key"
    return path, generate_key(path)


def _endpoint(home: Path, public: str, *, require: bool = False) -> EndpointConfig:
    config = EndpointConfig(
        hub="http://127.0.0.1:1",
        endpoint_id="ep_test",
        org=ORG,
        signing_keys=(public,),
        require_bundle=require,
        ca=None,
        insecure_http=False,
    )
    config.save(home)
    return config


def _install(home: Path, config: EndpointConfig, envelope: str) -> tuple[int | None, str | None]:
    state = load_state(home)
    result = install_bundle(envelope.encode(), home=home, config=config, state=state)
    from domestique.hub.endpoint import save_state

    save_state(home, state)
    return result


def _sign(key: tuple[Path, str], revision: int, policy: str = DENY_PIPE, **kw: object) -> str:
    return sign_bundle(policy=policy, org=ORG, revision=revision, key_path=key[0], **kw)  # type: ignore[arg-type]


def test_a_signed_bundle_verifies_against_the_pinned_key(key: tuple[Path, str]) -> None:
    bundle = verify_bundle(_sign(key, 3), pinned=(key[1],), org=ORG)
    assert (bundle.revision, bundle.policy, bundle.org) == (3, DENY_PIPE, ORG)


def test_a_tampered_payload_fails_the_signature(key: tuple[Path, str]) -> None:
    env = json.loads(_sign(key, 3))
    payload = json.loads(base64.b64decode(env["payload"]))
    payload["policy"] = ALLOW_PIPE_FOR_HUMANS
    env["payload"] = base64.b64encode(json.dumps(payload).encode()).decode()
    with pytest.raises(BundleRejected) as caught:
        verify_bundle(json.dumps(env), pinned=(key[1],), org=ORG)
    assert caught.value.code == "hub.bundle.bad_signature"


def test_a_key_that_is_not_pinned_is_refused(key: tuple[Path, str], tmp_path: Path) -> None:
    other = tmp_path / "other.key"
    generate_key(other)
    envelope = sign_bundle(policy=DENY_PIPE, org=ORG, revision=1, key_path=other)
    with pytest.raises(BundleRejected) as caught:
        verify_bundle(envelope, pinned=(key[1],), org=ORG)
    assert caught.value.code == "hub.bundle.bad_signature"


def test_a_bundle_for_another_organisation_is_refused(key: tuple[Path, str]) -> None:
    envelope = sign_bundle(policy=DENY_PIPE, org="org_other", revision=1, key_path=key[0])
    with pytest.raises(BundleRejected) as caught:
        verify_bundle(envelope, pinned=(key[1],), org=ORG)
    assert caught.value.code == "hub.bundle.wrong_org"


@pytest.mark.parametrize("raw", [b"", b"{", b"[]", b'{"format": 1, "key": 5}', b"\xff" * 10])
def test_an_unreadable_bundle_is_refused(key: tuple[Path, str], raw: bytes) -> None:
    with pytest.raises(BundleRejected) as caught:
        verify_bundle(raw, pinned=(key[1],), org=ORG)
    assert caught.value.code in ("hub.bundle.unreadable", "hub.bundle.bad_signature")


def test_publish_validation_reports_file_line_col() -> None:
    """A typo in the organisation policy is refused with file:line:col, as locally."""
    import re

    errors = validate_policy_text(DENY_PIPE.replace("action", "acton"), filename="org.toml")
    assert errors
    assert all(re.match(r"org\.toml:\d+:\d+: ", e) for e in errors), errors
    assert any(e.startswith("org.toml:6:1: ") and "'acton'" in e for e in errors), errors
    assert validate_policy_text(DENY_PIPE, filename="org.toml") == []


def test_installed_bundle_becomes_the_organisation_layer(
    key: tuple[Path, str], tmp_path: Path
) -> None:
    """After install, the policy denies what the builtin asks a person about, and the policy
    reference carries the bundle revision."""
    home = tmp_path / "home"
    before = load_policy(home=home, system_file=None, use_cache=False)
    assert before.decide(PIPE, HUMAN).action is Action.ASK
    config = _endpoint(home, key[1])
    assert _install(home, config, _sign(key, 4)) == (4, None)
    after = load_policy(home=home, system_file=None)
    assert after.valid
    assert after.decide(PIPE, HUMAN).action is Action.DENY
    assert after.ref.bundle == 4
    assert load_policy(home=home, system_file=None).ref.bundle == 4  # from the cache too
    assert [layer.kind for layer in after.layers][-1] == "organisation"


def test_rollback_and_bad_signature_keep_the_last_good_bundle(
    key: tuple[Path, str], tmp_path: Path
) -> None:
    """An older revision or a forged bundle is rejected with its code and recorded; the
    installed bundle stays in force."""
    home = tmp_path / "home"
    config = _endpoint(home, key[1])
    assert _install(home, config, _sign(key, 5)) == (5, None)
    assert _install(home, config, _sign(key, 4, ALLOW_PIPE_FOR_HUMANS)) == (
        None,
        "hub.bundle.rollback",
    )
    forged = json.loads(_sign(key, 9, ALLOW_PIPE_FOR_HUMANS))
    forged["signature"] = base64.b64encode(b"\0" * 64).decode()
    assert _install(home, config, json.dumps(forged)) == (None, "hub.bundle.bad_signature")
    codes = [r["code"] for r in load_state(home)["bundle_rejections"]]
    assert codes == ["hub.bundle.rollback", "hub.bundle.bad_signature"]
    policy = load_policy(home=home, system_file=None)
    assert policy.ref.bundle == 5
    assert policy.decide(PIPE, HUMAN).action is Action.DENY


def test_a_bundle_whose_policy_is_invalid_is_not_installed(
    key: tuple[Path, str], tmp_path: Path
) -> None:
    home = tmp_path / "home"
    config = _endpoint(home, key[1])
    bad = _sign(key, 2, DENY_PIPE.replace('"deny"', '"maybe"'))
    assert _install(home, config, bad) == (None, "hub.bundle.invalid_policy")
    assert not (hub_dir(home) / BUNDLE_NAME).exists()


def test_key_rotation_moves_the_pins(key: tuple[Path, str], tmp_path: Path) -> None:
    """A bundle signed by the old key naming the new one moves the pins; the next bundle,
    signed by the new key only, installs; the old key is no longer trusted."""
    home = tmp_path / "home"
    config = _endpoint(home, key[1])
    new_path = tmp_path / "keys" / "new.key"
    new_public = generate_key(new_path)
    assert _install(home, config, _sign(key, 1, keys=(key[1], new_public))) == (1, None)
    config = EndpointConfig.load(home)  # type: ignore[assignment]
    assert config.signing_keys == (key[1], new_public)
    by_new = sign_bundle(policy=DENY_PIPE, org=ORG, revision=2, key_path=new_path)
    assert _install(home, config, by_new) == (2, None)
    config = EndpointConfig.load(home)  # type: ignore[assignment]
    assert config.signing_keys == (new_public,)
    assert _install(home, config, _sign(key, 3)) == (None, "hub.bundle.bad_signature")


def test_under_an_organisation_the_user_layer_may_only_tighten(
    key: tuple[Path, str], tmp_path: Path
) -> None:
    """Without a bundle a user policy may allow a pipe to a shell for people; under the
    organisation layer the same file is an error (which denies), and a stricter one works."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "policy.toml").write_text(ALLOW_PIPE_FOR_HUMANS)
    alone = load_policy(home=home, system_file=None, use_cache=False)
    assert alone.decide(PIPE, HUMAN).action is Action.ALLOW
    config = _endpoint(home, key[1])
    permissive_org = DENY_PIPE.replace('"deny"', '"ask"')
    assert _install(home, config, _sign(key, 1, permissive_org)) == (1, None)
    under = load_policy(home=home, system_file=None, use_cache=False)
    assert not under.valid
    assert any("a user policy may only tighten" in e for e in under.errors)
    assert under.decide(PIPE, HUMAN).action is Action.DENY
    (home / "policy.toml").write_text(ALLOW_PIPE_FOR_HUMANS.replace('"allow"', '"deny"'))
    tightened = load_policy(home=home, system_file=None, use_cache=False)
    assert tightened.valid
    assert tightened.decide(PIPE, HUMAN).action is Action.DENY


def test_a_required_bundle_that_is_missing_denies_everything(
    key: tuple[Path, str], tmp_path: Path
) -> None:
    """Fail closed: an enrolled endpoint whose organisation requires a bundle and has none
    denies even a decision with no reasons, citing hub.bundle.required."""
    home = tmp_path / "home"
    _endpoint(home, key[1], require=True)
    policy = load_policy(home=home, system_file=None)
    verdict = policy.decide([], HUMAN)
    assert verdict.action is Action.DENY
    assert verdict.reasons[0].code == "hub.bundle.required"
    assert "domestique sync" in verdict.reasons[0].message


def test_a_bundle_edited_on_the_endpoint_makes_the_policy_deny(
    key: tuple[Path, str], tmp_path: Path
) -> None:
    """The loader re-verifies the installed bundle: editing it by hand fails closed."""
    home = tmp_path / "home"
    config = _endpoint(home, key[1])
    _install(home, config, _sign(key, 1))
    path = hub_dir(home) / BUNDLE_NAME
    env = json.loads(path.read_text())
    payload = json.loads(base64.b64decode(env["payload"]))
    payload["policy"] = ALLOW_PIPE_FOR_HUMANS
    env["payload"] = base64.b64encode(json.dumps(payload).encode()).decode()
    path.write_text(json.dumps(env))
    policy = load_policy(home=home, system_file=None)
    assert not policy.valid
    assert "hub.bundle.bad_signature" in policy.errors[0]
    assert policy.decide([], HUMAN).action is Action.DENY


def test_under_an_organisation_monitor_mode_from_the_user_is_ignored(
    key: tuple[Path, str], tmp_path: Path
) -> None:
    """``mode = "monitor"`` in the user's file would stop enforcing the company's policy on
    that laptop: under the organisation layer it is ignored (enforce stays)."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "policy.toml").write_text('version = 1\n\n[settings]\nmode = "monitor"\n')
    assert load_policy(home=home, system_file=None, use_cache=False).settings.mode == "monitor"
    config = _endpoint(home, key[1])
    assert _install(home, config, _sign(key, 1)) == (1, None)
    under = load_policy(home=home, system_file=None, use_cache=False)
    assert under.valid
    assert under.settings.mode == "enforce"
    assert under.decide(PIPE, HUMAN).action is Action.DENY
