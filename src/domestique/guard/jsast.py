"""What a JavaScript one-liner (``node -e``, ``deno eval``, ``bun -e``) does, read with a parser.

tree-sitter-javascript (the grammar family the guard already uses for bash) gives the syntax
tree; this module follows the values the code computes from known parts, as ``pyast`` does for
Python: ``require('os').homedir()``, ``process.env.HOME``, ``path.join``/``path.resolve``,
``+`` and template strings, ``const`` names bound earlier. From the calls it reports deletes
(``fs.rmSync``, ``fs.rm``, ``rimraf``), files written and read, commands run
(``child_process.exec*`` with a string, ``execFile``/``spawn`` with an argument array) and the
whole ``process.env`` used as data. Home is ``~``, another variable ``$NAME``; an unknown part
makes the value unknown (None), never guessed.

Text that does not parse cleanly returns None: the caller keeps the pattern facts.
"""

from __future__ import annotations

import posixpath
from typing import Any

from domestique.guard.pyast import PyFacts, quote_word

_PARSER: Any = None

_DELETE_TREE = frozenset(
    {"fs.rmSync", "fs.rm", "fs.promises.rm", "fs/promises.rm", "fs-extra.removeSync",
     "fs-extra.remove", "rimraf", "rimraf.sync", "rimraf.rimrafSync", "fs.rmdirSync",
     "fs.rmdir", "fs.promises.rmdir", "Deno.remove", "fs-extra.emptyDirSync"}
)  # fmt: skip
_DELETE_FILE = frozenset({"fs.unlinkSync", "fs.unlink", "fs.promises.unlink", "fs/promises.unlink"})
_WRITE = frozenset(
    {"fs.writeFileSync", "fs.writeFile", "fs.promises.writeFile", "fs/promises.writeFile",
     "fs.createWriteStream", "fs-extra.outputFileSync", "fs-extra.writeJsonSync",
     "Deno.writeTextFile", "Deno.writeFile", "Bun.write", "fs.copyFileSync", "fs.renameSync"}
)  # fmt: skip
_APPEND = frozenset({"fs.appendFileSync", "fs.appendFile", "fs.promises.appendFile"})
_READ = frozenset(
    {"fs.readFileSync", "fs.readFile", "fs.promises.readFile", "fs/promises.readFile",
     "fs.createReadStream", "Deno.readTextFile", "Deno.readFile", "Bun.file"}
)  # fmt: skip
_SHELL = frozenset({"child_process.exec", "child_process.execSync", "Bun.spawnSync", "Bun.$"})
_ARGV = frozenset(
    {"child_process.execFile", "child_process.execFileSync", "child_process.spawn",
     "child_process.spawnSync"}
)  # fmt: skip
_NETWORK = ("fetch", "http.", "https.", "axios", "net.", "node-fetch", "undici", "tls.",
            "dgram.", "got", "ws")  # fmt: skip
_JOIN = frozenset({"path.join", "path.resolve", "path.posix.join", "path.normalize"})


def _parser() -> Any:
    global _PARSER  # noqa: PLW0603 - built on first use: the grammar loads only for node code
    if _PARSER is None:
        import tree_sitter_javascript
        from tree_sitter import Language, Parser

        _PARSER = Parser(Language(tree_sitter_javascript.language()))
    return _PARSER


def analyze_js(code: str) -> PyFacts | None:
    """Facts about JavaScript ``code``; None when it does not parse cleanly."""
    try:
        tree = _parser().parse(code.encode("utf-8", "surrogatepass"))
    except (ValueError, UnicodeError):
        return None
    if tree.root_node.has_error:
        return None
    reader = _Reader()
    reader.walk(tree.root_node, 0)
    return reader.facts


def _text(node: Any) -> str:
    return str(node.text.decode("utf-8", "replace"))


