"""``isic`` reader: ISIC 2018 (Tasks 1 and 3) and ISIC 2019 challenge data in their released layouts.

Layout (challenge.isic-archive.com/data, ISIC 2018 and 2019):
- diagnosis CSVs ``ISIC2018_Task3_{Training,Validation,Test}_GroundTruth.csv`` (``image``, ``MEL``, ``NV``,
  ``BCC``, ``AKIEC``, ``BKL``, ``DF``, ``VASC``; one-hot ``1.0``/``0.0``) and
  ``ISIC_2019_Training_GroundTruth.csv`` (``image``, ``MEL``, ``NV``, ``BCC``, ``AK``, ``BKL``, ``DF``,
  ``VASC``, ``SCC``, ``UNK``), with the images ``<image>.jpg`` in the matching ``*_Input`` folders;
- lesion masks ``ISIC2018_Task1_{Training,Validation,Test}_GroundTruth/<image>_segmentation.png`` (Task 1,
  images in ``ISIC2018_Task1-2_{Training,Validation,Test}_Input/``; Task 1 publishes its own split in these
  folder names, challenge.isic-archive.com/data/#2018);
- metadata ``ISIC_2019_Training_Metadata.csv`` (``image``, ``age_approx``, ``anatom_site_general``,
  ``lesion_id``, ``sex``) and HAM10000's ``HAM10000_metadata.csv`` (``lesion_id``, ``image_id``, ``dx``,
  ``localization``, ...) and ISIC 2018's ``ISIC2018_Task3_Training_LesionGroupings.csv`` (``image``,
  ``lesion_id``), when present.

Every CSV and mask under PATH is found by its name. Mapping: modality dermoscopy; diagnosis from the
one-hot column (exactly one must be 1, else the row is quarantined), the classes of its 0 columns stated absent
(``Case.absent``); malignancy: MEL, BCC, SCC malignant,
NV, BKL, DF, VASC benign (AK/AKIEC, precancerous, and UNK left unset), declared one the image tells apart
(``meta.malignancy_discriminable``: the dataset's task, malignant labels histopathology-confirmed); the Task 1
mask -> finding ``skin lesion``; region from the anatomical site. Split: the one the release publishes for the task read
(:func:`~medr2.sources.datasets._base.split_from_path`): the Task 1 mask's folder (Training / Validation /
Test) for a mask, the ground-truth CSV's name for a diagnosis. Each task's annotation of an image is a record
naming the image, so an image annotated for both tasks is one case (the dataset base merges them; two
different published splits: the most held-out one, reported in ``meta.merge_conflicts``). Patient =
``lesion_id`` (the finest grouping the releases give: images of one lesion stay in one split), else the image.
"""

from __future__ import annotations

from typing import Any

from medr2.demographics import demographic_meta
from medr2.errors import BadInput
from medr2.images import ImageStore
from medr2.records import Case, Finding
from medr2.sources.common import Key, load_label_map, mask_box, put_mask
from medr2.sources.datasets._base import (
    DatasetSource,
    RecordSpec,
    decode_image,
    image_index,
    read_table,
    split_from_path,
)

DIAGNOSES = {"MEL": "melanoma", "NV": "melanocytic nevus", "BCC": "basal cell carcinoma",
             "AKIEC": "actinic keratosis / intraepithelial carcinoma", "AK": "actinic keratosis",
             "BKL": "benign keratosis", "DF": "dermatofibroma", "VASC": "vascular lesion",
             "SCC": "squamous cell carcinoma", "UNK": None}
MALIGNANT = {"MEL", "BCC", "SCC"}
BENIGN = {"NV", "BKL", "DF", "VASC"}
MASK_SUFFIX = "_segmentation.png"


