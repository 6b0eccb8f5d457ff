"""``domestique hook HOST``: answer an agent host's hook on stdin, in the host's own protocol.

This module is the process entry point, so it is built to fail closed before anything else can
go wrong: at import time it needs only ``os`` and ``sys`` (already loaded by the interpreter), the
wire protocol (:mod:`domestique.hooks.wire`, stdlib only) and the host names
(:data:`domestique.hooks.hosts.HOSTS`, a module that imports nothing), and every
other import happens later inside a ``try`` whose failure is a deny in the host's protocol (exit 2
wherever the host treats exit 2 as a block). A reply is rendered by the host's module
(:mod:`domestique.hooks.hosts`), stdlib only; when even that cannot load, by a generic deny here.

The fast path hands the raw stdin bytes to the per-user decision daemon
(:mod:`domestique.hooks.daemon`) over a Unix socket and copies its answer out
(:func:`domestique.hooks.wire.ask_daemon`); the process then imports nothing but ``_socket``.
When the daemon is absent, wedged past a short timeout or answers garbage, the hook decides
in-process (:mod:`domestique.hooks.decide`), which is slower but equally correct, and once the
answer is written starts the daemon for next time.

What ``domestique install`` writes is the faster ``python -I -S …/hooks/client.py HOST``
(:mod:`domestique.hooks.client`), which comes here only when the daemon cannot answer; this
module serves ``domestique hook HOST`` (project settings, where no machine's path may be written).
"""

from __future__ import annotations

import os
import sys

from domestique.hooks import client
from domestique.hooks.hosts import HOSTS
from domestique.hooks.wire import (
    DAEMON_TIMEOUT_S,
    MAX_INPUT_BYTES,
    ask_daemon,
    generic_deny,
    parse_daemon_reply,
    socket_path,
)
from domestique.hooks.wire import write as _write

__all__ = [
    "DAEMON_TIMEOUT_S",
    "MAX_INPUT_BYTES",
    "answer",
    "ask_daemon",
    "decide",
    "fail_closed_reply",
    "main",
    "parse_daemon_reply",
    "run",
    "socket_path",
    "start_daemon",
]

TYPE_CHECKING = False  # not typing's: this module imports only os, sys, wire and the host names
if TYPE_CHECKING:
    from domestique.hooks.protocol import Reply


def fail_closed_reply(host: str, raw: bytes, code: str, detail: str) -> Reply:
    """A deny for an error, in the host's protocol, naming the reason code.

    When even the host's renderer cannot be loaded, a generic deny that blocks every host
    reading exit codes (and JSON ``decision``/``permissionDecision``).
    """
    try:
        from domestique.hooks.hosts import fail_closed_reply as render_fail_closed

        return render_fail_closed(host, raw, code, detail)
    except BaseException:  # noqa: BLE001 - the last resort must not raise either
        return generic_deny(code, detail)


def _read_stdin() -> bytes:
    data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
    return data if isinstance(data, bytes) else b""


def start_daemon(idle: str | None = None) -> None:
    """Start the per-user daemon in the background, detached; failures are ignored (the caller
    has its answer already). ``posix_spawn`` rather than ``subprocess`` (one import fewer on the
    hook's path) and no inherited descriptor: a daemon holding the host's pipe open would keep
    the host waiting for the hook to finish."""
    try:
        fds = os.listdir("/proc/self/fd") if os.path.isdir("/proc/self/fd") else range(3, 256)
        for fd in fds:
            if int(fd) > 2:
                try:  # noqa: SIM105 - contextlib is one import more on the hook's path
                    os.set_inheritable(int(fd), False)
                except OSError:
                    pass
        null = os.devnull
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_OPEN, 2, null, os.O_WRONLY, 0),
        ]
        # -I -S and the client file: the daemon runs this installation whatever the caller's
        # PYTHONPATH or working directory (the project, which the agent controls); setsid:
        # out of the hook's session, so the host's signals to it are not the daemon's.
        script = os.path.abspath(client.__file__)
        argv = [sys.executable, "-I", "-S", script, "--daemon", *([idle] if idle else [])]
        try:
            os.posix_spawn(sys.executable, argv, os.environ, file_actions=actions, setsid=True)
        except NotImplementedError:  # no POSIX_SPAWN_SETSID here: the daemon calls setsid()
            os.posix_spawn(sys.executable, argv, os.environ, file_actions=actions)
    except BaseException:  # noqa: BLE001, S110 - the hook's own answer does not depend on it
        pass


def decide(host: str, raw: bytes, *, daemon_tried: bool = False) -> tuple[Reply, bool]:
    """Decide one hook call: daemon first (unless the caller asked it already), else
    in-process; any failure is a deny. Also says whether a daemon should be started."""
    if host not in HOSTS:
        reply = fail_closed_reply(host, raw, "hook.unknown_host", f"no adapter for host {host!r}")
        return reply, False
    if not raw.strip() or len(raw) > MAX_INPUT_BYTES:
        reply = fail_closed_reply(host, raw, "hook.malformed_input", "empty or oversized input")
        return reply, False
    mode = os.environ.get("DOMESTIQUE_HOOKD", "on")
    if mode != "off" and not daemon_tried:
        answered = ask_daemon(host, raw)
        if answered is not None:
            return answered, False
    try:
        from domestique.hooks.decide import decide_in_process
    except BaseException as exc:  # noqa: BLE001 - any import failure must deny
        detail = f"{type(exc).__name__} while loading Domestique"
        return fail_closed_reply(host, raw, "hook.import_failed", detail), False
    reply = decide_in_process(host, raw, pid=os.getpid(), env=dict(os.environ), cwd=os.getcwd())
    return reply, mode == "on"


def answer(host: str, raw: bytes, *, daemon_tried: bool = False) -> int:
    """Decide, write the answer, and only then start a daemon (the host is waiting for the
    answer, not for the daemon); the exit code."""
    if host in ("-h", "--help"):
        sys.stdout.write(f"usage: domestique hook {{{','.join(HOSTS)}}} < hook.json\n")
        return 0
    start = False
    try:
        reply, start = decide(host, raw, daemon_tried=daemon_tried)
    except BaseException as exc:  # noqa: BLE001 - the boundary: everything denies
        reply = fail_closed_reply(host, raw, "engine.internal_error", type(exc).__name__)
    code = _write(reply)
    if start:
        start_daemon()
    return code


def run(argv: list[str]) -> int:
    """``domestique hook HOST``: read stdin, answer on stdout/stderr, return the exit code."""
    host = argv[0] if argv else ""
    raw = b""
    try:
        if host not in ("-h", "--help"):
            raw = _read_stdin()
    except BaseException as exc:  # noqa: BLE001 - the boundary: everything denies
        return _write(fail_closed_reply(host, raw, "engine.internal_error", type(exc).__name__))
    return answer(host, raw)


def main() -> None:
    raise SystemExit(run(sys.argv[1:]))


if __name__ == "__main__":
    main()
