"""Readers for public datasets in their released layouts (medr2.sources.datasets): each built into a
bench from a tiny fixture in the real layout (tests/dataset_fixtures.py), with the tasks its annotations
support, patient-level splits, one dataset-level error (exit 2 naming file and field) and one bad row
(quarantined with its reason)."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st

from medr2 import BadInput, Case
from medr2.bench import load_bench
from medr2.builder.pipeline import build_bench
from medr2.errors import Quarantine, QuarantineEntry
from medr2.images import load_image
from medr2.sources.base import get_source
from medr2.sources.datasets._base import fit_box, fuse_rater_boxes, iou
from medr2.sources.datasets.cbis_ddsm import CbisDdsmSource
from medr2.tasks.contract import states_absent
from tests import dataset_fixtures as F
from tests.interop_fixtures import realize_all


def _build(tmp: Path, spec: str) -> tuple[list[Case], set[str], list[QuarantineEntry]]:
    out = tmp / "bench"
    build_bench(spec, out, seed=0, workers=1)
    b = load_bench(out)
    q = out / "quarantine.jsonl"
    return list(b.cases), {i.task for i in b.items}, Quarantine.read(q) if q.exists() else []


def _build_documented(tmp: Path, make: Callable[[Path], object], source: str, folder: str,
                      n_cases: int) -> tuple[list[Case], set[str]]:
    """``source`` built from its fixture (``make`` writes it to ``tmp / folder``): ``n_cases`` cases, no record
    quarantined, and the tasks the coverage table of the docs marks for it."""
    make(tmp / folder)
    cases, tasks, q = _build(tmp, f"{source}:{tmp / folder}")
    assert tasks == _doc_tasks(source)  # the coverage table in the docs
    assert len(cases) == n_cases and not q
    return cases, tasks


DOCS = Path(__file__).resolve().parents[1] / "docs" / "bring-your-own-data.md"


def _doc_tasks(column: str) -> set[str]:
    """The tasks the coverage table of docs/bring-your-own-data.md marks ✓ (built from the fixture) for a
    reader column; a bracketed (✓) needs data the fixture does not carry."""
    rows = [line.split("|")[1:-1] for line in DOCS.read_text("utf-8").splitlines()
            if line.startswith("| task |") or re.match(r"\| s\d\.", line)]
    header = [c.strip() for c in rows[0]]
    j = header.index(column)
    return {r[0].strip() for r in rows[1:] if r[j].strip() == "✓"}


def _patients_in_one_split(cases: list[Case]) -> None:
    splits: dict[str, set[str | None]] = defaultdict(set)
    for c in cases:
        splits[c.patient_id].add(c.split)
    assert all(len(s) == 1 for s in splits.values()), splits


def _csv_drop_column(path: Path, col: str) -> None:
    import csv

    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    i = rows[0].index(col)
    F.write_csv(path, [c for j, c in enumerate(rows[0]) if j != i], [[v for j, v in enumerate(r) if j != i]
                                                                     for r in rows[1:]])


def _csv_set(path: Path, row: int, col: str, value: str) -> None:
    import csv

    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    rows[row][rows[0].index(col)] = value
    F.write_csv(path, rows[0], rows[1:])


# --- NIH ChestX-ray14 ----------------------------------------------------------------------------------


def test_nih_cxr14(tmp_path: Path) -> None:
    cases, tasks = _build_documented(tmp_path, F.make_nih, "nih-cxr14", "nih", 10)
    by = {c.meta["file"]: c for c in cases}
    c = by["00000001_000.png"]
    assert c.patient_id == "1" and c.plane == "PA" and c.modality == "X-ray" and c.diagnosis == "cardiomegaly"
    assert c.findings[0].label == "cardiomegaly" and c.findings[0].box == (10.5, 20.0, 50.5, 50.25)
    assert c.pixel_spacing_mm == pytest.approx(0.143 * 2500 / 64)
    assert by["00000003_000.png"].findings[0].label == "infiltration"  # 'Infiltrate' in BBox_List
    assert by["00000001_001.png"].diagnosis is None and by["00000001_001.png"].meta["image_labels"] == [
        "cardiomegaly", "effusion"]
    assert by["00000001_002.png"].diagnosis == "normal" and by["00000001_002.png"].plane == "AP"
    assert by["00000004_000.png"].diagnosis == "pleural thickening"
    # the official patient-wise split lists are followed; patients never straddle splits
    assert {c.split for c in cases if c.patient_id in ("3", "6")} == {"test"}
    assert {c.split for c in cases if c.patient_id not in ("3", "6")} == {"train"}
    _patients_in_one_split(cases)
    assert {"s1.modality", "s1.plane", "s1.region", "s3.lesion_box", "s4.diagnosis", "s3.abnormal"} <= tasks


ISIC_GT = "ISIC2018_Task3_Training_GroundTruth/ISIC2018_Task3_Training_GroundTruth.csv"
# per reader: a bad value in one row -> that record quarantined (the rest built), a missing column -> BadInput
# naming file and field. (source, fixture, [csv, row, column, value], cases left, (record, field) quarantined,
# in its reason, [csv, column] dropped)
BAD_INPUTS = [
    ("nih-cxr14", F.make_nih, ("BBox_List_2017.csv", 2, "Bbox [x", "abc"), 9, ("00000003_000.png", "Bbox [x"),
     "not a number", ("Data_Entry_2017.csv", "Patient ID")),
    ("rsna-pneumonia", F.make_rsna, ("stage_2_train_labels.csv", 3, "Target", "1"),  # a 'Normal' patient, Target 1
     4, ("00313ee0-9eaa-42f4-b0ab-c148ed3241cd", "Target"), "contradicts",
     ("stage_2_detailed_class_info.csv", "class")),
    ("vindr-cxr", F.make_vindr, ("annotations/annotations_train.csv", 1, "x_min", "n/a"), 4, ("train/a1b2", "x_min"),
     "not a number", ("annotations/annotations_train.csv", "class_name")),
    ("isic", F.make_isic, (ISIC_GT, 2, "MEL", "1.0"),  # ISIC_0024307 becomes NV and MEL
     6, ("ISIC_0024307", "MEL,NV,BCC,AKIEC,BKL,DF,VASC"), "2 positive", (ISIC_GT, "image")),
    ("cbis-ddsm", F.make_cbis, ("mass_case_description_test_set.csv", 1, "pathology", "MAYBE"), 2,
     ("P_00016_LEFT_CC abnormality 1 (mass)", "pathology"), "MAYBE",
     ("calc_case_description_train_set.csv", "calc distribution")),
    ("iu-xray", F.make_iu, ("indiana_projections.csv", 3, "uid", "99"), 4, ("2_IM-0652-1001.dcm.png", "uid"),
     "no row in indiana_reports.csv", ("indiana_projections.csv", "projection")),
]


@pytest.mark.parametrize(("source", "make", "edit", "n_cases", "quarantined", "reason", "drop"), BAD_INPUTS,
                         ids=[r[0] for r in BAD_INPUTS])
def test_bad_row_is_quarantined_and_missing_column_refused(
        tmp_path: Path, source: str, make: Callable[[Path], object], edit: tuple[str, int, str, str], n_cases: int,
        quarantined: tuple[str, str], reason: str, drop: tuple[str, str]) -> None:
    root = tmp_path / "data"
    make(root)
    rel, row, col, value = edit
    _csv_set(root / rel, row, col, value)
    cases, _, q = _build(tmp_path, f"{source}:{root}")
    assert len(cases) == n_cases and [(e.record, e.field) for e in q] == [quarantined] and reason in q[0].reason
    rel, col = drop
    _csv_drop_column(root / rel, col)
    with pytest.raises(BadInput) as ei:
        get_source(f"{source}:{root}").plan(0, None)
    assert ei.value.field == col and str(ei.value.file).endswith(Path(rel).name)


def test_dataset_reader_error_exits_2_on_the_command_line(tmp_path: Path) -> None:
    root = tmp_path / "nih"
    F.make_nih(root)
    _csv_drop_column(root / "Data_Entry_2017.csv", "Finding Labels")
    r = subprocess.run([sys.executable, "-m", "medr2.cli", "build", "--source", f"nih-cxr14:{root}", "--out",
                        str(tmp_path / "b")], capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    text = (r.stderr + r.stdout).replace("\n", "")  # the console wraps long lines
    assert "Data_Entry_2017.csv" in text and "field=Finding Labels" in text and "Traceback" not in text


# --- RSNA Pneumonia ------------------------------------------------------------------------------------


def test_rsna_pneumonia(tmp_path: Path) -> None:
    cases, tasks = _build_documented(tmp_path, F.make_rsna, "rsna-pneumonia", "rsna", 5)
    by = {c.patient_id: c for c in cases}
    c = by["0004cfab-14fd-4e49-80ba-63a80b6bddd6"]
    assert c.diagnosis == "pneumonia" and [f.box for f in c.findings] == [(10, 12, 30, 40), (35, 12, 55, 40)]
    assert c.modality == "X-ray" and c.plane == "AP" and c.pixel_spacing_mm == pytest.approx(0.14)
    assert c.meta["findings_complete"] is True and c.meta["sex"] == "F"
    nn = by["00322d4d-1c29-4943-afc9-b6754be640eb"]
    assert nn.diagnosis == "not normal, no lung opacity" and nn.meta["findings_complete"] is False
    # the class states lung opacity and pneumonia absent on an incomplete list; other findings stay unknown
    assert nn.absent == ["lung opacity", "pneumonia"] and c.absent == []
    assert states_absent(nn, "consolidation") and not states_absent(nn, "pleural effusion")
    assert by["00313ee0-9eaa-42f4-b0ab-c148ed3241cd"].diagnosis == "normal"
    assert {"s3.lesion_box", "s3.count", "s3.abnormal", "s4.diagnosis", "s1.plane"} <= tasks
    _patients_in_one_split(cases)


# --- VinDr-CXR -----------------------------------------------------------------------------------------


def test_vindr_cxr_fuses_rater_boxes(tmp_path: Path) -> None:
    cases, tasks = _build_documented(tmp_path, F.make_vindr, "vindr-cxr", "v", 5)
    by = {c.meta["image_id"]: c for c in cases}
    a = by["a1b2"]
    got = {(f.label, f.box, tuple(f.attributes["raters"])) for f in a.findings}
    assert got == {("nodule/mass", (11.0, 10.5, 31.0, 30.5), ("R8", "R9")),  # 2 of 3 agree: mean box
                   ("cardiomegaly", (20.0, 40.0, 50.0, 58.0), ("R10", "R8", "R9"))}
    assert a.meta["boxes_dropped"] == 2  # R10's lone nodule and aortic enlargement
    assert a.diagnosis == "lung tumor" and a.split == "train" and a.access == "credentialed"
    assert by["c3d4"].diagnosis == "normal" and not by["c3d4"].findings
    assert by["e5f6"].diagnosis is None  # no global label has a majority
    assert by["g7h8"].split == "test" and by["g7h8"].findings[0].box == (20, 40, 50, 58)
    assert by["g7h8"].meta["box_fusion"] == "consensus"
    assert {"s3.lesion_box", "s3.count", "s3.absent_finding", "s4.multilabel", "s3.abnormal"} <= tasks
    # a global label every rater marked 0 is stated absent; one a rater set (e5f6's tuberculosis) is not
    assert a.absent == ["copd", "pneumonia", "tuberculosis"]
    assert by["e5f6"].absent == ["copd", "lung tumor", "pneumonia"]


def test_vindr_image_level_only_and_plane_pa(tmp_path: Path) -> None:
    """An image in image_labels_train.csv with no box row is a case (its global labels, finding list not
    known), counted in the source report; every VinDr-CXR image is PA (Nguyen et al. 2022, Sci. Data 9:429)."""
    F.make_vindr_label_only(tmp_path / "v")
    out = tmp_path / "bench"
    build_bench(f"vindr-cxr:{tmp_path / 'v'}", out, seed=0, workers=1)
    b = load_bench(out)
    by = {c.meta["image_id"]: c for c in b.cases}
    assert len(by) == 6 and {c.plane for c in by.values()} == {"PA"}
    k = by["k1l2"]
    assert k.diagnosis == "copd" and not k.findings and k.meta["findings_complete"] is False
    assert all(c.meta["findings_complete"] for i, c in by.items() if i != "k1l2")
    notes = b.manifest["build"]["source_report"]["notes"]
    assert notes == {"images only in image_labels_train.csv (no box row: finding list marked incomplete)": 1}
    assert not any(i.case_id == k.case_id and i.task == "s3.count" for i in b.items)
    # its global labels every rater marked 0 are stated absent: the presence question's "no" names one of them
    assert k.absent == ["lung tumor", "pneumonia", "tuberculosis"]
    noes = [i for i in b.items if i.case_id == k.case_id and i.task == "s3.absent_finding" and i.answer == "no"
            and i.variant == "clean"]
    assert noes and all(any(a in i.question.lower() for a in k.absent) for i in noes)


def _box(draw: st.DrawFn) -> tuple[float, float, float, float]:
    x, y = draw(st.integers(0, 50)), draw(st.integers(0, 50))
    return (float(x), float(y), float(x + draw(st.integers(1, 30))), float(y + draw(st.integers(1, 30))))


@given(st.lists(st.tuples(st.sampled_from(["R1", "R2", "R3"]), st.composite(_box)()), max_size=12))
def test_fusion_rule_properties(boxes: list[tuple[str, tuple[float, float, float, float]]]) -> None:
    kept, dropped = fuse_rater_boxes(boxes, 3)
    assert sum(len(c.raters) for c in kept + dropped) == len(boxes)  # every box in exactly one cluster
    for c in kept + dropped:
        assert len(set(c.raters)) == len(c.raters)  # one box per rater per cluster
    assert all(len(c.raters) >= 2 for c in kept) and all(len(c.raters) < 2 for c in dropped)
    for c in kept:
        x1, y1, x2, y2 = c.box
        assert x2 > x1 and y2 > y1
    assert fuse_rater_boxes(boxes, 3) == fuse_rater_boxes(list(reversed(boxes)), 3)  # input order is irrelevant


@given(st.tuples(*[st.floats(-20, 120, allow_nan=False)] * 4), st.integers(1, 100), st.integers(1, 100))
def test_fit_box_is_inside_or_refused(box: tuple[float, float, float, float], w: int, h: int) -> None:
    try:
        (x1, y1, x2, y2), clipped = fit_box(box, w, h, file="f", record="r", field_name="box")
    except BadInput as e:
        assert e.field == "box" and e.record == "r"
        return
    assert 0 <= x1 < x2 <= w and 0 <= y1 < y2 <= h
    assert clipped == ((x1, y1, x2, y2) != box)
    assert max(abs(a - b) for a, b in zip((x1, y1, x2, y2), box, strict=True)) <= 0.01 * max(w, h)


def test_iou() -> None:
    assert iou((0, 0, 10, 10), (0, 0, 10, 10)) == 1.0
    assert iou((0, 0, 10, 10), (5, 0, 15, 10)) == pytest.approx(50 / 150)
    assert iou((0, 0, 1, 1), (2, 2, 3, 3)) == 0.0


# --- Medical Segmentation Decathlon --------------------------------------------------------------------


def test_msd_brain_tumour_4d(tmp_path: Path) -> None:
    root = tmp_path / "Task01_BrainTumour"
    F.make_msd_brain(root)
    cases, tasks, q = _build(tmp_path, f"msd:{root}")
    assert tasks == _doc_tasks("msd (tumour)")  # the coverage table in the docs
    assert len(cases) == 6  # subject 1: 2 channels x 3 planes
    assert [(e.record, e.field) for e in q] == [("imagesTr/BRATS_002.nii.gz", "label")]  # its label file is missing
    assert "label volume not found" in q[0].reason
    assert {c.sequence for c in cases} == {"FLAIR", "T1-weighted"} and {c.modality for c in cases} == {"MRI"}
    assert {c.plane for c in cases} == {"axial", "coronal", "sagittal"}
    assert all(c.patient_id == "BRATS_001" and c.body_region == "head" for c in cases)
    assert cases[0].source == "MSD BRATS" and cases[0].license == "CC-BY-SA 4.0"
    ax = next(c for c in cases if c.plane == "axial" and c.sequence == "FLAIR")
    assert sorted(f.label for f in ax.findings) == ["edema", "enhancing tumour"] and all(f.mask for f in ax.findings)
    assert {"s1.sequence", "s1.plane", "s3.lesion_box"} <= tasks
    assert "s3.finding_type" not in tasks  # the label map's sub-regions: finding labels not complete
    assert "s3.count" not in tasks  # sub-regions of one tumour are not counted as lesions


def test_msd_spleen_ct_and_bad_dataset_json(tmp_path: Path) -> None:
    root = tmp_path / "Task09_Spleen"
    F.make_msd_spleen(root)
    cases, tasks, _ = _build(tmp_path, f"msd:{root}")
    assert tasks == _doc_tasks("msd (organ)")  # the coverage table in the docs
    assert {c.modality for c in cases} == {"CT"} and all(c.structures[0].name == "spleen" for c in cases)
    assert {c.body_region for c in cases} == {"abdomen"} and all(c.sequence is None for c in cases)
    m = load_image(tmp_path / "bench" / cases[0].structures[0].mask) > 0
    assert m.sum() == cases[0].structures[0].area_px
    assert {"s2.organ_box", "s1.plane"} <= tasks
    (root / "dataset.json").write_text('{"modality": {"0": "CT"}, "training": []}')
    with pytest.raises(BadInput) as ei:
        get_source(f"msd:{root}")
    assert ei.value.field == "labels" and str(ei.value.file).endswith("dataset.json")


def test_msd_prostate_anisotropic_slices_on_square_pixels(tmp_path: Path) -> None:
    """Task05_Prostate voxels are about 0.6 x 0.6 x 3.6 mm: coronal and sagittal slices are resampled to square
    pixels (the one rule of medr2.sources.nifti_volume.isotropic), so a 7.5 x 7.5 x 14.4 mm zone measures
    right in mm along both axes of every plane, and the voxel spacing is recorded."""
    root = tmp_path / "Task05_Prostate"
    F.make_msd_prostate(root)
    cases, _, q = _build(tmp_path, f"msd:{root}")
    assert not q and {c.plane for c in cases} == {"axial", "coronal", "sagittal"}
    extent_mm = {0: 12 * 0.625, 1: 12 * 0.625, 2: 4 * 3.6}  # RAS axis -> the PZ block's size
    for c in cases:
        r_mm, c_mm = c.meta["pixel_spacing_rc_mm"]
        assert r_mm == pytest.approx(c_mm, rel=0.05)  # square pixels
        pz = next(s for s in c.structures if s.name == "prostate peripheral zone")  # MSD's PZ, in words
        ax = c.meta["slice_axis"]
        cols_axis, rows_axis = [a for a in range(3) if a != ax]
        x1, y1, x2, y2 = pz.box
        assert (x2 - x1) * c_mm == pytest.approx(extent_mm[cols_axis], abs=c_mm + 1e-6)
        assert (y2 - y1) * r_mm == pytest.approx(extent_mm[rows_axis], abs=r_mm + 1e-6)
        assert c.meta["voxel_spacing_rc_mm"] == pytest.approx(
            [F.PROSTATE_ZOOMS[rows_axis], F.PROSTATE_ZOOMS[cols_axis]])
    cor = next(c for c in cases if c.plane == "coronal")
    assert cor.height == round(6 * 3.6 / 0.625) and cor.width == 32  # not 32 x 6


@given(st.integers(2, 40), st.integers(2, 40), st.floats(0.3, 6.0), st.floats(0.3, 6.0), st.data())
def test_isotropic_keeps_physical_extent_and_labels(h: int, w: int, sr: float, sc: float, data: st.DataObject) -> None:
    from medr2.sources.nifti_volume import ISOTROPY_TOLERANCE, isotropic

    lab = np.asarray(data.draw(st.lists(st.lists(st.integers(0, 3), min_size=w, max_size=w), min_size=h,
                                        max_size=h)), np.int64)
    shown = isotropic(lab, (sr, sc), labels=True)
    out = shown.pixels
    for n_in, s_in, n_out, s_out in ((h, sr, out.shape[0], shown.spacing_rc_mm[0]),
                                     (w, sc, out.shape[1], shown.spacing_rc_mm[1])):
        assert n_out * s_out == pytest.approx(n_in * s_in)  # the same physical extent
    assert set(np.unique(out)) <= set(np.unique(lab))  # label values kept, none invented
    if max(sr, sc) / min(sr, sc) > ISOTROPY_TOLERANCE:
        r, c = shown.spacing_rc_mm
        assert abs(r - c) <= max(r, c) / min(out.shape) + 1e-9 or min(out.shape) == 1  # square up to rounding
    img = isotropic(lab.astype(np.float64), (sr, sc), labels=False).pixels
    assert img.shape == out.shape and img.min() >= lab.min() and img.max() <= lab.max()


# --- BraTS ---------------------------------------------------------------------------------------------


def test_brats_both_label_conventions(tmp_path: Path) -> None:
    cases, tasks = _build_documented(tmp_path, F.make_brats, "brats", "brats", 4 * 4 * 3)  # scans x sequences x planes
    new = [c for c in cases if c.meta["subject"].startswith("BraTS-GLI")]
    old = [c for c in cases if not c.meta["subject"].startswith("BraTS-GLI")]
    assert {c.patient_id for c in new} == {"BraTS-GLI-00002"}  # two time points, one patient
    assert {c.sequence for c in cases} == {"T1-weighted", "T1 post-contrast", "T2-weighted", "FLAIR"}
    labels_new = {f.label for c in new for f in c.findings}
    labels_old = {f.label for c in old for f in c.findings}
    assert labels_new == {"necrotic tumour core", "peritumoural oedema", "enhancing tumour"}
    assert labels_old == {"necrotic and non-enhancing tumour core", "peritumoural oedema", "enhancing tumour"}
    assert {c.diagnosis for c in cases} == {"glioma"}
    _patients_in_one_split(cases)
    assert {"s1.sequence", "s1.plane", "s3.lesion_box", "s4.diagnosis"} <= tasks


def test_brats_bad_inputs(tmp_path: Path) -> None:
    import nibabel as nib

    root = tmp_path / "brats"
    F.make_brats(root)
    seg = root / "ASNR-MICCAI-BraTS2023-GLI-Challenge-TrainingData" / "BraTS-GLI-00002-001" / \
        "BraTS-GLI-00002-001-seg.nii.gz"
    img = nib.load(seg)
    lab = np.asarray(img.dataobj).copy()
    lab[lab == 3] = 7  # a value no BraTS release uses
    nib.save(nib.Nifti1Image(lab, img.affine), seg)
    cases, _, q = _build(tmp_path, f"brats:{root}")
    assert len(cases) == 36 and len(q) == 1  # refused once for the subject, not once per slice; the build goes on
    assert q[0].field == "label" and "label value [7]" in q[0].reason and q[0].record == "BraTS-GLI-00002-001"
    seg.unlink()  # a subject whose label file is missing (BraTS 2020 has one misnamed): reported
    cases, _, q = _build(tmp_path, f"brats:{root}")
    assert len(cases) == 36 and [(e.record, e.field) for e in q] == [("BraTS-GLI-00002-001", "seg")]
    (tmp_path / "empty").mkdir()
    with pytest.raises(BadInput) as ei:
        get_source(f"brats:{tmp_path / 'empty'}").plan(0, None)
    assert ei.value.field == "seg"


def test_brats_2024_post_treatment_resection_cavity(tmp_path: Path) -> None:
    """BraTS 2024 post-treatment gliomas add label 4, the resection cavity (arXiv:2405.18368): a finding of
    its own; the 2023 subject beside it keeps the 1/2/3 map; a 4 in a meningioma (MEN) subject is no map's
    value and is refused once."""
    F.make_brats2024(tmp_path / "brats")
    cases, _, q = _build(tmp_path, f"brats:{tmp_path / 'brats'}")
    assert not q and len(cases) == 2 * 4 * 3
    post = [c for c in cases if c.meta["subject"] == "BraTS-GLI-02073-100"]
    assert {c.meta["label_convention"] for c in post} == {"1/2/3/4 (2024 post-treatment)"}
    assert "resection cavity" in {f.label for c in post for f in c.findings}
    assert {f.label for c in post for f in c.findings} <= {"non-enhancing tumour core", "peritumoural oedema",
                                                           "enhancing tumour", "resection cavity"}
    assert {c.meta["label_convention"] for c in cases if c not in post} == {"1/2/3 (2023+)"}
    men = tmp_path / "brats" / "MEN" / "BraTS-MEN-00004-000"
    F._brats_subject(men, "BraTS-MEN-00004-000", ("t1n", "t1c", "t2w", "t2f"), "-", 4, 3)
    cases, _, q = _build(tmp_path, f"brats:{tmp_path / 'brats'}")
    assert len(cases) == 2 * 4 * 3 and [(e.record, e.field) for e in q] == [("BraTS-MEN-00004-000", "label")]
    assert "label value [4]" in q[0].reason and "1/2/3 (2023+)" in q[0].reason


# --- ISIC ----------------------------------------------------------------------------------------------


def test_isic_2018(tmp_path: Path) -> None:
    cases, tasks = _build_documented(tmp_path, F.make_isic, "isic", "isic", 7)
    by = {c.meta["file"]: c for c in cases}
    assert by["ISIC_0024308"].diagnosis == "melanoma" and by["ISIC_0024308"].malignancy == "malignant"
    assert by["ISIC_0024306"].malignancy == "benign" and by["ISIC_0024306"].patient_id == "HAM_0000118"
    assert by["ISIC_0024306"].patient_id == by["ISIC_0024307"].patient_id  # one lesion -> one group
    assert by["ISIC_0024310"].malignancy is None  # AKIEC: precancerous, not forced into benign/malignant
    # a one-hot row states its other classes absent; a mask-only record states nothing
    mel = by["ISIC_0024308"]
    assert "melanocytic nevus" in mel.absent and "melanoma" not in mel.absent and len(mel.absent) == 6
    assert by["ISIC_0000000"].absent == []
    seg = by["ISIC_0000000"]
    assert seg.findings[0].label == "skin lesion" and seg.findings[0].box == (10, 8, 38, 30)
    assert all(c.modality == "dermoscopy" for c in cases)
    assert all(c.split == "train" for c in cases if c.diagnosis)
    _patients_in_one_split(cases)
    assert {"s4.diagnosis", "s4.malignancy", "s3.lesion_box", "s1.modality"} <= tasks


def test_isic_2018_task1_split_folders(tmp_path: Path) -> None:
    """ISIC 2018 Task 1 publishes its own training / validation / test folders (challenge.isic-archive.com/
    data/#2018): each image takes the split of the task read; an image two tasks put in two splits is one
    case in the more held-out one, the disagreement reported; the manifest (``medr2 info``) names the rules."""
    from medr2.bench.info import source_report_lines
    from medr2.sources.datasets.isic import IsicSource

    F.make_isic_task1_splits(tmp_path / "isic")
    out = tmp_path / "bench"
    build_bench(f"isic:{tmp_path / 'isic'}", out, seed=0, workers=1)
    b = load_bench(out)
    by = {c.meta["file"]: c for c in b.cases}
    assert by["ISIC_0012255"].split == "val" and by["ISIC_0012169"].split == "test"
    assert by["ISIC_0000000"].split == "train" and by["ISIC_0000000"].findings
    both = by["ISIC_0000001"]  # Task 1 training mask, Task 3 validation diagnosis
    assert both.split == "val" and both.meta["merge_conflicts"]["split"] == ["train", "val"]
    assert both.findings[0].label == "skin lesion" and both.diagnosis == "melanocytic nevus"
    rules = b.manifest["build"]["source_report"]["split_rules"]
    assert rules[IsicSource.TASK1_RULE] == 3 and rules[IsicSource.TASK3_RULE] == 5
    assert rules[f"{IsicSource.TASK1_RULE}; {IsicSource.TASK3_RULE}"] == 1
    assert any("split rule published: ISIC 2018 Task 1" in line for line in source_report_lines(b.manifest["build"]))


@given(st.sampled_from(["ISIC2018_Task1-2_{}_Input/x.jpg", "ISIC2018_Task1_{}_GroundTruth/ISIC_1_segmentation.png",
                        "annotations/annotations_{}.csv", "{}/0a1b.dicom", "ISIC2018_Task3_{}_GroundTruth.csv"]),
       st.sampled_from([("Training", "train"), ("Validation", "val"), ("Test", "test"), ("train", "train"),
                        ("test", "test")]))
def test_split_from_path_reads_the_published_split(pattern: str, word: tuple[str, str]) -> None:
    from medr2.sources.datasets._base import split_from_path

    assert split_from_path(pattern.format(word[0])) == word[1]
    assert split_from_path(pattern.replace("{}", "images")) is None


# --- Kvasir-SEG ----------------------------------------------------------------------------------------


def test_kvasir_seg(tmp_path: Path) -> None:
    cases, tasks = _build_documented(tmp_path, F.make_kvasir, "kvasir-seg", "kv", 3)
    two = next(c for c in cases if c.meta["file"] == "cju0qoxqj9q6s0835b43399p4")
    assert [f.box for f in two.findings] == [(4, 4, 16, 16), (30, 20, 44, 36)]
    m = load_image(tmp_path / "bench" / str(two.findings[1].mask)) > 0
    assert m[20:36, 30:44].mean() > 0.9 and not m[:, :25].any()  # the mask part inside its own box
    assert all(c.modality == "endoscopy" and c.meta["findings_complete"] for c in cases)
    assert {"s3.lesion_box", "s3.count"} <= tasks  # one class: no cue options (docs, ¹)


def test_kvasir_bad_inputs(tmp_path: Path) -> None:
    import json

    root = tmp_path / "kv"
    F.make_kvasir(root)
    bf = root / "Kvasir-SEG" / "kavsir_bboxes.json"
    data = json.loads(bf.read_text())
    data["cju0roawvklrq0799vmjorwfv"]["bbox"][0]["xmin"] = "x"
    bf.write_text(json.dumps(data))
    cases, _, q = _build(tmp_path, f"kvasir-seg:{root}")
    assert len(cases) == 2 and (q[0].record, q[0].field) == ("cju0roawvklrq0799vmjorwfv", "bbox[0].xmin")
    import shutil

    shutil.rmtree(root / "Kvasir-SEG" / "masks")
    with pytest.raises(BadInput) as ei:
        get_source(f"kvasir-seg:{root}")
    assert ei.value.field == "masks"


# --- CBIS-DDSM -----------------------------------------------------------------------------------------


def test_cbis_ddsm(tmp_path: Path) -> None:
    cases, tasks = _build_documented(tmp_path, F.make_cbis_cross_split, "cbis-ddsm", "cbis", 3)
    by = {c.patient_id: c for c in cases}
    p1 = by["P_00001"]
    assert sorted(f.label for f in p1.findings) == ["calcification", "mass"] and p1.malignancy is None  # mixed
    mass = next(f for f in p1.findings if f.label == "mass")
    assert mass.box == (4, 6, 14, 18) and "shape" not in mass.attributes  # a combined value: not asked
    assert mass.attributes["shape_raw"] == "irregular-architectural distortion"
    assert mass.attributes["margin"] == "spiculated" and mass.attributes["birads"] == 4
    assert mass.attributes["laterality"] == "left" and mass.attributes["pathology"] == "malignant"
    calc = next(f for f in p1.findings if f.label == "calcification")
    assert calc.attributes["morphology"] == "pleomorphic" and calc.attributes["distribution"] == "segmental"
    assert p1.meta["findings_complete"] is True and p1.plane == "CC" and p1.modality == "mammography"
    p4 = by["P_00004"]  # TCIA download layout, crop and mask swapped in the CSV
    mass4 = next(f for f in p4.findings if f.label == "mass")
    assert mass4.box == (10, 10, 22, 24) and mass4.attributes["pathology"] == "benign" and p4.plane == "MLO"
    p16 = by["P_00016"]
    assert p16.findings[0].attributes["shape"] == "oval" and p16.findings[0].attributes["margin"] == "circumscribed"
    assert p16.split == "test" and p16.meta["findings_complete"] is True  # all four lists read
    assert {"s3.attribute", "s3.location", "s4.malignancy", "s3.lesion_box", "s1.plane"} <= tasks


# --- IU X-ray ------------------------------------------------------------------------------------------


def test_iu_xray(tmp_path: Path) -> None:
    cases, tasks = _build_documented(tmp_path, F.make_iu, "iu-xray", "iu", 5)
    by = {c.meta["file"]: c for c in cases}
    lat = by["1_IM-0001-3001.dcm.png"]
    assert lat.plane == "lateral" and lat.diagnosis == "normal" and lat.report is not None
    assert lat.report.startswith("Findings: The cardiac silhouette")
    assert lat.report.endswith("\nImpression: Normal chest x-XXXX.")
    frontal = by["1_IM-0001-4001.dcm.png"]
    assert frontal.plane is None and frontal.meta["projection"] == "Frontal"
    assert by["2_IM-0652-1001.dcm.png"].diagnosis == "cardiomegaly"
    assert by["3_IM-1384-1001.dcm.png"].diagnosis is None
    assert by["3_IM-1384-1001.dcm.png"].report == "Impression: Left basilar opacity, likely atelectasis."
    assert by["1_IM-0001-3001.dcm.png"].patient_id == by["1_IM-0001-4001.dcm.png"].patient_id
    _patients_in_one_split(cases)
    assert {"s4.report", "s1.modality", "s1.region"} <= tasks


def test_iu_xray_index_terms_are_not_diagnoses(tmp_path: Path) -> None:
    """IU X-ray's MeSH "Problems" are index terms: "No Indexing", anatomy and technical notes are left out
    with a counted reason, so a normal study is never "abnormal: yes" (the Kaggle copy's terms)."""
    from medr2.tasks.contract import abnormal_state

    F.make_iu_index_terms(tmp_path / "iu")
    out = tmp_path / "bench"
    build_bench(f"iu-xray:{tmp_path / 'iu'}", out, seed=0, workers=1)
    b = load_bench(out)
    by = {c.meta["uid"]: c for c in b.cases if c.plane != "lateral"}
    assert by["4"].diagnosis is None and by["4"].meta["problems_excluded"] == {"No Indexing": "not indexed"}
    assert by["5"].diagnosis is None and set(by["5"].meta["problems_excluded"]) == {"Lung", "Thoracic Vertebrae"}
    assert by["6"].diagnosis == "cardiomegaly"
    assert by["7"].diagnosis == "normal"
    assert [abnormal_state(by[u]) for u in ("4", "5", "7")] == [None, None, False]  # never "abnormal: yes"
    assert not any(i.task == "s3.abnormal" and i.case_id in (by["4"].case_id, by["5"].case_id) for i in b.items)
    notes = b.manifest["build"]["source_report"]["notes"]
    assert notes["MeSH problem left out (not indexed): no indexing"] == 1
    assert notes["MeSH problem left out (anatomy, not a finding): thoracic vertebrae"] == 1
    tech = "MeSH problem left out (technical note, not a finding): technical quality of image unsatisfactory"
    assert notes[tech] == 1


def _not_finding_terms() -> list[str]:
    """Every spelling of every vocabulary concept of a kind that is never a finding (medr2.vocab)."""
    from medr2 import vocab

    return sorted({t for c in vocab.vocabulary() if c.kind in vocab.NOT_A_FINDING for t in c.terms
                   if vocab.concept_of(t) is c})  # a spelling that also names a finding is a finding


# MeSH "Problems" terms of the real indiana_reports.csv (Kaggle copy of Open-i) that are not findings
IU_MESH_NON_FINDINGS = ("No Indexing", "Technical Quality of Image Unsatisfactory", "Lung", "Thoracic Vertebrae",
                        "Bone and Bones", "Catheters, Indwelling", "Pacemaker, Artificial", "Trachea, Carina",
                        "Mastectomy", "Nipple Shadow", "Markings", "Tube, Inserted", "Surgical Instruments")


def test_the_vocabulary_carries_the_index_terms_and_the_reader_asks_it(monkeypatch: pytest.MonkeyPatch,
                                                                       tmp_path: Path) -> None:
    from medr2 import vocab
    from medr2.sources.datasets.iu_xray import sort_problems

    for t in IU_MESH_NON_FINDINGS:
        assert vocab.not_a_finding(t), t
    for t in ("Cardiomegaly", "Opacity", "normal", "Pleural Effusion"):
        assert vocab.not_a_finding(t) is None, t
    assert sort_problems("Hernia, Hiatal;Cardiomegaly")[1] == {}
    user = tmp_path / "v.txt"  # one vocabulary line makes a new term an index term for the reader
    user.write_text("device: hiatal hernia repair mesh = hernia, hiatal\n")
    monkeypatch.setenv(vocab.USER_FILE_ENV, str(user))
    assert sort_problems("Hernia, Hiatal;Cardiomegaly") == (["Cardiomegaly"], {
        "Hernia, Hiatal": vocab.NOT_A_FINDING["device"]})


@given(st.lists(st.sampled_from(_not_finding_terms()), max_size=4), st.booleans(),
       st.sampled_from([str.lower, str.upper, str.title]), st.sampled_from(["", " "]))
def test_iu_problem_filter_never_turns_a_normal_study_abnormal(
        terms: list[str], normal: bool, case: Callable[[str], str], pad: str) -> None:
    from medr2.sources.datasets.iu_xray import sort_problems

    raw = ";".join([*(case(t) + pad for t in terms), *(["normal"] if normal else [])])
    kept, left_out = sort_problems(raw)
    assert kept == (["normal"] if normal else [])  # only a finding or diagnosis term is ever kept
    assert len(left_out) == len({case(t) for t in terms})


def test_paths_stay_inside_the_data_root(tmp_path: Path) -> None:
    root = tmp_path / "iu"
    F.make_iu(root)
    (root / "images" / "images_normalized" / "1_IM-0001-4001.dcm.png").unlink()
    (root / "images" / "images_normalized" / "1_IM-0001-4001.dcm.png").symlink_to(
        F.write_png(tmp_path / "outside.png", np.zeros((8, 8), np.uint8)))
    cases, errors = realize_all(get_source(f"iu-xray:{root}"), tmp_path / "b")
    assert len(cases) == 4 and "escapes" in errors[0].reason


def test_isic_2019_metadata(tmp_path: Path) -> None:
    F.make_isic2019(tmp_path / "isic19")
    cases, errors = realize_all(get_source(f"isic:{tmp_path / 'isic19'}"), tmp_path / "b")
    assert not errors and len(cases) == 4
    by = {c.meta["file"]: c for c in cases}
    assert by["ISIC_0000000"].body_region == "anterior torso" and by["ISIC_0000000"].patient_id == "BCN_0000001"
    assert by["ISIC_0000003"].patient_id == "BCN_0000001"  # same lesion id -> same group
    assert by["ISIC_0000001"].malignancy == "malignant" and by["ISIC_0000001"].diagnosis == "squamous cell carcinoma"
    assert by["ISIC_0000001"].meta.get("patient_id_inferred") is True  # no lesion_id given
    unk = by["ISIC_0000002_downsampled"]
    assert unk.diagnosis is None and unk.malignancy is None and unk.meta["isic_code"] == "UNK"
    assert {c.split for c in cases} == {"train"}


def test_brats_2019_grades(tmp_path: Path) -> None:
    F.make_brats2019(tmp_path / "b19")
    cases, errors = realize_all(get_source(f"brats:{tmp_path / 'b19'}"), tmp_path / "b")
    assert not errors and len(cases) == 2 * 4 * 3
    assert {c.patient_id: c.diagnosis for c in cases} == {"BraTS19_2013_2_1": "high-grade glioma",
                                                           "BraTS19_2013_0_1": "low-grade glioma"}


def test_kvasir_without_box_json_uses_mask_components(tmp_path: Path) -> None:
    F.make_kvasir(tmp_path / "kv")
    (tmp_path / "kv" / "Kvasir-SEG" / "kavsir_bboxes.json").unlink()
    cases, errors = realize_all(get_source(f"kvasir-seg:{tmp_path / 'kv' / 'Kvasir-SEG'}"), tmp_path / "b")
    assert not errors
    two = next(c for c in cases if c.meta["file"] == "cju0qoxqj9q6s0835b43399p4")
    assert sorted(f.box for f in two.findings) == [(4, 4, 16, 16), (30, 20, 44, 36)]


def test_vindr_kaggle_copy(tmp_path: Path) -> None:
    """The Kaggle competition copy: train.csv in the root (with class_id), DICOMs in train/."""
    import csv

    root = tmp_path / "v"
    F.make_vindr(root)
    with (root / "annotations" / "annotations_train.csv").open(newline="") as f:
        rows = list(csv.reader(f))
    F.write_csv(root / "train.csv", [rows[0][0], rows[0][2], "class_id", rows[0][1], *rows[0][3:]],
                [[r[0], r[2], 0, r[1], *r[3:]] for r in rows[1:]])
    import shutil

    shutil.rmtree(root / "annotations")
    shutil.rmtree(root / "test")
    cases, errors = realize_all(get_source(f"vindr-cxr:{root}"), tmp_path / "b")
    assert not errors and len(cases) == 3
    a = next(c for c in cases if c.meta["image_id"] == "a1b2")
    assert {f.label for f in a.findings} == {"nodule/mass", "cardiomegaly"} and a.diagnosis is None


def test_parts_of_a_merged_class_are_never_distractors(tmp_path: Path) -> None:
    """VinDr-CXR's 'Nodule/Mass': neither 'nodule' nor 'mass' (built-in finding vocabulary) may be offered
    as a wrong option for a case that has it."""
    F.make_vindr(tmp_path / "v")
    cases, _, _ = _build(tmp_path, f"vindr-cxr:{tmp_path / 'v'}")
    a = next(c for c in cases if c.meta["image_id"] == "a1b2")
    items = [i for i in load_bench(tmp_path / "bench").items if i.case_id == a.case_id and i.options]
    finding_items = [i for i in items if i.task in ("s3.finding_type", "s4.multilabel")]
    assert finding_items
    for it in finding_items:
        assert not {"nodule", "mass"} & {o.lower() for o in it.options}, it.options
    # cardiomegaly is not a countable lesion: no lesion count for this case, and it is never measured
    assert not [i for i in items if i.task == "s3.count"]
    assert a.findings[0].label == "cardiomegaly" and a.findings[0].attributes["focal"] is False
    assert "focal" not in a.findings[1].attributes  # nodule/mass
    sizes = [i for i in load_bench(tmp_path / "bench").items if i.task == "s3.size"]
    assert all("cardiomegaly" not in i.question for i in sizes)


READERS = ("nih-cxr14", "rsna-pneumonia", "vindr-cxr", "msd", "brats", "isic", "kvasir-seg", "cbis-ddsm", "iu-xray")


@pytest.mark.parametrize("name", READERS)
def test_reader_level_problems_are_bad_input(tmp_path: Path, name: str) -> None:
    """No path, a missing path, an empty folder and undecodable CSV/JSON bytes: BadInput (exit 2) naming
    the file, never a traceback."""
    for arg in (None, str(tmp_path / "nope"), str(tmp_path)):
        with pytest.raises(BadInput) as ei:
            get_source(f"{name}:{arg}" if arg else name).plan(0, None)
        assert ei.value.field
    for f in ("Data_Entry_2017.csv", "stage_2_train_labels.csv", "stage_2_detailed_class_info.csv", "dataset.json",
              "indiana_reports.csv", "indiana_projections.csv", "mass_case_description_train_set.csv",
              "ISIC_2019_Training_GroundTruth.csv"):
        (tmp_path / f).write_bytes(b"\xff\xfe\x00garbage\x81")
    (tmp_path / "annotations").mkdir()
    (tmp_path / "annotations" / "annotations_train.csv").write_bytes(b"\xff\x00\x81")
    with pytest.raises(BadInput) as ei:
        get_source(f"{name}:{tmp_path}").plan(0, None)
    assert ei.value.file


def test_corrupt_dicom_is_quarantined(tmp_path: Path) -> None:
    root = tmp_path / "rsna"
    F.make_rsna(root)
    (root / "stage_2_train_images" / "00313ee0-9eaa-42f4-b0ab-c148ed3241cd.dcm").write_bytes(
        b"\0" * 128 + b"DICM" + b"\x02\x00garbage")
    cases, errors = realize_all(get_source(f"rsna-pneumonia:{root}"), tmp_path / "b")
    assert len(cases) == 4 and errors[0].record == "00313ee0-9eaa-42f4-b0ab-c148ed3241cd"
    # the image gate reads the header before any pixel: a garbage dataset is refused there, naming the tag
    assert errors[0].field == "Rows" and "Rows is missing" in errors[0].reason


# --- one image described by several records (issue 43) -------------------------------------------------


def test_cbis_mammogram_in_two_lists_is_one_case(tmp_path: Path) -> None:
    """CBIS-DDSM's split is per abnormality type (Lee et al. 2017, Sci. Data 4:170177): P_00004's right MLO
    has its mass in mass_case_description_train_set.csv and a calcification in calc_case_description_test_set
    .csv. One case, both findings, the held-out split for the patient, the disagreements reported."""
    F.make_cbis_cross_split(tmp_path / "cbis")
    out = tmp_path / "bench"
    build_bench(f"cbis-ddsm:{tmp_path / 'cbis'}", out, seed=0, workers=1)
    b = load_bench(out)
    cases = list(b.cases)
    p4 = [c for c in cases if c.patient_id == "P_00004"]
    assert len(p4) == 1 and len(cases) == 3
    c = p4[0]
    assert sorted(f.label for f in c.findings) == ["calcification", "mass"]
    assert c.split == "test" and c.meta["merge_conflicts"]["split"] == ["train", "test"]
    assert c.malignancy is None and c.meta["merge_conflicts"]["malignancy"] == ["malignant", "benign"]
    assert c.meta["findings_complete"] is True  # all four lists read
    assert c.meta["described_by"] == ["P_00004_RIGHT_MLO (test)", "P_00004_RIGHT_MLO (train)"]
    _patients_in_one_split(cases)
    rep = b.manifest["build"]["source_report"]
    assert rep["notes"] == {"images described by several records (merged into one case)": 1,
                            "merged images whose records give different splits (the most held-out kept)": 1}
    assert rep["split_rules"] == {CbisDdsmSource.published_split: 3}
    (tmp_path / "cbis" / "calc_case_description_test_set.csv").unlink()  # a list missing: no list is complete
    build_bench(f"cbis-ddsm:{tmp_path / 'cbis'}", tmp_path / "bench2", seed=0, workers=1)
    assert not any(c.meta["findings_complete"] for c in load_bench(tmp_path / "bench2").cases)


def test_every_dataset_reader_plans_and_realizes_through_the_merge() -> None:
    """The merge sits where every dataset reader emits its cases: none overrides plan or realize."""
    from medr2.sources.base import SOURCES
    from medr2.sources.datasets._base import DatasetSource

    for n in READERS:
        mod = sys.modules[SOURCES.lookup(n).__module__]
        klass = next(v for v in vars(mod).values()
                     if isinstance(v, type) and issubclass(v, DatasetSource) and v is not DatasetSource)
        assert klass.plan is DatasetSource.plan and klass.realize is DatasetSource.realize, n


@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c", None]), st.booleans()), max_size=12))
def test_merge_records_one_record_per_image(rows: list[tuple[str | None, bool]]) -> None:
    from medr2.sources.datasets._base import PARTS, RecordSpec, merge_records

    specs = [RecordSpec(f"r{i}", "f.csv", {}, error="bad" if bad else None, image=img)
             for i, (img, bad) in enumerate(rows)]
    out, merged = merge_records(specs)
    good = [s for s in specs if s.image and not s.error]
    images = {s.image for s in good}
    assert sorted(s.key for s in out if s.image and not s.error) == sorted(images)
    assert sum(len(s.data.get(PARTS, [s])) for s in out) == len(specs)  # nothing dropped
    assert merged == sum(1 for i in images if sum(s.image == i for s in good) > 1)
    assert [s for s in out if s.image is None or s.error] == [s for s in specs if s.image is None or s.error]


def test_source_report_per_source_of_a_multi_source_build(tmp_path: Path) -> None:
    """A multi-source build records each dataset reader's split rules and notes under its --source spec."""
    from medr2.builder.pipeline import _source_report
    from medr2.sources.multi import MultiSource

    F.make_iu_index_terms(tmp_path / "iu")
    F.make_kvasir(tmp_path / "kv")
    specs = [f"iu-xray:{tmp_path / 'iu'}", f"kvasir-seg:{tmp_path / 'kv'}"]
    ms = MultiSource(specs)
    ms.plan(0, None)
    rep = _source_report(ms)["source_report"]
    assert list(rep) == specs and rep[specs[0]]["reader"] == "iu-xray" and rep[specs[0]]["notes"]
    assert sum(rep[specs[0]]["split_rules"].values()) == 9  # every planned image under one rule
    assert rep[specs[1]]["reader"] == "kvasir-seg"
