"""``export_dataset``: a bench's train split -> an SFT or DPO dataset in one of ``FORMATS``.

The examples are streamed (:mod:`medr2.train.stream`): planned from columns, sorted out of core, built a
bucket at a time and handed to the format's writer and to the ids file as they come; memory is bounded by
the work (a bucket, one chain), not by the train split.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

from medr2.atomic import STAGING, settle, staged
from medr2.errors import BadInput
from medr2.outdir import contents
from medr2.records import canonical_json
from medr2.train.export import Example
from medr2.train.formats import FORMATS

MANIFEST = "medr2_export.json"
IDS_FILE = "medr2_export_ids.jsonl"


def export_dataset(bench_root: Path | str, fmt: str, out: Path | str, *, strategy: str = "flat",
                   with_variants: bool = False, seed: int = 0, name: str | None = None, reviewed: str | None = None,
                   **opts: Any) -> dict[str, Any]:
    """Write the export into folder ``out`` and return its manifest (also written to ``out``). Every file is
    written into a staging folder inside ``out`` and published as one set when the last is done
    (:func:`medr2.atomic.staged`): a failed or killed export leaves no file under a final name. ``reviewed``:
    ``accepted`` exports only the items the bench's clinician review accepted (the review rows read are
    recorded in the manifest)."""
    from medr2.train.source import TrainSource
    from medr2.train.stream import first_or_none, stream_examples

    if fmt not in FORMATS:
        raise BadInput(f"unknown export format {fmt!r} (known: {', '.join(sorted(FORMATS))})", field="format")
    out = Path(out)
    if out.is_dir():
        settle(out)  # an export killed while publishing is completed first
    if out.exists() and contents(out):
        raise BadInput("export folder is not empty", file=str(out))
    spec = FORMATS[fmt]
    selection = None
    if reviewed is not None:
        from medr2.bench.reviews import reviewed_selection

        selection = reviewed_selection(bench_root, reviewed)
    created = not out.exists()
    manifest_bytes: dict[str, bytes] = {}
    try:
        with TrainSource(bench_root, selection) as bench, \
                staged(out, f"medr2 export --bench {bench_root} --format {fmt} --out {out}",
                       manifest=manifest_bytes) as stage:  # the plan's sorted runs go there too
            try:
                plan = stream_examples(bench, strategy=strategy, with_variants=with_variants, seed=seed,
                                       dpo=spec.dpo, work=stage, **opts)
                first, examples = first_or_none(plan)
            except ValueError as e:
                raise BadInput(str(e), field="strategy") from e
            if first is None:
                raise BadInput(f"no train-split examples to export (skipped: {dict(plan.skipped)})",
                               file=str(bench_root))
            ds_name = name or f"medr2_{bench.name}_{strategy}{'_dpo' if spec.dpo else ''}"
            with (stage / IDS_FILE).open("w", encoding="utf-8") as ids:
                files = spec.write(_with_ids(examples, ids), bench.root, stage, ds_name, home=out)
            manifest = {"format": fmt, "strategy": strategy, "with_variants": with_variants, "seed": seed,
                        "dataset_name": ds_name, "bench": bench.name, "bench_checksum": bench.checksum,
                        "split": "train", "files": files, **plan.summary()}
            if selection is not None:
                manifest["reviewed"] = selection.recorded()
            manifest_bytes[MANIFEST] = (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode("utf-8")
    except BaseException:
        _remove_if_empty(out, created)
        raise
    return manifest


def _remove_if_empty(out: Path, created: bool) -> None:
    if created and out.is_dir() and not contents(out):
        shutil.rmtree(out / STAGING, ignore_errors=True)
        with suppress(OSError):
            out.rmdir()


def _with_ids(examples: Iterator[Example], ids: Any) -> Iterator[Example]:
    """``examples``, each written to the ids file (its record number and item ids) as it passes."""
    for i, ex in enumerate(examples):
        ids.write(canonical_json({"record": i, "item_ids": list(ex.item_ids)}) + "\n")
        yield ex
