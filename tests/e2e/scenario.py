"""One end-to-end run of a real agent CLI behind Domestique, as a separate process.

``python scenario.py SPEC.json`` reads what to run (see :class:`Spec`), and, in this order:

1. brings the loopback interface up when it runs in a fresh network namespace
   (``unshare -rn``: nothing but 127.0.0.1 exists there, so a CLI that tries to reach the
   internet fails at once, and the trace still shows the attempt);
2. starts the scripted stand-in model (:mod:`standin`) on 127.0.0.1;
3. starts ``domestique proxy`` as a process, every upstream pointed at the stand-in;
4. makes a git repository whose branch name carries the secret, with one untracked file;
5. runs the host's set-up and command lines from docs/agents.md with ``bash -eu`` under a
   bare environment (``env -i``: HOME, DOMESTIQUE_HOME, PATH, the fake key and the prompt),
   traced by ``strace -f`` (connect, send and execve calls);
6. stops the proxy and the hook daemon the run started, and writes ``result.json``.

The assertions live in ``test_agents.py``; this file only runs and collects. Every wait is
bounded: the agent's run by ``Spec.timeout_s``, the proxy's start by ``PROXY_START_S``.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

if __package__:
    from . import standin
else:  # run as a script: its own folder is first on the import path
    import standin  # type: ignore[no-redef,import-not-found]

PROXY_START_S = 30.0
DOC_PROXY_URL = "http://127.0.0.1:8788"  # the address docs/agents.md uses


@dataclass
class Spec:
    host: str  # claude-code | codex | gemini
    script: str  # the bash lines from docs/agents.md (set-up, then the agent's command)
    work: str  # an empty folder for this run
    cli_bin: str  # folder holding the CLI's executable (put on PATH)
    domestique_bin: str  # folder holding the ``domestique`` command (put on PATH)
    secret: str  # goes into the branch name, so into git status output and prompts
    prompt: str
    key_env: dict[str, str]  # the host's API key variable, with a fake key
    timeout_s: float


@dataclass
class Result:
    rc: int | None  # the agent's exit status; None when it timed out
    elapsed_s: float
    stdout: str
    stderr: str
    netns: bool  # ran inside a network namespace of its own
    proxy_url: str
    standin_url: str
    proxy_log: str
    repo: str
    trace: str  # the strace output file
    doctor_rc: int | None  # `domestique doctor` after the run, with the agent's environment
    doctor: str
    exchanges: list[dict[str, object]]


def loopback_up() -> None:
    """Bring ``lo`` up (a fresh network namespace starts with it down)."""
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        ifr = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH14s", fcntl.ioctl(s, siocgifflags, ifr))[1]
        fcntl.ioctl(s, siocsifflags, struct.pack("16sH14s", b"lo", flags | iff_up, b""))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, proc: subprocess.Popen[bytes], deadline_s: float) -> None:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"domestique proxy exited with {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return
        time.sleep(0.1)
    raise RuntimeError("domestique proxy did not start listening")


def make_repo(repo: Path, secret: str) -> None:
    repo.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(repo), "GIT_CONFIG_NOSYSTEM": "1"}

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    (repo / "README.md").write_text("a small project\n")
    git("add", "README.md")
    git("-c", "user.name=dev", "-c", "user.email=dev@localhost", "commit", "-qm", "init")
    git("checkout", "-q", "-b", f"deploy/{secret}")
    (repo / "marker-e2e7f3.txt").write_text("not committed yet\n")


def bare_env(spec: Spec, home: Path, dhome: Path) -> dict[str, str]:
    """What the agent's shell starts with: nothing from this machine but PATH's system part."""
    return {
        "HOME": str(home),
        "DOMESTIQUE_HOME": str(dhome),
        "PATH": f"{spec.cli_bin}:{spec.domestique_bin}:/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "PROMPT": spec.prompt,
        **spec.key_env,
    }


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def run_doctor(spec: Spec, env: dict[str, str], repo: Path) -> tuple[int | None, str]:
    """``domestique doctor`` as the developer would run it after the set-up."""
    try:
        done = subprocess.run(
            [str(Path(spec.domestique_bin) / "domestique"), "doctor"],
            env=env,
            cwd=repo,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=120,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None, "doctor timed out"
    return done.returncode, (done.stdout + done.stderr).decode("utf-8", "replace")


def become_subreaper() -> None:
    """Orphans of this run (the strace tracer under ``-D``, the hook daemon the first hook
    starts) become this process's children, so :func:`stop_leftovers` finds them all."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def children() -> dict[int, str]:
    """pid -> command name of this process's children (from /proc)."""
    me, out = os.getpid(), {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            text = stat.read_text()
            comm, rest = text[text.index("(") + 1 : text.rindex(")")], text[text.rindex(")") + 2 :]
            if int(rest.split()[1]) == me:
                out[int(stat.parent.name)] = comm
    return out


def stop_leftovers(deadline_s: float) -> None:
    """Stop what the agent left running (the hook daemon outlives it by design), then wait
    for the tracer, which exits once nothing it follows is left: the trace is then complete."""
    end, hard = time.monotonic() + deadline_s, time.monotonic() + deadline_s / 2
    while time.monotonic() < end:
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        kids = children()
        if not kids:
            return
        for pid, comm in kids.items():
            if comm != "strace":
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL if time.monotonic() > hard else signal.SIGTERM)
        time.sleep(0.1)


