"""A Hugging Face parquet dataset: a medr2 export (restored exactly from ``medr2_item``/``medr2_case``)
or any VQA-style parquet with ``image`` (``{bytes, path}``), ``question``, ``answer`` and optional
``options`` / ``task`` columns. PATH is the dataset folder (``data/*.parquet``) or one parquet file.

Foreign rows showing the same image (the same bytes) share one case (no split leak). The split comes
from a ``split`` column, else from the file name (``test-00000-of-00001.parquet`` -> test,
``validation-*`` -> val, ``train-*`` -> train). ``modality`` and ``location``/``body_region`` columns set
the case's modality and body region in medr2's words (the raw ones in the case meta); a ``qid`` column
becomes the item's qid; rows in SLAKE's schema (``content_type``, ``answer_type``) are mapped by SLAKE's
rules (Chinese yes/no too). Every other column is kept in ``Item.meta["columns"]``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from medr2.errors import BadInput
from medr2.interop.common import OTHER_TASK, TASK_STAGE, ImportBuilder, letter_of, yes_no
from medr2.interop.importers._mapping import extra_columns, image_key, vocab_fields
from medr2.interop.importers._util import file_failed, inside_files, text
from medr2.interop.roundtrip import CASE_IMAGE_COL, ITEM_COL, restore


def parquet_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    files = sorted((path / "data").glob("*.parquet")) if (path / "data").is_dir() else []
    return files or sorted(path.glob("*.parquet"))


def _image_bytes(v: Any) -> bytes | None:
    if isinstance(v, dict):
        return v.get("bytes")
    return v if isinstance(v, bytes) else None


def import_parquet(files: list[Path], b: ImportBuilder, where: Path) -> None:
    """Import the rows of ``files``; none is ``BadInput`` naming ``where`` (the dataset path given)."""
    import pyarrow.parquet as pq

    if not files:
        raise BadInput("no parquet files found", file=str(where), field="PATH")
    for f in files:
        try:
            rows = pq.read_table(f).to_pylist()
        except Exception as e:  # pyarrow raises several types for damaged files
            file_failed(b, BadInput(f"cannot read parquet: {e}", file=str(f)), f)
            continue
        for i, r in enumerate(rows):
            record = text(r.get("item_id")) or f"row {i}"
            try:
                if r.get(ITEM_COL):
                    restore(b, r, _image_bytes(r.get("image")), file=str(f), record=record,
                            case_image=r.get(CASE_IMAGE_COL),
                            images=[_image_bytes(v) for v in r.get("images") or []])
                else:
                    _foreign(b, r, f, record)
            except BadInput as e:
                b.bad(e)


CONSUMED = frozenset({"image", "images", "question", "answer", "options", "task", "split", "modality", "location",
                      "body_region", "qid", "item_id"})
_FILE_SPLIT = (("test", "test"), ("validation", "val"), ("valid", "val"), ("val", "val"), ("dev", "val"),
               ("train", "train"))


def split_of_file(name: str) -> str | None:
    """The split an HF data file's name states (``test-00000-of-00001.parquet`` -> test), or None."""
    n = name.lower()
    return next((s for prefix, s in _FILE_SPLIT if n.startswith(prefix)), None)


def _foreign(b: ImportBuilder, r: dict[str, Any], f: Path, record: str) -> None:
    from medr2.interop.importers.slake import slake_task

    if r.get("images"):
        raise BadInput("a foreign item of several images (no medr2_item naming each one's role) is not imported",
                       file=str(f), record=record, field="images")
    img = _image_bytes(r.get("image"))
    q, a = text(r.get("question")), text(r.get("answer"))
    if img is None or not q or not a:
        raise BadInput("needs image bytes, a question and an answer", file=str(f), record=record, field="question")
    v = vocab_fields(text(r.get("modality")), text(r.get("location") or r.get("body_region")))
    case = b.case(image_key(img), img, file=str(f), record=record, modality=v["modality"],
                  body_region=v["body_region"], meta=v["meta"])
    opts = [str(o) for o in (r.get("options") or [])]
    task = text(r.get("task"))
    task = task if task in TASK_STAGE else OTHER_TASK
    qid = text(r.get("qid")) or record
    split = text(r.get("split")).lower() or split_of_file(f.name)
    split = {"validation": "val", "valid": "val", "dev": "val"}.get(split or "", split)
    split = split if split in ("train", "val", "test") else None
    meta: dict[str, Any] = {}
    extra = extra_columns(r, CONSUMED)
    if extra:
        meta["columns"] = extra
    closed = text(r.get("answer_type")).upper() != "OPEN"
    yn = yes_no(a) if closed else None
    if task == OTHER_TASK and text(r.get("content_type")):  # SLAKE's schema (the SLAKE dataset cards)
        task = slake_task(text(r.get("content_type")), q, a, yn is not None)
    if opts:
        ans = a.upper() if len(a) == 1 and a.upper() in "ABCDEFGHIJ"[: len(opts)] else letter_of(a, opts)
        if not ans:
            raise BadInput("answer matches no option", file=str(f), record=record, field="answer")
        b.add(case, task=task, form="mcq", question=q, options=opts, answer=ans, qid=qid, split=split, meta=meta,
              file=str(f))
    elif yn:
        b.add(case, task=task, form="yesno", question=q, answer=yn, qid=qid, split=split, meta=meta)
    else:
        b.add(case, task=task, form="text", question=q, answer=a, qid=qid, split=split, meta=meta)


def import_hf(path: Path, b: ImportBuilder, options: dict[str, str]) -> None:
    files = parquet_files(path)
    import_parquet(inside_files(b, path, files) if path.is_dir() and files else files, b, path)
