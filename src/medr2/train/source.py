"""A bench's train split, read column-wise: what export and ``finetune`` read (:mod:`medr2.train.stream`).

:class:`TrainSource` decides which items are held out (not in the train split, a variant without
``--with-variants``, or an image shared with any item or case outside the train split) through the bench's query
layer (:class:`medr2.bench.table.BenchTable`, a bench folder's or items held in memory: :meth:`BenchTable.held`):
the images of the other splits from two columns of the items and of the cases, the train split's counts from two
more, then hands out the train rows kept (``ItemFilter(split="train")``: row groups of other splits pruned) one
Arrow record batch at a time, as often as a plan needs; :meth:`TrainSource.items` builds their records (GRPO's
reward lookup).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from medr2.records import Item

if TYPE_CHECKING:
    from medr2.bench.reviews import Selection
    from medr2.bench.table import BenchTable

NOT_ACCEPTED = "not accepted by the review (--reviewed accepted)"


class _BenchIdentity:
    """The name and checksum of the bench at ``root`` with ``manifest`` (what an export records)."""

    root: Path
    manifest: dict[str, Any]

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


def image_shas(sha: str | None, images: str | None) -> list[str]:
    """Every image an items row shows: its ``image_sha256`` and, for an item of several (issue 49), each of its
    ``images`` column (canonical JSON of :class:`~medr2.records.ImageRef` records)."""
    out = [sha] if sha else []
    if images and images != "[]":
        from medr2 import jsonsafe

        out += [r["sha256"] for r in jsonsafe.loads(images, field="images") if isinstance(r, dict) and r.get("sha256")]
    return out


class TrainSource(_BenchIdentity):
    """A bench's train split as Arrow record batches (checksums verified on opening: a bench changed after its
    build is refused). Opening reads only columns: the images of the other splits (``split`` and
    ``image_sha256`` of the cases and the items) and, for the train split, ``variant`` and ``image_sha256``, to
    count what is held out; :meth:`batches` then reads the train rows kept, one batch at a time, as often as a
    plan needs. Held in memory: the set of images other splits use (one hash per image, not per item).
    ``reviewed`` (``medr2 export --reviewed accepted``, :func:`medr2.bench.reviews.reviewed_selection`): only the
    train items the bench's clinician review accepted, and the items its settled fixes made (read after the
    table's rows, ``BenchTable.add_items``); the others are counted as skipped."""

    def __init__(self, bench: BenchTable | Path | str, reviewed: Selection | None = None) -> None:
        from medr2.bench.table import BenchTable

        # a bench folder (given the validation eval makes: BenchTable.validate), its table, or items held in memory
        # (BenchTable.held)
        self.table = bench if isinstance(bench, BenchTable) else BenchTable.open(bench, image_hashes=False)
        self.root, self.manifest = self.table.root, self.table.manifest
        self.item_ids = item_ids = reviewed.item_ids if reviewed is not None else None
        # images of other splits: the cases' and the items' (``split`` and ``image_sha256`` columns only)
        cases = self.table.case_columns(["split", "image_sha256"])
        self.held: set[Any] = {sha for split, sha in zip(cases["split"], cases["image_sha256"], strict=True)
                               if split != "train"}
        del cases
        if reviewed is not None:
            self.table.add_items(reviewed.fixed)
        self.skipped: Counter[str] = Counter()  # held out whatever ``with_variants`` is
        self.variants = 0  # train-split variants (kept or not): held out as such without ``with_variants``
        self.variants_on_held_images = 0  # of those, on an image another split uses
        self.n_clean = self.n_variants_kept = 0  # train rows kept: clean items, variants
        names = self.table.schema.names
        self._has_split = "split" in names
        for cols in self.table.column_values([c for c in ("item_id", "split", "image_sha256", "images")
                                              if c in names]):
            n = len(cols["item_id"])
            for iid, split, sha, images in zip(cols["item_id"], cols.get("split", [None] * n),
                                               cols.get("image_sha256", [None] * n), cols.get("images", [None] * n),
                                               strict=True):
                if split != "train":
                    self.skipped[f"split {split}"] += 1
                    self.held.update(image_shas(sha, images))
                elif item_ids is not None and iid not in item_ids:
                    self.skipped[NOT_ACCEPTED] += 1
        for batch, _ in self._train_batches(["item_id"]):
            for variant, on_held in zip(_column(batch, "variant", "clean"), self._on_held(batch), strict=True):
                if variant != "clean":
                    self.variants += 1
                    self.variants_on_held_images += on_held
                    self.n_variants_kept += not on_held
                elif on_held:
                    self.skipped["image shared with a non-train split"] += 1
                else:
                    self.n_clean += 1

    def _train_batches(self, columns: list[str] | None) -> Iterator[tuple[pa.RecordBatch, int]]:
        """The train split's batches (other splits' row groups pruned) with ``variant`` and ``image_sha256``."""
        from medr2.bench.table import ItemFilter

        if not self._has_split:
            return
        names = self.table.schema.names
        if columns is not None:
            columns = list(dict.fromkeys([*columns, *(c for c in ("variant", "image_sha256", "images")
                                                      if c in names)]))
        yield from self.table.iter_batches(ItemFilter(split="train", item_ids=self.item_ids), columns)

    def batches(self, columns: list[str] | None = None) -> Iterator[pa.RecordBatch]:
        """The train rows kept (not on an image another split uses; clean and variants), in file order, one
        record batch at a time: ``columns`` (None: every record column) plus ``variant``, ``image_sha256`` and
        ``images``."""
        for batch, _ in self._train_batches(columns):
            keep = [not held for held in self._on_held(batch)]
            if all(keep):
                yield batch
            elif any(keep):
                yield batch.filter(pa.array(keep))

    def _on_held(self, batch: pa.RecordBatch) -> list[bool]:
        """Per row: whether some image it shows is one another split uses."""
        return [any(s in self.held for s in image_shas(sha, images))
                for sha, images in zip(_column(batch, "image_sha256"), _column(batch, "images"), strict=True)]

    def select_counts(self, with_variants: bool) -> tuple[int, Counter[str]]:
        """How many train rows a plan reads (:meth:`batches`; variants only ``with_variants``), and the counts of
        those held out, by reason."""
        skipped = Counter(self.skipped)
        if with_variants:
            if self.variants_on_held_images:
                skipped["image shared with a non-train split"] += self.variants_on_held_images
            return self.n_clean + self.n_variants_kept, skipped
        if self.variants:
            skipped["variant (without --with-variants)"] += self.variants
        return self.n_clean, skipped

    def items(self) -> Iterator[Item]:
        """The records of the train rows kept (clean and variants), in file order, a batch at a time; a bad row is
        refused as ``load_bench`` refuses it (:meth:`BenchTable.records`), naming its file, record and field."""
        for batch in self.batches():
            yield from self.table.records(batch)

    @property
    def items_path(self) -> Path:
        return self.table.items_path

    def close(self) -> None:
        self.table.close()

    def __enter__(self) -> TrainSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
