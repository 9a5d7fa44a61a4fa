"""``nih-cxr14`` reader: NIH ChestX-ray14 in its released layout.

Layout (NIH Clinical Center release; the loader ``NIH_Dataset`` of torchxrayvision reads the same files):
``Data_Entry_2017.csv`` (or ``Data_Entry_2017_v2020.csv``) with ``Image Index``, ``Finding Labels``
(``|``-separated, ``No Finding``), ``Follow-up #``, ``Patient ID``, ``Patient Age``, ``Patient Gender``,
``View Position``, ``OriginalImage[Width``, ``Height]``, ``OriginalImagePixelSpacing[x``, ``y]``;
``BBox_List_2017.csv`` with ``Image Index``, ``Finding Label``, ``Bbox [x``, ``y``, ``w``, ``h]`` (pixels of
the 1024 x 1024 release images); the PNGs in ``images/`` or in the twelve ``images_001/images/`` ...
folders; optional ``train_val_list.txt`` / ``test_list.txt`` (the official patient-wise split).

Mapping: modality X-ray, region chest, plane from ``View Position``, patient from ``Patient ID``;
boxed findings from ``BBox_List_2017.csv`` (``Infiltrate`` read as ``infiltration``, the name the label
column uses); ``No Finding`` -> diagnosis ``normal``; a single image label -> diagnosis; image labels
in ``meta.image_labels``. An image of a later ``Follow-up #`` links the patient's closest earlier follow-up as its
prior study (``Case.companions``, issue 49; the release gives no dates, so the interval is unknown). The labels were
mined from reports and only part of the images have boxes,
so a labelled image's finding list is marked incomplete (``meta.findings_complete`` false); a ``No Finding``
row is a complete negative for the 14 labels (``meta.findings_complete`` true). An image with boxes declares each
boxed label boxed wherever it shows (``meta.instances_complete``: the radiologist boxed every instance of the
finding the image was selected for, several rows for several nodules), so "the nodule" of its one nodule box is
that image's only nodule; other findings may still be unboxed.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from medr2.demographics import demographic_meta, first_present
from medr2.errors import BadInput
from medr2.images import ImageStore
from medr2.records import Case, Finding
from medr2.sources.common import Key
from medr2.sources.datasets._base import (
    DatasetSource,
    RecordSpec,
    decode_image,
    find_file,
    fit_box,
    focal_attrs,
    image_index,
    label_text,
    read_table,
    to_float,
)
from medr2.textfile import read_text

ENTRY_FILES = ("Data_Entry_2017.csv", "Data_Entry_2017_v2020.csv")
ENTRY_COLUMNS = ("Image Index", "Finding Labels", "Patient ID", "View Position")
BBOX_FILE = "BBox_List_2017.csv"
BBOX_COLUMNS = ("Image Index", "Finding Label", "Bbox [x", "y", "w", "h]")
BOX_LABEL_NAMES = {"Infiltrate": "Infiltration"}  # BBox_List spelling -> Finding Labels spelling
SPLIT_FILES = (("test_list.txt", "test"), ("train_val_list.txt", "train"))


class NihCxr14Source(DatasetSource):
    name = "nih-cxr14"
    title = "NIH ChestX-ray14"
    mapping_schema = {"official_split": Key("boolean")}
    published_split = "published: train_val_list.txt / test_list.txt (patient-wise)"

    def records(self) -> list[RecordSpec]:
        entry = find_file(self.dr, ENTRY_FILES, what="Data_Entry_2017.csv")
        assert entry is not None
        rows = read_table(entry, ENTRY_COLUMNS)
        boxes, bad = self._boxes()
        split_of = self._splits() if self.option("official_split", True) else {}
        index = image_index(self.dr, (".png",))
        prior_of = _priors(rows)
        specs: list[RecordSpec] = []
        seen: set[str] = set()
        for i, r in enumerate(rows):
            name = r["Image Index"]
            f = str(entry)
            if not name:
                specs.append(RecordSpec(f"row {i + 2}", f, error="empty Image Index", error_field="Image Index"))
                continue
            if name in seen:
                specs.append(RecordSpec(f"{name} (row {i + 2})", f, error="duplicate Image Index",
                                        error_field="Image Index"))
                continue
            seen.add(name)
            if not r["Patient ID"]:
                specs.append(RecordSpec(name, f, error="empty Patient ID", error_field="Patient ID"))
                continue
            if name in bad:
                specs.append(RecordSpec(name, bad[name][0], error=bad[name][1], error_field=bad[name][2]))
                continue
            specs.append(RecordSpec(name, f, {"row": r, "image": index.get(name), "boxes": boxes.get(name, []),
                                              "split": split_of.get(name), "prior": prior_of.get(name)}))
        for name in sorted(set(boxes) - seen):
            specs.append(RecordSpec(name, str(self.dr.root / BBOX_FILE),
                                    error="box for an image that is not in Data_Entry_2017.csv",
                                    error_field="Image Index"))
        return sorted(specs, key=lambda s: s.key)

    def _boxes(self) -> tuple[dict[str, list[dict[str, Any]]], dict[str, tuple[str, str, str]]]:
        path = find_file(self.dr, (BBOX_FILE,), what=BBOX_FILE, required=False)
        out: dict[str, list[dict[str, Any]]] = defaultdict(list)
        bad: dict[str, tuple[str, str, str]] = {}
        if path is None:
            return out, bad
        for r in read_table(path, BBOX_COLUMNS):
            name = r["Image Index"]
            try:
                x, y, w, h = (to_float(r[c], file=str(path), record=name, field_name=c)
                              for c in ("Bbox [x", "y", "w", "h]"))
            except BadInput as e:
                bad.setdefault(name, (str(path), e.reason, e.field or "Bbox [x"))
                continue
            label = BOX_LABEL_NAMES.get(r["Finding Label"], r["Finding Label"])
            if not label:
                bad.setdefault(name, (str(path), "empty Finding Label", "Finding Label"))
                continue
            out[name].append({"label": label, "box": (x, y, x + w, y + h)})
        return out, bad

    def _splits(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for fname, split in SPLIT_FILES:
            p = self.dr.root / fname
            if p.is_file():
                for line in read_text(p, what="split list").splitlines():
                    if line.strip():
                        out.setdefault(line.strip(), split)
        return out

    def build(self, spec: RecordSpec, images: ImageStore) -> Case:
        r: dict[str, str] = spec.data["row"]
        if not spec.data["image"]:
            raise BadInput("image file not found under the data root", file=spec.file, record=spec.key,
                           field="Image Index")
        arr = decode_image(self.dr, spec.data["image"], record=spec.key, file=spec.file)
        ref = images.put_array(arr)
        labels = [x.strip() for x in r["Finding Labels"].split("|") if x.strip()]
        fields: dict[str, Any] = {"modality": "X-ray", "body_region": "chest", "patient_id": r["Patient ID"]}
        view = r["View Position"].upper()
        if view in ("PA", "AP"):
            fields["plane"] = view
        meta: dict[str, Any] = {"image_labels": [label_text(x) for x in labels], "view_position": view}
        # the sex header is "Patient Gender" in Data_Entry_2017.csv and "Patient Sex" in later releases
        meta.update(demographic_meta(sex=first_present(r, "Patient Gender", "Patient Sex"),
                                     age=first_present(r, "Patient Age")))
        if r.get("Follow-up #"):
            meta["follow_up"] = r["Follow-up #"]
        spacing = _spacing(r, ref.width, spec)
        if spacing:
            fields["pixel_spacing_mm"] = spacing
        if labels == ["No Finding"]:  # a complete negative: none of the 14 labels
            fields["diagnosis"] = "normal"
            meta["findings_complete"] = True
        else:
            meta["findings_complete"] = False
            if len(labels) == 1:
                fields["diagnosis"] = label_text(labels[0])
        if spec.data["split"]:
            fields["split"] = spec.data["split"]
        if spec.data.get("prior"):  # the patient's closest earlier follow-up (no dates: interval unknown)
            fields["companions"] = [self.companion(spec.data["prior"], "prior")]
        findings, clipped = [], 0
        for j, b in enumerate(spec.data["boxes"]):
            box, was = fit_box(b["box"], ref.width, ref.height, file=str(self.dr.root / BBOX_FILE), record=spec.key,
                               field_name=f"Bbox [x,y,w,h] ({j + 1})")
            clipped += was
            label = label_text(b["label"])
            findings.append(Finding(label=label, box=box, attributes=focal_attrs(label),
                                    area_px=(box[2] - box[0]) * (box[3] - box[1])))
        if clipped:
            meta["boxes_clipped"] = clipped
        if findings:  # every instance of a boxed label is boxed (not every finding of the image)
            meta["instances_complete"] = True
        return self.case(spec, ref, fields, findings=findings, meta=meta)


def _priors(rows: list[dict[str, str]]) -> dict[str, str]:
    """Image -> the image of the same patient with the closest earlier ``Follow-up #`` (its prior study); an image
    whose follow-up number is missing or not a whole number links none and is linked by none."""
    by_patient: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for r in rows:
        n = (r.get("Follow-up #") or "").strip()
        if r["Image Index"] and r["Patient ID"] and n.isdigit():
            by_patient[r["Patient ID"]].append((int(n), r["Image Index"]))
    out: dict[str, str] = {}
    for studies in by_patient.values():
        studies.sort()
        for (n0, before), (n1, after) in zip(studies, studies[1:], strict=False):
            if n1 > n0:
                out[after] = before
    return out


def _spacing(r: dict[str, str], width: int, spec: RecordSpec) -> float | None:
    """Pixel spacing of the released image: the original spacing scaled by original / released width."""
    sx, ow = r.get("OriginalImagePixelSpacing[x"), r.get("OriginalImage[Width")
    if not sx or not ow:
        return None
    s = to_float(sx, file=spec.file, record=spec.key, field_name="OriginalImagePixelSpacing[x")
    w = to_float(ow, file=spec.file, record=spec.key, field_name="OriginalImage[Width")
    if s <= 0 or w <= 0:
        raise BadInput("pixel spacing and width must be > 0", file=spec.file, record=spec.key,
                       field="OriginalImagePixelSpacing[x")
    return s * w / width


def _factory(arg: str | None) -> NihCxr14Source:
    return NihCxr14Source(arg)
