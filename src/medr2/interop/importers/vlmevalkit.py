"""VLMEvalKit-style TSV: ``index``, ``image`` (base64; or the ``index`` of another row holding the
same image), optional ``image_path``, ``question``, option columns ``A``, ``B``, ... , ``answer``
(a letter for MCQ, else the answer text), ``category``, ``l2-category``, ``hint``, ``split``.
A medr2 export is restored exactly from ``medr2_item``/``medr2_case``. Otherwise: option columns
present -> MCQ; a yes/no answer -> yes/no; else text. The task is ``category`` when it is a medr2
task id, else ``imported.other``. PATH is a ``.tsv`` file or a folder of them.

Rows showing the same image (the same bytes, or the same ``image_path``) share one case, so a split never
puts one image on both sides. Every other column (GMAI-MMBench's ``clinical VQA task``, ``department``,
``perceptual granularity``, ``original task``, ...) is kept in ``Item.meta["columns"]``; GMAI-MMBench's
``clinical VQA task`` is mapped by :data:`GMAI_TASK` and its ``modality`` column to the case modality
(medr2's word; the raw one in ``meta["modality_raw"]``). A file without an ``answer`` column (a TEST file
whose answers are withheld) imports with ``answer`` empty and ``meta["answer_unknown"] = True``: such items
are for running models and exporting predictions; the manifest counts them and ``medr2 score`` refuses
such a bench rather than count every answer wrong.
"""

from __future__ import annotations

import base64
import binascii
import string
from pathlib import Path

from medr2 import jsonsafe
from medr2.errors import BadInput
from medr2.interop.common import OTHER_TASK, TASK_STAGE, ImportBuilder, letter_of, yes_no
from medr2.interop.importers._mapping import extra_columns, image_key, vocab_fields
from medr2.interop.importers._util import image_in, inside_files, read_csv_rows, readable, text
from medr2.interop.roundtrip import CASE_IMAGE_COL, ITEM_COL, restore

OPTION_COLS = tuple(string.ascii_uppercase[:10])
# GMAI-MMBench "clinical VQA task" -> task (the others stay imported.other, their column kept)
GMAI_TASK: dict[str, str] = {
    "organ recognition": "s2.organ", "disease diagnosis": "s4.diagnosis", "severity grading": "s4.severity",
    "attribute recognition": "s3.attribute", "counting": "s3.count", "image quality grading": "s1.quality",
    "modality recognition": "s1.modality", "lesion grading": "s4.severity",
}
CONSUMED = frozenset({"index", "image", "question", "hint", "answer", "category", "l2-category", "split",
                      "modality", *OPTION_COLS})


def _column(r: dict[str, str], name: str) -> str:
    """A column by name, case-insensitively (``clinical VQA task`` / ``clinical vqa task``)."""
    for k, v in r.items():
        if k is not None and k.strip().lower() == name:
            return text(v)
    return ""


def _b64(v: str, file: str, record: str, field: str) -> bytes:
    try:
        return base64.b64decode(v, validate=True)
    except (binascii.Error, ValueError) as e:
        raise BadInput(f"invalid base64: {e}", file=file, record=record, field=field) from e


def _listed(cell: str, f: Path, rec: str) -> list[str]:
    """A list cell of base64 strings: JSON (what medr2 writes) or a Python literal (VLMEvalKit's ``str(list)``),
    read as data, never evaluated."""
    import ast

    try:
        value = jsonsafe.loads(cell, file=str(f), record=rec, field="image")
    except jsonsafe.OverBound:
        raise
    except BadInput:
        try:
            value = ast.literal_eval(cell)
        except (ValueError, SyntaxError, MemoryError, RecursionError) as e:
            raise BadInput(f"not a list of base64 images: {str(e)[:200]}", file=str(f), record=rec,
                           field="image") from None
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise BadInput("not a list of base64 images", file=str(f), record=rec, field="image")
    return value


