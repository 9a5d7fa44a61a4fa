"""DICOM backgrounds from pydicom-data (MIT): CR, MR, CT, US and NM files with real tags.

Files are found with ``pydicom.data.get_testdata_file(name, download=False)`` (never the
listing call, which tries the network). Modality, body part, view/plane, pixel spacing and the
display window come from the tags; masks derived by thresholding are marked as derived.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
from scipy import ndimage

from medr2.demographics import demographic_meta
from medr2.errors import BadInput
from medr2.sources.sample.background import (
    MODALITY_NAMES,
    Background,
    BackgroundDef,
    RealFinding,
    StructMask,
    erode,
    largest_component,
    percentile_window,
    register_background,
    resize_float,
    resize_mask,
    window,
    work_scale,
)

PYDICOM_LICENSE = "MIT (pydicom-data test files)"
SOURCE = "sample/pydicom-data"
DERIVED = "threshold (derived)"


@functools.cache
def dicom_test_file(name: str) -> str | None:
    """Path of a pydicom test file, or None when it is not installed (no network)."""
    try:
        from pydicom.data import get_testdata_file
    except ImportError:
        return None
    try:
        p = get_testdata_file(name, download=False)
    except Exception:  # pydicom raises for unknown names in some versions
        return None
    return str(p) if p else None


def read_dicom(path: str | Path) -> Any:
    """Read a DICOM file with its pixels; BadInput naming the file when missing or corrupt."""
    import pydicom

    p = Path(path)
    if not p.is_file():
        raise BadInput("background file is missing", file=str(p), field="background")
    try:
        ds = pydicom.dcmread(str(p))
        _ = ds.pixel_array
    except Exception as e:
        raise BadInput(f"cannot decode DICOM: {e}", file=str(p), field="background") from e
    return ds


def displayed(ds: Any, arr: Any) -> np.ndarray:
    """``arr`` (pixels or a mask on the file's stored grid) in the standard display orientation the file's own
    tags say (:func:`medr2.imaging.orientation.display_ops`: ``RG3_UNCR.dcm`` is stored mirrored,
    ``PatientOrientation`` R\\F; ``explicit_VR-UN.dcm`` upside down, ``ImageOrientationPatient`` 1\\0\\0\\0\\-1\\0).
    Every pixel array of a background passes here."""
    from medr2.imaging.orientation import display_ops, to_display

    return to_display(np.asarray(arr), display_ops(ds))


def modality_values(ds: Any) -> np.ndarray:
    from pydicom.pixels import apply_modality_lut

    return displayed(ds, np.asarray(apply_modality_lut(ds.pixel_array, ds), dtype=np.float32))


def tag_window(ds: Any) -> tuple[float, float] | None:
    from pydicom.multival import MultiValue

    c, w = ds.get("WindowCenter"), ds.get("WindowWidth")
    if c is None or w is None:
        return None
    c = c[0] if isinstance(c, MultiValue | list | tuple) else c
    w = w[0] if isinstance(w, MultiValue | list | tuple) else w
    return float(c), float(w)


def tag_spacing(ds: Any) -> float | None:
    for name in ("PixelSpacing", "ImagerPixelSpacing"):
        v = ds.get(name)
        if v is not None and len(v) >= 1 and float(v[0]) > 0:
            return float(v[0])
    return None


def _spacing(ds: Any) -> float:
    """The pixel spacing of a DICOM that must record one (the bundled sample files do)."""
    mm = tag_spacing(ds)
    if mm is None:
        raise ValueError(f"{getattr(ds, 'filename', 'the DICOM')} records no pixel spacing")
    return mm


def plane_of(ds: Any) -> str | None:
    """The plane the file's own ImageOrientationPatient gives (:func:`medr2.sources.dicom.plane_from_orientation`:
    "oblique" far off every axis), None without the tag."""
    from medr2.sources.dicom import plane_from_orientation

    iop = ds.get("ImageOrientationPatient")
    return plane_from_orientation(iop) if iop is not None else None


def _near_planes(ds: Any) -> list[str]:
    """The axis planes a reader may name the slice by (:func:`medr2.sources.dicom.planes_near`)."""
    from medr2.sources.dicom import planes_near

    iop = ds.get("ImageOrientationPatient")
    return planes_near(iop) if iop is not None else []


def _tags_meta(ds: Any) -> dict[str, Any]:
    keys = ("Modality", "BodyPartExamined", "ViewPosition", "StudyDescription", "SeriesDescription",
            "ProtocolName", "ScanningSequence", "PhotometricInterpretation", "Laterality", "PatientID")
    return {k: str(ds.get(k)) for k in keys if ds.get(k) not in (None, "")}


def _common(ds: Any, name: str, path: str) -> dict[str, Any]:
    return {
        "file": path,
        "modality": MODALITY_NAMES.get(str(ds.Modality), str(ds.Modality)),
        "source": SOURCE,
        "license": PYDICOM_LICENSE,
        "patient_id": f"pydicom:{ds.get('PatientID') or name}",
        # the patient's sex and age where the file's header has them (PatientSex, PatientAge)
        "meta": {"dicom": _tags_meta(ds), "dicom_file": name,
                 **demographic_meta(sex=ds.get("PatientSex"), age=ds.get("PatientAge"))},
    }


# ---------------------------------------------------------------- per file


def _chest_cr(path: str) -> Background:
    ds = read_dicom(path)
    vals = modality_values(ds)
    c, w = tag_window(ds) or (float(vals.mean()), float(np.ptp(vals)))
    img = percentile_window(vals, invert=ds.PhotometricInterpretation == "MONOCHROME1")
    s = work_scale(*img.shape)
    img = resize_float(img, s)
    # PixelSpacing is 0 in this file; the collimator edges (mm) span the detector: derived spacing
    width_mm = float(ds.CollimatorRightVerticalEdge) - float(ds.CollimatorLeftVerticalEdge)
    spacing = width_mm / ds.Columns
    lungs = _lung_fields(img)
    host = np.zeros(img.shape, bool)
    for m in lungs.values():
        host |= m
    kw = _common(ds, "RG1_UNCR.dcm", path)
    kw["meta"].update(spacing_method="collimator edges / columns", lung_mask_method=DERIVED,
                      tag_window=[c, w])
    return Background(
        key="cr-chest", images={"default": img}, body_region="chest", plane=str(ds.ViewPosition),
        spacing_mm=spacing / s, structures=tuple(StructMask(n, m, "organ", DERIVED) for n, m in lungs.items()),
        host=erode(host, 3), host_name="lung", lesion_family="lung", laterality="radiological",
        lateralising=True, **kw,  # the heart and aortic arch lie on the patient's left
    )


def _lung_fields(img: np.ndarray) -> dict[str, np.ndarray]:
    """Lung fields of a PA chest radiograph by Otsu threshold (derived, approximate)."""
    from skimage.filters import threshold_otsu

    h, w = img.shape
    s = ndimage.gaussian_filter(img, 2.5)
    t = threshold_otsu(s[int(h * 0.1):int(h * 0.9), int(w * 0.1):int(w * 0.9)])
    dark = s < t
    b = int(0.08 * h)
    dark[:b], dark[-b:], dark[:, :b], dark[:, -b:] = False, False, False, False
    dark = ndimage.binary_opening(dark, iterations=3)
    out = {}
    # radiological display: image left = patient right
    for name, (x0, x1) in (("right lung", (0, w // 2)), ("left lung", (w // 2, w))):
        half = np.zeros_like(dark)
        half[:, x0:x1] = dark[:, x0:x1]
        out[name] = ndimage.binary_fill_holes(largest_component(half))
    return out


def _tibia_cr(path: str) -> Background:
    ds = read_dicom(path)
    vals = modality_values(ds)
    c, w = tag_window(ds) or (float(vals.mean()), float(np.ptp(vals)))
    img = window(vals, c, w, invert=ds.PhotometricInterpretation == "MONOCHROME1")
    s = work_scale(*img.shape)
    img = resize_float(img, s)
    cassette_mm = float(str(ds.CassetteSize).upper().split("CM")[0]) * 10.0  # "35CMX35CM"
    kw = _common(ds, "RG3_UNCR.dcm", path)
    kw["meta"].update(spacing_method="cassette size / columns",
                      diagnosis_source="StudyDescription: " + str(ds.StudyDescription))
    side = {"R": "right", "L": "left"}.get(str(ds.get("Laterality", "")))
    return Background(
        key="cr-tibia", images={"default": img}, body_region="lower leg", plane=str(ds.ViewPosition),
        spacing_mm=cassette_mm / ds.Columns / s, laterality="fixed" if side else "none", fixed_side=side,
        diagnosis="non-ossifying fibroma", malignancy="benign", status="abnormal", **kw,
    )


def _body_mask(img: np.ndarray, frac: float = 0.15) -> np.ndarray:
    return ndimage.binary_fill_holes(largest_component(ndimage.binary_opening(img > frac, iterations=2)))


def _marrow_bone(img: np.ndarray, body: np.ndarray, bright: float = 0.45, deep_px: float = 20.0,
                 cortex_px: int = 4) -> np.ndarray:
    """The bones of a T1 image of a limb (derived): its bright fatty marrow, each thick bright region (kept by an
    opening of 6 pixels) lying deeper than ``deep_px`` inside the body (the bright subcutaneous fat lies along the
    skin), holes filled, grown by ``cortex_px`` for the dark cortex round it. Where a soft-tissue lesion may not
    lie (issue 40: a "soft-tissue lipoma" drawn over the humeral head)."""
    thick = ndimage.binary_opening((img > bright) & body, iterations=6)
    depth = ndimage.distance_transform_edt(body)
    lab, n = ndimage.label(thick)
    bone = np.zeros_like(body, dtype=bool)
    for i in range(1, n + 1):
        part = lab == i
        if float(np.median(depth[part])) > deep_px:
            bone |= part
    return ndimage.binary_dilation(ndimage.binary_fill_holes(bone), iterations=cortex_px)


def _shoulder_mr(path: str) -> Background:
    ds = read_dicom(path)
    vals = modality_values(ds)
    c, w = tag_window(ds) or (float(vals.mean()), float(np.ptp(vals)))
    img = window(vals, c, w)
    s = work_scale(*img.shape)
    img = resize_float(img, s)
    plane = plane_of(ds)
    body = _body_mask(img, 0.08)
    # ImagePositionPatient x < 0 (DICOM LPS: -x is patient right): a right shoulder
    side = "right" if float(ds.ImagePositionPatient[0]) < 0 else "left"
    kw = _common(ds, "MR2_UNCR.dcm", path)
    bone = _marrow_bone(img, body)
    kw["meta"].update(oblique=plane == "oblique", near_planes=_near_planes(ds), body_mask_method=DERIVED,
                      side_method="ImagePositionPatient x sign",
                      soft_tissue_method="body mask less the bright marrow of the bones (derived)")
    return Background(
        key="mr-shoulder", images={"default": img}, body_region="shoulder", plane=plane,
        sequence="T1-weighted" if "T1" in str(ds.get("ProtocolName", "")) else None,
        spacing_mm=_spacing(ds) / s, structures=(StructMask("shoulder soft tissue", body, "region", DERIVED),),
        host=erode(body, 12) & ~bone, host_name="shoulder soft tissue", lesion_family="soft_tissue",
        laterality="fixed", fixed_side=side, **kw,
    )


HEAD_WINDOWS = {"brain window": (40.0, 80.0), "subdural window": (75.0, 215.0), "bone window": (600.0, 2800.0)}
ABDOMEN_WINDOWS = {"soft-tissue window": (50.0, 400.0), "liver window": (30.0, 150.0),
                   "lung window": (-600.0, 1500.0), "bone window": (400.0, 1800.0)}


def _ct_images(vals: np.ndarray, windows: dict[str, tuple[float, float]], s: float) -> dict[str, np.ndarray]:
    return {name: resize_float(window(vals, c, w), s) for name, (c, w) in windows.items()}


def _head_ct(path: str) -> Background:
    ds = read_dicom(path)
    hu = modality_values(ds)
    s = work_scale(*hu.shape)
    images = _ct_images(hu, HEAD_WINDOWS, s)
    skull = largest_component(hu > 300)
    inside = ndimage.binary_fill_holes(skull) & ~skull
    brain = largest_component(inside & (hu > 0) & (hu < 80))
    brain = ndimage.binary_fill_holes(ndimage.binary_opening(brain, iterations=2))
    shape = images["brain window"].shape
    brain_w, skull_w = resize_mask(brain, shape), resize_mask(skull, shape)  # intracranial space, skull
    plane = plane_of(ds)
    kw = _common(ds, "693_UNCR.dcm", path)
    kw["meta"].update(mask_method="HU thresholds (derived): skull > 300 HU, brain 0-80 HU inside skull",
                      dataset="CQ500 (qure.ai) head CT slice as shipped in pydicom-data",
                      findings_complete=False,
                      note="the slice shows a real but unlabelled intracranial abnormality; no synthetic lesions "
                           "are placed on it")
    return Background(
        key="ct-head", images=images, body_region="head", plane=plane, spacing_mm=_spacing(ds) / s,
        structures=(StructMask("intracranial space", brain_w, "region", DERIVED),
                    StructMask("skull", skull_w, "organ", DERIVED)),
        laterality="radiological", status="abnormal", **kw,
    )


def _abdomen_ct(path: str) -> Background:
    ds = read_dicom(path)
    hu = modality_values(ds)
    s = work_scale(*hu.shape)
    images = _ct_images(hu, ABDOMEN_WINDOWS, s)
    body = ndimage.binary_fill_holes(largest_component(ndimage.binary_opening(hu > -300, iterations=3)))
    shape = images["soft-tissue window"].shape
    plane = plane_of(ds)
    kw = _common(ds, "explicit_VR-UN.dcm", path)
    kw["meta"].update(mask_method="HU thresholds (derived): body > -300 HU",
                      dataset="NIH Pancreas-CT (TCIA) slice as shipped in pydicom-data")
    return Background(
        key="ct-abdomen", images=images, body_region="abdomen", plane=plane, spacing_mm=_spacing(ds) / s,
        structures=(StructMask("body", resize_mask(body, shape), "region", DERIVED),),
        laterality="radiological", lateralising=True, **kw,  # liver on the patient's right, spleen left
    )


def _liver_mr(path: str) -> Background:
    ds = read_dicom(path)
    vals = modality_values(ds)
    c, w = tag_window(ds) or (float(vals.mean()), float(np.ptp(vals)))
    img = window(vals, c, w)
    s = work_scale(*img.shape)
    img_w = resize_float(img, s)
    lesion = overlay_lesion(ds, img)
    body = _body_mask(img_w, 0.1)
    plane = plane_of(ds)
    kw = _common(ds, "MR-SIEMENS-DICOM-WithOverlays.dcm", path)
    kw["meta"].update(finding_method="DICOM overlay 0x6000 (closed contour, filled)",
                      body_mask_method=DERIVED, findings_complete=False,
                      note="a second, larger liver lesion is visible but not outlined by the overlay")
    ring = ndimage.binary_dilation(lesion, iterations=4) & ~lesion
    intensity = "hyperintense" if img[lesion].mean() > img[ring].mean() else "hypointense"
    finding = RealFinding("focal liver lesion", resize_mask(lesion, img_w.shape),
                          {"organ": "liver", "intensity": intensity}, "dicom overlay")
    return Background(
        key="mr-liver", images={"default": img_w}, body_region="abdomen", plane=plane,
        sequence="T1-weighted fat-saturated", spacing_mm=_spacing(ds) / s,
        structures=(StructMask("body", body, "region", DERIVED),), real_findings=(finding,),
        laterality="radiological", status="abnormal", lateralising=True, **kw,  # the liver: patient's right
    )


def overlay_lesion(ds: Any, img: np.ndarray) -> np.ndarray:
    """The overlay's closed contour lying on tissue (not the text or the frame), filled."""
    ov = displayed(ds, np.asarray(ds.overlay_array(0x6000)).astype(bool))
    lab, n = ndimage.label(ndimage.binary_dilation(ov, iterations=1))
    best, best_score = None, -1.0
    for i in range(1, n + 1):
        comp = lab == i
        filled = ndimage.binary_fill_holes(comp)
        interior = filled & ~comp
        if interior.sum() < 20:
            continue
        ys, xs = np.nonzero(filled)
        rect = filled.sum() / ((np.ptp(ys) + 1) * (np.ptp(xs) + 1))
        score = float(img[interior].mean()) * (1.0 - rect)  # on tissue and not a rectangle
        if score > best_score:
            best, best_score = filled, score
    if best is None:
        raise BadInput("no closed overlay contour found", file=str(ds.filename), field="overlay 0x6000")
    return best


