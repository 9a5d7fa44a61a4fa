"""Black-box check of answer reading (issue 14, "Must show"): a real OpenAI-compatible server on 127.0.0.1
answers every item of a small bench in the styles of current VLM families (Qwen2.5/3-VL, InternVL, Gemini,
GPT-4o/5 Markdown, DeepSeek-R1/Kimi reasoning blocks, LLaVA-Med prose, Chinese), with boxes written in each
preset's own convention (Gemini's native ``box_2d`` y-first on 0-1000, GPT-4o fractions, Qwen2.5-VL absolute
pixels of the smart-resized input); ``medr2 eval --preset P`` and ``medr2 score`` must read every answer as
the answer the server meant: 0 wrong, 0 guesses, and ``unparsed`` only where the server stated the answer in
words alone (a box described as a region)."""

from __future__ import annotations

import base64
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from medr2 import Item
from medr2.bench import load_bench, write_bench
from medr2.images import PIXELS, ImageStore
from medr2.models.presets import box_to_model, get_preset
from medr2.records import letter_index
from medr2.run.prompts import question_text
from tests.openai_server import OpenAIServer
from tests.run_fixtures import _item, make_items

PRESETS = ("generic", "qwen2.5-vl", "gemini", "gpt-4o")
N_CASES = 8
WHY = "Looking at the image, the appearance supports this choice."
THINK = ("<think>\nLet me look at the image carefully. At first I considered option A, then option D; "
         "checking the key features again.\n</think>\n\n")
KIMI = "◁think▷Check the image features; option B seemed possible at first.◁/think▷"

# a style: (item, model-space box or None) -> response; "words" styles state the answer in words only
Style = Callable[[Item, tuple[float, float, float, float] | None], str]


def _lt(it: Item) -> tuple[str, str]:
    return it.answer, it.options[letter_index(it.answer)]


def _prose(it: Item) -> str:
    t = _lt(it)[1]
    return "None of these options is correct." if t == "None of the above" else f"The image shows {t}."


def _conflict(it: Item) -> str:
    """The right letter followed by another option's text: a self-contradicting answer (never read as either)."""
    k = letter_index(it.answer)
    return f"{it.answer}. {it.options[(k + 1) % len(it.options)]}"


def _sel(it: Item) -> list[str]:
    return [p for p in it.answer.split(",") if p]


def _num(v: float, space: str) -> str:
    return f"{v:.3f}" if space == "unit" else str(round(v))


def _flat(b: Any, space: str) -> str:
    return "[" + ", ".join(_num(v, space) for v in b) + "]"


MCQ: dict[str, list[Style]] = {
    "generic": [
        lambda it, b: _lt(it)[0],
        lambda it, b: f"{_lt(it)[0]}. {_lt(it)[1]}</s>",
        lambda it, b: _lt(it)[1],
        lambda it, b: _prose(it),
        lambda it, b: f"答案是{_lt(it)[0]}",
        lambda it, b: f"It's {_lt(it)[0]}.",
        lambda it, b: f"I'd go with {_lt(it)[0]}",
        lambda it, b: json.dumps({"answer": _lt(it)[0]}),
        lambda it, b: THINK + f"**Answer:** \\boxed{{{_lt(it)[0]}}}",
        lambda it, b: KIMI + _lt(it)[0],
        lambda it, b: f"选{_lt(it)[0]}。",
        lambda it, b: f"{_lt(it)[0]}<|eot_id|>",
        lambda it, b: _conflict(it),
    ],
    "qwen2.5-vl": [
        lambda it, b: _lt(it)[0],
        lambda it, b: f"{_lt(it)[0]}. {_lt(it)[1]}",
        lambda it, b: f"{_lt(it)[0]}<|im_end|>",
        lambda it, b: f"The answer is {_lt(it)[0]}. {_lt(it)[1]}",
        lambda it, b: THINK + f"{_lt(it)[0]}. {_lt(it)[1]}",
        lambda it, b: f"答案：{_lt(it)[0]}（{_lt(it)[1]}）",
    ],
    "gemini": [
        lambda it, b: f"**Answer: {_lt(it)[0]}**\n\n{WHY}",
        lambda it, b: f"Based on the image, the answer is **({_lt(it)[0]}) {_lt(it)[1]}**.",
        lambda it, b: "```json\n" + json.dumps({"answer": _lt(it)[0]}) + "\n```",
        lambda it, b: f"{_lt(it)[0]}. {_lt(it)[1]}<end_of_turn>",
    ],
    "gpt-4o": [
        lambda it, b: f"**Answer:** {_lt(it)[0]}. {_lt(it)[1]}\n\n**Explanation:** {WHY}",
        lambda it, b: f"### Answer\n**{_lt(it)[0]}. {_lt(it)[1]}**\n\n### Reasoning\n- {WHY}",
        lambda it, b: f"Final answer: {_lt(it)[0]}",
        lambda it, b: f"**Final answer: ({_lt(it)[0]}) {_lt(it)[1]}**",
        lambda it, b: f"**Answer:** {_conflict(it)}\n\n**Explanation:** {WHY}",
    ],
}