def import_tsv(path: Path, b: ImportBuilder, options: dict[str, str]) -> None:
    files = [path] if path.is_file() else sorted(path.glob("*.tsv"))
    if not files:
        raise BadInput("no .tsv files found", file=str(path), field="PATH")
    if path.is_dir():
        files = inside_files(b, path, files)
    for f, rows in readable(b, files, lambda f: read_csv_rows(f, ("index", "question"), delimiter="\t")):
        by_index: dict[str, dict[str, str]] = {}
        first_row: dict[str, int] = {}
        no_answers = bool(rows) and "answer" not in rows[0]
        for n, r in enumerate(rows, start=1):
            if idx := text(r.get("index")):
                by_index.setdefault(idx, r)
                first_row.setdefault(idx, n)
        for n, r in enumerate(rows, start=1):
            rec = text(r.get("index")) or f"{f.name} row {n + 1}"
            if rec in first_row and first_row[rec] != n:  # its case key would be the first row's image
                b.bad(BadInput(f"repeated index (first in data row {first_row[rec]}); data row {n} is not "
                               "imported", file=str(f), record=rec, field="index"))
                continue
            try:
                img_field = text(r.get("image"))
                if img_field and len(img_field) <= 64 and img_field in by_index:  # VLMEvalKit image reference
                    img_field = text(by_index[img_field].get("image"))
                if img_field.startswith("["):  # several images (VLMEvalKit's list cell)
                    several = [_b64(v, str(f), rec, f"image[{k}]") for k, v in enumerate(_listed(img_field, f, rec))]
                    if not r.get(ITEM_COL):
                        raise BadInput("a foreign item of several images (no medr2_item naming each one's role) is "
                                       "not imported", file=str(f), record=rec, field="image")
                    ci = text(r.get(CASE_IMAGE_COL))
                    restore(b, r, None, file=str(f), record=rec, images=several,
                            case_image=_b64(ci, str(f), rec, CASE_IMAGE_COL) if ci else None)
                    continue
                img: bytes | Path | None = _b64(img_field, str(f), rec, "image") if img_field else None
                if img is None and text(r.get("image_path")):
                    img = image_in(f.parent, r.get("image_path"), file=str(f), record=rec)
                if r.get(ITEM_COL):
                    ci = text(r.get(CASE_IMAGE_COL))
                    restore(b, r, img if isinstance(img, bytes) else None, file=str(f), record=rec,
                            case_image=_b64(ci, str(f), rec, CASE_IMAGE_COL) if ci else None)
                    continue
                if img is None:
                    raise BadInput("no image", file=str(f), record=rec, field="image")
                key = image_key(img) if isinstance(img, bytes) else f"path:{text(r.get('image_path'))}"
                v = vocab_fields(text(r.get("modality")), None)
                case = b.case(key, img, file=str(f), record=rec, modality=v["modality"], meta=v["meta"])
                q = " ".join(x for x in (text(r.get("hint")), text(r.get("question"))) if x)
                a = text(r.get("answer"))
                opts = [text(r.get(c)) for c in OPTION_COLS if text(r.get(c))]
                cat = text(r.get("category"))
                task = cat if cat in TASK_STAGE else GMAI_TASK.get(_column(r, "clinical vqa task").lower(),
                                                                   OTHER_TASK)
                split = text(r.get("split")) or None
                split = split if split in ("train", "val", "test") else None
                meta: dict[str, object] = {"category": cat, "l2-category": text(r.get("l2-category"))}
                extra = extra_columns(r, CONSUMED)
                if extra:
                    meta["columns"] = extra
                if no_answers:
                    b.add(case, task=task, form="mcq" if opts else "text", question=q, options=opts, answer="",
                          file=str(f),
                          qid=rec, split=split or "test", meta={**meta, "answer_unknown": True})
                    continue
                if opts:
                    ans = a.upper() if a.upper() in OPTION_COLS[: len(opts)] else letter_of(a, opts)
                    if not ans:
                        raise BadInput("answer matches no option", file=str(f), record=rec, field="answer")
                    b.add(case, task=task, form="mcq", question=q, options=opts, answer=ans, qid=rec, split=split,
                          file=str(f),
                          meta=meta)
                elif yes_no(a):
                    b.add(case, task=task, form="yesno", question=q, answer=yes_no(a) or a, qid=rec, split=split,
                          meta=meta)
                else:
                    b.add(case, task=task, form="text", question=q, answer=a, qid=rec, split=split, meta=meta)
            except BadInput as e:
                b.bad(e)
