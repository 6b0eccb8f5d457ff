"""Policy loading, validation (file:line:col for every error), layering and resolution."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domestique.policy import DecisionContext, EffectivePolicy, PolicySettings, load_policy
from domestique.policy import _load as load_module
from domestique.policy._model import Match, Rule
from domestique.records import Action, Actor, Component, Reason

CODES = (
    "secret.aws_access_key_id",
    "secret.github_token",
    "pii.email",
    "records.customer",
    "cmd.pipe_to_shell",
    "cmd.destructive.rm_root",
    "cmd.destructive.rm_project",
    "engine.internal_error",
    "engine.parse_error",
    "engine.detector_error",
    "policy.invalid",
    "audit.write_failed",
    "proxy.unknown_route",
)

BUILTIN = """\
version = 1
[settings]
unmatched = "deny"
unknown_tool = "ask"

[[rules]]
id = "proxy-secrets"
codes = ["secret.*", "pii.*"]
action = "redact"
components = ["proxy"]

[[rules]]
id = "command-secrets"
codes = ["secret.*"]
action = "deny"
components = ["guard", "hook"]

[[rules]]
id = "pipe"
codes = ["cmd.pipe_to_shell"]
action = "deny"

[[rules]]
id = "engine"
codes = ["engine.*", "policy.invalid", "audit.write_failed"]
action = "deny"
"""

GUARD = DecisionContext(Component.GUARD)
PROXY = DecisionContext(Component.PROXY)


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private builtin directory and reason-code registry, so the tests own every layer."""
    builtin = tmp_path / "builtin"
    builtin.mkdir()
    (builtin / "core.toml").write_text(BUILTIN)
    monkeypatch.setattr(load_module, "BUILTIN_DIR", builtin)
    monkeypatch.setattr(load_module, "_registered_codes", lambda: (sorted(CODES), None))
    (tmp_path / "home").mkdir()
    return tmp_path


def _load(env: Path, **kwargs: object) -> EffectivePolicy:
    return load_policy(home=env / "home", system_file=None, use_cache=False, **kwargs)  # type: ignore[arg-type]


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


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


# --- every error names file:line:col -----------------------------------------------------

ERROR_CASES = [
    ("toml-syntax", 'version = 1\n[[rules]]\nid = "x"\ncodes = ["secret.*"\n', 5, 1, "TOML syntax"),
    ("toml-duplicate-key", "version = 1\nversion = 1\n", 2, 1, "'version' is set twice"),
    ("toml-bad-value", "version = 1\nx = \n", 2, 5, "TOML syntax error: Invalid value"),
    ("unknown-top-key", "version = 1\nrulez = []\n", 2, 1, "unknown key 'rulez'"),
    (
        "unknown-rule-key",
        '[[rules]]\nid = "a"\ncodes = ["pii.email"]\naction = "deny"\ncolour = "red"\n',
        6,
        1,
        "unknown key 'colour'",
    ),
    ("unknown-settings-key", '[settings]\nunmatchd = "deny"\n', 3, 1, "did you mean 'unmatched'"),
    (
        "unknown-action",
        '[[rules]]\nid = "a"\ncodes = ["pii.email"]\naction = "alow"\n',
        5,
        10,
        "unknown action 'alow'",
    ),
    (
        "wrong-type",
        '[[rules]]\nid = "a"\ncodes = "pii.email"\naction = "deny"\n',
        4,
        9,
        "expected an array of strings, got a string",
    ),
    (
        "wrong-type-item",
        '[[rules]]\nid = "a"\ncodes = ["pii.email", 3]\naction = "deny"\n',
        4,
        23,
        "expected a string, got an integer",
    ),
    (
        "unknown-code",
        '[[rules]]\nid = "a"\ncodes = ["pii.emial"]\naction = "deny"\n',
        4,
        10,
        "unknown reason code 'pii.emial' (did you mean 'pii.email'?)",
    ),
    (
        "unmatched-glob",
        '[[rules]]\nid = "a"\ncodes = ["nope.*"]\naction = "deny"\n',
        4,
        10,
        "no registered reason code matches 'nope.*'",
    ),
    (
        "bad-code-pattern",
        '[[rules]]\nid = "a"\ncodes = ["secret.*key"]\naction = "deny"\n',
        4,
        10,
        "bad code pattern",
    ),
    (
        "bad-host-glob",
        '[[rules]]\nid = "a"\ncodes = ["pii.email"]\naction = "deny"\n'
        'hosts = ["https://x.example"]\n',
        6,
        10,
        "bad host glob",
    ),
    (
        "bad-path-glob",
        '[[rules]]\nid = "a"\ncodes = ["pii.email"]\naction = "deny"\npaths = ["~/[abc"]\n',
        6,
        10,
        "bad path glob",
    ),
    (
        "unknown-component",
        '[[rules]]\nid = "a"\ncodes = ["pii.email"]\naction = "deny"\n'
        'components = ["proxy", "gaurd"]\n',
        6,
        24,
        "unknown component 'gaurd'",
    ),
    (
        "except-unknown-key",
        '[[rules]]\nid = "a"\ncodes = ["pii.email"]\naction = "deny"\n'
        '[[rules.except]]\nhost = ["x"]\n',
        7,
        1,
        "unknown key 'host' in an exception",
    ),
    ("missing-id", '[[rules]]\ncodes = ["pii.email"]\naction = "deny"\n', 2, 1, "rule has no 'id'"),
    (
        "duplicate-id",
        '[[rules]]\nid = "a"\ncodes = ["pii.email"]\naction = "deny"\n'
        '[[rules]]\nid = "a"\ncodes = ["pii.email"]\naction = "ask"\n',
        7,
        6,
        "duplicate rule id",
    ),
    (
        "protected-loosened",
        '[[rules]]\nid = "a"\ncodes = ["engine.*"]\naction = "ask"\n',
        5,
        10,
        "cannot set 'ask' for engine.",
    ),
    (
        "inline-table-rule",
        'rules = [{id = "a", codes = ["pii.email"], action = "alow"}]\n',
        2,
        53,
        "unknown action 'alow'",
    ),
    (
        "empty-list",
        '[[rules]]\nid = "a"\ncodes = ["pii.email"]\naction = "deny"\nagents = []\n',
        6,
        10,
        "empty array",
    ),
]


