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


# One sample path for each kind of credential file the guard knows (``guard.paths``): the tests
# check that the guard's regular expression, its cheap credential-word prefilter and its fast
# path all agree on every one (a prefilter that missed one would let a read of it go unjudged).
CREDENTIAL_SAMPLES = (
    ".env", "prod.env", "app/.env.local", "~/.ssh/id_ed25519", "~/.ssh/identity",
    "~/.ssh/deploy.pem", "~/.ssh/*", "~/.aws/credentials", "~/.aws/config",
    "~/.config/gcloud/application_default_credentials.json",
    "~/.config/gcloud/credentials.db", "~/.azure/accessTokens.json", "~/.kube/config",
    "~/.docker/config.json", "~/.netrc", "~/.git-credentials", "~/.npmrc", "~/.pypirc",
    "~/.pgpass", "~/.my.cnf", "~/.config/gh/hosts.yml", "~/.gnupg/secring.gpg",
    "~/.password-store/email.gpg", "/etc/shadow", "/etc/gshadow", "/etc/sudoers",
    "~/.vault-token", "~/.terraform.d/credentials.tfrc.json",
    "~/Library/Keychains/login.keychain-db", "~/.mozilla/firefox/x.default/logins.json",
    "~/.config/google-chrome/Default/Login Data", "~/.config/chromium/Default/Cookies",
    "~/.mozilla/firefox/x.default/key4.db", "/proc/self/environ", "/proc/1/environ",
    "/var/run/secrets/kubernetes.io/serviceaccount/token", "~/.oci/config",
    "~/.local/share/keyrings/login.keyring", "credentials.json", "~/.config/hub",
    "~/.config/rclone/rclone.conf", "~/.codex/auth.json", "~/.claude/.credentials.json",
    "~/.gemini/oauth_creds.json", "~/.config/github-copilot/hosts.json",
    "~/.cargo/credentials.toml", "~/.gem/credentials",
    "~/.config/glab-cli/config.yml",
)  # fmt: skip


def is_env_file(path: str) -> bool:
    """True for an environment file (not an example or template of one)."""
    return _ENV_FILE_RE.search(path) is not None


def is_credential_path(path: str) -> bool:
    """True when the command guard counts reading ``path`` as a credential read."""
    from domestique.guard.paths import CREDENTIAL_FILES

    return CREDENTIAL_FILES.search(path) is not None
