"""Policy: TOML rules in layers, validated strictly, that turn reasons into a verdict.

``load_policy(...)`` reads the builtin, system, user, explicit and project layers (project
layers may only tighten) and never raises: an invalid or unreadable layer yields a policy whose
every decision stops with ``policy.invalid``. See ``docs/policy.md`` for the file format.
"""

from __future__ import annotations

from domestique.policy._load import (
    BUILTIN_DIR,
    PROJECT_POLICY,
    SYSTEM_POLICY,
    LayerFile,
    build_policy,
    discover_layers,
    load_policy,
)
from domestique.policy._model import (
    MODES,
    CodeDecision,
    DecisionContext,
    EffectivePolicy,
    LayerInfo,
    PolicySettings,
    Rule,
    is_protected,
    stop_for,
)

__all__ = [
    "BUILTIN_DIR",
    "MODES",
    "PROJECT_POLICY",
    "SYSTEM_POLICY",
    "CodeDecision",
    "DecisionContext",
    "EffectivePolicy",
    "LayerFile",
    "LayerInfo",
    "PolicySettings",
    "Rule",
    "build_policy",
    "discover_layers",
    "is_protected",
    "load_policy",
    "stop_for",
]
