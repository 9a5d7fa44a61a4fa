"""Importers of existing VQA sets into Items (registry ``IMPORTERS``; one module per format).

An importer is ``fn(path, builder, options) -> None``: it reads local files only, adds Cases and
Items to the :class:`~medr2.interop.common.ImportBuilder` and quarantines bad records there.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

from medr2.errors import BadInput
from medr2.images import ImageStore
from medr2.interop.common import ImportBuilder, ImportResult

Importer = Callable[[Path, ImportBuilder, dict[str, str]], None]
IMPORTERS: dict[str, Importer] = {}
IMPORTER_MODULES = ("vqarad", "slake", "pmcvqa", "omnimedvqa", "probmed", "vlmevalkit", "hf", "lmms_eval")


def register_importer(name: str) -> Callable[[Importer], Importer]:
    def deco(fn: Importer) -> Importer:
        IMPORTERS[name] = fn
        return fn

    return deco


def load_importers() -> None:
    for m in IMPORTER_MODULES:
        importlib.import_module(f"medr2.interop.importers.{m}")


def run_import(fmt: str, path: Path, out: Path, *, license: str | None = None, access: str | None = None,
               source: str | None = None, options: dict[str, str] | None = None) -> ImportResult:
    """Import ``path`` (format ``fmt``) with images stored under ``out``; returns the result (not yet written)."""
    load_importers()
    if fmt not in IMPORTERS:
        raise BadInput(f"unknown import format {fmt!r}; known: {', '.join(sorted(IMPORTERS))}", field="FORMAT")
    if not Path(path).exists():
        raise BadInput("not found", file=str(path), field="PATH")
    if access not in (None, "open", "credentialed", "restricted"):
        raise BadInput("access must be open, credentialed or restricted", field="--access")
    from medr2.bench.format import prepare_bench_folder

    prepare_bench_folder(out)  # like build: no foreign folder; an old bench's manifest and quarantine go first
    b = ImportBuilder(fmt=fmt, images=ImageStore(out), license=license or "unspecified", access=access or "open",
                      source=source)
    IMPORTERS[fmt](Path(path), b, dict(options or {}))
    return b.result()