def _yn(it: Item) -> str:
    return it.answer.capitalize()


YESNO: dict[str, list[Style]] = {
    "generic": [
        lambda it, b: _yn(it),
        lambda it, b: f"{_yn(it)}.</s>",
        lambda it, b: json.dumps({"answer": it.answer}),
        lambda it, b: "是的" if it.answer == "yes" else "不是。",
        lambda it, b: f"The findings on the image settle it, so {it.answer}.",
        lambda it, b: THINK + _yn(it),
        lambda it, b: "Probably yes." if it.answer == "yes" else "Probably not.",
    ],
    "qwen2.5-vl": [
        lambda it, b: _yn(it),
        lambda it, b: f"{_yn(it)}<|im_end|>",
        lambda it, b: THINK + f"{_yn(it)}.",
    ],
    "gemini": [
        lambda it, b: f"**{_yn(it)}.** {WHY}",
        lambda it, b: "```json\n" + json.dumps({"answer": it.answer}) + "\n```",
        lambda it, b: f"{_yn(it)}<end_of_turn>",
    ],
    "gpt-4o": [
        lambda it, b: f"**Answer:** {_yn(it)}\n\n**Explanation:** {WHY}",
        lambda it, b: f"{_yn(it)}, based on the visible findings.",
        lambda it, b: f"Final answer: {_yn(it)}",
    ],
}


def _present(it: Item) -> str:
    sel = {letter_index(x) for x in _sel(it)}
    pres = [o for i, o in enumerate(it.options) if i in sel]
    absent = [o for i, o in enumerate(it.options) if i not in sel]
    return f"Present: {', '.join(pres) or 'none'}\nAbsent: {', '.join(absent) or 'none'}"


MULTI: dict[str, list[Style]] = {
    "generic": [
        lambda it, b: ", ".join(_sel(it)),
        lambda it, b: "\n".join(_sel(it)),
        lambda it, b: json.dumps(_sel(it)),
        lambda it, b: "答案：" + "、".join(_sel(it)),
        lambda it, b: "".join(_sel(it)),
        lambda it, b: _present(it),
        lambda it, b: " and ".join(_sel(it)),
    ],
    "qwen2.5-vl": [
        lambda it, b: ", ".join(_sel(it)),
        lambda it, b: ", ".join(_sel(it)) + "<|im_end|>",
        lambda it, b: THINK + ", ".join(_sel(it)),
    ],
    "gemini": [
        lambda it, b: "```json\n" + json.dumps({"answer": _sel(it)}) + "\n```",
        lambda it, b: f"**Answer: {', '.join(_sel(it))}**",
    ],
    "gpt-4o": [
        lambda it, b: f"**Answer:** {', '.join(_sel(it))}\n\n**Rationale:** {WHY}",
        lambda it, b: "**Selected findings:**\n" + "\n".join(f"- {x}. {it.options[letter_index(x)]}" for x in _sel(it)),
    ],
}

