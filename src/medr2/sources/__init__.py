"""Sources: readers that turn data into Cases (DESIGN §11)."""

from __future__ import annotations

import importlib

# modules that register sources when imported
BUILTIN_SOURCE_MODULES = (
    "medr2.sources.sample",
    "medr2.sources.folder",
    "medr2.sources.coco",
    "medr2.sources.masks",
    "medr2.sources.dicom",
    "medr2.sources.nifti",
    # public datasets in their released layouts (medr2.sources.datasets.DATASET_MODULES)
    "medr2.sources.datasets.nih_cxr14",
    "medr2.sources.datasets.rsna_pneumonia",
    "medr2.sources.datasets.vindr_cxr",
    "medr2.sources.datasets.msd",
    "medr2.sources.datasets.brats",
    "medr2.sources.datasets.isic",
    "medr2.sources.datasets.kvasir_seg",
    "medr2.sources.datasets.cbis_ddsm",
    "medr2.sources.datasets.iu_xray",
)


def load_builtin_sources() -> None:
    for mod in BUILTIN_SOURCE_MODULES:
        importlib.import_module(mod)
