"""SLAKE (``train.json``/``validation.json``/``test.json`` + ``imgs/xmlabN/``).

Record fields used: ``qid``, ``img_name`` (``xmlabN/source.jpg``), ``question``, ``answer``,
``answer_type`` (OPEN/CLOSED), ``content_type`` (mapped by :data:`CONTENT_TASK`), ``modality``,
``location`` (body region), ``q_lang``, ``base_type``. Per image, ``imgs/xmlabN/detection.json``
(a list of ``{"name": [x, y, w, h]}``) gives structure boxes and ``mask.png`` (the semantic mask) is
stored with the case. The split comes from the file name. Options: ``lang=en`` keeps one language
(the others are counted as filtered, not quarantined).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from medr2.errors import BadInput
from medr2.interop.common import OTHER_TASK, ImportBuilder, yes_no
from medr2.interop.importers import register_importer
from medr2.interop.importers._util import image_in, read_json_list, text
from medr2.records import Structure, check_box
from medr2.sources.common import load_label_map

SPLIT_FILES = {"train.json": "train", "validation.json": "val", "test.json": "test"}
# SLAKE content_type -> task (closed yes/no abnormality questions -> s3.abnormal)
CONTENT_TASK: dict[str, str] = {
    "Modality": "s1.modality", "Plane": "s1.plane", "Organ": "s2.organ", "Position": "s3.location",
    "Abnormality": "s3.finding_type", "Quantity": "s2.count", "Size": "s2.size_compare",
}
YES_NO_TASK = {"s3.finding_type": "s3.abnormal"}
MODALITY = {"X-Ray": "X-ray", "CT": "CT", "MRI": "MRI"}


def _structures(img_dir: Path, w: int, h: int, record: str) -> list[Structure]:
    det = img_dir / "detection.json"
    if not det.is_file():
        return []
    try:
        raw: Any = json.loads(det.read_text("utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise BadInput(f"cannot read detection.json: {e}", file=str(det), record=record, field="detection") from e
    entries = raw if isinstance(raw, list) else [raw]
    out = []
    for j, ent in enumerate(entries):
        if not isinstance(ent, dict):
            raise BadInput("detection entries must be objects", file=str(det), record=record, field=f"[{j}]")
        for name, box in ent.items():
            boxes = box if box and isinstance(box[0], list) else [box]
            for bx in boxes:
                try:
                    x, y, bw, bh = (float(v) for v in bx)
                    xyxy = (max(x, 0.0), max(y, 0.0), min(x + bw, float(w)), min(y + bh, float(h)))
                    check_box(xyxy, w, h)
                except (TypeError, ValueError) as e:
                    raise BadInput(f"bad box {bx!r}: {e}", file=str(det), record=record, field=f"[{j}].{name}") from e
                out.append(Structure(name=str(name), box=xyxy, area_px=(xyxy[2] - xyxy[0]) * (xyxy[3] - xyxy[1])))
    return out


@register_importer("slake")
def import_slake(path: Path, b: ImportBuilder, options: dict[str, str]) -> None:
    files = [path] if path.is_file() else [path / f for f in SPLIT_FILES if (path / f).is_file()]
    if not files:
        raise BadInput("no train.json / validation.json / test.json found", file=str(path), field="PATH")
    root = files[0].parent
    imgs = Path(options["images"]) if "images" in options else root / "imgs"
    lang = options.get("lang")
    for jf in files:
        split = SPLIT_FILES.get(jf.name)
        for i, r in enumerate(read_json_list(jf)):
            qid = text(r.get("qid")) or f"{jf.name} row {i}"
            if lang and text(r.get("q_lang")) != lang:
                continue
            try:
                q, a = text(r.get("question")), text(r.get("answer"))
                if not q or not a:
                    raise BadInput("empty question or answer", file=str(jf), record=qid, field="question")
                name = text(r.get("img_name"))
                img = image_in(imgs, name, file=str(jf), record=qid)
                case_key = name
                case = b.cases.get(b.case_id(case_key))
                if case is None:
                    case = b.case(case_key, img, file=str(jf), record=qid,
                                  modality=MODALITY.get(text(r.get("modality")), text(r.get("modality")) or None),
                                  body_region=text(r.get("location")).lower() or None)
                    structs = _structures(img.parent, case.width, case.height, qid)
                    meta = dict(case.meta)
                    mask = img.parent / "mask.png"
                    if mask.is_file():
                        lm = load_label_map(mask, record=qid)
                        if lm.max() <= 255 and lm.shape == (case.height, case.width):
                            meta["mask"] = b.images.put_array(lm.astype("uint8")).path
                    case = case.model_copy(update={"structures": structs, "meta": meta})
                    b.cases[case.case_id] = case
                yn = yes_no(a) if text(r.get("answer_type")).upper() == "CLOSED" else None
                task = CONTENT_TASK.get(text(r.get("content_type")), OTHER_TASK)
                if yn:
                    task = YES_NO_TASK.get(task, task)
                b.add(case, task=task, form="yesno" if yn else "text", question=q, answer=yn or a, qid=qid,
                      split=split, meta={k: r.get(k) for k in ("content_type", "answer_type", "q_lang", "base_type",
                                                                "triple") if k in r})
            except BadInput as e:
                b.bad(e)