class _Reader:
    def __init__(self) -> None:
        self.facts = PyFacts()
        self.aliases: dict[str, str] = {}  # local name -> module or module.member
        self.values: dict[str, str] = {}

    def walk(self, node: Any, depth: int) -> None:
        if depth > 200:
            return
        t = node.type
        if t == "variable_declarator":
            self._declare(node)
        elif t == "import_statement":
            self._import(node)
        elif t == "call_expression":
            self._call(node)
        elif t == "member_expression" and _text(node) == "process.env":
            parent = node.parent
            used_whole = parent is None or not (
                (parent.type in ("member_expression", "subscript_expression")
                 and parent.child_by_field_name("object") == node)
                or (parent.type == "pair" and _text(parent).startswith("env"))
                or parent.type == "spread_element"
            )  # fmt: skip
            if used_whole:
                self.facts.sends_env = True
        for child in node.named_children:
            self.walk(child, depth + 1)

    # ------------------------------------------------------------------ names and values
    def _declare(self, node: Any) -> None:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name is None or value is None:
            return
        module = self._required(value)
        if name.type == "identifier":
            ident = _text(name)
            if module is not None:
                self.aliases[ident] = module
                return
            dotted = self.dotted(value)
            if dotted and "." in dotted:
                self.aliases[ident] = dotted  # const rm = fs.rmSync
            v = self.value(value)
            if v is not None:
                self.values[ident] = v
            else:
                self.values.pop(ident, None)
        elif name.type == "object_pattern" and module is not None:
            for prop in name.named_children:  # const {rmSync, homedir: h} = require('fs')
                if prop.type == "shorthand_property_identifier_pattern":
                    self.aliases[_text(prop)] = f"{module}.{_text(prop)}"
                elif prop.type == "pair_pattern":
                    key, val = prop.child_by_field_name("key"), prop.child_by_field_name("value")
                    if key is not None and val is not None:
                        self.aliases[_text(val)] = f"{module}.{_text(key)}"

    def _import(self, node: Any) -> None:
        source = node.child_by_field_name("source")
        if source is None:
            return
        module = _module(_string(source) or "")
        for clause in node.named_children:
            if clause.type != "import_clause":
                continue
            for part in clause.named_children:
                if part.type == "identifier":
                    self.aliases[_text(part)] = module
                elif part.type == "namespace_import":
                    for ident in part.named_children:
                        self.aliases[_text(ident)] = module
                elif part.type == "named_imports":
                    for spec in part.named_children:
                        name = spec.child_by_field_name("name")
                        alias = spec.child_by_field_name("alias") or name
                        if name is not None and alias is not None:
                            self.aliases[_text(alias)] = f"{module}.{_text(name)}"

    def _required(self, node: Any) -> str | None:
        """``require('fs')`` / ``await import('fs')`` -> ``fs``."""
        if node.type == "await_expression" and node.named_children:
            node = node.named_children[0]
        if node.type != "call_expression":
            return None
        func = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        if func is None or args is None or _text(func) not in ("require", "import"):
            return None
        first = args.named_children[:1]
        s = _string(first[0]) if first else None
        return _module(s) if s is not None else None

    def dotted(self, node: Any) -> str:
        t = node.type
        if t == "identifier":
            name = _text(node)
            return self.aliases.get(name, name)
        if t == "member_expression":
            obj = node.child_by_field_name("object")
            prop = node.child_by_field_name("property")
            if obj is None or prop is None:
                return ""
            base = self.dotted(obj)
            return f"{base}.{_text(prop)}" if base else ""
        if t == "call_expression":
            return self._required(node) or ""
        if t == "parenthesized_expression" and node.named_children:
            return self.dotted(node.named_children[0])
        return ""

    def value(self, node: Any) -> str | None:
        t = node.type
        if t == "string":
            return _string(node)
        if t == "template_string":
            out = []
            for part in node.named_children:
                if part.type == "string_fragment":
                    out.append(_text(part))
                elif part.type == "template_substitution" and part.named_children:
                    v = self.value(part.named_children[0])
                    if v is None:
                        return None
                    out.append(v)
                elif part.type == "escape_sequence":
                    out.append(_text(part)[1:])
            return "".join(out)
        if t == "identifier":
            return self.values.get(_text(node))
        if t == "parenthesized_expression" and node.named_children:
            return self.value(node.named_children[0])
        if t == "binary_expression":
            op = node.child_by_field_name("operator")
            left = node.child_by_field_name("left")
            right = node.child_by_field_name("right")
            if op is None or left is None or right is None or _text(op) != "+":
                return None
            a, b = self.value(left), self.value(right)
            return a + b if a is not None and b is not None else None
        if t in ("member_expression", "subscript_expression"):
            return self._env_value(node)
        if t == "call_expression":
            return self._call_value(node)
        return None

    def _env_value(self, node: Any) -> str | None:
        obj = node.child_by_field_name("object")
        if obj is None or self.dotted(obj) != "process.env":
            return None
        if node.type == "member_expression":
            prop = node.child_by_field_name("property")
            key = _text(prop) if prop is not None else None
        else:
            index = node.child_by_field_name("index")
            key = self.value(index) if index is not None else None
        if key is None:
            return None
        self.facts.secret_vars.append(key)
        return "~" if key == "HOME" else f"${key}"

    def _call_value(self, node: Any) -> str | None:
        func = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        if func is None or args is None:
            return None
        name = self.dotted(func)
        values = [self.value(a) for a in args.named_children]
        if name in ("os.homedir", "os.userInfo.homedir"):
            return "~"
        if name in ("process.cwd", "Deno.cwd"):
            return "."
        if name in _JOIN and values and all(v is not None for v in values):
            return posixpath.join(*[v for v in values if v is not None])
        if name in ("String", "path.normalize") and len(values) == 1:
            return values[0]
        return None

    # ------------------------------------------------------------------ calls
    def _call(self, node: Any) -> None:
        func = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        if func is None or args is None:
            return
        name = self.dotted(func)
        if not name:
            return
        items = list(args.named_children)
        facts = self.facts
        if name.startswith(_NETWORK):
            facts.network = True
        first = self.value(items[0]) if items else None
        if name in _DELETE_TREE and first is not None:
            facts.delete_trees.append(first)
        elif name in _DELETE_FILE and first is not None:
            facts.delete_files.append(first)
        elif (name in _WRITE or name in _APPEND) and first is not None:
            target = first
            if name in ("fs.copyFileSync", "fs.renameSync") and len(items) > 1:
                second = self.value(items[1])
                if second is None:
                    return
                target = second
            facts.writes.append((target, name in _APPEND))
        elif name in _READ and first is not None:
            facts.reads.append(first)
        elif name in _SHELL and first is not None:
            facts.commands.append(first)
        elif name in _ARGV and first is not None:
            argv = [first]
            if len(items) > 1 and items[1].type == "array":
                rest = [self.value(e) for e in items[1].named_children]
                if any(v is None for v in rest):
                    return
                argv += [v for v in rest if v is not None]
            facts.commands.append(" ".join(quote_word(a) for a in argv))


def _string(node: Any) -> str | None:
    if node.type != "string":
        return None
    out = []
    for part in node.named_children:
        if part.type == "string_fragment":
            out.append(_text(part))
        elif part.type == "escape_sequence":
            out.append(_text(part)[1:])
    return "".join(out)


def _module(name: str) -> str:
    """``node:fs`` -> ``fs``; ``fs/promises`` stays as written."""
    return name.removeprefix("node:")
