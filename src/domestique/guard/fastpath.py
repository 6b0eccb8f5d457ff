"""The fast path: recognise plainly harmless commands without the parser.

``git status``, ``ls -la src``, ``pytest -q tests`` — a simple command made only of safe
characters whose program (and subcommand) is on a short known-safe list — is answered here with
no tree-sitter, no regex engine and no detection engine imported. Anything else returns None and
goes to the full parser. The test suite checks that every command the fast path accepts gets no
reason from the full path either, so the two can never disagree.
"""

from __future__ import annotations

# No shell syntax at all: no quotes, $, globs, ~, redirections, separators, escapes or spaces
# other than the plain space.
SAFE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,@%+ ")
MAX_LEN = 200

# Programs whose arguments cannot make them dangerous (no egress, no writes, no code). Not
# `date`: `date 0101000019` sets the clock (cmd.clock_change).
_ANY_ARGS = frozenset(
    {
        "ls", "pwd", "whoami", "uname", "hostname", "id", "true", "false", "echo", "which",
        "du", "df", "wc", "file", "stat", "basename", "dirname", "realpath", "readlink", "tree",
        "nproc", "uptime", "groups", "locale", "printenv", "cal", "seq", "sleep", "test",
        "pytest", "ruff", "mypy", "black", "isort", "flake8", "pylint", "tsc", "eslint",
        "prettier", "jest", "vitest", "mocha", "rustfmt", "gofmt", "shellcheck", "tox", "nox",
        "clang-format", "cmake", "ctest", "ninja", "gradle", "mvn", "bazel", "dotnet", "swift",
    }
)  # fmt: skip
# Programs whose first argument (subcommand) must be one of these.
_SUBCOMMANDS: dict[str, frozenset[str]] = {
    "git": frozenset(
        {
            "status",
            "log",
            "diff",
            "show",
            "rev-parse",
            "describe",
            "blame",
            "shortlog",
            "ls-files",
            "ls-tree",
            "cat-file",
            "add",
            "commit",
            "switch",
            "merge-base",
            "grep",
            "whatchanged",
            "count-objects",
            "var",
            "check-ignore",
            "name-rev",
            "version",
        }
    ),
    "cargo": frozenset(
        {"build", "test", "check", "fmt", "clippy", "run", "doc", "bench", "tree", "metadata"}
    ),
    "go": frozenset({"build", "test", "vet", "fmt", "run", "list", "version", "env", "doc"}),
    "npm": frozenset({"test", "run", "start", "ls", "list", "version", "help"}),
    "pnpm": frozenset({"test", "run", "start", "ls", "list", "build", "lint"}),
    "yarn": frozenset({"test", "run", "start", "build", "lint", "list"}),
    "make": frozenset({"test", "build", "all", "check", "lint", "fmt", "format", "help"}),
    "uv": frozenset({"run", "sync", "lock", "tree", "version"}),
    "poetry": frozenset({"run", "check", "show", "version", "build"}),
    "python": frozenset({"-m", "--version", "-V"}),
    "python3": frozenset({"-m", "--version", "-V"}),
    "node": frozenset({"--version", "-v"}),
    "docker": frozenset({"ps", "images", "version", "info", "logs", "inspect"}),
    "kubectl": frozenset({"get", "describe", "logs", "version", "top", "explain"}),
}
# Words that make the full path look harder (credentials, settings, devices, shells).
_SENSITIVE = (
    ".ssh", ".aws", ".gnupg", "credential", ".env", "shadow", "passwd", "netrc", "npmrc", "pypirc",
    "kube", ".docker", "key", ".pem", "histor", "hook", "settings", "domestique", "/dev/", "/etc/",
    "sudoers", "keychain", "keyring", "token", "secret", "config", "/proc/", "/sys/",
)  # fmt: skip
_SHELL_NAMES = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "yash", "rbash"}
)
_GIT_BAD_ARGS = ("-D", "--hard", "--force", "-f", "--delete", "--output", "--ext-diff", "-c")
_PY_MODULES = frozenset({"pytest", "mypy", "ruff", "unittest", "pip", "black", "isort", "tox"})


def is_plainly_safe(command: str) -> bool:
    """True when ``command`` is a simple, harmless command the full parser would not flag."""
    if len(command) > MAX_LEN or not command or not SAFE_CHARS.issuperset(command):
        return False
    tokens = command.split()
    if not tokens:
        return False
    prog = tokens[0]
    # The program first: most commands are not on the lists, and that test is the cheapest.
    any_args = prog in _ANY_ARGS
    if not any_args:
        subs = _SUBCOMMANDS.get(prog)
        if subs is None or len(tokens) < 2 or tokens[1] not in subs:
            return False
    if "=" in prog or "/" in prog:
        return False
    if "://" in command or "git+" in command or (prog == "go" and "@" in command):
        return False  # a package from a URL or a repository (``go run host/x@latest``)
    lowered = command.lower()
    for fragment in _SENSITIVE:
        if fragment in lowered:
            return False
    for tok in tokens[1:]:
        for part in tok.replace("=", " ").replace(":", " ").replace(",", " ").split():
            if part.rsplit("/", 1)[-1] in _SHELL_NAMES:
                return False
    if any_args:
        return True
    if prog == "git":
        return not any(t in _GIT_BAD_ARGS or t.startswith("--output") for t in tokens[2:])
    if prog in ("python", "python3") and tokens[1] == "-m":
        return (
            len(tokens) > 2
            and tokens[2] in _PY_MODULES
            and (
                tokens[2] != "pip" or (len(tokens) > 3 and tokens[3] in ("list", "show", "freeze"))
            )
        )
    return True
