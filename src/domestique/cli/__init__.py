"""The ``domestique`` command: a thin dispatcher that imports only the subcommand it runs.

Each subcommand lives in its own module with a ``run(argv: list[str]) -> int`` function and
builds its own argument parser; ``domestique hook …`` in particular must start fast, so nothing
here imports more than the chosen module. ``check`` first asks the hook daemon
(:mod:`domestique.cli._fast`, stdlib only) and imports its module only when the daemon cannot
answer. Exit codes follow the command-line contract in
DESIGN.md: 2 is an error, and an error never looks like "nothing found" or "allow".
"""

from __future__ import annotations

import importlib
import os
import sys

# name -> (module, one-line help). Order is the order of ``domestique --help``.
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": (
        "domestique.cli.demo",
        "run the firewall end to end on embedded defaults, no key, no network",
    ),
    "scan": ("domestique.cli.scan", "find secrets, personal data and customer records in text"),
    "check": ("domestique.cli.check", "judge a shell command before it runs"),
    "hook": ("domestique.hooks.entry", "answer an agent host's pre-execution hook (stdin JSON)"),
    "install": ("domestique.hooks.install", "install the hook into an agent host's settings"),
    "uninstall": ("domestique.hooks.install", "remove the hook from an agent host's settings"),
    "doctor": (
        "domestique.hooks.doctor",
        "report, per agent host, whether the hook is installed and answering",
    ),
    "proxy": ("domestique.cli.proxy", "run the firewall: a local proxy to the model providers"),
    "audit": ("domestique.cli.audit", "verify, export or tail the audit log"),
    "report": ("domestique.cli.report", "what left, what was redacted or blocked, and why"),
    "policy": ("domestique.cli.policy", "check a policy file or show the effective policy"),
    "records": ("domestique.cli.records", "register customer records for exact-data-match"),
    "codes": ("domestique.cli.codes", "list every reason code, or explain one"),
    "explain": (
        "domestique.cli.explain",
        "why a command or a recorded decision got its verdict, and what would allow it",
    ),
    "allow": (
        "domestique.cli.allow",
        "turn a false positive into an allow rule: --once, --repo or --user",
    ),
    "hub": ("domestique.cli.hub", "run and administer the fleet hub (the hub extra)"),
    "enroll": ("domestique.cli.enroll", "register this endpoint with the fleet hub"),
    "sync": ("domestique.cli.sync", "upload decision records, fetch the signed policy bundle"),
    "bundle": ("domestique.cli.bundle", "sign policy bundles with an offline key"),
}


def _usage() -> str:
    width = max(len(n) for n in COMMANDS)
    rows = "\n".join(f"  {name:<{width}}  {text}" for name, (_, text) in COMMANDS.items())
    return (
        "usage: domestique COMMAND [ARGS...]\n\n"
        "Policy enforcement for AI coding agents.\n\ncommands:\n"
        f"{rows}\n\n"
        "Run 'domestique COMMAND --help' for a command's options.\n"
        "DOMESTIQUE_HOME holds the audit store, keys and per-user policy.\n"
    )


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        sys.stdout.write(_usage())
        return 0 if args else 2
    if args[0] in ("-V", "--version"):
        from domestique import __version__

        sys.stdout.write(f"domestique {__version__}\n")
        return 0
    name = args[0]
    entry = COMMANDS.get(name)
    if entry is None:
        sys.stderr.write(f"domestique: unknown command {name!r}\n\n{_usage()}")
        return 2
    tried = False
    if name == "check":  # the daemon answers, as the in-process command would, or None
        from domestique.cli import _fast

        answered = _fast.check(args[1:])
        if answered is not None:
            return answered
        tried = _fast.eligible(args[1:]) and os.environ.get("DOMESTIQUE_HOOKD", "on") != "off"
    module = importlib.import_module(entry[0])
    if tried:
        code = int(module.run(args[1:]))
        _fast.start_daemon()
        return code
    # install/uninstall share a module; they get their own name as the first argument.
    rest = args if name in ("install", "uninstall") else args[1:]
    return int(module.run(rest))
