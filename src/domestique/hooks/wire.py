"""The hook daemon's wire protocol, client side, and the installed hook command's logic.

The installed command (:mod:`domestique.hooks.client`, run with ``-I -S``) calls :func:`main`,
which imports only ``os``, ``sys`` and ``_socket`` on the fast path: it sends the raw payload,
the caller's working directory and environment and this installation's :func:`identity` to the
daemon's socket (:func:`socket_path`; ``DQH2`` request, ``DQR1`` reply, see
:mod:`domestique.hooks.daemon`) and copies the rendered answer out. When the daemon is absent,
belongs to another user, runs another installation (it answers ``DQN1``), is wedged past
``DOMESTIQUE_HOOKD_TIMEOUT_MS`` or answers anything but a well-formed reply, :func:`in_process`
loads the whole package (:func:`load_package`) and :func:`domestique.hooks.entry.answer`
decides, then starts a daemon for next time. Every failure on that path denies in the host's
protocol; when not even the host's renderer loads, :func:`generic_deny` blocks on every host.

``domestique hook HOST`` (:mod:`domestique.hooks.entry`), the daemon and ``doctor`` use the same
functions.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_DIR = os.path.dirname(HERE)  # the ``domestique`` package folder this file belongs to
MAX_INPUT_BYTES = 16 * 1024 * 1024  # more than any real hook payload; more is malformed
DAEMON_TIMEOUT_S = 2.0  # a wedged daemon costs at most this before the in-process decision
Reply = tuple[bytes, bytes, int]  # stdout, stderr, exit code


def socket_path(home: str | None = None) -> str:
    """``$DOMESTIQUE_HOME/hookd.sock`` (the default home as in domestique.keys)."""
    base = home or os.environ.get("DOMESTIQUE_HOME")
    if not base:
        if sys.platform == "darwin":
            base = os.path.expanduser("~/Library/Application Support/domestique")
        else:
            state = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
            base = os.path.join(state, "domestique")
    return os.path.join(os.path.expanduser(base), "hookd.sock")


def identity(package_dir: str = PACKAGE_DIR) -> bytes:
    """The installation a process runs (its package folder, resolved): a daemon answers only
    clients of its own."""
    return os.fsencode(os.path.realpath(package_dir))


def generic_deny(code: str, detail: str) -> Reply:
    """The deny when not even the host's renderer loads: exit 2 and a JSON deny (Copilot)."""
    message = f"Domestique denied this ({code}): {detail}; failing closed.\n"
    body = b'{"decision":"deny","permissionDecision":"deny"}\n'
    return body, message.encode("utf-8", "replace"), 2


def encode_request(host: str, raw: bytes, ident: bytes | None = None) -> bytes:
    """``DQH2 <pid> <len host> <len cwd> <len env> <len identity>`` and those fields."""
    env = b"\0".join(k + b"=" + v for k, v in os.environb.items())
    cwd = os.fsencode(os.getcwd())
    who = identity() if ident is None else ident
    name = host.encode("utf-8", "surrogateescape")
    head = b"DQH2 %d %d %d %d %d\n" % (os.getpid(), len(name), len(cwd), len(env), len(who))
    return head + name + cwd + env + who + raw


def split_frame(
    data: bytes, magic: bytes, error: type[ValueError], *, exact: bool
) -> tuple[list[int], bytes]:
    """A request's five header numbers (pid, then the lengths of the parts that follow) and
    its body; raises ``error`` for a bad header or lengths that do not fit (``exact``: the
    parts fill the body; otherwise a payload may follow them)."""
    head, sep, rest = data.partition(b"\n")
    parts = head.split(b" ")
    if not sep or len(parts) != 6 or parts[0] != magic:
        raise error("bad header")
    try:
        nums = [int(p) for p in parts[1:]]
    except ValueError as exc:
        raise error("bad header numbers") from exc
    total = sum(nums[1:])
    if min(nums) < 0 or (total != len(rest) if exact else total > len(rest)):
        raise error("bad lengths")
    return nums, rest


def daemon_timeout() -> float:
    """``DOMESTIQUE_HOOKD_TIMEOUT_MS`` (1…60000) in seconds, else :data:`DAEMON_TIMEOUT_S`."""
    value = os.environ.get("DOMESTIQUE_HOOKD_TIMEOUT_MS", "")
    ok = value.isdigit() and 0 < int(value) <= 60_000
    return int(value) / 1000 if ok else DAEMON_TIMEOUT_S


