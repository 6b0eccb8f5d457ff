"""What a Python one-liner does, read with the standard library's ``ast`` (no code runs).

The text-pattern reading in ``interp`` sees calls whose arguments are string literals. This module
follows the values Python computes from known parts, so a delete or a command is judged by its
target even when the target is built: ``shutil.rmtree(os.path.expanduser('~'))``,
``Path.home()``, ``os.environ['HOME']``, a name assigned earlier, ``os.path.join``, ``+``, ``/``
and f-strings over those, list-form ``subprocess`` calls, ``os.exec*``. Home is written ``~``;
any other environment variable ``$NAME``; a part that cannot be known makes the whole value
unknown (None), and an unknown value is never guessed.

It also reports what the interpreter-agnostic patterns cannot see: files opened for writing (so a
block device, a shell history or an agent's hook settings written from Python is judged like a
shell redirect), the whole environment turned into data while the code talks to the network, and
secret-named environment variables read by such code.

A syntax error returns None: the caller keeps the text-pattern facts (never fewer findings).
"""

from __future__ import annotations

import ast
import posixpath
import re
from dataclasses import dataclass, field

# Reads of the home folder (a call with no arguments, or an attribute).
_HOME_CALLS = frozenset(
    {"pathlib.Path.home", "Path.home", "os.path.expanduser", "pathlib.Path.expanduser"}
)
# The current user's name: /home/<it> is the home folder.
_USER_CALLS = frozenset({"getpass.getuser", "getuser", "os.getlogin", "getlogin"})
_USER_HOME = re.compile(r"^/(?:home|Users)/\$USER(?=/|$)")


def _home_of_user(path: str) -> str:
    """``/home/$USER/.bashrc`` (a path built from the user's name) as ``~/.bashrc``."""
    return _USER_HOME.sub("~", path, count=1) if "$USER" in path else path


_PASS_THROUGH = frozenset(
    {"os.path.abspath", "os.path.realpath", "os.path.normpath", "os.fspath", "str",
     "os.path.expandvars", "pathlib.Path", "Path", "pathlib.PurePath", "PurePath",
     "pathlib.PosixPath", "PosixPath", "os.fsencode", "os.fsdecode"}
)  # fmt: skip
_JOINS = frozenset(
    {"os.path.join", "posixpath.join", "pathlib.Path", "Path", "PurePath", "pathlib.PurePath",
     "PosixPath", "pathlib.PosixPath"}
)  # fmt: skip
_DELETE_TREE = frozenset({"shutil.rmtree", "rmtree", "distutils.dir_util.remove_tree"})
_DELETE_FILE = frozenset(
    {"os.remove", "os.unlink", "os.rmdir", "os.removedirs", "remove", "unlink", "rmdir"}
)
_SHELL_STRING = frozenset(
    {"os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput", "system",
     "popen", "getoutput", "getstatusoutput", "commands.getoutput"}
)  # fmt: skip
_SUBPROCESS = frozenset(
    {"subprocess.run", "subprocess.call", "subprocess.Popen", "subprocess.check_output",
     "subprocess.check_call", "run", "call", "Popen", "check_output", "check_call",
     "asyncio.create_subprocess_exec", "asyncio.create_subprocess_shell"}
)  # fmt: skip
_EXEC_V = frozenset(
    {"os.execv", "os.execve", "os.execvp", "os.execvpe", "os.spawnv", "os.spawnve",
     "os.spawnvp", "os.spawnvpe", "os.posix_spawn", "os.posix_spawnp"}
)  # fmt: skip
_EXEC_L = frozenset(
    {"os.execl", "os.execle", "os.execlp", "os.execlpe", "os.spawnl", "os.spawnle",
     "os.spawnlp", "os.spawnlpe"}
)  # fmt: skip
_MOVES = frozenset(
    {"shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.move", "os.rename", "os.replace",
     "shutil.copytree", "os.symlink", "os.link"}
)  # fmt: skip
_NETWORK_ROOTS = (
    "urllib", "requests", "httpx", "http.client", "socket", "urllib3", "aiohttp", "smtplib",
    "ftplib", "telnetlib", "paramiko", "websocket", "websockets", "xmlrpc", "pycurl",
)  # fmt: skip
# Turning the whole environment into data: dict(os.environ), json.dumps(os.environ), ...
_ENV_DUMPERS = frozenset(
    {"dict", "str", "repr", "list", "json.dumps", "json.dump", "pickle.dumps", "print",
     "pprint.pformat", "bytes", "sorted", "tuple", "set"}
)  # fmt: skip
_ENV_METHODS = frozenset({"copy", "items", "keys", "values", "__repr__", "__str__"})


