"""Rules as data: every rule's examples, and the loader's checks."""

from __future__ import annotations

import pytest

from domestique.detect import Scanner
from domestique.detect.ruleset import Rule, RuleError, builtin_rules, load_rules_text

RULES = builtin_rules()


def test_every_rule_has_examples_and_counter_examples() -> None:
    """A rule without must-match and must-not-match examples is unfinished."""
    missing = [r.id for r in RULES if not r.examples or not r.counter_examples]
    assert missing == []


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_rule_finds_each_example(rule: Rule, scanner: Scanner) -> None:
    """Every must-match example yields a finding with the rule's code (through the full engine)."""
    for example in rule.examples:
        codes = [f.code for f in scanner.scan(example)]
        assert rule.id in codes, f"{rule.id} missed example #{rule.examples.index(example)}"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_rule_ignores_each_counter_example(rule: Rule, scanner: Scanner) -> None:
    """No must-not-match example yields a finding with the rule's code."""
    for example in rule.counter_examples:
        codes = [f.code for f in scanner.scan(example)]
        assert rule.id not in codes, f"{rule.id} fired on counter-example {example!r}"


def test_rule_ids_are_unique_dotted_codes() -> None:
    """Rule ids are reason codes: unique, dotted, in the secret.*, pii.* or infra.* families."""
    ids = [r.id for r in RULES]
    assert len(ids) == len(set(ids))
    assert all(i.split(".", 1)[0] in ("secret", "pii", "infra") for i in ids)


def test_coverage_of_the_required_families() -> None:
    """The issue's coverage list is present as rules."""
    ids = {r.id for r in RULES}
    for needed in (
        "secret.aws_access_key_id",
        "secret.aws_secret_access_key",
        "secret.gcp_service_account",
        "secret.azure_storage_key",
        "secret.azure_sas_token",
        "secret.github_token",
        "secret.gitlab_token",
        "secret.openai_api_key",
        "secret.anthropic_api_key",
        "secret.google_api_key",
        "secret.huggingface_token",
        "secret.stripe_key",
        "secret.slack_token",
        "secret.slack_webhook",
        "secret.twilio_key",
        "secret.sendgrid_api_key",
        "secret.npm_token",
        "secret.pypi_token",
        "secret.jwt",
        "secret.private_key",
        "secret.database_url",
        "secret.url_basic_auth",
        "secret.http_basic_auth",
        "secret.password_assignment",
        "secret.generic_secret",
        "secret.datadog_key",
        "secret.sentry_dsn",
        "pii.email",
        "pii.phone",
        "pii.credit_card",
        "pii.iban",
        "pii.us_ssn",
    ):
        assert needed in ids, needed


def _doc(body: str) -> str:
    return f"version = 1\n[[rules]]\nid = \"secret.t\"\nregex = 'a(b)c'\n{body}"


def test_loader_accepts_a_minimal_rule() -> None:
    """A rule needs an id and a regex; keywords are lower-cased for the prefilter."""
    (rule,) = load_rules_text(_doc('keywords = ["ABC"]\n'), "t.toml")
    assert rule.keywords == ("abc",)
    assert rule.priority == 50


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("colour = 1\n", "unknown fields"),
        ("validators = ['nope']\n", "unknown validator"),
        ("allow_patterns = ['(']\n", "allow_patterns"),
        ("entropy = 'high'\n", "entropy"),
    ],
)
def test_loader_rejects_malformed_rules(body: str, message: str) -> None:
    """Typos in a rule file are errors naming the rule, never silently ignored."""
    with pytest.raises(RuleError, match=message):
        load_rules_text(_doc(body), "t.toml")


def test_loader_rejects_backtracking_only_syntax() -> None:
    """Look-arounds and back-references do not compile under RE2, so they cannot ship."""
    doc = "version = 1\n[[rules]]\nid = \"secret.t\"\nregex = '(a)\\\\1(?=b)'\n"
    with pytest.raises(RuleError, match="RE2"):
        load_rules_text(doc, "t.toml")


def test_loader_requires_version_and_dotted_id() -> None:
    """The version line and a dotted id are mandatory."""
    with pytest.raises(RuleError, match="version"):
        load_rules_text("[[rules]]\nid='secret.x'\nregex='a'\n", "t.toml")
    with pytest.raises(RuleError, match="dotted"):
        load_rules_text("version = 1\n[[rules]]\nid='x'\nregex='a'\n", "t.toml")


def test_loader_reads_claims_match_and_the_url_rules_set_it() -> None:
    """``claims_match`` defaults to off; every URL-with-credentials rule turns it on."""
    (rule,) = load_rules_text(_doc(""), "t.toml")
    assert rule.claims_match is False
    (rule,) = load_rules_text(_doc("claims_match = true\n"), "t.toml")
    assert rule.claims_match is True
    claiming = {r.id for r in RULES if r.claims_match}
    assert claiming == {
        "secret.database_url",
        "secret.jdbc_oracle_password",
        "secret.url_basic_auth",
        "secret.url_token",
        "secret.sentry_dsn",
        "secret.go_mysql_dsn",
    }


def test_every_shipped_pattern_compiles_under_re2() -> None:
    """The shipped rules are loaded without compiling (the engine compiles on first use), so
    this is where a pattern that RE2 rejects is caught before it ships."""
    import re2

    from domestique.detect.re2opts import RE2_OPTIONS

    for rule in RULES:
        for pattern in (rule.regex, *rule.allow_patterns, *rule.deny_context):
            re2.compile(pattern, RE2_OPTIONS)


def test_a_rule_that_fails_to_compile_at_first_use_reports_an_error_not_clean() -> None:
    """Patterns compile on first use: one that does not compile is an engine error finding."""
    from domestique.keys import Fingerprinter

    broken = load_rules_text(
        "version = 1\n[[rules]]\nid = \"secret.t\"\nkeywords = ['zzkey']\nregex = 'zzkey(?=x)'\n",
        "t.toml",
        compile_patterns=False,
    )
    findings = Scanner(broken, Fingerprinter(b"k" * 32)).scan("zzkey=abc")
    assert [f.code for f in findings] == ["engine.detector_error"]
