"""Small helpers shared by the importers (reading files, finding images safely)."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from medr2.errors import BadInput
from medr2.imageio import resolve_inside
from medr2.interop.common import ImportBuilder

T = TypeVar("T")


def read_json_list(path: Path, key: str | None = None) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise BadInput(f"cannot read: {e}", file=str(path)) from e
    except json.JSONDecodeError as e:
        raise BadInput(f"invalid JSON at line {e.lineno}: {e.msg}", file=str(path)) from e
    if key and isinstance(data, dict):
        data = data.get(key)
    if not isinstance(data, list):
        raise BadInput("expected a JSON list of question records", file=str(path))
    return data


def read_csv_rows(path: Path, required: tuple[str, ...], delimiter: str = ",") -> list[dict[str, str]]:
    csv.field_size_limit(1 << 30)  # base64 images in TSV cells
    try:
        with path.open(newline="", encoding="utf-8-sig") as f:
            reader = csv.DictReader(f, delimiter=delimiter)
            rows = [dict(r) for r in reader]
            header = reader.fieldnames or []
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise BadInput(f"cannot read: {e}", file=str(path)) from e
    missing = [c for c in required if c not in header]
    if missing:
        raise BadInput(f"missing column(s) {missing}; found {header}", file=str(path), field=missing[0])
    return rows


def image_in(root: Path, rel: Any, *, file: str, record: str) -> Path:
    """An image path inside ``root`` (no escapes), checked to exist."""
    if not isinstance(rel, str) or not rel.strip():
        raise BadInput("no image name", file=file, record=record, field="image")
    try:
        p = resolve_inside(root, rel.strip())
    except BadInput as e:
        raise BadInput(e.reason, file=file, record=record, field="image") from e
    if not p.is_file():
        raise BadInput(f"image {rel} not found under {root}", file=file, record=record, field="image")
    return p


def text(v: Any) -> str:
    return "" if v is None else str(v).strip()


WHOLE_FILE = "(whole file)"


def readable(b: ImportBuilder, files: Iterable[Path], read: Callable[[Path], T]) -> Iterator[tuple[Path, T]]:
    """``(file, read(file))`` for each file that reads; a file that cannot be read is quarantined whole
    (``file_failed``) and the others still import."""
    for f in files:
        try:
            content = read(f)
        except BadInput as e:
            file_failed(b, e, f)
            continue
        yield f, content


def file_failed(b: ImportBuilder, e: BadInput, file: Path) -> None:
    """Quarantine a file that cannot be read as a whole (the other files of the set still import)."""
    b.bad(BadInput(e.reason, file=e.file or str(file), record=e.record or WHOLE_FILE, field=e.field or "file"))