@pytest.mark.parametrize(
    ("text", "line", "col", "fragment"),
    [pytest.param(t, ln, c, f, id=name) for name, t, ln, c, f in ERROR_CASES],
)
def test_every_error_kind_reports_file_line_col(
    env: Path, text: str, line: int, col: int, fragment: str
) -> None:
    """Each kind of mistake is reported as file:line:col at the offending key or value."""
    body = text if text.startswith("version") else "version = 1\n" + text
    path = _write(env / "p.toml", body)
    policy = _load(env, policy_file=path)
    assert not policy.valid
    prefix = f"{path}:{line}:{col}: "
    assert any(e.startswith(prefix) and fragment in e for e in policy.errors), policy.errors


def test_missing_version_and_non_utf8_are_errors(env: Path) -> None:
    """A file without version, and a file that is not UTF-8, are errors with a position."""
    no_version = _write(env / "a.toml", '[settings]\nunmatched = "deny"\n')
    policy = _load(env, policy_file=no_version)
    assert any(e.startswith(f"{no_version}:1:1: missing 'version") for e in policy.errors)
    binary = env / "b.toml"
    binary.write_bytes(b"version = 1\n# caf\xe9\n")
    policy = _load(env, policy_file=binary)
    assert policy.errors == (f"{binary}:2:6: not UTF-8 text",)


def test_unreadable_or_missing_explicit_file_fails_closed(env: Path) -> None:
    """A --policy path that is missing or a directory is an error, never a silent skip."""
    missing = _load(env, policy_file=env / "nope.toml")
    assert not missing.valid
    assert missing.errors[0].startswith(f"{env / 'nope.toml'}:1:1:")
    directory = _load(env, policy_file=env)
    assert not directory.valid
    assert directory.decide([], GUARD).action is Action.DENY


# --- fail closed --------------------------------------------------------------------------


