"""Who started the command: process ancestry and the AI agent it identifies.

Linux: raw reads of ``/proc/<pid>/{stat,cmdline,exe}`` (``comm`` may hold spaces and ``)``, so
``stat`` is split after the *last* ``)``; ppid is field 4, starttime field 22). Each ancestor is
keyed by (pid, starttime) so a reused pid is not mistaken for the original. macOS and others:
``psutil`` (imported only there). The walk is bounded (``MAX_DEPTH``) and never raises.

The agent is identified from ancestor names and command lines (vercel's detect-agent signatures,
REFERENCE E) and from environment markers (``CLAUDECODE=1``, ``GEMINI_CLI=1``, ...). Markers are
inherited, removable (``env -i``) and forgeable, so they are cited as evidence next to the
ancestry, never trusted alone to *clear* a process: a missing marker never makes an agent human.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from domestique.records import Actor, Ancestor, Subject, current_user_and_host

MAX_DEPTH = 12
MAX_CMDLINE = 512

# (agent, needles): an ancestor whose name, exe or command line contains a needle. Matching is
# on path segments so "claude" does not match "claudette".
_SIGNATURES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("claude-code", ("@anthropic-ai/claude-code/", "/.local/share/claude/versions/", "\0claude\0")),
    ("cursor", ("\0cursor-agent\0", "/cursor-agent", "\0cursor\0", "/Cursor.app/", "\0Cursor\0")),
    ("codex", ("@openai/codex/", "\0codex\0", "/codex-x86_64", "/codex-aarch64")),
    ("gemini", ("@google/gemini-cli/", "\0gemini\0")),
    ("copilot", ("@github/copilot/", "\0copilot\0", "/copilot-language-server")),
    ("windsurf", ("\0windsurf\0", "/Windsurf.app/", "/windsurf/", "\0Windsurf\0")),
    ("cline", ("saoudrizwan.claude-dev", "\0cline\0", "/cline/")),
    ("aider", ("\0aider\0", "/aider-chat/", "/bin/aider", "aider/main.py")),
    ("opencode", ("\0opencode\0", "opencode-ai/")),
)
# Environment markers: variable -> agent ("" = any value, else the value must match).
_ENV_MARKERS: tuple[tuple[str, str, str], ...] = (
    ("CLAUDECODE", "1", "claude-code"),
    ("CLAUDE_CODE_ENTRYPOINT", "", "claude-code"),
    ("GEMINI_CLI", "1", "gemini"),
    ("CODEX_SANDBOX", "", "codex"),
    ("CODEX_SANDBOX_NETWORK_DISABLED", "", "codex"),
    ("CODEX_THREAD_ID", "", "codex"),
    ("CURSOR_AGENT", "", "cursor"),
    ("CURSOR_TRACE_ID", "", "cursor"),
    ("CLINE_ACTIVE", "", "cline"),
    ("CODEIUM_EDITOR_APP_ROOT", "", "windsurf"),
    ("AIDER_MODEL", "", "aider"),
    ("COPILOT_AGENT_ACTION", "", "copilot"),
    ("OPENCODE", "", "opencode"),
)
_SESSION_VARS = ("CLAUDE_SESSION_ID", "CODEX_THREAD_ID", "CURSOR_TRACE_ID", "GEMINI_SESSION_ID")


def _read_linux(pid: int) -> tuple[Ancestor, int] | None:
    """One ancestor and its parent pid from /proc; None when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    try:
        close = stat.rindex(b")")
        name = stat[stat.index(b"(") + 1 : close].decode("utf-8", "replace")
        fields = stat[close + 2 :].split()
        ppid = int(fields[1])  # field 4
        start = int(fields[19])  # field 22
    except (ValueError, IndexError):
        return None
    cmdline: str | None
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            raw = fh.read(MAX_CMDLINE * 4)
        cmdline = raw.rstrip(b"\0").replace(b"\0", b" ").decode("utf-8", "replace")[:MAX_CMDLINE]
    except OSError:
        cmdline = None
    try:
        exe: str | None = os.readlink(f"/proc/{pid}/exe")
    except OSError:
        exe = None
    return Ancestor(pid=pid, name=name, exe=exe, cmdline=cmdline, start_time=start), ppid


def _walk_linux(pid: int) -> list[Ancestor]:
    out: list[Ancestor] = []
    seen: set[int] = set()
    while pid > 0 and len(out) < MAX_DEPTH and pid not in seen:
        seen.add(pid)
        got = _read_linux(pid)
        if got is None:
            break
        ancestor, ppid = got
        out.append(ancestor)
        if pid == 1:
            break
        pid = ppid
    return out


