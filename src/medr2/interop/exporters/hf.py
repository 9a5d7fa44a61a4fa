"""Hugging Face dataset export: ``data/<split>-00000-of-00001.parquet`` with embedded PNG images
(``datasets.Image`` feature; an item of several images: ``images``, a list of them in order, and ``image_roles``)
and a dataset card ``README.md`` (tasks, stages, counts, licences and access per source). Loads with
``datasets.load_dataset("parquet", data_dir=OUT/data)`` or ``load_dataset(OUT)``; ``medr2 import hf OUT`` gives the
items back unchanged.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from medr2.atomic import staged
from medr2.bench.format import Bench
from medr2.interop.common import source_table
from medr2.interop.exporters._stream import batches, split_rows
from medr2.interop.roundtrip import CASE_COL, CASE_IMAGE_COL, ITEM_COL
from medr2.records import STAGES


def features() -> Any:
    from datasets import Features, Image, List, Value

    s = Value("string")
    return Features({
        "item_id": s, "case_id": s, "stage": Value("int32"), "stage_name": s, "task": s, "form": s,
        "question": s, "options": List(s), "answer": s, "chance": Value("float64"), "pair_id": s, "chain_id": s,
        "step": Value("int32"), "variant": s, "parent_id": s, "split": s, "source": s, "license": s, "access": s,
        "image": Image(), "images": List(Image()), "image_roles": List(s), "turns": s, ITEM_COL: s, CASE_COL: s,
        CASE_IMAGE_COL: Value("binary"),
    })


def parquet_name(split: str) -> str:
    return f"{split}-00000-of-00001.parquet"


def write_parquet_splits(bench: Bench, data_dir: Path) -> dict[str, int]:
    """``data_dir/<split>-00000-of-00001.parquet`` per split, written a batch of rows at a time (one row group
    each) with the ``datasets`` features in the schema's metadata, as ``Dataset.to_parquet`` writes them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    data_dir.mkdir(parents=True, exist_ok=True)
    schema = features().arrow_schema
    writers: dict[str, Any] = {}
    counts: dict[str, int] = {}
    try:
        for split, rows in batches(split_rows(bench)):
            for r in rows:
                r["image"] = None if r["image"] is None else {"bytes": r["image"], "path": f"{r['item_id']}.png"}
                r["images"] = [{"bytes": b, "path": f"{r['item_id']}_{k}.png"} for k, b in enumerate(r["images"])]
            table = pa.Table.from_pylist([{k: r[k] for k in schema.names} for r in rows], schema=schema)
            if split not in writers:
                writers[split] = pq.ParquetWriter(str(data_dir / parquet_name(split)), schema)
            writers[split].write_table(table)
            counts[split] = counts.get(split, 0) + len(rows)
    finally:
        for w in writers.values():
            w.close()
    return dict(sorted(counts.items()))


def dataset_card(bench: Bench, counts: dict[str, int], reviews: dict[str, Any] | None = None) -> str:
    """The card ``README.md``; ``reviews``: the bench's clinician review (``medr2.scoring.reviews.review_summary``),
    shown as its own section."""
    tasks = Counter((it.stage, it.task) for it in bench.items)
    sources = source_table(bench.cases, bench.items)
    licenses = sorted({lic for s in sources.values() for lic in s["licenses"]})
    synthetic = bench.manifest.get("cases", {}).get("synthetic", 0)
    lines = ["---", f"pretty_name: {bench.name}", "license: other",
             "task_categories:", "- visual-question-answering", "tags:", "- medical", "- medr2", "configs:",
             "- config_name: default", "  data_files:"]
    for split in counts:
        lines += [f"  - split: {split}", f"    path: data/{split}-*.parquet"]
    lines += ["---", "", f"# {bench.name}", "",
              f"Exported by medr2 from bench checksum `{bench.checksum[:16]}`: {sum(counts.values())} items on "
              f"{len(bench.cases)} images. Each row is one question with its image embedded; `medr2_item` and "
              "`medr2_case` hold the full records (`medr2 import hf` restores them exactly); `turns` holds the "
              "dialogue medr2 sends for the item (JSON list of `{role, text}`, the image in the first user turn; "
              "boxes in pixels of the embedded image). An item showing several images (a prior study, other "
              "views or sequences) has every one in `images`, in the order shown, with what each is in "
              "`image_roles`; `image` is its current study (both lists are empty for an item of one image).", ""]
    if synthetic:
        lines += [f"**{synthetic} cases contain synthetic parts** (e.g. lesions placed on real images); "
                  "see `synthetic_fields` in `medr2_case`.", ""]
    lines += ["## Splits", "", "| split | items |", "|---|---|"] + [f"| {k} | {v} |" for k, v in counts.items()]
    lines += ["", "## Tasks", "", "| stage | task | items |", "|---|---|---|"]
    lines += [f"| {stage} {STAGES.get(stage, '(imported, outside the four stages)')} | {task} | {n} |"
              for (stage, task), n in sorted(tasks.items())]
    lines += ["", "## Sources and licences", "", "| source | items | images | licences | access |",
              "|---|---|---|---|---|"]
    for name, s in sources.items():
        lic = ", ".join(f"{k} ({v})" for k, v in sorted(s["licenses"].items()))
        acc = ", ".join(f"{k} ({v})" for k, v in sorted(s["access"].items()))
        lines.append(f"| {name} | {s['items']} | {s['cases']} | {lic} | {acc} |")
    restricted = [n for n, s in sources.items() if set(s["access"]) - {"open"}]
    if restricted:
        lines += ["", f"**Access restrictions apply** to: {', '.join(restricted)}. Do not redistribute these "
                  "items beyond what their terms allow."]
    lines += ["", f"Licences present: {', '.join(licenses)}. The licence of each item is in its `license` column.",
              ""]
    if reviews:
        from medr2.bench.reviews import review_lines

        lines += ["## Clinician review", "", "Reviewed with `medr2 review` (every item of the export is included "
                  "whatever its review; `medr2 eval`/`export --reviewed accepted` use only the accepted ones).", ""]
        lines += [f"- {line}" for line in review_lines(reviews)] + [""]
    return "\n".join(lines)


def export_hf(bench: Bench, out: Path, reviews: dict[str, Any] | None = None) -> dict[str, Any]:
    with staged(out, f"medr2 convert {bench.root} --to hf --out {out}") as stage:
        counts = write_parquet_splits(bench, stage / "data")
        (stage / "README.md").write_text(dataset_card(bench, counts, reviews), "utf-8")
    return {"target": "hf", "out": str(out), "splits": counts}
