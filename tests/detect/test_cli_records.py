"""``domestique records`` as a process: add, list, remove, and scanning with the records."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, DOMESTIQUE_HOME=str(home))
    return subprocess.run(
        [sys.executable, "-m", "domestique", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=home,
        timeout=60,
        check=False,
    )


def test_add_list_scan_remove(home: Path, tmp_path: Path) -> None:
    """Registered rows are found by scan; list shows the set; remove forgets it."""
    csv = tmp_path / "customers.csv"
    csv.write_text("email,name,account_id\nnoor.haddad@kitemail.example.io,Noor Haddad,AC-55012\n")
    r = run(home, "records", "add", str(csv), "--columns", "email,name,account_id")
    assert r.returncode == 0, r.stderr
    assert "noor" not in r.stdout.lower()
    assert "customers\t1 rows\temail,name,account_id" in run(home, "records", "list").stdout
    text = "Refund for Noor Haddad, account AC-55012, please.\n"
    scan = run(home, "scan", "-", stdin=text)
    assert scan.returncode == 1
    assert scan.stdout.count("records.customer") == 2
    assert run(home, "records", "remove", "customers").returncode == 0
    assert run(home, "records", "remove", "customers").returncode == 1
    assert run(home, "scan", "-", stdin=text).returncode == 0


def test_add_errors_exit_two(home: Path, tmp_path: Path) -> None:
    """A missing column, a missing file or a bad invocation exits 2."""
    csv = tmp_path / "c.csv"
    csv.write_text("email\nx@y.example.org\n")
    assert run(home, "records", "add", str(csv), "--columns", "phone").returncode == 2
    assert run(home, "records", "add", str(tmp_path / "no.csv"), "--columns", "a").returncode == 2
    assert run(home, "records").returncode == 2
