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
