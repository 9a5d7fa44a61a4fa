"""Every read of a bench's tables goes through the bench layer (issue 38: one query layer, ``BenchTable``): no
module of ``src/medr2`` outside it names ``items.parquet`` / ``cases.parquet`` (the literal, or ``ITEMS_FILE`` /
``CASES_FILE``) or calls the raw table readers (``read_items_table``, ``read_parquet``). Found with ``ast`` over
every module; exceptions (none left), each named with its reason, may only shrink (an exception with nothing left to
excuse fails too)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import medr2

SRC = Path(medr2.__file__).resolve().parent
# the bench layer: the format and its readers, the columnar query layer, the column checks
BENCH_LAYER = frozenset({"bench/format.py", "bench/table.py", "bench/columns.py"})
# none left (issue 38: scoring reads both tables through BenchTable now); one added must name its reason
EXCEPTIONS: dict[str, str] = {}
FILES = frozenset({"items.parquet", "cases.parquet"})
NAMES = frozenset({"ITEMS_FILE", "CASES_FILE", "read_items_table", "read_parquet"})


def direct_reads(source: str) -> list[str]:
    """Where ``source`` names a bench table file or a raw table reader: ``line: what``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        name = None
        if isinstance(node, ast.Constant) and node.value in FILES:
            name = node.value
        elif isinstance(node, ast.Name) and node.id in NAMES:
            name = node.id
        elif isinstance(node, ast.Attribute) and node.attr in NAMES:
            name = node.attr
        elif isinstance(node, ast.ImportFrom):
            name = next((a.name for a in node.names if a.name in NAMES), None)
        if name is not None:
            found.append(f"{node.lineno}: {name}")
    return found


def _modules() -> dict[str, list[str]]:
    """Every module outside the bench layer -> its direct reads (modules without any left out)."""
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel not in BENCH_LAYER:
            found = direct_reads(path.read_text(encoding="utf-8"))
            if found:
                out[rel] = found
    return out


def test_no_module_outside_the_bench_layer_reads_the_bench_tables() -> None:
    found = _modules()
    assert all((SRC / rel).is_file() for rel in BENCH_LAYER)
    against = {rel: hits for rel, hits in found.items() if not any(rel.startswith(e) for e in EXCEPTIONS)}
    assert not against, f"read a bench table through medr2.bench.table.BenchTable instead: {against}"
    for prefix in EXCEPTIONS:  # an exception whose reads are gone is removed from the list
        assert any(rel.startswith(prefix) for rel in found), f"{prefix} reads nothing directly: drop its exception"


@pytest.mark.parametrize("snippet", [
    'path = root / "items.parquet"',
    "path = root / 'cases.parquet'",
    "from medr2.bench.format import ITEMS_FILE",
    "from medr2.bench.format import CASES_FILE as C",
    "def f():\n    from medr2.bench.format import read_items_table\n",
    "t = format.read_parquet(p)",
    "x = fmt.CASES_FILE",
])
def test_every_kind_of_direct_read_is_found(snippet: str) -> None:
    assert direct_reads(snippet)


def test_docstrings_and_other_files_are_not_reads() -> None:
    assert not direct_reads('"""Reviews never live in ``items.parquet``."""\npath = root / "renders.parquet"\n')
