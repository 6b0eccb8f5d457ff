"""The guard's one window on the machine: the environment and file reads it is given.

Everything else in the guard is a pure function of the command line, ``cwd`` and a
:class:`GuardEnv` (process ancestry, in :mod:`domestique.guard.ancestry`, is the other I/O the
guard does, for ``identify_subject``). A shell (the CLI, a hook, the daemon) builds one with
:meth:`GuardEnv.from_process` and passes it in; tests build one by hand, with the HOME and the
files they mean.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from domestique.frozen_class import dataclass

MAX_SCRIPT_BYTES = 256 * 1024  # a script the command runs is read up to this size


def read_script(path: str) -> bytes | None:
    """Read at most ``MAX_SCRIPT_BYTES + 1`` bytes of a regular file; None if it does not exist."""
    try:
        if not os.path.isfile(path):
            return None
        with open(path, "rb") as fh:
            return fh.read(MAX_SCRIPT_BYTES + 1)
    except FileNotFoundError:
        return None


@dataclass(frozen=True, slots=True)
class GuardEnv:
    """What the guard may know of the machine.

    ``home`` and ``tmpdir`` are HOME and TMPDIR (empty: unset), used to say where a path points;
    ``domestique_home`` is DOMESTIQUE_HOME (the guard's own files, protected); ``read_file``
    reads a script the command runs (None: scripts are not read, and say so). Frozen: cheap
    to build on every judgement, immutable, and hashable for the guard's caches (not a
    NamedTuple: ``typing`` is one import more on a cold hook call).
    """

    home: str = ""
    tmpdir: str = ""
    domestique_home: str | None = None
    read_file: Callable[[str], bytes | None] | None = None

    @classmethod
    def from_process(cls) -> GuardEnv:
        """The running process's HOME, TMPDIR and DOMESTIQUE_HOME, and the file system.

        Read on every call (a test or a shell may change the environment between two
        judgements), and cheap: the raw values are looked up in ``os.environ``'s own mapping
        and the decoded GuardEnv is kept per raw triple (``os.environ.get`` encodes the name
        and decodes the value on each call, a few microseconds per judgement).
        """
        # Looked up on each call: ``os.environ`` itself may have been replaced since import.
        data = getattr(os.environ, "_data", None) if _POSIX else None
        if type(data) is not dict:
            return cls._read()
        raw = (data.get(_RAW_KEYS[0]), data.get(_RAW_KEYS[1]), data.get(_RAW_KEYS[2]))
        env = _BY_RAW.get(raw)
        if env is None:
            env = cls._read()
            if len(_BY_RAW) >= 64:
                _BY_RAW.clear()
            _BY_RAW[raw] = env
        return env

    @classmethod
    def _read(cls) -> GuardEnv:
        get = os.environ.get
        return cls(get("HOME", ""), get("TMPDIR", ""), get("DOMESTIQUE_HOME"), read_script)

    def expand_user(self, path: str) -> str:
        """``~`` and ``~/x`` with HOME put in (``~user`` is left alone)."""
        if self.home and (path == "~" or path.startswith("~/")):
            return self.home.rstrip("/") + path[1:] if path != "~" else self.home
        return path


# os.environ keeps the process environment in a dict of encoded names and values; on POSIX
# ``os.environ[name] = value``, ``del os.environ[name]`` and ``os.environ.update`` all update
# that dict, so a lookup there sees every change os.environ sees. Elsewhere (no such dict):
# os.environ.get on every call.
_POSIX = os.name == "posix"
_RAW_KEYS = (b"HOME", b"TMPDIR", b"DOMESTIQUE_HOME")
_BY_RAW: dict[tuple[bytes | None, bytes | None, bytes | None], GuardEnv] = {}

NO_MACHINE = GuardEnv()  # no HOME, no TMPDIR, no files: what a pure test judges against