def exchange(request: bytes, timeout: float | None = None) -> bytes | None:
    """Send ``request`` to the daemon and read its answer to EOF; None when the daemon is
    absent, not this user's, refused, reset (it died) or timed out."""
    import _socket

    path = socket_path()
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    chunks = []
    try:
        if os.stat(path).st_uid != os.getuid():
            return None  # somebody else's socket: never trust its answer
        sock.settimeout(daemon_timeout() if timeout is None else timeout)
        sock.connect(path)
        sock.sendall(request)
        sock.shutdown(_socket.SHUT_WR)
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    except (OSError, ValueError):  # absent, refused, reset (the daemon died), timed out
        return None
    finally:
        sock.close()
    return b"".join(chunks)


def ask_daemon(host: str, raw: bytes, *, timeout: float | None = None) -> Reply | None:
    """The daemon's answer, or None when it is absent, not ours, wedged or garbled."""
    data = exchange(encode_request(host, raw), timeout)
    return None if data is None else parse_daemon_reply(data)


def parse_daemon_reply(data: bytes, codes: tuple[int, ...] = (0, 2)) -> Reply | None:
    """``DQR1 <exit> <len stdout> <len stderr>\\n<stdout><stderr>``; None if malformed or the
    exit code is not one of ``codes``."""
    head, sep, rest = data.partition(b"\n")
    parts = head.split(b" ")
    if not sep or len(parts) != 4 or parts[0] != b"DQR1":
        return None
    try:
        code, n_out, n_err = int(parts[1]), int(parts[2]), int(parts[3])
    except ValueError:
        return None
    if n_out < 0 or n_err < 0 or len(rest) != n_out + n_err or code not in codes:
        return None
    return rest[:n_out], rest[n_out:], code


def load_package() -> None:
    """Make the package importable after ``-S``: ``site`` as a normal start runs it (``.pth``
    files too; under ``-I`` not the user's site), this file's package folder first. Raises
    ImportError when another Domestique would be loaded."""
    root = os.path.dirname(PACKAGE_DIR)
    if sys.path and os.path.realpath(sys.path[0] or ".") == os.path.realpath(HERE):
        del sys.path[0]  # run without -I: never import hooks/ modules as top-level names
    if "site" not in sys.modules:
        import site

        while root in sys.path:  # put there by client.py; site decides whether it is a site dir
            sys.path.remove(root)
        site.main()
        if root not in sys.path:
            site.addsitedir(root)  # not one of site's (a user-site install): its .pth files too
    while root in sys.path:
        sys.path.remove(root)
    sys.path.insert(0, root)
    import domestique

    if identity(os.path.dirname(os.path.abspath(domestique.__file__))) != identity():
        raise ImportError(f"another Domestique shadows {PACKAGE_DIR}")


def write(reply: Reply) -> int:
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


def in_process(host: str, raw: bytes, *, daemon_tried: bool) -> int:
    """The package decides (and starts a daemon); an import failure denies."""
    try:
        load_package()
        from domestique.hooks.entry import answer
    except BaseException as exc:  # noqa: BLE001 - any import failure must deny
        detail = f"{type(exc).__name__} while loading Domestique"
        reply = generic_deny("hook.import_failed", detail)
        try:  # the host's own deny shape, when this installation's renderer loads
            import domestique

            if identity(os.path.dirname(os.path.abspath(domestique.__file__))) == identity():
                from domestique.hooks.hosts import fail_closed_reply

                reply = fail_closed_reply(host, raw, "hook.import_failed", detail)
        except BaseException:  # noqa: BLE001, S110 - keep the generic deny
            pass
        return write(reply)
    return answer(host, raw, daemon_tried=daemon_tried)


def main(argv: list[str]) -> int:
    """``HOST`` (payload on stdin), or ``--daemon [IDLE]`` (the daemon, as the hook starts it)."""
    if argv[:1] == ["--daemon"]:
        os.chdir("/")
        if os.getsid(0) != os.getpid():
            try:  # noqa: SIM105 - out of the hook's session, where the spawn could not do it
                os.setsid()
            except OSError:
                pass  # a process group leader (started by hand from a shell)
        load_package()
        from domestique.hooks.daemon import main as serve

        return serve(argv[1:])
    host = argv[0] if argv else ""
    raw = b""
    try:
        data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
        raw = data if isinstance(data, bytes) else b""
        if (
            os.environ.get("DOMESTIQUE_HOOKD", "on") != "off"
            and raw.strip()
            and len(raw) <= MAX_INPUT_BYTES
            and not host.startswith("-")
        ):
            reply = ask_daemon(host, raw)
            if reply is not None:
                return write(reply)
            return in_process(host, raw, daemon_tried=True)
    except BaseException:  # noqa: BLE001, S110 - anything unexpected: the package decides
        pass
    return in_process(host, raw, daemon_tried=False)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
