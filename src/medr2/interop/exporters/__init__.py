"""Exporters of a bench to other harnesses (registry ``EXPORTERS``; one module per target).

An exporter is ``fn(bench, out) -> dict`` (a summary: files written, items per split). Adding one:
``docs/extending.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medr2.registry import Registry

if TYPE_CHECKING:
    from medr2.bench.format import Bench

Exporter = Callable[["Bench", Path], dict[str, Any]]
# target -> exporter; the built-ins are lazy entries (module imported on use). Adding one: docs/extending.md.
EXPORTERS: Registry[Exporter] = Registry("target", field="--to")
for _name, _target in (("hf", "hf:export_hf"), ("vlmevalkit", "vlmevalkit:export_tsv"),
                       ("lmms-eval", "lmms_eval:export_lmms_eval")):
    EXPORTERS.lazy(_name, f"medr2.interop.exporters.{_target}")


def register_exporter(name: str) -> Callable[[Exporter], Exporter]:
    """Decorator: register ``fn(bench, out) -> summary`` as ``medr2 export --to NAME``."""
    return EXPORTERS.decorator(name)


def run_export(target: str, bench: Bench, out: Path, **context: Any) -> dict[str, Any]:
    """Run the exporter of ``target``; ``context`` (e.g. ``reviews``: the bench's review summary for a dataset
    card) is passed as keywords the exporter's signature names, and only those."""
    import inspect

    fn = EXPORTERS.lookup(target)
    params = inspect.signature(fn).parameters
    return fn(bench, Path(out), **{k: v for k, v in context.items() if k in params and v is not None})
