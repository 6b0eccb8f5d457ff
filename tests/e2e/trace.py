"""Reading an ``strace -f -e trace=connect,sendto,sendmsg,sendmmsg,execve`` log.

Lines are matched as strace prints them, escapes left as they are (strace writes C escapes,
which are not JSON). Calls that strace splits over two lines (``<unfinished ...>`` and
``<... execve resumed>``) keep their arguments on the first line, which is the one read here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

LOOPBACK = ("127.0.0.1", "::1", "::ffff:127.0.0.1")
_NET_CALL = re.compile(r"\b(?:connect|sendto|sendmsg|sendmmsg)\(")
_INET_ADDR = re.compile(
    r"sin6?_port=htons\((\d+)\).*?(?:inet_addr\(|inet_pton\(AF_INET6?, )\"([^\"]+)\""
)
_EXECVE = re.compile(r"\bexecve\(\"((?:[^\"\\]|\\.)*)\", \[(.*?)\](?:\.\.\.)?, ")
_STRING = re.compile(r"\"((?:[^\"\\]|\\.)*)\"")


def network_calls(lines: list[str]) -> Iterator[tuple[str, int, str]]:
    """(address, port, line) of every connect or send naming an IPv4 or IPv6 address."""
    for line in lines:
        if _NET_CALL.search(line):
            for m in _INET_ADDR.finditer(line):
                yield m.group(2), int(m.group(1)), line


def exec_attempts(lines: list[str]) -> Iterator[tuple[str, list[str], bool]]:
    """(path, argv, failed) of every execve, successful or not (a failed one is still an
    attempt to run the program: a shell searching PATH for ``curl`` tries each folder)."""
    for line in lines:
        m = _EXECVE.search(line)
        if m:
            argv = _STRING.findall(m.group(2))
            yield m.group(1), argv, bool(re.search(r"\) = -1 ", line))