def test_invalid_policy_denies_everything_including_allow(env: Path) -> None:
    """One typo: every decision (no reasons, or a reason the file allows) stops, policy.invalid."""
    path = _write(
        env / "home" / "policy.toml",
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
    policy = _load(env)
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


def test_fixing_the_file_restores_decisions_even_with_the_cache(env: Path) -> None:
    """With caching on, a broken then fixed user file flips invalid → valid at once."""
    user = env / "home" / "policy.toml"
    good = 'version = 1\n[[rules]]\nid = "e"\ncodes = ["pii.email"]\naction = "allow"\n'
    user.write_text(good.replace('"allow"', '"alow"'))
    broken = load_policy(home=env / "home", system_file=None)
    assert not broken.valid
    assert broken.decide([], GUARD).action is Action.DENY
    user.write_text(good)
    fixed = load_policy(home=env / "home", system_file=None)
    assert fixed.valid
    assert fixed.decide([Reason("pii.email", "x")], PROXY).action is Action.ALLOW
    again = load_policy(home=env / "home", system_file=None)  # served from the cache
    assert again.ref == fixed.ref
    assert again.decide([Reason("pii.email", "x")], PROXY).action is Action.ALLOW


def test_cache_and_fresh_load_agree(env: Path) -> None:
    """A cached load yields the same policy (same sha256, same decisions) as a fresh one."""
    fresh = _load(env)
    load_policy(home=env / "home", system_file=None)
    cached = load_policy(home=env / "home", system_file=None)
    assert list((env / "home" / "cache").iterdir())
    assert cached.ref == fresh.ref
    assert cached.document() == fresh.document()
    for code in CODES:
        for ctx in (GUARD, PROXY):
            assert cached.action_for(code, ctx) is fresh.action_for(code, ctx)


def test_damaged_or_forged_cache_is_ignored(env: Path) -> None:
    """A cache with garbage in it, or edited to loosen a rule, is not trusted."""
    home = env / "home"
    first = load_policy(home=home, system_file=None)
    (cache,) = (home / "cache").iterdir()
    mac, _, body = cache.read_bytes().partition(b"\n")
    forged = body.replace(b'"action": "deny"', b'"action": "allow"')
    assert forged != body
    cache.write_bytes(mac + b"\n" + forged)
    again = load_policy(home=home, system_file=None)
    assert again.ref == first.ref
    assert again.action_for("cmd.pipe_to_shell", GUARD) is Action.DENY
    cache.write_text('{"format": 2, "key": "x"')
    assert load_policy(home=home, system_file=None).ref == first.ref


# --- layers -------------------------------------------------------------------------------


def _project(env: Path, text: str) -> Path:
    return _write(env / "repo" / ".domestique" / "policy.toml", text)


def test_project_layer_can_tighten(env: Path) -> None:
    """A project file may raise pii.email from redact to block in the proxy."""
    _project(
        env,
        """\
        version = 1
        [[rules]]
        id = "project-block-email"
        codes = ["pii.email"]
        action = "block"
        components = ["proxy"]
        """,
    )
    (env / "repo" / "sub").mkdir()
    policy = _load(env, project_dir=env / "repo" / "sub")
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
    env: Path, text: str, line: int, col: int, fragment: str
) -> None:
    """Loosening, [settings] and replacing a base rule by id are errors in a project file."""
    path = _project(env, "version = 1\n" + text)
    policy = _load(env, project_dir=env / "repo")
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


