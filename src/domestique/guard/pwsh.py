"""PowerShell code given to ``pwsh -c`` / ``powershell -Command`` (also on Linux and macOS).

PowerShell is not parsed as a language. The code is cut into pipeline segments, and the command
word of each is looked up: ``iex``/``Invoke-Expression`` over a download is remote code, an
encoded command is decoded code, a recursive ``Remove-Item`` of home or ``/`` is a root delete,
and a segment whose command is not on a short list of read-only cmdlets makes the whole code
opaque (``cmd.opaque_command``, deny): code the guard cannot read is not allowed by default.
"""

from __future__ import annotations

import re

_SEGMENTS = re.compile(r"[;|{}()\n]|&&|\|\|")
_DOWNLOAD = re.compile(
    r"(?i)\b(?:iwr|irm|invoke-webrequest|invoke-restmethod|downloadstring|downloaddata|"
    r"downloadfile|net\.webclient|start-bitstransfer|system\.net\.http|curl|wget)\b"
)
_EXEC = re.compile(
    r"(?i)(?:\biex\b|invoke-expression|\[scriptblock\]::create|invoke-command|"
    r"\.invoke\s*\(|start-process|&\s*\(|&\s*\$)"
)
_REMOVE = re.compile(r"(?i)^(?:remove-item|rm|ri|del|rmdir|rd|erase)$")
_HOME = re.compile(r"(?i)^(?:~|\$home|\$env:home|\$env:userprofile|\$\{env:home\})[/\\]?\*?$")
_ROOT = re.compile(r"(?i)^(?:/|[a-z]:\\?|/\*|[a-z]:\\\*)$")
# Read-only or purely local cmdlets and aliases: code made only of these stays allowed.
_SAFE = frozenset(
    {"get-childitem", "get-content", "get-item", "get-location", "get-process", "get-command",
     "get-help", "get-date", "get-host", "get-module", "get-variable", "get-member", "get-service",
     "select-object", "select-string", "where-object", "sort-object", "format-table",
     "format-list", "measure-object", "test-path", "write-output", "write-host", "out-string",
     "out-host", "out-null", "convertto-json", "convertfrom-json", "join-path", "split-path",
     "resolve-path", "foreach-object", "group-object", "set-location", "push-location",
     "pop-location", "ls", "dir", "gci", "cat", "gc", "pwd", "cd", "echo", "select", "where",
     "sort", "ft", "fl", "measure", "write", "\u0025", "?", "foreach", "import-module",
     "get-psreadlineoption", "$psversiontable", "exit", "return", "if", "else", "elseif",
     "get-filehash", "compare-object", "tee-object", "get-uptime", "get-computerinfo"}
)  # fmt: skip


_LISTERS = frozenset({"get-childitem", "gci", "ls", "dir", "get-item", "gi", "resolve-path"})
_WEB = frozenset({"iwr", "irm", "invoke-webrequest", "invoke-restmethod", "curl", "wget"})
# Invoke-WebRequest parameters read as curl's (a value, or none): anything else is not judged.
_WEB_PARAMS: dict[str, str | None] = {
    "-uri": "", "-outfile": "-o", "-infile": "-T", "-method": "-X", "-usebasicparsing": None,
    "-timeoutsec": "", "-contenttype": "", "-useragent": "", "-maximumredirection": "",
}  # fmt: skip
_SEPARATORS = re.compile(r"(\|\||&&|[;|{}()\n])")


def web_request(words: list[str]) -> list[str] | None:
    """``Invoke-WebRequest URL -OutFile F`` as the curl words it amounts to; None when a
    parameter is not one the guard reads (a body built from code, headers)."""
    argv = ["curl"]
    i = 1
    while i < len(words):
        w = words[i]
        low = w.lower()
        if low.startswith("-"):
            if low not in _WEB_PARAMS:
                return None
            flag = _WEB_PARAMS[low]
            if flag is None:
                i += 1
                continue
            if i + 1 >= len(words):
                return None
            value = words[i + 1].strip("'\"")
            if value.startswith(("$", "(", "@")):
                return None
            if low == "-uri":
                argv.append(value)
            elif flag:
                argv += [flag, value]
            i += 2
            continue
        if w.startswith(("$", "(", "@")):
            return None
        argv.append(w.strip("'\""))
        i += 1
    return argv


def shell_equivalents(code: str) -> list[list[str]]:
    """The web requests in ``code`` that stand alone (not fed to ``iex``), as curl commands,
    judged by the shell rules (an upload of a key, a download into a PATH folder)."""
    if _EXEC.search(code):
        return []
    out = []
    for segment in _SEGMENTS.split(code):
        words = segment.split()
        if words and words[0].lower() in _WEB:
            argv = web_request(words)
            if argv is not None:
                out.append(argv)
    return out


# `$p = "~"` (or $HOME, a path): a name bound to a known place, put in place of later `$p`.
_ASSIGN = re.compile(r"\$(\w+)\s*=\s*(['\"]?)([~/$][^'\";\n|]*)\2\s*(?:;|\n|$)")


def _bind(code: str) -> str:
    pos = 0
    for _ in range(4):
        m = _ASSIGN.search(code, pos)
        if m is None:
            break
        use = re.compile(r"\$" + re.escape(m.group(1)) + r"\b(?!\s*=)")
        value = m.group(3)
        code = code[: m.end()] + use.sub(lambda _, v=value: v, code[m.end() :])  # type: ignore[misc]
        pos = m.end()
    return code


