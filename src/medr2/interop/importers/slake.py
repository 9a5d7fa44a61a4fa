"""SLAKE, in its released layout::

    mask.txt                      the ID mapping dictionary for mask values (organ names)
    train.json  validate.json (or validation.json)  test.json     the questions, one list per split
    imgs/xmlabN/source.jpg        the image
    imgs/xmlabN/detection.json    organ boxes: [{"Liver": [x, y, w, h]}, ...]
    imgs/xmlabN/mask.png          the semantic mask (values named by mask.txt)
    imgs/xmlabN/question.json     the image's questions (the split files hold the same; not read)

Question fields used: ``qid``, ``img_name`` (``xmlabN/source.jpg``), ``question``, ``answer``,
``answer_type`` (OPEN/CLOSED), ``content_type`` (mapped by :data:`CONTENT_TASK`), ``modality``,
``location`` (body region), ``q_lang``, ``base_type``, ``triple``. Each case carries the organs of
``detection.json`` (boxes) and of ``mask.png`` decoded with ``mask.txt`` (masks; attached to the box of
the same organ); each item lists, in ``meta["evidence"]``, the organs its question or answer names,
with their boxes. Chinese closed answers (是的/不是, 包含/不包含, 有/没有, ...) are yes/no like the English
ones. Modality and location are mapped to medr2's words (``X-Ray`` -> ``X-ray``, ``Brain_Tissue`` ->
``head``, ``Chest_lung`` -> ``chest``), SLAKE's own in ``meta["modality_raw"]``/``["body_region_raw"]``.
Options: ``lang=en`` keeps one language (the others are skipped, not quarantined),
``images=DIR`` (default ``imgs`` beside the split files).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from medr2.errors import BadInput
from medr2.interop.common import OTHER_TASK, ImportBuilder, yes_no
from medr2.interop.importers._mapping import REGION_QUESTION, REGION_YES_NO, SEQUENCE_WORDS, vocab_fields
from medr2.interop.importers._slake_annotations import (
    detection_boxes,
    evidence,
    load_mask_names,
    mask_structures,
    merge,
    read_mask,
)
from medr2.interop.importers._util import image_in, inside, inside_files, read_json_list, readable, records, text
from medr2.records import Case

SPLIT_FILES = {"train.json": "train", "validate.json": "val", "validation.json": "val", "test.json": "test"}
# SLAKE content_type -> task (closed yes/no abnormality questions -> s3.abnormal)
CONTENT_TASK: dict[str, str] = {
    "Modality": "s1.modality", "Plane": "s1.plane", "Organ": "s2.organ", "Position": "s3.location",
    "Abnormality": "s3.finding_type", "Quantity": "s2.count", "Size": "s2.size_compare",
}
YES_NO_TASK = {"s3.finding_type": "s3.abnormal", "s2.organ": "s2.organ_presence"}
MODALITY = {"X-Ray": "X-ray", "CT": "CT", "MRI": "MRI"}


def slake_task(content_type: str, question: str, answer: str, is_yes_no: bool) -> str:
    """The task of one SLAKE question (en or zh): ``content_type`` first, then the wording: a question
    about which part of the body the image shows is ``s1.region``; an MR weighting question
    ``s1.sequence``; a yes/no organ question ``s2.organ_presence`` (``"Is this a study of the chest?"``:
    ``s1.region``); a yes/no abnormality question ``s3.abnormal``."""
    task = CONTENT_TASK.get(content_type, OTHER_TASK)
    if task in ("s3.location", "s2.organ") and REGION_QUESTION.search(question):
        return "s1.region"
    if task == "s1.modality" and SEQUENCE_WORDS.search(f"{question} {answer}"):
        return "s1.sequence"
    if task == "s2.organ" and is_yes_no and REGION_YES_NO.search(question):
        return "s1.region"
    return YES_NO_TASK.get(task, task) if is_yes_no else task


def _annotate(b: ImportBuilder, case: Case, imgs: Path, img: Path, names: dict[int, str] | None) -> Case:
    """Attach detection boxes and decoded mask organs to a new case (bad annotation files are quarantined;
    the case keeps its image). Each annotation file must resolve inside the image folder ``imgs``: a
    symlink leading out is quarantined, never read."""
    folder = img.parent
    record = folder.name  # annotation files belong to the image folder (xmlabN), not to one question
    boxes, masks, meta = [], [], dict(case.meta)
    try:
        if (folder / "detection.json").is_file() or (folder / "detection.json").is_symlink():
            det = inside(imgs, folder / "detection.json", file=str(folder / "detection.json"), record=record,
                         field="detection")
            boxes = detection_boxes(det, case.width, case.height, record)
    except BadInput as e:
        b.bad(e)
    try:
        if (folder / "mask.png").is_file() or (folder / "mask.png").is_symlink():
            mp = inside(imgs, folder / "mask.png", file=str(folder / "mask.png"), record=record, field="mask")
            raw = read_mask(mp, case.width, case.height, record)
            if raw.max() <= 255:
                meta["mask"] = b.images.put_array(raw.astype("uint8")).path
            if names is not None:
                masks = mask_structures(b.images, raw, names)
                meta["mask_values_unnamed"] = sorted(int(v) for v in set(raw.ravel().tolist()) - {0} - set(names))
    except BadInput as e:
        b.bad(e)
    case = case.model_copy(update={"structures": merge(boxes, masks), "meta": meta})
    b.cases[case.case_id] = case
    return case


def import_slake(path: Path, b: ImportBuilder, options: dict[str, str]) -> None:
    files = [path] if path.is_file() else [path / f for f in SPLIT_FILES if (path / f).is_file()]
    if not files:
        raise BadInput("no train.json / validate.json / test.json found", file=str(path), field="PATH")
    root = files[0].parent
    if path.is_dir():
        files = inside_files(b, path, files)
    imgs = Path(options["images"]) if "images" in options else root / "imgs"
    lang = options.get("lang")
    try:
        names = load_mask_names(root)
    except BadInput as e:
        b.bad(e)
        names = None
    for jf, recs in readable(b, files, read_json_list):
        split = SPLIT_FILES.get(jf.name)
        for i, r in records(b, jf, recs):
            qid = text(r.get("qid")) or f"{jf.name} row {i}"
            if lang and text(r.get("q_lang")) != lang:
                continue
            try:
                q, a = text(r.get("question")), text(r.get("answer"))
                if not q or not a:
                    raise BadInput("empty question or answer", file=str(jf), record=qid, field="question")
                name = text(r.get("img_name"))
                img = image_in(imgs, name, file=str(jf), record=qid)
                case = b.cases.get(b.case_id(name))
                if case is None:
                    v = vocab_fields(text(r.get("modality")), text(r.get("location")))
                    case = b.case(name, img, file=str(jf), record=qid, modality=v["modality"],
                                  body_region=v["body_region"], meta=v["meta"])
                    case = _annotate(b, case, imgs, img, names)
                yn = yes_no(a) if text(r.get("answer_type")).upper() == "CLOSED" else None
                task = slake_task(text(r.get("content_type")), q, a, yn is not None)
                meta: dict[str, Any] = {k: r.get(k) for k in ("content_type", "answer_type", "q_lang", "base_type",
                                                              "triple") if k in r}
                ev = evidence(list(case.structures), q, a)
                if ev:
                    meta["evidence"] = ev
                b.add(case, task=task, form="yesno" if yn else "text", question=q, answer=yn or a, qid=qid,
                      split=split, meta=meta)
            except BadInput as e:
                b.bad(e)