BOX_WORDS = "The lesion lies in the upper left part of the image, close to the edge."
BOX: dict[str, list[Style]] = {
    "generic": [
        lambda it, b: _flat(b, "pixel"),
        lambda it, b: json.dumps({"x": round(b[0]), "y": round(b[1]), "width": round(b[2] - b[0]),
                                  "height": round(b[3] - b[1])}),
        lambda it, b: "| x1 | y1 | x2 | y2 |\n|---|---|---|---|\n| " + " | ".join(str(round(v)) for v in b) + " |",
        lambda it, b: f"<|box_start|>({round(b[0])},{round(b[1])}),({round(b[2])},{round(b[3])})<|box_end|>",
        lambda it, b: "Bounding box (x, y, width, height): "
                      f"({round(b[0])}, {round(b[1])}, {round(b[2] - b[0])}, {round(b[3] - b[1])})",
        lambda it, b: THINK + _flat(b, "pixel"),
        lambda it, b: BOX_WORDS,
    ],
    "qwen2.5-vl": [
        lambda it, b: "```json\n[\n\t{\"bbox_2d\": " + _flat(b, "pixel") + ", \"label\": \"lesion\"}\n]\n```",
        lambda it, b: f"<|box_start|>({round(b[0])},{round(b[1])}),({round(b[2])},{round(b[3])})<|box_end|><|im_end|>",
        lambda it, b: THINK + "```json\n[{\"bbox_2d\": " + _flat(b, "pixel") + ", \"label\": \"lesion\"}]\n```",
        lambda it, b: BOX_WORDS,
    ],
    "gemini": [  # native box_2d: [ymin, xmin, ymax, xmax] on 0-1000
        lambda it, b: "```json\n[\n  {\"box_2d\": " + _flat((b[1], b[0], b[3], b[2]), "thousand")
                      + ", \"label\": \"lesion\"}\n]\n```",
        lambda it, b: json.dumps({"box_2d": [round(b[1]), round(b[0]), round(b[3]), round(b[2])]}),
        lambda it, b: f"**Bounding box:** {_flat(b, 'thousand')}",
        lambda it, b: BOX_WORDS,
    ],
    "gpt-4o": [  # fractions 0-1
        lambda it, b: f"**Bounding box:** `{_flat(b, 'unit')}`",
        lambda it, b: "```json\n" + json.dumps({"x": round(b[0], 3), "y": round(b[1], 3),
                                                "width": round(b[2] - b[0], 3), "height": round(b[3] - b[1], 3)})
                      + "\n```",
        lambda it, b: "| x1 | y1 | x2 | y2 |\n|---|---|---|---|\n| " + " | ".join(_num(v, "unit") for v in b) + " |",
        lambda it, b: "Final answer: (" + ", ".join(f"{100 * v:.1f}%" for v in b) + ")",
        lambda it, b: BOX_WORDS,
    ],
}

STYLES = {"mcq": MCQ, "yesno": YESNO, "multi": MULTI, "box": BOX}


def _bench(root: Path) -> Path:
    """The run fixtures' bench plus items whose options start like letters, count options and a T7 option."""
    store = ImageStore(root)
    cases, items = make_items(store, N_CASES)
    extra: list[Item] = []
    lymph = ["B-cell lymphoma", "T-cell lymphoma", "Hodgkin lymphoma", "Reactive hyperplasia"]
    for k, s1 in enumerate(it for it in items if it.task == "s1.modality" and it.variant == "clean"):
        img = {"case_id": s1.case_id, "image": s1.image, "image_sha256": s1.image_sha256, "split": s1.split}
        extra.append(_item(**img, stage=2, task="s2.histology", form="mcq", question="Which lymphoid lesion is shown?",
                           options=lymph, answer="ABCD"[k % 4]))
        extra.append(_item(**img, stage=2, task="s2.count", form="mcq", question="How many lesions are visible?",
                           options=["0", "1", "2", "3"], answer="ABCD"[(k + 1) % 4]))
        # an elongated box away from the diagonal: reading x for y (or width for x2) misses it
        extra.append(_item(**img, stage=3, task="s3.lesion_box", form="box", chance=0.0, question="Locate the band.",
                           options=[], answer="", answer_box=(2.0 + k, 34.0, 40.0 + k, 46.0)))
        extra.append(_item(**img, stage=4, task="s4.diagnosis", form="mcq", variant="T7", parent_id=s1.item_id,
                           question="What is the most likely diagnosis of the mass?",
                           options=["Glioma", "Meningioma", "Pituitary adenoma", "None of the above"], answer="D"))
    # report items are left out: their reading is the text itself (end tokens removed: see the corpus), and the
    # report metrics' one-time import (METEOR, ROUGE) would dominate this test's time
    items = [it for it in items if it.form != "text"]
    write_bench(root, cases, items + extra, {"name": "blackbox"})
    return root