@dataclass(slots=True)
class PyFacts:
    """What the code does, as far as its values can be known."""

    commands: list[str] = field(default_factory=list)  # shell command lines it runs
    delete_trees: list[str] = field(default_factory=list)
    delete_files: list[str] = field(default_factory=list)
    writes: list[tuple[str, bool]] = field(default_factory=list)  # (path, appends)
    reads: list[str] = field(default_factory=list)  # files it opens for reading
    network: bool = False
    sends_env: bool = False  # the whole environment becomes data
    secret_vars: list[str] = field(default_factory=list)  # environment variables it reads
    urls: list[str] = field(default_factory=list)
    runs_files: list[str] = field(default_factory=list)  # exec(open(F).read()), runpy.run_path
    runs_fetched: bool = False  # os.system(urlopen(U).read()), exec(requests.get(U).text)
    written: list[tuple[str, str]] = field(default_factory=list)  # (path, literal text written)


def analyze_python(code: str) -> PyFacts | None:
    """Facts about ``code``; None when it does not parse (the caller keeps other facts)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    reader = _Reader()
    try:
        reader.visit(tree)
    except RecursionError:
        return None
    return reader.facts


def quote_word(s: str) -> str:
    """``s`` as one shell word (quoted unless it is plainly safe)."""
    if s and all(c.isalnum() or c in "-_./=:,@%+~" for c in s):
        return s
    return "'" + s.replace("'", "'\\''") + "'"


class _Reader(ast.NodeVisitor):
    def __init__(self) -> None:
        self.facts = PyFacts()
        self.aliases: dict[str, str] = {}  # local name -> dotted module or object name
        self.values: dict[str, str] = {}  # local name -> known string value
        self.lists: dict[str, list[str]] = {}  # local name -> known list of strings
        self.walked: dict[str, str] = {}  # os.walk's loop names -> the folder walked
        self.multi: dict[str, list[str]] = {}  # a loop name over several known strings
        self.depth = 0  # exec() of known code read inside exec() …: bounded

    # ------------------------------------------------------------------ names and values
    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            self.aliases[a.asname or a.name.split(".")[0]] = (
                a.name if a.asname else a.name.split(".")[0]
            )
            if a.name.startswith(_NETWORK_ROOTS):
                self.facts.network = True

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if module.startswith(_NETWORK_ROOTS):
            self.facts.network = True
        for a in node.names:
            self.aliases[a.asname or a.name] = f"{module}.{a.name}" if module else a.name

    def dotted(self, node: ast.AST) -> str:
        """``o.path.join`` with ``import os as o`` -> ``os.path.join``; '' when not a name."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self.dotted(node.value)
            return f"{base}.{node.attr}" if base else ""
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("__import__", "import_module")
            and node.args
        ):
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                return arg.value
        if isinstance(node, ast.Call):
            inner = self.dotted(node.func)
            if inner in ("getattr", "builtins.getattr") and len(node.args) >= 2:
                base, attr = self.dotted(node.args[0]), self.value(node.args[1])
                # getattr(os, 'sys' + 'tem') is os.system once the name is known
                return f"{base}.{attr}" if base and attr and attr.isidentifier() else ""
            if inner in ("importlib.import_module",) and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    return arg.value
        return ""

    def _environ(self, node: ast.AST) -> bool:
        return self.dotted(node) in ("os.environ", "environ", "os.environb")

    def value(self, node: ast.AST | None) -> str | None:
        """The string ``node`` evaluates to, when every part is known."""
        if node is None:
            return None
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                return node.value
            if isinstance(node.value, bytes):
                return node.value.decode("utf-8", "replace")
            return None
        if isinstance(node, ast.Name):
            return self.values.get(node.id)
        if isinstance(node, ast.JoinedStr):
            out = []
            for part in node.values:
                if isinstance(part, ast.FormattedValue):
                    v = self.value(part.value)
                else:
                    v = self.value(part)
                if v is None:
                    return None
                out.append(v)
            return "".join(out)
        if isinstance(node, ast.BinOp):
            left, right = self.value(node.left), self.value(node.right)
            if left is None or right is None:
                return None
            if isinstance(node.op, ast.Add):
                return _home_of_user(left + right)
            if isinstance(node.op, ast.Div):
                return posixpath.join(left, right)
            return None
        if isinstance(node, ast.Subscript) and self._environ(node.value):
            key = self.value(node.slice)
            return _env_value(key) if key is not None else None
        if isinstance(node, ast.Call):
            return self._call_value(node)
        if isinstance(node, ast.Attribute) and node.attr in ("parent",):
            inner = self.value(node.value)
            return posixpath.dirname(inner) if inner else None
        return None

    def _call_value(self, node: ast.Call) -> str | None:
        name = self.dotted(node.func)
        args = node.args
        if name in ("os.getenv", "os.environ.get", "environ.get", "getenv") and args:
            key = self.value(args[0])
            return _env_value(key) if key is not None else None
        if name in ("os.getcwd", "pathlib.Path.cwd", "Path.cwd", "os.getcwdb"):
            return "."
        if name in _HOME_CALLS and not args:
            return "~"
        if name in _USER_CALLS and not args:
            return "$USER"  # '/home/' + getuser() + '/.bashrc' is read as home (see value)
        if name in ("os.path.expanduser",) and args:
            return self.value(args[0])
        if name in _JOINS and len(args) > 1:
            parts = [self.value(a) for a in args]
            if any(p is None for p in parts):
                return None
            return posixpath.join(*[p for p in parts if p is not None])
        if name in _PASS_THROUGH and len(args) == 1:
            return self.value(args[0])
        if name in _DECODERS and len(args) == 1:
            return _decoded(name, self.value(args[0]))  # the command a decoded literal spells
        if name in ("codecs.decode", "codecs.encode") and len(args) == 2:
            return _codec(self.value(args[0]), self.value(args[1]))
        if isinstance(node.func, ast.Attribute):
            method = node.func.attr
            receiver = node.func.value
            if method == "decode" and isinstance(receiver, ast.Call):
                return self.value(receiver)  # b64decode(...).decode()
            if method in ("expanduser", "resolve", "absolute", "strip", "rstrip") and not args:
                return self.value(receiver)
            if method in ("joinpath",):
                parts = [self.value(receiver), *(self.value(a) for a in args)]
                if any(p is None for p in parts):
                    return None
                return posixpath.join(*[p for p in parts if p is not None])
            if method == "home" and not args and self.dotted(receiver).endswith("Path"):
                return "~"
            if method in ("format",) and isinstance(receiver, ast.Constant):
                return None
        return None

    def strings(self, node: ast.AST) -> list[str] | None:
        """A list or tuple of known strings (a subprocess argv)."""
        if isinstance(node, (ast.List, ast.Tuple)):
            out = [self.value(e) for e in node.elts]
            return None if any(v is None for v in out) else [v for v in out if v is not None]
        if isinstance(node, ast.Name) and node.id in self.lists:
            return self.lists[node.id]
        return None

    # ------------------------------------------------------------------ statements
    def _loop_target(self, target: ast.AST, iterable: ast.AST) -> None:
        """``for f in os.listdir(home)``: ``f`` stands for every entry (``*``). ``for r, _, fs
        in os.walk(home)`` (then ``for f in fs``): ``r`` is home and ``f`` every entry, and a
        delete of ``join(r, f)`` is a delete of the whole tree (``self.walked``)."""
        if isinstance(target, ast.Tuple) and isinstance(iterable, ast.Call):
            root = self.value(iterable.args[0]) if iterable.args else None
            names = [e.id if isinstance(e, ast.Name) else "" for e in target.elts]
            if self.dotted(iterable.func) in ("os.walk", "walk") and root and len(names) == 3:
                self.values[names[0]] = root
                self.walked[names[1]] = self.walked[names[2]] = root
                self.walked[names[0]] = root
            return
        if isinstance(iterable, ast.Name) and iterable.id in self.walked:
            if isinstance(target, ast.Name):
                self.values[target.id] = "*"
            return
        if not isinstance(target, ast.Name):
            return
        self.multi.pop(target.id, None)
        item: str | None = None
        if isinstance(iterable, (ast.List, ast.Tuple, ast.Set)):
            items = [self.value(e) for e in iterable.elts]
            known = [v for v in items if v is not None]
            if len(items) == 1:
                item = known[0] if known else None  # for d in (home,): d is home
            elif known and len(known) == len(items):
                self.multi[target.id] = known  # for p in (home, "/"): each, for deletes
                return
        if isinstance(iterable, ast.Call):
            name = self.dotted(iterable.func)
            arg = iterable.args[0] if iterable.args else None
            if name in ("os.listdir", "os.scandir", "listdir", "scandir"):
                item = "*"  # names only: joined with the folder by the code
            elif name in ("glob.glob", "glob.iglob", "glob") and arg is not None:
                item = self.value(arg)
            elif isinstance(iterable.func, ast.Attribute) and iterable.func.attr in (
                "iterdir", "glob", "rglob",
            ):  # fmt: skip
                folder = self.value(iterable.func.value)
                item = posixpath.join(folder, "*") if folder is not None else None
        if item is not None:
            self.values[target.id] = item
        else:
            self.values.pop(target.id, None)

    def visit_For(self, node: ast.For) -> None:
        self._loop_target(node.target, node.iter)
        self.generic_visit(node)

    def visit_comprehension(self, node: ast.comprehension) -> None:
        self._loop_target(node.target, node.iter)
        self.generic_visit(node)

    def visit_ListComp(self, node: ast.ListComp) -> None:
        for gen in node.generators:  # the loop variables first, then the element that uses them
            self.visit(gen)
        self.visit(node.elt)

    visit_SetComp = visit_ListComp  # type: ignore[assignment]
    visit_GeneratorExp = visit_ListComp  # type: ignore[assignment]

    def visit_Assign(self, node: ast.Assign) -> None:
        self.generic_visit(node)
        v = self.value(node.value)
        items = self.strings(node.value)
        for target in node.targets:
            if isinstance(target, ast.Name):
                if v is not None:
                    self.values[target.id] = v
                else:
                    self.values.pop(target.id, None)
                if items is not None:
                    self.lists[target.id] = items
            name = self.dotted(node.value)
            if isinstance(target, ast.Name) and name and "." in name:
                self.aliases[target.id] = name  # r = shutil.rmtree

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if self._environ(node.value) and node.attr in _ENV_METHODS:
            self.facts.sends_env = True
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if self._environ(node.value):
            key = self.value(node.slice)
            if key:
                self.facts.secret_vars.append(key)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and node.value.startswith(("http://", "https://", "ftp://")):
            self.facts.urls.append(node.value)

    def visit_Call(self, node: ast.Call) -> None:
        name = self.dotted(node.func)
        args = node.args
        facts = self.facts
        if name.startswith(_NETWORK_ROOTS) or name.endswith((".urlopen", ".urlretrieve")):
            facts.network = True
        if name in ("keyring.get_password", "keyring.get_credential"):
            # the desktop keyring (Secret Service / Keychain): a credential store read
            facts.reads.append("~/.local/share/keyrings/login.keyring")
        if name in ("os.getenv", "os.environ.get", "environ.get", "getenv") and args:
            key = self.value(args[0])
            if key:
                facts.secret_vars.append(key)
        if name in ("keyring.get_password", "keyring.get_credential"):
            # the desktop keyring (Secret Service / Keychain): a credential store read
            facts.reads.append("~/.local/share/keyrings/login.keyring")
        if name in _ENV_DUMPERS and any(self._environ(a) for a in args):
            facts.sends_env = True
        if name in ("exec", "eval") and args and self.depth < 3:
            code = self.value(args[0])
            if code is not None:  # exec(b64decode('…')), exec(codecs.decode('…', 'rot13'))
                try:
                    tree: ast.Module | None = ast.parse(code)
                except (SyntaxError, ValueError):
                    tree = None
                if tree is not None:
                    self.depth += 1
                    self.visit(tree)
                    self.depth -= 1
        if name in ("exec", "eval", "runpy.run_path", "runpy.run_module") and args:
            source = args[0]
            if (
                isinstance(source, ast.Call)
                and isinstance(source.func, ast.Attribute)
                and source.func.attr in ("read", "read_text", "read_bytes")
            ):  # exec(open(F).read()), exec(Path(F).read_text())
                inner = source.func.value
                opened = inner.args[0] if isinstance(inner, ast.Call) and inner.args else inner
                self._path(opened, facts.runs_files)
            elif name == "runpy.run_path":
                self._path(source, facts.runs_files)
        if (
            args
            and (name in _SHELL_STRING or name in _SUBPROCESS or name in ("exec", "eval"))
            and self.value(args[0]) is None
            and self._fetches(args[0])
        ):
            facts.runs_fetched = True
        if name in _DELETE_TREE and args:
            self._path(args[0], facts.delete_trees)
        elif name in _DELETE_FILE and args:
            self._path(args[0], facts.delete_files)
            root = next((self.walked[n.id] for n in ast.walk(args[0])
                         if isinstance(n, ast.Name) and n.id in self.walked), None)  # fmt: skip
            if root is not None and root.startswith(("~", "/", "$")):
                # every file under a walked folder outside the project (a walk of the project
                # deleting its build files stays unknown, as before)
                facts.delete_trees.append(root)
        elif name in _SHELL_STRING and args:
            cmd = self.value(args[0])
            if cmd is not None:
                facts.commands.append(cmd)
        elif name in _SUBPROCESS and args:
            self._subprocess(node, name)
        elif name in _EXEC_V and len(args) >= 2:
            argv = self.strings(args[1])
            if argv:
                facts.commands.append(" ".join(quote_word(a) for a in argv))
        elif name in _EXEC_L and len(args) >= 2:
            parts = [self.value(a) for a in args[1:]]
            known = [p for p in parts if p is not None]
            if known and len(known) == len(parts):
                facts.commands.append(" ".join(quote_word(a) for a in known))
        elif name in ("os.truncate", "truncate") and args:
            path = self.value(args[0])
            if path is not None:
                facts.writes.append((path, False))  # emptied: judged like `: > path`
        elif name in ("open", "io.open", "os.open", "codecs.open") and args:
            self._open(node)
        elif name in _MOVES and len(args) >= 2:
            dst = self.value(args[1])
            if dst is not None:
                facts.writes.append((dst, False))
            if name in ("shutil.move", "os.rename", "os.replace"):
                self._path(args[0], facts.delete_files)
        elif isinstance(node.func, ast.Attribute):
            self._method(node)
        self.generic_visit(node)

    def _fetches(self, node: ast.AST) -> bool:
        """Does ``node`` call the network (what it evaluates to is fetched)?"""
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call):
                name = self.dotted(sub.func)
                if name.startswith(_NETWORK_ROOTS) or name.endswith((".urlopen", ".get", ".post")):
                    if name.endswith((".get", ".post")) and not name.startswith(_NETWORK_ROOTS):
                        continue  # dict.get, os.environ.get
                    return True
        return False

    def _path(self, node: ast.AST, into: list[str]) -> None:
        if isinstance(node, ast.Name) and node.id in self.multi:
            into.extend(self.multi[node.id])
            return
        v = self.value(node)
        if v is not None:
            into.append(v)

    def _subprocess(self, node: ast.Call, name: str) -> None:
        first = node.args[0]
        shell = name.endswith("_shell") or any(
            k.arg == "shell" and isinstance(k.value, ast.Constant) and k.value.value is True
            for k in node.keywords
        )
        if name.endswith("create_subprocess_exec"):
            parts = [self.value(a) for a in node.args]
            if all(p is not None for p in parts):
                self.facts.commands.append(" ".join(quote_word(p) for p in parts if p is not None))
            return
        argv = self.strings(first)
        if argv is not None:
            self.facts.commands.append(
                " ".join(argv) if shell else " ".join(quote_word(a) for a in argv)
            )
            return
        text = self.value(first)
        if text is not None:
            self.facts.commands.append(text if shell else quote_word(text))

    def _open(self, node: ast.Call) -> None:
        path = self.value(node.args[0])
        mode = "r"
        if len(node.args) > 1:
            mode = self.value(node.args[1]) or "r"
        for k in node.keywords:
            if k.arg == "mode":
                mode = self.value(k.value) or "r"
        if path is None:
            return
        if isinstance(mode, str) and any(c in mode for c in "wax+"):
            self.facts.writes.append((path, "a" in mode))
        else:
            self.facts.reads.append(path)

    def _method(self, node: ast.Call) -> None:
        func = node.func
        assert isinstance(func, ast.Attribute)
        method = func.attr
        receiver = func.value
        facts = self.facts
        if method in ("rmtree",):
            return
        if method in ("unlink", "rmdir") and not node.args:
            self._path(receiver, facts.delete_files)
        elif method in ("write_text", "write_bytes", "touch", "symlink_to", "hardlink_to"):
            path = self.value(receiver)
            if path is not None:
                facts.writes.append((path, False))
                text = self.value(node.args[0]) if method == "write_text" and node.args else None
                if text is not None:
                    facts.written.append((path, text))
        elif method == "write" and node.args and isinstance(receiver, ast.Call):
            # open(P, "a").write("…"): the text is judged as written to P
            opened = receiver.args[0] if receiver.args else None
            path = self.value(opened) if opened is not None else None
            text = self.value(node.args[0])
            if path is not None and text is not None and self.dotted(receiver.func) == "open":
                facts.written.append((path, text))
        elif method in ("read_text", "read_bytes"):
            self._path(receiver, facts.reads)
        elif method == "open":
            path = self.value(receiver)
            mode = self.value(node.args[0]) if node.args else "r"
            if path is not None:
                if mode and any(c in mode for c in "wax+"):
                    facts.writes.append((path, "a" in mode))
                else:
                    facts.reads.append(path)
        elif method in ("rename", "replace") and node.args:
            self._path(receiver, facts.delete_files)
            dst = self.value(node.args[0])
            if dst is not None:
                facts.writes.append((dst, False))


