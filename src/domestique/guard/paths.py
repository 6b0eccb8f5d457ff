"""What a path in a command refers to: the project, a temp folder, home, a system root, a secret.

Paths are judged as written (no file-system access): ``$HOME``/``${HOME}`` become ``~``, repeated
slashes fold, ``.``/``..`` segments resolve against ``cwd`` when it is known.
"""

from __future__ import annotations

import posixpath
import re
from enum import Enum

from domestique.guard.env import GuardEnv
from domestique.sensitive_paths import ENV_FILE


class Place(Enum):
    ROOT = "root"  # /, /*, a system top-level folder, ~, ~/*
    SYSTEM = "system"  # below a system folder (/etc/passwd, /usr/local/bin)
    HOME = "home"  # below home (~/.cache/x)
    TEMP = "temp"  # /tmp, /var/tmp, $TMPDIR
    PROJECT = "project"  # inside the working directory
    PROJECT_ROOT = "project_root"  # the working directory itself (., *, ./*)
    OUTSIDE = "outside"  # a parent of the project (..), another absolute place
    VARIABLE = "variable"  # begins with a variable nobody knows
    DEVICE = "device"  # /dev/...


SYSTEM_TOP = frozenset(
    {
        "bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "media", "mnt",
        "opt", "proc", "root", "run", "sbin", "snap", "srv", "sys", "usr", "var", "Applications",
        "Library", "System", "Users", "Volumes", "private", "cores", "nix",
    }
)  # fmt: skip
# Classified, never opened:
TEMP_ROOTS = ("/tmp/", "/var/tmp/", "/private/tmp/", "/private/var/tmp/", "/dev/shm/")  # noqa: S108
_GLOB = re.compile(r"[*?\[]")
_SLASHES = re.compile(r"/{2,}")
_HOME_VAR = re.compile(r"^(?:\$HOME|\$\{HOME(?::?[?-][^}]*)?\}|~)(?=/|$)")
# $TMPDIR, or ${TMPDIR:-/tmp}: the temp folder whether or not the variable is set
_TMP_VAR = re.compile(
    r"^(?:\$TMPDIR|\$TMP|\$TEMP|\$\{(?:TMPDIR|TMP|TEMP)(?::?-(?:/tmp|/var/tmp)/?)?\})(?=/|$)"
)
_PWD_VAR = re.compile(r"^(?:\$PWD|\$\{PWD\}|\$\(pwd\))(?=/|$)")


# ${XDG_CACHE_HOME:-~/.cache}/pip: the user's cache folder, when a named folder in it follows
_CACHE_VAR = re.compile(
    r"^(?:\$XDG_CACHE_HOME|\$\{XDG_CACHE_HOME(?::?-(?:~|\$HOME|\$\{HOME\})/\.cache/?)?\})"
    r"(?=/[\w-][\w.-]*(?:/|$))"
)


def normalize(text: str) -> str:
    """``$HOME/x//y/`` -> ``~/x/y``; leaves relative paths relative."""
    p = _HOME_VAR.sub("~", text.strip())
    if "XDG_CACHE_HOME" in p:
        p = _CACHE_VAR.sub("~/.cache", p)
    if "//" in p:
        p = _SLASHES.sub("/", p)
    if len(p) > 1 and p.endswith("/"):
        p = p.rstrip("/") or "/"
    return p


_DEFAULT_VAR = re.compile(r"\$\{(\w+):?[-=]([^{}]*)\}")


def default_branch(text: str) -> str | None:
    """``text`` with each ``${X:-WORD}`` (``${X-WORD}``, ``${X:=WORD}``) as WORD, the path it
    names when X is unset; None when it has none. Only a second reading for rules that must
    see both branches: the path itself stays ``$X`` (X is usually set: ``${HOME:-./build}`` is
    home)."""
    if "${" not in text or not ("-" in text or "=" in text):
        return None
    out = _DEFAULT_VAR.sub(lambda m: m.group(2), text)
    return out if out != text else None


