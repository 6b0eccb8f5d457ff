"""Supply chain: requirements.lock is what ./dev (and so CI) installs, hash-checked, and it
must be the lock of pyproject.toml's pins; `./dev check` says so in one line when it is not.

The ./dev runs here are on a copy of the script, pyproject.toml and the lock in a temp folder,
with a stand-in .venv whose `python` only records how it was called: what is tested is the
script's logic (check first, install from the lock with --require-hashes, the stamp), not pip.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements.lock"


def _lockcheck(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(cwd / ".ci" / "lock.py"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _entries(text: str) -> dict[str, list[str]]:
    """{'name==version ; marker': [hash, ...]} from a hashed requirements file."""
    entries: dict[str, list[str]] = {}
    current = ""
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        if not line.startswith(" "):
            current = line.rstrip(" \\")
            entries[current] = []
        elif line.strip().startswith("--hash="):
            entries[current].append(line.strip().rstrip(" \\"))
    return entries


def test_the_lock_is_the_lock_of_the_pins() -> None:
    result = _lockcheck("check")
    assert result.returncode == 0, result.stderr


def test_every_locked_package_has_hashes_and_an_exact_version() -> None:
    entries = _entries(LOCK.read_text(encoding="utf-8"))
    assert len(entries) > 40
    for requirement, hashes in entries.items():
        assert re.match(r"^[a-z0-9][a-z0-9-]*==[^\s;]+( ; .+)?$", requirement), requirement
        assert hashes, f"{requirement} has no hash"
        assert all(re.fullmatch(r"--hash=sha256:[0-9a-f]{64}", h) for h in hashes), requirement


def test_the_lock_holds_every_extra_the_tooling_and_platform_markers() -> None:
    names = {r.split("==")[0]: r for r in _entries(LOCK.read_text(encoding="utf-8"))}
    # one from each of: runtime, dev, bench, hub (with its binary extra), tooling
    for name in ("uvicorn", "pytest", "detect-secrets", "psycopg-binary", "pip", "setuptools"):
        assert name in names
    # resolved for every platform, not just this one: the macOS-only pin keeps its marker
    assert names["psutil"].endswith("; sys_platform == 'darwin'")


def _copy(tmp_path: Path) -> Path:
    work = tmp_path / "checkout"
    (work / ".ci").mkdir(parents=True)
    for name in ("dev", "pyproject.toml", "requirements.lock", ".ci/lock.py"):
        shutil.copy2(ROOT / name, work / name)
    return work


def _dev(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(work / "dev"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _edit(work: Path, old: str, new: str) -> None:
    path = work / "pyproject.toml"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _pinned(name: str) -> str:
    """The version pyproject.toml pins NAME to today (so a bumped pin keeps these tests)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    match = re.search(rf'"{re.escape(name)}(?:\[[a-z]+\])?==([^";]+)', text)
    assert match, name
    return match[1]


def _cases() -> list[tuple[str, str, str]]:
    httpx, orjson, ruff, psycopg = (_pinned(n) for n in ("httpx", "orjson", "ruff", "psycopg"))
    return [
        # a pin moved: both versions named
        (
            f'"httpx=={httpx}"',
            '"httpx==0.0.1"',
            f"pins httpx==0.0.1, the lock has httpx=={httpx}: run ./dev lock",
        ),
        # a dependency added (as a parallel branch does) and not locked
        (
            f'"orjson=={orjson}",',
            f'"orjson=={orjson}",\n    "not-in-the-lock==6.1.0",',
            "pins not-in-the-lock==6.1.0, the lock does not have not-in-the-lock: run ./dev lock",
        ),
        # a pin removed: the lock still holds it, only the digest can tell
        (f'    "orjson=={orjson}",\n', "", "not locked from pyproject.toml's current pins"),
        # an extra changed on a pinned package
        (f'"psycopg[binary]=={psycopg}"', f'"psycopg[c]=={psycopg}"', "current pins"),
        # a range is not a pin
        (f'"ruff=={ruff}"', '"ruff>=0.17"', "'ruff>=0.17' is not an exact pin"),
    ]


@pytest.mark.parametrize(("old", "new", "says"), _cases())
def test_dev_check_refuses_a_lock_that_disagrees_in_one_line(
    tmp_path: Path, old: str, new: str, says: str
) -> None:
    work = _copy(tmp_path)
    _edit(work, old, new)
    result = _dev(work, "check")
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("dev: ")
    assert says in lines[0]
    # refused before anything is installed
    assert not (work / ".venv").exists()


def test_dev_check_refuses_a_missing_lock(tmp_path: Path) -> None:
    work = _copy(tmp_path)
    (work / "requirements.lock").unlink()
    result = _dev(work, "check")
    assert result.returncode == 1
    assert result.stderr == "dev: requirements.lock is missing: run ./dev lock\n"


def test_a_reordered_pyproject_still_agrees(tmp_path: Path) -> None:
    """The digest is of the pins, not of the file: layout and order do not ask for a relock."""
    work = _copy(tmp_path)
    httpx, orjson = _pinned("httpx"), _pinned("orjson")
    _edit(work, f'    "httpx=={httpx}",\n', "")
    _edit(work, f'"orjson=={orjson}",', f'"orjson=={orjson}",\n    "httpx == {httpx}",')
    assert _lockcheck("check", cwd=work).returncode == 0


def _stand_in_venv(work: Path) -> Path:
    """A .venv whose python and pytest only log their arguments."""
    bin_dir = work / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    log = work / "calls.log"
    for name in ("python", "pytest"):
        tool = bin_dir / name
        tool.write_text(f'#!/bin/sh\necho "{name} $*" >> {log}\n', encoding="utf-8")
        tool.chmod(0o755)
    return log


def test_dev_installs_the_lock_with_hashes_and_the_stamp_covers_the_lock(tmp_path: Path) -> None:
    work = _copy(tmp_path)
    log = _stand_in_venv(work)
    installs = [
        "python -m pip install --quiet --require-hashes -r requirements.lock",
        "python -m pip install --quiet --no-deps --no-build-isolation -e .",
    ]

    assert _dev(work, "test", "-q").returncode == 0
    assert log.read_text(encoding="utf-8").splitlines() == [*installs, "pytest -q"]

    log.unlink()
    assert _dev(work, "test", "-q").returncode == 0  # stamp current: no install
    assert log.read_text(encoding="utf-8").splitlines() == ["pytest -q"]

    # the lock changes (a transitive package moved; the pins did not): installed again
    lock = work / "requirements.lock"
    text = lock.read_text(encoding="utf-8")
    moved = re.sub(r"^(idna==[^ ]+)", r"\1.post9", text, count=1, flags=re.MULTILINE)
    assert moved != text
    lock.write_text(moved, encoding="utf-8")
    log.unlink()
    assert _dev(work, "test", "-q").returncode == 0
    assert log.read_text(encoding="utf-8").splitlines() == [*installs, "pytest -q"]
    assert len(list((work / ".venv").glob(".installed-*"))) == 1
