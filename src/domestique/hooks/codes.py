"""Reason codes of the agent hooks."""

from __future__ import annotations

from domestique.reason_codes import ReasonCode

REASON_CODES: tuple[ReasonCode, ...] = (
    ReasonCode(
        "hook.malformed_input", "The host's hook input was empty, not JSON or missing fields."
    ),
    ReasonCode(
        "hook.unknown_event",
        "The host sent a hook event the adapter does not handle; it is denied.",
    ),
    ReasonCode(
        "hook.unknown_host",
        "`domestique hook` was started for a host it has no adapter for; it denies.",
    ),
    ReasonCode(
        "hook.unknown_tool",
        "A host tool the policy does not know; the policy's settings.unknown_tool applies.",
    ),
    ReasonCode(
        "hook.import_failed",
        "Domestique's own modules could not be loaded in the hook process; it denies.",
    ),
    ReasonCode(
        "hook.credential_read",
        "An agent tool reads a credential file (.env, cloud credentials, SSH keys, keychains).",
    ),
    ReasonCode(
        "hook.guard_tamper",
        "An agent tool writes a hook settings file or Domestique's policy or state.",
    ),
)