class StyledAnswers:
    """The server's answer function: finds the asked item by its question text and image, answers it in the
    style assigned to it (by rank within its form) and records what it meant."""

    def __init__(self, bench_root: Path, preset: str) -> None:
        bench = load_bench(bench_root)
        self.preset = get_preset(preset)
        # items asked with the same last question and image (a T2 item and its parent) have the same answer
        self.by_key: dict[tuple[str, str], list[Item]] = {}
        for it in bench.items:
            key = (question_text(it, self.preset.box, self.preset), it.image_sha256 or "")
            group = self.by_key.setdefault(key, [])
            assert all((o.answer, o.answer_box) == (it.answer, it.answer_box) for o in group), key
            group.append(it)
        self.style: dict[str, tuple[int, Style]] = {}
        for form, per_preset in STYLES.items():
            styles = per_preset[preset]
            for rank, it in enumerate(sorted((i for i in bench.items if i.form == form), key=lambda i: i.item_id)):
                self.style[it.item_id] = (rank % len(styles), styles[rank % len(styles)])
        self.meant: dict[str, str] = {}  # item_id -> "right" | "words"
        self.used: Counter[tuple[str, int]] = Counter()

    def __call__(self, body: dict[str, Any]) -> str:
        text, sha = "", ""
        for m in body["messages"]:
            if m["role"] != "user":
                continue
            parts = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
            for part in parts:
                if part["type"] == "text":
                    text = part["text"]
                elif part["type"] == "image_url" and not sha:
                    data = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
                    sha = PIXELS.of_bytes(data, file="request image")  # the bench's identity: of the pixels
        group = self.by_key[(text, sha)]
        it = group[0]
        k, style = self.style[it.item_id]
        model_box = None
        if it.form == "box":
            assert it.answer_box is not None and it.image_width and it.image_height
            model_box = box_to_model(it.answer_box, it.image_width, it.image_height, self.preset.box)
        answer = style(it, model_box)
        meant = ("words" if answer == BOX_WORDS else "conflict" if it.form == "mcq" and _conflict(it) in answer
                 else "right")
        for same in group:
            self.meant[same.item_id] = meant
        self.used[(it.form, k)] += 1
        return answer


@pytest.fixture(scope="module")
def bench_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _bench(tmp_path_factory.mktemp("blackbox") / "bench")


@pytest.mark.parametrize("preset", PRESETS)
def test_styled_answers_are_read_right_or_left_unparsed_only_when_in_words(bench_root: Path, tmp_path: Path,
                                                                          preset: str) -> None:
    from medr2.cli import app

    answers = StyledAnswers(bench_root, preset)
    run = tmp_path / "run"
    with OpenAIServer(answer=answers, model="styled") as srv:
        res = CliRunner().invoke(app, ["eval", "--split", "all", "--bench", str(bench_root), "--model",
                                       "openai:styled", "--preset",
                                       preset, "--base-url", srv.url, "--out", str(run), "--retries", "0",
                                       "--no-progress"])
        assert res.exit_code == 0, res.output
    res = CliRunner().invoke(app, ["score", str(run), "--mixed-splits", "--resamples", "0"])
    assert res.exit_code == 0, res.output
    rows = pq.read_table(run / "scores.parquet").to_pylist()
    assert len(rows) == len(answers.meant) == len(load_bench(bench_root).items)
    verdicts = Counter(r["verdict"] for r in rows)
    bad = [(r["item_id"], r["form"], r["verdict"], r["parsed"], r["reason"]) for r in rows
           if r["verdict"] != ("correct" if answers.meant[r["item_id"]] == "right" else "unparsed")]
    assert bad == [], bad  # 0 wrong, 0 guesses, and no readable answer left unparsed
    assert verdicts["wrong"] == 0 and verdicts["error"] == 0 and verdicts["correct"] > 0
    unread = [r for r in rows if answers.meant[r["item_id"]] != "right"]
    assert unread and all(r["reason"] for r in unread)  # each unparsed answer is recorded with its reason
    conflicts = [r for r in rows if answers.meant[r["item_id"]] == "conflict"]
    assert all(r["reason"].startswith("conflict") for r in conflicts)
    assert bool(conflicts) == (preset in ("generic", "gpt-4o"))
    # every style of every form was served at least once
    for form, per_preset in STYLES.items():
        assert {k for f, k in answers.used if f == form} == set(range(len(per_preset[preset]))), form
    manifest = json.loads((run / "manifest.json").read_text("utf-8"))
    conv = (manifest.get("model") or {}).get("box_convention") or manifest["identity"]["box_convention"]
    assert conv["space"] == get_preset(preset).box.space
    assert (conv["params"].get("box_2d") == "yxyx") == (preset == "gemini")