def test_later_layers_replace_rules_by_id_and_settings(env: Path) -> None:
    """A user file replaces a builtin rule by id and changes settings; --policy comes after."""
    _write(
        env / "home" / "policy.toml",
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
    policy = _load(env)
    assert policy.valid, policy.errors
    assert policy.action_for("cmd.pipe_to_shell", GUARD) is Action.ASK
    assert policy.action_for("records.customer", GUARD) is Action.ASK  # unmatched
    explicit = _write(
        env / "explicit.toml",
        'version = 1\n[[rules]]\nid = "pipe"\ncodes = ["cmd.pipe_to_shell"]\naction = "block"\n',
    )
    policy = _load(env, policy_file=explicit)
    assert policy.action_for("cmd.pipe_to_shell", GUARD) is Action.DENY  # block, said as deny
    assert policy.action_for("cmd.pipe_to_shell", PROXY) is Action.BLOCK
    assert [layer.kind for layer in policy.layers] == ["builtin", "user", "file"]


def test_system_layer_is_read_before_user(env: Path) -> None:
    """The system file sits between builtin and user: the user file wins a tie."""
    system = _write(
        env / "etc.toml",
        'version = 1\n[[rules]]\nid = "s"\ncodes = ["records.customer"]\naction = "block"\n',
    )
    _write(
        env / "home" / "policy.toml",
        'version = 1\n[[rules]]\nid = "u"\ncodes = ["records.customer"]\naction = "ask"\n',
    )
    policy = load_policy(home=env / "home", system_file=system, use_cache=False)
    assert [layer.kind for layer in policy.layers] == ["builtin", "system", "user"]
    assert policy.action_for("records.customer", GUARD) is Action.ASK


# --- resolution ---------------------------------------------------------------------------


def test_most_specific_code_pattern_wins_then_later_layer_then_later_rule(env: Path) -> None:
    """exact > longer prefix glob > shorter glob > '*'; ties: later layer, then later rule."""
    _write(
        env / "home" / "policy.toml",
        """\
        version = 1
        [[rules]]
        id = "all"
        codes = ["*"]
        action = "allow"
        [[rules]]
        id = "cmd"
        codes = ["cmd.*"]
        action = "ask"
        [[rules]]
        id = "destructive"
        codes = ["cmd.destructive.*"]
        action = "deny"
        [[rules]]
        id = "rm-project"
        codes = ["cmd.destructive.rm_project"]
        action = "redact"
        [[rules]]
        id = "rm-project-later"
        codes = ["cmd.destructive.rm_project"]
        action = "allow"
        """,
    )
    policy = _load(env)
    assert policy.valid, policy.errors
    assert policy.action_for("cmd.destructive.rm_project", GUARD) is Action.ALLOW  # later rule
    assert policy.action_for("cmd.destructive.rm_root", GUARD) is Action.DENY
    assert policy.action_for("cmd.pipe_to_shell", GUARD) is Action.DENY  # builtin exact code
    assert policy.action_for("records.customer", GUARD) is Action.ALLOW  # only '*' matches
    rule = policy.rule_for("cmd.destructive.rm_root", GUARD)
    assert rule is not None
    assert rule.id == "destructive"
    explicit = _write(
        env / "e.toml",
        'version = 1\n[[rules]]\nid = "x"\ncodes = ["cmd.destructive.*"]\naction = "ask"\n',
    )
    later = _load(env, policy_file=explicit)
    assert later.action_for("cmd.destructive.rm_root", GUARD) is Action.ASK  # later layer


def test_verdict_is_most_severe_over_reasons(env: Path) -> None:
    """decide(): the most severe action over all reasons; none ⇒ allow."""
    policy = _load(env)
    assert policy.decide([], PROXY).action is Action.ALLOW
    redact = policy.decide([Reason("pii.email", "e")], PROXY)
    assert redact.action is Action.REDACT
    both = policy.decide([Reason("pii.email", "e"), Reason("cmd.pipe_to_shell", "p")], PROXY)
    assert both.action is Action.BLOCK
    assert both.codes == ("pii.email", "cmd.pipe_to_shell")


def test_exceptions_hosts_paths_and_actors(env: Path) -> None:
    """A rule does not apply where its exception matches; several hosts: the most severe."""
    _write(
        env / "home" / "policy.toml",
        """\
        version = 1
        [[rules]]
        id = "internal-ok"
        codes = ["secret.github_token"]
        action = "allow"
        components = ["proxy"]
        hosts = ["*.internal.example"]
        [[rules.except]]
        hosts = ["public.internal.example"]
        [[rules]]
        id = "ssh"
        codes = ["pii.email"]
        action = "block"
        paths = ["~/.ssh/*"]
        actors = ["agent"]
        """,
    )
    policy = _load(env)
    assert policy.valid, policy.errors

    def proxy(*hosts: str) -> DecisionContext:
        return DecisionContext(Component.PROXY, hosts=hosts)

    assert policy.action_for("secret.github_token", proxy("api.internal.example")) is Action.ALLOW
    assert policy.action_for("secret.github_token", proxy("public.internal.example")) is (
        Action.REDACT
    )
    assert policy.action_for("secret.github_token", proxy()) is Action.REDACT
    mixed = proxy("api.internal.example", "evil.example")
    assert policy.action_for("secret.github_token", mixed) is Action.REDACT
    ssh = str(Path.home() / ".ssh" / "id_ed25519")
    agent = DecisionContext(Component.GUARD, paths=(ssh,))
    human = DecisionContext(Component.GUARD, actor=Actor.HUMAN, paths=(ssh,))
    assert policy.action_for("pii.email", agent) is Action.DENY
    assert policy.action_for("pii.email", human) is Action.DENY  # unmatched in guard
    assert policy.action_for("pii.email", DecisionContext(Component.PROXY, paths=(ssh,))) is (
        Action.BLOCK
    )


def test_protected_codes_cannot_drop_below_stop(env: Path) -> None:
    """A '*' allow never lowers engine.*, policy.invalid or audit.write_failed; parse_error may
    be 'ask' for a person only."""
    _write(
        env / "home" / "policy.toml",
        """\
        version = 1
        [[rules]]
        id = "everything"
        codes = ["*"]
        action = "allow"
        [[rules]]
        id = "human-parse"
        codes = ["engine.parse_error"]
        action = "ask"
        actors = ["human"]
        """,
    )
    policy = _load(env)
    assert policy.valid, policy.errors
    for code in ("engine.internal_error", "policy.invalid", "audit.write_failed"):
        assert policy.action_for(code, GUARD) is Action.DENY
        assert policy.action_for(code, PROXY) is Action.BLOCK
    human = DecisionContext(Component.GUARD, actor=Actor.HUMAN)
    assert policy.action_for("engine.parse_error", human) is Action.ASK
    assert policy.action_for("engine.parse_error", GUARD) is Action.DENY
    bad = _write(
        env / "bad.toml",
        'version = 1\n[[rules]]\nid = "p"\ncodes = ["engine.parse_error"]\naction = "ask"\n',
    )
    assert not _load(env, policy_file=bad).valid  # ask for agents too: refused


def test_ref_is_stable_and_changes_with_the_policy(env: Path) -> None:
    """The sha256 is the same for the same layers and changes when a rule changes."""
    first, second = _load(env), _load(env)
    assert first.ref == second.ref
    assert len(first.ref.sha256) == 64
    _write(
        env / "home" / "policy.toml",
        'version = 1\n[[rules]]\nid = "x"\ncodes = ["pii.email"]\naction = "ask"\n',
    )
    assert _load(env).ref.sha256 != first.ref.sha256


def test_load_policy_never_raises(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An unexpected exception inside loading yields an invalid policy, not a crash."""

    def boom(**_: object) -> None:
        raise RuntimeError("secret-looking AKIAIOSFODNN7EXAMPLE")

    monkeypatch.setattr(load_module, "discover_layers", boom)
    policy = _load(env)
    assert not policy.valid
    assert "AKIA" not in " ".join(policy.errors)
    assert policy.decide([], PROXY).action is Action.BLOCK


def test_broken_registry_fails_closed(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """When the reason-code registry cannot be built, the policy is invalid (deny)."""
    monkeypatch.setattr(
        load_module, "_registered_codes", lambda: ([], "reason-code registry unavailable")
    )
    policy = _load(env)
    assert not policy.valid
    assert policy.decide([], GUARD).action is Action.DENY


def test_unknown_tool_setting(env: Path) -> None:
    """hooks read settings.unknown_tool; invalid policies stop instead."""
    policy = _load(env)
    assert policy.unknown_tool_action(DecisionContext(Component.HOOK)) is Action.ASK
    assert (
        EffectivePolicy.invalid(["x:1:1: bad"]).unknown_tool_action(DecisionContext(Component.HOOK))
        is Action.DENY
    )


_ACTIONS = st.sampled_from(list(Action))
_PATTERNS = st.sampled_from(["*", "cmd.*", "cmd.destructive.*", "pii.email", "secret.*", *CODES])
_RULES = st.lists(
    st.tuples(
        st.lists(_PATTERNS, min_size=1, max_size=3),
        _ACTIONS,
        st.sets(st.sampled_from(["proxy", "guard", "hook"]), max_size=2),
        st.sets(st.sampled_from(["agent", "human"]), max_size=1),
    ),
    max_size=6,
)


def _rules(spec: list[tuple[list[str], Action, set[str], set[str]]], layer: str) -> list[Rule]:
    return [
        Rule(
            f"{layer}-{i}",
            tuple(codes),
            action,
            Match.build({"components": sorted(comps), "actors": sorted(actors)}),
            layer=layer,
        )
        for i, (codes, action, comps, actors) in enumerate(spec)
    ]


@settings(max_examples=150, deadline=None)
@given(_RULES, _RULES, st.sampled_from(list(Action)))
def test_project_rules_only_ever_tighten(
    base_spec: list[tuple[list[str], Action, set[str], set[str]]],
    project_spec: list[tuple[list[str], Action, set[str], set[str]]],
    unmatched: Action,
) -> None:
    """Whatever the base and project rules, adding the project rules never lowers an action,
    and protected codes never drop below deny/block."""
    settings_ = PolicySettings(unmatched=unmatched)
    base = EffectivePolicy(settings=settings_, rules=_rules(base_spec, "user"))
    both = EffectivePolicy(
        settings=settings_,
        rules=_rules(base_spec, "user"),
        project_rules=_rules(project_spec, "project"),
    )
    for code in CODES:
        for component in Component:
            for actor in Actor:
                ctx = DecisionContext(component, actor)
                before, after = base.action_for(code, ctx), both.action_for(code, ctx)
                assert after.severity >= before.severity
                if code.startswith("engine.") and code != "engine.parse_error":
                    assert after.severity == Action.DENY.severity


def test_builtin_files_cannot_share_a_rule_id(env: Path) -> None:
    """Two builtin files defining one id is a clash (an error), not a silent override."""
    builtin = load_module.BUILTIN_DIR
    (builtin / "zz.toml").write_text(
        'version = 1\n[[rules]]\nid = "pipe"\ncodes = ["cmd.pipe_to_shell"]\naction = "allow"\n'
    )
    policy = _load(env)
    assert not policy.valid
    assert policy.errors[0].startswith(f"{builtin / 'zz.toml'}:2:1: rule id 'pipe' is already")
