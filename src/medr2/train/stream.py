"""The export plans: a bench's train split (:class:`medr2.train.source.TrainSource`, over a bench folder or items
held in memory) ordered into the examples of a strategy (:data:`medr2.train.export.STRATEGIES`), built a group
at a time, in memory bounded by the work, not by the train split. ``medr2 export``, ``finetune`` (SFT, DPO, the
caption pre-training) and every other caller read their examples here.

The order of a plan is decided from a few columns (item id, stage, chain id, step, image: a few bytes per
item) and every kept row is handed, with its order key, to an out-of-core sort (:class:`medr2.bench.sorting.
Sorter`: DuckDB, spilling to a temporary folder in ``work``). Rows come back in plan order, one bucket (a block
and a range of the order hash, about :data:`BUCKET_ROWS` rows) at a time; only that bucket's rows become records
and examples. Groups that one example needs are held whole: one chain (``chain``), the
items of one image (captions); ``curriculum`` holds one block's replay sample (its order hashes) while it finds
the cut-off of that sample, then streams too.

The orders (``_order_key``: a hash of the seed and a key): ``flat`` and ``augmented`` by item id; ``curriculum``
one block per stage, ascending, each block its stage's items and a replay sample of ``round(replay * block)``
earlier items (those of smallest ``replay{stage}:{item id}`` hash), mixed by ``{stage}:{item id}``; ``chain`` each
clean chain (its items in step order) one example, placed by the hash of its item ids joined with ``|``, among
the other items by their own; captions one example per image, by the image's path. Where two order hashes (16
hex digits) of one plan are equal, the earlier file row comes first.
"""

from __future__ import annotations

import functools
import heapq
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

from medr2 import jsonsafe
from medr2.bench.sorting import Sorter, quoted
from medr2.models.base import BoxConvention, Message, Part
from medr2.records import Item
from medr2.train.export import (
    CAPTION_PROMPT,
    NEEDS_VARIANTS,
    STRATEGIES,
    Example,
    _order_key,
    augments,
    caption_text,
    chain_example,
    single_example,
)
from medr2.train.render import PIXELS, check_style, rejected
from medr2.train.source import TrainSource

BUCKET_ROWS = 4_096  # rows the plan orders in memory at a time (about: order hashes are uniform)
KEY_COLUMNS = ("_b", "_p", "_k", "_s", "_g")  # block, bucket, order key, tie-break, group
_KEY_TYPES = (pa.int64(), pa.int64(), pa.string(), pa.int64(), pa.string())
BUCKET = ("_b", "_p")  # the key columns of one bucket (rows made into records and examples together)
_PLAN_COLUMNS = ("item_id", "variant", "stage", "form", "answer_box", "chain_id", "step", "meta", "roles", "image")


