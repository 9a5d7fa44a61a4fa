"""``kvasir-seg`` reader: Kvasir-SEG (Simula, 2020) in its released layout.

Layout (datasets.simula.no/kvasir-seg; github.com/DebeshJha/Kvasir-SEG): ``Kvasir-SEG/images/<id>.jpg``,
``Kvasir-SEG/masks/<id>.jpg`` (the polyp mask, same name, white on black, JPEG) and
``kavsir_bboxes.json`` (sic) ``{"<id>": {"height": H, "width": W, "bbox": [{"label": "polyp", "xmin": ..,
"ymin": .., "xmax": .., "ymax": ..}, ...]}}``. PATH may be the folder holding ``Kvasir-SEG/`` or that folder.

Mapping: modality endoscopy (colonoscopy), region colon; one finding ``polyp`` per box, its mask the
part of the (thresholded) mask inside the box; without the JSON each connected mask component is one
polyp. Every polyp is outlined, so the finding list is complete. The release gives no patient key:
each image is its own patient (``meta.patient_id_inferred``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from medr2.errors import BadInput
from medr2.images import ImageStore
from medr2.records import Case, Finding
from medr2.sources.common import IMAGE_SUFFIXES, mask_box, put_mask, read_json
from medr2.sources.datasets._base import DatasetSource, RecordSpec, decode_image, fit_box, image_index, to_float

BOX_FILE = "kavsir_bboxes.json"


class KvasirSegSource(DatasetSource):
    name = "kvasir-seg"
    title = "Kvasir-SEG"

    def __init__(self, arg: str | None) -> None:
        super().__init__(arg)
        sub = "Kvasir-SEG" if (self.dr.root / "Kvasir-SEG" / "images").is_dir() else "."
        self.base = "" if sub == "." else f"{sub}/"
        for d in ("images", "masks"):
            if not (self.dr.root / sub / d).is_dir():
                raise BadInput(f"Kvasir-SEG folder {d}/ not found", file=str(self.dr.root / sub / d), field=d)

    def records(self) -> list[RecordSpec]:
        box_path = next((p for p in (self.dr.root / self.base / BOX_FILE, self.dr.root / BOX_FILE) if p.is_file()),
                        None)
        boxes: dict[str, Any] = {}
        if box_path is not None:
            raw = read_json(box_path)
            if not isinstance(raw, dict):
                raise BadInput("must map image ids to {height, width, bbox}", file=str(box_path))
            boxes = raw
        imgs = image_index(self.dr, IMAGE_SUFFIXES, self.dr.root / self.base / "images")
        masks = {n.rsplit(".", 1)[0]: rel for n, rel in
                 image_index(self.dr, IMAGE_SUFFIXES, self.dr.root / self.base / "masks").items()}
        specs = []
        for name in sorted(imgs):
            stem = name.rsplit(".", 1)[0]
            f = imgs[name]
            if stem not in masks:
                specs.append(RecordSpec(stem, f, error="no mask with the same name in masks/", error_field="mask"))
                continue
            if box_path is not None and stem not in boxes:
                specs.append(RecordSpec(stem, str(box_path), error=f"image not listed in {BOX_FILE}",
                                        error_field="bbox"))
                continue
            specs.append(RecordSpec(stem, f, {"image": f, "mask": masks[stem], "entry": boxes.get(stem),
                                              "box_file": str(box_path) if box_path else None}))
        return specs

    def build(self, spec: RecordSpec, images: ImageStore) -> Case:
        d = spec.data
        arr = decode_image(self.dr, d["image"], record=spec.key, file=spec.file)
        mask = decode_image(self.dr, d["mask"], record=spec.key, file=d["mask"], field_name="mask", mode="L") > 127
        h, w = arr.shape[:2]
        if mask.shape != (h, w):
            raise BadInput(f"mask is {mask.shape[1]}x{mask.shape[0]}, image is {w}x{h}", file=d["mask"],
                           record=spec.key, field="mask")
        ref = images.put_array(arr)
        findings = self._from_boxes(spec, mask, images, w, h) if d["entry"] is not None else \
            self._from_components(mask, images)
        fields = {"modality": "endoscopy", "body_region": "colon"}
        return self.case(spec, ref, fields, findings=findings, meta={"findings_complete": True, "mask_file": d["mask"]})

    def _from_boxes(self, spec: RecordSpec, mask: np.ndarray, images: ImageStore, w: int, h: int) -> list[Finding]:
        d = spec.data
        entry, bf = d["entry"], d["box_file"]
        if not isinstance(entry, dict) or not isinstance(entry.get("bbox"), list):
            raise BadInput("entry needs a bbox list", file=bf, record=spec.key, field="bbox")
        if (entry.get("width"), entry.get("height")) not in ((w, h), (None, None)):
            raise BadInput(f"declared {entry.get('width')}x{entry.get('height')} but the image is {w}x{h}", file=bf,
                           record=spec.key, field="width")
        out = []
        for j, b in enumerate(entry["bbox"]):
            fld = f"bbox[{j}]"
            if not isinstance(b, dict):
                raise BadInput("box must be an object", file=bf, record=spec.key, field=fld)
            x1, y1, x2, y2 = (to_float(b.get(k), file=bf, record=spec.key, field_name=f"{fld}.{k}")
                              for k in ("xmin", "ymin", "xmax", "ymax"))
            box, _ = fit_box((x1, y1, x2, y2), w, h, file=bf, record=spec.key, field_name=fld)
            inside = np.zeros_like(mask)
            inside[int(box[1]):int(np.ceil(box[3])), int(box[0]):int(np.ceil(box[2]))] = True
            part = mask & inside
            ref = put_mask(images, part) if part.any() else None
            out.append(Finding(label=str(b.get("label") or "polyp"), box=box, mask=ref.path if ref else None,
                               area_px=float(part.sum()) if part.any() else (box[2] - box[0]) * (box[3] - box[1])))
        return out

    @staticmethod
    def _from_components(mask: np.ndarray, images: ImageStore) -> list[Finding]:
        from scipy.ndimage import label

        lab, n = label(mask)
        out = []
        for i in range(1, n + 1):
            comp = lab == i
            box = mask_box(comp)
            if box is None or comp.sum() < 16:
                continue
            out.append(Finding(label="polyp", box=box, mask=put_mask(images, comp).path, area_px=float(comp.sum())))
        return out


def _factory(arg: str | None) -> KvasirSegSource:
    return KvasirSegSource(arg)
