"""The paths a hook protects: files that hold credentials, and files whose change switches the
guard off (every host's hook settings, Domestique's policy and state, git hooks).

Credential files by name (``.env``, …) come from the shared catalogue
(:mod:`domestique.sensitive_paths`), so ``cat .env`` and the Read tool get the same decision.
Paths are matched as given and with symlinks resolved (the only I/O here: ``realpath`` and, for
a credential directory's subfolder, ``isdir``).
"""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import os
import re
from pathlib import Path

from domestique.sensitive_paths import is_credential_path


@functools.cache
def _hook_settings_globs() -> tuple[str, ...]:
    """Every host's hook settings files and Domestique's own (case-folded too), built once."""
    from domestique.hooks.hosts import self_protect_globs

    return _fold((*self_protect_globs(), *GUARD_STATE_GLOBS))


# Besides every host's hook settings files (each host module's ``self_protect``): files whose
# change can switch the guard off or run code outside any agent hook.
GUARD_STATE_GLOBS: tuple[str, ...] = (
    # Domestique's own policy layers (project, system).
    "*/.domestique/*",
    "/etc/domestique/*",
    # Git hooks and config run code later, outside any agent hook (`git commit` runs
    # .git/hooks/pre-commit; core.fsmonitor runs on `git status`): an edit tool writing them
    # plants a command the guard never sees.
    "*/.git/hooks/*",
    "*/.git/config",
)


# Files whose whole purpose is to hold credentials. Environment files (.env, …) and every path
# the command guard counts as a credential read come from the shared catalogue
# (domestique.sensitive_paths), so `cat .env` and the Read tool get the same decision.
CREDENTIAL_NAME_GLOBS: tuple[str, ...] = (
    ".netrc",
    "_netrc",
    ".pgpass",
    ".pypirc",
    ".git-credentials",
    ".vault-token",
    "credentials.tfrc.json",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "id_ecdsa_sk",
    "id_ed25519_sk",
    "*.keychain",
    "*.keychain-db",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.kdbx",
)
CREDENTIAL_PATH_GLOBS: tuple[str, ...] = (
    "*/.aws/credentials",
    "*/.aws/sso/cache/*",
    "*/.ssh/id_*",
    "*/.gnupg/*",
    "*/.docker/config.json",
    "*/.kube/config",
    "*/.config/gcloud/*credentials*",
    "*/.config/gh/hosts.yml",
    "*/.azure/accessTokens.json",
    "*/.azure/msal_token_cache.*",
    "*/Library/Keychains/*",
    "*/.local/share/keyrings/*",
    "*/.password-store/*",
    # Another process's environment holds the developer's tokens (the agent's own API key).
    "/proc/*/environ",
    "/proc/*/task/*/environ",
)
# Directories that hold nothing but credentials: a search tool (Grep, Glob, LS) pointed at one
# reads them as surely as a Read of the file inside.
CREDENTIAL_DIR_GLOBS: tuple[str, ...] = (
    "*/.ssh",
    "*/.aws",
    "*/.aws/sso",
    "*/.aws/sso/cache",
    "*/.gnupg",
    "*/.gnupg/*",
    "*/.password-store",
    "*/.password-store/*",
    "*/.local/share/keyrings",
    "*/Library/Keychains",
    "*/.config/gcloud",
    "*/.config/gh",
    "*/.azure",
    "*/.kube",
    "*/.docker",
)
# File names a search tool's glob may aim at: a glob (``*.env``, ``**/.env*``, ``id_*``) that
# selects one of them reads credential files through Grep/Glob even past .gitignore.
CREDENTIAL_SAMPLE_NAMES: tuple[str, ...] = (
    ".env",
    ".env.local",
    ".env.production",
    "prod.env",
    ".netrc",
    ".pgpass",
    ".pypirc",
    ".git-credentials",
    ".vault-token",
    "credentials",
    "id_rsa",
    "id_ed25519",
    "id_ecdsa",
    "key.p12",
    "key.pfx",
    "store.jks",
    "vault.kdbx",
)
NOT_CREDENTIAL_NAME_GLOBS: tuple[str, ...] = (
    ".env.example",
    ".env.sample",
    ".env.template",
    ".env.dist",
    "*.pub",
)


