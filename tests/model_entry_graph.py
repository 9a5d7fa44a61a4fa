"""The package's reference graph, read from its source (AST): which functions can reach a given function.

A function's edges are the names its body refers to (called or passed on), resolved through its module's imports
(module-level and function-level) and the module's own top-level definitions; a class stands for all its methods.
Calls through objects (``self.x()``, ``obj.method()``) are not followed: what it finds, it finds for sure."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import medr2

SRC = Path(medr2.__file__).parent


def _module(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(body: list[ast.stmt], module: str) -> dict[str, str]:
    """alias -> ``module:attr`` (``from m import a``) or ``module`` (``import m``), of the statements in ``body``
    (not descending into nested functions)."""
    out: dict[str, str] = {}
    for node in _walk_own(body):
        if isinstance(node, ast.ImportFrom) and node.module:
            base = node.module if node.level == 0 else ".".join(module.split(".")[:-node.level] + [node.module])
            for a in node.names:
                out[a.asname or a.name] = f"{base}:{a.name}"
        elif isinstance(node, ast.Import):
            for a in node.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
    return out


def _walk_own(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """The nodes of ``body``, not inside nested function or class definitions."""
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
                todo.append(child)
            elif isinstance(child, ast.Lambda):
                todo.append(child.body)


@cache
def graph() -> dict[str, frozenset[str]]:
    """``module:qualname`` (Python's ``__qualname__``) -> the ``module:name`` ids it refers to; a class's id refers
    to its methods, and a function refers to the functions defined in it. A name a package re-exports
    (``medr2.bench:load_bench``) refers to what it imports."""
    edges: dict[str, set[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        module = _module(path)
        tree = ast.parse(path.read_text("utf-8"))
        top = {n.name: f"{module}:{n.name}" for n in tree.body
               if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
        imported = _imports(tree.body, module)
        for alias, ref in imported.items():
            edges.setdefault(f"{module}:{alias}", set()).add(ref)
        _visit(tree.body, module, "", {**top, **imported}, edges)
    return {k: frozenset(v) for k, v in edges.items()}


def _visit(body: list[ast.stmt], module: str, prefix: str, names: dict[str, str],
           edges: dict[str, set[str]]) -> None:
    for node in _walk_own(body):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            qual = prefix + node.name
            own = {**names, **_imports(node.body, module)}
            refs = edges.setdefault(f"{module}:{qual}", set())
            for sub in _walk_own(node.body):
                if isinstance(sub, ast.Name) and sub.id in own:
                    refs.add(own[sub.id])
                elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id in own \
                        and ":" not in own[sub.value.id]:  # module.attr
                    refs.add(f"{own[sub.value.id]}:{sub.attr}")
            inner = f"{qual}." if isinstance(node, ast.ClassDef) else f"{qual}.<locals>."
            for child in node.body:
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    refs.add(f"{module}:{inner}{child.name}")
            _visit(node.body, module, inner, own, edges)


def reaches(start: str, target: str) -> bool:
    """Whether ``start`` (``module:qualname``) refers, directly or through other functions, to ``target``."""
    g = graph()
    seen, todo = {start}, [start]
    while todo:
        node = todo.pop()
        if node == target:
            return True
        for nxt in g.get(node, ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return False
