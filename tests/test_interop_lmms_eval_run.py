"""The lmms-eval export run by the real lmms-eval CLI (``.venv-lmms-eval``, made by
``bash scripts/setup_lmms_eval.sh``) with its OpenAI-compatible model against a real HTTP server on
127.0.0.1 whose answers are known: lmms-eval's own results file must count every exported item and report
the accuracy computed here from those known answers."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import subprocess
import threading
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from medr2 import Bench, BoxConvention, Item
from medr2.interop.exporters import run_export
from medr2.records import REPORT_TASKS, stable_hash
from tests.openai_server import OpenAIServer
from tests.run_fixtures import make_bench

ROOT = Path(__file__).resolve().parents[1]
LMMS_PY = ROOT / ".venv-lmms-eval" / "bin" / "python"
READY = ROOT / ".venv-lmms-eval" / ".medr2-ready"
CONV = BoxConvention()

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (LMMS_PY.is_file() and READY.is_file()),
                       reason="lmms-eval venv missing: run `bash scripts/setup_lmms_eval.sh`"),
]


def _pixels_key(img: Image.Image) -> str:
    arr = np.asarray(img.convert("RGB"))
    return hashlib.sha256(f"{arr.shape}".encode() + arr.tobytes()).hexdigest()


def _dialogue_key(image_key: str, turns: list[tuple[str, str]]) -> str:
    return stable_hash([image_key, [list(t) for t in turns]], 32)


def _item_key(bench: Bench, item: Item) -> str:
    """What the server will see for ``item``: the image's pixels and medr2's own dialogue for it."""
    from medr2.run.prompts import get_mode, render_messages

    msgs = render_messages(item, mode=get_mode("independent"), history=(), conv=CONV)
    turns = [(m.role, "".join(p.text or "" for p in m.parts if p.type == "text")) for m in msgs]
    with Image.open(bench.path(item.image)) as im:  # type: ignore[arg-type]
        return _dialogue_key(_pixels_key(im), turns)


def _request_key(body: dict[str, Any]) -> str:
    image_key, turns = "", []
    for m in body["messages"]:
        content = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
        text = ""
        for part in content:
            if part["type"] == "image_url" and not image_key:
                data = base64.b64decode(part["image_url"]["url"].split(";base64,", 1)[1])
                with Image.open(io.BytesIO(data)) as im:
                    image_key = _pixels_key(im)
            elif part["type"] == "text":
                text += part["text"]
        turns.append((m["role"], text))
    return _dialogue_key(image_key, turns)


def _response(item: Item, right: bool) -> str:
    """A right answer written as a model would (medr2's own gold writer), or a plainly wrong one."""
    from medr2.run.prompts import gold_answer

    if right:
        return gold_answer(item, CONV)
    if item.form == "mcq":
        return f"The answer is {next(chr(65 + i) for i in range(len(item.options)) if chr(65 + i) != item.answer)}."
    if item.form == "multi":
        return "A, B, C, D" if item.answer != "A,B,C,D" else "A"
    return {"yesno": "no" if item.answer == "yes" else "yes", "box": "[0, 0, 2, 2]"}.get(item.form, "zzz")


def _expected_accuracy(items: list[Item], right: dict[str, bool]) -> float:
    """medr2's headline accuracy, recomputed here: clean items, yes/no pairs as one unit, macro over
    the tasks of a stage (report tasks left out), then over stages."""
    units: dict[Any, list[Any]] = {}
    for it in items:
        if it.variant != "clean":
            continue
        key = ("pair", it.pair_id) if it.form == "yesno" and it.pair_id else ("item", it.item_id)
        units.setdefault(key, [it.stage, it.task, it.form, True])[3] &= right[it.item_id]
    per_task: dict[tuple[int, str], list[float]] = defaultdict(list)
    for stage, task, _form, ok in units.values():
        if task not in REPORT_TASKS:
            per_task[(stage, task)].append(float(ok))
    per_stage: dict[int, list[float]] = defaultdict(list)
    for (stage, _), v in per_task.items():
        per_stage[stage].append(sum(v) / len(v))
    return sum(sum(v) / len(v) for v in per_stage.values()) / len(per_stage)


def test_lmms_eval_cli_runs_the_export(tmp_path: Path) -> None:
    bench = make_bench(tmp_path / "bench", n_cases=4)
    summary = run_export("lmms-eval", bench, tmp_path / "task")
    forms = {it.form for it in bench.items}
    assert forms == {"mcq", "yesno", "box", "multi", "text"} and any(it.context for it in bench.items)

    known: dict[str, Item] = {}
    for it in bench.items:
        key = _item_key(bench, it)
        assert key not in known, f"two items look the same to a model: {it.item_id} {known.get(key)}"
        known[key] = it
    right = {it.item_id: int(stable_hash(["lmms", it.item_id], 8), 16) % 3 != 0 for it in bench.items}
    unknown: list[str] = []
    lock = threading.Lock()

    def answer(body: dict[str, Any]) -> str:
        it = known.get(_request_key(body))
        if it is None:
            with lock:
                unknown.append(json.dumps(body)[:500])
            return "unknown request"
        return _response(it, right[it.item_id])

    out = tmp_path / "lmms-out"
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env.update(OPENAI_API_KEY="test-key", HF_HOME=str(tmp_path / "hf"), HF_HUB_OFFLINE="1",
               HF_DATASETS_OFFLINE="1", NO_PROXY="127.0.0.1")
    with OpenAIServer(answer=answer, api_key="test-key") as srv:
        done = subprocess.run(
            [str(LMMS_PY), "-m", "lmms_eval", "eval", "--model", "openai", "--model_args",
             f"model_version=medr2-test,base_url={srv.url},api_key=test-key,max_retries=1,num_concurrent=4",
             "--tasks", ",".join(summary["tasks"]), "--include_path", str(tmp_path / "task"),
             "--output_path", str(out), "--log_samples", "--batch_size", "1"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        stats = srv.stats
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    assert not unknown, unknown[:3]
    assert stats.requests == len(bench.items) and stats.images_seen == len(bench.items)

    results_files = list(out.rglob("*_results.json"))
    assert len(results_files) == 1, list(out.rglob("*"))
    res = json.loads(results_files[0].read_text())
    by_split: dict[str, list[Item]] = defaultdict(list)
    for it in bench.items:
        by_split[it.split or "all"].append(it)
    assert set(summary["tasks"]) == set(res["results"])
    for split, items in by_split.items():
        task = next(t for t in summary["tasks"] if t.endswith(f"_{split}"))
        assert res["n-samples"][task] == {"original": len(items), "effective": len(items)}
        samples = [json.loads(line) for f in out.rglob(f"*_samples_{task}.jsonl") for line in f.open()]
        assert sorted(s["accuracy"]["item_id"] for s in samples) == sorted(it.item_id for it in items)
        got = res["results"][task]
        assert got["accuracy,none"] == pytest.approx(_expected_accuracy(items, right))
        assert got["item_accuracy,none"] == pytest.approx(sum(right[it.item_id] for it in items) / len(items))
        assert 0 < got["item_accuracy,none"] < 1  # both right and wrong answers were scored
