"""Policy loading: the shipped policy, failing closed (an invalid file denies everything, the
cache never outlives a fix or a forgery), layering (system, user, project) and the reference."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from _helpers.policy import CODES, GUARD, PROXY, load, write
from domestique.policy import DecisionContext, EffectivePolicy, PolicySettings, load_policy
from domestique.policy import _load as load_module
from domestique.policy._model import Match, Rule
from domestique.records import Action, Component, Reason

# --- the shipped policy -------------------------------------------------------------------


def test_shipped_builtin_policy_is_valid_and_sensible(tmp_path: Path) -> None:
    """The builtin files of every component validate against the real registry; defaults hold."""
    policy = load_policy(home=tmp_path, system_file=None, use_cache=False)
    assert policy.valid, policy.errors
    assert policy.action_for("secret.github_token", PROXY) is Action.REDACT
    assert policy.action_for("pii.email", PROXY) is Action.REDACT
    assert policy.action_for("records.customer", PROXY) is Action.BLOCK
    assert policy.action_for("secret.github_token", GUARD) is Action.DENY
    assert policy.action_for("records.customer", DecisionContext(Component.HOOK)) is Action.DENY
    assert policy.action_for("engine.internal_error", PROXY) is Action.BLOCK
    assert policy.action_for("engine.internal_error", GUARD) is Action.DENY
    assert policy.action_for("no.such_code", GUARD) is Action.DENY
    assert policy.decide([], GUARD).action is Action.ALLOW


def test_infra_identifiers_are_allowed_in_every_component(tmp_path: Path) -> None:
    """infra.* (ARNs, bucket hosts) is allowed by default, not denied by unmatched = deny."""
    policy = load_policy(home=tmp_path, system_file=None, use_cache=False)
    for component in Component:
        ctx = DecisionContext(component)
        assert policy.action_for("infra.aws_arn", ctx) is Action.ALLOW, component
        verdict = policy.decide([Reason("infra.aws_arn", "an ARN")], ctx)
        assert verdict.action is Action.ALLOW
        assert [r.code for r in verdict.reasons] == ["infra.aws_arn"]


# --- fail closed --------------------------------------------------------------------------


def test_invalid_policy_denies_everything_including_allow(policy_dir: Path) -> None:
    """One typo: every decision (no reasons, or a reason the file allows) stops, policy.invalid."""
    path = write(
        policy_dir / "home" / "policy.toml",
        """\
        version = 1
        [[rules]]
        id = "allow-email"
        codes = ["pii.email"]
        action = "allow"
        [[rules]]
        id = "typo"
        codes = ["pii.email"]
        acton = "deny"
        """,
    )
    policy = load(policy_dir)
    assert not policy.valid
    assert any(e.startswith(f"{path}:9:1: unknown key 'acton'") for e in policy.errors)
    for ctx, stop in (
        (GUARD, Action.DENY),
        (DecisionContext(Component.HOOK), Action.DENY),
        (PROXY, Action.BLOCK),
    ):
        for reasons in ([], [Reason("pii.email", "x")]):
            verdict = policy.decide(reasons, ctx)
            assert verdict.action is stop
            assert verdict.codes[0] == "policy.invalid"
            assert f"{path}:6:1: rule has no 'action'" in verdict.reasons[0].message
        assert policy.action_for("pii.email", ctx) is stop
    assert policy.ref.id == "invalid"


def test_fixing_the_file_restores_decisions_even_with_the_cache(policy_dir: Path) -> None:
    """With caching on, a broken then fixed user file flips invalid → valid at once."""
    user = policy_dir / "home" / "policy.toml"
    good = 'version = 1\n[[rules]]\nid = "e"\ncodes = ["pii.email"]\naction = "allow"\n'
    user.write_text(good.replace('"allow"', '"alow"'))
    broken = load_policy(home=policy_dir / "home", system_file=None)
    assert not broken.valid
    assert broken.decide([], GUARD).action is Action.DENY
    user.write_text(good)
    fixed = load_policy(home=policy_dir / "home", system_file=None)
    assert fixed.valid
    assert fixed.decide([Reason("pii.email", "x")], PROXY).action is Action.ALLOW
    again = load_policy(home=policy_dir / "home", system_file=None)  # served from the cache
    assert again.ref == fixed.ref
    assert again.decide([Reason("pii.email", "x")], PROXY).action is Action.ALLOW


def test_cache_and_fresh_load_agree(policy_dir: Path) -> None:
    """A cached load yields the same policy (same sha256, same decisions) as a fresh one."""
    fresh = load(policy_dir)
    load_policy(home=policy_dir / "home", system_file=None)
    load_module._MEMO.clear()  # as a new process would: read from the file cache
    cached = load_policy(home=policy_dir / "home", system_file=None)
    assert list((policy_dir / "home" / "cache").iterdir())
    assert cached.ref == fresh.ref
    assert cached.document() == fresh.document()
    for code in CODES:
        for ctx in (GUARD, PROXY):
            assert cached.action_for(code, ctx) is fresh.action_for(code, ctx)


def test_a_long_lived_process_reuses_the_policy_until_a_layer_changes(policy_dir: Path) -> None:
    """In one process (the hook daemon) an unchanged set of layers gives the same policy object,
    and an edit is seen on the next load even when it keeps the file's size and is made within
    the same clock tick (the key is the files' content, not their timestamps)."""
    home = policy_dir / "home"
    user = home / "policy.toml"
    rule = 'version = 1\n[[rules]]\nid = "e"\ncodes = ["pii.email"]\naction = "{}"\n'
    user.write_text(rule.format("allow"))
    first = load_policy(home=home, system_file=None)
    assert load_policy(home=home, system_file=None) is first
    stat = user.stat()
    user.write_text(rule.format("block"))  # "allow" and "block": same length
    os.utime(user, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert user.stat().st_size == stat.st_size
    edited = load_policy(home=home, system_file=None)
    assert edited is not first
    assert edited.action_for("pii.email", PROXY) is Action.BLOCK
    assert first.action_for("pii.email", PROXY) is Action.ALLOW


def test_damaged_or_forged_cache_is_ignored(policy_dir: Path) -> None:
    """A cache with garbage in it, or edited to loosen a rule, is not trusted."""
    home = policy_dir / "home"
    first = load_policy(home=home, system_file=None)
    (cache,) = (home / "cache").iterdir()
    mac, _, body = cache.read_bytes().partition(b"\n")
    forged = body.replace(b'"action": "deny"', b'"action": "allow"')
    assert forged != body
    cache.write_bytes(mac + b"\n" + forged)
    load_module._MEMO.clear()  # as a new process would: read the file cache
    again = load_policy(home=home, system_file=None)
    assert again.ref == first.ref
    assert again.action_for("cmd.pipe_to_shell", GUARD) is Action.DENY
    cache.write_text('{"format": 2, "key": "x"')
    load_module._MEMO.clear()
    assert load_policy(home=home, system_file=None).ref == first.ref


# --- layers -------------------------------------------------------------------------------


def _project(policy_dir: Path, text: str) -> Path:
    return write(policy_dir / "repo" / ".domestique" / "policy.toml", text)


def test_project_layer_can_tighten(policy_dir: Path) -> None:
    """A project file may raise pii.email from redact to block in the proxy."""
    _project(
        policy_dir,
        """\
        version = 1
        [[rules]]
        id = "project-block-email"
        codes = ["pii.email"]
        action = "block"
        components = ["proxy"]
        """,
    )
    (policy_dir / "repo" / "sub").mkdir()
    policy = load(policy_dir, project_dir=policy_dir / "repo" / "sub")
    assert policy.valid, policy.errors
    assert policy.action_for("pii.email", PROXY) is Action.BLOCK
    assert policy.action_for("secret.github_token", PROXY) is Action.REDACT
    assert [layer.kind for layer in policy.layers][-1] == "project"


@pytest.mark.parametrize(
    ("text", "line", "col", "fragment"),
    [
        pytest.param(
            '[[rules]]\nid = "loose"\ncodes = ["secret.*"]\naction = "allow"\n',
            2,
            1,
            "may only tighten",
            id="loosen",
        ),
        pytest.param(
            '[settings]\nunmatched = "allow"\n', 2, 2, "cannot set [settings]", id="settings"
        ),
        pytest.param(
            '[[rules]]\nid = "pipe"\ncodes = ["cmd.pipe_to_shell"]\naction = "deny"\n',
            2,
            1,
            "cannot replace rule 'pipe'",
            id="replace-base-rule",
        ),
    ],
)
def test_project_layer_cannot_loosen(
    policy_dir: Path, text: str, line: int, col: int, fragment: str
) -> None:
    """Loosening, [settings] and replacing a base rule by id are errors in a project file."""
    path = _project(policy_dir, "version = 1\n" + text)
    policy = load(policy_dir, project_dir=policy_dir / "repo")
    assert not policy.valid
    assert any(e.startswith(f"{path}:{line}:{col}: ") and fragment in e for e in policy.errors), (
        policy.errors
    )
    assert policy.decide([], GUARD).action is Action.DENY


def test_project_rules_never_lower_an_action_at_decision_time() -> None:
    """Even a project rule the static check could not see (a host filter) only ever raises."""
    base = Rule("b", ("pii.email",), Action.DENY, Match.build({}))
    project = Rule(
        "p", ("pii.email",), Action.ALLOW, Match.build({"hosts": ["*.ok"]}), layer="project"
    )
    policy = EffectivePolicy(settings=PolicySettings(), rules=[base], project_rules=[project])
    ctx = DecisionContext(Component.GUARD, hosts=("a.ok",))
    assert policy.action_for("pii.email", ctx) is Action.DENY


def test_later_layers_replace_rules_by_id_and_settings(policy_dir: Path) -> None:
    """A user file replaces a builtin rule by id and changes settings; --policy comes after."""
    write(
        policy_dir / "home" / "policy.toml",
        """\
        version = 1
        [settings]
        unmatched = "ask"
        [[rules]]
        id = "pipe"
        codes = ["cmd.pipe_to_shell"]
        action = "ask"
        """,
    )
    policy = load(policy_dir)
    assert policy.valid, policy.errors
    assert policy.action_for("cmd.pipe_to_shell", GUARD) is Action.ASK
    assert policy.action_for("records.customer", GUARD) is Action.ASK  # unmatched
    explicit = write(
        policy_dir / "explicit.toml",
        'version = 1\n[[rules]]\nid = "pipe"\ncodes = ["cmd.pipe_to_shell"]\naction = "block"\n',
    )
    policy = load(policy_dir, policy_file=explicit)
    assert policy.action_for("cmd.pipe_to_shell", GUARD) is Action.DENY  # block, said as deny
    assert policy.action_for("cmd.pipe_to_shell", PROXY) is Action.BLOCK
    assert [layer.kind for layer in policy.layers] == ["builtin", "user", "file"]


def test_system_layer_is_read_before_user(policy_dir: Path) -> None:
    """The system file sits between builtin and user: the user file wins a tie."""
    system = write(
        policy_dir / "etc.toml",
        'version = 1\n[[rules]]\nid = "s"\ncodes = ["records.customer"]\naction = "block"\n',
    )
    write(
        policy_dir / "home" / "policy.toml",
        'version = 1\n[[rules]]\nid = "u"\ncodes = ["records.customer"]\naction = "ask"\n',
    )
    policy = load_policy(home=policy_dir / "home", system_file=system, use_cache=False)
    assert [layer.kind for layer in policy.layers] == ["builtin", "system", "user"]
    assert policy.action_for("records.customer", GUARD) is Action.ASK


def test_ref_is_stable_and_changes_with_the_policy(policy_dir: Path) -> None:
    """The sha256 is the same for the same layers and changes when a rule changes."""
    first, second = load(policy_dir), load(policy_dir)
    assert first.ref == second.ref
    assert len(first.ref.sha256) == 64
    write(
        policy_dir / "home" / "policy.toml",
        'version = 1\n[[rules]]\nid = "x"\ncodes = ["pii.email"]\naction = "ask"\n',
    )
    assert load(policy_dir).ref.sha256 != first.ref.sha256


def test_load_policy_never_raises(policy_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An unexpected exception inside loading yields an invalid policy, not a crash."""

    def boom(**_: object) -> None:
        raise RuntimeError("secret-looking AKIAIOSFODNN7EXAMPLE")

    monkeypatch.setattr(load_module, "discover_layers", boom)
    policy = load(policy_dir)
    assert not policy.valid
    assert "AKIA" not in " ".join(policy.errors)
    assert policy.decide([], PROXY).action is Action.BLOCK


def test_broken_registry_fails_closed(policy_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """When the reason-code registry cannot be built, the policy is invalid (deny)."""
    monkeypatch.setattr(
        load_module, "_registered_codes", lambda: ([], "reason-code registry unavailable")
    )
    policy = load(policy_dir)
    assert not policy.valid
    assert policy.decide([], GUARD).action is Action.DENY


def test_builtin_files_cannot_share_a_rule_id(policy_dir: Path) -> None:
    """Two builtin files defining one id is a clash (an error), not a silent override."""
    builtin = load_module.BUILTIN_DIR
    (builtin / "zz.toml").write_text(
        'version = 1\n[[rules]]\nid = "pipe"\ncodes = ["cmd.pipe_to_shell"]\naction = "allow"\n'
    )
    policy = load(policy_dir)
    assert not policy.valid
    assert policy.errors[0].startswith(f"{builtin / 'zz.toml'}:2:1: rule id 'pipe' is already")
