"""The sample source: backgrounds and their tags, lesion placement, boxes vs masks, determinism,
laterality under flips, untouched source files, BadInput for missing backgrounds, contact sheet."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
from scipy import ndimage

from medr2 import BadInput, Case
from medr2.bench.contact import cases_sheet
from medr2.images import ImageStore, load_image
from medr2.sources.base import get_source
from medr2.sources.sample import available_backgrounds
from medr2.sources.sample.background import BACKGROUNDS
from medr2.sources.sample.bg_dicom import dicom_test_file, read_dicom
from medr2.sources.sample.lesions import FAMILIES

# background key -> (modality, body_region, plane) expected from the tags / the slicing
EXPECTED = {
    "cr-chest": ("X-ray", "chest", "PA"),
    "cr-tibia": ("X-ray", "lower leg", "AP"),
    "mr-shoulder": ("MRI", "shoulder", "oblique"),  # ImageOrientationPatient 35 degrees off sagittal
    "ct-head": ("CT", "head", "axial"),
    "ct-abdomen": ("CT", "abdomen", "axial"),
    "mr-liver": ("MRI", "abdomen", "axial"),
    "us-node": ("ultrasound", "neck", None),
    "nm-bone": ("nuclear medicine", "whole body", "planar whole-body"),
    "mni152-axial": ("MRI", "head", "axial"),
    "mni152-coronal": ("MRI", "head", "coronal"),
    "mni152-sagittal": ("MRI", "head", "sagittal"),
    "fundus": ("fundus photography", "eye", None),
    "histology": ("histopathology", "colon", None),
}


@pytest.fixture(scope="module")
def realized(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Case], ImageStore]:
    store = ImageStore(tmp_path_factory.mktemp("bench"))
    src = get_source("sample")
    return [src.realize(s, store) for s in src.plan(11, 60)], store


def test_backgrounds_load_with_tags() -> None:
    avail = available_backgrounds()
    for key, (modality, region, plane) in EXPECTED.items():
        assert key in avail, key
        bg = BACKGROUNDS[key].load(0)
        assert (bg.modality, bg.body_region, bg.plane) == (modality, region, plane), key
        h, w = bg.shape
        assert max(h, w) <= 512
        for img in bg.images.values():
            assert img.dtype == np.float32 and img.min() >= 0.0 and img.max() <= 1.0
    assert BACKGROUNDS["cr-tibia"].load(0).diagnosis == "non-ossifying fibroma"
    assert BACKGROUNDS["mr-liver"].load(0).real_findings[0].mask.sum() > 50
    assert abs(BACKGROUNDS["ct-head"].load(0).spacing_mm * 512 / 512 - 0.478516) < 1e-4


def test_labelled_packages_give_real_diagnoses() -> None:
    avail = available_backgrounds()
    if "cxr-pneumonia" not in avail or "mri-braintumor" not in avail:
        pytest.skip("model packages not installed")
    dx = {BACKGROUNDS["cxr-pneumonia"].load(v).diagnosis for v in range(avail["cxr-pneumonia"])}
    assert dx == {"normal", "bacterial pneumonia"}
    dx = {BACKGROUNDS["mri-braintumor"].load(v).diagnosis for v in range(avail["mri-braintumor"])}
    assert dx == {"glioma", "meningioma", "pituitary tumour", "no tumour"}


def _mask(store: ImageStore, rel: str) -> np.ndarray:
    return load_image(store.path(rel), mode="L") > 127


def _host_in_output(case: Case) -> np.ndarray:
    bg = BACKGROUNDS[case.meta["background_key"]].load(case.meta["view"])
    x0, y0, x1, y1 = case.meta["crop_xyxy"]
    host = bg.host[y0:y1, x0:x1]
    return host[:, ::-1] if case.flipped else host


def test_lesions_inside_tissue_and_boxes_match_masks(realized: tuple[list[Case], ImageStore]) -> None:
    cases, store = realized
    classes = {c.key: c for family in FAMILIES.values() for c in family}
    n_lesions = 0
    for c in cases:
        assert c.width <= 512 and c.height <= 512
        img = load_image(store.path(c.image))
        assert img.shape[:2] == (c.height, c.width)
        for s in list(c.structures) + list(c.findings):
            m = _mask(store, s.mask)
            ys, xs = np.nonzero(m)
            assert s.box == (xs.min(), ys.min(), xs.max() + 1, ys.max() + 1), (c.case_id, s)
            assert s.area_px == m.sum()
        synthetic = [f for f in c.findings if f.synthetic]
        if synthetic:
            host = _host_in_output(c)
            organ = next((_mask(store, s.mask) for s in c.structures if s.name == "brain" and s.mask), None)
            for f in synthetic:
                m = _mask(store, f.mask)
                if classes[f.attributes["lesion_class"]].placement == "surface" and organ is not None:
                    # an extra-axial lesion lies on the organ's surface: inside its outline (never floating beyond
                    # it), its base on the surface
                    outline = ndimage.binary_fill_holes(ndimage.binary_closing(np.pad(organ, 12), iterations=12))
                    assert (m & ~outline[12:-12, 12:-12]).sum() == 0, c.case_id
                    assert (m & ~ndimage.binary_erosion(organ, iterations=2)).sum() >= 3, c.case_id
                    continue
                assert (m & ~host).sum() == 0, c.case_id
                # the shape its mask admits, or none where it shows none (issue 40, fix40k: read from the rendering)
                assert f.attributes["size_mm"] > 0 and "shape" in f.attributes and "rendered" in f.attributes
                n_lesions += 1
            assert {"findings", "diagnosis", "report"} <= set(c.synthetic_fields)
            assert c.report and "IMPRESSION" in c.report
        assert "quality" in c.synthetic_fields
    assert n_lesions >= 15


def test_laterality_convention_under_flip(realized: tuple[list[Case], ImageStore]) -> None:
    cases, _ = realized
    checked = 0
    for c in cases:
        for f in c.findings:
            side = f.attributes.get("laterality")
            if c.meta.get("side") or side not in ("left", "right") or c.plane == "sagittal":
                continue
            # radiological display: image left = patient right, unless the image is mirrored
            expect = {"right": "left", "left": "right"}[side]
            if c.flipped:
                expect = side
            assert f.attributes["image_side"] == expect, c.case_id
            checked += 1
    assert checked > 5


def test_patient_ids_group_views_of_one_real_image(realized: tuple[list[Case], ImageStore]) -> None:
    cases, _ = realized
    by_bg: dict[str, set[str]] = {}
    for c in cases:
        by_bg.setdefault(c.background or "", set()).add(c.patient_id)
    assert all(len(p) == 1 for p in by_bg.values())


def test_same_seed_same_bytes_other_seed_differs(tmp_path: Path) -> None:
    src = get_source("sample")

    def hashes(seed: int, root: Path) -> list[str]:
        store = ImageStore(root)
        return [src.realize(s, store).image_sha256 for s in src.plan(seed, 12)]

    a, b = hashes(5, tmp_path / "a"), hashes(5, tmp_path / "b")
    assert a == b
    assert sorted(p.name for p in (tmp_path / "a" / "images").iterdir()) == \
        sorted(p.name for p in (tmp_path / "b" / "images").iterdir())
    assert hashes(6, tmp_path / "c") != a
    assert [s.background for s in src.plan(5, 30)] == [s.background for s in src.plan(5, 30)]


def _file_hashes() -> dict[str, str]:
    paths = [dicom_test_file(n) for n in ("RG1_UNCR.dcm", "MR-SIEMENS-DICOM-WithOverlays.dcm", "693_UNCR.dcm")]
    for key in ("cxr-pneumonia", "mri-braintumor"):
        if key in available_backgrounds():
            paths.append(BACKGROUNDS[key].load(0).file)
    return {p: hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in paths if p}


def test_source_files_unchanged(tmp_path: Path) -> None:
    before = _file_hashes()
    src = get_source("sample:cr-chest,mr-liver,ct-head,cxr-pneumonia,mri-braintumor")
    store = ImageStore(tmp_path)
    for s in src.plan(1, 10):
        src.realize(s, store)
    assert _file_hashes() == before and before


def test_missing_or_corrupt_background_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInput) as e:
        read_dicom(tmp_path / "nothere.dcm")
    assert "nothere.dcm" in str(e.value)
    bad = tmp_path / "corrupt.dcm"
    bad.write_bytes(b"DICM" * 10)
    with pytest.raises(BadInput) as e:
        read_dicom(bad)
    assert "corrupt.dcm" in str(e.value)
    with pytest.raises(BadInput):
        get_source("sample:no-such-background")


def test_contact_sheet_draws_cases(realized: tuple[list[Case], ImageStore], tmp_path: Path) -> None:
    cases, store = realized
    out = cases_sheet(cases[:12], store.path, tmp_path / "sheet.png", cols=6)
    sheet = load_image(out)
    assert sheet.shape[0] == 2 * (256 + 46) and sheet.shape[1] == 6 * 256
    # finding boxes are drawn in red on some tile
    assert ((sheet[..., 0] == 255) & (sheet[..., 1] == 40) & (sheet[..., 2] == 40)).any()


def test_nuclei_windows_count_whole_real_instances(tmp_path: Path) -> None:
    """Each nuclei view holds exactly the nuclei its window contains, none cut by the window or the crop,
    so the s2.count answer is exact; the cases carry them as ``instance`` structures."""
    from medr2.sources.sample import bg_nuclei

    if "nuclei" not in available_backgrounds():
        pytest.skip("stardist wheel not installed")
    img, mask = bg_nuclei._data()
    windows = bg_nuclei._windows()
    assert {w[4] for w in windows} >= {1, 2, 3, 4, 5}
    for x0, y0, x1, y1, n in windows:
        inside = {int(v) for v in np.unique(mask[y0:y1, x0:x1])} - {0}
        assert len(inside) == n
        for i in inside:  # the whole nucleus lies in the window
            assert int((mask == i).sum()) == int((mask[y0:y1, x0:x1] == i).sum())
    store = ImageStore(tmp_path)
    src = get_source("sample:nuclei")
    for spec in src.plan(3, 12):
        case = src.realize(spec, store)
        n = case.meta.get("nuclei", None)
        inst = [s for s in case.structures if s.kind == "instance"]
        assert all(s.name == "nucleus" for s in inst)
        if n is not None:
            assert len(inst) == n, case.case_id
