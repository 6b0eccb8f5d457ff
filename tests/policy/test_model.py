"""Deciding with an effective policy: the most specific rule wins, the most severe reason decides,
exceptions and context fields, protected codes, the unknown-tool setting, project rules that
only tighten."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from _helpers.policy import CODES, GUARD, PROXY, load, write
from domestique.policy import DecisionContext, EffectivePolicy, PolicySettings
from domestique.policy._model import Match, Rule
from domestique.records import Action, Actor, Component, Reason

# --- resolution ---------------------------------------------------------------------------


def test_most_specific_code_pattern_wins_then_later_layer_then_later_rule(policy_dir: Path) -> None:
    """exact > longer prefix glob > shorter glob > '*'; ties: later layer, then later rule."""
    write(
        policy_dir / "home" / "policy.toml",
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
    policy = load(policy_dir)
    assert policy.valid, policy.errors
    assert policy.action_for("cmd.destructive.rm_project", GUARD) is Action.ALLOW  # later rule
    assert policy.action_for("cmd.destructive.rm_root", GUARD) is Action.DENY
    assert policy.action_for("cmd.pipe_to_shell", GUARD) is Action.DENY  # builtin exact code
    assert policy.action_for("records.customer", GUARD) is Action.ALLOW  # only '*' matches
    rule = policy.rule_for("cmd.destructive.rm_root", GUARD)
    assert rule is not None
    assert rule.id == "destructive"
    explicit = write(
        policy_dir / "e.toml",
        'version = 1\n[[rules]]\nid = "x"\ncodes = ["cmd.destructive.*"]\naction = "ask"\n',
    )
    later = load(policy_dir, policy_file=explicit)
    assert later.action_for("cmd.destructive.rm_root", GUARD) is Action.ASK  # later layer


def test_verdict_is_most_severe_over_reasons(policy_dir: Path) -> None:
    """decide(): the most severe action over all reasons; none ⇒ allow."""
    policy = load(policy_dir)
    assert policy.decide([], PROXY).action is Action.ALLOW
    redact = policy.decide([Reason("pii.email", "e")], PROXY)
    assert redact.action is Action.REDACT
    both = policy.decide([Reason("pii.email", "e"), Reason("cmd.pipe_to_shell", "p")], PROXY)
    assert both.action is Action.BLOCK
    assert both.codes == ("pii.email", "cmd.pipe_to_shell")


def test_exceptions_hosts_paths_and_actors(policy_dir: Path) -> None:
    """A rule does not apply where its exception matches; several hosts: the most severe."""
    write(
        policy_dir / "home" / "policy.toml",
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
    policy = load(policy_dir)
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


def test_protected_codes_cannot_drop_below_stop(policy_dir: Path) -> None:
    """A '*' allow never lowers engine.*, policy.invalid or audit.write_failed; parse_error may
    be 'ask' for a person only."""
    write(
        policy_dir / "home" / "policy.toml",
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
    policy = load(policy_dir)
    assert policy.valid, policy.errors
    for code in ("engine.internal_error", "policy.invalid", "audit.write_failed"):
        assert policy.action_for(code, GUARD) is Action.DENY
        assert policy.action_for(code, PROXY) is Action.BLOCK
    human = DecisionContext(Component.GUARD, actor=Actor.HUMAN)
    assert policy.action_for("engine.parse_error", human) is Action.ASK
    assert policy.action_for("engine.parse_error", GUARD) is Action.DENY
    bad = write(
        policy_dir / "bad.toml",
        'version = 1\n[[rules]]\nid = "p"\ncodes = ["engine.parse_error"]\naction = "ask"\n',
    )
    assert not load(policy_dir, policy_file=bad).valid  # ask for agents too: refused


def test_unknown_tool_setting(policy_dir: Path) -> None:
    """hooks read settings.unknown_tool; invalid policies stop instead."""
    policy = load(policy_dir)
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
