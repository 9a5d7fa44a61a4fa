"""A bench's train split, read column-wise: only the train items become records (export and ``finetune``).

:func:`read_train_split` decides which items are held out (not in the train split, a variant without
``--with-variants``, or an image shared with any item or case outside the train split; the rules of
:func:`medr2.train.export.train_items`, with the same counts) through the bench's columnar reader
(:class:`medr2.bench.table.BenchTable`): the images of the other splits from two columns of ``items.parquet``
(and the cases), then the train split (``ItemFilter(split="train")``: row groups of other splits pruned) one
record batch at a time, building records only for the items kept: a bench of millions of evaluation items is
never loaded to export its train split.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from medr2.bench.format import ITEM_SCHEMA, batch_records
from medr2.errors import BadInput
from medr2.records import Item


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


def _column(table: pa.Table | pa.RecordBatch, name: str, default: Any = None) -> list[Any]:
    """A column as a list (``default`` for a missing column or a null)."""
    if name not in table.schema.names:
        return [default] * table.num_rows
    values = table.column(name).to_pylist()
    return values if default is None else [default if v is None else v for v in values]


def read_train_split(bench_root: Path | str) -> TrainSplit:
    """The train split of the bench at ``bench_root`` (checksums verified: a bench changed after its build is
    refused). Records are validated as ``load_bench`` validates them: a bad train item is refused naming its
    file, record and field."""
    from medr2.bench.format import CASES_FILE, read_parquet, verified_file
    from medr2.bench.table import BenchTable, ItemFilter

    root = Path(bench_root)
    manifest, cpath = verified_file(root, CASES_FILE)
    try:
        cases = read_parquet(cpath, [c for c in ("split", "image_sha256") if c in pq.read_schema(cpath).names])
    except (OSError, pa.ArrowException) as e:
        raise BadInput(f"cannot read parquet: {e}", file=str(cpath)) from e
    # images of other splits: the cases' and the items' (``split`` and ``image_sha256`` columns only)
    held: set[Any] = {sha for split, sha in zip(_column(cases, "split"), _column(cases, "image_sha256"), strict=True)
                      if split != "train"}
    del cases
    table = BenchTable(root, manifest)
    try:
        skipped: Counter[str] = Counter()
        names = table.items_file.schema_arrow.names
        for cols in table.column_values([c for c in ("item_id", "split", "image_sha256") if c in names]):
            n = len(cols["item_id"])
            for split, sha in zip(cols.get("split", [None] * n), cols.get("image_sha256", [None] * n), strict=True):
                if split != "train":
                    skipped[f"split {split}"] += 1
                    if sha:
                        held.add(sha)
        n_variants = n_variants_held = 0
        items: list[Item] = []
        # the train split's row groups (the others pruned), one batch at a time: records only for the rows kept
        for batch, _ in table.iter_batches(ItemFilter(split="train")) if "split" in names else ():
            variants = _column(batch, "variant", "clean")
            shas = _column(batch, "image_sha256")
            keep = []
            for variant, sha in zip(variants, shas, strict=True):  # train_items' rules
                on_held = sha in held
                if variant != "clean":
                    n_variants += 1
                    n_variants_held += on_held
                elif on_held:
                    skipped["image shared with a non-train split"] += 1
                keep.append(not on_held)
            if any(keep):
                items.extend(batch_records(batch.filter(pa.array(keep)), ITEM_SCHEMA, "item_id", table.items_path))
    finally:
        table.close()
    return TrainSplit(root, manifest, items, skipped, n_variants, n_variants_held)