# [System.IO.Directory]::Delete($HOME, $true), [IO.File]::Delete(…): .NET deletes by static call.
_NET_DELETE = re.compile(
    r"(?i)\[(?:system\.)?io\.(?:directory|file)\]::delete\s*\(\s*['\"]?([^,)'\"]+)['\"]?"
)
_NET_CALL = re.compile(r"(?i)\[([\w.]+)\]::(\w+)")
# .NET types whose static members only compute (or read the environment by name).
_SAFE_TYPES = frozenset(
    {"math", "system.math", "string", "system.string", "datetime", "system.datetime", "int",
     "convert", "system.convert", "guid", "system.guid", "timespan", "version", "regex",
     "system.io.path", "io.path", "environment", "system.environment", "char", "bool"}
)  # fmt: skip
# What a pipeline stage reads that must not be sent: the environment, credential files.
_SECRET_SOURCE = re.compile(
    r"(?i)\benv:|\$env:\w*(?:token|secret|key|pass)|\.ssh[/\\]|\.aws[/\\]|\.kube[/\\]|"
    r"\.docker[/\\]config|\.netrc|\.git-credentials|\.config[/\\]gcloud|\.env\b|"
    r"credentials|auth\s+token|print-access-token|get-access-token"
)


def _net_calls(code: str) -> list[tuple[str, str, str | None]]:
    out: list[tuple[str, str, str | None]] = []
    for m in _NET_DELETE.finditer(code):
        target = m.group(1).strip()
        if _HOME.match(target) or _ROOT.match(target):
            place = "~" if _HOME.match(target) else "/"
            out.append(("cmd.destructive.rm_root", f".NET Delete of {place}", place))
        else:
            out.append(("cmd.destructive.rm_outside", f".NET Delete of {target[:40]}", None))
    if not out:
        for m in _NET_CALL.finditer(code):
            if m.group(1).lower() not in _SAFE_TYPES:
                out.append(("cmd.opaque_command", f"PowerShell calls [{m.group(1)[:40]}]::"
                            f"{m.group(2)[:30]} (not judged)", None))  # fmt: skip
                break
    return out


def judge_powershell(code: str) -> list[tuple[str, str, str | None]]:
    """(code, message, deleted target) findings for PowerShell ``code``; empty = readable and
    harmless. ``deleted target`` is ``~`` or ``/`` for a recursive delete of home or root."""
    out: list[tuple[str, str, str | None]] = []
    if "=" in code:
        code = _bind(code)
    if _EXEC.search(code) and _DOWNLOAD.search(code):
        out.append(("cmd.pipe_to_shell", "PowerShell downloads and runs code", None))
    elif _EXEC.search(code):
        out.append(("cmd.opaque_command", "PowerShell runs code it builds", None))
    if "]::" in code:
        out += _net_calls(code)
    unknown: list[str] = []
    piped: list[str] = []  # what the previous pipeline stage lists (gci ~ | Remove-Item)
    secret_fed = False  # an earlier stage of this pipeline reads the environment or a credential
    parts = _SEPARATORS.split(code)
    for k, segment in enumerate(parts):
        if k % 2:
            if segment not in ("|", "(", ")"):
                secret_fed = False  # a new statement
            continue  # a separator
        words = segment.split()
        in_pipe = bool(k) and parts[k - 1] == "|"
        fed = piped if in_pipe else []
        piped = []
        if not words:
            continue
        if len(words) > 2 and words[0].startswith("$") and words[1] == "=":
            words = words[2:]  # $t = gh auth token: the command whose output is kept
        head = words[0].lower()
        if head in _WEB and (in_pipe or secret_fed) and (secret_fed or _SECRET_SOURCE.search(
            parts[k - 2] if k >= 2 else ""
        )):  # fmt: skip
            out.append(("cmd.exfiltration", "PowerShell sends a credential or the environment "
                        "it read", None))  # fmt: skip
            continue
        if head in _WEB and in_pipe:
            out.append(("cmd.file_transfer", "PowerShell sends what the pipeline produced", None))
            continue
        if _SECRET_SOURCE.search(segment):
            secret_fed = True
        if head in _LISTERS:
            piped = [w.strip("'\"") for w in words[1:] if not w.startswith("-")] or ["."]
        if head in _WEB and not _EXEC.search(code) and web_request(words) is not None:
            continue  # judged as the curl command it amounts to (shell_equivalents)
        if _REMOVE.match(head):
            recursive = any(w.lower().startswith("-r") for w in words[1:])
            targets = [w.strip("'\"") for w in words[1:] if not w.startswith("-")]
            for t in [*targets, *fed]:
                if recursive and _HOME.match(t):
                    out.append(("cmd.destructive.rm_root", "Remove-Item -Recurse of home", "~"))
                elif recursive and _ROOT.match(t):
                    out.append(("cmd.destructive.rm_root", "Remove-Item -Recurse of /", "/"))
            continue
        if (
            head.startswith(("$", "'", '"', "[", "-", "#", "@"))
            or head.replace(".", "", 1).isdigit()
        ):
            continue  # an expression, a string, a type, a parameter or a comment
        if head not in _SAFE:
            unknown.append(head)
    if unknown and not out:
        out.append(
            ("cmd.opaque_command", f"PowerShell code runs {unknown[0][:40]} (not judged)", None)
        )
    return out


def encoded_flag(flag: str) -> bool:
    """``-EncodedCommand`` and its accepted abbreviations (``-e``, ``-ec``, ``-enc``, …)."""
    f = flag.lower().lstrip("-")
    return bool(f) and ("encodedcommand".startswith(f) or f == "ec")
