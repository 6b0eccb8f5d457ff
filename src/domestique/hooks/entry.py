"""``domestique hook HOST``: answer an agent host's hook on stdin, in the host's own protocol.

This module is the process entry point, so it is built to fail closed before anything else can
go wrong: at import time it needs only ``os`` and ``sys`` (already loaded by the interpreter), and
every project import happens later inside a ``try`` whose failure is a deny in the host's protocol
(exit 2 wherever the host treats exit 2 as a block). The host replies are rendered here, with the
standard library alone, for the same reason.

The fast path hands the raw stdin bytes to the per-user decision daemon
(:mod:`domestique.hooks.daemon`) over a Unix socket and copies its answer out; the process then
imports nothing but ``_socket``. When the daemon is absent, wedged past a short timeout or answers
garbage, the hook decides in-process (:mod:`domestique.hooks.judge`), which is slower but equally
correct, and starts the daemon for next time.

Run as ``python -P -c <shim> HOST`` (what ``domestique install`` writes; ``-P`` keeps the
project folder off ``sys.path``) or through ``domestique hook HOST``.
"""

from __future__ import annotations

import os
import sys

HOSTS: tuple[str, ...] = (
    "claude-code",
    "codex",
    "gemini",
    "cursor",
    "copilot",
    "windsurf",
    "cline",
)

# Hosts that block on exit code 2 (Claude Code, Codex, Gemini CLI, Cursor, Windsurf) or on any
# non-zero exit (Cline). Copilot documents only the JSON ``permissionDecision``.
_EXIT2_BLOCKS = frozenset({"claude-code", "codex", "gemini", "cursor", "windsurf", "cline"})
# Hosts with a working "ask the person" answer; the others get deny for ask. Not Codex: it
# parses ``permissionDecision: "ask"`` (and "allow") as unsupported, marks the hook failed and
# runs the tool call (openai/codex #28437, #21753): an ask there must be a deny, an allow silence.
_ASK_HOSTS = frozenset({"claude-code", "cursor"})

MAX_INPUT_BYTES = 16 * 1024 * 1024  # more than any real hook payload; more is malformed
DAEMON_TIMEOUT_S = 2.0  # a wedged daemon costs at most this before the in-process decision

Reply = tuple[bytes, bytes, int]  # stdout, stderr, exit code


def _dumps(obj: object) -> bytes:
    import json

    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def event_name(host: str, payload: object) -> str:
    """The host's event name for ``payload`` ('' when it cannot be told); never raises."""
    if not isinstance(payload, dict):
        return ""
    for key in ("hook_event_name", "agent_action_name", "hookName"):
        value = payload.get(key)
        if isinstance(value, str):
            return value
    if host == "copilot":
        # Copilot's payloads carry no event name: tell them apart by their fields.
        if "toolName" in payload:
            return "preToolUse"
        if "prompt" in payload:
            return "userPromptSubmitted"
    return ""