class IsicSource(DatasetSource):
    name = "isic"
    title = "ISIC"
    mapping_schema = {"site_as_region": Key("boolean")}
    published_split = "published: the release's Training / Validation / Test files of the task read"
    TASK1_RULE = "published: ISIC 2018 Task 1 folders (Training / Validation / Test)"
    TASK3_RULE = "published: the ground-truth CSV's name (Training / Validation / Test)"

    def records(self) -> list[RecordSpec]:
        root = self.dr.root
        gts = sorted(p for p in root.rglob("*GroundTruth*.csv") if not p.name.startswith("."))
        masks = {p.name[: -len(MASK_SUFFIX)]: self.dr.rel(p) for p in sorted(root.rglob(f"*{MASK_SUFFIX}"))}
        if not gts and not masks:
            raise BadInput("no ISIC ground-truth CSV (*GroundTruth*.csv) and no *_segmentation.png masks found",
                           file=str(root), field="GroundTruth")
        images = {n.rsplit(".", 1)[0]: rel for n, rel in image_index(self.dr, (".jpg", ".jpeg", ".png")).items()
                  if not n.endswith(MASK_SUFFIX)}
        meta = self._metadata()
        rows: dict[str, tuple[str, dict[str, Any], str | None]] = {}
        specs: list[RecordSpec] = []
        for gt in gts:
            table = read_table(gt, ("image",))
            codes = [c for c in (table[0] if table else {}) if c in DIAGNOSES]
            if len(codes) < 2:
                raise BadInput(f"no one-hot diagnosis columns (expected some of {', '.join(DIAGNOSES)})", file=str(gt),
                               field="MEL")
            split = split_from_path(gt.name)
            for i, r in enumerate(table):
                img = r["image"]
                if not img:
                    specs.append(RecordSpec(f"{gt.name} row {i + 2}", str(gt), error="empty image",
                                            error_field="image"))
                    continue
                try:
                    vals = {c: float(r[c]) for c in codes}
                except ValueError:
                    bad = next(c for c in codes if not _isnum(r[c]))
                    specs.append(RecordSpec(img, str(gt), error=f"not a number: {r[bad]!r}", error_field=bad))
                    continue
                pos = [c for c, v in vals.items() if v == 1.0]
                if len(pos) != 1 or any(v not in (0.0, 1.0) for v in vals.values()):
                    specs.append(RecordSpec(img, str(gt), error=f"one-hot row with {len(pos)} positive columns",
                                            error_field=",".join(codes)))
                    continue
                if img in rows:
                    specs.append(RecordSpec(f"{img} ({gt.name})", str(gt), error="image listed twice",
                                            error_field="image"))
                    continue
                # a one-hot row states its other classes absent (the one lesion is none of them)
                rows[img] = (str(gt), {"code": pos[0], "absent": [dx for c in codes if vals[c] == 0.0
                                                                   and (dx := DIAGNOSES.get(c))]}, split)
        for img, (file, one_hot, split) in rows.items():
            specs.append(RecordSpec(f"{img} (diagnosis)", file, {
                "image": images.get(img), "code": one_hot["code"], "absent": one_hot["absent"], "split": split,
                "mask": None,
                "meta": meta.get(img, {}), "split_rule": self.TASK3_RULE if split else self.split_rule}, image=img))
        for img, mask in masks.items():
            split = split_from_path(mask)
            specs.append(RecordSpec(f"{img} (segmentation)", mask, {
                "image": images.get(img), "code": None, "split": split, "mask": mask, "meta": meta.get(img, {}),
                "split_rule": self.TASK1_RULE if split else self.split_rule}, image=img))
        return sorted(specs, key=lambda s: s.key)

    def _metadata(self) -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = {}
        files = [*self.dr.root.rglob("*etadata*.csv"), *self.dr.root.rglob("*LesionGroupings*.csv")]
        for p in sorted(f for f in files if not f.name.startswith(".")):
            table = read_table(p, ())
            if not table:
                continue
            key = "image" if "image" in table[0] else "image_id" if "image_id" in table[0] else None
            if key is None:
                raise BadInput("metadata CSV needs an image or image_id column", file=str(p), field="image")
            for r in table:
                out.setdefault(r[key], {}).update({k: v for k, v in r.items() if k != key and v})
        return out

    def build(self, spec: RecordSpec, images: ImageStore) -> Case:
        d = spec.data
        if not d["image"]:
            raise BadInput("image file not found under the data root", file=spec.file, record=spec.key, field="image")
        arr = decode_image(self.dr, d["image"], record=spec.key, file=spec.file)
        h, w = arr.shape[:2]
        ref = images.put_array(arr)
        findings: list[Finding] = []
        if d["mask"]:
            mp = self.dr.path(d["mask"], record=spec.key, field_name="mask")
            lab = load_label_map(mp, record=spec.key, grey_rgb=True)
            if lab.shape != (h, w):
                raise BadInput(f"mask is {lab.shape[1]}x{lab.shape[0]}, image is {w}x{h}", file=d["mask"],
                               record=spec.key, field="mask")
            m = lab > 0
            box = mask_box(m)
            if box is not None:
                findings.append(Finding(label="skin lesion", box=box, mask=put_mask(images, m).path,
                                        area_px=float(m.sum())))
        fields: dict[str, Any] = {"modality": "dermoscopy", "absent": list(d.get("absent") or [])}
        meta: dict[str, Any] = {k: v for k, v in d["meta"].items()
                                if k in ("lesion_id", "dx_type", "anatom_site_general", "localization")}
        meta.update(demographic_meta(sex=d["meta"].get("sex"), age=d["meta"].get("age", d["meta"].get("age_approx"))))
        code = d["code"]
        if code:
            meta["isic_code"] = code
            if DIAGNOSES[code]:
                fields["diagnosis"] = DIAGNOSES[code]
            if code in MALIGNANT:
                fields["malignancy"] = "malignant"
            elif code in BENIGN:
                fields["malignancy"] = "benign"
        site = d["meta"].get("anatom_site_general") or d["meta"].get("localization")
        if site and site.lower() != "unknown" and self.option("site_as_region", True):
            fields["body_region"] = site.lower()
        if d["meta"].get("lesion_id"):
            fields["patient_id"] = d["meta"]["lesion_id"]
        if d["split"]:
            fields["split"] = d["split"]
        # one lesion per image by the dataset's design; with its mask read, the finding list is complete
        meta["one_lesion"] = True
        meta["findings_complete"] = bool(findings)
        # benign vs malignant is the task ISIC's dermoscopy images are published for, its malignant labels confirmed
        # by histopathology: the label is one the image is declared to tell apart
        # (vocab.differential.malignancy_decidable)
        if "malignancy" in fields:
            meta["malignancy_discriminable"] = True
        return self.case(spec, ref, fields, findings=findings, meta=meta)


def _isnum(v: str) -> bool:
    try:
        float(v)
        return True
    except ValueError:
        return False



def _factory(arg: str | None) -> IsicSource:
    return IsicSource(arg)
