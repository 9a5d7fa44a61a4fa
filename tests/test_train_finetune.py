"""Fine-tuning the tiny VLM with TRL + PEFT: assistant-only loss, saved adapter + merged model, learning."""

from __future__ import annotations

import json

import pytest

from medr2.bench.format import load_bench
from medr2.train.finetune import FinetuneConfig, build_dataset, build_trainer, finetune, load_base, sft_config
from tests.train_fixtures import planned, tiny_vlm_dir, write_quadrant_bench


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_vlm_dir(tmp_path_factory)


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return load_bench(write_quadrant_bench(tmp_path_factory.mktemp("ftbench") / "bench", n_cases=16))


def test_labels_mask_everything_but_assistant_turns(tiny, bench, tmp_path):
    cfg = FinetuneConfig(strategy="chain", batch_size=2)
    model, processor = load_base(tiny, cfg)
    examples, _ = planned(bench, tmp_path, strategy="chain")
    ds = build_dataset(examples[:3], bench.root)
    trainer = build_trainer(model, processor, ds, sft_config(cfg, tmp_path))
    batch = trainer.data_collator([ds[i] for i in range(3)])
    tok = processor.tokenizer
    for row in range(3):
        ids, labels = batch["input_ids"][row].tolist(), batch["labels"][row].tolist()
        kept = [t for t, lab in zip(ids, labels, strict=True) if lab != -100]
        assert all(lab in (-100, t) for t, lab in zip(ids, labels, strict=True))
        # exactly the assistant answers, each with its end-of-turn token, are trained on
        answers = [p["text"] for m in ds[row]["messages"] if m["role"] == "assistant" for p in m["content"]]
        expected = [t for a in answers for t in tok(a + "<|im_end|>", add_special_tokens=False)["input_ids"]]
        assert kept == expected
        assert tok.convert_tokens_to_ids("<image>") in ids and len(kept) < sum(batch["attention_mask"][row].tolist())
    assert max(len(ex.item_ids) for ex in examples[:3]) > 1  # multi-turn chains were checked


def test_finetune_writes_adapter_and_merged_model(tiny, bench, tmp_path):
    from medr2 import ModelConfig
    from medr2.models.hf import HFAdapter, HFOptions
    from medr2.models.registry import load_adapter

    out = tmp_path / "ft"
    cfg = FinetuneConfig(strategy="curriculum", pretrain_steps=2, full_steps=2, batch_size=4, extra={"max_steps": 2},
                         logging_steps=1)
    rep = finetune(tiny, bench.root, out, cfg)
    assert [s["stage"] for s in rep["stages"]] == ["pretrain", "full", "lora"]
    assert all(s["steps"] == 2 for s in rep["stages"]) and rep["stages"][0]["objective"] == "captions"
    assert "patch_embedding" in rep["config"]["target_modules"]  # LoRA adapts the vision patch layer
    assert "linear_1" in rep["config"]["target_modules"]  # and the projector
    assert (out / "adapter" / "adapter_config.json").is_file()
    assert json.loads((out / "finetune.json").read_text())["n_examples"] == rep["n_examples"]
    assert not (out / ".medr2-data").exists()  # the streamed datasets' Arrow files and sorted runs are removed
    adapter = load_adapter(ModelConfig(f"hf:{out / 'merged'}", batch_size=4))
    assert isinstance(adapter, HFAdapter) and adapter.settings()["model_type"] == "llava"
    base_weights = HFAdapter(tiny, HFOptions()).model.state_dict()
    merged = adapter.model.state_dict()
    assert set(base_weights) == set(merged)
    assert any(not (base_weights[k] == merged[k]).all() for k in merged)


@pytest.mark.slow
def test_accuracy_rises_after_finetuning(tiny, tmp_path):
    """Held-out quadrant questions: the random model is at or below chance, the fine-tuned one well above."""
    from medr2 import GenSettings, Request
    from medr2.models.hf import HFAdapter, HFOptions
    from medr2.train.render import item_turns

    root = write_quadrant_bench(tmp_path / "learn", n_cases=500, tasks=("mcq",), variants=False, test_share=0.2)
    b = load_bench(root)
    test = [it for it in b.items if it.split == "test"]

    def accuracy(model_dir) -> float:
        a = HFAdapter(model_dir, HFOptions(batch_size=32))
        conv = a.box_convention
        reqs = [Request(key=it.item_id, messages=tuple(item_turns(it, conv)), bench_root=root,
                        settings=GenSettings(max_new_tokens=6)) for it in test]
        res = a.generate(reqs)
        right = sum(r.status == "ok" and r.text.strip()[:1] == it.answer for r, it in zip(res, test, strict=True))
        return right / len(test)

    before = accuracy(tiny)
    rep = finetune(tiny, root, tmp_path / "ft", FinetuneConfig(full_steps=200, full_lr=2e-3, epochs=3, lr=2e-3,
                                                               batch_size=16, logging_steps=50))
    after = accuracy(tmp_path / "ft" / "merged")
    timing = [(s["stage"], s["seconds"]) for s in rep["stages"]]
    print(f"accuracy before {before:.2f}, after {after:.2f}; stages {timing}")
    assert before < 0.3 and after >= 0.45 and after > before + 0.2
