"""The offline tiny VLM: loads with the Auto classes, one image token per image, deterministic."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from tests.train_fixtures import tiny_vlm_dir


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_vlm_dir(tmp_path_factory)


def test_loads_with_auto_classes_and_is_small(tiny):
    from transformers import AutoModelForImageTextToText, AutoProcessor

    from medr2.models.tiny import count_parameters

    proc = AutoProcessor.from_pretrained(tiny, local_files_only=True)
    model = AutoModelForImageTextToText.from_pretrained(tiny, local_files_only=True)
    n = sum(p.numel() for p in model.parameters())
    assert n == count_parameters(tiny)
    assert 500_000 < n < 1_500_000
    assert type(model).__name__ == "LlavaForConditionalGeneration"
    assert "{% generation %}" in proc.chat_template.replace("{%- generation -%}", "{% generation %}")
    meta = json.loads((tiny / "medr2_tiny.json").read_text())
    assert meta["image_size"] == meta["patch_size"]


@pytest.mark.parametrize("size", [(17, 40), (300, 90), (32, 32)])
def test_one_image_token_per_image(tiny, size):
    from transformers import AutoProcessor

    proc = AutoProcessor.from_pretrained(tiny, local_files_only=True)
    img = Image.fromarray(np.zeros((size[1], size[0], 3), np.uint8))
    conv = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Is the liver visible?"}]}]
    text = proc.apply_chat_template(conv, add_generation_prompt=True)
    enc = proc(text=[text], images=[img], return_tensors="pt")
    image_id = proc.tokenizer.convert_tokens_to_ids("<image>")
    assert int((enc["input_ids"] == image_id).sum()) == 1
    assert tuple(enc["pixel_values"].shape) == (1, 3, 32, 32)
    assert text.endswith("<|im_start|>assistant\n")


def test_patch_size_gives_many_image_tokens(tmp_path):
    """``patch_size`` below the image size: (image_size // patch_size) ** 2 image tokens per image (real VLMs have
    many; bench/bench_prefix_order.py uses it), answered by the model."""
    import torch
    from transformers import AutoModelForImageTextToText, AutoProcessor

    from medr2.models.tiny import build_tiny_vlm

    out = build_tiny_vlm(tmp_path / "tiny16", patch_size=8)
    assert json.loads((out / "medr2_tiny.json").read_text())["patch_size"] == 8
    proc = AutoProcessor.from_pretrained(out, local_files_only=True)
    model = AutoModelForImageTextToText.from_pretrained(out, local_files_only=True)
    conv = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Is the liver visible?"}]}]
    text = proc.apply_chat_template(conv, add_generation_prompt=True)
    enc = proc(text=[text], images=[Image.fromarray(np.zeros((48, 64, 3), np.uint8))], return_tensors="pt")
    assert int((enc["input_ids"] == model.config.image_token_index).sum()) == 16 == model.config.image_seq_length
    with torch.no_grad():
        gen = model.generate(**enc, max_new_tokens=3, do_sample=False)
    assert enc["input_ids"].shape[1] < gen.shape[1] <= enc["input_ids"].shape[1] + 3  # it answers


def test_tokenizer_covers_benchmark_words(tiny):
    from transformers import AutoProcessor

    tok = AutoProcessor.from_pretrained(tiny, local_files_only=True).tokenizer
    for word in ("yes", "no", " modality", " lesion", "A", "B"):
        assert len(tok(word, add_special_tokens=False)["input_ids"]) <= 3, word
    assert tok.decode(tok("[12, 34, 56, 78]", add_special_tokens=False)["input_ids"]) == "[12, 34, 56, 78]"


def test_cli_build_is_deterministic(tiny, tmp_path):
    from medr2.cli import app

    res = CliRunner().invoke(app, ["tiny-vlm", "--out", str(tmp_path / "again"), "--seed", "0"])
    assert res.exit_code == 0, res.output
    for f in sorted(tiny.iterdir()):
        assert (tmp_path / "again" / f.name).read_bytes() == f.read_bytes(), f.name
    res = CliRunner().invoke(app, ["tiny-vlm", "--out", str(tmp_path / "other"), "--seed", "1"])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "other" / "model.safetensors").read_bytes() != (tiny / "model.safetensors").read_bytes()
    assert (tmp_path / "other" / "tokenizer.json").read_bytes() == (tiny / "tokenizer.json").read_bytes()


def test_pooled_patch_init_reads_a_thumbnail(tiny, tmp_path):
    """``patch_init="pooled"``: the patch embedding starts as a 4x4 thumbnail (grey, red - blue), each feature
    with both signs; recorded in medr2_tiny.json; the default build's file has no such key."""
    import torch
    from transformers import AutoModelForImageTextToText

    from medr2.models.tiny import build_tiny_vlm, patch_embedding, pooled_patch_weights

    w = pooled_patch_weights(64, 32)
    assert tuple(w.shape) == (64, 3, 32, 32) and torch.equal(w[0::2], -w[1::2])
    img = torch.zeros(3, 32, 32)
    img[:, :8, :8] = 1.0  # a bright top-left cell, nothing else
    feats = (w * img).sum((1, 2, 3))
    assert feats[0] == pytest.approx(1.0) and feats[1] == pytest.approx(-1.0)  # grey of cell (0, 0)
    assert torch.count_nonzero(feats[2:32]) == 0 and torch.count_nonzero(feats[32:]) == 0  # no other cell, no colour
    red = torch.zeros(3, 32, 32)
    red[0] = 1.0
    assert (w[32:] * red).sum((1, 2, 3))[0::2].tolist() == pytest.approx([0.5] * 16)  # red - blue everywhere
    out = build_tiny_vlm(tmp_path / "pooled", patch_init="pooled")
    model = AutoModelForImageTextToText.from_pretrained(out, local_files_only=True)
    assert torch.equal(patch_embedding(model).weight, w)
    assert json.loads((out / "medr2_tiny.json").read_text())["patch_init"] == "pooled"
    assert "patch_init" not in json.loads((tiny / "medr2_tiny.json").read_text())
    with pytest.raises(ValueError, match="unknown patch_init"):
        build_tiny_vlm(tmp_path / "bad", patch_init="zeros")


def test_image_position_last_puts_the_image_after_the_text(tiny, tmp_path):
    """``image_position="last"``: a user turn's image comes after its text, right before the answer, in training
    and evaluation alike (it is the checkpoint's chat template); recorded in medr2_tiny.json; the default keeps
    the image where the message has it, and its files have no such key."""
    from transformers import AutoProcessor

    from medr2.models.tiny import build_tiny_vlm

    turn = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Which plane?"}]},
            {"role": "assistant", "content": "axial"}]
    out = build_tiny_vlm(tmp_path / "last", image_position="last")
    last = AutoProcessor.from_pretrained(out, local_files_only=True)
    first = AutoProcessor.from_pretrained(tiny, local_files_only=True)
    assert last.apply_chat_template(turn) == "<|im_start|>user\nWhich plane?<image><|im_end|>\n" \
                                             "<|im_start|>assistant\naxial<|im_end|>\n"
    assert first.apply_chat_template(turn).startswith("<|im_start|>user\n<image>Which plane?<|im_end|>")
    assert last.tokenizer.chat_template == last.chat_template  # the tokenizer renders the same conversation
    assert json.loads((out / "medr2_tiny.json").read_text())["image_position"] == "last"
    assert "image_position" not in json.loads((tiny / "medr2_tiny.json").read_text())
    with pytest.raises(ValueError, match="unknown image_position"):
        build_tiny_vlm(tmp_path / "bad", image_position="middle")
