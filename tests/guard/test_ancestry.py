"""Process ancestry from /proc and the agent it identifies."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from domestique.guard.ancestry import (
    MAX_DEPTH,
    _read_linux,
    identify_agent,
    identify_subject,
    process_ancestry,
)
from domestique.records import Actor, Ancestor

linux = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")


@linux
def test_reads_own_process() -> None:
    """Our own /proc entry gives our pid, parent and a start time."""
    got = _read_linux(os.getpid())
    assert got is not None
    ancestor, ppid = got
    assert ancestor.pid == os.getpid()
    assert ppid == os.getppid()
    assert ancestor.start_time is not None
    assert ancestor.start_time > 0
    assert ancestor.exe is not None
    assert "python" in ancestor.exe


@linux
def test_comm_with_parentheses_and_spaces() -> None:
    """A process named 'a) b (c' is parsed by splitting after the last ')'."""
    code = (
        "import time\n"
        "open('/proc/self/comm','w').write('a) b (c')\n"
        "print('ready', flush=True)\n"
        "time.sleep(5)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        got = _read_linux(child.pid)
        assert got is not None
        ancestor, ppid = got
        assert ancestor.name == "a) b (c"
        assert ppid == os.getpid()
    finally:
        child.kill()
        child.wait()
        if child.stdout is not None:
            child.stdout.close()


@linux
def test_walk_is_bounded_and_nearest_first() -> None:
    """The ancestry starts at the parent and stops within MAX_DEPTH."""
    chain = process_ancestry()
    assert chain
    assert chain[0].pid == os.getppid()
    assert len(chain) <= MAX_DEPTH


def test_gone_process_gives_empty_ancestry() -> None:
    """A pid that does not exist yields no ancestors (no exception)."""
    assert process_ancestry(2**22 + 12345) == ()


@pytest.mark.parametrize(
    ("ancestor", "agent"),
    [
        (
            Ancestor(
                10,
                "node",
                "/usr/bin/node",
                "node /usr/lib/node_modules/@anthropic-ai/claude-code/cli.js",
            ),
            "claude-code",
        ),
        (
            Ancestor(10, "claude", "/home/u/.local/share/claude/versions/2.1.0", "claude"),
            "claude-code",
        ),
        (Ancestor(10, "codex", "/usr/local/bin/codex", "codex exec"), "codex"),
        (Ancestor(10, "node", None, "node /opt/@google/gemini-cli/dist/index.js"), "gemini"),
        (Ancestor(10, "cursor-agent", None, "cursor-agent -p"), "cursor"),
        (
            Ancestor(10, "python3", None, "/usr/bin/python3 /home/u/.local/bin/aider --model x"),
            "aider",
        ),
    ],
)
def test_agent_signatures(ancestor: Ancestor, agent: str) -> None:
    """Known agent processes are recognised by name, exe or command line."""
    found, markers = identify_agent((ancestor,), {})
    assert found == agent
    assert any(m.startswith(f"ancestor:{agent}") for m in markers)


def test_lookalike_names_do_not_match() -> None:
    """'claudette' or 'codexify' are not agents."""
    found, _ = identify_agent((Ancestor(1, "claudette", None, "claudette run"),), {})
    assert found is None


def test_env_markers_are_cited_and_flagged_when_alone() -> None:
    """CLAUDECODE=1 identifies Claude Code; alone it is marked as a marker-only claim."""
    found, markers = identify_agent((), {"CLAUDECODE": "1"})
    assert found == "claude-code"
    assert "env:CLAUDECODE" in markers
    assert any("marker-only" in m for m in markers)


def test_subject_actor() -> None:
    """A marker makes the actor an agent; a readable ancestry with no agent in it is a human."""
    assert identify_subject(pid=2**22 + 1, env={"GEMINI_CLI": "1"}).actor is Actor.AGENT
    subject = identify_subject(pid=os.getpid(), env={})
    if subject.agent is None:  # this test may itself run under an agent
        assert subject.actor is Actor.HUMAN


def test_unreadable_ancestry_fails_closed_to_agent() -> None:
    """When no ancestor can be read (gone, or the lookup fails) the stricter actor, agent, holds."""
    subject = identify_subject(pid=2**22 + 1, env={})
    assert subject.actor is Actor.AGENT
    assert subject.agent is None
    assert any("ancestry unavailable" in m for m in subject.markers)


@linux
def test_lookup_is_cheap() -> None:
    """A full identify_subject stays well under 20 ms here (measured in bench/ properly)."""
    start = time.perf_counter()
    for _ in range(20):
        identify_subject()
    assert (time.perf_counter() - start) / 20 < 0.02
