"""The learnability control (issue #18, item 1): images provably flow through fine-tuning and evaluation.

Fast tests check, batch by batch, that the training collator's pixels for each row are exactly the pixels
the ``hf:`` adapter gives the model for that item at evaluation (same decoding, same resize, same order,
one image token in the user turn). The slow test fine-tunes the tiny VLM through ``medr2 finetune`` on a
bench where only the image decides the answer (4 balanced options, identical text), evaluates it with
``medr2 eval --model hf:`` + ``medr2 score``, and requires >= 90 % held-out accuracy; the same training
with the train images shuffled between rows (what a misaligning collator would do) must stay near chance.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from medr2.bench.format import load_bench
from medr2.train.export import Example
from medr2.train.finetune import FinetuneConfig, build_dataset, build_trainer, load_base, sft_config
from tests.train_fixtures import planned, tiny_vlm_dir, write_control_bench


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_vlm_dir(tmp_path_factory)


def _eval_pixels(adapter, item, bench_root: Path):
    """The pixel values the ``hf:`` adapter feeds the model for ``item`` (its own rendering path)."""
    from medr2 import GenSettings, Request
    from medr2.train.render import item_turns

    req = Request(key=item.item_id, messages=tuple(item_turns(item, adapter.box_convention)), bench_root=bench_root,
                  settings=GenSettings(max_new_tokens=4))
    _, text, images = adapter._render(req)
    enc = adapter.processor(text=[text], images=images, return_tensors="pt")
    return enc["pixel_values"][0], text


def test_training_pixels_are_the_evaluation_pixels_row_by_row(tiny, tmp_path):
    from medr2.models.hf import HFAdapter, HFOptions

    bench = load_bench(write_control_bench(tmp_path / "b", n_cases=12, test_share=0.0))
    cfg = FinetuneConfig(device="cpu")
    model, processor = load_base(tiny, cfg)
    examples, _ = planned(bench, tmp_path, strategy="flat")
    ds = build_dataset(examples, bench.root)
    trainer = build_trainer(model, processor, ds, sft_config(cfg, tmp_path / "t"))
    batch = trainer.data_collator([ds[i] for i in range(len(ds))])
    adapter = HFAdapter(tiny, HFOptions(device="cpu"))
    by_id = {it.item_id: it for it in bench.items}
    image_token = processor.tokenizer.convert_tokens_to_ids("<image>")
    assert batch["pixel_values"].shape == (len(ds), 3, 32, 32)  # resized from 96x64 to the model's input
    distinct = set()
    for row, ex in enumerate(examples):
        want, text = _eval_pixels(adapter, by_id[ex.item_ids[0]], bench.root)
        assert np.array_equal(batch["pixel_values"][row].numpy(), want.numpy()), f"row {row}: other pixels"
        ids = batch["input_ids"][row].tolist()
        assert ids.count(image_token) == 1  # one image token, in the user turn, before the answer
        assert all(lab == -100 for lab in batch["labels"][row][: ids.index(image_token) + 1].tolist())
        distinct.add(want.numpy().tobytes())
    assert len(distinct) == len(examples)  # every row its own image: a mix-up could not pass


def test_sixteen_bit_images_train_as_they_are_evaluated(tiny, tmp_path):
    """A 16-bit PNG reached the processor undecoded (every pixel > 255 clipped to white); training now
    decodes images as evaluation does (windowed to 8 bit)."""
    from PIL import Image

    from medr2 import Message, Part
    from medr2.images import load_image, sha256_bytes

    arr = np.full((40, 60), 1000, np.uint16)
    arr[:, 30:] = 3000
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="PNG")
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "x.png").write_bytes(buf.getvalue())
    user = Message("user", (Part("image", image="images/x.png", image_sha256=sha256_bytes(buf.getvalue())),
                            Part("text", text="Which side is brighter?")))
    ex = Example((user, Message("assistant", (Part("text", text="right"),))), ("x",), 1)
    ds = build_dataset([ex], tmp_path)
    _, processor = load_base(tiny, FinetuneConfig(device="cpu"))
    train_pv = processor.image_processor(images=ds[0]["images"], return_tensors="pt")["pixel_values"][0]
    eval_pv = processor.image_processor(images=[Image.fromarray(load_image(tmp_path / "images" / "x.png",
                                                                           mode="RGB"))],
                                        return_tensors="pt")["pixel_values"][0]
    assert np.array_equal(train_pv.numpy(), eval_pv.numpy())
    assert train_pv[0, :, 0].mean() < train_pv[0, :, -1].mean()  # the two halves stay different


def _finetune_and_score(tiny: Path, bench: Path, work: Path, name: str) -> tuple[float, int]:
    """``medr2 finetune`` (the CLI) then ``medr2 eval --model hf:`` + ``medr2 score``; test-split accuracy.

    The recipe (300 full steps at 1e-3) reached 100 % on training seeds 0-3 alike; the earlier 200 steps at 2e-3
    gave 44 %, 73 % and 100 % on seeds 0, 1 and 2 once the item ids (and so the row order) changed with bench
    format 3: it held by the luck of one order, so it was replaced, not re-seeded (docs/finetuning.md)."""
    import pyarrow.parquet as pq
    from typer.testing import CliRunner

    from medr2.cli import app

    runner = CliRunner()
    out = work / f"ft-{name}"
    res = runner.invoke(app, ["finetune", "--base", str(tiny), "--bench", str(bench), "--out", str(out),
                              "--full-steps", "300", "--full-lr", "1e-3", "--epochs", "0.25", "--lr", "2e-3",
                              "--batch-size", "16", "--seed", "0", "--device", "cpu"])
    assert res.exit_code == 0, res.output
    run = work / f"run-{name}"
    res = runner.invoke(app, ["eval", "--bench", str(bench), "--model", f"hf:{out / 'merged'}", "--out", str(run),
                              "--split", "test", "--max-new-tokens", "8", "--batch-size", "32"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["score", str(run), "--resamples", "10"])
    assert res.exit_code == 0, res.output
    rows = pq.read_table(run / "scores.parquet").to_pylist()
    return sum(r["verdict"] == "correct" for r in rows) / len(rows), len(rows)


@pytest.mark.slow
def test_learnability_control_image_only_task(tiny, tmp_path):
    """Only the image decides (chance 25 %): the fine-tuned tiny VLM must reach >= 90 %; trained on the
    same rows with the images shuffled between them, it must not (the image, not the text, carries it)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the demo: the tiny model gains nothing from more; a busy machine loses a lot
    try:
        _control(tiny, tmp_path)
    finally:
        torch.set_num_threads(threads)


def _control(tiny: Path, tmp_path: Path) -> None:
    aligned = write_control_bench(tmp_path / "aligned", n_cases=1200, test_share=0.125)
    shuffled = write_control_bench(tmp_path / "shuffled", n_cases=1200, test_share=0.125, images="shuffled")
    acc, n = _finetune_and_score(tiny, aligned, tmp_path, "aligned")
    acc_shuffled, n_shuffled = _finetune_and_score(tiny, shuffled, tmp_path, "shuffled")
    print(f"learnability control: aligned {acc:.3f} (n={n}), shuffled images {acc_shuffled:.3f} (n={n_shuffled})")
    assert n >= 100 and n_shuffled == n
    assert acc >= 0.90
    assert acc_shuffled <= 0.45
