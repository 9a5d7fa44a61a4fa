"""``folder`` reader: class-per-folder images, or images plus a CSV/JSON label table.

Layout A (no label table): ``ROOT/<class>/<image>``; the folder name goes to the Case field named by
``class_field`` in ``medr2.json`` (default ``diagnosis``). Layout B: ``labels.csv`` or ``labels.json``
in the root (or ``"labels": "file"`` in the mapping) with an ``image`` column (path relative to the
root) and any Case fields (``modality``, ``plane``, ``diagnosis``, ``findings`` as JSON, ...).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from medr2.errors import BadInput
from medr2.images import ImageStore, load_image
from medr2.records import Case
from medr2.sources.common import (
    IMAGE_SUFFIXES,
    LABEL_FIELDS,
    TEXT,
    DataRoot,
    Key,
    labels_to_fields,
    list_files,
    load_label_table,
    make_case,
    open_root,
    regions_from_labels,
    sample_indices,
)

DEFAULT_LABEL_FILES = ("labels.csv", "labels.json")
CLASS_FOLDER_NO_MODALITY = (
    "modality is missing: class-per-folder images carry only their class (the folder name, read as "
    "the class_field, default diagnosis); put a medr2.json beside the class folders, e.g. "
    '{"defaults": {"modality": "X-ray"}, "class_field": "diagnosis"}')


@dataclass(frozen=True)
class FolderSpec:
    rel: str  # image path relative to the root
    row: dict[str, Any] | None  # label-table row, or None for layout A
    error: str | None = None  # a record the plan already knows is bad (quarantined on realize)
    table: str | None = None
    error_field: str = "image"


class FolderSource:
    name = "folder"
    mapping_schema: dict[str, Key] = {"class_field": TEXT}

    def __init__(self, arg: str | None) -> None:
        self.dr: DataRoot = open_root(arg, "folder", schema=self.mapping_schema)
        self.class_field = str(self.dr.mapping.get("class_field", "diagnosis"))
        if self.class_field not in LABEL_FIELDS or self.class_field in ("findings", "structures"):
            raise BadInput(f"class_field must be a Case label field, got {self.class_field!r}",
                           file=str(self.dr.mapping_file), field="class_field")
        labels = self.dr.mapping.get("labels") or next(
            (f for f in DEFAULT_LABEL_FILES if (self.dr.root / f).is_file()), None)
        self.labels: str | None = labels

    def plan(self, seed: int, n: int | None) -> list[FolderSpec]:
        specs = self._table_specs() if self.labels else self._class_specs()
        return [specs[i] for i in sample_indices(len(specs), seed, n)]

    def _table_specs(self) -> list[FolderSpec]:
        assert self.labels is not None
        table = load_label_table(self.dr, self.labels)
        specs = [FolderSpec(rel=k, row=row, table=table.file) for k, row in sorted(table.rows.items())]
        specs += [FolderSpec(rel=e.record or "?", row=None, error=e.reason, table=table.file,
                              error_field=e.field or "image") for e in table.bad]
        return specs

    def _class_specs(self) -> list[FolderSpec]:
        specs = []
        for cls_dir in sorted(p for p in self.dr.root.iterdir() if p.is_dir() and not p.name.startswith(".")):
            for f in list_files(self.dr, IMAGE_SUFFIXES, under=cls_dir):
                specs.append(FolderSpec(rel=self.dr.rel(f), row={self.class_field: cls_dir.name}))
        if not specs:
            raise BadInput("no class folders with images and no labels.csv/labels.json found",
                           file=str(self.dr.root), field="--source")
        return specs

    def realize(self, spec: FolderSpec, images: ImageStore) -> Case:
        file = spec.table or spec.rel
        if spec.error is not None or spec.row is None:
            raise BadInput(spec.error or "bad record", file=file, record=spec.rel, field=spec.error_field)
        path = self.dr.path(spec.rel, record=spec.rel, field_name="image")
        if not path.is_file():
            raise BadInput("image file not found", file=file, record=spec.rel, field="image")
        try:
            arr = load_image(path)
        except BadInput as e:
            raise BadInput(e.reason, file=str(path), record=spec.rel, field="image") from e
        ref = images.put_array(arr)
        fields = labels_to_fields(spec.row, file=file, record=spec.rel)
        structures, findings = regions_from_labels(fields, ref.width, ref.height, file=file, record=spec.rel)
        try:
            return make_case(self.dr, key=spec.rel, ref=ref, fields=fields, file=file,
                             structures=structures, findings=findings)
        except BadInput as e:
            if e.field == "modality" and spec.table is None:  # layout A: the folder name is all it knows
                raise BadInput(CLASS_FOLDER_NO_MODALITY, file=file, record=spec.rel, field="modality") from e
            raise


def _factory(arg: str | None) -> FolderSource:
    return FolderSource(arg)