def render(host: str, event: str, action: str, message: str, *, error: bool = False) -> Reply:
    """The host's answer for ``action`` (allow | ask | deny; block counts as deny).

    **Allow is silence**: exit 0 and no decision, so the host's own permission rules and its
    "allow this?" prompt still apply (an explicit allow would switch them off). Cursor and
    Copilot get ``{}`` (a reply with no decision), Cline ``cancel: false``, Cursor's prompt
    hook ``continue: true``.

    **Deny is the protocol's structured decision** with exit 0 where the host has one (Claude
    Code, Codex and Gemini CLI show it as a policy decision; exit 2 would be shown as a failed
    hook), exit 2 where exit 2 is the only deny (Windsurf). ``message`` cites the reason codes
    and, for a stop, what to do instead. ``error`` marks a fail-closed answer (bad input, crash,
    import failure): it adds exit 2 on every host that blocks on it, so a host that cannot read
    the JSON still blocks.
    """
    if action not in ("allow", "ask", "deny", "block"):
        error = True
    action = host_action(host, event, action)
    stop = action != "allow"
    text = message.encode("utf-8", "replace")
    # The reason also goes to stderr where exit 2 carries it (the host shows stderr then).
    err = b""
    out = b""
    code = 0
    if host in ("claude-code", "codex"):
        if not stop:
            pass  # silence: the host's own rules decide
        elif event == "UserPromptSubmit":
            out = _dumps({"decision": "block", "reason": message})
        else:
            out = _dumps(
                {
                    "hookSpecificOutput": {
                        "hookEventName": event or "PreToolUse",
                        "permissionDecision": action,
                        "permissionDecisionReason": message,
                    }
                }
            )
    elif host == "gemini":
        # Gemini CLI reads stderr when stdout is empty: an allow writes neither.
        out = _dumps({"decision": "deny", "reason": message}) if stop else b""
    elif host == "cursor":
        if event == "beforeSubmitPrompt":
            reply = {"continue": False, "user_message": message} if stop else {"continue": True}
            out = _dumps(reply)
        elif not stop:
            out = b"{}\n"  # valid JSON (failClosed blocks on invalid), no decision
        elif event == "beforeReadFile":
            out = _dumps({"permission": action})
        else:
            out = _dumps({"permission": action, "user_message": message, "agent_message": message})
    elif host == "copilot":
        if event == "userPromptSubmitted" or not stop:
            out = b"{}\n"  # no decision (Copilot ignores the prompt hook's output anyway)
        else:
            out = _dumps({"permissionDecision": "deny", "permissionDecisionReason": message})
    elif host == "windsurf":
        code = 2 if stop else 0
    elif host == "cline":
        out = _dumps({"cancel": True, "errorMessage": message} if stop else {"cancel": False})
    else:
        # No adapter: a generic deny that blocks every host reading exit codes.
        out, code = _dumps({"decision": "deny", "reason": message}), 2
    if error and stop and host in _EXIT2_BLOCKS:
        code = 2
    if stop and code == 2:
        err = text + b"\n"
    return out, err, code


def host_action(host: str, event: str, action: str) -> str:
    """``action`` as ``host`` can carry it out: block is deny, an unknown word is deny, and ask
    is deny where the host (or this event of it) has no way to ask the person."""
    if action == "block" or action not in ("allow", "ask", "deny"):
        return "deny"
    if action == "ask" and (host not in _ASK_HOSTS or _ask_unsupported(host, event)):
        return "deny"
    return action


def _ask_unsupported(host: str, event: str) -> bool:
    """Events of ask-capable hosts that still have no ask: prompts and Cursor's file reads."""
    return event in ("UserPromptSubmit", "beforeSubmitPrompt", "beforeReadFile")


def fail_closed_reply(host: str, raw: bytes, code: str, detail: str) -> Reply:
    """A deny for an error, in the host's protocol, naming the reason code; stdlib only."""
    event = ""
    try:
        import json

        event = event_name(host, json.loads(raw))
    except BaseException:  # noqa: BLE001, S110 - unreadable input: answer in the default event shape
        pass
    message = f"Domestique denied this ({code}): {detail}; failing closed."
    return render(host, event, "deny", message, error=True)


def _read_stdin() -> bytes:
    data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
    return data if isinstance(data, bytes) else b""


def _write(reply: Reply) -> int:
    out, err, code = reply
    try:
        if out:
            sys.stdout.buffer.write(out)
            sys.stdout.buffer.flush()
        if err:
            sys.stderr.buffer.write(err)
            sys.stderr.buffer.flush()
    except BaseException:  # noqa: BLE001 - a closed pipe must not turn a deny into a crash
        return 2 if code else code
    return code


def socket_path(home: str | None = None) -> str:
    """The daemon's socket: ``$DOMESTIQUE_HOME/hookd.sock`` (same default as domestique.keys)."""
    base = home or os.environ.get("DOMESTIQUE_HOME")
    if not base:
        if sys.platform == "darwin":
            base = os.path.expanduser("~/Library/Application Support/domestique")
        else:
            state = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
            base = os.path.join(state, "domestique")
    return os.path.join(os.path.expanduser(base), "hookd.sock")


def _env_blob() -> bytes:
    return b"\0".join(k + b"=" + v for k, v in os.environb.items())


