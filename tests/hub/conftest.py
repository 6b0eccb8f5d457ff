"""Fixtures for the hub: a real PostgreSQL server, a schema per test, and hub processes.

PostgreSQL: ``DOMESTIQUE_TEST_DATABASE_URL`` if set, else the server these machines run
(``postgresql://postgres@127.0.0.1:5432/test``, trust authentication). When neither answers,
a throwaway server is started from Debian's binaries (``/usr/lib/postgresql/*/bin``: initdb and
pg_ctl in a temporary folder, as ``nobody`` when the tests run as root, since initdb refuses
root) and stopped at the end. Each test gets its own schema (``search_path`` in the URL),
dropped afterwards, so tests never see each other's rows.
"""

from __future__ import annotations

import contextlib
import glob
import os
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from .support import HubProcess, free_port

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/test"


def _reachable(url: str) -> bool:
    import psycopg

    try:
        with psycopg.connect(url, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
        return True
    except psycopg.Error:
        return False


@contextlib.contextmanager
def _throwaway_server() -> Iterator[str]:
    """initdb + pg_ctl in a temporary folder; yields its URL; stops and removes it after."""
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not bins:
        pytest.skip("no PostgreSQL reachable and no PostgreSQL binaries to start one")
    bindir = Path(bins[-1]).parent
    root = Path(tempfile.mkdtemp(prefix="dq-pg-"))
    data = root / "data"
    user = None
    if os.geteuid() == 0:
        user = "nobody"
        shutil.chown(root, user=user)
        root.chmod(0o700)
    port = free_port()
    subprocess.run(
        [str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync"],
        user=user,
        check=True,
        capture_output=True,
        timeout=120,
    )
    subprocess.run(
        [
            str(bindir / "pg_ctl"),
            "-D",
            str(data),
            "-w",
            "-l",
            str(root / "log"),
            "-o",
            f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off",
            "start",
        ],
        user=user,
        check=True,
        capture_output=True,
        timeout=120,
    )
    try:
        url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
        yield url
    finally:
        subprocess.run(
            [str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
            user=user,
            check=False,
            capture_output=True,
            timeout=60,
        )
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """The URL of a PostgreSQL server for this test session."""
    url = os.environ.get("DOMESTIQUE_TEST_DATABASE_URL") or DEFAULT_URL
    if _reachable(url):
        yield url
        return
    with _throwaway_server() as started:
        yield started


def _with_schema(url: str, schema: str) -> str:
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}options=-csearch_path%3D{schema}"


@pytest.fixture
def pg_url(pg_server: str) -> Iterator[str]:
    """A database URL whose search_path is a fresh schema, dropped after the test."""
    import psycopg

    schema = "dq_test_" + secrets.token_hex(6)
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield _with_schema(pg_server, schema)
    finally:
        with psycopg.connect(pg_server, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str | None:
    """Each backend in turn: None (the embedded SQLite default) and a PostgreSQL schema."""
    if request.param == "sqlite":
        return None
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
def hub(tmp_path: Path, database_url: str | None) -> Iterator[HubProcess]:
    """A running hub on each backend."""
    process = HubProcess(tmp_path / "hub-home", database_url).start()
    try:
        yield process
    finally:
        process.stop()
