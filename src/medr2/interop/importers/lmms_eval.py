"""An lmms-eval task folder written by ``medr2 convert --to lmms-eval``: the parquet files named by
each task YAML's ``dataset_kwargs.data_files`` (relative names resolve against the folder). A data file
must lie inside the task folder: a YAML naming one elsewhere is quarantined, never followed."""

from __future__ import annotations

import re
from pathlib import Path

from medr2.errors import BadInput
from medr2.interop.common import ImportBuilder
from medr2.interop.importers._util import file_failed, inside_files
from medr2.interop.importers.hf import import_parquet
from medr2.textfile import read_text

_DATA_FILE = re.compile(r"^\s{4}\w+:\s*(\S+\.parquet)\s*$", re.M)


def import_lmms(path: Path, b: ImportBuilder, options: dict[str, str]) -> None:
    yamls = inside_files(b, path, sorted(path.glob("*.yaml"))) if path.is_dir() else [path]
    root = (path if path.is_dir() else path.parent).resolve()
    files: list[Path] = []
    named = 0
    for y in yamls:
        try:
            found = _DATA_FILE.findall(read_text(y, what="task YAML"))
        except BadInput as e:
            file_failed(b, e, y)
            continue
        named += len(found)
        for name in found:
            p = Path(name) if Path(name).is_absolute() else y.parent / name
            try:
                files.append(data_file(root, p, y))
            except BadInput as e:
                file_failed(b, e, y)
    if not named:
        raise BadInput("no task YAML with parquet data_files found", file=str(path), field="PATH")
    import_parquet(sorted(set(files)), b, path)


def data_file(root: Path, p: Path, yaml: Path) -> Path:
    """``p`` resolved, checked to lie inside the task folder ``root`` and to exist."""
    shown = str(p) if len(str(p)) <= 300 else str(p)[:300] + "..."
    try:
        real = p.resolve()
        inside = real.is_relative_to(root)
        found = inside and real.is_file()
    except (OSError, ValueError) as e:
        raise BadInput(f"unusable data file name: {str(e)[:200]}", file=str(yaml), record=shown,
                       field="data_files") from e
    if not inside:
        raise BadInput(f"data file {p} lies outside the task folder", file=str(yaml), record=str(p),
                       field="data_files")
    if not found:
        raise BadInput(f"data file {p} is missing", file=str(yaml), record=str(p), field="data_files")
    return real
