"""The package import graph follows the documented data flow (docs/architecture.md):

    sources → tasks/builder → perturb → models → run/store → scoring → reporting → viewer → train

Every ``import medr2.X`` / ``from medr2.X import …`` / relative import of every module under ``src/medr2`` is
collected with ``ast`` (function-level, lazy and ``TYPE_CHECKING`` imports included) and mapped to its room (the
first package under ``medr2``). A room may import its own modules, the shared foundation (rank 0) and the rooms
upstream of it; an arrow to a room downstream is against the flow. Today's such arrows are listed in
``ALLOWED`` with the reason each remains: the list may only shrink (an entry no longer found fails too, so it is
removed when its arrow is fixed). String references (registry ``lazy("name", "module:object")`` entries,
``importlib.import_module`` of plugin modules) are extension-point lookups, not imports, and are not counted."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import medr2

SRC = Path(medr2.__file__).resolve().parent

# rank of each room along the flow; a room imports only rooms of a lower or equal rank (or its own modules)
FOUNDATION = 0
RANK: dict[str, int] = {
    # the shared foundation every stage uses: records and their ids, errors, registries, the bench folder's format
    # and readers, the content-addressed images, their deferred renders and the image operations, utilities (the one
    # console writer, the writer lock of an output folder, the one text decoder, the cluster reach check)
    **dict.fromkeys(("records", "variant_id", "errors", "registry", "jsonsafe", "textfile", "reach", "atomic",
                     "images", "renders", "imaging", "bench", "demographics", "vocab", "console", "outdir",
                     "progress", "redact", "interrupts", "arrowmem", "catalog", "__version__"),
                    FOUNDATION),
    "sources": 1,
    "tasks": 2,
    # the builder assembles sources, tasks and variants into a bench (``medr2 build --variants``): ranked with perturb
    "builder": 3,
    "perturb": 3,
    "models": 4,
    "run": 5,
    # import and convert (interop) read and write benches beside the runner: exporters render prompts as it does
    "interop": 5,
    "scoring": 6,
    "reporting": 7,
    # the live viewer over scored runs shows the report's leaderboard table, rows and cards
    "viewer": 8,
    "train": 9,
    # the entry points may import any room: the front door, the command line, the demo that runs every stage
    **dict.fromkeys(("api", "cli", "demokit", "__main__", "__init__"), 99),
}

# (importing module, imported module): arrows against the flow that remain, each with its reason
ALLOWED: dict[tuple[str, str], str] = {
    ("medr2.registry", "medr2.tasks.spec"): "register_task/task import the task registry on use (the plugin hub)",
    ("medr2.registry", "medr2.perturb.registry"): "register_variant imports the variant registry on use (the hub)",
    ("medr2.bench.info", "medr2.tasks"): "medr2 info's coverage lists every registered task (the task registry)",
    ("medr2.bench.info", "medr2.tasks.contract"): "medr2 info --quality names each skip reason's requirement (the "
                                                  "requirement registry), and a bench built before contracts were "
                                                  "recorded shows the registry's contract",
    ("medr2.models.baselines", "medr2.run.prompts"): "the follow-history baseline writes the gold and the wrong "
                                                     "answer as the runner's prompts do (gold_answer, wrong_answer)",
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def _targets(module: str, path: Path) -> set[str]:
    """The medr2 modules ``module`` imports anywhere in its file. ``from P import name`` is the module ``P.name``
    where there is one, else ``P``; the bare ``medr2`` package is its ``__version__`` (the package imports nothing at
    run time), and a name taken from it (``from medr2 import evaluate``) is the front door, ``medr2.api``."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            out.update("medr2.__version__" if a.name == "medr2" else a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                if sub in MODULES:
                    out.add(sub)
                elif source == "medr2":
                    out.add("medr2.__version__" if alias.name == "__version__" else "medr2.api")
                else:
                    out.add(source)
    return {t for t in out if t == "medr2" or t.startswith("medr2.")}


def room(module: str) -> str:
    """The room of a module: the first name under ``medr2`` (``__init__`` for the package itself)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def against_the_flow() -> set[tuple[str, str]]:
    found = set()
    for module, path in MODULES.items():
        for target in _targets(module, path):
            here, there = room(module), room(target)
            if here != there and RANK[there] > RANK[here]:
                found.add((module, target))
    return found


def test_every_room_has_a_place_in_the_flow() -> None:
    """A new package or top-level module is placed in ``RANK`` (and so in the flow) before anything is checked."""
    rooms = {room(m) for m in MODULES}
    assert not rooms - set(RANK), f"rooms without a rank: {sorted(rooms - set(RANK))}"


_NESTINGS = ("{stmt}", "def f():\n    {stmt}", "if TYPE_CHECKING:\n    {stmt}", "class C:\n    def m(self):\n"
             "        try:\n            {stmt}\n        except ImportError:\n            pass")


@settings(max_examples=60, deadline=None)
@given(target=st.sampled_from(sorted(m for m in MODULES if "." in m)), nesting=st.sampled_from(_NESTINGS),
       form=st.sampled_from(["import", "from", "relative"]))
def test_every_import_is_found_wherever_it_is_written(tmp_path_factory: pytest.TempPathFactory, target: str,
                                                      nesting: str, form: str) -> None:
    """An import of any medr2 module, written at module level, in a function, under ``TYPE_CHECKING`` or in a
    method's ``try``, absolute or relative, is found as that module."""
    here = "medr2.scoring.probe_module"  # where the snippet is placed: two levels under medr2 (for relative forms)
    parent, _, name = target.rpartition(".")
    stmt = {"import": f"import {target}", "from": f"from {parent} import {name}",
            "relative": f"from ..{parent.removeprefix('medr2').lstrip('.')} import {name}"}[form]
    path = tmp_path_factory.mktemp("probe") / "probe_module.py"
    path.write_text(nesting.format(stmt=stmt) + "\n", "utf-8")
    assert target in _targets(here, path), stmt


def test_every_import_found_in_the_package_is_a_module_of_it() -> None:
    for module, path in MODULES.items():
        assert all(t in MODULES or t == "medr2.__version__" for t in _targets(module, path)), module


def test_no_import_runs_against_the_flow_beyond_the_allow_list() -> None:
    found = against_the_flow()
    new = sorted(found - set(ALLOWED))
    assert not new, "imports against the data flow (docs/architecture.md): " + ", ".join(f"{a} → {b}" for a, b in new)
    gone = sorted(set(ALLOWED) - found)
    assert not gone, f"fixed, remove from ALLOWED: {gone}"
