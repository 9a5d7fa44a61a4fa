"""OmniMedVQA (``QA_information/{Open-access,Restricted-access}/<dataset>.json`` + ``Images/``).

Record fields used: ``question_id``, ``dataset``, ``question_type`` (mapped by :data:`QTYPE_TASK`),
``question``, ``gt_answer``, ``option_A``..``option_D`` (2-4 present), ``image_path`` (relative to
the OmniMedVQA root), ``modality_type`` (or ``modality``). Records under ``Restricted-access`` get
``access=restricted``. The licence is per source dataset: ``OmniMedVQA/<dataset>`` unless given.
"""

from __future__ import annotations

from pathlib import Path

from medr2.errors import BadInput
from medr2.interop.common import OTHER_TASK, ImportBuilder, letter_of
from medr2.interop.importers import register_importer
from medr2.interop.importers._util import image_in, inside_files, read_json_list, readable, records, text

QTYPE_TASK: dict[str, str] = {
    "Modality Recognition": "s1.modality", "Anatomy Identification": "s2.organ",
    "Disease Diagnosis": "s4.diagnosis", "Lesion Grading": "s4.severity",
}
OPTION_KEYS = ("option_A", "option_B", "option_C", "option_D", "option_E")
ACCESS_DIRS = {"Open-access": "open", "Restricted-access": "restricted"}


def _root_and_files(path: Path) -> tuple[Path, list[Path]]:
    if path.is_file():
        root = path.parent.parent.parent if path.parent.parent.name == "QA_information" else path.parent
        return root, [path]
    qa = path / "QA_information"
    return path, sorted(qa.rglob("*.json")) if qa.is_dir() else sorted(path.rglob("*.json"))


@register_importer("omnimedvqa")
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
                modality = text(r.get("modality_type") or r.get("modality")) or None
                case = b.case(text(r.get("image_path")), img, file=str(f), record=qid, modality=modality,
                              license=lic, access=access, meta={"dataset": dataset})
                b.add(case, task=QTYPE_TASK.get(text(r.get("question_type")), OTHER_TASK), form="mcq", question=q,
                      options=opts, answer=ans, qid=qid, split="test", license=lic, access=access,
                      meta={"question_type": text(r.get("question_type")), "dataset": dataset})
            except BadInput as e:
                b.bad(e)