def resolve(text: str, cwd: str | None) -> str:
    """Normalise and, when ``cwd`` is known, make a relative path absolute (``..`` resolved)."""
    p = normalize(text)
    if _PWD_VAR.match(p) and cwd:
        p = cwd + p[_PWD_VAR.match(p).end() :]  # type: ignore[union-attr]
    if p.startswith(("/", "~", "$")) or not cwd:
        if p.startswith("/"):
            return posixpath.normpath(p) if ".." in p or "/./" in p else p
        return p
    return posixpath.normpath(posixpath.join(cwd, p))


_CACHE_MAX = 4096
# (text, cwd, HOME, TMPDIR) -> place; (text, cwd, HOME) -> canonical form: pure, cached for speed.
_PLACES: dict[tuple[str, str | None, str, str], Place] = {}
_CANONICAL: dict[tuple[str, str | None, str], str] = {}


def classify(text: str, cwd: str | None, env: GuardEnv) -> Place:
    """Where ``text`` points, as the rules need it (pure in text, cwd, HOME and TMPDIR)."""
    key = (text, cwd, env.home, env.tmpdir)
    place = _PLACES.get(key)
    if place is None:
        place = _classify(text, cwd, env)
        if len(_PLACES) >= _CACHE_MAX:
            _PLACES.clear()
        _PLACES[key] = place
    return place


def _classify(text: str, cwd: str | None, env: GuardEnv) -> Place:
    raw = normalize(text)
    m = _TMP_VAR.match(raw)
    if m:
        if ".." not in raw:
            return Place.TEMP
        raw = posixpath.normpath("/tmp" + raw[m.end() :])  # noqa: S108 - classified, never opened
    if raw.startswith("$") and not _PWD_VAR.match(raw):
        return Place.VARIABLE
    if raw in ("~", "~/*", "~/.*", "~/.", "~/.."):
        return Place.ROOT
    if raw.startswith("~/") and ".." in raw.split("/"):
        # ~/.cache/.. is the home folder itself; ~/a/../../x leaves it
        p = posixpath.normpath("/~" + raw[1:])
        if p == "/~" or not p.startswith("/~/"):
            return Place.ROOT
        raw = p[1:]
    if raw.startswith("~"):
        head = raw.split("/", 1)[0]
        if head != "~":  # ~user
            return Place.ROOT if raw == head or raw.endswith("/*") else Place.HOME
        rest = raw[2:]
        if _GLOB.search(rest.split("/", 1)[0]) and "/" not in rest:
            return Place.ROOT
        return Place.HOME
    if not raw.startswith("/"):
        if _PWD_VAR.match(raw):
            raw = "." + raw[_PWD_VAR.match(raw).end() :]  # type: ignore[union-attr]
        rel = posixpath.normpath(raw) if raw else "."
        if rel == ".." or rel.startswith("../"):
            if cwd:
                escaped = _classify(posixpath.normpath(posixpath.join(cwd, rel)), None, env)
                # Leaving the project is "outside" even when the project sits in a temp folder.
                return Place.OUTSIDE if escaped is Place.TEMP else escaped
            return Place.OUTSIDE
        if rel in (".", "*", ".*") or raw in ("./*", "./.*", "./"):
            home = env.home.rstrip("/")
            if cwd is not None and (cwd.rstrip("/") in ("", home) or cwd == "~"):
                return Place.ROOT  # "the project" is / or the home folder itself
            return Place.PROJECT_ROOT
        return Place.PROJECT
    path = posixpath.normpath(raw)
    if path.startswith("//"):
        path = path[1:]
    if path in ("/", "/*", "/.*"):
        return Place.ROOT
    if path.startswith("/dev/") and not path.startswith("/dev/shm/"):  # noqa: S108 - classified, never opened
        return Place.DEVICE
    if cwd:
        base = cwd.rstrip("/") or "/"
        if path == base:
            return Place.PROJECT_ROOT
        if path.startswith(base + "/") and base != "/":
            return Place.PROJECT
    if any((path + "/").startswith(t) for t in TEMP_ROOTS):
        return Place.TEMP if path.count("/") > 1 and path not in ("/private/tmp",) else Place.ROOT
    tmpdir = env.tmpdir.rstrip("/")
    if tmpdir and len(tmpdir) > 1 and path.startswith(tmpdir + "/"):
        return Place.TEMP
    home = env.home.rstrip("/")
    if len(home) > 1 and (path == home or path.startswith(home + "/")):
        # The home folder written out (a HOME outside /home and /Users: /srv/people/ann,
        # /var/lib/jenkins) is the home folder.
        return Place.ROOT if path == home else Place.HOME
    parts = path.split("/")
    top = parts[1]
    if len(parts) == 2:
        return Place.ROOT if top in SYSTEM_TOP or _GLOB.search(top) else Place.OUTSIDE
    if _GLOB.search(top):
        return Place.ROOT
    if top in ("home", "Users") and len(parts) == 3:
        return Place.ROOT  # somebody's home folder
    if top in SYSTEM_TOP and len(parts) == 3 and parts[2] in ("*", ".*"):
        return Place.ROOT
    if top in ("home", "Users"):
        return Place.HOME
    if top in SYSTEM_TOP:
        return Place.SYSTEM
    return Place.OUTSIDE


