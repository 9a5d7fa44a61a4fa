"""Tiny fixtures in the released layouts of public datasets (file names, folder structure and CSV/JSON
column names as the datasets ship them; images synthetic and small). Used by test_sources_datasets.py."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from tests.interop_fixtures import CR_IMAGE, gradient, write_dicom_image, write_png

MG_IMAGE = "1.2.840.10008.5.1.4.1.1.1.2"  # Digital Mammography X-Ray Image Storage - For Presentation


def write_csv(path: Path, header: list[str], rows: list[list[object]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


def blob(h: int, w: int, box: tuple[int, int, int, int], seed: int = 0) -> np.ndarray:
    """A gradient image with a bright rectangle at ``box`` (x1, y1, x2, y2)."""
    img = gradient(h, w, seed)
    x1, y1, x2, y2 = box
    img[y1:y2, x1:x2] = 230
    return img


# --- NIH ChestX-ray14 -------------------------------------------------------------------------------

NIH_ENTRY_HEADER = ["Image Index", "Finding Labels", "Follow-up #", "Patient ID", "Patient Age", "Patient Gender",
                    "View Position", "OriginalImage[Width", "Height]", "OriginalImagePixelSpacing[x", "y]", ""]
NIH_BBOX_HEADER = ["Image Index", "Finding Label", "Bbox [x", "y", "w", "h]", "", "", ""]


def make_nih(root: Path) -> None:
    """6 patients, 10 images in the Kaggle layout (images_001/images, images_002/images); patient 1 has
    three follow-ups, boxes for three images (one with an 'Infiltrate' box), official split lists."""
    images = [  # name, labels, patient, view
        ("00000001_000.png", "Cardiomegaly", 1, "PA"), ("00000001_001.png", "Cardiomegaly|Effusion", 1, "PA"),
        ("00000001_002.png", "No Finding", 1, "AP"), ("00000002_000.png", "No Finding", 2, "PA"),
        ("00000003_000.png", "Infiltration", 3, "PA"), ("00000003_001.png", "Nodule|Mass", 3, "AP"),
        ("00000004_000.png", "Pleural_Thickening", 4, "PA"), ("00000005_000.png", "No Finding", 5, "PA"),
        ("00000006_000.png", "Atelectasis", 6, "AP"), ("00000006_001.png", "No Finding", 6, "PA"),
    ]
    rows = []
    for i, (name, labels, pid, view) in enumerate(images):
        folder = "images_001" if i < 5 else "images_002"
        write_png(root / folder / "images" / name, blob(64, 64, (20, 20, 40, 44), i))
        rows.append([name, labels, int(name[9:12]), pid, 50 + pid, "M" if pid % 2 else "F", view, 2500, 2048,
                     0.143, 0.143, ""])
    write_csv(root / "Data_Entry_2017.csv", NIH_ENTRY_HEADER, rows)
    write_csv(root / "BBox_List_2017.csv", NIH_BBOX_HEADER, [
        ["00000001_000.png", "Cardiomegaly", 10.5, 20.0, 40.0, 30.25, "", "", ""],
        ["00000003_000.png", "Infiltrate", 5, 6, 20, 21, "", "", ""],
        ["00000003_001.png", "Nodule", 30, 30, 8, 8, "", "", ""],
        ["00000003_001.png", "Mass", 5, 40, 15, 15, "", "", ""],
    ])
    (root / "test_list.txt").write_text("00000003_000.png\n00000003_001.png\n00000006_000.png\n00000006_001.png\n")
    (root / "train_val_list.txt").write_text("".join(f"{n}\n" for n, _, p, _ in images if p not in (3, 6)))


# --- RSNA Pneumonia -----------------------------------------------------------------------------------


def make_rsna(root: Path) -> None:
    """5 radiographs (DICOM, CR): two with opacity boxes (one with two boxes), two normal, one 'not normal'."""
    pids = ["0004cfab-14fd-4e49-80ba-63a80b6bddd6", "00313ee0-9eaa-42f4-b0ab-c148ed3241cd",
            "00322d4d-1c29-4943-afc9-b6754be640eb", "003d8fa0-6bf1-40ed-b54c-ac657f8495c5",
            "00436515-870c-4b36-a041-de91049b9ab4"]
    classes = ["Lung Opacity", "Normal", "No Lung Opacity / Not Normal", "Normal", "Lung Opacity"]
    labels: list[list[object]] = []
    info: list[list[object]] = []
    for i, (pid, cls) in enumerate(zip(pids, classes, strict=True)):
        px = (blob(64, 64, (10, 12, 30, 40), i).astype(np.uint16) * 16)
        write_dicom_image(root / "stage_2_train_images" / f"{pid}.dcm", px, sop_class=CR_IMAGE, Modality="CR",
                          BodyPartExamined="CHEST", PatientID=pid, ViewPosition="PA" if i % 2 else "AP",
                          PatientSex="F", PatientAge="051Y", PixelSpacing=[0.14, 0.14])
        if cls == "Lung Opacity":
            n_boxes = 2 if i == 0 else 1
            for b in range(n_boxes):
                labels.append([pid, 10 + 25 * b, 12, 20, 28, 1])
                info.append([pid, cls])
        else:
            labels.append([pid, "", "", "", "", 0])
            info.append([pid, cls])
    write_csv(root / "stage_2_train_labels.csv", ["patientId", "x", "y", "width", "height", "Target"], labels)
    write_csv(root / "stage_2_detailed_class_info.csv", ["patientId", "class"], info)


# --- VinDr-CXR ----------------------------------------------------------------------------------------

VINDR_LABELS = ["Aortic enlargement", "Atelectasis", "Cardiomegaly", "Nodule/Mass", "Pleural effusion", "COPD",
                "Lung tumor", "Pneumonia", "Tuberculosis", "Other diseases", "No finding"]


def make_vindr(root: Path) -> None:
    """Train: 3 images x 3 radiologists (R8, R9, R10); test: 2 images (consensus, no rad_id column)."""
    train = {
        "a1b2": [("R8", "Nodule/Mass", (10, 10, 30, 30)), ("R9", "Nodule/Mass", (12, 11, 32, 31)),
                 ("R10", "Aortic enlargement", (40, 5, 50, 15)), ("R10", "Nodule/Mass", (44, 40, 60, 60)),
                 ("R8", "Cardiomegaly", (20, 40, 50, 58)), ("R9", "Cardiomegaly", (21, 41, 51, 59)),
                 ("R10", "Cardiomegaly", (19, 39, 49, 57))],
        "c3d4": [("R8", "No finding", None), ("R9", "No finding", None), ("R10", "No finding", None)],
        "e5f6": [("R8", "Pleural effusion", (2, 30, 20, 60)), ("R9", "Pleural effusion", (3, 31, 21, 61)),
                 ("R10", "No finding", None)],
    }
    rows: list[list[object]] = []
    for image_id, anns in train.items():
        write_dicom_image(root / "train" / f"{image_id}.dicom", blob(64, 64, (10, 10, 30, 30)).astype(np.uint16),
                          sop_class=CR_IMAGE, Modality="DX", PhotometricInterpretation="MONOCHROME2")
        for rad, cls, box in anns:
            rows.append([image_id, rad, cls, *(box if box else ("", "", "", ""))])
    write_csv(root / "annotations" / "annotations_train.csv",
              ["image_id", "rad_id", "class_name", "x_min", "y_min", "x_max", "y_max"], rows)
    lab_rows = []
    votes = {"a1b2": {"R8": ["Lung tumor"], "R9": ["Lung tumor"], "R10": []},
             "c3d4": {r: ["No finding"] for r in ("R8", "R9", "R10")},
             "e5f6": {"R8": ["Tuberculosis"], "R9": ["Other diseases"], "R10": ["No finding"]}}
    for image_id, by_rad in votes.items():
        for rad, pos in by_rad.items():
            lab_rows.append([image_id, rad, *(1 if lab in pos else 0 for lab in VINDR_LABELS)])
    write_csv(root / "annotations" / "image_labels_train.csv", ["image_id", "rad_id", *VINDR_LABELS], lab_rows)
    test = {"g7h8": [("Cardiomegaly", (20, 40, 50, 58))], "i9j0": [("No finding", None)]}
    trows: list[list[object]] = []
    for image_id, anns in test.items():
        write_dicom_image(root / "test" / f"{image_id}.dicom", blob(64, 64, (20, 40, 50, 58)).astype(np.uint16),
                          sop_class=CR_IMAGE, Modality="DX")
        for cls, box in anns:
            trows.append([image_id, cls, *(box if box else ("", "", "", ""))])
    write_csv(root / "annotations" / "annotations_test.csv",
              ["image_id", "class_name", "x_min", "y_min", "x_max", "y_max"], trows)


def make_vindr_label_only(root: Path) -> None:
    """``make_vindr`` plus a training image ``k1l2`` that three radiologists labelled COPD in
    image_labels_train.csv but that has no row in annotations_train.csv (PhysioNet vindr-cxr 1.0.0 ships the
    two files separately; an image can be in the image-level file only)."""
    make_vindr(root)
    write_dicom_image(root / "train" / "k1l2.dicom", blob(64, 64, (5, 5, 9, 9)).astype(np.uint16),
                      sop_class=CR_IMAGE, Modality="DX", PhotometricInterpretation="MONOCHROME2")
    with (root / "annotations" / "image_labels_train.csv").open("a", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        for rad in ("R8", "R9", "R10"):
            w.writerow(["k1l2", rad, *(1 if lab == "COPD" else 0 for lab in VINDR_LABELS)])


# --- Medical Segmentation Decathlon --------------------------------------------------------------------


def _nifti(path: Path, data: np.ndarray, zooms: tuple[float, float, float] = (1.0, 1.0, 1.5)) -> None:
    import nibabel as nib

    path.parent.mkdir(parents=True, exist_ok=True)
    nib.save(nib.Nifti1Image(data, np.diag([*zooms, 1.0])), path)


def make_msd_brain(root: Path) -> None:
    """Task01_BrainTumour-shaped: 4-D images with two channels (FLAIR, T1w), labels edema / enhancing
    tumour, two training subjects (one with a missing label file) and one test image."""
    rng = np.random.default_rng(0)
    training = []
    for i in (1, 2):
        img = rng.normal(100, 10, (20, 18, 12, 2)).astype(np.float32)
        lab = np.zeros((20, 18, 12), np.uint8)
        lab[4:12, 5:13, 3:9] = 1
        lab[6:10, 7:11, 4:8] = 2
        img[lab > 0] += 80
        _nifti(root / "imagesTr" / f"BRATS_00{i}.nii.gz", img)
        if i == 1:
            _nifti(root / "labelsTr" / f"BRATS_00{i}.nii.gz", lab)
        training.append({"image": f"./imagesTr/BRATS_00{i}.nii.gz", "label": f"./labelsTr/BRATS_00{i}.nii.gz"})
    _nifti(root / "imagesTs" / "BRATS_003.nii.gz", rng.normal(100, 10, (20, 18, 12, 2)).astype(np.float32))
    (root / "dataset.json").write_text(json.dumps({
        "name": "BRATS", "description": "Gliomas segmentation tumour and oedema in on brain images",
        "tensorImageSize": "4D", "licence": "CC-BY-SA 4.0", "release": "2.0 04/05/2018",
        "modality": {"0": "FLAIR", "1": "T1w"},
        "labels": {"0": "background", "1": "edema", "2": "enhancing tumour"},
        "numTraining": 2, "numTest": 1, "training": training, "test": ["./imagesTs/BRATS_003.nii.gz"]}, indent=4))


def make_msd_spleen(root: Path) -> None:
    """Task09_Spleen-shaped: 3-D CT, one organ label."""
    vol = np.full((16, 16, 10), -100, np.int16)
    lab = np.zeros(vol.shape, np.uint8)
    lab[3:11, 4:12, 2:8] = 1
    vol[lab > 0] = 60
    _nifti(root / "imagesTr" / "spleen_2.nii.gz", vol, (0.8, 0.8, 5.0))
    _nifti(root / "labelsTr" / "spleen_2.nii.gz", lab, (0.8, 0.8, 5.0))
    (root / "dataset.json").write_text(json.dumps({
        "name": "Spleen", "licence": "CC-BY-SA 4.0", "tensorImageSize": "3D", "modality": {"0": "CT"},
        "labels": {"0": "background", "1": "spleen"}, "numTraining": 1, "numTest": 0,
        "training": [{"image": "./imagesTr/spleen_2.nii.gz", "label": "./labelsTr/spleen_2.nii.gz"}], "test": []}))


def make_msd_hippocampus(root: Path) -> None:
    """Task04_Hippocampus-shaped: 3-D MRI, labels 1 Anterior / 2 Posterior (the parts of the hippocampus, named
    only by their direction)."""
    rng = np.random.default_rng(4)
    vol = rng.normal(200, 20, (18, 16, 10)).astype(np.float32)
    lab = np.zeros(vol.shape, np.uint8)
    lab[4:9, 5:11, 2:8] = 1
    lab[9:14, 5:11, 2:8] = 2
    vol[lab > 0] += 150
    _nifti(root / "imagesTr" / "hippocampus_001.nii.gz", vol, (1.0, 1.0, 1.0))
    _nifti(root / "labelsTr" / "hippocampus_001.nii.gz", lab, (1.0, 1.0, 1.0))
    (root / "dataset.json").write_text(json.dumps({
        "name": "Hippocampus", "licence": "CC-BY-SA 4.0", "tensorImageSize": "3D", "modality": {"0": "MRI"},
        "labels": {"0": "background", "1": "Anterior", "2": "Posterior"}, "numTraining": 1, "numTest": 0,
        "training": [{"image": "./imagesTr/hippocampus_001.nii.gz", "label": "./labelsTr/hippocampus_001.nii.gz"}],
        "test": []}))


PROSTATE_ZOOMS = (0.625, 0.625, 3.6)  # Task05_Prostate: about 0.6 mm in plane, 3.6 mm between slices


def make_msd_prostate(root: Path) -> None:
    """Task05_Prostate-shaped (medicaldecathlon.com; Antonelli et al. 2022): 4-D MRI with channels T2 and ADC,
    labels 1 PZ / 2 TZ, strongly anisotropic voxels (``PROSTATE_ZOOMS``). The peripheral zone is a block
    of 12 x 12 x 4 voxels = 7.5 x 7.5 x 14.4 mm."""
    rng = np.random.default_rng(3)
    img = rng.normal(300, 30, (32, 32, 6, 2)).astype(np.float32)
    lab = np.zeros((32, 32, 6), np.uint8)
    lab[8:20, 10:22, 1:5] = 1
    lab[12:16, 14:18, 2:4] = 2
    img[lab > 0] += 200
    _nifti(root / "imagesTr" / "prostate_00.nii.gz", img, PROSTATE_ZOOMS)
    _nifti(root / "labelsTr" / "prostate_00.nii.gz", lab, PROSTATE_ZOOMS)
    (root / "dataset.json").write_text(json.dumps({
        "name": "PROSTATE", "description": "Prostate transitional zone and peripheral zone segmentation",
        "tensorImageSize": "4D", "licence": "CC-BY-SA 4.0", "release": "1.0 04/05/2018",
        "modality": {"0": "T2", "1": "ADC"}, "labels": {"0": "background", "1": "PZ", "2": "TZ"},
        "numTraining": 1, "numTest": 0,
        "training": [{"image": "./imagesTr/prostate_00.nii.gz", "label": "./labelsTr/prostate_00.nii.gz"}],
        "test": []}, indent=4))


# --- BraTS --------------------------------------------------------------------------------------------


def _brats_subject(folder: Path, sid: str, seqs: tuple[str, ...], sep: str, et: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    lab = np.zeros((20, 20, 12), np.uint8)
    lab[4:14, 5:15, 3:9] = 2  # oedema
    lab[6:12, 7:13, 4:8] = 1  # core
    lab[7:11, 8:12, 4:8] = et  # enhancing
    for s in seqs:
        img = rng.normal(200, 20, lab.shape).astype(np.float32)
        img[lab > 0] += 150
        _nifti(folder / f"{sid}{sep}{s}.nii.gz", img, (1.0, 1.0, 1.0))
    _nifti(folder / f"{sid}{sep}seg.nii.gz", lab, (1.0, 1.0, 1.0))


def make_brats(root: Path) -> None:
    """Two BraTS 2021 subjects (_t1/_t1ce/_t2/_flair, labels 1/2/4) and, in a 2023 GLI folder, one patient
    scanned at two time points (-t1n/-t1c/-t2w/-t2f, labels 1/2/3)."""
    old = root / "BraTS2021_Training_Data"
    for i in range(2):
        sid = f"BraTS2021_0000{i}"
        _brats_subject(old / sid, sid, ("t1", "t1ce", "t2", "flair"), "_", 4, i)
    new = root / "ASNR-MICCAI-BraTS2023-GLI-Challenge-TrainingData"
    for t in ("000", "001"):
        sid = f"BraTS-GLI-00002-{t}"
        _brats_subject(new / sid, sid, ("t1n", "t1c", "t2w", "t2f"), "-", 3, 5)


def make_brats2024(root: Path) -> None:
    """BraTS 2024 post-treatment gliomas (de Verdier et al. 2024, arXiv:2405.18368: labels 1 NETC, 2 SNFH,
    3 ET, 4 resection cavity; the 2023 file names ``BraTS-GLI-<patient>-<time point>-{t1n,t1c,t2w,t2f,seg}``):
    one subject with a resection cavity beside its tumour, and one 2023 GLI subject (labels 1/2/3)."""
    base = root / "BraTS2024-BraTS-GLI-TrainingData" / "training_data1_v2"
    sid = "BraTS-GLI-02073-100"
    _brats_subject(base / sid, sid, ("t1n", "t1c", "t2w", "t2f"), "-", 3, 7)
    seg = base / sid / f"{sid}-seg.nii.gz"
    lab = np.asarray(nib_load(seg).dataobj).copy()
    lab[14:18, 4:10, 3:9] = 4  # the resection cavity
    _nifti(seg, lab, (1.0, 1.0, 1.0))
    sid23 = "BraTS-GLI-00002-000"
    _brats_subject(root / "ASNR-MICCAI-BraTS2023-GLI-Challenge-TrainingData" / sid23, sid23,
                   ("t1n", "t1c", "t2w", "t2f"), "-", 3, 5)


def nib_load(path: Path) -> Any:
    import nibabel as nib

    return nib.load(path)


# --- ISIC 2018 ------------------------------------------------------------------------------------------

ISIC18_CODES = ["MEL", "NV", "BCC", "AKIEC", "BKL", "DF", "VASC"]


def _rgb(h: int, w: int, seed: int) -> np.ndarray:
    g = gradient(h, w, seed)
    return np.stack([g, g // 2 + 60, 255 - g], axis=-1).astype(np.uint8)


def make_isic(root: Path) -> None:
    """Task 3 (diagnosis one-hot, lesion groupings: two images of one lesion) and Task 1 (lesion masks)."""
    t3 = [("ISIC_0024306", "NV", "HAM_0000118"), ("ISIC_0024307", "NV", "HAM_0000118"),
          ("ISIC_0024308", "MEL", "HAM_0002730"), ("ISIC_0024309", "BKL", "HAM_0001466"),
          ("ISIC_0024310", "AKIEC", "HAM_0003301")]
    rows = []
    for i, (img, code, _) in enumerate(t3):
        p = root / "ISIC2018_Task3_Training_Input" / f"{img}.jpg"
        p.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(_rgb(40, 48, i)).save(p, quality=95)
        rows.append([img, *("1.0" if c == code else "0.0" for c in ISIC18_CODES)])
    write_csv(root / "ISIC2018_Task3_Training_GroundTruth" / "ISIC2018_Task3_Training_GroundTruth.csv",
              ["image", *ISIC18_CODES], rows)
    write_csv(root / "ISIC2018_Task3_Training_LesionGroupings.csv", ["image", "lesion_id", "diagnosis_confirm_type"],
              [[img, lesion, "histopathology"] for img, _, lesion in t3])
    for i in range(2):
        img = f"ISIC_000000{i}"
        p = root / "ISIC2018_Task1-2_Training_Input" / f"{img}.jpg"
        p.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(_rgb(40, 48, 10 + i)).save(p, quality=95)
        m = np.zeros((40, 48), np.uint8)
        m[8 + i:30, 10:38] = 255
        write_png(root / "ISIC2018_Task1_Training_GroundTruth" / f"{img}_segmentation.png", m)


def make_isic_task1_splits(root: Path) -> None:
    """``make_isic`` plus ISIC 2018 Task 1's own validation and test folders (challenge.isic-archive.com/data
    /#2018: ``ISIC2018_Task1-2_{Validation,Test}_Input/ISIC_<id>.jpg`` with the masks in
    ``ISIC2018_Task1_{Validation,Test}_GroundTruth/ISIC_<id>_segmentation.png``), and one Task 1 training
    image that Task 3 also lists in its validation ground truth (two tasks, two published splits)."""
    make_isic(root)
    for i, (img, split) in enumerate([("ISIC_0012255", "Validation"), ("ISIC_0012169", "Test")]):
        p = root / f"ISIC2018_Task1-2_{split}_Input" / f"{img}.jpg"
        p.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(_rgb(40, 48, 20 + i)).save(p, quality=95)
        m = np.zeros((40, 48), np.uint8)
        m[5:25, 6:30] = 255
        write_png(root / f"ISIC2018_Task1_{split}_GroundTruth" / f"{img}_segmentation.png", m)
    write_csv(root / "ISIC2018_Task3_Validation_GroundTruth.csv", ["image", *ISIC18_CODES],
              [["ISIC_0000001", *("1.0" if c == "NV" else "0.0" for c in ISIC18_CODES)]])


# --- Kvasir-SEG -----------------------------------------------------------------------------------------


def make_kvasir(root: Path) -> None:
    """Kvasir-SEG/images + masks (JPEG, same names) and kavsir_bboxes.json; one image with two polyps."""
    base = root / "Kvasir-SEG"
    entries = {}
    specs = {"cju0qkwl35piu0993l0dewei2": [(5, 6, 25, 30)], "cju0qoxqj9q6s0835b43399p4": [(4, 4, 16, 16),
                                                                                             (30, 20, 44, 36)],
             "cju0roawvklrq0799vmjorwfv": [(10, 8, 40, 30)]}
    for i, (name, boxes) in enumerate(specs.items()):
        img = _rgb(40, 48, i)
        mask = np.zeros((40, 48), np.uint8)
        for x1, y1, x2, y2 in boxes:
            mask[y1:y2, x1:x2] = 255
            img[y1:y2, x1:x2] = (200, 90, 80)
        (base / "images").mkdir(parents=True, exist_ok=True)
        (base / "masks").mkdir(parents=True, exist_ok=True)
        Image.fromarray(img).save(base / "images" / f"{name}.jpg", quality=95)
        Image.fromarray(np.stack([mask] * 3, axis=-1)).save(base / "masks" / f"{name}.jpg", quality=95)
        entries[name] = {"height": 40, "width": 48, "bbox": [
            {"label": "polyp", "xmin": x1, "ymin": y1, "xmax": x2, "ymax": y2} for x1, y1, x2, y2 in boxes]}
    (base / "kavsir_bboxes.json").write_text(json.dumps(entries))


# --- CBIS-DDSM ------------------------------------------------------------------------------------------

CBIS_MASS = ["patient_id", "breast_density", "left or right breast", "image view", "abnormality id",
             "abnormality type", "mass shape", "mass margins", "assessment", "pathology", "subtlety",
             "image file path", "cropped image file path", "ROI mask file path"]
CBIS_CALC = ["patient_id", "breast density", "left or right breast", "image view", "abnormality id",
             "abnormality type", "calc type", "calc distribution", "assessment", "pathology", "subtlety",
             "image file path", "cropped image file path", "ROI mask file path"]
UID = "1.3.6.1.4.1.9590.100.1.2."


def _mammo(path: Path, box: tuple[int, int, int, int]) -> None:
    write_dicom_image(path, blob(48, 32, box).astype(np.uint16) * 8, sop_class=MG_IMAGE, Modality="MG",
                      PixelSpacing=[0.1, 0.1])


def _roi(folder: Path, box: tuple[int, int, int, int], crop_name: str, mask_name: str) -> None:
    m = np.zeros((48, 32), np.uint16)
    x1, y1, x2, y2 = box
    m[y1:y2, x1:x2] = 255
    write_dicom_image(folder / mask_name, m, sop_class=MG_IMAGE, Modality="MG")
    write_dicom_image(folder / crop_name, blob(12, 10, (0, 0, 2, 2)).astype(np.uint16), sop_class=MG_IMAGE,
                      Modality="MG")


def make_cbis(root: Path) -> None:
    """Training: P_00001 LEFT CC with a mass and a calcification (mass and calc CSV: one case), its
    paths as in the CSVs; P_00004 RIGHT MLO mass in the TCIA-download layout (inner folder names differ
    from the CSV) with crop and mask swapped in the CSV. Test: P_00016 LEFT CC mass (no calc test CSV)."""
    def csv_path(top: str, n: int, name: str) -> str:
        return f"{top}/{UID}{n}1/{UID}{n}2/{name}"

    # P_00001: CSV paths exist as given
    full1 = "Mass-Training_P_00001_LEFT_CC"
    _mammo(root / csv_path(full1, 1, "000000.dcm"), (4, 6, 14, 18))
    _roi((root / csv_path(f"{full1}_1", 3, "x")).parent, (4, 6, 14, 18), "000000.dcm", "000001.dcm")
    calc_full = "Calc-Training_P_00001_LEFT_CC"
    _mammo(root / csv_path(calc_full, 5, "000000.dcm"), (4, 6, 14, 18))
    _roi((root / csv_path(f"{calc_full}_1", 7, "x")).parent, (18, 30, 26, 40), "000000.dcm", "000001.dcm")
    # P_00004: TCIA download layout (dates and series names), crop/mask swapped in the CSV
    full4 = "Mass-Training_P_00004_RIGHT_MLO"
    _mammo(root / "CBIS-DDSM" / full4 / "07-20-2016-DDSM-09887" / "1.000000-full mammogram images-52376" / "1-1.dcm",
           (10, 10, 22, 24))
    _roi(root / "CBIS-DDSM" / f"{full4}_1" / "07-21-2016-DDSM-21780" / "1.000000-ROI mask images-38914",
         (10, 10, 22, 24), "1-2.dcm", "1-1.dcm")
    # P_00016 test
    full16 = "Mass-Test_P_00016_LEFT_CC"
    _mammo(root / csv_path(full16, 9, "000000.dcm"), (8, 8, 20, 20))
    _roi((root / csv_path(f"{full16}_1", 8, "x")).parent, (8, 8, 20, 20), "000000.dcm", "000001.dcm")
    write_csv(root / "mass_case_description_train_set.csv", CBIS_MASS, [
        ["P_00001", 3, "LEFT", "CC", 1, "mass", "IRREGULAR-ARCHITECTURAL_DISTORTION", "SPICULATED", 4, "MALIGNANT", 4,
         csv_path(full1, 1, "000000.dcm"), csv_path(f"{full1}_1", 3, "000000.dcm"),
         csv_path(f"{full1}_1", 3, "000001.dcm") + "\n"],
        ["P_00004", 3, "RIGHT", "MLO", 1, "mass", "ARCHITECTURAL_DISTORTION", "ILL_DEFINED", 4, "BENIGN", 3,
         csv_path(full4, 11, "000000.dcm"), csv_path(f"{full4}_1", 12, "000001.dcm"),
         csv_path(f"{full4}_1", 12, "000000.dcm") + "\n"],
    ])
    write_csv(root / "calc_case_description_train_set.csv", CBIS_CALC, [
        ["P_00001", 3, "LEFT", "CC", 1, "calcification", "PLEOMORPHIC", "SEGMENTAL", 4, "BENIGN_WITHOUT_CALLBACK", 2,
         csv_path(calc_full, 5, "000000.dcm"), csv_path(f"{calc_full}_1", 7, "000000.dcm"),
         csv_path(f"{calc_full}_1", 7, "000001.dcm") + "\n"],
    ])
    write_csv(root / "mass_case_description_test_set.csv", CBIS_MASS, [
        ["P_00016", 4, "LEFT", "CC", 1, "mass", "OVAL", "CIRCUMSCRIBED", 2, "BENIGN", 5,
         csv_path(full16, 9, "000000.dcm"), csv_path(f"{full16}_1", 8, "000000.dcm"),
         csv_path(f"{full16}_1", 8, "000001.dcm") + "\n"],
    ])


# --- IU X-ray -----------------------------------------------------------------------------------------


def make_iu(root: Path) -> None:
    """Three studies: uid 1 normal (frontal + lateral), uid 2 cardiomegaly, uid 3 two problems."""
    reports = [
        [1, "normal", "normal", "Xray Chest PA and Lateral", "Positive TB test", "None.",
         "The cardiac silhouette and mediastinum size are within normal limits. There is no pulmonary edema.",
         "Normal chest x-XXXX."],
        [2, "Cardiomegaly/borderline", "Cardiomegaly", "Chest, 2 views, frontal and lateral", "Preop.", "None.",
         "Borderline cardiomegaly. Clear lungs.", "No acute pulmonary findings."],
        [3, "Opacity/lung/base/left;Atelectasis", "Opacity;Atelectasis", "PA and lateral", "Cough", "",
         "", "Left basilar opacity, likely atelectasis."],
    ]
    write_csv(root / "indiana_reports.csv", ["uid", "MeSH", "Problems", "image", "indication", "comparison",
                                             "findings", "impression"], reports)
    proj = [[1, "1_IM-0001-4001.dcm.png", "Frontal"], [1, "1_IM-0001-3001.dcm.png", "Lateral"],
            [2, "2_IM-0652-1001.dcm.png", "Frontal"], [3, "3_IM-1384-1001.dcm.png", "Frontal"],
            [3, "3_IM-1384-2001.dcm.png", "Lateral"]]
    for i, (_, name, _) in enumerate(proj):
        write_png(root / "images" / "images_normalized" / name, gradient(48, 48, i))
    write_csv(root / "indiana_projections.csv", ["uid", "filename", "projection"], proj)


def make_iu_index_terms(root: Path) -> None:
    """``make_iu`` plus studies whose ``Problems`` are MeSH index terms that are no finding, as the Kaggle
    copy of Open-i has them (kaggle.com/datasets/raddar/chest-xrays-indiana-university; e.g. ``No Indexing``,
    ``Lung``, ``Thoracic Vertebrae``, ``Technical Quality of Image Unsatisfactory `` with its trailing space):
    uid 4 never indexed, uid 5 anatomy only (a normal report), uid 6 a technical note and cardiomegaly,
    uid 7 normal with a normal variant."""
    make_iu(root)
    extra = [
        [4, "No Indexing", "No Indexing", "Chest PA and lateral", "Chest pain", "None.",
         "Heart size and mediastinal contour are normal. The lungs are clear.", "No acute cardiopulmonary disease."],
        [5, "Lung;Thoracic Vertebrae", "Lung;Thoracic Vertebrae", "Xray Chest PA and Lateral", "Dyspnea", "None.",
         "The heart is normal in size. The lungs are clear.", "Normal chest."],
        [6, "Technical Quality of Image Unsatisfactory ;Cardiomegaly/mild",
         "Technical Quality of Image Unsatisfactory ;Cardiomegaly", "PA and lateral", "", "",
         "Limited study. Mild cardiomegaly.", "Mild cardiomegaly."],
        [7, "normal;Nipple Shadow", "normal;Nipple Shadow", "PA and lateral", "", "", "No acute disease.",
         "Normal."],
    ]
    with (root / "indiana_reports.csv").open("a", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(extra)
    proj = [[uid, f"{uid}_IM-{2000 + uid}-1001.dcm.png", "Frontal"] for uid in (4, 5, 6, 7)]
    for i, (_, name, _) in enumerate(proj):
        write_png(root / "images" / "images_normalized" / name, gradient(48, 48, 10 + i))
    with (root / "indiana_projections.csv").open("a", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(proj)


ISIC19_CODES = ["MEL", "NV", "BCC", "AK", "BKL", "DF", "VASC", "SCC", "UNK"]


def make_isic2019(root: Path) -> None:
    """ISIC 2019: ground truth with AK/SCC/UNK columns and the metadata CSV (site, lesion_id)."""
    rows, meta = [], []
    for i, (img, code, site, lesion) in enumerate([
            ("ISIC_0000000", "NV", "anterior torso", "BCN_0000001"), ("ISIC_0000001", "SCC", "head/neck", ""),
            ("ISIC_0000002_downsampled", "UNK", "", "MSK4_0011169"),
            ("ISIC_0000003", "MEL", "lower extremity", "BCN_0000001")]):
        p = root / "ISIC_2019_Training_Input" / f"{img}.jpg"
        p.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(_rgb(30, 40, i)).save(p, quality=95)
        rows.append([img, *("1.0" if c == code else "0.0" for c in ISIC19_CODES)])
        meta.append([img, 55, site, lesion, "male"])
    write_csv(root / "ISIC_2019_Training_GroundTruth.csv", ["image", *ISIC19_CODES], rows)
    write_csv(root / "ISIC_2019_Training_Metadata.csv",
              ["image", "age_approx", "anatom_site_general", "lesion_id", "sex"], meta)


def make_brats2019(root: Path) -> None:
    """BraTS 2019: subjects under HGG/ and LGG/ (labels 1/2/4)."""
    base = root / "MICCAI_BraTS_2019_Data_Training"
    _brats_subject(base / "HGG" / "BraTS19_2013_2_1", "BraTS19_2013_2_1", ("t1", "t1ce", "t2", "flair"), "_", 4, 1)
    _brats_subject(base / "LGG" / "BraTS19_2013_0_1", "BraTS19_2013_0_1", ("t1", "t1ce", "t2", "flair"), "_", 4, 2)


def make_cbis_cross_split(root: Path) -> None:
    """``make_cbis`` plus ``calc_case_description_test_set.csv``: the right MLO mammogram of P_00004 has its
    mass in the training mass list and a malignant calcification in the test calc list (the official split
    is per abnormality type, Lee et al. 2017, Sci. Data 4:170177; 29 mammograms of the released lists are
    in both). TCIA stores the calc copy of the mammogram under ``Calc-Test_P_00004_RIGHT_MLO`` (same pixels)."""
    make_cbis(root)
    def csv_path(top: str, n: int, name: str) -> str:
        return f"{top}/{UID}{n}1/{UID}{n}2/{name}"

    full = "Calc-Test_P_00004_RIGHT_MLO"
    _mammo(root / csv_path(full, 21, "000000.dcm"), (10, 10, 22, 24))  # the mammogram of the mass list
    _roi((root / csv_path(f"{full}_1", 23, "x")).parent, (2, 30, 8, 38), "000000.dcm", "000001.dcm")
    write_csv(root / "calc_case_description_test_set.csv", CBIS_CALC, [
        ["P_00004", 3, "RIGHT", "MLO", 1, "calcification", "AMORPHOUS", "CLUSTERED", 4, "MALIGNANT", 3,
         csv_path(full, 21, "000000.dcm"), csv_path(f"{full}_1", 23, "000000.dcm"),
         csv_path(f"{full}_1", 23, "000001.dcm") + "\n"],
    ])


def _append_csv_row(path: Path, row: list[object]) -> None:
    import csv

    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    write_csv(path, rows[0], [*rows[1:], row])


def make_cbis_two_views(root: Path) -> None:
    """``make_cbis_cross_split`` plus the right CC mammogram of P_00004 with its mass (in the training mass list):
    the breast's CC and MLO views link each other (issue 49); the mass is seen on both, the calcification of the
    test calc list only on the MLO view. All four description CSVs are read, so each view's findings are complete."""
    make_cbis_cross_split(root)

    def csv_path(top: str, n: int, name: str) -> str:
        return f"{top}/{UID}{n}1/{UID}{n}2/{name}"

    full = "Mass-Training_P_00004_RIGHT_CC"
    _mammo(root / csv_path(full, 31, "000000.dcm"), (12, 8, 24, 20))
    _roi((root / csv_path(f"{full}_1", 33, "x")).parent, (12, 8, 24, 20), "000000.dcm", "000001.dcm")
    _append_csv_row(root / "mass_case_description_train_set.csv", [
        "P_00004", 3, "RIGHT", "CC", 1, "mass", "ARCHITECTURAL_DISTORTION", "ILL_DEFINED", 4, "BENIGN", 3,
        csv_path(full, 31, "000000.dcm"), csv_path(f"{full}_1", 33, "000000.dcm"),
        csv_path(f"{full}_1", 33, "000001.dcm") + "\n"])
