"""PMC-VQA (``train.csv``/``test.csv`` or ``*_2.csv``/``test_clean.csv`` + ``images/``).

Columns used: ``Figure_path``, ``Question``, ``Choice A``..``Choice D`` (values may carry an
``"A:"`` prefix, removed), and ``Answer_label`` (a letter) or else ``Answer`` (matched to a choice).
PMC-VQA has no question type, so the task comes from :data:`KEYWORD_TASKS` (first rule whose
keywords occur in the question); questions matching none go to ``imported.other``. Options:
``images=DIR`` (default ``images`` beside the CSV), ``split=train|val|test`` (default from the file
name: ``test*`` -> test, else train).
"""

from __future__ import annotations

import re
from pathlib import Path

from medr2.errors import BadInput
from medr2.interop.common import OTHER_TASK, ImportBuilder, letter_of
from medr2.interop.importers._util import image_in, inside_files, read_csv_rows, readable, text

CHOICES = ("Choice A", "Choice B", "Choice C", "Choice D")
# (task, pattern) in priority order; a question is assigned the first task whose pattern matches
KEYWORD_TASKS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("s1.modality", re.compile(r"\b(modality|imaging (technique|method|modality)|type of (scan|imaging))\b", re.I)),
    ("s1.plane", re.compile(r"\b(plane|view|projection)\b", re.I)),
    ("s1.sequence", re.compile(r"\b(sequence|weighted)\b", re.I)),
    ("s3.location", re.compile(r"\b(where|location|located|which side)\b", re.I)),
    ("s3.count", re.compile(r"\bhow many\b", re.I)),
    ("s4.diagnosis", re.compile(r"\b(diagnosis|diagnosed|disease|condition)\b", re.I)),
    ("s3.finding_type", re.compile(r"\b(abnormalit(y|ies)|lesion|finding|mass|tumou?r)\b", re.I)),
    ("s2.organ", re.compile(r"\b(organ|structure|anatom\w*)\b", re.I)),
)
_PREFIX = re.compile(r"^\s*[A-D]\s*[:.)]\s*")


def task_for(question: str) -> str:
    for task, pat in KEYWORD_TASKS:
        if pat.search(question):
            return task
    return OTHER_TASK


def _files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return sorted(p for p in path.glob("*.csv"))


def import_pmcvqa(path: Path, b: ImportBuilder, options: dict[str, str]) -> None:
    files = _files(path)
    if not files:
        raise BadInput("no PMC-VQA CSV found", file=str(path), field="PATH")
    if path.is_dir():
        files = inside_files(b, path, files)
    for f, rows in readable(b, files, lambda f: read_csv_rows(f, ("Figure_path", "Question", *CHOICES))):
        images = Path(options["images"]) if "images" in options else f.parent / "images"
        split = options.get("split") or ("test" if f.name.startswith("test") else "train")
        for i, r in enumerate(rows):
            qid = text(r.get("index")) or f"{f.name} row {i + 2}"
            try:
                q = text(r.get("Question"))
                opts = [_PREFIX.sub("", text(r.get(c))) for c in CHOICES if text(r.get(c))]
                if not q or len(opts) < 2:
                    raise BadInput("needs a question and at least two choices", file=str(f), record=qid,
                                   field="Question")
                label = text(r.get("Answer_label")).upper()
                ans = label if label and label in "ABCD"[: len(opts)] else \
                    letter_of(_PREFIX.sub("", text(r.get("Answer"))), opts)
                if not ans:
                    raise BadInput("the answer matches none of the choices", file=str(f), record=qid, field="Answer")
                img = image_in(images, r.get("Figure_path"), file=str(f), record=qid)
                case = b.case(text(r.get("Figure_path")), img, file=str(f), record=qid)
                b.add(case, task=task_for(q), form="mcq", question=q, options=opts, answer=ans, qid=qid, file=str(f),
                      split=split, meta={"file": f.name})
            except BadInput as e:
                b.bad(e)