def _us(path: str) -> Background:
    ds = read_dicom(path)
    rgb = displayed(ds, np.asarray(ds.pixel_array, dtype=np.float32) / 255.0)
    # crop to the scanned field: rows/columns where most pixels are not black (drops burned-in text)
    gray = rgb.mean(axis=2)
    rows = np.nonzero((gray > 0.08).mean(axis=1) > 0.6)[0]
    cols = np.nonzero((gray[rows.min():rows.max() + 1] > 0.08).mean(axis=0) > 0.6)[0]
    y0, y1, x0, x1 = rows.min(), rows.max() + 1, cols.min(), cols.max() + 1
    field_rgb = rgb[y0:y1, x0:x1]
    s = work_scale(*field_rgb.shape[:2])
    img = resize_float(field_rgb, s)
    sat = img.max(axis=2) - img.min(axis=2)
    doppler = ndimage.binary_opening(sat > 0.25, iterations=1)
    kw = _common(ds, "US1_UNCR.dcm", path)
    kw["meta"].update(crop=[int(x0), int(y0), int(x1), int(y1)], crop_method="non-black rows/columns",
                      doppler_mask_method="colour saturation > 0.25 (derived)",
                      spacing_note="no calibration tag; 0.2 mm/px estimated from the 3 cm depth label")
    return Background(
        key="us-node", images={"default": img}, body_region="neck", sequence="power Doppler",
        spacing_mm=0.2 / s, spacing_estimated=True,
        structures=(StructMask("power Doppler flow", doppler, "region", "colour threshold (derived)"),),
        flip_ok=False, **kw,
    )