# Files that hold credentials: reading them is a credential access, sending them is exfiltration.
CREDENTIAL_FILES = re.compile(
    r"(?:^|/)(?:"
    # .env files: one entry shared with the hooks' Read-tool check (domestique.sensitive_paths)
    + ENV_FILE
    + r"|"
    r"\.ssh/(?:id_[a-z0-9_]+|identity)(?<!\.pub)$|\.ssh/[^/]*(?:key|\.pem)$|"
    # a glob over a credential folder reads what it holds (~/.ssh/*, ~/.aws/c*), not public keys
    r"\.ssh/[^/]*[*?\[][^/]*(?<!\.pub)$|\.aws/[^/]*[*?\[][^/]*$|"
    r"\.aws/(?:credentials|config)$|\.config/gcloud/(?:credentials\.db|access_tokens\.db|"
    r"application_default_credentials\.json|legacy_credentials(?:/.*)?)$|"
    r"\.azure/(?:accessTokens\.json|msal_token_cache\.(?:json|bin))$|\.kube/config$|"
    r"\.docker/config\.json$|\.netrc$|\.git-credentials$|\.npmrc$|\.pypirc$|\.pgpass$|"
    r"\.(?:cargo|gem)/credentials(?:\.toml)?$|"
    r"\.my\.cnf$|\.config/gh/hosts\.yml$|\.gnupg(?:/.*)?$|\.password-store(?:/.*)?$|"
    r"etc/(?:shadow|gshadow|master\.passwd|sudoers)$|\.vault-token$|\.terraform\.d/credentials"
    r"\.tfrc\.json$|Library/Keychains(?:/.*)?$|keychain-db$|\.mozilla/firefox/.*logins\.json$|"
    r"(?:Chrome|Chromium|BraveSoftware/Brave-Browser|google-chrome(?:-beta|-unstable)?|"
    r"microsoft-edge|Microsoft Edge|Vivaldi|opera|com\.operasoftware\.Opera)/.*"
    r"(?:Login Data|Cookies|Web Data|Local State)(?:$|\?)|"
    r"\.mozilla/firefox/.*(?:cookies\.sqlite|key[34]\.db|signons\.sqlite)$|"
    r"Firefox/Profiles/.*(?:cookies\.sqlite|logins\.json|key[34]\.db)$|"
    # a process's environment holds its API keys and tokens
    r"proc/(?:self|\d+|\*|\$\$|\$\{?\w+\}?|\$\([^)]*\)|`[^`]*`|[\d*?\[\]-]+)/environ$|"
    r"serviceaccount/token$|\.oci/(?:config|sessions(?:/.*)?)$|Cookies\.binarycookies$|"
    r"\.local/share/keyrings(?:/.*)?$|"
    r"\.?credentials\.json$|\.config/(?:hub|rclone/rclone\.conf|op/config)$|"
    # the coding agents' own logins (their API keys and OAuth tokens)
    r"\.codex/auth\.json$|\.claude/\.credentials\.json$|\.gemini/oauth_creds\.json$|"
    r"github-copilot/(?:hosts|apps)\.json$|\.config/glab-cli/config\.yml$"
    r")",
    # any case: macOS and Windows file systems find ~/.AWS/credentials as ~/.aws/credentials
    re.IGNORECASE,
)
# Files that often hold secrets but are also read for ordinary work: only sending them counts.
SENSITIVE_FILES = re.compile(
    r"(?:^|/)(?:"
    + ENV_FILE  # the same environment files as CREDENTIAL_FILES (domestique.sensitive_paths)
    + r"|etc/passwd$|"
    # a credential folder as a whole (tar, scp -r, rsync): listing it is ordinary, sending it is not
    r"(?:\.ssh|\.aws|\.kube|\.docker|\.azure|\.config/gcloud|\.password-store)/?$|"
    # a browser's profile folder holds its cookies and saved passwords
    r"(?:google-chrome(?:-beta|-unstable)?|chromium|BraveSoftware/Brave-Browser|Google/Chrome|"
    r"Microsoft Edge|microsoft-edge|Vivaldi|\.mozilla/firefox|Firefox/Profiles)(?:/[^/]+)?/?$|"
    r"\.(?:bash|zsh|sh)_history$|\.history$|[^/]*\.(?:pem|key|p12|pfx|keystore|jks)$|"
    r"id_[a-z0-9]+$)"
)
# Files and folders that start code later: shell start-up, cron, launch agents, units, git hooks.
PERSISTENCE_FILES = re.compile(
    r"(?:^|/)(?:"
    r"\.(?:bashrc|bash_profile|bash_login|bash_logout|profile|zshrc|zshenv|zprofile|zlogin|"
    r"bash_aliases|bash_functions|zsh_aliases|aliases|zlogout|kshrc|cshrc|tcshrc|xinitrc|"
    r"xsessionrc|xprofile|inputrc)$|\.config/fish(?:/.*)?$|"
    r"\.ssh/(?:authorized_keys2?|rc|environment)$|\.config/autostart(?:/.*)?$|\.config/systemd(?:/.*)?$|"
    r"Library/Launch(?:Agents|Daemons)(?:/.*)?$|etc/systemd/.+|(?:usr/)?lib/systemd/system/.+|"
    r"etc/init\.d/.+|etc/rc\.local$|etc/rc\.d/.+|etc/cron[^/]*(?:/.*)?$|var/spool/cron/.*|"
    r"etc/profile(?:\.d/.+)?$|etc/(?:bash\.bashrc|zshrc|zsh/\w+|environment)$|etc/update-motd\.d/.+|"
    r"etc/xdg/autostart(?:/.*)?$|etc/ld\.so\.preload$|\.git/hooks(?:/.*)?$|etc/periodic/.+|"
    r"Library/StartupItems(?:/.*)?$|etc/(?:launchd|emond)\.conf$|etc/rc\.common$|"
    r"etc/emond\.d/.+|\.shrc$|Library/Preferences/(?:ByHost/)?com\.apple\.loginwindow[^/]*$|"
    r"\.config/autostart-scripts/.+|etc/motd\.d/.+|etc/udev/rules\.d/.+|\.pam_environment$|"
    # Python runs .pth lines and sitecustomize at every start; ssh runs ProxyCommand/LocalCommand
    r"[^/]+\.pth$|(?:sitecustomize|usercustomize)\.py$|\.ssh/config(?:\.d/.+)?$|"
    r"\.ipython/profile_[^/]+/startup/.+|\.config/environment\.d/.+|"
    r"etc/ssh/ssh_config(?:\.d/.+)?$"
    r")"
)
# Shell start-up files (of PERSISTENCE_FILES): what is written there runs as shell.
SHELL_STARTUP_FILES = re.compile(
    r"(?:^|/)(?:\.(?:bashrc|bash_profile|bash_login|bash_logout|profile|zshrc|zshenv|zprofile|"
    r"zlogin|zlogout|kshrc|shrc|bash_aliases|bash_functions|zsh_aliases|aliases)|"
    r"\.ssh/rc|etc/profile(?:\.d/.+)?|etc/(?:bash\.bashrc|zshrc|zsh/\w+)|etc/rc\.local|"
    r"\.config/environment\.d/[^/]+\.conf|etc/environment)$"
)
# Files that decide who may do what.
ACCOUNT_FILES = re.compile(
    r"(?:^|/)etc/(?:sudoers(?:\.d/.*)?|passwd|shadow|group|gshadow|master\.passwd|pam\.d/.+|"
    r"security/.+|doas\.conf)$"
)
# Shell history and system logs.
HISTORY_FILES = re.compile(
    r"(?:^|/)(?:\.(?:bash|zsh|sh|python|node_repl|mysql|psql|sqlite|lesshst|r)_?history$|"
    r"\.zhistory$|\.history$|\.local/share/fish/fish_history$|var/log(?:/.*)?$|"
    r"private/var/log(?:/.*)?$|var/(?:run|log)/(?:utmp|wtmp|btmp|lastlog)$|var/audit(?:/.*)?$|"
    r"Library/Logs(?:/.*)?$)"
)


