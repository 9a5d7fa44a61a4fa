"""Sources: readers that turn data into Cases (docs/bring-your-own-data.md)."""

from __future__ import annotations

import importlib

from medr2.sources.datasets import DATASET_MODULES

# modules that register sources when imported
BUILTIN_SOURCE_MODULES = (
    "medr2.sources.sample",
    "medr2.sources.folder",
    "medr2.sources.coco",
    "medr2.sources.masks",
    "medr2.sources.dicom",
    "medr2.sources.nifti",
    *DATASET_MODULES,  # public datasets in their released layouts
)


def load_builtin_sources() -> None:
    for mod in BUILTIN_SOURCE_MODULES:
        importlib.import_module(mod)
