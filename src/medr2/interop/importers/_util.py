"""Small helpers shared by the importers (reading files, finding images safely)."""

from __future__ import annotations

import csv
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from medr2 import jsonsafe
from medr2.errors import BadInput
from medr2.images import InsideRoot, resolve_inside
from medr2.interop.common import ImportBuilder
from medr2.textfile import open_text

T = TypeVar("T")


def read_json_list(path: Path, key: str | None = None) -> list[Any]:
    """The JSON list in ``path`` (its entries unchecked: see :func:`records`). Bad as a whole -> BadInput."""
    data = jsonsafe.load_file(path)
    if key and isinstance(data, dict):
        data = data.get(key)
    if not isinstance(data, list):
        raise BadInput("expected a JSON list of question records", file=str(path))
    return data


def records(b: ImportBuilder, file: Path, rows: list[Any]) -> list[tuple[int, dict[str, Any]]]:
    """``(index, record)`` for each entry of a record list that is an object; any other entry (a number,
    null, a string, a list) is quarantined with its position, and the rest continue."""
    out = []
    for i, r in enumerate(rows):
        if isinstance(r, dict):
            out.append((i, r))
        else:
            b.bad(BadInput(f"a record must be a JSON object, got {type(r).__name__}", file=str(file),
                           record=f"{file.name} row {i}", field="(record)"))
    return out


def inside(root: Path, path: Path, *, file: str, record: str, field: str) -> Path:
    """``path`` (a file under the dataset folder ``root``) resolved, following symlinks, and checked to stay
    inside ``root``: a symlink or ``..`` leading out is refused (BadInput naming file, record, field)."""
    ins = InsideRoot(root)
    try:
        return Path(ins.resolve(os.path.relpath(os.path.abspath(path), ins.root)))
    except BadInput as e:
        raise BadInput(f"{e.reason} (via {path})", file=file, record=record, field=field) from e


def inside_files(b: ImportBuilder, root: Path, files: Iterable[Path]) -> list[Path]:
    """The data files found under ``root`` that resolve inside it; each one leading out (a symlink) is
    quarantined whole, never read."""
    out = []
    for f in files:
        try:
            inside(root, f, file=str(f), record=WHOLE_FILE, field="file")
        except BadInput as e:
            b.bad(e)
            continue
        out.append(f)
    return out


def read_csv_rows(path: Path, required: tuple[str, ...], delimiter: str = ",") -> list[dict[str, str]]:
    csv.field_size_limit(1 << 30)  # base64 images in TSV cells
    try:
        with open_text(path) as f:
            reader = csv.DictReader(f, delimiter=delimiter)
            rows = [dict(r) for r in reader]
            header = reader.fieldnames or []
    except csv.Error as e:
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
        found = p.is_file()
    except BadInput as e:
        raise BadInput(e.reason, file=file, record=record, field="image") from e
    except (OSError, ValueError) as e:
        raise BadInput(f"unusable path: {e}", file=file, record=record, field="image") from e
    if not found:
        shown = rel if len(rel) <= 200 else rel[:200] + "..."
        raise BadInput(f"image {shown} not found under {root}", file=file, record=record, field="image")
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
