"""The data readers: folder, coco, masks, dicom, nifti (plan/realize on fixtures in the real formats)."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from medr2 import BadInput
from medr2.images import ImageStore, load_image
from medr2.sources.base import get_source
from medr2.sources.coco import rle_counts_to_string, rle_decode, rle_encode_counts, rle_string_to_counts
from tests.interop_fixtures import gradient, make_dicom_folder, make_nifti_folder, realize_all, write_png

# --- folder --------------------------------------------------------------------------------------


def test_folder_class_per_folder(tmp_path: Path) -> None:
    data = tmp_path / "data"
    for cls in ("normal", "pneumonia"):
        for i in range(2):
            write_png(data / cls / f"{i}.png", gradient(20, 24, i))
    (data / "medr2.json").write_text(json.dumps({"defaults": {"modality": "X-ray"}, "license": "CC-BY-4.0"}))
    outside = tmp_path / "secret.png"
    write_png(outside, gradient(8, 8))
    os.symlink(outside, data / "normal" / "escape.png")
    cases, errors = realize_all(get_source(f"folder:{data}"), tmp_path / "bench")
    assert sorted(c.diagnosis for c in cases) == ["normal", "normal", "pneumonia", "pneumonia"]
    assert all(c.modality == "X-ray" and c.license == "CC-BY-4.0" for c in cases)
    assert len(errors) == 1 and "escapes" in errors[0].reason and errors[0].record == "normal/escape.png"


def test_folder_label_table_and_quarantine(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_png(data / "a.png", gradient(30, 40))
    write_png(data / "b.png", gradient(30, 40, 1))
    (data / "c.png").write_bytes(b"not a png")
    (data / "labels.csv").write_text(
        "image,modality,diagnosis,pixel_spacing_mm,findings,meta.site\n"
        'a.png,CT,cyst,0.8,"[{""label"": ""cyst"", ""box"": [5, 5, 15, 12]}]",north\n'
        'b.png,CT,cyst,0.8,"[{""label"": ""cyst"", ""box"": [5, 5, 55, 12]}]",north\n'
        "c.png,CT,normal,,,south\n"
        "../outside.png,CT,normal,,,south\n"
        "d.png,CT,normal,abc,,south\n")
    write_png(data / "d.png", gradient(10, 10))
    src = get_source(f"folder:{data}")
    cases, errors = realize_all(src, tmp_path / "bench")
    assert [c.meta["file"] for c in cases] == ["a.png"]
    c = cases[0]
    assert c.findings[0].label == "cyst" and c.findings[0].box == (5.0, 5.0, 15.0, 12.0)
    assert c.pixel_spacing_mm == 0.8 and c.meta["site"] == "north" and c.meta["patient_id_inferred"]
    reasons = {e.record: (e.field, e.reason) for e in errors}
    assert reasons["b.png"][0] == "findings[0].box" and "outside" in reasons["b.png"][1]
    assert reasons["c.png"][0] == "image"
    assert "escapes" in reasons["../outside.png"][1]
    assert reasons["d.png"][0] == "pixel_spacing_mm"
    assert src.plan(0, 2) == src.plan(0, 2) and len(src.plan(0, 2)) == 2
    assert c.absent == []  # no absent column: nothing stated absent


def test_folder_label_table_absent_column(tmp_path: Path) -> None:
    """A label table's ``absent`` column (``;``-separated, parsed as ``mimics`` is) states negative labels."""
    data = tmp_path / "data"
    write_png(data / "a.png", gradient(30, 40))
    write_png(data / "b.png", gradient(30, 40, 1))
    (data / "labels.csv").write_text("image,modality,diagnosis,mimics,absent\n"
                                     "a.png,X-ray,pneumonia,tuberculosis,pleural effusion; pneumothorax \n"
                                     "b.png,X-ray,pneumonia,,\n")
    cases, errors = realize_all(get_source(f"folder:{data}"), tmp_path / "bench")
    by = {c.meta["file"]: c for c in cases}
    assert not errors and by["a.png"].absent == ["pleural effusion", "pneumothorax"] and by["b.png"].absent == []
    assert by["a.png"].mimics == ["tuberculosis"]


def test_folder_reader_level_errors(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="does not exist"):
        get_source(f"folder:{tmp_path / 'nope'}")
    data = tmp_path / "d"
    write_png(data / "x.png", gradient(5, 5))
    (data / "labels.csv").write_text("image,diagnossis\nx.png,a\n")
    with pytest.raises(BadInput, match="unknown column 'diagnossis'"):
        get_source(f"folder:{data}").plan(0, None)
    (data / "medr2.json").write_text(json.dumps({"acess": "open"}))
    with pytest.raises(BadInput, match="unknown mapping keys"):
        get_source(f"folder:{data}")


