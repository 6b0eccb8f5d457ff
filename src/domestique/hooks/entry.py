"""``domestique hook HOST``: answer an agent host's hook on stdin, in the host's own protocol.

This module is the process entry point, so it is built to fail closed before anything else can
go wrong: at import time it needs only ``os`` and ``sys`` (already loaded by the interpreter) and
the host names (:data:`domestique.hooks.hosts.HOSTS`, a module that imports nothing), and every
other import happens later inside a ``try`` whose failure is a deny in the host's protocol (exit 2
wherever the host treats exit 2 as a block). A reply is rendered by the host's module
(:mod:`domestique.hooks.hosts`), stdlib only; when even that cannot load, by a generic deny here.

The fast path hands the raw stdin bytes to the per-user decision daemon
(:mod:`domestique.hooks.daemon`) over a Unix socket and copies its answer out; the process then
imports nothing but ``_socket``. When the daemon is absent, wedged past a short timeout or answers
garbage, the hook decides in-process (:mod:`domestique.hooks.decide`), which is slower but equally
correct, and starts the daemon for next time.

Run as ``python -P -c <shim> HOST`` (what ``domestique install`` writes; ``-P`` keeps the
project folder off ``sys.path``) or through ``domestique hook HOST``.
"""

from __future__ import annotations

import os
import sys

from domestique.hooks.hosts import HOSTS

MAX_INPUT_BYTES = 16 * 1024 * 1024  # more than any real hook payload; more is malformed
DAEMON_TIMEOUT_S = 2.0  # a wedged daemon costs at most this before the in-process decision

TYPE_CHECKING = False  # not typing's: this module imports only os and sys (and the host names)
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
        message = f"Domestique denied this ({code}): {detail}; failing closed."
        body = b'{"decision":"deny","permissionDecision":"deny"}\n'  # the reason on stderr
        return body, message.encode("utf-8", "replace") + b"\n", 2


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
        from domestique.hooks.decide import decide_in_process
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
