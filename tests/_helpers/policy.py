"""A private builtin policy and reason-code registry for the policy tests (the fixture
``policy_dir`` in ``tests/policy/conftest.py`` installs them), and loading helpers."""

from __future__ import annotations

import textwrap
from pathlib import Path

from domestique.policy import DecisionContext, EffectivePolicy, load_policy
from domestique.records import Component

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


def load(policy_dir: Path, **kwargs: object) -> EffectivePolicy:
    """The policy of ``policy_dir``'s layers (its home, no system file, no cache)."""
    return load_policy(home=policy_dir / "home", system_file=None, use_cache=False, **kwargs)  # type: ignore[arg-type]


def write(path: Path, text: str) -> Path:
    """``text`` (dedented) written to ``path``, its folders made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path