def test_folder_missing_modality_is_quarantined(tmp_path: Path) -> None:
    write_png(tmp_path / "d" / "cls" / "x.png", gradient(5, 5))
    _, errors = realize_all(get_source(f"folder:{tmp_path / 'd'}"), tmp_path / "b")
    assert errors[0].field == "modality"


# --- COCO ----------------------------------------------------------------------------------------


def test_rle_roundtrip_and_known_string() -> None:
    rng = np.random.default_rng(3)
    m = rng.random((13, 17)) > 0.6
    counts = rle_encode_counts(m)
    assert np.array_equal(rle_decode(counts, 13, 17), m)
    s = rle_counts_to_string(counts)
    assert rle_string_to_counts(s) == counts and np.array_equal(rle_decode(s, 13, 17), m)
    # from the COCO mask API spec: counts [0, 1] etc. small values are a single char each (value + 48)
    assert rle_counts_to_string([3, 2, 4]) == "324"
    # deltas to counts[i-2] from the 4th run on, negative deltas sign-extended
    assert rle_string_to_counts(rle_counts_to_string([5, 40, 2, 7, 100, 1])) == [5, 40, 2, 7, 100, 1]


def test_rle_matches_pycocotools_if_installed() -> None:
    mask_util = pytest.importorskip("pycocotools.mask")
    rng = np.random.default_rng(5)
    m = rng.random((21, 9)) > 0.5
    ref = mask_util.encode(np.asfortranarray(m.astype(np.uint8)))
    assert rle_counts_to_string(rle_encode_counts(m)) == ref["counts"].decode()


def _coco_fixture(root: Path) -> None:
    write_png(root / "imgs" / "1.png", gradient(40, 50))
    write_png(root / "imgs" / "2.png", gradient(40, 50, 2))
    mask = np.zeros((40, 50), bool)
    mask[10:20, 30:45] = True
    coco = {
        "images": [{"id": 1, "file_name": "1.png", "width": 50, "height": 40, "modality": "CT", "diagnosis": "cyst"},
                   {"id": 2, "file_name": "2.png", "width": 60, "height": 40},
                   {"id": 3, "file_name": "../../etc/passwd", "width": 5, "height": 5}],
        "annotations": [
            {"id": 10, "image_id": 1, "category_id": 1, "bbox": [2, 3, 20, 15], "area": 300, "iscrowd": 0,
             "segmentation": [[2, 3, 22, 3, 22, 18, 2, 18]], "attributes": {"margin": "smooth"}},
            {"id": 11, "image_id": 1, "category_id": 2, "bbox": [30, 10, 15, 10], "area": 150, "iscrowd": 1,
             "segmentation": {"size": [40, 50], "counts": rle_counts_to_string(rle_encode_counts(mask))}},
            {"id": 12, "image_id": 99, "category_id": 1, "bbox": [0, 0, 1, 1]},
        ],
        "categories": [{"id": 1, "name": "cyst", "supercategory": "lesion"},
                       {"id": 2, "name": "kidney", "supercategory": "anatomy"}],
    }
    (root / "ann.json").write_text(json.dumps(coco))
    (root / "medr2.json").write_text(json.dumps({"annotations": "ann.json", "images_dir": "imgs",
                                                 "structures": ["kidney"], "defaults": {"modality": "CT"}}))


def test_coco_reader(tmp_path: Path) -> None:
    _coco_fixture(tmp_path / "c")
    cases, errors = realize_all(get_source(f"coco:{tmp_path / 'c'}"), tmp_path / "b")
    assert len(cases) == 1
    c = cases[0]
    assert c.diagnosis == "cyst" and c.findings[0].box == (2.0, 3.0, 22.0, 18.0)
    assert c.findings[0].attributes == {"margin": "smooth"} and c.findings[0].mask
    kid = c.structures[0]
    assert kid.name == "kidney" and kid.area_px == 150.0
    m = load_image(tmp_path / "b" / kid.mask) > 0
    assert m[10:20, 30:45].all() and m.sum() == 150
    fields = sorted((e.field or "") for e in errors)
    assert fields == ["annotations.image_id", "images.file_name", "images.width"]


# --- masks ---------------------------------------------------------------------------------------