_DECODERS = frozenset(
    {"base64.b64decode", "b64decode", "base64.standard_b64decode", "base64.urlsafe_b64decode",
     "base64.decodebytes", "bytes.fromhex", "binascii.unhexlify", "codecs.decode"}
)  # fmt: skip


def _decoded(name: str, text: str | None) -> str | None:
    """``text`` decoded as ``name`` does (None when it does not decode to UTF-8 text)."""
    if text is None or len(text) > 65536:
        return None
    import base64
    import binascii

    try:
        if name.endswith(("fromhex", "unhexlify")):
            raw = bytes.fromhex(text)
        elif name == "codecs.decode":
            return None  # the codec is the second argument
        elif name.endswith("urlsafe_b64decode"):
            raw = base64.urlsafe_b64decode(text)
        else:
            raw = base64.b64decode(text)
        return raw.decode("utf-8")
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return None


def _codec(text: str | None, codec: str | None) -> str | None:
    """``codecs.decode(text, codec)`` for the text codecs a one-liner hides code with."""
    if text is None or codec is None or len(text) > 65536:
        return None
    import codecs

    name = codec.lower().replace("-", "_")
    if name in ("rot13", "rot_13"):
        return codecs.decode(text, "rot_13")
    if name in ("base64", "base_64", "hex", "hex_codec", "base64_codec"):
        return _decoded("bytes.fromhex" if name.startswith("hex") else "b64decode", text)
    return None


def _env_value(key: str) -> str:
    return "~" if key == "HOME" else f"${key}"
