"""A bench's train split, read column-wise (export and ``finetune``).

:class:`TrainSource` decides which items are held out (not in the train split, a variant without
``--with-variants``, or an image shared with any item or case outside the train split; the rules of
:func:`medr2.train.export.train_items`, with the same counts) through the bench's columnar reader
(:class:`medr2.bench.table.BenchTable`): the images of the other splits from two columns of ``items.parquet``
(and the cases), the train split's counts from two more, then hands out the train rows kept
(``ItemFilter(split="train")``: row groups of other splits pruned) one Arrow record batch at a time, as often as
a plan needs (:mod:`medr2.train.stream`). :func:`read_train_split` builds records of every kept row (the
in-memory form the streamed plans are tested against; GRPO's reward lookup).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from medr2.bench.format import ITEM_SCHEMA, batch_records
from medr2.errors import BadInput
from medr2.records import Item

if TYPE_CHECKING:
    from medr2.bench.reviews import Selection

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


@dataclass
class TrainSplit(_BenchIdentity):
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

    def __init__(self, bench_root: Path | str, reviewed: Selection | None = None) -> None:
        from medr2.bench.format import CASES_FILE, read_parquet, verified_file
        from medr2.bench.table import BenchTable

        self.root = Path(bench_root)
        self.item_ids = item_ids = reviewed.item_ids if reviewed is not None else None
        self.manifest, cpath = verified_file(self.root, CASES_FILE)
        try:
            cases = read_parquet(cpath, [c for c in ("split", "image_sha256") if c in pq.read_schema(cpath).names])
        except (OSError, pa.ArrowException) as e:
            raise BadInput(f"cannot read parquet: {e}", file=str(cpath)) from e
        # images of other splits: the cases' and the items' (``split`` and ``image_sha256`` columns only)
        self.held: set[Any] = {sha for split, sha in zip(_column(cases, "split"), _column(cases, "image_sha256"),
                                                         strict=True) if split != "train"}
        del cases
        self.table = BenchTable(self.root, self.manifest)
        if reviewed is not None:
            self.table.add_items(reviewed.fixed)
        self.skipped: Counter[str] = Counter()  # held out whatever ``with_variants`` is
        self.variants = 0  # train-split variants (kept or not): held out as such without ``with_variants``
        self.variants_on_held_images = 0  # of those, on an image another split uses
        self.n_clean = self.n_variants_kept = 0  # train rows kept: clean items, variants
        names = self.table.items_file.schema_arrow.names
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
                # train_items' rules
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
        names = self.table.items_file.schema_arrow.names
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
        """How many train rows :meth:`TrainSplit.select` keeps, and its counts of those it drops."""
        skipped = Counter(self.skipped)
        if with_variants:
            if self.variants_on_held_images:
                skipped["image shared with a non-train split"] += self.variants_on_held_images
            return self.n_clean + self.n_variants_kept, skipped
        if self.variants:
            skipped["variant (without --with-variants)"] += self.variants
        return self.n_clean, skipped

    @property
    def items_path(self) -> Path:
        return self.table.items_path


    def close(self) -> None:
        self.table.close()

    def __enter__(self) -> TrainSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_train_split(bench_root: Path | str) -> TrainSplit:
    """The train split of the bench at ``bench_root`` as records (checksums verified: a bench changed after its
    build is refused). Records are validated as ``load_bench`` validates them: a bad train item is refused
    naming its file, record and field. Every kept train item is held: exports and ``finetune`` stream instead
    (:mod:`medr2.train.stream`); this is the in-memory form their tests compare with."""
    with TrainSource(bench_root) as src:
        items: list[Item] = []
        for batch in src.batches():
            items.extend(batch_records(batch, ITEM_SCHEMA, "item_id", src.items_path))
        return TrainSplit(src.root, src.manifest, items, src.skipped, src.variants, src.variants_on_held_images)
