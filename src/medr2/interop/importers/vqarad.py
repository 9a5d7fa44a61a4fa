"""VQA-RAD: the OSF original (``VQA_RAD Dataset Public.json`` + ``VQA_RAD Image Folder``) or its common
MEVF copy (``data_RAD/trainset.json`` + ``testset.json`` + ``images/``). PATH is a JSON file or the folder.

Record fields used: ``qid``, ``image_name``, ``question``, ``answer``, ``answer_type`` (CLOSED/OPEN),
``question_type`` (e.g. ``PRES``, ``MODALITY``, or combined ``PRES, POS``: the first mapped type wins),
``phrase_type`` (``test_*`` -> test split, else train), ``image_organ`` (-> body region).
The split: ``split=`` when given, else from the file name (``testset.json``/``test*.json`` -> test,
``trainset.json``/``train*.json`` -> train), else from ``phrase_type`` (the OSF file). A MODALITY question
about weighting, FLAIR or contrast maps to ``s1.sequence``; a closed ``"X or Y?"`` question whose two
options can be read from its wording becomes a two-option MCQ (``meta["options_from_question"]``).
Note: in the MEVF copy all 203 test images also occur in the train split (the split is by question).
Options: ``images=DIR`` (default: ``VQA_RAD Image Folder`` or ``images`` beside the JSON, else the JSON's
folder), ``split=train|val|test``.
"""

from __future__ import annotations

from pathlib import Path

from medr2.errors import BadInput
from medr2.interop.common import OTHER_TASK, ImportBuilder, letter_of, yes_no
from medr2.interop.importers._mapping import SEQUENCE_WORDS, answer_key, or_options
from medr2.interop.importers._util import image_in, inside_files, read_json_list, records, text

JSON_NAME = "VQA_RAD Dataset Public.json"
IMAGE_DIR = "VQA_RAD Image Folder"
# file names a VQA-RAD folder may hold (OSF original, then the MEVF / MICCAI19-MedVQA copy)
JSON_NAMES = (JSON_NAME, "trainset.json", "testset.json")
IMAGE_DIRS = (IMAGE_DIR, "images")

# VQA-RAD question_type -> task
QTYPE_TASK: dict[str, str] = {
    "MODALITY": "s1.modality", "PLANE": "s1.plane", "ORGAN": "s2.organ", "PRES": "s3.abnormal",
    "ABN": "s3.abnormal", "POS": "s3.location", "SIZE": "s3.size", "COUNT": "s3.count", "ATTRIB": "s3.attribute",
    "COLOR": "s3.attribute",
}
# an open (not yes/no) question of these tasks asks which finding, not whether one is present
OPEN_TASK = {"s3.abnormal": "s3.finding_type"}
ORGAN_REGION = {"HEAD": "head", "CHEST": "chest", "ABD": "abdomen"}


def task_for(question_type: str, is_yes_no: bool, question: str = "", answer: str = "") -> str:
    for t in (p.strip().upper() for p in question_type.replace(";", ",").split(",")):
        if t in QTYPE_TASK:
            task = QTYPE_TASK[t]
            if task == "s1.modality" and SEQUENCE_WORDS.search(f"{question} {answer}"):
                return "s1.sequence"
            return task if is_yes_no else OPEN_TASK.get(task, task)
    return OTHER_TASK


def split_of_file(name: str) -> str | None:
    """The split a VQA-RAD file name states (``testset.json`` -> test), or None (the OSF file)."""
    n = name.lower()
    for prefix, split in (("test", "test"), ("val", "val"), ("train", "train")):
        if n.startswith(prefix):
            return split
    return None


def _files(path: Path) -> list[Path]:
    if not path.is_dir():
        return [path]
    if (path / JSON_NAME).is_file():  # the OSF original holds every split; its copies beside it are not read
        return [path / JSON_NAME]
    found = [path / n for n in JSON_NAMES if (path / n).is_file()]
    if not found:
        raise BadInput(f"expected {' or '.join(JSON_NAMES)}", file=str(path), field="PATH")
    return found


def import_vqarad(path: Path, b: ImportBuilder, options: dict[str, str]) -> None:
    forced = options.get("split")
    if forced not in (None, "train", "val", "test"):
        raise BadInput("split must be train, val or test", field="--option split")
    for jpath in _files(path):
        _import_file(path, jpath, b, options, forced)


def _import_file(root: Path, jpath: Path, b: ImportBuilder, options: dict[str, str], forced: str | None) -> None:
    if not jpath.is_file():
        raise BadInput(f"expected {JSON_NAME}", file=str(jpath), field="PATH")
    if root.is_dir() and not inside_files(b, root, [jpath]):
        return  # the question file is a symlink leading out of the dataset folder (quarantined)
    default_dir = next((jpath.parent / d for d in IMAGE_DIRS if (jpath.parent / d).is_dir()), jpath.parent)
    images = Path(options["images"]) if "images" in options else default_dir
    file_split = forced or split_of_file(jpath.name)
    for i, r in records(b, jpath, read_json_list(jpath)):
        qid = text(r.get("qid")) or f"row {i}"
        try:
            q, a = text(r.get("question")), text(r.get("answer"))
            if not q or not a:
                raise BadInput("empty question or answer", file=str(jpath), record=qid, field="question")
            img = image_in(images, r.get("image_name"), file=str(jpath), record=qid)
            region = ORGAN_REGION.get(text(r.get("image_organ")).upper())
            case = b.case(text(r.get("image_name")), img, file=str(jpath), record=qid, body_region=region)
            closed = text(r.get("answer_type")).upper() == "CLOSED"
            yn = yes_no(a) if closed else None
            split = file_split or ("test" if text(r.get("phrase_type")).startswith("test") else "train")
            task = task_for(text(r.get("question_type")), yn is not None, q, a)
            meta = {"question_type": text(r.get("question_type")), "answer_type": text(r.get("answer_type")),
                    "phrase_type": text(r.get("phrase_type"))}
            if text(r.get("image_organ")):
                meta["body_region_raw"] = text(r.get("image_organ"))
            opts = or_options(q, a) if closed and not yn else None
            if opts:
                b.add(case, task=task, form="mcq", question=q, options=opts, answer=letter_of(a, opts) or
                      ("A" if answer_key(a) == answer_key(opts[0]) else "B"), qid=qid, split=split, file=str(jpath),
                      meta={**meta, "options_from_question": True})
            else:
                b.add(case, task=task, form="yesno" if yn else "text", question=q, answer=yn or a, qid=qid,
                      split=split, meta=meta)
        except BadInput as e:
            b.bad(e)
