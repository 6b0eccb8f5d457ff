"""What a hook says: one message per decision citing the reason codes and, for a stop, what to
do instead. Adding a sentence for a new reason code goes in :data:`ALTERNATIVES`."""

from __future__ import annotations

from collections.abc import Sequence

from domestique.hooks.protocol import EventKind
from domestique.records import Action, Reason

ERROR_PREFIXES: tuple[str, ...] = (
    "engine.",
    "audit.",
    "policy.invalid",
    "hook.malformed_input",
    "hook.unknown_event",
    "hook.unknown_host",
    "hook.import_failed",
)

# What to do instead, by reason-code prefix (first match wins); one sentence each.
ALTERNATIVES: tuple[tuple[str, str], ...] = (
    (
        "cmd.pipe_to_shell",
        "download the script to a file, show it to the user, and run it only "
        "after they have reviewed it.",
    ),
    (
        "cmd.destructive.",
        "delete only specific paths inside the project, or ask the user to do it.",
    ),
    (
        "cmd.exfiltration",
        "do not send credentials or files off the machine; ask the user to do "
        "this step themselves.",
    ),
    (
        "cmd.opaque_command",
        "write the command out literally, without eval, encoded text or a "
        "variable as the command name.",
    ),
    (
        "cmd.guard_tamper",
        "leave hook settings and Domestique's policy unchanged; ask the user if a change is "
        "really needed.",
    ),
    (
        "cmd.credential_read",
        "ask the user for the specific non-secret setting you need instead of reading the "
        "credential file.",
    ),
    ("cmd.", "use a narrower command that does only what the task needs, or ask the user."),
    ("secret.", "leave the secret out and refer to it by its environment variable or file name."),
    ("records.", "leave the customer data out; describe the record or use synthetic data."),
    ("pii.", "leave the personal data out or replace it with synthetic values."),
    (
        "hook.credential_read",
        "ask the user for the specific non-secret setting you need instead "
        "of reading the credential file.",
    ),
    (
        "hook.guard_tamper",
        "leave hook settings and Domestique's policy unchanged; ask the user if "
        "a change is really needed.",
    ),
    (
        "hook.unknown_tool",
        "use a standard tool (shell, read, edit) or ask the user to allow this "
        "tool in the Domestique policy.",
    ),
)


def instead_for(codes: Sequence[str]) -> str | None:
    for prefix, sentence in ALTERNATIVES:
        if any(c.startswith(prefix) for c in codes):
            return sentence
    return None


WHAT = {  # what a message calls the call, by kind of event
    EventKind.SHELL: "command",
    EventKind.READ: "file read",
    EventKind.WRITE: "file write",
    EventKind.PROMPT: "prompt",
    EventKind.MCP: "MCP tool call",
    EventKind.FETCH: "web request",
    EventKind.BENIGN: "tool call",
    EventKind.UNKNOWN: "tool call",
}


PROMPT_STOPPED = (
    "Your prompt was not sent. Remove the secret from it (it is shown masked above) and send the "
    "prompt again; refer to the secret by its environment variable or file name instead. If it "
    "was pasted anywhere else, rotate it."
)


def compose_message(action: Action, reasons: Sequence[Reason], what: str) -> str:
    """One message citing the reason codes and, for a stop, what to do instead.

    ``action`` is what the host will actually do (an ask the host cannot offer arrives here as
    a deny), so the message never promises a confirmation that will not come.
    """
    codes = list(dict.fromkeys(r.code for r in reasons))
    if not action.stops:
        cited = f" [{', '.join(codes)}]" if codes else ""
        return f"Domestique allowed this {what}{cited}."
    detail = "; ".join(f"{r.code}: {r.message}" for r in reasons[:4])
    more = f" (+{len(reasons) - 4} more)" if len(reasons) > 4 else ""
    if what == "prompt" and not any(c.startswith(ERROR_PREFIXES) for c in codes):
        return f"Domestique stopped this prompt [{', '.join(codes)}]: {detail}{more}. " + (
            PROMPT_STOPPED
            if any(c.startswith("secret.") for c in codes)
            else "Your prompt was not sent. Remove what is cited above and send it again."
        )
    verb = "asks you to confirm" if action is Action.ASK else "denied"
    instead = instead_for(codes) or "ask the user to check `domestique doctor` and the policy."
    return f"Domestique {verb} this {what} [{', '.join(codes)}]: {detail}{more}. Instead: {instead}"