def test_masks_semantic_and_instances(tmp_path: Path) -> None:
    d = tmp_path / "m"
    write_png(d / "images" / "a.jpg", gradient(30, 30))
    lm = np.zeros((30, 30), np.uint8)
    lm[2:12, 2:12] = 1
    lm[15:25, 15:28] = 2
    write_png(d / "masks" / "a.png", lm)
    write_png(d / "images" / "b.png", gradient(30, 30, 1))
    bad = lm.copy()
    bad[0, 0] = 7
    write_png(d / "masks" / "b.png", bad)
    write_png(d / "images" / "c.png", gradient(30, 30, 2))  # no mask
    (d / "labels.json").write_text(json.dumps({"1": "liver", "2": {"name": "mass", "kind": "finding",
                                                                    "attributes": {"shape": "oval"}}}))
    (d / "medr2.json").write_text(json.dumps({"defaults": {"modality": "ultrasound"}}))
    cases, errors = realize_all(get_source(f"masks:{d}"), tmp_path / "b")
    assert len(cases) == 1
    c = cases[0]
    assert [s.name for s in c.structures] == ["liver"] and c.structures[0].box == (2.0, 2.0, 12.0, 12.0)
    assert c.findings[0].label == "mass" and c.findings[0].attributes == {"shape": "oval"}
    assert {e.record for e in errors} == {"images/b.png", "images/c.png"}

    inst = tmp_path / "i"
    write_png(inst / "images" / "n.png", gradient(20, 20))
    lab16 = np.zeros((20, 20), np.uint16)
    lab16[1:4, 1:4], lab16[10:15, 10:12], lab16[16:19, 2:6] = 300, 301, 302
    from PIL import Image

    (inst / "masks").mkdir(parents=True)
    Image.fromarray(lab16).save(inst / "masks" / "n.png")
    (inst / "medr2.json").write_text(json.dumps({"mode": "instances", "instance_label": "nucleus",
                                                 "defaults": {"modality": "microscopy"}}))
    cases, errors = realize_all(get_source(f"masks:{inst}"), tmp_path / "b2")
    assert not errors
    assert [(s.name, s.kind, s.area_px) for s in cases[0].structures] == [
        ("nucleus", "instance", 9.0), ("nucleus", "instance", 10.0), ("nucleus", "instance", 12.0)]


# --- DICOM ---------------------------------------------------------------------------------------


def test_dicom_reader(tmp_path: Path) -> None:
    d = tmp_path / "dcm"
    make_dicom_folder(d)
    (d / "medr2.json").write_text(json.dumps({"license": "internal", "access": "credentialed"}))
    cases, errors = realize_all(get_source(f"dicom:{d}"), tmp_path / "b")
    by = {c.meta["file"]: c for c in cases}
    ct = by["ct/slice1.dcm"]
    assert (ct.modality, ct.plane, ct.body_region, ct.pixel_spacing_mm) == ("CT", "axial", "abdomen", 0.7)
    assert ct.patient_id == "P-CT" and ct.access == "credentialed"
    assert [s.name for s in ct.structures] == ["liver"] and [f.label for f in ct.findings] == ["lesion"]
    assert ct.findings[0].box == (26.0, 24.0, 34.0, 30.0)
    assert ct.meta["window_center"] == 40.0
    img = load_image(tmp_path / "b" / ct.image)
    assert img[30, 30] > img[5, 5]  # the brighter block survives windowing (HU 1200-1024+... vs background)
    mr = [c for k, c in by.items() if k.startswith("mr/cine.dcm#")]
    assert len(mr) == 3 and all(c.plane == "sagittal" and c.modality == "MRI" for c in mr)
    tear = [f for c in mr for f in c.findings]
    assert tear and tear[0].label == "meniscal tear" and tear[0].box == (10.0, 10.0, 20.0, 21.0)
    assert tear[0].area_px == 110.0  # the outline is filled
    cr = by["cr/chest.dcm"]
    assert cr.plane == "PA" and cr.modality == "X-ray" and cr.pixel_spacing_mm == 0.2
    crimg = load_image(tmp_path / "b" / cr.image)
    assert crimg[0, 0] == 255 and crimg[0, -1] == 0  # MONOCHROME1 inverted
    assert [e.file for e in errors] == ["broken.dcm"]


def test_dicom_real_overlay_file(tmp_path: Path) -> None:
    from pydicom.data import get_testdata_file

    p = get_testdata_file("MR-SIEMENS-DICOM-WithOverlays.dcm", download=False)
    if p is None:
        pytest.skip("pydicom-data test file not installed")
    d = tmp_path / "real"
    d.mkdir()
    (d / "liver.dcm").write_bytes(Path(p).read_bytes())
    cases, errors = realize_all(get_source(f"dicom:{d}"), tmp_path / "b")
    assert not errors and cases[0].modality == "MRI" and cases[0].findings


