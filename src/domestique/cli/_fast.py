"""``domestique check`` through the hook daemon: the command's stdlib-only fast path.

A fresh interpreter that imports the guard, the policy and the audit store pays ~100 ms before
it judges anything; the per-user hook daemon (:mod:`domestique.hooks.daemon`) has all of that
loaded. So :func:`domestique.cli.main` first hands a plain ``check`` command line to the daemon
here, importing nothing but ``os``, ``sys`` and ``_socket`` (through
:mod:`domestique.hooks.wire`), and writes out what the daemon's run of ``check`` printed. The
daemon runs the very same :func:`domestique.cli.check.run` with this process's environment,
working directory and parent process (:mod:`domestique.hooks.checkd`), so the policy, the actor,
the audit record, the text, the JSON and the exit code are those of the in-process command.

Only a command line of the options ``--json``, ``--actor agent|human`` and ``--policy FILE``,
then ``--`` and at least one word, is sent (:func:`eligible`); anything else (``--jsonl``, which
reads stdin, ``--help``, an abbreviated or unknown option, a missing ``--``) runs in-process.
So does every case where the daemon cannot be trusted to answer: ``DOMESTIQUE_HOOKD=off``, no
daemon, another user's socket, a daemon of another installation (``DQN1``) or one whose code
changed (no answer), a timeout (``DOMESTIQUE_HOOKD_TIMEOUT_MS``), a reply that is not a
well-formed ``DQR1`` with exit 0, 1 or 2. The in-process run then decides and records, and
(``DOMESTIQUE_HOOKD`` unset or ``on``) starts a daemon for next time, as the hook does.

Request: ``DQC1 <pid> <len argv> <len cwd> <len env> <len identity>\\n`` then the arguments
(``NUL``-separated, file-system encoded), the working directory, the environment (``NUL``
separated ``K=V``) and :func:`domestique.hooks.wire.identity`. Reply: ``DQR1 <exit> <len
stdout> <len stderr>\\n`` and the two texts, UTF-8 with lone surrogates kept (``surrogatepass``):
they are written through this process's own ``sys.stdout`` and ``sys.stderr``, with their
encoding and error handler, as the in-process command writes them.
"""

import os
import sys

from domestique.hooks import wire

_FLAGS = frozenset({"--json", "--actor=agent", "--actor=human"})


def eligible(argv: list[str]) -> bool:
    """``argv`` (after ``check``) is options this path knows, ``--`` and a command."""
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            return i + 1 < len(argv)
        if word in _FLAGS or (word.startswith("--policy=") and len(word) > 9):
            i += 1
        elif word in ("--actor", "--policy") and _value_ok(word, argv[i + 1 : i + 2]):
            i += 2
        else:
            return False
    return False


def _value_ok(option: str, value: list[str]) -> bool:
    """``--actor`` takes ``agent`` or ``human``; ``--policy`` a file not spelled like an option."""
    if option == "--actor":
        return value in (["agent"], ["human"])
    return bool(value) and not value[0].startswith("-")


def encode_request(argv: list[str]) -> bytes:
    """The ``DQC1`` request for ``argv`` (``check`` and its arguments) from this process."""
    args = b"\0".join(os.fsencode(a) for a in argv)
    cwd = os.fsencode(os.getcwd())
    env = b"\0".join(k + b"=" + v for k, v in os.environb.items())
    who = wire.identity()
    head = b"DQC1 %d %d %d %d %d\n" % (os.getpid(), len(args), len(cwd), len(env), len(who))
    return head + args + cwd + env + who


def ask(argv: list[str]) -> tuple[str, str, int] | None:
    """What the daemon's ``check`` printed and its exit code; None when it could not answer."""
    if sys.getfilesystemencoding() != "utf-8":
        return None  # the daemon decodes the arguments and paths as UTF-8
    try:
        data = wire.exchange(encode_request(argv))
        reply = None if data is None else wire.parse_daemon_reply(data, (0, 1, 2))
        if reply is None:
            return None
        out, err, code = reply
        return out.decode("utf-8", "surrogatepass"), err.decode("utf-8", "surrogatepass"), code
    except (OSError, ValueError):  # no working directory, an undecodable reply
        return None


def check(args: list[str]) -> int | None:
    """``domestique check ARGS`` answered by the daemon (written out, exit code returned), or
    None: the caller runs the command in-process."""
    if os.environ.get("DOMESTIQUE_HOOKD", "on") == "off" or not eligible(args):
        return None
    answered = ask(["check", *args])
    if answered is None:
        return None
    out, err, code = answered
    if err:  # the order the in-process command writes in (an error line, then the decision)
        sys.stderr.write(err)
        sys.stderr.flush()
    sys.stdout.write(out)
    return code


def start_daemon() -> None:
    """After an in-process check the daemon was asked for: start one (``DOMESTIQUE_HOOKD``
    ``on``, the default; ``nostart`` asks but never starts one), as the hook does."""
    if os.environ.get("DOMESTIQUE_HOOKD", "on") == "on":
        from domestique.hooks.entry import start_daemon as spawn

        spawn()
