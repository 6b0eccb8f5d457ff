"""Program families the unfold stage and the rules share: shells, interpreters, code flags."""

from __future__ import annotations

SHELLS = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "yash", "rbash",
     "elvish", "posh", "rc", "sash", "nu", "xonsh", "ion", "oksh", "pdksh", "es", "scsh"}
)  # fmt: skip


INTERPRETERS = {
    "python": "python", "pypy": "python", "perl": "perl", "ruby": "ruby", "node": "node",
    "nodejs": "node", "bun": "node", "deno": "node", "php": "php", "lua": "lua", "luajit": "lua",
    "awk": "awk", "gawk": "awk", "mawk": "awk", "nawk": "awk", "busybox-awk": "awk",
    "rscript": "r", "r": "r", "osascript": "applescript", "jrunscript": "node", "jjs": "node",
    "tclsh": "tcl", "wish": "tcl", "expect": "tcl", "irb": "ruby", "pwsh": "powershell",
    "powershell": "powershell", "groovy": "groovy", "julia": "julia", "gnuplot": "gnuplot",
    "bpftrace": "awk", "scala": "node",
}  # fmt: skip


# Option that introduces inline code, per interpreter.
CODE_FLAGS = {
    "python": ("-c",),
    "perl": ("-e", "-E"),
    "ruby": ("-e",),
    "node": ("-e", "--eval", "-p", "--print"),
    "php": ("-r",),
    "lua": ("-e",),
    "r": ("-e",),
    "applescript": ("-e",),
    "powershell": ("-c", "-command", "-Command", "-EncodedCommand", "-e", "-enc"),
    "groovy": ("-e",),
    "tcl": ("-c",),
    "julia": ("-e", "--eval"),
    "gnuplot": ("-e",),
}


# Flags that only check syntax: the code read (a file, stdin) is parsed, never run. Not perl -c,
# which runs BEGIN blocks and `use` imports.
SYNTAX_CHECK_FLAGS = {
    "php": ("-l", "--syntax-check"),
    "ruby": ("-c",),
    "node": ("-c", "--check"),
}


# The key ``env -i`` leaves in ``Invocation.env``: the command starts with no variables at all.
ENV_CLEARED = "\0cleared"