def guard_paths(home_env: str | None) -> re.Pattern[str]:
    """The agents' hook settings and Domestique's own state, as one pattern over paths.

    ``home_env`` is ``$DOMESTIQUE_HOME`` when set: its folder is protected too.
    """
    parts = [
        r"\.claude/settings(?:\.local)?\.json$",
        r"\.claude/hooks(?:/.*)?$",
        r"etc/claude-code(?:/.*)?$",
        r"Library/Application Support/ClaudeCode(?:/.*)?$",
        r"\.cursor/hooks\.json$",
        r"etc/cursor(?:/.*)?$",
        r"Library/Application Support/Cursor/hooks\.json$",
        r"\.gemini/settings\.json$",
        r"\.gemini/policies(?:/.*)?$",
        r"etc/gemini-cli(?:/.*)?$",
        r"\.codex/(?:hooks\.json|config\.toml|requirements\.toml)$",
        r"\.copilot/hooks(?:/.*)?$",
        r"\.github/hooks(?:/.*)?$",
        r"\.codeium/windsurf/hooks\.json$",
        r"\.windsurf/hooks\.json$",
        r"etc/windsurf(?:/.*)?$",
        r"Library/Application Support/Windsurf/hooks\.json$",
        r"\.clinerules/hooks(?:/.*)?$",
        r"Documents/Cline/Rules/Hooks(?:/.*)?$",
        r"\.local/state/domestique(?:/.*)?$",
        r"Library/Application Support/domestique(?:/.*)?$",
        r"\.domestique(?:/.*)?$",
        r"\.config/domestique(?:/.*)?$",
        r"etc/domestique(?:/.*)?$",
        # the guard's own program and its state folder named by variable
        r"bin/domestique$",
        r"^\$\{?DOMESTIQUE_HOME\}?(?:/.*)?$",
        # the units that start it (systemd user and system units, launch agents)
        r"systemd/(?:user|system)/[^/]*domestique[^/]*$",
        r"Library/Launch(?:Agents|Daemons)/[^/]*domestique[^/]*$",
    ]
    pattern = r"(?:^|/)(?:" + "|".join(parts) + ")"
    if home_env:
        home = re.escape(normalize(home_env).rstrip("/"))
        pattern = rf"(?:{pattern}|^{home}(?:/.*)?$)"
    return re.compile(pattern)