# --- NIfTI ---------------------------------------------------------------------------------------


def test_nifti_reader(tmp_path: Path) -> None:
    d = tmp_path / "nii"
    make_nifti_folder(d)
    src = get_source(f"nifti:{d}")
    cases, errors = realize_all(src, tmp_path / "b")
    assert not errors
    planes = sorted({c.plane for c in cases})
    assert planes == ["axial", "coronal", "sagittal"] and len(cases) == 6
    assert all(c.patient_id == "brain.nii.gz" and c.modality == "MRI" for c in cases)
    ax = next(c for c in cases if c.plane == "axial")
    names = {s.name: s for s in ax.structures}
    # radiological display: the patient's right (x large in RAS) is on the image left (the LUT's Left-Hemisphere read)
    assert names["right cerebral hemisphere"].box[0] < names["left cerebral hemisphere"].box[0]
    # voxels 1.0 x 1.2 x 2.0 mm: every slice is shown on square pixels of its finer spacing (issue 43)
    assert ax.pixel_spacing_mm == pytest.approx(1.0, rel=0.02)
    assert ax.meta["voxel_spacing_rc_mm"] == pytest.approx([1.2, 1.0])
    sag = [c for c in cases if c.plane == "sagittal"]
    assert any(f.label == "Tumour" for c in cases for f in c.findings)
    assert all(c.width == 28 and c.height == 40 for c in sag)  # (y, z) -> cols y, rows z: 24 x 2.0 mm / 1.2 mm
    assert all(c.pixel_spacing_mm == pytest.approx(1.2) for c in sag)
    assert src.plan(1, 3) == src.plan(1, 3)


# --- end to end: build a bench from each reader's fixture ----------------------------------------


def _build(spec: str, out: Path) -> tuple[set[str], object]:
    from medr2.bench.format import load_bench
    from medr2.builder.pipeline import build_bench

    result = build_bench(spec, out, seed=0, workers=1)
    bench = load_bench(out)
    return {it.task for it in bench.items}, result


def test_build_from_readers(tmp_path: Path) -> None:
    d = tmp_path / "dcm"
    make_dicom_folder(d)
    tasks, _ = _build(f"dicom:{d}", tmp_path / "b_dcm")
    assert {"s1.modality", "s1.plane", "s1.region"} <= tasks
    assert {"s2.organ_box", "s3.lesion_box"} & tasks

    n = tmp_path / "nii"
    make_nifti_folder(n)
    tasks, _ = _build(f"nifti:{n}", tmp_path / "b_nii")
    assert {"s1.plane", "s2.organ_box"} <= tasks

    c = tmp_path / "coco"
    _coco_fixture(c)
    tasks, _ = _build(f"coco:{c}", tmp_path / "b_coco")
    assert "s3.lesion_box" in tasks
    from medr2.errors import Quarantine

    q = Quarantine.read(tmp_path / "b_coco" / "quarantine.jsonl")
    assert {e.field for e in q} >= {"annotations.image_id", "images.file_name", "images.width"}


def _oblique_nifti(root: Path) -> tuple[Path, Path]:
    """A volume stored LPS-like with permuted axes (array axes -> S, A, R, two flipped) and its labels."""
    import nibabel as nib

    root.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(5)
    vol = rng.normal(100, 20, (12, 10, 14)).astype(np.float32)
    vol[0, 0, 0] = np.nan
    lab = np.zeros(vol.shape, np.uint8)
    lab[2:5, 3:7, 4:9] = 1
    lab[7:9, 1:3, 10:12] = 2
    aff = np.array([[0, 0, -1.5, 20], [0, 2.0, 0, -5], [-1.0, 0, 0, 7], [0, 0, 0, 1]])
    nib.save(nib.Nifti1Image(vol, aff), root / "obl.nii.gz")
    (root / "labels").mkdir(exist_ok=True)
    nib.save(nib.Nifti1Image(lab, aff), root / "labels" / "obl.nii.gz")
    return root / "obl.nii.gz", root / "labels" / "obl.nii.gz"


