"""Helpers for the hub tests: the CLI as a process, a hub process, synthetic decision logs."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from domestique.audit import AuditStore
from domestique.records import Action, Component, DecisionRecord, PolicyRef, Reason, Subject

DOMESTIQUE = str(Path(sys.executable).with_name("domestique"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cli(
    home: Path, *args: str, stdin: str | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """``domestique ARGS`` as a process with ``DOMESTIQUE_HOME=home``."""
    env = dict(os.environ, DOMESTIQUE_HOME=str(home), DOMESTIQUE_HOOKD="off")
    env.pop("DOMESTIQUE_HUB_DATABASE", None)
    return subprocess.run(
        [DOMESTIQUE, *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


class HubProcess:
    """``domestique hub serve`` as a real process on a free loopback port."""

    def __init__(
        self, home: Path, database: str | None, *, extra: tuple[str, ...] = (), scheme: str = "http"
    ) -> None:
        self.home = home
        self.database = database
        self.extra = extra
        self.port = free_port()
        self.url = f"{scheme}://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def db_args(self) -> tuple[str, ...]:
        return ("--database", self.database) if self.database else ()

    def start(self) -> HubProcess:
        env = dict(os.environ, DOMESTIQUE_HOME=str(self.home))
        self.home.mkdir(parents=True, exist_ok=True)
        log = self.home / "serve.log"
        with log.open("ab") as err:  # the child keeps its own copy of the descriptor
            self.proc = subprocess.Popen(
                [
                    DOMESTIQUE,
                    "hub",
                    "serve",
                    "--port",
                    str(self.port),
                    *self.db_args(),
                    *self.extra,
                ],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"hub exited: {log.read_text()}")
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2),
            ):
                return self
            time.sleep(0.1)
        raise RuntimeError("hub did not start")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()

    def admin(self, *args: str) -> subprocess.CompletedProcess[str]:
        return cli(self.home, "hub", *args, *self.db_args())


def make_record(
    n: int, *, action: Action = Action.ALLOW, code: str | None = None
) -> DecisionRecord:
    """A small guard decision record (the shape ``check`` writes)."""
    reasons = (Reason(code, "test"),) if code else ()
    return DecisionRecord(
        component=Component.GUARD,
        action=action,
        reasons=reasons,
        subject=Subject(user="dev", host="box", agent="claude-code"),
        object={"command": f"echo {n}", "cwd": "/tmp"},
        policy=PolicyRef("test", "0" * 64),
        engine={"domestique": "test"},
        latency_us=7,
    )


def write_log(home: Path, count: int, *, start: int = 0) -> None:
    """Append ``count`` records (every 5th a deny with a code) to the audit log under home."""
    records = [
        make_record(i, action=Action.DENY, code="cmd.pipe_to_shell")
        if i % 5 == 0
        else make_record(i)
        for i in range(start, start + count)
    ]
    with AuditStore.open(home) as store:
        for k in range(0, len(records), 500):
            store.append_many(records[k : k + 500])
