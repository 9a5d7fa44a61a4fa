"""``masks`` reader: images with label-map PNGs and a label-name JSON.

Layout: ``ROOT/images/<name>.<ext>`` and ``ROOT/masks/<name>.png`` (same stem), a single-channel
label map (8- or 16-bit, or palette indices). ``ROOT/labels.json`` names the values:
``{"1": "liver", "2": {"name": "tumour", "kind": "finding", "attributes": {...}}}``; kind is
``organ`` (default), ``region``, ``landmark``, ``instance`` or ``finding``.

``mode`` in ``medr2.json``: ``semantic`` (default; one region per label value present) or
``instances`` (each distinct non-zero value is one instance, named by ``labels.json`` if the value
is listed there, else by ``instance_label``). Other keys: ``images_dir``, ``masks_dir``,
``label_names`` (the JSON above), ``min_area_px`` (smaller regions are ignored; default 1),
plus the common ``defaults``/``labels``/``license``/``access``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from medr2.errors import BadInput
from medr2.images import ImageStore, load_image
from medr2.records import Case, Finding, Structure
from medr2.sources.common import (
    IMAGE_SUFFIXES,
    TEXT,
    DataRoot,
    Key,
    labels_to_fields,
    list_files,
    load_label_map,
    load_label_table,
    make_case,
    mapping_int,
    open_root,
    read_json,
    region_from_mask,
    sample_indices,
)

KINDS = ("organ", "region", "landmark", "instance", "finding")
MODES = ("semantic", "instances")


@dataclass(frozen=True)
class LabelName:
    name: str
    kind: str
    attributes: dict[str, Any]


@dataclass(frozen=True)
class MaskSpec:
    image: str  # relative to the root
    mask: str | None
    row: dict[str, Any] | None


def parse_label_names(raw: Any, file: str) -> dict[int, LabelName]:
    if not isinstance(raw, dict):
        raise BadInput('label names must be an object {"1": "liver", ...}', file=file)
    out: dict[int, LabelName] = {}
    for k, v in raw.items():
        try:
            value = int(k)
        except ValueError:
            raise BadInput(f"label value {k!r} is not an integer", file=file, field=k) from None
        if value == 0:
            raise BadInput("0 is the background and cannot be named", file=file, field=k)
        entry = {"name": v} if isinstance(v, str) else v
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"].strip():
            raise BadInput("each label needs a name", file=file, field=k)
        kind = entry.get("kind", "organ")
        if kind not in KINDS:
            raise BadInput(f"kind must be one of {KINDS}", file=file, field=f"{k}.kind")
        out[value] = LabelName(entry["name"].strip(), kind, dict(entry.get("attributes") or {}))
    return out


class MasksSource:
    name = "masks"
    mapping_schema: dict[str, Key] = {
        "images_dir": TEXT, "masks_dir": TEXT, "label_names": TEXT, "mode": Key("text", choices=MODES),
        "instance_label": TEXT, "min_area_px": Key("integer", minimum=0)}

    def __init__(self, arg: str | None) -> None:
        self.dr: DataRoot = open_root(arg, "masks", schema=self.mapping_schema)
        m = self.dr.mapping
        self.images_dir = self.dr.path(str(m.get("images_dir", "images")), field_name="images_dir")
        self.masks_dir = str(m.get("masks_dir", "masks"))
        self.mode = str(m.get("mode", "semantic"))
        where = str(self.dr.mapping_file) if self.dr.mapping_file else None
        if self.mode not in MODES:
            raise BadInput(f"mode must be one of {MODES}", file=where, field="mode")
        self.instance_label = str(m.get("instance_label", "instance"))
        self.min_area = mapping_int(self.dr, "min_area_px", 1)
        names_file = self.dr.path(str(m.get("label_names", "labels.json")), field_name="label_names")
        if names_file.is_file():
            self.names = parse_label_names(read_json(names_file), str(names_file))
        elif self.mode == "semantic":
            raise BadInput("semantic masks need a label-name JSON (labels.json)", file=str(names_file),
                           field="label_names")
        else:
            self.names = {}
        if not self.images_dir.is_dir():
            raise BadInput("images folder not found", file=str(self.images_dir), field="images_dir")

    def plan(self, seed: int, n: int | None) -> list[MaskSpec]:
        table = load_label_table(self.dr, str(self.dr.mapping["labels"])) if self.dr.mapping.get("labels") else None
        specs = []
        for f in list_files(self.dr, IMAGE_SUFFIXES, under=self.images_dir):
            rel = self.dr.rel(f)
            stem = f.relative_to(self.images_dir).with_suffix(".png").as_posix()
            mrel = f"{self.masks_dir}/{stem}"
            row = table.rows.get(rel) if table else None
            specs.append(MaskSpec(rel, mrel, row))
        return [specs[i] for i in sample_indices(len(specs), seed, n)]

    def realize(self, spec: MaskSpec, images: ImageStore) -> Case:
        path = self.dr.path(spec.image, record=spec.image, field_name="image")
        try:
            arr = load_image(path)
        except BadInput as e:
            raise BadInput(e.reason, file=spec.image, record=spec.image, field="image") from e
        h, w = arr.shape[:2]
        assert spec.mask is not None
        mpath = self.dr.path(spec.mask, record=spec.image, field_name="mask")
        if not mpath.is_file():
            raise BadInput("label map not found", file=spec.mask, record=spec.image, field="mask")
        labels = load_label_map(mpath, record=spec.image)
        if labels.shape != (h, w):
            raise BadInput(f"label map is {labels.shape[1]}x{labels.shape[0]}, image is {w}x{h}",
                           file=spec.mask, record=spec.image, field="mask")
        ref = images.put_array(arr)
        structures: list[Structure] = []
        findings: list[Finding] = []
        for value in (int(v) for v in np.unique(labels) if v != 0):
            region = labels == value
            if region.sum() < self.min_area:
                continue
            if self.mode == "semantic":
                if value not in self.names:
                    raise BadInput(f"label value {value} is not named in the label-name JSON", file=spec.mask,
                                   record=spec.image, field="mask")
                ln = self.names[value]
            else:
                ln = self.names.get(value) or LabelName(self.instance_label, "instance", {})
            r = region_from_mask(images, region, ln.name, ln.kind, ln.attributes)
            if isinstance(r, Finding):
                findings.append(r)
            elif isinstance(r, Structure):
                structures.append(r)
        fields = labels_to_fields(spec.row or {}, file=spec.image, record=spec.image)
        return make_case(self.dr, key=spec.image, ref=ref, fields=fields, file=spec.image,
                         structures=structures, findings=findings, meta={"mask_file": spec.mask})


def _factory(arg: str | None) -> MasksSource:
    return MasksSource(arg)
