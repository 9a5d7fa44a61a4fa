"""A bench's train split, read column-wise: only the train items become records (export and ``finetune``).

:func:`read_train_split` decides which items are held out (not in the train split, a variant without
``--with-variants``, or an image shared with any item or case outside the train split; the rules of
:func:`medr2.train.export.train_items`, with the same counts) from three columns of ``items.parquet`` and two
of ``cases.parquet``, then reads ``items.parquet`` row group by row group and builds records only for the
items kept: a bench of millions of evaluation items is never loaded to export its train split.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from medr2.errors import BadInput
from medr2.records import Item

BATCH_ROWS = 10_000


@dataclass
class TrainSplit:
    """What export and fine-tuning read of a bench: its train items (records, in file order), what was held
    out and why, and the bench's identity."""

    root: Path
    manifest: dict[str, Any]
    items: list[Item]  # train-split items, clean and variants, whose images no other split uses
    skipped: Counter[str]  # held out whatever ``with_variants`` is: other splits, clean items on a held image
    variants: int = 0  # train-split variants (kept or not): held out as such without ``with_variants``
    variants_on_held_images: int = 0  # of those, on an image another split uses (held out with ``with_variants``)

    def select(self, with_variants: bool) -> tuple[list[Item], Counter[str]]:
        """The items :func:`medr2.train.export.train_items` keeps, and its counts of those it drops."""
        skipped = Counter(self.skipped)
        if with_variants:
            if self.variants_on_held_images:
                skipped["image shared with a non-train split"] += self.variants_on_held_images
            return list(self.items), skipped
        if self.variants:
            skipped["variant (without --with-variants)"] += self.variants
        return [it for it in self.items if it.variant == "clean"], skipped

    @property
    def name(self) -> str:
        return str(self.manifest.get("name") or self.root.name)

    @property
    def checksum(self) -> str:
        return str(self.manifest["checksums"]["bench"])


def _column(table: pa.Table, name: str, default: Any) -> list[Any]:
    if name not in table.column_names:
        return [default] * table.num_rows
    return [default if v is None and default is not None else v for v in table.column(name).to_pylist()]


def read_train_split(bench_root: Path | str) -> TrainSplit:
    """The train split of the bench at ``bench_root`` (checksums verified: a bench changed after its build is
    refused). Records are validated as ``load_bench`` validates them: a bad train item is refused naming its
    file, record and field."""
    from medr2.bench.format import (
        CASES_FILE,
        ITEM_SCHEMA,
        ITEMS_FILE,
        batch_records,
        read_manifest,
        read_parquet,
        verify_checksums,
    )

    root = Path(bench_root)
    manifest = read_manifest(root)
    verify_checksums(root, manifest)
    ipath, cpath = root / ITEMS_FILE, root / CASES_FILE
    for path in (ipath, cpath):
        if not path.is_file():
            raise BadInput("missing file", file=str(path))
    try:
        case_names, item_names = pq.read_schema(cpath).names, pq.read_schema(ipath).names
        cases = read_parquet(cpath, [c for c in ("split", "image_sha256") if c in case_names])
        cols = read_parquet(ipath, [c for c in ("split", "variant", "image_sha256") if c in item_names])
    except (OSError, pa.ArrowException) as e:
        raise BadInput(f"cannot read parquet: {e}", file=str(ipath)) from e
    held: set[Any] = {sha for split, sha in zip(_column(cases, "split", None), _column(cases, "image_sha256", None),
                                                 strict=True) if split != "train"}
    splits = _column(cols, "split", None)
    variants = _column(cols, "variant", "clean")
    shas = _column(cols, "image_sha256", None)
    held.update(sha for split, sha in zip(splits, shas, strict=True) if split != "train" and sha)
    skipped: Counter[str] = Counter()
    n_variants = n_variants_held = 0
    keep = np.zeros(len(splits), dtype=bool)
    for i, (split, variant, sha) in enumerate(zip(splits, variants, shas, strict=True)):  # train_items' rules
        if split != "train":
            skipped[f"split {split}"] += 1
            continue
        if variant != "clean":
            n_variants += 1
            n_variants_held += sha in held
        elif sha in held:
            skipped["image shared with a non-train split"] += 1
        keep[i] = sha not in held
    del splits, variants, shas, cols, cases, held
    items: list[Item] = []
    start = 0
    with pq.ParquetFile(str(ipath)) as f:
        for batch in f.iter_batches(batch_size=BATCH_ROWS):
            mask = keep[start:start + batch.num_rows]
            start += batch.num_rows
            if mask.any():  # records (validated as load_bench validates them) only for the rows kept
                items.extend(batch_records(batch.filter(pa.array(mask)), ITEM_SCHEMA, "item_id", ipath))
    return TrainSplit(root, manifest, items, skipped, n_variants, n_variants_held)
