"""What interpreter one-liners do: shell-outs, deletes, downloads, sockets, decoding, forks.

``python -c``, ``perl -e``, ``ruby -e``, ``node -e``, ``php -r``, ``lua -e`` and ``awk`` programs
are not parsed as their languages; the guard looks for the calls that matter across all of them
and pulls out the string literals those calls receive. A shell-out with a literal command becomes
a nested shell command the guard judges like any other; a non-literal one is reported as
``executes`` so download- or decode-then-exec is still caught.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_STR = r"""(?:'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")"""
_STR_RE = re.compile(_STR)
# A call that runs a shell command (or a program) with what follows.
_SHELL_CALL = re.compile(
    r"(?:\b(?:os\.system|os\.popen|popen|system|shell_exec|passthru|proc_open|getoutput|"
    r"getstatusoutput|check_output|check_call|subprocess\.(?:run|call|Popen)|Popen|execSync|"
    r"exec|execFile|execFileSync|spawn|spawnSync|os\.execute|io\.popen|execute|"
    r"Open3\.\w+|IO\.popen|Kernel\.(?:system|exec|spawn)|pty\.spawn|"
    r"os\.exec[lv]p?e?|os\.spawn[lv]p?e?|runtime\.exec|Runtime\.getRuntime\(\)\.exec|qx|"
    r"pcntl_exec|run|ProcessBuilder|esyscmd|syscmd|do\s+(?:shell\s+)?script)"
    r")\s*[({]?\s*(\[\s*" + _STR + r"(?:\s*,\s*" + _STR + r")*\s*\]|" + _STR + r"(?:\s*,\s*"
    r"" + _STR + r")*(?:\s*,\s*\[\s*" + _STR + r"(?:\s*,\s*" + _STR + r")*\s*\])?)"
)
_BACKTICK = re.compile(r"`([^`\n]+)`|%x\{([^}\n]+)\}|\bqx\{([^}\n]+)\}|\bqx\(([^)\n]+)\)")
_AWK_PIPE = re.compile(r"(" + _STR + r")\s*\|\s*getline|\|\s*&?\s*(" + _STR + r")")
_DELETE_TREE = re.compile(
    r"(?:\b(?:shutil\.rmtree|rmtree|FileUtils\.(?:rm_rf|rm_r|remove_dir|remove_entry(?:_secure)?)|"
    r"fs\.(?:rm|rmdir|promises\.rm)|rimraf|remove_tree|Deno\.remove(?:Sync)?)|\.rmSync|\.rmdirSync)"
    r"\s*\(?\s*(?:glob\s*\(\s*)?(" + _STR + r")|"
    # julia rm(p, recursive=true), R unlink(p, recursive = TRUE), Tcl file delete -force p
    r"\b(?:rm|unlink)\s*\(\s*(" + _STR + r")\s*[,;][^)]*\brecursive\s*=\s*(?:true|TRUE|T)\b|"
    r"\bfile\s+delete\s+(?:-force\s+)?(?:--\s+)?(" + _STR + r"|~\S*|\$(?:::)?env\(HOME\)\S*)"
)
_DELETE_FILE = re.compile(
    r"\b(?:os\.(?:remove|unlink|rmdir|removedirs)|unlink|FileUtils\.rm|File\.delete|"
    r"fs\.unlinkSync|fs\.unlink|os\.remove)\s*\(?\s*(?:glob\s*\(?\s*)?(" + _STR + r")"
)
_DOWNLOAD = re.compile(
    r"\b(?:urlopen|urlretrieve|urllib|requests\.(?:get|post)|http\.client|httpx|"
    r"LWP::|HTTP::Tiny|getstore|Net::HTTP|open-uri|URI\.open|fetch\s*\(|https?\.get|axios|"
    r"file_get_contents\s*\(\s*['\"]https?:|curl_exec|wget|http\.request|socket\.http|"
    r"require\(\s*['\"](?:node:)?https?['\"]\s*\)|Net::HTTP|LWP::UserAgent|Faraday|HTTParty|"
    r"Invoke-WebRequest|Invoke-RestMethod|\biwr\b|\birm\b|DownloadString|DownloadFile|WebClient|"
    # R download.file(), julia download() / Downloads.download, R source()/url() of a URL
    r"download\.file\s*\(|\bdownload\s*\(\s*['\"]https?:|Downloads\.download|"
    r"\b(?:source|url|include)\s*\(\s*['\"]https?:)|"
    # a string that is itself a download command (awk's `"curl -s URL" | getline`)
    r"['\"]\s*(?:curl|wget)\s[^'\"\n]*(?:https?|ftp)://"
)
# Code that runs another file: exec(open(F).read()), runpy.run_path(F), require("./F"), perl
# `do F`, ruby `load F`, php `include F`, lua `dofile(F)`: the file is run as the language's code.
_RUNS_FILE = re.compile(
    r"\b(?:exec|eval)\s*\(\s*open\s*\(\s*(" + _STR + r")|\brunpy\.run_path\s*\(\s*(" + _STR + r")|"
    r"\beval\s*\(\s*(?:require\(\s*['\"](?:node:)?fs['\"]\s*\)|fs)\.readFileSync\s*\(\s*("
    + _STR
    + r")|\b(?:require|import)\s*\(\s*((?:'|\")(?:/|\./|\.\./|~/)[^'\"\n]*(?:'|\"))|"
    r"\bdo\s*\(?\s*((?:'|\")(?:/|\./|~/)[^'\"\n]*(?:'|\"))|\b(?:load|require_relative)\s*\(?\s*("
    + _STR
    + r")|\b(?:include|require)(?:_once)?\s*\(?\s*((?:'|\")/[^'\"\n]*(?:'|\"))|"
    r"\b(?:dofile|loadfile)\s*\(\s*(" + _STR + r")"
)
_TCL_EXEC = re.compile(r"(?:^|[;\[\n{])\s*(?:exec|spawn)\s+(?:--\s+)?([^\]\n;}]+)")
_SYSTEM2 = re.compile(
    r"\bsystem2\s*\(\s*("
    + _STR
    + r")\s*,\s*(?:args\s*=\s*)?c\(\s*("
    + _STR
    + r"(?:\s*,\s*"
    + _STR
    + r")*)\s*\)"
)
_TCL_ENV = re.compile(r"\$(?:::)?env\((\w+)\)")
_URL = re.compile(r"\bhttps?://|\bftp://")
_EXEC_DATA = re.compile(
    r"\(\s*eval\s*\)|\bnew\s+Function\b|\bvm\.runIn\w*|"
    r"\b(?:source|include)\s*\(\s*(?:download|url\b|['\"]https?:)|\beval\s*\(\s*parse\s*\(|"
    r"(?<![.\w])(?:exec|eval|compile|instance_eval|class_eval|Function|runpy|"
    r"__import__\(['\"]os['\"]\)|load)\s*\(|"
    # deserialisers that run code (pickle, marshal, dill, unsafe YAML)
    r"\b(?:c?[Pp]ickle|marshal|dill|cloudpickle|joblib|shelve)\.loads?\s*\(|\byaml\.unsafe_load|"
    r"\byaml\.load\s*\((?![^)]*SafeLoader)|\beval\s+|\bexec\s+\$|\bsystem\s*\(\s*\$|"
    r"\bsystem\s*\(\s*[a-zA-Z_]\w*\s*[,)]|\bos\.system\s*\(\s*[a-zA-Z_]\w*\s*\)|"
    r"\bpopen\s*\(\s*[a-zA-Z_$]\w*\s*[,)]|\bchmod\b|\bexecSync\s*\(\s*[a-zA-Z_$]\w*|"
    # A process-running call whose command is computed (not a string or list of strings).
    r"\b(?:subprocess\.(?:run|call|Popen|check_output|check_call|getoutput|getstatusoutput)|"
    r"os\.popen|Popen|check_output|getoutput|execSync|spawnSync|shell_exec|passthru|proc_open|"
    r"IO\.popen|Open3\.\w+)\s*\(\s*(?:\[\s*)?(?=[^\s'\"\[\])])"
)
_DECODE = re.compile(
    r"\b(?:b64decode|base64\.(?:b64decode|decodebytes|standard_b64decode|urlsafe_b64decode)|"
    r"decode_base64|base64_decode|Base64\.decode64|unpack\s*\(\s*['\"]m|from\s*\(.*['\"]base64|"
    r"atob|zlib\.decompress|gzinflate|gzuncompress|codecs\.decode|bytes\.fromhex|unhexlify|"
    r"str_rot13|\.decode\(['\"](?:base64|hex|rot13))"
)
# A shell call whose command is what a decoder returns: system(decode_base64(...)),
# os.system(base64.b64decode(...).decode()), execSync(Buffer.from(..., "base64")...).
_RUNS_DECODED = re.compile(
    r"\b(?:os\.system|os\.popen|popen|system|shell_exec|passthru|exec|execSync|spawn|spawnSync|"
    r"subprocess\.(?:run|call|Popen|check_output)|Popen|IO\.popen|Kernel\.(?:system|exec)|qx)"
    r"\s*[({]\s*(?:[\w.]+\s*\(\s*)?(?:" + _DECODE.pattern + r"|Buffer\.from\s*\()"
)
_SOCKET = re.compile(
    r"/inet6?/(?:tcp|udp)/|/dev/(?:tcp|udp)/|require\s*\(?\s*['\"]socket|java\.net\.Socket|"
    r"\bSockets\b|\bnet\.Dial|\bconnect\s*\(\s*['\"][\w.-]+['\"]\s*,|"
    r"\b(?:socket\.socket|socket\.create_connection|socket\s*\(|IO::Socket|TCPSocket|"
    r"Socket\.tcp|fsockopen|stream_socket_client|net\.connect|net\.Socket|"
    r"new\s+net\.Socket|createConnection|require\(['\"]net['\"]\)|socket\.tcp|/inet/tcp|"
    r"/inet/udp|/dev/tcp/|/dev/udp/|Socket\.new|UDPSocket|PF_INET|AF_INET)"
)
_LISTEN = re.compile(
    r"\b(?:\.bind\s*\(|\.listen\s*\(|TCPServer|createServer|stream_socket_server|"
    r"LocalPort|Listen\s*=>|SOMAXCONN|accept\s*\(|:accept\s*\(|bind\s*\(\s*['\"]\*)|"
    r"/inet6?/tcp/[1-9]\d*/0/0"
)
_SHELL_WIRE = re.compile(
    r"\|&\s*getline|\|&\s*s\b|"
    r"\b(?:dup2|pty\.spawn|subprocess|/bin/(?:ba|z|da)?sh|\bcmd\.exe|popen|proc_open|"
    r"exec\s*\(|system\s*\(|spawn|\.pipe\(|STDIN->fdopen|IO\.popen|sh\s+-i|"
    r"fdopen|\bexec\s+['\"]|to_i\s*,|child_process|ProcessBuilder|io\.popen|os\.execute|"
    r"\brun\s*\(|\|&\s*getline|exec\.Command)"
)
_FORK_LOOP = re.compile(
    r"fork\s+while\s+fork|while\s*\(?\s*(?:1|True|true)\s*\)?\s*[:{]?\s*(?:os\.)?fork|"
    r"for\s*\(\s*;\s*;\s*\)\s*\{?\s*fork|loop\s*\{?\s*fork|while\s+fork|fork\s*\(\s*\)\s*while"
)


_WRITE_FILE = re.compile(
    r"\b(?:(?:fs\.)?(?:writeFileSync|writeFile|createWriteStream|(append)FileSync|(append)File|"
    r"promises\.writeFile)|File\.write|IO\.write|file_put_contents|Deno\.writeTextFile|"
    r"Deno\.writeFile|Bun\.write)\s*\(\s*(" + _STR + r")"
)
_PERL_OPEN_WRITE = re.compile(
    r"\bopen\s*\(?\s*(?:my\s+)?[$\w]+\s*,\s*['\"](>>?)\s*['\"]\s*,\s*(" + _STR + r")|"
    r"\bopen\s*\(?\s*(?:my\s+)?[$\w]+\s*,\s*['\"](>>?)\s*([^'\"\s]+)['\"]|"
    r"\bFile\.open\s*\(\s*(" + _STR + r")\s*,\s*['\"]([wa])|"
    r"\b(?:os\.truncate|truncate|File\.truncate|ftruncate|fs\.truncateSync)\s*\(\s*(" + _STR + r")"
)
# Expressions that evaluate to the home folder, rewritten to the literal "~" before the patterns
# run, so `rmSync(os.homedir())` or `rm_rf(Dir.home)` is a delete of "~".
_HOME_EXPR = re.compile(
    r"require\(\s*['\"](?:node:)?os['\"]\s*\)\.homedir\(\)|\b(?:os\.)?homedir\(\)|"
    r"\bprocess\.env\.HOME\b|\bprocess\.env\[\s*['\"]HOME['\"]\s*\]|"
    r"\$ENV\{\s*['\"]?HOME['\"]?\s*\}|\bENV\[\s*['\"]HOME['\"]\s*\]|"
    r"\bENV\.fetch\(\s*['\"]HOME['\"]\s*\)|\bDir\.home\b|"
    r"\bFile\.expand_path\(\s*['\"]~['\"]\s*\)|\bgetenv\(\s*['\"]HOME['\"]\s*\)|"
    r"\$_SERVER\[\s*['\"]HOME['\"]\s*\]|\$_ENV\[\s*['\"]HOME['\"]\s*\]|"
    r"\bDeno\.env\.get\(\s*['\"]HOME['\"]\s*\)|\bSys\.getenv\(\s*['\"]HOME['\"]\s*\)|"
    r"\b(?:path\.expand|normalizePath|expanduser)\(\s*['\"]~/?['\"]\s*\)|\bos\.getenv\(\s*['\"]HOME['\"]\s*\)|"
    r"\bos\.UserHomeDir\(\)|\bENVIRON\[\s*\"HOME\"\s*\]|\bBun\.env\.HOME\b|\bBun\.env\[\s*['\"]HOME['\"]\s*\]"
)
# Home read inside a double-quoted string (perl "$ENV{HOME}", ruby "#{Dir.home}"): the text "~".
_HOME_INTERPOLATED = re.compile(
    r"\$ENV\{\s*['\"]?HOME['\"]?\s*\}|\$_SERVER\[\s*['\"]?HOME['\"]?\s*\]|"
    r"#\{\s*(?:ENV\[\s*['\"]HOME['\"]\s*\]|Dir\.home|ENV\.fetch\(\s*['\"]HOME['\"]\s*\))\s*\}"
)
_DQ_STR = re.compile(r'"(?:[^"\\\n]|\\.)*"')
# A name bound once to a literal: `const h = "~";`, perl `my $h = "~";`, php `$h = "~";`, ruby
# `h = "~"` at the end of a line.
_CONST = re.compile(
    r"(?:\b(?:const|let|var|my|local)\s+|(?:^|(?<=[;{]))\s*)(\$?[A-Za-z_]\w*)\s*=\s*\"([^\"\\\n]*)\""
    r"\s*(?:;|$)",
    re.MULTILINE,
)
_CONCAT = re.compile(
    r"(['\"])((?:(?!\1)[^\"\\\n])*)\1\s*(?:\+|\.\.?)\s*(['\"])((?:(?!\3)[^\"\\\n])*)\3"
)  # "a" + "b" (js, python), "a" . "b" (perl, php), "a" .. "b" (lua)
# R's paste("a", "b") is "a b", paste0("a", "b") is "ab"
_R_PASTE = re.compile(r"\bpaste(0?)\(\s*\"([^\"\\\n]*)\"\s*,\s*\"([^\"\\\n]*)\"\s*\)")
# awk joins strings written side by side: "rm -rf " "~"
_AWK_CONCAT = re.compile(r"\"([^\"\\\n]*)\"[ \t]+\"([^\"\\\n]*)\"(?=\s*[;)}\n])")
# A listing of home (after normalize_code) and a delete of a name in the same code: the loop
# `Dir.glob(File.join(Dir.home, "*")).each { |f| FileUtils.rm_rf(f) }` deletes everything in ~.
_LISTS_HOME = re.compile(
    r"\b(?:Dir\.glob|Dir\.children|Dir\.entries|Dir\.each_child|Dir\[|glob|readdirSync|readdir|"
    r"scandir|opendir|bsd_glob|listdir)\s*\(?\s*(?:File\.join\s*\(\s*|path\.join\s*\(\s*)?\"~/?\*?\""
)
_DELETES_NAME = re.compile(
    r"\b(?:rm_rf|rm_r|rmtree|remove_tree|rmSync|rmdirSync|unlink|unlinkSync|rmdir|remove_entry)"
    r"\s*\(?\s*[$@]?[A-Za-z_]\w*(?:\s*[,)]|\s+(?:for|foreach)\b)"
)
# The whole environment used as data (not one variable, not `env: process.env` for a child).
_ENV_WHOLE = re.compile(
    r"(?<!env:)(?<!env: )(?<!\.\.\.)\bprocess\.env\b(?!\s*[.\[])|%ENV\b|"
    r"\bENV\.(?:to_h|to_a|inspect|to_s|each|map|select|keys|values)\b|\$_ENV\b(?!\s*\[)|"
    r"\bgetenv\(\s*\)|\bDeno\.env\.toObject\(\)|\bos\.Environ\(\)"
)
_ENV_NAMED = re.compile(
    r"\bprocess\.env\.(\w+)|\bprocess\.env\[\s*['\"](\w+)['\"]\s*\]|\$ENV\{\s*['\"]?(\w+)|"
    r"\bENV\[\s*['\"](\w+)['\"]|\bgetenv\(\s*['\"](\w+)['\"]|\$_ENV\[\s*['\"](\w+)['\"]|"
    r"\bos\.environ\[\s*['\"](\w+)['\"]|\bos\.getenv\(\s*['\"](\w+)['\"]|"
    r"\benviron\.get\(\s*['\"](\w+)['\"]"
)


# A folder packed or walked (the project, when it is "."), and data sent out: in one piece of code
# that reaches the network, the archive is what leaves (`make_archive(…, '.')` then a POST).
_PACKS = re.compile(
    r"\bmake_archive\s*\(|\btarfile\.open\s*\([^)]*['\"]w|\b(?:ZipFile|PyZipFile)\s*\([^)]*"
    r"['\"][wax]|\bTarFile\s*\(|\barchiver\s*\(|\btar\.(?:c|create)\s*\(|Archive::(?:Tar|Zip)|"
    r"Zip::(?:File|OutputStream)|\bZipArchive\b|TarWriter|\bos\.walk\s*\(|\bwalkSync\s*\(|"
    r"\bFind\.find\s*\(|File::Find|readdirSync\s*\([^)]*recursive|\brglob\s*\(|glob\s*\(\s*['\"]\*\*"
)
_SENDS = re.compile(
    r"\.(?:post|put|patch)\s*\(|\bdata\s*=|\bfiles\s*=|\bstorbinary\b|\bmethod\s*[:=]\s*['\"]"
    r"(?:POST|PUT)|['\"](?:POST|PUT)['\"]|\bupload\w*\s*\(|\.send(?:all|file)?\s*\(|Net::FTP|"
    r"\bput_object\b|\bbody\s*:"
)


# Perl ``pack("H*", "726d…")`` and Ruby ``["726d…"].pack("H*")``: hex spelled out as a string.
_HEX_PACK = re.compile(
    r"""\bpack\s*\(\s*['"]H\*['"]\s*,\s*['"]([0-9a-fA-F]{2,4096})['"]\s*\)|"""
    r"""\[\s*['"]([0-9a-fA-F]{2,4096})['"]\s*\]\s*\.pack\s*\(\s*['"]H\*['"]\s*\)"""
)


def _unpacked(m: re.Match[str]) -> str:
    digits = m.group(1) or m.group(2)
    if len(digits) % 2:
        return m.group(0)
    text = bytes.fromhex(digits).decode("utf-8", "replace")
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# A string literal joined to an expression that is not a literal (js/python +, perl/php ., lua ..)
_JOINED_WITH_CODE = re.compile(r"\s*(?:\+|\.\.?)\s*(?!['\"\s])")
# Shell-quoting calls around a literal: the literal is what reaches the command
# and path functions of a literal (File.expand_path("~/x") is the file ~/x)
_QUOTED_LITERAL = re.compile(
    r"\b(?:escapeshellarg|escapeshellcmd|shlex\.quote|pipes\.quote|quotemeta|"
    r"Shellwords\.escape|shellescape|File\.expand_path|File\.absolute_path|"
    r"os\.path\.expanduser|path\.resolve|realpath)\s*\(\s*(\"[^\"\\\n]*\"|'[^'\\\n]*')\s*\)"
)


def normalize_code(code: str) -> str:
    """Home-folder expressions as the string ``"~"``, and ``"a" + "b"`` folded (a few rounds);
    hex packed into a string (Perl/Ruby ``pack("H*", …)``) as the string it spells."""
    if "pack" in code and "H*" in code:
        code = _HEX_PACK.sub(_unpacked, code)
    if _HOME_INTERPOLATED.search(code) is not None:
        code = _DQ_STR.sub(lambda m: _HOME_INTERPOLATED.sub("~", m.group(0)), code)
    out = _HOME_EXPR.sub('"~"', code) if _HOME_EXPR.search(code) is not None else code
    if "(" in out:
        out = _QUOTED_LITERAL.sub(lambda m: m.group(1), out)
    if out is code and _CONST.search(code) is None and "paste" not in code:
        return code
    for _ in range(4):
        folded = _CONCAT.sub(lambda m: '"' + m.group(2) + m.group(4) + '"', out)
        folded = _AWK_CONCAT.sub(lambda m: '"' + m.group(1) + m.group(2) + '"', folded)
        folded = _R_PASTE.sub(
            lambda m: '"' + m.group(2) + ("" if m.group(1) else " ") + m.group(3) + '"', folded
        )
        for m in _CONST.finditer(folded):
            # const h = "~"; rmSync(h) -> rmSync("~"): a name bound once to a literal
            name = re.escape(m.group(1))
            use = re.compile(r"(?<=[(,\[\s+.])" + name + r"(?=\s*[,)\]+.;])")
            later = use.sub('"' + m.group(2) + '"', folded[m.end() :])
            if m.group(1).startswith("$"):  # "rm -rf $h": perl and php interpolate the name
                inside = re.compile(name + r"(?!\w)")
                value = m.group(2)
                later = _DQ_STR.sub(
                    lambda q, p=inside, v=value: p.sub(lambda _: v, q.group(0)),  # type: ignore[misc]
                    later,
                )
            folded = folded[: m.end()] + later
        if folded == out:
            break
        out = folded
    return out


@dataclass(slots=True)
class CodeFacts:
    """What a piece of interpreter code does, as far as its text shows."""

    shell: list[str] = field(default_factory=list)  # literal commands it runs
    written: list[tuple[str, str]] = field(default_factory=list)  # (path, literal text)
    delete_trees: list[str] = field(default_factory=list)
    delete_files: list[str] = field(default_factory=list)
    downloads: bool = False
    network: bool = False
    executes: bool = False  # runs code or commands it did not spell out
    decodes: bool = False
    socket: bool = False
    listens: bool = False
    wires_shell: bool = False
    fork_loop: bool = False
    writes: list[tuple[str, bool]] = field(default_factory=list)  # (path, appends)
    sends_env: bool = False  # the whole environment used as data
    env_names: list[str] = field(default_factory=list)  # environment variables read by name
    runs_files: list[str] = field(default_factory=list)  # files it runs as code
    packs_and_sends: bool = False  # archives or walks a folder, and sends data out


def _literal(token: str) -> str:
    body = token[1:-1]
    if "\\" in body:
        body = re.sub(r"\\(.)", r"\1", body)
    return body


def _strings(group: str) -> list[str]:
    return [_literal(m.group(0)) for m in _STR_RE.finditer(group)]


def string_literals(code: str) -> list[str]:
    """The quoted string literals of ``code`` (escapes undone)."""
    return [_literal(m.group(0)) for m in _STR_RE.finditer(code)]


# Perl's quote operators as plain strings: qq{rm -rf $ENV{HOME}} -> "rm -rf $ENV{HOME}".
_PERL_QUOTE = re.compile(
    r"\bqq?\s*(?:\{((?:[^{}\n]|\{[^{}\n]*\})*)\}|\(((?:[^()\n]|\([^()\n]*\))*)\))"
)


def analyze(code: str, lang: str) -> CodeFacts:
    """Facts about ``code`` written in ``lang`` (python, perl, ruby, node, php, lua, awk, …)."""
    facts = CodeFacts()
    if lang == "perl" and "q" in code:
        code = _PERL_QUOTE.sub(
            lambda m: '"' + (m.group(1) or m.group(2) or "").replace('"', '\\"') + '"', code
        )
    code = normalize_code(code)
    for m in _SHELL_CALL.finditer(code):
        strings = _strings(m.group(1))
        if not strings:
            continue
        name = code[m.start() : m.start(1)]
        if re.search(r"exec[lv]p?e?\b|spawn[lv]p?e?\b", name) and len(strings) > 1:
            # os.execl(path, argv0, args...): argv0 is a name, not an argument.
            strings = [strings[0], *strings[2:]]
        # a list, or several strings (perl/ruby system("rm", "-rf", x)): an argument vector
        if "[" in m.group(1) or len(strings) > 1 or re.search(r"exec[lv]|spawn[lv]", name):
            facts.shell.append(" ".join(_quote(s) for s in strings))
        elif _JOINED_WITH_CODE.match(code, m.end()):
            # "rm -rf " + p, "rm -rf " . $dir: the rest of the command is computed
            facts.shell.append(strings[0] + ' "$COMPUTED"')
        else:
            facts.shell.append(strings[0])
    for m in _BACKTICK.finditer(code):
        if lang in ("perl", "ruby", "php", "julia"):
            facts.shell.append(next(g for g in m.groups() if g is not None))
    if lang == "tcl":  # exec rm -rf $env(HOME): Tcl's exec runs the words that follow
        for m in _TCL_EXEC.finditer(code):
            facts.shell.append(_TCL_ENV.sub(r"$\1", m.group(1)).strip())
    if lang == "awk":
        for m in _AWK_PIPE.finditer(code):
            token = m.group(1) or m.group(2)
            facts.shell.append(_literal(token))
    for m in _SYSTEM2.finditer(code):
        argv = [_literal(m.group(1)), *_strings(m.group(2))]
        facts.shell.append(" ".join(_quote(x) for x in argv))
    facts.delete_trees = [
        _literal(next(g for g in m.groups() if g is not None))
        if next(g for g in m.groups() if g is not None)[:1] in "'\""
        else _TCL_ENV.sub("~", next(g for g in m.groups() if g is not None))
        for m in _DELETE_TREE.finditer(code)
    ]
    if '"~' in code and _LISTS_HOME.search(code) and _DELETES_NAME.search(code):
        facts.delete_trees.append("~/*")  # each entry of home, deleted by name
    facts.delete_files = [_literal(m.group(1)) for m in _DELETE_FILE.finditer(code)]
    facts.downloads = bool(_DOWNLOAD.search(code))
    facts.socket = bool(_SOCKET.search(code))
    facts.network = facts.downloads or facts.socket or bool(_URL.search(code))
    # eval(…) and its kind, or a shell call running decoded text: system(decode_base64(…))
    facts.executes = bool(_EXEC_DATA.search(code) or _RUNS_DECODED.search(code))
    facts.decodes = bool(_DECODE.search(code))
    facts.listens = facts.socket and bool(_LISTEN.search(code))
    facts.wires_shell = bool(_SHELL_WIRE.search(code))
    facts.fork_loop = bool(_FORK_LOOP.search(code))
    for m in _WRITE_FILE.finditer(code):
        facts.writes.append((_literal(m.group(3)), bool(m.group(1) or m.group(2))))
    for m in _PERL_OPEN_WRITE.finditer(code):
        if m.group(2):
            facts.writes.append((_literal(m.group(2)), m.group(1) == ">>"))
        elif m.group(4):
            facts.writes.append((m.group(4), m.group(3) == ">>"))
        elif m.group(5):
            facts.writes.append((_literal(m.group(5)), m.group(6) == "a"))
        elif m.group(7):
            facts.writes.append((_literal(m.group(7)), False))
    for m in _RUNS_FILE.finditer(code):
        facts.runs_files.append(_literal(next(g for g in m.groups() if g is not None)))
    facts.sends_env = bool(_ENV_WHOLE.search(code))
    facts.packs_and_sends = facts.network and bool(_PACKS.search(code) and _SENDS.search(code))
    facts.env_names = [next(g for g in m.groups() if g) for m in _ENV_NAMED.finditer(code)]
    return facts


def _quote(s: str) -> str:
    if s and all(c.isalnum() or c in "-_./=:,@%+" for c in s):
        return s
    return "'" + s.replace("'", "'\\''") + "'"
