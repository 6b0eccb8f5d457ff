"""Is requirements.lock the lock that pyproject.toml's pins call for? (run by ./dev)

    python3 .ci/lock.py check      exit 0, or exit 1 with one line naming the disagreement
    python3 .ci/lock.py seal       after `uv pip compile`: write the pins' digest into the lock
    python3 .ci/lock.py pin NAME   print the version pyproject.toml pins NAME to (./dev lock's uv)

The pins are every requirement of [project].dependencies, of each [project.optional-dependencies]
extra and of each [dependency-groups] group. Each must be exact (`name==version`, optionally with
extras and a marker): the lock can only agree with a pin. The lock agrees when it holds every pin
at the same version and carries the digest of exactly these pins (so a pin removed, or a marker or
an extra changed, also asks for `./dev lock`).

Standard library only, Python 3.11+: it runs before .venv exists.
"""

from __future__ import annotations

import hashlib
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"
LOCK = ROOT / "requirements.lock"
DIGEST_PREFIX = "# pins-sha256: "
RELOCK = "run ./dev lock"

_PIN = re.compile(
    r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?P<extras>\[[^\]]*\])?\s*"
    r"==\s*(?P<version>[^\s;,]+)\s*(?:;\s*(?P<marker>.+?))?\s*$"
)
_LOCKED = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[^\s;\\]+)")


class LockError(Exception):
    """One line for the developer: what disagrees and what to run."""


def normalize(name: str) -> str:
    """PEP 503 name: `Google_RE2` and `google-re2` are one package."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _load(pyproject: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise LockError(f"{pyproject.name}: cannot read: {err}") from None


def _requirements(data: dict[str, Any]) -> list[tuple[str, str]]:
    """(section, requirement) for the dependencies, every extra and every group."""
    project = data.get("project", {})
    found = [("dependencies", r) for r in project.get("dependencies", [])]
    for extra, reqs in project.get("optional-dependencies", {}).items():
        found += [(f"extra {extra}", r) for r in reqs]
    for group, reqs in data.get("dependency-groups", {}).items():
        # an {include-group = ...} table names other pins: nothing of its own to lock
        found += [(f"group {group}", r) for r in reqs if isinstance(r, str)]
    return found


def pins(pyproject: Path = PYPROJECT) -> list[tuple[str, str, str]]:
    """(section, normalized name, version) for every requirement; each must be `==`."""
    found: list[tuple[str, str, str]] = []
    for section, req in _requirements(_load(pyproject)):
        match = _PIN.match(req)
        if match is None:
            raise LockError(
                f"{pyproject.name}: {section}: {req!r} is not an exact pin (name==version)"
            )
        found.append((section, normalize(match["name"]), match["version"]))
    return found


def digest(pyproject: Path = PYPROJECT) -> str:
    """The digest of the pins as written (whitespace aside), order-independent."""
    lines = [f"{section}: {req}" for section, req in _requirements(_load(pyproject))]
    canonical = sorted(re.sub(r"\s+", "", line) for line in lines)
    return hashlib.sha256("\n".join(canonical).encode()).hexdigest()


def locked(lock: Path = LOCK) -> tuple[dict[str, str], str | None]:
    """({normalized name: version}, the digest line's value) read from the lock."""
    try:
        text = lock.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LockError(f"{lock.name} is missing: {RELOCK}") from None
    versions: dict[str, str] = {}
    sealed: str | None = None
    for line in text.splitlines():
        if line.startswith(DIGEST_PREFIX):
            sealed = line[len(DIGEST_PREFIX) :].strip()
            continue
        match = _LOCKED.match(line)
        if match:
            versions[normalize(match["name"])] = match["version"]
    return versions, sealed


def check(pyproject: Path = PYPROJECT, lock: Path = LOCK) -> None:
    """Raise LockError naming the first disagreement between the pins and the lock."""
    wanted = pins(pyproject)
    have, sealed = locked(lock)
    for section, name, version in wanted:
        if name not in have:
            raise LockError(
                f"{lock.name} is out of date: {pyproject.name} ({section}) pins "
                f"{name}=={version}, the lock does not have {name}: {RELOCK}"
            )
        if have[name] != version:
            raise LockError(
                f"{lock.name} is out of date: {pyproject.name} ({section}) pins "
                f"{name}=={version}, the lock has {name}=={have[name]}: {RELOCK}"
            )
    if sealed != digest(pyproject):
        raise LockError(
            f"{lock.name} is out of date: it was not locked from {pyproject.name}'s current pins "
            f"(a pin removed, or an extra or marker changed): {RELOCK}"
        )


def seal(pyproject: Path = PYPROJECT, lock: Path = LOCK) -> None:
    """Put the pins' digest on the lock's first line (replacing an older one)."""
    lines = [
        line
        for line in lock.read_text(encoding="utf-8").splitlines(keepends=True)
        if not line.startswith(DIGEST_PREFIX)
    ]
    lock.write_text(f"{DIGEST_PREFIX}{digest(pyproject)}\n" + "".join(lines), encoding="utf-8")


def main(argv: list[str]) -> int:
    try:
        if argv == ["check"]:
            check()
        elif argv == ["seal"]:
            seal()
            check()
        elif len(argv) == 2 and argv[0] == "pin":
            versions = [v for _, name, v in pins() if name == normalize(argv[1])]
            if not versions:
                raise LockError(f"{PYPROJECT.name} does not pin {argv[1]}")
            print(versions[0])
        else:
            print("usage: lock.py check | seal | pin NAME", file=sys.stderr)
            return 2
    except LockError as err:
        print(f"dev: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
