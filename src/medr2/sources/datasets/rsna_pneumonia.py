"""``rsna-pneumonia`` reader: the RSNA Pneumonia Detection Challenge (Kaggle, 2018) in its released layout.

Layout (Kaggle competition data; torchxrayvision's ``RSNA_Pneumonia_Dataset`` reads the same files):
``stage_2_train_labels.csv`` (``patientId``, ``x``, ``y``, ``width``, ``height``, ``Target``; one row per
box, a single row with empty coordinates and ``Target`` 0 for images without opacity),
``stage_2_detailed_class_info.csv`` (``patientId``, ``class``: ``Lung Opacity``, ``No Lung Opacity / Not
Normal``, ``Normal``) and the DICOMs ``stage_2_train_images/<patientId>.dcm`` (``stage_1_*`` names are
read too).

Mapping: modality, view (PA/AP), pixel spacing from the DICOM tags; region chest; patient =
``patientId`` (one radiograph per patient in this release); ``Target`` 1 boxes -> findings ``lung opacity``;
class -> diagnosis ``pneumonia`` (``Lung Opacity``: opacity suggestive of pneumonia, per the challenge),
``normal``, or ``not normal, no lung opacity`` (abnormal without opacity: its finding list is marked
incomplete, and ``Case.absent`` states lung opacity and pneumonia absent). A row whose ``Target`` disagrees
with its class is quarantined.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from medr2.demographics import demographic_meta
from medr2.errors import BadInput
from medr2.images import ImageStore
from medr2.records import Case, Finding
from medr2.sources.datasets._base import (
    DatasetSource,
    RecordSpec,
    decode_dicom,
    find_file,
    fit_box,
    focal_attrs,
    read_table,
    to_float,
)

LABEL_FILES = ("stage_2_train_labels.csv", "stage_1_train_labels.csv")
CLASS_FILES = ("stage_2_detailed_class_info.csv", "stage_1_detailed_class_info.csv")
IMAGE_DIRS = ("stage_2_train_images", "stage_1_train_images")
LABEL_COLUMNS = ("patientId", "x", "y", "width", "height", "Target")
CLASS_COLUMNS = ("patientId", "class")
CLASSES = {"Lung Opacity": "pneumonia", "Normal": "normal",
           "No Lung Opacity / Not Normal": "not normal, no lung opacity"}
FINDING = "lung opacity"
# what a class states absent while its finding list stays incomplete: "No Lung Opacity / Not Normal" is an image
# with no lung opacity (hence no pneumonia) but other, unlabelled abnormalities; "Normal" is complete
ABSENT = {"No Lung Opacity / Not Normal": [FINDING, "pneumonia"]}


class RsnaPneumoniaSource(DatasetSource):
    name = "rsna-pneumonia"
    title = "RSNA Pneumonia Detection Challenge"

    def records(self) -> list[RecordSpec]:
        lpath = find_file(self.dr, LABEL_FILES, what="stage_2_train_labels.csv")
        cpath = find_file(self.dr, CLASS_FILES, what="stage_2_detailed_class_info.csv")
        assert lpath is not None and cpath is not None
        rows = read_table(lpath, LABEL_COLUMNS)
        classes: dict[str, set[str]] = defaultdict(set)
        for r in read_table(cpath, CLASS_COLUMNS):
            classes[r["patientId"]].add(r["class"])
        by_pid: dict[str, list[dict[str, str]]] = defaultdict(list)
        for r in rows:
            by_pid[r["patientId"]].append(r)
        img_dir = next((d for d in IMAGE_DIRS if (self.dr.root / d).is_dir()), IMAGE_DIRS[0])
        specs = []
        f = str(lpath)
        for pid in sorted(by_pid):
            if not pid:
                specs.append(RecordSpec("(empty patientId)", f, error="empty patientId", error_field="patientId"))
                continue
            cls = classes.get(pid, set())
            if len(cls) != 1:
                specs.append(RecordSpec(pid, str(cpath), error=f"expected one class, found {sorted(cls) or 'none'}",
                                        error_field="class"))
                continue
            (c,) = cls
            if c not in CLASSES:
                specs.append(RecordSpec(pid, str(cpath), error=f"unknown class {c!r}; known: {sorted(CLASSES)}",
                                        error_field="class"))
                continue
            specs.append(RecordSpec(pid, f, {"rows": by_pid[pid], "class": c, "image": f"{img_dir}/{pid}.dcm"}))
        return specs

    def build(self, spec: RecordSpec, images: ImageStore) -> Case:
        dcm = decode_dicom(self.dr, spec.data["image"], record=spec.key, file=spec.file)
        ref = images.put_array(dcm.pixels)
        cls = spec.data["class"]
        boxes = []
        for j, r in enumerate(spec.data["rows"]):
            target = r["Target"]
            if target not in ("0", "1"):
                raise BadInput(f"Target must be 0 or 1, got {target!r}", file=spec.file, record=spec.key,
                               field="Target")
            if (target == "1") != (cls == "Lung Opacity"):
                raise BadInput(f"Target {target} contradicts class {cls!r}", file=spec.file, record=spec.key,
                               field="Target")
            if target == "0":
                continue
            x, y, w, h = (to_float(r[c], file=spec.file, record=spec.key, field_name=c)
                          for c in ("x", "y", "width", "height"))
            box, _ = fit_box(dcm.box((x, y, x + w, y + h)), ref.width, ref.height, file=spec.file, record=spec.key,
                             field_name=f"x,y,width,height (box {j + 1})")
            boxes.append(Finding(label=FINDING, box=box, attributes=focal_attrs(FINDING),
                                 area_px=(box[2] - box[0]) * (box[3] - box[1])))
        fields: dict[str, Any] = {"modality": "X-ray", **dcm.fields, "body_region": "chest", "patient_id": spec.key,
                                  "diagnosis": CLASSES[cls], "absent": ABSENT.get(cls, [])}
        meta: dict[str, Any] = {**dcm.meta, "rsna_class": cls,
                                "findings_complete": cls != "No Lung Opacity / Not Normal"}
        meta.update(demographic_meta(sex=dcm.header.get("PatientSex"), age=dcm.header.get("PatientAge")))
        return self.case(spec, ref, fields, findings=boxes, meta=meta)


def _factory(arg: str | None) -> RsnaPneumoniaSource:
    return RsnaPneumoniaSource(arg)
