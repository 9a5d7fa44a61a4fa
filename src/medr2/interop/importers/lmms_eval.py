"""An lmms-eval task folder written by ``medr2 convert --to lmms-eval``: the parquet files named by
each task YAML's ``dataset_kwargs.data_files`` (relative names resolve against the folder)."""

from __future__ import annotations

import re
from pathlib import Path

from medr2.errors import BadInput
from medr2.interop.common import ImportBuilder
from medr2.interop.importers import register_importer
from medr2.interop.importers.hf import import_parquet

_DATA_FILE = re.compile(r"^\s{4}\w+:\s*(\S+\.parquet)\s*$", re.M)


@register_importer("lmms-eval")
def import_lmms(path: Path, b: ImportBuilder, options: dict[str, str]) -> None:
    yamls = sorted(path.glob("*.yaml")) if path.is_dir() else [path]
    files: list[Path] = []
    for y in yamls:
        for m in _DATA_FILE.finditer(y.read_text("utf-8")):
            p = Path(m.group(1))
            files.append(p if p.is_absolute() else y.parent / p)
    if not files:
        raise BadInput("no task YAML with parquet data_files found", file=str(path), field="PATH")
    missing = [f for f in files if not f.is_file()]
    if missing:
        raise BadInput("data file named by the task YAML is missing", file=str(missing[0]), field="data_files")
    import_parquet(sorted(set(files)), b)