def _nm_bone(path: str) -> Background:
    ds = read_dicom(path)
    vals = modality_values(ds)
    img = percentile_window(vals, 1.0, 99.7)
    ys, xs = np.nonzero(img > 0.05)
    img = img[max(ys.min() - 8, 0):ys.max() + 9, max(xs.min() - 8, 0):xs.max() + 9]
    s = work_scale(*img.shape)
    img = resize_float(img, s)
    body = _body_mask(img, 0.08)
    uptake = body & (img > np.percentile(img[body], 50))
    kw = _common(ds, "JPEG2000_UNC.dcm", path)
    kw["meta"].update(body_mask_method=DERIVED, note="lossy JPEG 2000 (2097:1) per its header")
    return Background(
        key="nm-bone", images={"default": img}, body_region="whole body", plane="planar whole-body",
        sequence="Tc-99m bone scan", spacing_mm=_spacing(ds) / s,
        structures=(StructMask("body", body, "region", DERIVED),),
        host=erode(uptake, 1) & erode(body, 3), host_name="skeleton", lesion_family="bone_scan", flip_ok=False, **kw,
    )


DICOM_BACKGROUNDS: dict[str, tuple[str, Any, float]] = {
    "cr-chest": ("RG1_UNCR.dcm", _chest_cr, 2.0),
    "cr-tibia": ("RG3_UNCR.dcm", _tibia_cr, 0.5),
    "mr-shoulder": ("MR2_UNCR.dcm", _shoulder_mr, 1.0),
    "ct-head": ("693_UNCR.dcm", _head_ct, 2.0),
    "ct-abdomen": ("explicit_VR-UN.dcm", _abdomen_ct, 1.0),
    "mr-liver": ("MR-SIEMENS-DICOM-WithOverlays.dcm", _liver_mr, 0.7),
    "us-node": ("US1_UNCR.dcm", _us, 0.5),
    "nm-bone": ("JPEG2000_UNC.dcm", _nm_bone, 1.0),
}


def _make(key: str, name: str, fn: Any, weight: float) -> BackgroundDef:
    @functools.cache
    def load(view: int) -> Background:
        path = dicom_test_file(name)
        if path is None:
            raise BadInput("pydicom-data file not installed (pip install pydicom-data)", file=name,
                           field="background")
        return fn(path)

    return BackgroundDef(
        key=key, views=lambda: 1 if dicom_test_file(name) else 0, load=load, weight=weight,
        unavailable_reason=lambda: None if dicom_test_file(name) else f"{name} not found (pydicom-data missing)",
    )


for _key, (_name, _fn, _w) in DICOM_BACKGROUNDS.items():
    register_background(_make(_key, _name, _fn, _w))

LOADERS = {key: fn for key, (_n, fn, _w) in DICOM_BACKGROUNDS.items()}
