"""VQA-RAD (``VQA_RAD Dataset Public.json`` + ``VQA_RAD Image Folder``).

Record fields used: ``qid``, ``image_name``, ``question``, ``answer``, ``answer_type`` (CLOSED/OPEN),
``question_type`` (e.g. ``PRES``, ``MODALITY``, or combined ``PRES, POS``: the first mapped type wins),
``phrase_type`` (``test_*`` -> test split, else train), ``image_organ`` (-> body region).
Options: ``images=DIR`` (default: ``VQA_RAD Image Folder`` beside the JSON, else the JSON's folder).
"""

from __future__ import annotations

from pathlib import Path

from medr2.errors import BadInput
from medr2.interop.common import OTHER_TASK, ImportBuilder, yes_no
from medr2.interop.importers import register_importer
from medr2.interop.importers._util import image_in, inside_files, read_json_list, records, text

JSON_NAME = "VQA_RAD Dataset Public.json"
IMAGE_DIR = "VQA_RAD Image Folder"

# VQA-RAD question_type -> task
QTYPE_TASK: dict[str, str] = {
    "MODALITY": "s1.modality", "PLANE": "s1.plane", "ORGAN": "s2.organ", "PRES": "s3.abnormal",
    "ABN": "s3.abnormal", "POS": "s3.location", "SIZE": "s3.size", "COUNT": "s3.count", "ATTRIB": "s3.attribute",
    "COLOR": "s3.attribute",
}
# an open (not yes/no) question of these tasks asks which finding, not whether one is present
OPEN_TASK = {"s3.abnormal": "s3.finding_type"}
ORGAN_REGION = {"HEAD": "head", "CHEST": "chest", "ABD": "abdomen"}


def task_for(question_type: str, is_yes_no: bool) -> str:
    for t in (p.strip().upper() for p in question_type.replace(";", ",").split(",")):
        if t in QTYPE_TASK:
            task = QTYPE_TASK[t]
            return task if is_yes_no else OPEN_TASK.get(task, task)
    return OTHER_TASK


@register_importer("vqa-rad")
def import_vqarad(path: Path, b: ImportBuilder, options: dict[str, str]) -> None:
    jpath = path / JSON_NAME if path.is_dir() else path
    if not jpath.is_file():
        raise BadInput(f"expected {JSON_NAME}", file=str(jpath), field="PATH")
    if path.is_dir() and not inside_files(b, path, [jpath]):
        return  # the question file is a symlink leading out of the dataset folder (quarantined)
    default_dir = jpath.parent / IMAGE_DIR
    images = Path(options["images"]) if "images" in options else (
        default_dir if default_dir.is_dir() else jpath.parent)
    for i, r in records(b, jpath, read_json_list(jpath)):
        qid = text(r.get("qid")) or f"row {i}"
        try:
            q, a = text(r.get("question")), text(r.get("answer"))
            if not q or not a:
                raise BadInput("empty question or answer", file=str(jpath), record=qid, field="question")
            img = image_in(images, r.get("image_name"), file=str(jpath), record=qid)
            region = ORGAN_REGION.get(text(r.get("image_organ")).upper())
            case = b.case(text(r.get("image_name")), img, file=str(jpath), record=qid, body_region=region)
            yn = yes_no(a) if text(r.get("answer_type")).upper() == "CLOSED" else None
            split = "test" if text(r.get("phrase_type")).startswith("test") else "train"
            b.add(case, task=task_for(text(r.get("question_type")), yn is not None), form="yesno" if yn else "text",
                  question=q, answer=yn or a, qid=qid, split=split,
                  meta={"question_type": text(r.get("question_type")), "answer_type": text(r.get("answer_type")),
                        "phrase_type": text(r.get("phrase_type"))})
        except BadInput as e:
            b.bad(e)
