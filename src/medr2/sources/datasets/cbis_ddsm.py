"""``cbis-ddsm`` reader: CBIS-DDSM (TCIA) in its released layout.

Layout (TCIA collection CBIS-DDSM, Lee et al. 2017, Sci. Data 4:170177): the description CSVs
``mass_case_description_{train,test}_set.csv`` (``patient_id``, ``breast_density``, ``left or right breast``,
``image view``, ``abnormality id``, ``abnormality type``, ``mass shape``, ``mass margins``, ``assessment``,
``pathology``, ``subtlety``, ``image file path``, ``cropped image file path``, ``ROI mask file path``) and
``calc_case_description_{train,test}_set.csv`` (the same with ``breast density``, ``calc type``, ``calc
distribution``), and the DICOMs. The paths in the CSVs (``Mass-Training_P_00001_LEFT_CC/<uid>/<uid>/
000000.dcm``) are tried as given (under PATH or ``PATH/CBIS-DDSM``); a TCIA download names the inner folders
differently, so when the path is not found the DICOMs under its first folder are used. The ROI mask is
the DICOM there with the full image's size (the crop and the mask are swapped in some rows of the CSVs).

The official split is per abnormality type, so one mammogram can have its mass in a train list and its
calcification in a test list. Each CSV row group (patient, side, view, split) is a record naming the
mammogram (``patient_side_view``) as its image; the dataset base merges the records of one mammogram
into one case (:func:`~medr2.sources.datasets._base.merge_cases`: every abnormality of every list, the
most held-out split, a disagreement reported in ``meta.merge_conflicts``).

One case per mammogram, holding every abnormality of the mass and calc CSVs: a finding ``mass`` /
``calcification`` with the ROI mask and its attributes (``shape``, ``margin`` for masses when the value is a
single BI-RADS descriptor, else ``shape_raw`` / ``margin_raw``; ``morphology`` and ``distribution`` for
calcifications; ``laterality``, ``birads``, ``pathology``, ``subtlety``).
Malignancy: MALIGNANT -> malignant, BENIGN / BENIGN_WITHOUT_CALLBACK ->
benign (set when all abnormalities of the image agree; biopsy-proven, declared one the image tells apart:
``meta.malignancy_discriminable``). Modality mammography, region breast, plane CC /
MLO, patient ``patient_id``, split from the CSV (train / test); the CC and MLO views of one breast listed by the
CSVs link each other (``Case.companions``, role ``view``, label the view; issue 49). The finding list is complete
only when all four description CSVs were read (an abnormality of the mammogram may sit in any of them).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from medr2.errors import BadInput
from medr2.images import ImageStore
from medr2.records import Case, Finding
from medr2.sources.common import mask_box, put_mask
from medr2.sources.datasets._base import DatasetSource, RecordSpec, decode_dicom, read_table

COMMON = ("patient_id", "left or right breast", "image view", "abnormality id", "abnormality type", "assessment",
          "pathology", "image file path", "ROI mask file path")
KINDS = {"mass": ("mass shape", "mass margins"), "calc": ("calc type", "calc distribution")}
PATHOLOGY = {"MALIGNANT": "malignant", "BENIGN": "benign", "BENIGN_WITHOUT_CALLBACK": "benign"}
SPLITS = {"train": "train", "test": "test"}
# single BI-RADS descriptors; a combined value ("IRREGULAR-ARCHITECTURAL_DISTORTION") or a lesion type in the
# shape column ("LYMPH_NODE") is kept as ``shape_raw`` / ``margin_raw`` and never asked as an attribute
MASS_SHAPES = {"round", "oval", "lobulated", "irregular"}
MASS_MARGINS = {"circumscribed", "ill defined", "microlobulated", "obscured", "spiculated"}


def _value(v: str) -> str | None:
    v = v.strip()
    return None if not v or v.upper() in ("N/A", "NAN", "NONE") else " ".join(v.replace("_", " ").split()).lower()


class CbisDdsmSource(DatasetSource):
    name = "cbis-ddsm"
    title = "CBIS-DDSM"
    default_license = "CC-BY-3.0"
    published_split = "published: the train/test description CSVs of each abnormality type"

    def records(self) -> list[RecordSpec]:
        groups: dict[tuple[str, str, str, str], list[dict[str, Any]]] = defaultdict(list)
        read: dict[str, set[str]] = defaultdict(set)
        specs: list[RecordSpec] = []
        any_csv = False
        for kind, extra in KINDS.items():
            for split in SPLITS:
                path = self.dr.root / f"{kind}_case_description_{split}_set.csv"
                if not path.is_file():
                    continue
                any_csv = True
                rows = read_table(path, (*COMMON, *extra))
                read[split].add(kind)
                for i, r in enumerate(rows):
                    key = (r["patient_id"], r["left or right breast"].upper(), r["image view"].upper(), split)
                    if not all(key[:3]):
                        specs.append(RecordSpec(f"{path.name} row {i + 2}", str(path), error="patient_id, side or "
                                                "view empty", error_field="patient_id"))
                        continue
                    groups[key].append({**r, "_kind": kind, "_file": str(path), "_row": i + 2})
        if not any_csv:
            raise BadInput("no CBIS-DDSM description CSV (mass_/calc_case_description_{train,test}_set.csv) found",
                           file=str(self.dr.root / "mass_case_description_train_set.csv"), field="csv")
        views: dict[tuple[str, str], set[str]] = defaultdict(set)  # (patient, side) -> the views listed
        for pid, side, view, _split in groups:
            views[(pid, side)].add(view)
        for key in sorted(groups):
            pid, side, view, split = key
            rows = groups[key]
            complete = all(read[s] == set(KINDS) for s in SPLITS)
            others = [(f"{pid}_{side}_{v}", v) for v in sorted(views[(pid, side)]) if v != view]
            specs.append(RecordSpec(f"{pid}_{side}_{view} ({split})", rows[0]["_file"], {
                "patient": pid, "side": side, "view": view, "split": split, "rows": rows,
                "complete": complete, "views": others}, image=f"{pid}_{side}_{view}"))
        return specs

    def _locate(self, rel: str, *, record: str, file: str, field_name: str) -> list[str]:
        """The DICOM(s) a CSV path names: the path itself if present, else those under its first folder."""
        rel = rel.strip().replace("\\", "/")
        for base in ("", "CBIS-DDSM/"):
            p = self.dr.path(base + rel, record=record, field_name=field_name)
            if p.is_file():
                return [base + rel]
        top = rel.split("/", 1)[0]
        for base in ("", "CBIS-DDSM/"):
            d = self.dr.path(base + top, record=record, field_name=field_name)
            if d.is_dir():
                found = sorted(self.dr.rel(q) for q in d.rglob("*.dcm"))
                if found:
                    return found
        raise BadInput(f"DICOM not found: {rel}", file=file, record=record, field=field_name)

    def build(self, spec: RecordSpec, images: ImageStore) -> Case:
        d = spec.data
        first = d["rows"][0]
        full = self._locate(first["image file path"], record=spec.key, file=first["_file"],
                            field_name="image file path")
        dcm = decode_dicom(self.dr, full[0], record=spec.key, file=first["_file"], field_name="image file path")
        h, w = dcm.pixels.shape[:2]
        ref = images.put_array(dcm.pixels)
        findings: list[Finding] = []
        pathologies: set[str] = set()
        for r in sorted(d["rows"], key=lambda r: (r["_kind"], r["abnormality id"].zfill(6))):
            rec = f"{spec.key} abnormality {r['abnormality id']} ({r['_kind']})"
            path_v = r["pathology"].upper()
            if path_v not in PATHOLOGY:
                raise BadInput(f"unknown pathology {r['pathology']!r}; known: {sorted(PATHOLOGY)}", file=r["_file"],
                               record=rec, field="pathology")
            pathologies.add(PATHOLOGY[path_v])
            mask = self._roi_mask(r, (h, w), rec)
            box = mask_box(mask)
            if box is None:
                raise BadInput("ROI mask is empty", file=r["_file"], record=rec, field="ROI mask file path")
            attrs: dict[str, Any] = {"laterality": d["side"].lower(), "pathology": PATHOLOGY[path_v],
                                     "pathology_raw": path_v}
            if r["_kind"] == "mass":
                for col, key, single in (("mass shape", "shape", MASS_SHAPES),
                                         ("mass margins", "margin", MASS_MARGINS)):
                    v = _value(r[col])
                    if v:
                        attrs[key if v in single else f"{key}_raw"] = v
            else:
                for col, key in (("calc type", "morphology"), ("calc distribution", "distribution")):
                    v = _value(r[col])
                    if v:
                        attrs[key] = v
            for col, key in (("assessment", "birads"), ("subtlety", "subtlety")):
                v = r.get(col, "").strip()
                if v:
                    attrs[key] = int(v) if v.isdigit() else v
            findings.append(Finding(label="mass" if r["_kind"] == "mass" else "calcification", box=box,
                                    mask=put_mask(images, mask).path, area_px=float(mask.sum()), attributes=attrs))
        fields: dict[str, Any] = {"modality": "mammography", "body_region": "breast", "plane": d["view"],
                                  "patient_id": d["patient"], "split": d["split"],
                                  # the other view of the breast (CC / MLO) listed by the CSVs (issue 49)
                                  "companions": [self.companion(k, "view", v) for k, v in d.get("views", [])]}
        if "pixel_spacing_mm" in dcm.fields:
            fields["pixel_spacing_mm"] = dcm.fields["pixel_spacing_mm"]
        if len(pathologies) == 1:
            fields["malignancy"] = next(iter(pathologies))
        density = first.get("breast_density") or first.get("breast density")
        meta: dict[str, Any] = {**dcm.meta, "findings_complete": d["complete"], "image_file": full[0],
                                "laterality": d["side"].lower()}
        if density:
            meta["breast_density"] = density
        if "malignancy" in fields:  # CBIS-DDSM's pathology is biopsy-proven, the benign/malignant task of its images
            meta["malignancy_discriminable"] = True
        return self.case(spec, ref, fields, findings=findings, meta=meta)

    def _roi_mask(self, r: dict[str, Any], shape: tuple[int, int], rec: str) -> np.ndarray:
        cands: list[str] = []
        for col in ("ROI mask file path", "cropped image file path"):
            if r.get(col, "").strip():
                try:
                    found = self._locate(r[col], record=rec, file=r["_file"], field_name=col)
                except BadInput:
                    continue
                for c in found:
                    cands.append(c)
                    sib = Path(c).parent
                    cands += sorted(self.dr.rel(q) for q in (self.dr.root / sib).glob("*.dcm"))
        for c in dict.fromkeys(cands):
            m = decode_dicom(self.dr, c, record=rec, file=r["_file"], field_name="ROI mask file path").pixels
            if m.shape == shape:
                return m > 127
        raise BadInput(f"no ROI mask DICOM with the image size {shape[1]}x{shape[0]} found", file=r["_file"],
                       record=rec, field="ROI mask file path")


def _factory(arg: str | None) -> CbisDdsmSource:
    return CbisDdsmSource(arg)
