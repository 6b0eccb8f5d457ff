"""Credential files by name, one catalogue for the command guard and the agent hooks.

The same file must get the same decision whichever tool reads it: ``cat .env`` through the
shell (judged by :mod:`domestique.guard`) and the host's own Read tool (judged by
:mod:`domestique.hooks.paths`) both ask :func:`is_credential_path`, which is the guard's
``CREDENTIAL_FILES`` expression; the entries below are written into that expression, so they
are defined once, here.
"""

from __future__ import annotations

import re

# Environment files (``.env``, ``.env.local``, ``prod.env``): they hold the project's keys.
# Example and template files (``.env.example``, ``.env.sample``, ``.env.template``,
# ``.env.dist``) are documentation, not secrets. A regular-expression alternative ending at the
# end of the path, for ``(?:^|/)(?:…)``.
ENV_FILE = (
    # ``process.env`` / ``import.meta.env`` are JavaScript's environment objects, not files
    r"(?:\.env(?:\.[\w.-]+)?|(?![\W_]*(?:process|import\.meta)\.env$)[^/]+\.env)"
    r"(?<!\.example)(?<!\.sample)(?<!\.template)(?<!\.dist)$"
)

_ENV_FILE_RE = re.compile(r"(?:^|/)" + ENV_FILE, re.IGNORECASE)


def is_env_file(path: str) -> bool:
    """True for an environment file (not an example or template of one)."""
    return _ENV_FILE_RE.search(path) is not None


def is_credential_path(path: str) -> bool:
    """True when the command guard counts reading ``path`` as a credential read."""
    from domestique.guard.paths import CREDENTIAL_FILES

    return CREDENTIAL_FILES.search(path) is not None
