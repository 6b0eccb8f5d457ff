"""The hook daemon's side of ``domestique check`` (the client is :mod:`domestique.cli._fast`).

:func:`serve_check` runs :func:`domestique.cli.check.run` itself, the code the in-process
command runs, inside the caller's context: its environment in ``os.environ`` (the policy's
home, the actor markers, the known secret values, the audit store's home), its working
directory as the daemon's (the project's policy and ``.env`` files, a relative ``--policy``),
the caller's parent process as the start of the ancestry (who runs the command), and what the
command prints captured instead of written. All of it is put back afterwards. The daemon serves
one connection at a time, so no other request sees the caller's context.

Anything that goes wrong before the command runs (a request out of format, a working directory
the daemon cannot enter, a caller whose parent cannot be read) raises, and the daemon then sends
no answer: the client runs the command in-process, which decides and records as always.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator

Captured = tuple[str, str, int]  # stdout, stderr, exit code


class BadCheck(ValueError):
    """A ``DQC1`` request out of format."""


def parse_check(data: bytes) -> tuple[int, list[str], str, dict[str, str], bytes]:
    """(pid, argv, cwd, env, identity) of one ``DQC1`` request; raises BadCheck."""
    from domestique.hooks.wire import split_frame

    (pid, n_args, n_cwd, n_env, _), rest = split_frame(data, b"DQC1", BadCheck, exact=True)
    argv = [os.fsdecode(a) for a in rest[:n_args].split(b"\0")]
    cwd = os.fsdecode(rest[n_args : n_args + n_cwd])
    at = n_args + n_cwd
    env: dict[str, str] = {}
    for item in rest[at : at + n_env].split(b"\0") if n_env else ():
        key, eq, value = item.partition(b"=")
        if eq and key:
            env[os.fsdecode(key)] = os.fsdecode(value)
    if argv[:1] != ["check"] or not os.path.isabs(cwd):
        raise BadCheck("not a check command line")
    return pid, argv, cwd, env, rest[at + n_env :]


def parent_of(pid: int) -> int:
    """The parent of the (connected, so living) caller ``pid``; raises when it cannot be read."""
    if os.path.isdir("/proc/self"):
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
        return int(stat[stat.rindex(b")") + 2 :].split()[1])
    import psutil

    return int(psutil.Process(pid).ppid())


@contextlib.contextmanager
def caller_context(cwd: str, env: dict[str, str]) -> Iterator[tuple[io.StringIO, io.StringIO]]:
    """The caller's working directory and environment, and captured stdout and stderr."""
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_streams = sys.stdout, sys.stderr
    os.chdir(cwd)  # raises before anything is changed: no answer, the caller runs in-process
    try:
        _become(env)
        out, err = io.StringIO(), io.StringIO()
        sys.stdout, sys.stderr = out, err
        yield out, err
    finally:
        sys.stdout, sys.stderr = saved_streams
        _become(saved_env)
        os.chdir(saved_cwd)


def _become(env: dict[str, str]) -> None:
    """Make ``os.environ`` (and the C environment under it) equal ``env``, changing only the
    variables that differ: the caller's environment is mostly the daemon's."""
    current = os.environ
    for key in [k for k in current if k not in env]:
        del current[key]
    for key, value in env.items():
        if current.get(key) != value:
            current[key] = value


def serve_check(argv: list[str], cwd: str, env: dict[str, str], caller: int) -> Captured:
    """``domestique check`` as the process ``caller`` would run it in-process."""
    from domestique.cli.check import run

    parent = parent_of(caller)
    with caller_context(cwd, env) as (out, err):
        code = run(argv[1:], parent=parent)
    return out.getvalue(), err.getvalue(), code


def encode_captured(captured: Captured) -> bytes:
    """``DQR1 <exit> <len stdout> <len stderr>`` and the texts (UTF-8, lone surrogates kept)."""
    out, err, code = captured
    out_b, err_b = out.encode("utf-8", "surrogatepass"), err.encode("utf-8", "surrogatepass")
    return b"DQR1 %d %d %d\n" % (code, len(out_b), len(err_b)) + out_b + err_b
