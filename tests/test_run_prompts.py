"""Prompt rendering per mode: golden snapshots of the stored rendered messages, plus properties.

Regenerate the snapshots after a deliberate change with ``python -m tests.test_run_prompts`` and
review the diff.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from medr2 import BoxConvention, ModelConfig
from medr2.models.presets import PRESETS, box_from_model, box_to_model, smart_resize
from medr2.run.prompts import MODES, get_mode, gold_answer, render_messages, request_hash, wrong_answer
from medr2.run.runner import EvalConfig, run_eval
from medr2.run.store import Store
from tests.run_fixtures import make_bench

SNAPSHOTS = Path(__file__).parent / "data" / "run_prompts"


def render_snapshots(tmp: Path) -> dict[str, dict[str, list]]:
    """Stored request messages of every mode for the items of one case (label: task|variant)."""
    bench = tmp / "bench"
    make_bench(bench, n_cases=2)
    run_eval(EvalConfig(bench=bench, model=ModelConfig("baseline:blind"), out=tmp / "run", modes=tuple(MODES)))
    out: dict[str, dict[str, list]] = {}
    with Store.open(tmp / "run") as st:
        from medr2.bench import load_bench

        items = {it.item_id: it for it in load_bench(bench).items}
        for r in st.iter_predictions(with_request=True):
            it = items[r.prediction.item_id]
            if it.case_id == "case1":
                out.setdefault(r.prediction.mode, {})[f"{it.task}|{it.variant}"] = r.request  # type: ignore[assignment]
    return out


def preset_snapshots() -> dict[str, dict[str, str]]:
    from medr2.run.prompts import question_text

    bench_items = _items()
    # case0's items (the first in the fixture's case order; the items table is sorted by split, case0 is train)
    box_item = next(it for it in bench_items if it.form == "box" and it.variant == "clean" and it.case_id == "case0")
    cue_item = next(it for it in bench_items if it.variant == "V7" and it.case_id == "case0")
    return {name: {"box_question": question_text(box_item, p.box, p), "gold_box": gold_answer(box_item, p.box),
                   "cue_question": question_text(cue_item, p.box, p)} for name, p in sorted(PRESETS.items())}


_CACHE: dict[str, list] = {}


def _items() -> list:
    if "items" not in _CACHE:
        import tempfile

        with tempfile.TemporaryDirectory() as d:
            _CACHE["items"] = make_bench(Path(d) / "b", n_cases=2).items
    return _CACHE["items"]


def test_golden_prompts_per_mode(tmp_path: Path) -> None:
    got = render_snapshots(tmp_path)
    for mode in MODES:
        expected = json.loads((SNAPSHOTS / f"{mode}.json").read_text("utf-8"))
        assert got[mode] == expected, mode


def test_golden_preset_wording() -> None:
    expected = json.loads((SNAPSHOTS / "presets.json").read_text("utf-8"))
    assert preset_snapshots() == expected


def test_mode_properties() -> None:
    items = _items()
    s4 = next(it for it in items if it.task == "s4.diagnosis" and it.variant == "clean" and it.case_id == "case1")
    earlier = [it for it in items if it.chain_id == s4.chain_id and it.variant == "clean" and it.step < s4.step]
    earlier.sort(key=lambda it: it.step)
    conv = BoxConvention()
    from medr2.run.prompts import Turn

    blind = render_messages(s4, mode=get_mode("blind"), history=[], conv=conv)
    assert all(p.type == "text" for m in blind for p in m.parts)
    gold = render_messages(s4, mode=get_mode("chain-gold"), history=[Turn(e, gold_answer(e, conv)) for e in earlier],
                           conv=conv)
    assert [m.role for m in gold] == ["user", "assistant"] * 3 + ["user"]
    assert sum(p.type == "image" for m in gold for p in m.parts) == 1  # the image once, in the first turn
    assert gold[0].parts[0].type == "image"
    assert [m.parts[0].text for m in gold if m.role == "assistant"] == [gold_answer(e, conv) for e in earlier]
    for e in earlier:
        assert wrong_answer(e, conv) != gold_answer(e, conv)
    t2 = next(it for it in items if it.variant == "T2")
    msgs = render_messages(t2, mode=get_mode("independent"), history=[], conv=conv)
    assert [m.role for m in msgs] == ["user", "assistant", "user"] and msgs[0].parts[0].type == "image"
    assert msgs[1].parts[0].text == t2.context[0].answer


def test_request_hash_covers_what_changes_answers() -> None:
    from medr2 import GenSettings

    it = _items()[0]
    conv = BoxConvention()
    msgs = render_messages(it, mode=get_mode("independent"), history=[], conv=conv)
    base = request_hash("m", GenSettings(), msgs, item_id=it.item_id, mode="independent")
    assert base == request_hash("m", GenSettings(), msgs, item_id=it.item_id, mode="independent")
    assert base != request_hash("m2", GenSettings(), msgs, item_id=it.item_id, mode="independent")
    assert base != request_hash("m", GenSettings(temperature=0.5), msgs, item_id=it.item_id, mode="independent")
    assert base != request_hash("m", GenSettings(), msgs[:0] + msgs, item_id=it.item_id, mode="blind")
    from dataclasses import replace

    from medr2 import Part

    swapped = (replace(msgs[0], parts=(Part("image", image=it.image, image_sha256="f" * 64),) + msgs[0].parts[1:]),)
    assert base != request_hash("m", GenSettings(), swapped, item_id=it.item_id, mode="independent")


@pytest.mark.parametrize("w,h", [(64, 48), (1955, 1841), (20, 4000), (30, 30)])
def test_box_conventions_round_trip(w: int, h: int) -> None:
    box = (w * 0.1, h * 0.2, w * 0.7, h * 0.9)
    for p in PRESETS.values():
        back = box_from_model(box_to_model(box, w, h, p.box), w, h, p.box)
        assert all(abs(a - b) < 1e-6 for a, b in zip(back, box, strict=True)), p.name
    rh, rw = smart_resize(1841, 1955)
    assert rh % 28 == 0 and rw % 28 == 0 and rh * rw <= 28 * 28 * 16384
    q = PRESETS["qwen2.5-vl"].box
    x1, _, x2, _ = box_to_model((0, 0, 1955, 1841), 1955, 1841, q)
    assert x1 == 0 and abs(x2 - rw) < 1e-9


if __name__ == "__main__":
    import tempfile

    SNAPSHOTS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as d:
        for mode, data in render_snapshots(Path(d)).items():
            (SNAPSHOTS / f"{mode}.json").write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", "utf-8")
    (SNAPSHOTS / "presets.json").write_text(json.dumps(preset_snapshots(), indent=1, sort_keys=True) + "\n", "utf-8")


def test_text_items_ask_for_a_report_only_in_report_tasks() -> None:
    """An imported open-ended question (form text, any task but a report task) asks for a short answer."""
    from medr2.run.prompts import REPORT_INSTRUCTION, SHORT_ANSWER_INSTRUCTION, question_text

    report = next(it for it in _items() if it.form == "text")
    conv = BoxConvention(space="pixel")
    assert question_text(report, conv).endswith(REPORT_INSTRUCTION)
    short = report.model_copy(update={"task": "imported.other", "question": "What modality is this?", "answer": "CT"})
    text = question_text(short, conv)
    assert text == f"What modality is this?\n{SHORT_ANSWER_INSTRUCTION}"
    assert "report" not in text


def test_reasoning_mode_is_independent_plus_a_versioned_instruction() -> None:
    from medr2.run.prompts import REASONING_INSTRUCTION, REASONING_PROMPT_VERSION

    spec = get_mode("reasoning")
    assert spec.prompt_version == REASONING_PROMPT_VERSION == "reasoning-v1" and not spec.chain and spec.image
    conv = BoxConvention()
    for it in _items()[:6]:
        plain = render_messages(it, mode=get_mode("independent"), history=[], conv=conv)
        asked = render_messages(it, mode=spec, history=[], conv=conv)
        assert asked[:-1] == plain[:-1] and asked[-1].parts[:-1] == plain[-1].parts[:-1]
        assert asked[-1].parts[-1].text == f"{plain[-1].parts[-1].text}\n{REASONING_INSTRUCTION}"
    assert "Final answer:" in REASONING_INSTRUCTION