def _daemon_timeout() -> float:
    """``DOMESTIQUE_HOOKD_TIMEOUT_MS`` (1–60000), else :data:`DAEMON_TIMEOUT_S`."""
    value = os.environ.get("DOMESTIQUE_HOOKD_TIMEOUT_MS", "")
    if value.isdigit() and 0 < int(value) <= 60_000:
        return int(value) / 1000
    return DAEMON_TIMEOUT_S


def ask_daemon(host: str, raw: bytes, *, timeout: float | None = None) -> Reply | None:
    """The daemon's answer, or None when it is absent, not ours, wedged or garbled."""
    import _socket

    if timeout is None:
        timeout = _daemon_timeout()

    path = socket_path()
    try:
        st = os.stat(path)
    except OSError:
        return None
    if st.st_uid != os.getuid():
        return None  # somebody else's socket: never trust its answer
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(path)
        env = _env_blob()
        cwd = os.getcwd().encode("utf-8", "surrogateescape")
        head = b"DQH1 %d %d %d %d\n" % (os.getpid(), len(host), len(cwd), len(env))
        sock.sendall(head + host.encode() + cwd + env + raw)
        sock.shutdown(_socket.SHUT_WR)
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        sock.close()
    return parse_daemon_reply(b"".join(chunks))


def parse_daemon_reply(data: bytes) -> Reply | None:
    """``DQR1 <exit> <stdout length> <stderr length>\\n<stdout><stderr>``; None if malformed."""
    head, sep, rest = data.partition(b"\n")
    parts = head.split(b" ")
    if not sep or len(parts) != 4 or parts[0] != b"DQR1":
        return None
    try:
        code, n_out, n_err = int(parts[1]), int(parts[2]), int(parts[3])
    except ValueError:
        return None
    if n_out < 0 or n_err < 0 or len(rest) != n_out + n_err or code not in (0, 2):
        return None
    return rest[:n_out], rest[n_out:], code


def _start_daemon() -> None:
    """Start the per-user daemon in the background; failures are ignored (we decided already)."""
    try:
        import subprocess

        subprocess.Popen(  # our own interpreter and module, no shell
            # -P and cwd="/": the hook's folder is the project, which the agent controls; a
            # ``domestique/`` package there must not become the daemon every hook trusts.
            [sys.executable, "-P", "-m", "domestique.hooks.daemon"],
            cwd="/",
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except BaseException:  # noqa: BLE001, S110 - the hook's own answer does not depend on it
        pass


def decide(host: str, raw: bytes) -> Reply:
    """Decide one hook call: daemon first, else in-process; any failure is a deny."""
    if host not in HOSTS:
        return fail_closed_reply(host, raw, "hook.unknown_host", f"no adapter for host {host!r}")
    if not raw.strip() or len(raw) > MAX_INPUT_BYTES:
        return fail_closed_reply(host, raw, "hook.malformed_input", "empty or oversized input")
    mode = os.environ.get("DOMESTIQUE_HOOKD", "on")
    if mode != "off":
        reply = ask_daemon(host, raw)
        if reply is not None:
            return reply
    try:
        from domestique.hooks.judge import decide_in_process
    except BaseException as exc:  # noqa: BLE001 - any import failure must deny
        return fail_closed_reply(
            host, raw, "hook.import_failed", f"{type(exc).__name__} while loading Domestique"
        )
    reply = decide_in_process(host, raw, pid=os.getpid(), env=dict(os.environ), cwd=os.getcwd())
    if mode == "on":
        _start_daemon()
    return reply


def run(argv: list[str]) -> int:
    """``domestique hook HOST``: read stdin, answer on stdout/stderr, return the exit code."""
    host = argv[0] if argv else ""
    raw = b""
    try:
        if host in ("-h", "--help"):
            sys.stdout.write(f"usage: domestique hook {{{','.join(HOSTS)}}} < hook.json\n")
            return 0
        raw = _read_stdin()
        reply = decide(host, raw)
    except BaseException as exc:  # noqa: BLE001 - the boundary: everything denies
        reply = fail_closed_reply(host, raw, "engine.internal_error", type(exc).__name__)
    return _write(reply)


def main() -> None:
    raise SystemExit(run(sys.argv[1:]))


if __name__ == "__main__":
    main()
