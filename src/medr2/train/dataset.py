"""``export_dataset``: a bench's train split -> an SFT or DPO dataset in one of ``FORMATS``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from medr2.errors import BadInput
from medr2.records import canonical_json
from medr2.train.export import plan_dpo, plan_examples
from medr2.train.formats import FORMATS

MANIFEST = "medr2_export.json"
IDS_FILE = "medr2_export_ids.jsonl"


def export_dataset(bench_root: Path | str, fmt: str, out: Path | str, *, strategy: str = "flat",
                   with_variants: bool = False, seed: int = 0, name: str | None = None,
                   **opts: Any) -> dict[str, Any]:
    """Write the export into folder ``out`` and return its manifest (also written to ``out``)."""
    from medr2.train.source import read_train_split

    if fmt not in FORMATS:
        raise BadInput(f"unknown export format {fmt!r} (known: {', '.join(sorted(FORMATS))})", field="format")
    bench = read_train_split(bench_root)  # only the train split becomes records
    spec = FORMATS[fmt]
    plan_fn = plan_dpo if spec.dpo else plan_examples
    try:
        plan = plan_fn((), (), strategy=strategy, with_variants=with_variants, seed=seed, split=bench, **opts)
    except ValueError as e:
        raise BadInput(str(e), field="strategy") from e
    if not plan.examples:
        raise BadInput(f"no train-split examples to export (skipped: {dict(plan.skipped)})", file=str(bench_root))
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise BadInput("export folder is not empty", file=str(out))
    out.mkdir(parents=True, exist_ok=True)
    ds_name = name or f"medr2_{bench.name}_{strategy}{'_dpo' if spec.dpo else ''}"
    files = spec.write(plan.examples, bench.root, out, ds_name)
    manifest = {"format": fmt, "strategy": strategy, "with_variants": with_variants, "seed": seed,
                "dataset_name": ds_name, "bench": bench.name, "bench_checksum": bench.checksum,
                "split": "train", "files": files, **plan.summary()}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    with (out / IDS_FILE).open("w", encoding="utf-8") as f:
        for i, ex in enumerate(plan.examples):
            f.write(canonical_json({"record": i, "item_ids": list(ex.item_ids)}) + "\n")
    return manifest
