"""OmniMedVQA (``QA_information/{Open-access,Restricted-access}/<dataset>.json`` + ``Images/``).

Record fields used: ``question_id``, ``dataset``, ``question_type`` (mapped by :data:`QTYPE_TASK`),
``question``, ``gt_answer``, ``option_A``..``option_D`` (2-4 present), ``image_path`` (relative to
the OmniMedVQA root), ``modality_type`` (or ``modality``). Records under ``Restricted-access`` get
``access=restricted``. The licence is per source dataset: ``OmniMedVQA/<dataset>`` unless given.
A question whose options are only yes and no ("Is there any abnormalities in this image?", filed under
Disease Diagnosis) is a yes/no item: ``s3.abnormal`` when it asks about an abnormality. ``modality_type``
is mapped to medr2's word (``CT(Computed Tomography)`` -> ``CT``; the raw one in ``meta["modality_raw"]``).
"""

from __future__ import annotations

import re
from pathlib import Path

from medr2.errors import BadInput
from medr2.interop.common import OTHER_TASK, ImportBuilder, letter_of, yes_no
from medr2.interop.importers._mapping import vocab_fields
from medr2.interop.importers._util import image_in, inside_files, read_json_list, readable, records, text

QTYPE_TASK: dict[str, str] = {
    "Modality Recognition": "s1.modality", "Anatomy Identification": "s2.organ",
    "Disease Diagnosis": "s4.diagnosis", "Lesion Grading": "s4.severity",
}
OPTION_KEYS = ("option_A", "option_B", "option_C", "option_D", "option_E")
ACCESS_DIRS = {"Open-access": "open", "Restricted-access": "restricted"}
_ABNORMAL = re.compile(r"\b(abnormal\w*|anomal\w*|normal)\b", re.I)


def yes_no_task(task: str, question: str, opts: list[str]) -> str | None:
    """The task of a yes/no-only question (None when the options are not exactly yes and no)."""
    if sorted(yes_no(o) or "" for o in opts) != ["no", "yes"]:
        return None
    return "s3.abnormal" if _ABNORMAL.search(question) else task


def _root_and_files(path: Path) -> tuple[Path, list[Path]]:
    if path.is_file():
        root = path.parent.parent.parent if path.parent.parent.name == "QA_information" else path.parent
        return root, [path]
    qa = path / "QA_information"
    return path, sorted(qa.rglob("*.json")) if qa.is_dir() else sorted(path.rglob("*.json"))


def import_omnimedvqa(path: Path, b: ImportBuilder, options: dict[str, str]) -> None:
    root, files = _root_and_files(path)
    if not files:
        raise BadInput("no OmniMedVQA QA_information JSON found", file=str(path), field="PATH")
    root = Path(options.get("root", root))
    if path.is_dir():
        files = inside_files(b, path, files)
    for f, recs in readable(b, files, read_json_list):
        access = ACCESS_DIRS.get(f.parent.name, b.access)
        for i, r in records(b, f, recs):
            qid = text(r.get("question_id")) or f"{f.name} row {i}"
            try:
                q, gt = text(r.get("question")), text(r.get("gt_answer"))
                opts = [text(r.get(k)) for k in OPTION_KEYS if text(r.get(k))]
                if not q or len(opts) < 2:
                    raise BadInput("needs a question and at least two options", file=str(f), record=qid,
                                   field="question")
                ans = letter_of(gt, opts)
                if not ans:
                    raise BadInput("gt_answer matches none of the options", file=str(f), record=qid,
                                   field="gt_answer")
                img = image_in(root, r.get("image_path"), file=str(f), record=qid)
                dataset = text(r.get("dataset")) or f.stem
                lic = b.license if b.license != "unspecified" else f"OmniMedVQA/{dataset} (see its terms)"
                v = vocab_fields(text(r.get("modality_type") or r.get("modality")), None)
                case = b.case(text(r.get("image_path")), img, file=str(f), record=qid, modality=v["modality"],
                              license=lic, access=access, meta={"dataset": dataset, **v["meta"]})
                task = QTYPE_TASK.get(text(r.get("question_type")), OTHER_TASK)
                meta = {"question_type": text(r.get("question_type")), "dataset": dataset}
                yn_task = yes_no_task(task, q, opts)
                if yn_task:
                    b.add(case, task=yn_task, form="yesno", question=q, answer=yes_no(gt) or gt, qid=qid,
                          split="test", license=lic, access=access, meta={**meta, "options": opts})
                    continue
                b.add(case, task=task, form="mcq", question=q, options=opts, answer=ans, qid=qid, split="test",
                      file=str(f),
                      license=lic, access=access, meta=meta)
            except BadInput as e:
                b.bad(e)
