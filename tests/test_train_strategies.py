"""The fine-tuning strategies of issue #18 item 3, each a few real steps on the tiny VLM from the same base:
``augmented`` (SFT on clean + exact-answer variants), ``dpo`` (TRL DPOTrainer, lure as rejected), ``grpo``
(TRL GRPOTrainer with rewards from medr2's scorer)."""

from __future__ import annotations

import pytest

from medr2 import BadInput, BoxConvention
from medr2.bench.format import load_bench
from medr2.train.finetune import FinetuneConfig, finetune, verifiable_reward
from tests.train_fixtures import planned, tiny_vlm_dir, write_quadrant_bench


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_vlm_dir(tmp_path_factory)


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return load_bench(write_quadrant_bench(tmp_path_factory.mktemp("stratbench") / "bench", n_cases=16))


def test_augmented_plan_adds_exact_variants_with_correct_targets(bench, tmp_path):
    flat, _ = planned(bench, tmp_path, strategy="flat")
    aug, _ = planned(bench, tmp_path, strategy="augmented")
    by_id = {it.item_id: it for it in bench.items}
    variants = [by_id[e.item_ids[0]] for e in aug if by_id[e.item_ids[0]].variant != "clean"]
    assert variants and len(aug) == len(flat) + len(variants)
    for ex in aug:
        it = by_id[ex.item_ids[0]]
        if it.variant != "clean":  # the misleading copy is trained to the correct answer, never the lure
            assert ex.messages[-1].parts[0].text.startswith(it.answer) and it.lure != it.answer
    _, dpo = planned(bench, tmp_path, strategy="augmented", dpo=True)
    assert dpo.counts["rejected_is_lure"] == len(variants)


def test_reward_is_the_scorers_verdict(bench):
    conv = BoxConvention()
    items = {it.item_id: it for it in bench.items}
    mcq = next(it for it in bench.items if it.form == "mcq" and it.variant == "clean")
    box = next(it for it in bench.items if it.form == "box")
    wrong = "ABCD"[("ABCD".index(mcq.answer) + 1) % 4]
    x1, y1, x2, y2 = box.answer_box
    reward = verifiable_reward(items, conv, eos_ids={7})
    got = reward(prompts=[None] * 5,
                 completions=[[{"role": "assistant", "content": t}] for t in
                              (mcq.answer, wrong, "no idea", mcq.answer, f"[{x1}, {y1}, {x2}, {y2}]")],
                 completion_ids=[[1, 7], [1, 7], [1, 7], [1, 2], [1, 7]],
                 item_ids=[[mcq.item_id]] * 4 + [[box.item_id]])
    assert got == [1.0, 0.0, -0.5, -0.5, 1.0]  # right, wrong, unparsed, truncated (no end token), IoU 1


@pytest.mark.parametrize("strategy", ["augmented", "dpo", "grpo"])
def test_strategy_trains_from_the_same_base(tiny, bench, tmp_path, strategy):
    from medr2.models.hf import HFAdapter, HFOptions

    cfg = FinetuneConfig(strategy=strategy, full_steps=2, batch_size=4, extra={"max_steps": 2}, logging_steps=1,
                         device="cpu")
    rep = finetune(tiny, bench.root, tmp_path / strategy, cfg)
    objective = {"augmented": "sft"}.get(strategy, strategy)
    assert [(s["stage"], s["objective"], s["steps"]) for s in rep["stages"]] == [("full", "sft", 2),
                                                                                 ("lora", objective, 2)]
    assert all(isinstance(s["train_loss"], float) for s in rep["stages"])
    assert rep["n_examples"] > 0
    merged = HFAdapter(tmp_path / strategy / "merged", HFOptions(device="cpu"))
    assert merged.settings()["model_type"] == "llava"


def test_unknown_strategy_is_refused(tiny, bench, tmp_path):
    with pytest.raises(BadInput, match="unknown strategy"):
        finetune(tiny, bench.root, tmp_path / "x", FinetuneConfig(strategy="nope", device="cpu"))


