"""The strace readers the end-to-end checks rely on: a reader that silently found nothing
would make "no DNS look-up" and "curl never ran" pass for any run."""

from __future__ import annotations

from .trace import exec_attempts, network_calls

LINES = [
    '12 connect(17, {sa_family=AF_INET, sin_port=htons(8788), sin_addr=inet_addr("127.0.0.1")},'
    " 16) = -1 EINPROGRESS (Operation now in progress)",
    '13 connect(7, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("10.255.255.53")},'
    " 16) = -1 ENETUNREACH (Network is unreachable)",
    '14 sendto(28, "\\17\\250\\1\\0", 32, MSG_NOSIGNAL, {sa_family=AF_INET, sin_port=htons(53),'
    ' sin_addr=inet_addr("10.255.255.53")}, 16) = -1 ENETUNREACH (Network is unreachable)',
    "15 connect(9, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0),"
    ' inet_pton(AF_INET6, "2a00:1450::1", &sin6_addr), sin6_scope_id=0}, 28) = -1 ENETUNREACH',
    '16 connect(3, {sa_family=AF_UNIX, sun_path="/run/x/hookd.sock"}, 33) = 0',
    '17 execve("/usr/local/bin/curl", ["curl", "http://127.0.0.1:9/x"], 0x5 /* 9 vars */)'
    " = -1 ENOENT (No such file or directory)",
    '18 execve("/usr/bin/git", ["git", "status"], 0x55 /* 20 vars */ <unfinished ...>',
    '19 execve("/bin/bash", ["/bin/bash", "-c", "printf \'\\33[0m\\n\' && eval \\"git status\\""],'
    " 0x2 /* 14 vars */) = 0",
]


def test_network_calls_name_every_inet_address_and_port() -> None:
    """IPv4 and IPv6 connects and UDP sends are read with their port; Unix sockets are not."""
    assert [(a, p) for a, p, _ in network_calls(LINES)] == [
        ("127.0.0.1", 8788),
        ("10.255.255.53", 53),
        ("10.255.255.53", 53),
        ("2a00:1450::1", 443),
    ]


def test_exec_attempts_keep_failed_and_unfinished_calls() -> None:
    """A PATH search that fails is still an attempt; a call strace split over two lines is
    read from its first line; C escapes in arguments do not stop the reader."""
    got = list(exec_attempts(LINES))
    assert got[0] == ("/usr/local/bin/curl", ["curl", "http://127.0.0.1:9/x"], True)
    assert got[1] == ("/usr/bin/git", ["git", "status"], False)
    assert got[2][1][:2] == ["/bin/bash", "-c"]
    assert "git status" in got[2][1][2]
