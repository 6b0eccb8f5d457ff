"""Reason codes of the command guard."""

from __future__ import annotations

from domestique.reason_codes import ReasonCode

REASON_CODES: tuple[ReasonCode, ...] = (
    ReasonCode("cmd.pipe_to_shell", "Downloaded content is run by a shell or interpreter."),
    ReasonCode("cmd.opaque_command", "The command name is not a literal once unfolded."),
    ReasonCode("cmd.exfiltration", "Credentials or secrets are sent to the network."),
    ReasonCode("cmd.destructive.rm_root", "A recursive delete of /, ~, $HOME or similar."),
)
