"""The per-user hook daemon: decisions with the policy, scanner and audit store kept warm.

A hook process is short-lived; most of its cost is Python importing and compiling what a
decision needs. The daemon pays that once. ``domestique hook`` connects to
``$DOMESTIQUE_HOME/hookd.sock``, sends the raw stdin bytes, and copies the rendered reply out
(:func:`domestique.hooks.entry.ask_daemon`).

Safety:

- the socket lives in ``DOMESTIQUE_HOME`` (mode 0700) with mode 0600, and every connection's peer
  is checked with ``SO_PEERCRED`` (Linux): another user's process is refused without an answer;
- one daemon per home (an ``flock`` on ``hookd.lock``); it exits after ``IDLE_TIMEOUT_S``;
- every request is decided by :class:`domestique.hooks.decide.Judge` inside a deny-on-exception
  boundary; a request that cannot be read gets a deny reply, never an allow;
- the hook never depends on the daemon: absent, wedged (client timeout) or garbled ⇒ the hook
  decides in-process;
- its own code files are checked (:func:`code_stamp`) after every answer and, when that check is
  older than :data:`STAMP_FRESH_S`, before the next one: a change makes it exit unanswered.

Wire format (request, :func:`domestique.hooks.wire.encode_request`):
``DQH2 <pid> <len host> <len cwd> <len env> <len identity>\\n`` then host, cwd, the environment
(``NUL``-separated ``K=V``), the client's installation (:func:`domestique.hooks.wire.identity`)
and the hook payload up to EOF. Reply: ``DQR1 <exit> <len stdout> <len stderr>\\n`` then stdout
and stderr. A client of another installation gets ``DQN1\\n`` and one of another protocol version
no answer at all: either decides in-process, with its own code, rather than take this daemon's
word. ``domestique check`` sends a ``DQC1`` request (:mod:`domestique.cli._fast`,
:mod:`domestique.hooks.checkd`) and gets the same ``DQR1`` reply, exit 0, 1 or 2.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import stat
import struct
import sys
import time
from pathlib import Path

import domestique
from domestique.hooks.decide import Judge
from domestique.hooks.entry import fail_closed_reply
from domestique.hooks.hosts import HOSTS
from domestique.hooks.protocol import Reply
from domestique.hooks.wire import identity, socket_path, split_frame
from domestique.keys import domestique_home, ensure_private_dir

IDLE_TIMEOUT_S = 30 * 60
REQUEST_TIMEOUT_S = 5.0
# The code files are checked after every answer; before one only when that check is older than
# this (requests in a burst skip ~200 stat calls; a change is acted on within this time).
STAMP_FRESH_S = 0.25
MAX_REQUEST_BYTES = 32 * 1024 * 1024


class BadRequest(ValueError):
    """A request that does not follow the wire format."""


def parse_request(data: bytes) -> tuple[int, str, str, dict[str, str], bytes, bytes]:
    """(pid, host, cwd, env, identity, payload) from one request; raises BadRequest."""
    (pid, n_host, n_cwd, n_env, n_id), rest = split_frame(data, b"DQH2", BadRequest, exact=False)
    host = rest[:n_host].decode("utf-8", "replace")
    cwd = rest[n_host : n_host + n_cwd].decode("utf-8", "surrogateescape")
    at = n_host + n_cwd
    env_blob = rest[at : at + n_env]
    env: dict[str, str] = {}
    for item in env_blob.split(b"\0") if env_blob else ():
        key, eq, value = item.partition(b"=")
        if eq:
            env[key.decode("utf-8", "surrogateescape")] = value.decode("utf-8", "surrogateescape")
    ident = rest[at + n_env : at + n_env + n_id]
    return pid, host, cwd, env, ident, rest[at + n_env + n_id :]


def encode_reply(reply: Reply) -> bytes:
    out, err, code = reply
    return b"DQR1 %d %d %d\n" % (code, len(out), len(err)) + out + err


def peer_credentials(conn: socket.socket) -> tuple[int, int] | None:
    """(pid, uid) of the connected peer (Linux ``SO_PEERCRED``); None where unsupported."""
    opt = getattr(socket, "SO_PEERCRED", None)
    if opt is None:
        return None
    size = struct.calcsize("3i")
    pid, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, opt, size))
    return pid, uid


def _recv_all(conn: socket.socket) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > MAX_REQUEST_BYTES:
            raise BadRequest("request too large")
        chunks.append(chunk)


def _exit_on_signal(signum: int, _frame: object) -> None:
    raise SystemExit(0)


def code_files() -> tuple[str, ...]:
    """Every module and rule file of the package, and its folders (a new file shows there)."""
    root = Path(domestique.__file__).parent
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        found.append(dirpath)
        found += [
            os.path.join(dirpath, n)
            for n in sorted(filenames)
            if n.endswith((".py", ".toml", ".json", ".txt"))
        ]
    return tuple(found)


def code_stamp(files: tuple[str, ...] | None = None) -> tuple[tuple[int, int], ...]:
    """Size and modification time of each of :func:`code_files`, to notice an upgrade or an
    edit underneath us: any of them (guard rules, detector rules, the builtin policy) can
    change a decision. About 100 ``stat`` calls on a list made once: ~0.1 ms."""
    stamps: list[tuple[int, int]] = []
    for path in code_files() if files is None else files:
        try:
            st = os.stat(path)
            if stat.S_ISDIR(st.st_mode):
                # a folder by the names in it: its mtime also moves when Python first writes
                # its __pycache__ there, which is no change of code
                names = sorted(n for n in os.listdir(path) if n != "__pycache__")
                stamps.append((len(names), hash(tuple(names))))
                continue
        except OSError:
            stamps.append((-1, -1))
            continue
        stamps.append((st.st_mtime_ns, st.st_size))
    return tuple(stamps)


class HookDaemon:
    """Accepts hook requests on the socket and answers them with one warm :class:`Judge`."""

    def __init__(self, home: Path, *, idle_timeout: float = IDLE_TIMEOUT_S) -> None:
        self.home = home
        self.idle_timeout = idle_timeout
        self.judge = Judge(home)
        self.judge.eager_scanner = True  # known values are each caller's, not the daemon's
        self.identity = identity(str(Path(domestique.__file__).parent))

    def warm(self) -> None:
        """Import and build what decisions need, so the first hook is as fast as the rest."""
        import domestique.audit
        import domestique.cli.check
        import domestique.guard

        self.judge.policy(None)
        with contextlib.suppress(Exception):
            self.judge.scanner()
        # Open the store: the records the hook that started it spooled are chained now.
        with contextlib.suppress(Exception):
            domestique.audit.store_for(self.home)

    def handle(self, conn: socket.socket) -> None:
        conn.settimeout(REQUEST_TIMEOUT_S)
        creds = peer_credentials(conn)
        if creds is not None and creds[1] != os.getuid():
            return  # another user: no answer at all
        host = ""
        try:
            data = _recv_all(conn)
            if data.startswith(b"DQC1 "):
                self.check(conn, data, creds)
                return
            if not data.startswith(b"DQH2 "):
                return  # another version's client: no answer, it decides in-process
            pid, host, cwd, env, ident, payload = parse_request(data)
            if ident != self.identity:
                conn.sendall(b"DQN1\n")  # another installation: it decides in-process
                return
            if creds is not None:
                pid = creds[0]  # the kernel's word, not the client's
            if host in HOSTS:
                reply = self.judge.decide(host, payload, pid=pid, env=env, cwd=cwd or None)
            else:
                detail = f"no adapter for host {host!r}"
                reply = fail_closed_reply(host, payload, "hook.unknown_host", detail)
        except Exception as exc:  # noqa: BLE001 - a request we cannot serve is a deny
            reply = fail_closed_reply(host, b"", "engine.internal_error", type(exc).__name__)
        conn.sendall(encode_reply(reply))

    def check(self, conn: socket.socket, data: bytes, creds: tuple[int, int] | None) -> None:
        """Answer a ``domestique check`` process (:mod:`domestique.hooks.checkd`). No answer at
        all when the request or the caller's context cannot be used, or the run fails: the
        client then runs the command in-process (never two answers, never an allow on doubt)."""
        from domestique.hooks.checkd import encode_captured, parse_check, serve_check

        try:
            pid, argv, cwd, env, ident = parse_check(data)
            if ident != self.identity:
                conn.sendall(b"DQN1\n")  # another installation: it runs in-process
                return
            captured = serve_check(argv, cwd, env, creds[0] if creds is not None else pid)
        except Exception:  # noqa: BLE001 - no answer: the client runs the command itself
            return
        conn.sendall(encode_captured(captured))

    def serve(self) -> int:
        ensure_private_dir(self.home)
        import fcntl

        lock = open(self.home / "hookd.lock", "a+b")  # noqa: SIM115 - held for the process life
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return 0  # another daemon serves this home
        path = socket_path(str(self.home))
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        self.warm()
        from domestique.hub.background import start_background_sync

        start_background_sync(self.home)  # enrolled endpoints only; a child process, never raises
        signal.signal(signal.SIGTERM, _exit_on_signal)  # so `finally` removes the socket
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            server.bind(path)
        finally:
            os.umask(old)
        try:
            # Inside the try: a SIGTERM from here on removes the socket and the pid file.
            os.chmod(path, 0o600)
            server.listen(64)
            files = code_files()
            stamp = code_stamp(files)
            server.settimeout(self.idle_timeout)
            (self.home / "hookd.pid").write_text(f"{os.getpid()}\n", encoding="ascii")
            checked = time.monotonic()
            while True:
                try:
                    conn, _ = server.accept()
                except TimeoutError:
                    return 0  # idle: the next hook starts a fresh daemon
                with conn, contextlib.suppress(OSError):
                    if time.monotonic() - checked > STAMP_FRESH_S and code_stamp(files) != stamp:
                        # Changed underneath us: no answer (the hook decides in-process with
                        # the new code) and exit, so the next hook starts a fresh daemon.
                        return 0
                    self.handle(conn)
                # After the answer, off the caller's clock: a change is found here, or before
                # the next answer if that comes later than STAMP_FRESH_S after this check.
                if code_stamp(files) != stamp:
                    return 0
                checked = time.monotonic()
        finally:
            with contextlib.suppress(OSError):
                os.unlink(path)
            with contextlib.suppress(OSError):
                (self.home / "hookd.pid").unlink()
            server.close()
            lock.close()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    idle = float(args[0]) if args else IDLE_TIMEOUT_S
    return HookDaemon(domestique_home(), idle_timeout=idle).serve()


if __name__ == "__main__":
    raise SystemExit(main())
