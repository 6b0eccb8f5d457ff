"""The house rules of docs/architecture.md, checked on the source itself.

A module over 900 lines or a function over 100 lines is where the next change goes wrong; an
import cycle between modules means two modules are one. These checks read the source with
``ast`` (nothing is imported), so they hold for every module, including the ones a test run
never imports.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
MAX_MODULE_LINES = 900
MAX_FUNCTION_LINES = 100


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """Modules of the package that ``name`` imports when it is itself imported.

    Only imports that run at import time count: module level, including under ``if`` (a
    ``TYPE_CHECKING`` block is skipped: it never runs). Imports inside functions are lazy by
    design (the hook entry's fast start) and cannot make an import cycle.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If):
                test = ast.unparse(node.test)
                if "TYPE_CHECKING" not in test:
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - (node.level - 1)]
                    module = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    module = node.module or ""
                # ``from pkg import submodule`` needs the submodule, not the package's own
                # names: the package's __init__ is then only an ancestor being imported.
                named = [f"{module}.{alias.name}" for alias in node.names]
                found.update(named)
                if not all(name in MODULES for name in named):
                    found.add(module)

    visit(tree.body)
    return {m for m in found if m in MODULES and m != name}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root, edges in graph.items():
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(edges))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, todo = work[-1]
            if todo:
                nxt = todo.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph[nxt])))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_the_checks_see_the_package() -> None:
    """The walk finds the package's modules (a wrong SRC would make every check vacuous)."""
    assert "domestique.proxy.app" in MODULES
    assert "domestique.guard" in MODULES
    assert len(MODULES) > 100


def test_no_module_is_over_900_lines() -> None:
    big = {
        name: n
        for name, path in MODULES.items()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert big == {}, f"split these modules (docs/architecture.md): {big}"


def test_no_function_is_over_100_lines() -> None:
    long: dict[str, int] = {}
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{name}.{node.name}"] = lines
    assert long == {}, f"split these functions: {long}"


def test_no_import_cycle_between_modules() -> None:
    graph = {name: _imports(name, path) for name, path in MODULES.items()}
    assert _cycles(graph) == []


def test_cycle_finder_finds_a_cycle() -> None:
    """The cycle check can fail: a two-module loop and a three-module loop are found."""
    graph = {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"e"}, "e": {"c"}, "f": {"a"}}
    assert sorted(_cycles(graph)) == [["a", "b"], ["c", "d", "e"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_test_patches_sys_path() -> None:
    """Tests import through pytest's ``pythonpath`` setting, never by editing ``sys.path``."""
    tests = Path(__file__).resolve().parent
    patching = sorted(
        str(p.relative_to(tests))
        for p in tests.rglob("*.py")
        if p.name != Path(__file__).name
        and any(
            isinstance(node, ast.Attribute)
            and node.attr in {"insert", "append"}
            and ast.unparse(node.value) == "sys.path"
            for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
        )
    )
    assert patching == []
