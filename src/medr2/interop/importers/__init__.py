"""Importers of existing VQA sets into Items (registry ``IMPORTERS``; one module per format).

An importer is ``fn(path, builder, options) -> None``: it reads local files only, adds Cases and
Items to the :class:`~medr2.interop.common.ImportBuilder` and quarantines bad records there. Adding one:
``docs/extending.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from medr2.errors import BadInput
from medr2.registry import Registry

if TYPE_CHECKING:
    from medr2.interop.common import ImportBuilder, ImportResult

Importer = Callable[[Path, "ImportBuilder", dict[str, str]], None]
# format -> importer; the built-ins are lazy entries (module imported on use). Adding one: docs/extending.md.
IMPORTERS: Registry[Importer] = Registry("import format", field="FORMAT")
for _name, _target in (
        ("vqa-rad", "vqarad:import_vqarad"), ("slake", "slake:import_slake"), ("pmc-vqa", "pmcvqa:import_pmcvqa"),
        ("omnimedvqa", "omnimedvqa:import_omnimedvqa"), ("probmed", "probmed:import_probmed"),
        ("vlmevalkit", "vlmevalkit:import_tsv"), ("hf", "hf:import_hf"), ("lmms-eval", "lmms_eval:import_lmms")):
    IMPORTERS.lazy(_name, f"medr2.interop.importers.{_target}")


def register_importer(name: str) -> Callable[[Importer], Importer]:
    """Decorator: register ``fn(path, builder, options)`` as ``medr2 import NAME``."""
    return IMPORTERS.decorator(name)


def load_importers() -> None:
    """Import every registered importer (kept for callers that want them all loaded)."""
    for name in IMPORTERS.names():
        IMPORTERS[name]


def run_import(fmt: str, path: Path, out: Path, *, license: str | None = None, access: str | None = None,
               source: str | None = None, options: dict[str, str] | None = None) -> ImportResult:
    """Import ``path`` (format ``fmt``) with images stored under ``out``; returns the result (not yet written)."""
    importer = IMPORTERS.lookup(fmt)
    if not Path(path).exists():
        raise BadInput("not found", file=str(path), field="PATH")
    if access not in (None, "open", "credentialed", "restricted"):
        raise BadInput("access must be open, credentialed or restricted", field="--access")
    from medr2.bench.format import prepare_bench_folder
    from medr2.images import ImageStore
    from medr2.interop.common import ImportBuilder

    prepare_bench_folder(out)  # like build: no foreign folder; an old bench's manifest and quarantine go first
    b = ImportBuilder(fmt=fmt, images=ImageStore(out), license=license or "unspecified", access=access or "open",
                      source=source)
    importer(Path(path), b, dict(options or {}))
    return b.result()