def test_nifti_lazy_volume_matches_canonical(tmp_path: Path) -> None:
    import nibabel as nib

    from medr2.sources.nifti_volume import open_volume

    vpath, lpath = _oblique_nifti(tmp_path / "nii")
    for path in (vpath, lpath):
        can = nib.as_closest_canonical(nib.load(path))
        ref = np.asanyarray(can.dataobj)
        v = open_volume(path, record="r", field_name="volume")
        assert v.ras_shape == ref.shape and v.ras_axis != (0, 1, 2)
        assert v.zooms == tuple(float(z) for z in can.header.get_zooms()[:3])
        for axis in range(3):
            for i in (0, ref.shape[axis] // 2, ref.shape[axis] - 1):
                np.testing.assert_array_equal(v.slab(axis, i), np.take(ref, i, axis=axis))
        ext = v.nonzero_extents()
        for axis in range(3):
            other = tuple(a for a in range(3) if a != axis)
            np.testing.assert_array_equal(ext[axis], (ref != 0).any(axis=other))
    v = open_volume(vpath, record="r", field_name="volume")
    data = np.asanyarray(nib.load(vpath).dataobj)
    assert v.window((0.5, 99.5)) == tuple(float(x) for x in np.percentile(data[np.isfinite(data)], (0.5, 99.5)))


def test_nifti_reader_never_loads_a_whole_volume(tmp_path: Path) -> None:
    """plan + realize on a 21 MB volume (and its label volume) allocate far less than the volume."""
    import tracemalloc

    import nibabel as nib

    d = tmp_path / "big"
    (d / "labels").mkdir(parents=True)
    shape = (256, 256, 160)
    vol = np.add.outer(np.add.outer(np.arange(256), np.arange(256)), np.arange(160)).astype(np.int16)
    lab = np.zeros(shape, np.uint8)
    lab[100:140, 90:150, 60:100] = 1
    aff = np.diag([0.8, 0.8, 1.5, 1.0])
    nib.save(nib.Nifti1Image(vol, aff), d / "big.nii.gz")
    nib.save(nib.Nifti1Image(lab, aff), d / "labels" / "big.nii.gz")
    (d / "medr2.json").write_text(json.dumps({"defaults": {"modality": "CT"}, "slices_per_plane": 1,
                                              "min_area_px": 4}))
    whole = vol.nbytes
    del vol, lab
    src = get_source(f"nifti:{d}")
    tracemalloc.start()
    try:
        specs = src.plan(0, None)
        cases = [src.realize(s, ImageStore(tmp_path / "out")) for s in specs]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [c.plane for c in cases] == ["axial", "coronal", "sagittal"]
    assert all(c.structures and c.structures[0].name == "label 1" for c in cases)
    assert peak < whole / 3, f"peak {peak / 1e6:.1f} MB for a {whole / 1e6:.1f} MB volume"


# --- several sources, one bench (issue 20 part 3) -------------------------------------------------------


def _class_folder(root: Path, n: int) -> None:
    for i in range(n):
        write_png(root / ("normal" if i % 2 else "pneumonia") / f"{i}.png", gradient(24, 24, i))
    (root / "medr2.json").write_text(json.dumps({"source": "cxr-folder", "defaults": {"modality": "X-ray"}}))


def test_multi_source_build_quotas_coverage_and_determinism(tmp_path: Path) -> None:
    from medr2.bench.format import load_bench
    from medr2.bench.info import bench_info
    from medr2.builder.pipeline import build_bench
    from medr2.sources.multi import MultiSource, parse_quotas, source_for

    _class_folder(tmp_path / "fold", 6)
    d = tmp_path / "dcm"
    make_dicom_folder(d)
    specs = [f"folder:{tmp_path / 'fold'}", f"dicom:{d}"]
    assert source_for(specs[:1]) == specs[0]  # one source: the build is what it always was
    out = []
    for k in range(2):
        build_bench(MultiSource(specs, parse_quotas(["cxr-folder=4"])), tmp_path / f"b{k}", seed=3, workers=1)
        out.append((tmp_path / f"b{k}" / "items.parquet").read_bytes())
    assert out[0] == out[1]  # same seed, same bytes
    bench = load_bench(tmp_path / "b0")
    per_source = Counter(c.source for c in bench.cases)
    assert per_source["cxr-folder"] == 4 and len(per_source) == 2
    info = bench_info(tmp_path / "b0")
    assert info["build"]["sources"] == specs and info["build"]["quotas"] == {specs[0]: 4}
    cov = info["coverage"]
    assert set(cov["sources"]) == set(per_source)
    assert cov["tasks"]["s1.plane"].get("cxr-folder", 0) == 0 and cov["tasks"]["s1.plane"]
    clean = Counter((it.task, it.source) for it in bench.items if it.variant == "clean")
    assert {(t, s): n for t, row in cov["tasks"].items() for s, n in row.items()} == dict(clean)
    assert "s4.report" in cov["unsupported"] and not set(cov["unsupported"]) & set(cov["tasks"])
    with pytest.raises(BadInput, match="names no source"):
        MultiSource(specs, parse_quotas(["nope=1"]))
    with pytest.raises(BadInput, match="at least 1"):
        parse_quotas(["folder=0"])