def _walk_psutil(pid: int) -> list[Ancestor]:
    try:
        import psutil  # macOS and others without /proc
    except ImportError:
        return []
    out: list[Ancestor] = []
    try:
        proc: psutil.Process | None = psutil.Process(pid)
    except Exception:  # noqa: BLE001 - the process may be gone or not ours
        return out
    while proc is not None and len(out) < MAX_DEPTH:
        try:
            with proc.oneshot():
                name = proc.name()
                start = int(proc.create_time())
                try:
                    exe: str | None = proc.exe()
                except Exception:  # noqa: BLE001 - AccessDenied for other users' processes
                    exe = None
                try:
                    cmdline: str | None = " ".join(proc.cmdline())[:MAX_CMDLINE]
                except Exception:  # noqa: BLE001 - psutil #297/#883/#2708
                    cmdline = None
            out.append(
                Ancestor(pid=proc.pid, name=name, exe=exe, cmdline=cmdline, start_time=start)
            )
            if proc.pid <= 1:
                break
            proc = proc.parent()
        except Exception:  # noqa: BLE001 - a vanished parent ends the walk
            break
    return out


def process_ancestry(pid: int | None = None) -> tuple[Ancestor, ...]:
    """``pid`` (default: this process's parent) and its ancestors, nearest first."""
    start = pid if pid is not None else os.getppid()
    if os.path.isdir("/proc/self"):
        return tuple(_walk_linux(start))
    return tuple(_walk_psutil(start))


def _agent_in(ancestor: Ancestor) -> str | None:
    hay = (
        "\0"
        + "\0".join(
            part
            for text in (ancestor.name, ancestor.exe or "", ancestor.cmdline or "")
            for part in (text, *text.split(" ")[:4], text.rsplit("/", 1)[-1].split(" ", 1)[0])
        )
        + "\0"
    )
    for agent, needles in _SIGNATURES:
        for needle in needles:
            if needle in hay:
                return agent
    return None


def identify_agent(
    ancestry: tuple[Ancestor, ...], env: Mapping[str, str]
) -> tuple[str | None, tuple[str, ...]]:
    """The agent named by ancestry (preferred) or environment markers, and the evidence."""
    markers: list[str] = []
    from_ancestry: str | None = None
    for a in ancestry:
        agent = _agent_in(a)
        if agent is not None:
            markers.append(f"ancestor:{agent}:pid={a.pid}:{a.name}")
            from_ancestry = from_ancestry or agent
    from_env: str | None = None
    for var, value, agent in _ENV_MARKERS:
        got = env.get(var)
        if got is not None and (not value or got == value):
            markers.append(f"env:{var}")
            from_env = from_env or agent
    ai_agent = env.get("AI_AGENT")
    if ai_agent:
        markers.append("env:AI_AGENT")
        from_env = from_env or ai_agent.strip().lower()[:40]
    if from_ancestry is None and from_env is not None:
        markers.append("marker-only: no agent process among the ancestors")
    return from_ancestry or from_env, tuple(markers)


def identify_subject(pid: int | None = None, env: Mapping[str, str] | None = None) -> Subject:
    """User, host, ancestry of ``pid`` (default: our parent) and the agent identified.

    ``actor`` is ``agent`` when an agent shows in the ancestry or in the environment markers,
    else ``human``. Never raises. A lookup that fails or finds no process at all yields the
    actor ``agent``: the stricter one, since nothing shows that a person started the command.
    """
    environ = os.environ if env is None else env
    lookup_failed = False
    try:
        ancestry = process_ancestry(pid)
    except Exception:  # noqa: BLE001 - handled: an unknown starter is treated as an agent
        ancestry, lookup_failed = (), True
    lookup_failed = lookup_failed or not ancestry
    agent, markers = identify_agent(ancestry, environ)
    if lookup_failed:
        markers = (*markers, "ancestry unavailable: treated as an agent")
    user, host = current_user_and_host()
    session = next((environ[v] for v in _SESSION_VARS if environ.get(v)), None)
    return Subject(
        user=user,
        host=host,
        actor=Actor.AGENT if agent or lookup_failed else Actor.HUMAN,
        agent=agent,
        session_id=session[:128] if session else None,
        ancestry=ancestry,
        markers=markers,
    )