def canonical_for_match(text: str, cwd: str | None, env: GuardEnv) -> str:
    """A path made comparable to the patterns above: home as ``~``, relative kept relative.

    Cached: a pure function of ``text``, ``cwd`` and ``HOME``.
    """
    home = env.home
    key = (text, cwd, home)
    path = _CANONICAL.get(key)
    if path is None:
        path = _canonical(text, cwd, home)
        if len(_CANONICAL) >= _CACHE_MAX:
            _CANONICAL.clear()
        _CANONICAL[key] = path
    return path


def _canonical(text: str, cwd: str | None, home: str) -> str:
    p = normalize(text)
    if "/./" in p or p.endswith("/."):
        # "." segments name the same folder (~/./.ssh/./id_rsa is ~/.ssh/id_rsa); ".." is left
        # alone here (it is resolved against cwd below, and the patterns match on the tail).
        while "/./" in p:
            p = p.replace("/./", "/")
        if p.endswith("/."):
            p = p[:-2] or "/"
    if home and len(home) > 1 and (p == home or p.startswith(home.rstrip("/") + "/")):
        p = "~" + p[len(home.rstrip("/")) :]
    if cwd and not p.startswith(("/", "~", "$")):
        joined = posixpath.normpath(posixpath.join(cwd, p))
        if home and joined.startswith(home.rstrip("/") + "/"):
            return "~" + joined[len(home.rstrip("/")) :]
        return joined
    return p
