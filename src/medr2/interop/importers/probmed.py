"""ProbMed (``test.json`` + image folder): yes/no questions with adversarial (hallucinated) twins.

Record fields used: ``id`` (the image's id, shared by its questions), ``image`` (path under the image
folder), ``question``, ``answer`` (yes/no), ``image_type`` (modality and organ), ``qa_type``:
``modality_gt``/``modality_hallu``, ``body_part_gt``/``body_part_hallu``, ``entity_gt_N``/
``entity_hallu_N``, ``grounding_gt_N``/``grounding_hallu_N`` (a ground-truth question and its
adversarial twin), ``abnormality``, ``entity_hallu`` (unpaired). Twins share a ``pair_id`` (the pair
is kept only when both members import). A present-finding question (``entity_gt_N``, answer yes) is
``s3.finding_type`` (yes/no form); only its hallucinated twin (``entity_hallu_N``) is ``s3.absent_finding``.
``image_type`` (``ct scan_abdomen``) gives the case's modality and body region in medr2's words (the raw
value in ``meta["image_type"]``). Options: ``images=DIR`` (default: the JSON's folder).
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from medr2.errors import BadInput
from medr2.interop.common import OTHER_TASK, ImportBuilder, yes_no
from medr2.interop.importers._mapping import vocab_fields
from medr2.interop.importers._util import image_in, inside_files, read_json_list, records, text
from medr2.records import stable_hash

# qa_type family -> task
FAMILY_TASK: dict[str, str] = {
    "modality": "s1.modality", "body_part": "s1.region", "abnormality": "s3.abnormal",
    "entity": "s3.absent_finding", "grounding": "s3.location",
}
_QA = re.compile(r"^(modality|body_part|entity|grounding|abnormality)(?:_(gt|hallu))?(?:_(\d+))?$")
MODALITY = {"ct_scan": "CT", "ct": "CT", "mri": "MRI", "x-ray": "X-ray", "xray": "X-ray"}


def parse_qa_type(qa: str) -> tuple[str, str | None, str | None]:
    m = _QA.match(qa.strip())
    if not m:
        return ("", None, None)
    return m.group(1), m.group(2), m.group(3)


def import_probmed(path: Path, b: ImportBuilder, options: dict[str, str]) -> None:
    jpath = path / "test.json" if path.is_dir() else path
    if not jpath.is_file():
        raise BadInput("expected ProbMed test.json", file=str(jpath), field="PATH")
    if path.is_dir() and not inside_files(b, path, [jpath]):
        return  # test.json is a symlink leading out of the dataset folder (quarantined)
    images = Path(options.get("images", jpath.parent))
    recs = dict(records(b, jpath, read_json_list(jpath)))  # index -> record (non-objects quarantined)
    groups: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for i, r in recs.items():
        fam, kind, n = parse_qa_type(text(r.get("qa_type")))
        if kind:
            groups[(text(r.get("id")), fam, n or "")].append(i)
    pair_of: dict[int, str] = {}
    for key, idx in groups.items():
        kinds = sorted(parse_qa_type(text(recs[i].get("qa_type")))[1] or "" for i in idx)
        if kinds == ["gt", "hallu"]:
            for i in idx:
                pair_of[i] = f"probmed-{stable_hash(list(key), 12)}"
    for i, r in recs.items():
        qid = f"{text(r.get('id'))}:{text(r.get('qa_type'))}" if r.get("qa_type") else f"row {i}"
        try:
            q = text(r.get("question"))
            yn = yes_no(text(r.get("answer")))
            if not q or yn is None:
                raise BadInput("needs a question and a yes/no answer", file=str(jpath), record=qid, field="answer")
            img = image_in(images, r.get("image"), file=str(jpath), record=qid)
            itype = text(r.get("image_type"))
            mod = next((v for k, v in MODALITY.items() if itype.lower().startswith(k)), None)
            mod_raw, _, part = itype.partition("_")
            v = vocab_fields(mod_raw, part)
            case = b.case(text(r.get("image")), img, file=str(jpath), record=qid, modality=mod or v["modality"],
                          body_region=v["body_region"], meta={"image_type": itype})
            fam, kind, _ = parse_qa_type(text(r.get("qa_type")))
            meta: dict[str, Any] = {"qa_type": text(r.get("qa_type")), "image_type": itype, "image_id": r.get("id")}
            if kind == "hallu":
                meta["adversarial"] = True
            task = "s3.finding_type" if fam == "entity" and kind == "gt" else FAMILY_TASK.get(fam, OTHER_TASK)
            b.add(case, task=task, form="yesno", question=q, answer=yn, qid=qid,
                  pair_id=pair_of.get(i), split="test", meta=meta)
        except BadInput as e:
            b.bad(e)
