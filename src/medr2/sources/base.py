"""The source contract: a source turns data into Cases in two steps.

``plan(seed, n)`` is cheap and returns picklable case specs, in a deterministic order;
``realize(spec, images)`` does the heavy work (decode, render, write PNGs through the
content-addressed ImageStore) and returns a Case, or raises :class:`medr2.errors.BadInput`
naming the file, record and field, which the builder quarantines. Workers call ``realize``
in parallel; the builder keeps the order of ``plan``. Writing a source: ``docs/extending.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from medr2.registry import Registry

if TYPE_CHECKING:
    from medr2.images import ImageStore
    from medr2.records import Case


class Source(Protocol):
    name: str

    def plan(self, seed: int, n: int | None) -> Sequence[Any]: ...

    def realize(self, spec: Any, images: ImageStore) -> Case: ...


SourceFactory = Callable[[str | None], Source]

# name -> factory(argument after "NAME:" or None) -> Source. The built-ins are lazy entries (one line each,
# the module is imported when the source is used); adding a source: docs/extending.md.
SOURCES: Registry[SourceFactory] = Registry("source", field="--source")
for _name, _target in (
        ("sample", "sample.source"), ("folder", "folder"), ("coco", "coco"), ("masks", "masks"), ("dicom", "dicom"),
        ("nifti", "nifti"),
        # public datasets in their released layouts (docs/bring-your-own-data.md)
        ("nih-cxr14", "datasets.nih_cxr14"), ("rsna-pneumonia", "datasets.rsna_pneumonia"),
        ("vindr-cxr", "datasets.vindr_cxr"), ("msd", "datasets.msd"), ("brats", "datasets.brats"),
        ("isic", "datasets.isic"), ("kvasir-seg", "datasets.kvasir_seg"), ("cbis-ddsm", "datasets.cbis_ddsm"),
        ("iu-xray", "datasets.iu_xray")):
    SOURCES.lazy(_name, f"medr2.sources.{_target}:_factory")


def register_source(name: str) -> Callable[[SourceFactory], SourceFactory]:
    """Decorator: register ``factory(arg) -> Source`` for ``--source NAME`` / ``--source NAME:ARG``."""
    return SOURCES.decorator(name)


def get_source(spec: str) -> Source:
    """``"sample"`` or ``"folder:/path/to/data"`` -> a Source."""
    name, _, arg = spec.partition(":")
    return SOURCES.lookup(name)(arg or None)
