"""A Hugging Face parquet dataset: a medr2 export (restored exactly from ``medr2_item``/``medr2_case``)
or any VQA-style parquet with ``image`` (``{bytes, path}``), ``question``, ``answer`` and optional
``options`` / ``task`` columns. PATH is the dataset folder (``data/*.parquet``) or one parquet file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from medr2.errors import BadInput
from medr2.interop.common import OTHER_TASK, TASK_STAGE, ImportBuilder, letter_of, yes_no
from medr2.interop.importers import register_importer
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


def import_parquet(files: list[Path], b: ImportBuilder) -> None:
    import pyarrow.parquet as pq

    if not files:
        raise BadInput("no parquet files found", field="PATH")
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
                            case_image=r.get(CASE_IMAGE_COL))
                else:
                    _foreign(b, r, f, record)
            except BadInput as e:
                b.bad(e)


def _foreign(b: ImportBuilder, r: dict[str, Any], f: Path, record: str) -> None:
    img = _image_bytes(r.get("image"))
    q, a = text(r.get("question")), text(r.get("answer"))
    if img is None or not q or not a:
        raise BadInput("needs image bytes, a question and an answer", file=str(f), record=record, field="question")
    case = b.case(f"{f.name}:{record}:{len(img)}", img, file=str(f), record=record)
    opts = [str(o) for o in (r.get("options") or [])]
    task = text(r.get("task"))
    task = task if task in TASK_STAGE else OTHER_TASK
    if opts:
        ans = a.upper() if len(a) == 1 and a.upper() in "ABCDEFGHIJ"[: len(opts)] else letter_of(a, opts)
        if not ans:
            raise BadInput("answer matches no option", file=str(f), record=record, field="answer")
        b.add(case, task=task, form="mcq", question=q, options=opts, answer=ans, qid=record)
    elif yes_no(a):
        b.add(case, task=task, form="yesno", question=q, answer=yes_no(a) or a, qid=record)
    else:
        b.add(case, task=task, form="text", question=q, answer=a, qid=record)


@register_importer("hf")
def import_hf(path: Path, b: ImportBuilder, options: dict[str, str]) -> None:
    files = parquet_files(path)
    import_parquet(inside_files(b, path, files) if path.is_dir() and files else files, b)
