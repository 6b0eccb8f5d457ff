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
from typing import NamedTuple

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


class GuardEnv(NamedTuple):
    """What the guard may know of the machine.

    ``home`` and ``tmpdir`` are HOME and TMPDIR (empty: unset), used to say where a path points;
    ``domestique_home`` is DOMESTIQUE_HOME (the guard's own files, protected); ``read_file``
    reads a script the command runs (None: scripts are not read, and say so). A tuple: cheap
    to build on every judgement, immutable, and hashable for the guard's caches.
    """

    home: str = ""
    tmpdir: str = ""
    domestique_home: str | None = None
    read_file: Callable[[str], bytes | None] | None = None

    @classmethod
    def from_process(cls) -> GuardEnv:
        """The running process's HOME, TMPDIR and DOMESTIQUE_HOME, and the file system."""
        get = os.environ.get
        return cls(get("HOME", ""), get("TMPDIR", ""), get("DOMESTIQUE_HOME"), read_script)

    def expand_user(self, path: str) -> str:
        """``~`` and ``~/x`` with HOME put in (``~user`` is left alone)."""
        if self.home and (path == "~" or path.startswith("~/")):
            return self.home.rstrip("/") + path[1:] if path != "~" else self.home
        return path


NO_MACHINE = GuardEnv()  # no HOME, no TMPDIR, no files: what a pure test judges against