def run(spec: Spec, netns: bool) -> Result:
    become_subreaper()
    if netns:
        loopback_up()
    work = Path(spec.work)
    home, dhome, repo = work / "home", work / "domestique-home", work / "repo"
    home.mkdir()
    dhome.mkdir(mode=0o700)
    state = standin.StandIn(log=work / "standin.jsonl")
    server = standin.serve(state)
    port = DOC_PROXY_URL.rsplit(":", 1)[1] if netns else str(free_port())
    proxy_url = f"http://127.0.0.1:{port}"
    proxy_log = work / "proxy.log"
    env = bare_env(spec, home, dhome)
    with proxy_log.open("wb") as log:
        proxy = subprocess.Popen(
            [
                str(Path(spec.domestique_bin) / "domestique"),
                "proxy",
                "--port",
                port,
                *(f"--upstream={name}={state.url}" for name in ("anthropic", "openai", "gemini")),
            ],
            env={k: env[k] for k in ("HOME", "DOMESTIQUE_HOME", "PATH", "LANG")},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_port(int(port), proxy, PROXY_START_S)
        make_repo(repo, spec.secret)
        script = spec.script.replace(DOC_PROXY_URL, proxy_url)
        trace = work / "trace"
        cmd = [
            "strace", "-f", "-D", "-qq", "-s", "4096", "-o", str(trace),
            "-e", "trace=connect,sendto,sendmsg,sendmmsg,execve",
            "env", "-i", *(f"{k}={v}" for k, v in env.items()),
            "bash", "-euc", script,
        ]  # fmt: skip
        # Files, not pipes: the tracer (and the hook daemon it follows) outlive the agent
        # and would hold a pipe open.
        out_file, err_file = work / "agent.out", work / "agent.err"
        start = time.monotonic()
        with out_file.open("wb") as out, err_file.open("wb") as err:
            agent = subprocess.Popen(
                cmd,
                cwd=repo,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
            )
            try:
                rc: int | None = agent.wait(timeout=spec.timeout_s)
            except subprocess.TimeoutExpired:
                os.killpg(agent.pid, signal.SIGKILL)
                agent.wait(30)
                rc = None
        elapsed = time.monotonic() - start
        doctor_rc, doctor = run_doctor(spec, env, repo)
    finally:
        stop(proxy)
        stop_leftovers(20.0)
        server.shutdown()
    return Result(
        rc=rc,
        elapsed_s=elapsed,
        stdout=out_file.read_text("utf-8", "replace"),
        stderr=err_file.read_text("utf-8", "replace"),
        netns=netns,
        proxy_url=proxy_url,
        standin_url=state.url,
        proxy_log=proxy_log.read_text("utf-8", "replace"),
        repo=str(repo),
        trace=str(trace),
        doctor_rc=doctor_rc,
        doctor=doctor,
        exchanges=[asdict(e) for e in state.exchanges],
    )


def main() -> int:
    spec = Spec(**json.loads(Path(sys.argv[1]).read_text()))
    netns = os.environ.get("E2E_NETNS") == "1"
    result = run(spec, netns)
    (Path(spec.work) / "result.json").write_text(json.dumps(asdict(result)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
