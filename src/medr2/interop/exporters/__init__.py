"""Exporters of a bench to other harnesses (registry ``EXPORTERS``; one module per target).

An exporter is ``fn(bench, out) -> dict`` (a summary: files written, items per split).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from medr2.bench.format import Bench
from medr2.errors import BadInput

Exporter = Callable[[Bench, Path], dict[str, Any]]
EXPORTERS: dict[str, Exporter] = {}
EXPORTER_MODULES = ("hf", "vlmevalkit", "lmms_eval")


def register_exporter(name: str) -> Callable[[Exporter], Exporter]:
    def deco(fn: Exporter) -> Exporter:
        EXPORTERS[name] = fn
        return fn

    return deco


def run_export(target: str, bench: Bench, out: Path) -> dict[str, Any]:
    for m in EXPORTER_MODULES:
        importlib.import_module(f"medr2.interop.exporters.{m}")
    if target not in EXPORTERS:
        raise BadInput(f"unknown target {target!r}; known: {', '.join(sorted(EXPORTERS))}", field="--to")
    return EXPORTERS[target](bench, Path(out))