def _domestique_dirs(home: Path) -> tuple[str, ...]:
    """Domestique's state (``DOMESTIQUE_HOME``) and its installed code."""
    import domestique

    dirs = [str(home.expanduser())]
    with contextlib.suppress(OSError):
        dirs.append(str(home.expanduser().resolve()))
    dirs.append(os.path.dirname(os.path.abspath(domestique.__file__)))
    return tuple(dict.fromkeys(dirs))


def _variants(path: str) -> tuple[str, ...]:
    """``path`` as given and with symlinks resolved, so a link cannot hide the target; each also
    case-folded, because macOS and Windows file systems ignore case (``~/.AWS/credentials`` is
    ``~/.aws/credentials`` there). Matching the folded form too can only add protection."""
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        real = path
    return tuple(dict.fromkeys((path, real, path.lower(), real.lower())))


def _fold(globs: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys((*globs, *(g.lower() for g in globs))))


def _expand_braces(pattern: str) -> list[str]:
    """``*.{env,json}`` → ``*.env``, ``*.json`` (one level, as ripgrep and minimatch read it)."""
    m = re.search(r"\{([^{}]*)\}", pattern)
    if not m:
        return [pattern]
    return [pattern[: m.start()] + part + pattern[m.end() :] for part in m.group(1).split(",")]


def glob_reads_credentials(pattern: str) -> bool:
    """True when a search tool's file glob selects credential files (``.env``, ``id_rsa``, …).

    A glob with no literal letter or digit in its last part (``*``, ``**/*``) is the tool's
    ordinary search, judged by its path; only globs that aim at credential names count.
    """
    for expanded in _expand_braces(pattern):
        last = expanded.rstrip("/").rsplit("/", 1)[-1]
        if not any(c.isalnum() for c in last):
            continue
        for variant in dict.fromkeys((last, last.lower())):
            if any(fnmatch.fnmatchcase(name, variant) for name in CREDENTIAL_SAMPLE_NAMES):
                return True
    return False


def is_credential_dir(path: str) -> bool:
    """True when ``path`` is a directory that holds only credentials (or one inside it)."""
    globs = _fold(CREDENTIAL_DIR_GLOBS)
    for p in _variants(path):
        if any(fnmatch.fnmatchcase(p, g) for g in globs):
            return True
        # A subdirectory (``~/.gnupg/private-keys-v1.d``); files inside are judged by name.
        if any(fnmatch.fnmatchcase(p, g + "/*") for g in globs) and os.path.isdir(path):
            return True
    return False


def is_guard_file(path: str, home: Path) -> bool:
    """True when writing ``path`` could switch the guard off (hook settings, policy, state)."""
    roots = _fold(_domestique_dirs(home))
    globs = _hook_settings_globs()
    for p in _variants(path):
        if any(fnmatch.fnmatchcase(p, g) for g in globs):
            return True
        if any(p == r or p.startswith(r.rstrip("/") + "/") for r in roots):
            return True
    return False


def is_credential_file(path: str, home: Path) -> bool:
    """True when ``path`` is a credential file (by name or by place), or Domestique's keys."""
    keys = str(home.expanduser() / "keys")
    name_globs = _fold(CREDENTIAL_NAME_GLOBS)
    path_globs = _fold(CREDENTIAL_PATH_GLOBS)
    for p in _variants(path):
        name = os.path.basename(p)
        if any(fnmatch.fnmatchcase(name, g) for g in NOT_CREDENTIAL_NAME_GLOBS):
            continue
        if is_credential_path(p):
            return True
        if any(fnmatch.fnmatchcase(name, g) for g in name_globs):
            return True
        if any(fnmatch.fnmatchcase(p, g) for g in path_globs):
            return True
        if p in (keys, keys.lower()) or p.startswith((keys + "/", keys.lower() + "/")):
            return True
    return False


# Codes that mean "could not judge": their deny also exits 2 on every host that blocks on it.
