"""The typed front door: ``medr2.__all__`` is exactly the list of docs/architecture.md, every name resolves to what
``medr2.api`` names, the names a type checker sees (``if TYPE_CHECKING:`` imports) are the names the lazy
``__getattr__`` returns, the package ships ``py.typed``, and mypy flags a wrong call of every verb."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import medr2
from medr2 import api

SRC = Path(medr2.__file__).resolve().parent
DOC = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"
_NAME = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`")


def documented_names() -> list[str]:
    """The names of the bullet list after "`medr2.__all__` is exactly these names" in docs/architecture.md."""
    text = DOC.read_text("utf-8")
    start = text.index("`medr2.__all__` is exactly these names")
    bullets = text[start:].split("\n\n", 2)[1]
    assert all(line.startswith("- ") for line in bullets.splitlines())
    return _NAME.findall(bullets)


def _type_checking_block(path: Path) -> list[ast.stmt]:
    tree = ast.parse(path.read_text("utf-8"))
    blocks = [n for n in tree.body if isinstance(n, ast.If) and isinstance(n.test, ast.Name)
              and n.test.id == "TYPE_CHECKING"]
    assert len(blocks) == 1, path
    return blocks[0].body


def _typed_names(path: Path) -> dict[str, str]:
    """Public name -> ``module:attribute`` as the ``if TYPE_CHECKING:`` block of ``path`` binds it: ``from M import
    A as A`` (an explicit re-export), or ``N = A`` of a name imported there."""
    out: dict[str, str] = {}
    imported: dict[str, str] = {}
    for node in _type_checking_block(path):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                imported[alias.asname or alias.name] = f"{node.module}:{alias.name}"
                if alias.asname == alias.name:
                    out[alias.name] = f"{node.module}:{alias.name}"
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Name):
            for target in node.targets:
                assert isinstance(target, ast.Name)
                out[target.id] = imported[node.value.id]
    return out


def test_all_is_exactly_the_documented_set() -> None:
    documented = documented_names()
    assert len(documented) == len(set(documented)), "a name documented twice"
    assert len(medr2.__all__) == len(set(medr2.__all__)), "a name exported twice"
    assert set(medr2.__all__) == set(documented)
    assert set(medr2.__all__) == {*api.__all__, "__version__"}


def test_every_public_name_resolves_to_what_the_api_names() -> None:
    importlib.import_module("medr2.scoring.scorer")  # a room imported first sets no verb
    for name in api.__all__:
        value = getattr(medr2, name)
        assert value is getattr(api, name), name
        if name in api.VERBS:
            assert callable(value) and value.__module__ == "medr2.api", name
        else:
            module, _, attr = api._LAZY[name].partition(":")
            assert value is getattr(importlib.import_module(module), attr), name


def test_type_checkers_see_the_names_the_lazy_getattr_returns() -> None:
    # medr2/__init__.py: every public name, each from medr2.api (what its __getattr__ reads)
    front = _typed_names(SRC / "__init__.py")
    assert set(front) == set(api.__all__)
    assert all(target == f"medr2.api:{name}" for name, target in front.items())
    # medr2/api.py: every lazy name, from the module and attribute its _LAZY entry loads
    typed = _typed_names(SRC / "api.py")
    assert {name: typed.get(name) for name in api._LAZY} == api._LAZY


def test_the_package_ships_py_typed() -> None:
    assert (SRC / "py.typed").is_file()
    pyproject = tomllib.loads((SRC.parents[1] / "pyproject.toml").read_text("utf-8"))
    assert "py.typed" in pyproject["tool"]["setuptools"]["package-data"]["medr2"]


def test_mypy_types_the_front_door_and_flags_wrong_calls(tmp_path: Path) -> None:
    """Every public name is typed (not ``Any``) to mypy, and a wrong call of every verb is an error."""
    lines = ["import medr2", ""]
    reveal: dict[int, str] = {}
    wrong: dict[int, str] = {}
    for name in api.__all__:
        if name == "VariantRole":  # a Literal alias: a type, not a value
            lines.append("role: medr2.VariantRole = 'probe'")
            reveal[len(lines) + 1] = name
            lines.append("reveal_type(role)")
            continue
        reveal[len(lines) + 1] = name
        lines.append(f"reveal_type(medr2.{name})")
    for verb in api.VERBS:
        wrong[len(lines) + 1] = verb
        lines.append(f"medr2.{verb}(object(), object(), object(), no_such_option=1)")
    snippet = tmp_path / "snippet.py"
    snippet.write_text("\n".join(lines) + "\n", "utf-8")
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\nfollow_imports = silent\n", "utf-8")
    r = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(config), "--cache-dir",
                        str(tmp_path / "cache"), str(snippet)], cwd=tmp_path, capture_output=True, text=True,
                       timeout=600, env={"MYPYPATH": str(SRC.parent), "PATH": "/usr/bin:/bin"})
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    revealed = {int(m[1]): m[2] for m in re.finditer(r"snippet\.py:(\d+): note: Revealed type is \"(.*)\"", out)}
    assert set(revealed) == set(reveal), out
    untyped = sorted(reveal[n] for n, t in revealed.items() if t == "Any")
    assert not untyped, f"Any to mypy: {untyped}"
    assert "Literal['probe']" in revealed[next(n for n, v in reveal.items() if v == "VariantRole")]
    errors = {int(m[1]) for m in re.finditer(r"snippet\.py:(\d+): error:", out)}
    assert errors == set(wrong), out
