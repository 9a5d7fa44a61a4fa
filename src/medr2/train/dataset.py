"""``export_dataset``: a bench's train split -> an SFT or DPO dataset in one of ``FORMATS``.

The examples are streamed (:mod:`medr2.train.stream`): planned from columns, sorted out of core, built a
bucket at a time and handed to the format's writer and to the ids file as they come; memory is bounded by
the work (a bucket, one chain), not by the train split.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from medr2.errors import BadInput
from medr2.outdir import contents
from medr2.records import canonical_json
from medr2.train.export import Example
from medr2.train.formats import FORMATS

MANIFEST = "medr2_export.json"
IDS_FILE = "medr2_export_ids.jsonl"


def export_dataset(bench_root: Path | str, fmt: str, out: Path | str, *, strategy: str = "flat",
                   with_variants: bool = False, seed: int = 0, name: str | None = None,
                   **opts: Any) -> dict[str, Any]:
    """Write the export into folder ``out`` and return its manifest (also written to ``out``)."""
    from medr2.train.source import TrainSource
    from medr2.train.stream import first_or_none, stream_examples

    if fmt not in FORMATS:
        raise BadInput(f"unknown export format {fmt!r} (known: {', '.join(sorted(FORMATS))})", field="format")
    out = Path(out)
    if out.exists() and contents(out):
        raise BadInput("export folder is not empty", file=str(out))
    spec = FORMATS[fmt]
    created = not out.exists()
    with TrainSource(bench_root) as bench:  # only the train split is read, a batch at a time
        out.mkdir(parents=True, exist_ok=True)  # the plan's sorted runs go there: no other disk is assumed
        try:
            plan = stream_examples(bench, strategy=strategy, with_variants=with_variants, seed=seed, dpo=spec.dpo,
                                   work=out, **opts)
            first, examples = first_or_none(plan)
        except ValueError as e:
            _remove_if_empty(out, created)
            raise BadInput(str(e), field="strategy") from e
        except BaseException:
            _remove_if_empty(out, created)
            raise
        if first is None:
            _remove_if_empty(out, created)
            raise BadInput(f"no train-split examples to export (skipped: {dict(plan.skipped)})",
                           file=str(bench_root))
        ds_name = name or f"medr2_{bench.name}_{strategy}{'_dpo' if spec.dpo else ''}"
        with (out / IDS_FILE).open("w", encoding="utf-8") as ids:
            files = spec.write(_with_ids(examples, ids), bench.root, out, ds_name)
        manifest = {"format": fmt, "strategy": strategy, "with_variants": with_variants, "seed": seed,
                    "dataset_name": ds_name, "bench": bench.name, "bench_checksum": bench.checksum,
                    "split": "train", "files": files, **plan.summary()}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return manifest


def _remove_if_empty(out: Path, created: bool) -> None:
    if created and out.is_dir() and not contents(out):
        out.rmdir()


def _with_ids(examples: Iterator[Example], ids: Any) -> Iterator[Example]:
    """``examples``, each written to the ids file (its record number and item ids) as it passes."""
    for i, ex in enumerate(examples):
        ids.write(canonical_json({"record": i, "item_ids": list(ex.item_ids)}) + "\n")
        yield ex