def _n_buckets(n_rows: int) -> int:
    """Buckets that split ``n_rows`` into about ``BUCKET_ROWS`` each."""
    return max(1, -(-n_rows // BUCKET_ROWS))


def _bucket(key: str, n_buckets: int) -> int:
    """The bucket of an order hash: its first 32 bits scaled to ``n_buckets`` (monotone in the hash, so
    buckets in order hold the hashes in order)."""
    return int(key[:8], 16) * n_buckets >> 32


class _Placements:
    """Rows of one batch placed in a plan: which row (``take``), in which block, with which order key."""

    def __init__(self, n_buckets: int) -> None:
        self.n_buckets = n_buckets
        self.take: list[int] = []
        self.cols: dict[str, list[Any]] = {k: [] for k in KEY_COLUMNS}

    def add(self, row: int, block: int, key: str, tie: int, group: str = "") -> None:
        self.take.append(row)
        for name, v in zip(KEY_COLUMNS, (block, _bucket(key, self.n_buckets), key, tie, group), strict=True):
            self.cols[name].append(v)

    def table(self, batch: pa.RecordBatch) -> pa.Table:
        rows = pa.Table.from_batches([batch]).take(pa.array(self.take, pa.int64()))
        for name, typ in zip(KEY_COLUMNS, _KEY_TYPES, strict=True):
            rows = rows.append_column(name, pa.array(self.cols[name], typ))
        return rows


@functools.lru_cache(maxsize=256)
def _augments_roles(roles: str) -> bool:
    """Whether a ``roles`` cell (JSON; a bench holds a few distinct values) has the role ``augments``."""
    return augments("", jsonsafe.loads(roles), None)


def _is_augmentation(variant: str, roles: str | None, meta: str | None) -> bool:
    """Whether a row is an ``augmented`` example (:func:`medr2.train.export.augments`) from its ``variant``,
    ``roles`` and ``meta`` columns (``meta`` is read only for a bench built before roles were written)."""
    if variant == "clean":
        return False
    if roles is not None:
        return _augments_roles(roles)
    return augments(variant, None, jsonsafe.loads(meta) if meta else None)


class _Rows:
    """The kept train rows a plan reads (:meth:`medr2.train.source.TrainSource.batches`, variants only
    ``with_variants``, then items of form ``box`` without ``answer_box`` dropped), batch by batch, with their plan
    columns as lists and a running row number (the tie-break between equal order hashes)."""

    def __init__(self, src: TrainSource, with_variants: bool, box_check: bool = True,
                 columns: list[str] | None = None) -> None:
        self.src = src
        self.with_variants = with_variants
        self.box_check = box_check
        self.columns = columns  # None: every record column (the rows are sorted and built); else plan columns only

    def light(self) -> _Rows:
        """The same rows, reading only the plan columns (passes that only decide the plan)."""
        return _Rows(self.src, self.with_variants, self.box_check, list(_PLAN_COLUMNS))

    def __iter__(self) -> Iterator[tuple[pa.RecordBatch, list[int], dict[str, list[Any]], int]]:
        """(batch, rows kept, plan columns of every row, number of the batch's first kept row)."""
        seq = 0
        names = set(self.src.table.schema.names)
        for batch in self.src.batches([c for c in self.columns if c in names] if self.columns else None):
            cols: dict[str, list[Any]] = {c: batch.column(c).to_pylist() if c in names else [None] * batch.num_rows
                                          for c in _PLAN_COLUMNS}
            keep = []
            for i, (variant, form, box) in enumerate(zip(cols["variant"], cols["form"], cols["answer_box"],
                                                         strict=True)):
                if variant is None:
                    cols["variant"][i] = variant = "clean"
                if variant != "clean" and not self.with_variants:
                    continue
                if self.box_check and form == "box" and box is None:
                    continue
                keep.append(i)
            yield batch, keep, cols, seq
            seq += len(keep)

    def boxes_without_answer(self) -> int:
        """Rows dropped as box items without ``answer_box`` (a pass over the columns)."""
        n = 0
        for batch in self.src.batches(["form", "answer_box"]):
            forms, boxes = batch.column("form").to_pylist(), batch.column("answer_box").to_pylist()
            variants = batch.column("variant").to_pylist() if "variant" in batch.schema.names else [None] * len(forms)
            n += sum(1 for f, b, v in zip(forms, boxes, variants, strict=True)
                     if f == "box" and b is None and (self.with_variants or (v or "clean") == "clean"))
        return n


def _sorted_groups(tables: Iterable[pa.Table], work: Path, records: Callable[[pa.Table], Iterator[Item]],
                   ) -> Iterator[list[tuple[str, list[Item]]]]:
    """The rows of ``tables`` (with :data:`KEY_COLUMNS`) in plan order, one bucket at a time, as (group,
    items): consecutive rows of one non-empty group are one group, every other row a group of its own."""
    with Sorter(work, [quoted(c) for c in (*BUCKET, "_k", "_s")]) as sorter:  # equal (_k, _s): as added
        for t in tables:
            sorter.add(t)
        for table in sorter.groups(BUCKET):
            groups = table.column("_g").to_pylist()
            keys = table.column("_k").to_pylist()
            items = list(records(table.drop_columns(list(KEY_COLUMNS))))
            out: list[tuple[str, list[Item]]] = []
            for i, it in enumerate(items):
                if groups[i] and out and out[-1][0] == groups[i] and keys[i - 1] == keys[i]:
                    out[-1][1].append(it)
                else:
                    out.append((groups[i], [it]))
            yield out


class StreamPlan:
    """The examples of a plan, made while iterated (once); ``counts``, ``skipped`` and :meth:`summary` are
    complete once the iteration is done."""

    def __init__(self, make: Callable[[StreamPlan], Iterator[Example]], counts: Counter[str],
                 skipped: Counter[str]) -> None:
        self._make = make
        self.counts = counts
        self.skipped = skipped
        self.n_examples = self.n_items = 0
        self.by_stage: Counter[str] = Counter()
        self._used = False

    def __iter__(self) -> Iterator[Example]:
        if self._used:
            raise RuntimeError("a streamed plan is iterated once")
        self._used = True
        for ex in self._make(self):
            self.n_examples += 1
            self.n_items += len(ex.item_ids)
            self.by_stage[str(ex.stage)] += 1
            yield ex

    def summary(self) -> dict[str, Any]:
        return {"n_examples": self.n_examples, "n_items": self.n_items,
                "examples_by_stage": dict(sorted(self.by_stage.items())),
                "counts": dict(sorted(self.counts.items())), "skipped": dict(sorted(self.skipped.items()))}


# -- placements per strategy: rows -> tables with KEY_COLUMNS ------------------------------------------

def _flat_tables(rows: _Rows, seed: int, n_buckets: int, pred: Callable[[dict[str, list[Any]], int], bool] | None,
                 ) -> Iterator[pa.Table]:
    for batch, keep, cols, seq in rows:
        pl = _Placements(n_buckets)
        for n, i in enumerate(keep, start=seq):
            if pred is None or pred(cols, i):
                pl.add(i, 0, _order_key(seed, cols["item_id"][i]), n)
        yield pl.table(batch)


def _stage_counts(rows: _Rows) -> Counter[int]:
    counts: Counter[int] = Counter()
    for _, keep, cols, _ in rows:
        counts.update(cols["stage"][i] for i in keep)
    return counts


def _curriculum_tables(rows: _Rows, seed: int, replay: float) -> tuple[Iterator[pa.Table], int]:
    """``curriculum``'s placements: each row in its stage's block, and in each later block whose replay sample
    it is in (the sample: the ``n_replay`` smallest replay hashes of the earlier stages, found one block at a
    time with a bounded heap; a row is in it when its hash is at most the sample's largest)."""
    sizes = _stage_counts(rows.light())
    stages = sorted(sizes)
    block = {s: b for b, s in enumerate(stages)}
    cutoff: dict[int, tuple[str, int, int]] = {}
    earlier = 0
    for s in stages:
        n_replay = min(earlier, round(replay * sizes[s]))
        earlier += sizes[s]
        if n_replay <= 0:
            continue
        keys = ((_order_key(seed, f"replay{s}:{cols['item_id'][i]}"), block[cols["stage"][i]], n)
                for _, keep, cols, seq in rows.light() for n, i in enumerate(keep, start=seq) if cols["stage"][i] < s)
        cutoff[s] = heapq.nsmallest(n_replay, keys)[-1]
    n_total = sum(sizes.values())
    n_buckets = _n_buckets(max(sizes.values(), default=0) * 2)

    def tables() -> Iterator[pa.Table]:
        for batch, keep, cols, seq in rows:
            pl = _Placements(n_buckets)
            for n, i in enumerate(keep, start=seq):
                stage, iid = cols["stage"][i], cols["item_id"][i]
                pl.add(i, block[stage], _order_key(seed, f"{stage}:{iid}"), n)
                for s, cut in cutoff.items():
                    if s > stage and (_order_key(seed, f"replay{s}:{iid}"), block[stage], n) <= cut:
                        pl.add(i, block[s], _order_key(seed, f"{s}:{iid}"), n_total + n)
            yield pl.table(batch)

    return tables(), n_buckets


def _in_chain(cols: dict[str, list[Any]], i: int) -> bool:
    return bool(cols["chain_id"][i]) and cols["variant"][i] == "clean" and cols["step"][i] is not None


def _chain_tables(rows: _Rows, seed: int, n_buckets: int, work: Path) -> Iterator[pa.Table]:
    """``chain``'s placements: single rows by their own hash; chain rows first sorted by chain (one chain held
    at a time), then placed by the hash of the chain's item ids in step order, in step order."""
    with Sorter(work, [quoted(c) for c in (*BUCKET, "_g", "step", "item_id")]) as chains:
        for batch, keep, cols, seq in rows:
            single, chained = _Placements(n_buckets), _Placements(n_buckets)
            for n, i in enumerate(keep, start=seq):
                if _in_chain(cols, i):
                    cid = cols["chain_id"][i]
                    chained.add(i, 0, _order_key(0, cid), n, cid)
                else:
                    single.add(i, 0, _order_key(seed, cols["item_id"][i]), n)
            yield single.table(batch)
            chains.add(chained.table(batch))
        for table in chains.groups(BUCKET):
            gids, ids = table.column("_g").to_pylist(), table.column("item_id").to_pylist()
            take: list[int] = []
            cols_out: dict[str, list[Any]] = {k: [] for k in KEY_COLUMNS}
            start = 0
            while start < len(gids):
                end = start
                while end < len(gids) and gids[end] == gids[start]:
                    end += 1
                key = _order_key(seed, "|".join(ids[start:end]))
                for pos in range(start, end):
                    take.append(pos)
                    for name, v in zip(KEY_COLUMNS, (0, _bucket(key, n_buckets), key, pos - start, gids[start]),
                                       strict=True):
                        cols_out[name].append(v)
                start = end
            out = table.drop_columns(list(KEY_COLUMNS)).take(pa.array(take, pa.int64()))
            for name, typ in zip(KEY_COLUMNS, _KEY_TYPES, strict=True):
                out = out.append_column(name, pa.array(cols_out[name], typ))
            yield out


# -- the plans -----------------------------------------------------------------------------------------

def stream_examples(src: TrainSource, *, strategy: str = "flat", with_variants: bool = False, seed: int = 0,
                    conv: BoxConvention = PIXELS, work: Path, dpo: bool = False, **opts: Any) -> StreamPlan:
    """The SFT examples of ``strategy`` on ``src``'s train split (see the module doc), boxes written in ``conv``;
    items of form ``box`` without ``answer_box`` are dropped and counted. ``dpo``: DPO pairs, each example's final
    answer as chosen, the evaluation's wrong answer for its last item (its lure where it has one, else a fixed
    wrong option) as rejected. ``work``: a folder for the sorted runs (a temporary folder in it, removed when
    done)."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r} (known: {sorted(STRATEGIES)})")
    style = check_style(str(opts.get("answer_style", "letter")))
    replay = float(opts.get("replay", 0.25))
    if strategy == "curriculum" and not 0.0 <= replay <= 1.0:
        raise ValueError("replay must be between 0 and 1")
    with_variants = with_variants or strategy in NEEDS_VARIANTS
    n_selected, skipped = src.select_counts(with_variants)
    rows = _Rows(src, with_variants)
    n_boxes = rows.boxes_without_answer()
    if n_boxes:
        skipped["box item without answer_box"] += n_boxes
    counts: Counter[str] = Counter({"train_items": n_selected - n_boxes})
    if dpo:
        counts["rejected_is_lure"] = 0

    def examples(plan: StreamPlan) -> Iterator[Example]:
        n = n_selected - n_boxes
        if strategy == "curriculum":
            tables, _ = _curriculum_tables(rows, seed, replay)
        elif strategy == "chain":
            tables = _chain_tables(rows, seed, _n_buckets(n), work)
        else:
            pred = None
            if strategy == "augmented":
                def pred(cols: dict[str, list[Any]], i: int) -> bool:
                    return cols["variant"][i] == "clean" or _is_augmentation(cols["variant"][i], cols["roles"][i],
                                                                                cols["meta"][i])
            tables = _flat_tables(rows, seed, _n_buckets(n), pred)
        for bucket in _sorted_groups(tables, work, src.table.records):
            for group, items in bucket:
                ex = chain_example(items, conv, style) if group else single_example(items[0], conv, style)
                if not dpo:
                    yield ex
                    continue
                last = items[-1]
                rej = rejected(last, conv, style)
                if rej is None:
                    plan.skipped[f"dpo: no wrong answer for form {last.form}"] += 1
                    continue
                plan.counts["rejected_is_lure"] += bool(last.lure and last.lure != last.answer)
                yield Example(ex.messages, ex.item_ids, ex.stage, rejected=rej)

    return StreamPlan(examples, counts, skipped)


def stream_captions(src: TrainSource, *, seed: int = 0, work: Path) -> StreamPlan:
    """One example per train image (the items of one image held): the same prompt for every image
    (:data:`~medr2.train.export.CAPTION_PROMPT`), the target :func:`~medr2.train.export.caption_text`. The text
    alone cannot predict the target, so a model trained on it must read the image: a pre-training stage for a
    model whose image features are still random (the demo's tiny VLM). Clean train items only, with the same
    leak rules as every export."""
    _, skipped = src.select_counts(False)
    rows = _Rows(src, False, box_check=False)
    n_rows, _ = src.select_counts(False)
    counts: Counter[str] = Counter({"train_images": 0})
    n_buckets = _n_buckets(n_rows)

    def tables() -> Iterator[pa.Table]:
        for batch, keep, cols, seq in rows:
            pl = _Placements(n_buckets)
            for n, i in enumerate(keep, start=seq):
                image = cols["image"][i]
                if image:
                    pl.add(i, 0, _order_key(seed, image), n, image)
            yield pl.table(batch)

    def examples(plan: StreamPlan) -> Iterator[Example]:
        for bucket in _sorted_groups(tables(), work, src.table.records):
            for image, group in bucket:
                text = caption_text(group)
                if not text:
                    plan.skipped["image without a clean multiple-choice item"] += 1
                    continue
                first = group[0]
                user = Message("user", (Part("image", image=image, image_sha256=first.image_sha256),
                                        Part("text", text=CAPTION_PROMPT)))
                plan.counts["train_images"] += 1
                yield Example((user, Message("assistant", (Part("text", text=text),))),
                              tuple(it.item_id for it in group), min(it.stage for it in group))

    return StreamPlan(examples, counts, skipped)


def first_or_none(plan: StreamPlan) -> tuple[Example | None, Iterator[Example]]:
    """The plan's first example (None: the plan is empty, its counts complete) and an iterator of them all."""
    it = iter(plan)
    first = next(it, None)
    if first is None:
        return None, iter(())

    def chained() -> Iterator[Example]:
        yield first
        yield from it

    return first, chained()

