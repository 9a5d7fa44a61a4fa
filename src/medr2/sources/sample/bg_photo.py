"""Photographs bundled with scikit-image (no download): a fundus and an IHC histology image."""

from __future__ import annotations

import functools

import numpy as np
from scipy import ndimage

from medr2.errors import BadInput
from medr2.sources.sample.background import (
    Background,
    BackgroundDef,
    StructMask,
    erode,
    largest_component,
    register_background,
    resize_float,
    work_scale,
)


def _skimage_image(name: str) -> np.ndarray:
    try:
        from skimage import data
    except ImportError as e:
        raise BadInput("scikit-image is not installed", file=f"skimage.data.{name}", field="background") from e
    try:
        return np.asarray(getattr(data, name)())
    except Exception as e:  # a missing bundled file or a download attempt
        raise BadInput(f"cannot load bundled image: {e}", file=f"skimage.data.{name}", field="background") from e


def _skimage_ok(name: str) -> bool:
    try:
        import skimage.data  # noqa: F401
    except ImportError:
        return False
    return True


@functools.cache
def _retina(view: int) -> Background:
    rgb = _skimage_image("retina").astype(np.float32) / 255.0
    s = work_scale(*rgb.shape[:2])
    img = resize_float(rgb, s)
    field = ndimage.binary_fill_holes(largest_component(img.mean(axis=2) > 0.06))
    # optic disc: the brightest large blob (derived)
    lum = ndimage.gaussian_filter(img.mean(axis=2), 3)
    disc = largest_component((lum > np.percentile(lum[field], 99.3)) & field)
    disc = ndimage.binary_fill_holes(ndimage.binary_dilation(disc, iterations=3))
    retina_field = field & ~ndimage.binary_dilation(disc, iterations=10)
    # a 45 degree fundus field spans about 12 mm of retina across the field of view (estimate)
    ys, xs = np.nonzero(field)
    spacing = 12.0 / float(np.ptp(xs) + 1)
    return Background(
        key="fundus", file="skimage.data.retina (Fundus_photograph_of_normal_left_eye.jpg)",
        images={"default": img}, modality="fundus photography", body_region="eye", plane=None,
        spacing_mm=spacing, spacing_estimated=True,
        structures=(StructMask("optic disc", disc, "landmark", "brightest blob (derived)"),
                    StructMask("retina", field, "region", "field-of-view threshold (derived)")),
        host=erode(retina_field, 8), host_name="retina", lesion_family="retina", laterality="fixed",
        fixed_side="left", source="sample/scikit-image", license="CC0-1.0 (Häggström 2014, via scikit-image)",
        patient_id="skimage-retina", status="normal",
        meta={"note": "normal left eye per the original file name", "spacing_note": "12 mm field width estimated",
              "findings_complete": True},
    )


@functools.cache
def _ihc(view: int) -> Background:
    rgb = _skimage_image("immunohistochemistry").astype(np.float32) / 255.0
    s = work_scale(*rgb.shape[:2])
    return Background(
        key="histology", file="skimage.data.immunohistochemistry", images={"default": resize_float(rgb, s)},
        modality="histopathology", body_region="colon", sequence="IHC (DAB, FHL2) with haematoxylin",
        source="sample/scikit-image", license="no known copyright restrictions (CMMI, via scikit-image)",
        patient_id="skimage-ihc", flip_ok=False,
        meta={"note": "colonic glands; FHL2 expression revealed with DAB"},
    )


register_background(BackgroundDef("fundus", lambda: 1 if _skimage_ok("retina") else 0, _retina, 1.5,
                                  lambda: None if _skimage_ok("retina") else "scikit-image missing", priors=True))
register_background(BackgroundDef("histology", lambda: 1 if _skimage_ok("immunohistochemistry") else 0, _ihc, 0.5,
                                  lambda: None if _skimage_ok("immunohistochemistry") else "scikit-image missing"))