def test_vision_lr_scale_trains_the_image_path_at_its_own_rate(tiny, bench, tmp_path):
    """``vision_lr_scale``: the full-tuning stages' optimizer has the vision tower and projector at ``full_lr *
    scale`` and every other weight at ``full_lr``; a model without an image path is refused, naming the field."""
    import torch
    from transformers import AutoModelForImageTextToText

    from medr2.train.finetune import scaled_optimizer, vision_parameter_names

    model = AutoModelForImageTextToText.from_pretrained(tiny, local_files_only=True)
    vision = vision_parameter_names(model)
    assert vision and all(".vision_tower." in n or ".multi_modal_projector." in n for n in vision)
    assert not any("language_model" in n or "lm_head" in n for n in vision)
    opt = scaled_optimizer(model, 1e-3, 10.0)
    assert [(len(g["params"]), g["lr"]) for g in opt.param_groups] == [
        (len(vision), pytest.approx(1e-2)), (sum(1 for _ in model.parameters()) - len(vision), pytest.approx(1e-3))]
    with pytest.raises(BadInput, match="vision_lr_scale"):
        scaled_optimizer(torch.nn.Linear(2, 2), 1e-3, 10.0)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    cfg = FinetuneConfig(full_steps=1, full_lr=1e-3, vision_lr_scale=10.0, batch_size=4, extra={"max_steps": 1},
                         device="cpu")
    rep = finetune(tiny, bench.root, tmp_path / "scaled", cfg)
    assert rep["config"]["vision_lr_scale"] == 10.0 and rep["stages"][0]["steps"] == 1
    tuned = AutoModelForImageTextToText.from_pretrained(tmp_path / "scaled" / "merged", local_files_only=True)
    moved = {n: float((p - before[n]).abs().max()) for n, p in tuned.named_parameters() if n in before}
    # one Adam step moves a weight by about its rate: the image path's weights by up to ~10x the others'
    assert max(moved[n] for n in vision if n in moved) > 5e-3 > max(v for n, v in moved.items() if n not in vision)


def test_freeze_leaves_the_named_modules_untouched_in_every_stage(tiny, bench, tmp_path):
    """``freeze``: the named modules' weights come out of full tuning and LoRA byte for byte as they went in (LoRA
    targets only the other layers, by full name, since the vision tower's attention shares the short names); the
    rest is trained; a name that matches no parameter is refused, naming the field."""
    import torch
    from transformers import AutoModelForImageTextToText

    from medr2.train.finetune import freeze_modules, lora_targets, under

    model = AutoModelForImageTextToText.from_pretrained(tiny, local_files_only=True)
    targets = lora_targets(model, ("vision_tower",))
    assert targets and not any(under(t, ["vision_tower"]) for t in targets)
    assert any(under(t, ["multi_modal_projector"]) for t in targets)
    assert any(t.endswith("self_attn.q_proj") for t in targets)
    with pytest.raises(BadInput, match="freeze"):
        freeze_modules(model, ["no_such_module"])
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    cfg = FinetuneConfig(full_steps=1, full_lr=1e-2, freeze=("vision_tower",), batch_size=4, extra={"max_steps": 1},
                         lr=1e-2, device="cpu")
    rep = finetune(tiny, bench.root, tmp_path / "frozen", cfg)
    assert tuple(rep["config"]["freeze"]) == ("vision_tower",)
    assert not any(under(t, ["vision_tower"]) for t in rep["config"]["target_modules"])
    tuned = dict(AutoModelForImageTextToText.from_pretrained(tmp_path / "frozen" / "merged",
                                                             local_files_only=True).named_parameters())
    frozen = [n for n in before if under(n, ["vision_tower"])]
    assert frozen and all(torch.equal(tuned[n], before[n]) for n in frozen)
    assert any(not torch.equal(tuned[n], before[n]) for n in before if under(n, ["multi_modal_projector"]))
    assert any(not torch.equal(tuned[n], before[n]) for n in before if under(n, ["language_model"]))


def test_cli_freeze_of_an_unknown_module_is_exit_2_naming_the_field(tiny, bench, tmp_path):
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", "medr2.cli", "finetune", "--base", str(tiny), "--bench",
                          str(bench.root), "--out", str(tmp_path / "x"), "--freeze", "no_such_module", "--device",
                          "cpu"], capture_output=True, text=True, timeout=300)
    assert res.returncode == 2
    assert "field=freeze: no parameter under a module named 'no_such_module'" in res.stderr
    assert "Traceback" not in res.stderr
