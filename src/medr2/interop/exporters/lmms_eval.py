"""lmms-eval task folder: ``data/`` (the Hugging Face parquet export), ``utils.py`` (prompting and
scoring, see :mod:`medr2.interop.exporters.lmms_eval_utils`) and one task YAML per split
(``<name>_<split>.yaml``, task ``<name>_<split>``; metrics ``accuracy`` (medr2's headline accuracy) and
``item_accuracy``). Chat models get medr2's own dialogue for each item (``doc_to_messages``). Copy or
symlink the folder under ``lmms_eval/tasks/`` (or pass ``--include_path``) and run ``--tasks <name>_<split>``.
The YAML's ``data_files`` are absolute paths to ``data/``: re-run the export after moving the folder.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

from medr2.atomic import staged
from medr2.bench.format import Bench
from medr2.interop.exporters.hf import dataset_card, parquet_name, write_parquet_splits

UTILS_SOURCE = Path(__file__).with_name("lmms_eval_utils.py")


def task_name(bench_name: str, split: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", f"{bench_name}_{split}").lower()


def task_yaml(name: str, parquet: Path, split: str) -> str:
    return "\n".join([
        f"task: {name}",
        "dataset_path: parquet",
        "dataset_kwargs:",
        "  data_files:",
        f"    {split}: {parquet.as_posix()}",
        f"test_split: {split}",
        "output_type: generate_until",
        "doc_to_visual: !function utils.medr2_doc_to_visual",
        "doc_to_text: !function utils.medr2_doc_to_text",
        "doc_to_messages: !function utils.medr2_doc_to_messages",
        "doc_to_target: answer",
        "generation_kwargs:",
        "  max_new_tokens: 128",
        "  temperature: 0",
        "  do_sample: false",
        "process_results: !function utils.medr2_process_results",
        "metric_list:",
        "  - metric: accuracy",
        "    aggregation: !function utils.medr2_aggregate",
        "    higher_is_better: true",
        "  - metric: item_accuracy",
        "    aggregation: mean",
        "    higher_is_better: true",
        "lmms_eval_specific_kwargs:",
        "  default:",
        '    pre_prompt: ""',
        '    post_prompt: ""',
        "metadata:",
        "  version: 0.0",
        "",
    ])


def export_lmms_eval(bench: Bench, out: Path) -> dict[str, Any]:
    tasks = []
    with staged(out, f"medr2 convert {bench.root} --to lmms-eval --out {out}") as stage:
        counts = write_parquet_splits(bench, stage / "data")
        (stage / "README.md").write_text(dataset_card(bench, counts), "utf-8")
        shutil.copyfile(UTILS_SOURCE, stage / "utils.py")
        for split in counts:
            name = task_name(bench.name, split)
            parquet = (out / "data" / parquet_name(split)).resolve()  # where it is published
            (stage / f"{name}.yaml").write_text(task_yaml(name, parquet, split), "utf-8")
            tasks.append(name)
    return {"target": "lmms-eval", "out": str(out), "splits": counts, "tasks": tasks}
