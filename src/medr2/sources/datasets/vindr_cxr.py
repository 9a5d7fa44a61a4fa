"""``vindr-cxr`` reader: VinDr-CXR (PhysioNet release 1.0.0) in its released layout.

Layout (PhysioNet ``vindr-cxr`` 1.0.0; github.com/vinbigdata-medical/vindr-cxr): ``annotations/
annotations_train.csv`` (``image_id``, ``rad_id``, ``class_name``, ``x_min``, ``y_min``, ``x_max``,
``y_max``; one row per box and radiologist, ``No finding`` rows without coordinates),
``annotations/annotations_test.csv`` (the consensus of five radiologists; ``rad_id`` may be absent),
``annotations/image_labels_train.csv`` / ``image_labels_test.csv`` (``image_id``, ``rad_id`` and one 0/1
column per label, the six global labels among them), and the DICOMs ``train/<image_id>.dicom`` /
``test/<image_id>.dicom``. The CSVs are also found in the root (the Kaggle copy).

Multi-rater boxes are fused per image and class by :func:`~medr2.sources.datasets._base.fuse_rater_boxes`:
boxes of different radiologists with IoU >= 0.5 form one cluster, the fused box is the coordinate-wise
mean, and a cluster is kept when a strict majority of the image's radiologists drew it (2 of 3 in the
training set); the number of dropped minority boxes is kept in ``meta.boxes_dropped``. Consensus (test)
boxes are used as given. A global label counts when a majority of the raters set it.

An image listed in ``image_labels_*.csv`` but in no box row is still a case (its global labels; finding
list marked incomplete), counted in the build's source report. Every image of the release is PA
(Nguyen et al. 2022, Sci. Data 9:429): plane ``PA`` unless the DICOM's own tags say otherwise.

Mapping: modality / view / spacing from the DICOM tags, region chest, local labels -> findings (complete,
consensus list), global labels -> diagnosis (``No finding`` -> ``normal``; one disease label -> that
label), a global disease label every rater marked 0 -> ``Case.absent`` (stated absent even where the finding list
is incomplete), split from the file (train / test). The release gives no patient key: the DICOM ``PatientID`` is
used when present, else each image is its own patient (``meta.patient_id_inferred``).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from medr2.errors import BadInput
from medr2.images import ImageStore
from medr2.records import Box, Case, Finding
from medr2.sources.common import Key
from medr2.sources.datasets._base import (
    DatasetSource,
    RecordSpec,
    decode_dicom,
    find_file,
    fit_box,
    focal_attrs,
    fuse_rater_boxes,
    label_text,
    read_table,
    to_float,
)

BOX_COLUMNS = ("image_id", "class_name", "x_min", "y_min", "x_max", "y_max")
NO_FINDING = "No finding"
GLOBAL_LABELS = {"copd", "lung tumor", "pneumonia", "tuberculosis", "other disease", "other diseases", "no finding"}
NOT_A_DIAGNOSIS = {"other disease", "other diseases", "no finding"}
SPLITS = ("train", "test")


class VindrCxrSource(DatasetSource):
    name = "vindr-cxr"
    title = "VinDr-CXR"
    default_license = "PhysioNet Credentialed Health Data License 1.5.0"
    default_access = "credentialed"
    mapping_schema = {"iou": Key("number", minimum=0, maximum=1), "min_votes": Key("integer", minimum=1)}
    published_split = "published: annotations_train.csv / annotations_test.csv"
    # Nguyen et al. 2022, Sci. Data 9:429 ("18,000 postero-anterior (PA) view CXR scans"): every image is PA
    constant_fields = {"plane": "PA"}

    def records(self) -> list[RecordSpec]:
        specs: list[RecordSpec] = []
        found = False
        for split in SPLITS:
            apath = find_file(self.dr, (f"annotations/annotations_{split}.csv", f"annotations_{split}.csv",
                                        *((["train.csv"]) if split == "train" else [])),
                              what=f"annotations_{split}.csv", required=False)
            if apath is None:
                continue
            found = True
            rows = read_table(apath, BOX_COLUMNS)
            labels = self._image_labels(split)
            by_image: dict[str, list[dict[str, str]]] = defaultdict(list)
            for r in rows:
                if "rad_id" not in r and "rad_ID" in r:  # the capitalised spelling of some copies
                    r["rad_id"] = r.pop("rad_ID")
                by_image[r["image_id"]].append(r)
            for image_id in sorted(by_image):
                if not image_id:
                    specs.append(RecordSpec("(empty image_id)", str(apath), error="empty image_id",
                                            error_field="image_id"))
                    continue
                specs.append(RecordSpec(f"{split}/{image_id}", str(apath), {
                    "split": split, "image_id": image_id, "rows": by_image[image_id],
                    "labels": labels.get(image_id)}))
            only_labels = sorted(set(labels) - set(by_image))
            for image_id in only_labels:  # global labels but no box row: built, its finding list unknown
                specs.append(RecordSpec(f"{split}/{image_id}", labels[image_id]["file"], {
                    "split": split, "image_id": image_id, "rows": [], "labels": labels[image_id],
                    "no_box_rows": True}))
            if only_labels:
                self.notes[f"images only in image_labels_{split}.csv (no box row: finding list marked "
                           f"incomplete)"] += len(only_labels)
        if not found:
            find_file(self.dr, ("annotations/annotations_train.csv", "annotations/annotations_test.csv"),
                      what="annotations_train.csv")
        return specs

    def _image_labels(self, split: str) -> dict[str, dict[str, Any]]:
        path = find_file(self.dr, (f"annotations/image_labels_{split}.csv", f"image_labels_{split}.csv"),
                         what=f"image_labels_{split}.csv", required=False)
        if path is None:
            return {}
        rows = read_table(path, ("image_id",))
        out: dict[str, dict[str, Any]] = {}
        by_image: dict[str, list[dict[str, str]]] = defaultdict(list)
        for r in rows:
            by_image[r["image_id"]].append(r)
        for image_id, rs in by_image.items():
            cols = [c for c in rs[0] if c.strip().lower() in GLOBAL_LABELS]
            votes = {c: sum(1 for r in rs if r.get(c, "").strip() in ("1", "1.0")) for c in cols}
            out[image_id] = {"file": str(path), "n": len(rs), "votes": votes}
        return out

    def build(self, spec: RecordSpec, images: ImageStore) -> Case:
        d = spec.data
        rel = f"{d['split']}/{d['image_id']}.dicom"
        if not (self.dr.root / rel).exists() and (self.dr.root / f"{d['split']}/{d['image_id']}.dcm").exists():
            rel = f"{d['split']}/{d['image_id']}.dcm"
        dcm = decode_dicom(self.dr, rel, record=spec.key, file=spec.file)
        ref = images.put_array(dcm.pixels)
        raters = sorted({r.get("rad_id", "") for r in d["rows"]})
        consensus = raters == [""]
        by_class: dict[str, list[tuple[str, tuple[float, float, float, float]]]] = defaultdict(list)
        clipped = 0
        for r in d["rows"]:
            cls = r["class_name"]
            if not cls:
                raise BadInput("empty class_name", file=spec.file, record=spec.key, field="class_name")
            if cls == NO_FINDING:
                continue
            x1, y1, x2, y2 = (to_float(r[c], file=spec.file, record=spec.key, field_name=c)
                              for c in ("x_min", "y_min", "x_max", "y_max"))
            box, was = fit_box(dcm.box((x1, y1, x2, y2)), ref.width, ref.height, file=spec.file, record=spec.key,
                               field_name=f"x_min..y_max ({cls}, {r.get('rad_id') or 'consensus'})")
            clipped += was
            by_class[cls].append((r.get("rad_id", ""), box))
        findings: list[Finding] = []
        fused: list[tuple[Box, tuple[str, ...]]]
        dropped = 0
        iou_min = float(self.option("iou", 0.5))
        min_votes = self.option("min_votes", None)
        for cls in sorted(by_class):
            if consensus:
                fused = [(b, ()) for _, b in by_class[cls]]
            else:
                kept, lost = fuse_rater_boxes(by_class[cls], len(raters), iou_min=iou_min,
                                              min_votes=int(min_votes) if min_votes is not None else None)
                dropped += sum(len(fb.raters) for fb in lost)
                fused = [(fb.box, fb.raters) for fb in kept]
            for box, who in fused:
                attrs: dict[str, Any] = {"raters": list(who)} if who else {}
                attrs.update(focal_attrs(label_text(cls)))
                findings.append(Finding(label=label_text(cls), box=box, attributes=attrs,
                                        area_px=(box[2] - box[0]) * (box[3] - box[1])))
        fields: dict[str, Any] = {"modality": "X-ray", **dcm.fields, "body_region": "chest", "split": d["split"]}
        if dcm.patient_id:
            fields["patient_id"] = dcm.patient_id
        meta: dict[str, Any] = {**dcm.meta, "image_id": d["image_id"], "findings_complete": not d.get("no_box_rows"),
                                "raters": [r for r in raters if r], "box_fusion": "consensus" if consensus else
                                f"majority clusters, IoU>={iou_min}, mean box"}
        if dropped:
            meta["boxes_dropped"] = dropped
        if clipped:
            meta["boxes_clipped"] = clipped
        positives = self._global(d["labels"])
        if positives is not None:
            meta["global_labels"] = positives
            diseases = [p for p in positives if p not in NOT_A_DIAGNOSIS]
            if positives == ["no finding"] and not findings:
                fields["diagnosis"] = "normal"
            elif len(diseases) == 1:
                fields["diagnosis"] = diseases[0]
        fields["absent"] = self._absent(d["labels"])
        return self.case(spec, ref, fields, findings=findings, meta=meta)

    @staticmethod
    def _global(labels: dict[str, Any] | None) -> list[str] | None:
        if not labels:
            return None
        need = labels["n"] // 2 + 1
        return sorted(label_text(c) for c, v in labels["votes"].items() if v >= need)

    @staticmethod
    def _absent(labels: dict[str, Any] | None) -> list[str]:
        """The global disease labels every rater of the image marked 0: stated absent (``Case.absent``)."""
        if not labels or not labels["n"]:
            return []
        return sorted(t for c, v in labels["votes"].items() if v == 0 and (t := label_text(c)) not in NOT_A_DIAGNOSIS)


def _factory(arg: str | None) -> VindrCxrSource:
    return VindrCxrSource(arg)
