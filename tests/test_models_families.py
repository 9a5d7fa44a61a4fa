"""Tiny checkpoints of real VLM families: their real processors, templates and box conventions.

Per family: build offline, reload with the Auto classes, check the processor's image-token count and
``pixel_values`` shape against the family's DOCUMENTED rule (re-derived here, not by calling the
processor's helpers), render medr2's chain-own dialogue with a system prompt through the family's chat
template, answer one ``hf:`` batch with the preset's settings, and check the preset's box space against
what the processor really does. Families whose processor needs torchvision skip, with that reason,
where torchvision does not import (the default venv); ``.venv-vision`` (scripts/setup_vision.sh) runs them.
"""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from medr2 import GenSettings, Item, Request
from medr2.images import ImageStore
from medr2.models.families import FAMILIES, build_family, check_box_space, get_family, torchvision_available
from medr2.models.presets import PRESETS, get_preset
from medr2.records import item_content_id

SIZES = [(32, 32), (48, 16), (20, 60)]  # (width, height): square, wide 3:1, tall 1:3
NAMES = sorted(FAMILIES)
TV = torchvision_available()


def _need(name: str) -> None:
    fam = get_family(name)
    if fam.needs_torchvision and not TV:
        pytest.skip(f"{name}: {fam.torchvision_reason}; torchvision does not import in this environment (run "
                    "scripts/setup_vision.sh, then .venv-vision/bin/python -m pytest tests/test_models_families.py)")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    cache: dict[str, object] = {}

    def get(name: str):
        _need(name)
        if name not in cache:
            cache[name] = build_family(name, tmp_path_factory.mktemp(name.replace(".", "_")), seed=0)
        return cache[name]

    return get


# ---------------------------------------------------------------------------------------------
# the documented rules, re-derived


def _smart_resize(h: int, w: int, factor: int, min_px: int, max_px: int) -> tuple[int, int]:
    """qwen-vl-utils ``smart_resize`` as documented in the Qwen2-VL README."""
    hb, wb = max(factor, round(h / factor) * factor), max(factor, round(w / factor) * factor)
    if hb * wb > max_px:
        beta = math.sqrt(h * w / max_px)
        hb, wb = math.floor(h / beta / factor) * factor, math.floor(w / beta / factor) * factor
    elif hb * wb < min_px:
        beta = math.sqrt(min_px / (h * w))
        hb, wb = math.ceil(h * beta / factor) * factor, math.ceil(w * beta / factor) * factor
    return hb, wb


def _glm_resize(h: int, w: int, factor: int, min_px: int, max_px: int, frames: int = 2) -> tuple[int, int]:
    """GLM-4.1V's ``smart_resize`` (its repo): like Qwen's, with the frame count in the pixel budget."""
    if h < factor or w < factor:
        scale = max(factor / h, factor / w)
        h, w = int(h * scale), int(w * scale)
    hb, wb = round(h / factor) * factor, round(w / factor) * factor
    if frames * hb * wb > max_px:
        beta = math.sqrt(frames * h * w / max_px)
        hb = max(factor, math.floor(h / beta / factor) * factor)
        wb = max(factor, math.floor(w / beta / factor) * factor)
    elif frames * hb * wb < min_px:
        beta = math.sqrt(min_px / (frames * h * w))
        hb, wb = math.ceil(h * beta / factor) * factor, math.ceil(w * beta / factor) * factor
    return hb, wb


def _anyres(w: int, h: int, base: int, side: int, pinpoints: list[list[int]], max_n: int = 9) -> tuple[int, int]:
    """LLaVA-NeXT / OneVision AnyRes (LLaVA-NeXT blog and code): the grid resolution keeping the most effective
    pixels (then the least waste); base-view tokens + unpadded grid features + one newline per row, scaled down
    past ``anyres_max_N``. Returns (image tokens, views = 1 base + grid crops)."""
    best = (-1, 0, 0, 0)
    for ph, pw in pinpoints:
        scale = min(pw / w, ph / h)
        eff = min(int(w * scale) * int(h * scale), w * h)
        waste = pw * ph - eff
        if eff > best[0] or (eff == best[0] and waste < best[1]):
            best = (eff, waste, ph, pw)
    rows, cols = best[2] // base, best[3] // base
    ch, cw = side * rows, side * cols
    if w / h > cw / ch:
        ch -= ((ch - int(round(h * (cw / w), 7))) // 2) * 2
    else:
        cw -= ((cw - int(round(w * (ch / h), 7))) // 2) * 2
    feats, newlines = ch * cw, ch
    ratio = math.sqrt(ch * cw / (max_n * side * side))
    if ratio > 1.1:
        feats, newlines = int(ch // ratio) * int(cw // ratio), int(ch // ratio)
    return side * side + feats + newlines, 1 + rows * cols


def _internvl_tiles(w: int, h: int, tile: int, lo: int, hi: int) -> int:
    """InternVL's ``dynamic_preprocess`` (its README): the grid closest in aspect ratio (ties: more tiles while
    they cover less than twice the image), plus a thumbnail when there is more than one tile."""
    ratios = sorted({(i, j) for n in range(lo, hi + 1) for i in range(1, n + 1) for j in range(1, n + 1)
                     if lo <= i * j <= hi}, key=lambda r: r[0] * r[1])
    aspect, best, best_diff = w / h, (1, 1), float("inf")
    for r in ratios:
        diff = abs(aspect - r[0] / r[1])
        if diff < best_diff:
            best, best_diff = r, diff
        elif diff == best_diff and w * h > 0.5 * tile * tile * r[0] * r[1]:
            best = r
    blocks = best[0] * best[1]
    return blocks + (1 if blocks > 1 else 0)


def _mllama_tiles(w: int, h: int, tile: int, max_tiles: int) -> int:
    """Llama 3.2 Vision tiling (model card / MllamaImageProcessor docs): among canvases of up to ``max_tiles``
    tiles, the smallest upscale >= 1 (else the largest downscale), ties to the smallest area."""
    canvases = [(r * tile, c * tile) for r in range(1, max_tiles + 1) for c in range(1, max_tiles + 1)
                if r * c <= max_tiles]
    scales = [min(ch / h, cw / w) for ch, cw in canvases]
    up = [s for s in scales if s >= 1]
    chosen = min(up) if up else max(scales)
    ch, cw = min((c for c, s in zip(canvases, scales, strict=True) if s == chosen), key=lambda c: c[0] * c[1])
    return (ch // tile) * (cw // tile)


def _idefics3_frames(w: int, h: int, longest: int, tile: int) -> tuple[int, int]:
    """Idefics3 docs: longest edge resized to ``longest`` (aspect kept, even sides), sides rounded up to
    multiples of ``tile``, split in rows x cols tiles plus one global image."""
    if w >= h:
        nw, nh = longest, int(longest / (w / h))
        nh += nh % 2
    else:
        nh, nw = longest, int(longest * (w / h))
        nw += nw % 2
    if nw >= nh:
        nw = math.ceil(nw / tile) * tile
        nh = math.ceil(int(nw / (w / h)) / tile) * tile
    else:
        nh = math.ceil(nh / tile) * tile
        nw = math.ceil(int(nh * (w / h)) / tile) * tile
    rows, cols = (nh // tile, nw // tile) if (nh > tile or nw > tile) else (0, 0)
    return rows, cols


def expected(name: str, w: int, h: int) -> tuple[int, tuple[int, ...], dict[str, int]]:
    """(image tokens in input_ids, pixel_values shape, other fields) for one ``w`` x ``h`` image."""
    if name == "llava-1.5":  # CLIP, resized to 32 (no crop), patch 16: (32/16)^2 tokens (CLS dropped)
        return (32 // 16) ** 2, (1, 3, 32, 32), {}
    if name == "gemma3":  # fixed mm_tokens_per_image soft tokens, image resized to the SigLIP size
        return 4, (1, 3, 32, 32), {}
    if name == "mllama":  # one <|image|> per image; tiles padded to max_image_tiles
        return 1, (1, 1, 4, 3, 16, 16), {"tiles": _mllama_tiles(w, h, 16, 4)}
    if name == "idefics3":  # image_seq_len = (32/8)^2 / 2^2 = 4 per frame
        rows, cols = _idefics3_frames(w, h, 64, 32)
        frames = rows * cols + 1
        return 4 * frames, (1, frames, 3, 32, 32), {}
    if name == "aya-vision":  # (img_size / (patch*downsample))^2 = (32/16)^2 = 4 per tile
        tiles = _internvl_tiles(w, h, 32, 1, 4)
        return 4 * tiles, (tiles, 3, 32, 32), {}
    if name == "llava-onevision":  # SigLIP 32 px, patch 8: 4x4 tokens per view
        from medr2.models.families import LLAVA_OV_PINPOINTS

        n, views = _anyres(w, h, 32, 4, LLAVA_OV_PINPOINTS)
        return n, (1, views, 3, 32, 32), {}
    if name == "smolvlm":  # the Idefics3 rule with SmolVLM's processor
        rows, cols = _idefics3_frames(w, h, 64, 32)
        frames = rows * cols + 1
        return 4 * frames, (1, frames, 3, 32, 32), {}
    if name == "internvl":  # (32/8)^2 * 0.5^2 = 4 tokens per tile, tiles by InternVL's dynamic_preprocess
        tiles = _internvl_tiles(w, h, 32, 1, 4)
        return 4 * tiles, (tiles, 3, 32, 32), {}
    if name == "glm-4v":  # GLM-4.1V smart_resize: images count as 2 frames against min/max pixels
        rh, rw = _glm_resize(h, w, 28, 112 * 112, 28 * 28 * 15000)
        patches = (rh // 14) * (rw // 14)
        return patches // 4, (patches, 3 * 2 * 14 * 14), {"grid": (1, rh // 14, rw // 14)}
    if name == "mistral3":  # Pixtral: longest edge <= 64, sides up to multiples of patch*merge = 16
        ratio = max(h / 64, w / 64)
        sh, sw = (int(h / ratio), int(w / ratio)) if ratio > 1 else (h, w)
        rows, cols = math.ceil(sh / 16), math.ceil(sw / 16)
        return rows * cols, (1, 3, rows * 16, cols * 16), {"breaks": rows - 1}
    if name in ("qwen2-vl", "qwen2.5-vl", "qwen3-vl"):  # patches of p, 2x2 merged; rows of 3*2*p*p values
        p, lo, hi = (16, 32 * 32 * 4, 32 * 32 * 16) if name == "qwen3-vl" else (14, 56 * 56, 28 * 28 * 16384)
        rh, rw = _smart_resize(h, w, 2 * p, lo, hi)
        patches = (rh // p) * (rw // p)
        return patches // 4, (patches, 3 * 2 * p * p), {"grid": (1, rh // p, rw // p)}
    raise AssertionError(f"no documented rule written for {name}")


# ---------------------------------------------------------------------------------------------
# per family


@pytest.mark.parametrize("name", NAMES)
def test_builds_reloads_and_is_tiny(built, name):
    from transformers import AutoModelForImageTextToText, AutoProcessor

    from medr2.models.tiny import count_parameters

    d = built(name)
    fam = get_family(name)
    proc = AutoProcessor.from_pretrained(d, local_files_only=True)
    model = AutoModelForImageTextToText.from_pretrained(d, local_files_only=True)
    assert model.config.model_type == fam.model_type
    n = sum(p.numel() for p in model.parameters())
    assert n == count_parameters(d) and 50_000 < n < 1_000_000, n
    tok = proc.tokenizer
    assert tok.convert_tokens_to_ids(fam.image_token) != tok.unk_token_id
    assert len(tok(fam.image_token, add_special_tokens=False)["input_ids"]) == 1  # a real special token
    assert model.get_input_embeddings().num_embeddings >= len(tok)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("name", NAMES)
def test_image_tokens_and_pixel_values_follow_the_documented_rule(built, name, size):
    from transformers import AutoProcessor

    d = built(name)
    fam = get_family(name)
    proc = AutoProcessor.from_pretrained(d, local_files_only=True)
    w, h = size
    img = Image.fromarray(np.random.default_rng(w * h).integers(0, 255, (h, w, 3), dtype=np.uint8))
    conv = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Is the liver visible?"}]}]
    text = proc.apply_chat_template(conv, add_generation_prompt=True, tokenize=False)
    enc = proc(text=[text], images=[img], return_tensors="pt")
    n_tokens, shape, other = expected(name, w, h)
    image_id = proc.tokenizer.convert_tokens_to_ids(fam.image_token)
    assert int((enc["input_ids"] == image_id).sum()) == n_tokens
    assert tuple(enc["pixel_values"].shape) == shape
    if "tiles" in other:
        assert int(enc["aspect_ratio_mask"].sum()) == other["tiles"]
    if "breaks" in other:  # Pixtral: [IMG_BREAK] between rows, one [IMG_END]
        ids = enc["input_ids"][0].tolist()
        assert ids.count(proc.tokenizer.convert_tokens_to_ids("[IMG_BREAK]")) == other["breaks"]
        assert ids.count(proc.tokenizer.convert_tokens_to_ids("[IMG_END]")) == 1
    if "grid" in other:
        assert tuple(int(v) for v in enc["image_grid_thw"][0]) == other["grid"]


def _bench(tmp_path):
    """Two chain steps on one image per size (the second asks a box), in a real image store."""
    store = ImageStore(tmp_path)
    out = []
    for k, (w, h) in enumerate(SIZES):
        ref = store.put_array(np.random.default_rng(k).integers(0, 255, (h, w, 3), dtype=np.uint8))
        base = {"chance": 0.25, "template_id": "t0", "source": "test", "license": "CC0", "image_width": w,
                "image_height": h, "case_id": f"c{k}", "image": ref.path, "image_sha256": ref.sha256,
                "split": "test", "chain_id": f"chain{k}"}
        s1 = dict(base, step=1, stage=1, task="s1.modality", form="mcq", question="What is the imaging modality?",
                  options=["CT", "MRI", "X-ray", "Ultrasound"], answer="B")
        s2 = dict(base, step=2, stage=3, task="s3.abnormal", form="yesno", chance=0.5,
                  question="Is there an abnormality?", options=[], answer="yes")
        items = []
        for d in (s1, s2):
            d["item_id"] = item_content_id(d)
            items.append(Item(**d))
        out.append(items)
    return out


def _chain_own(name, chain, conv):
    from medr2.run.prompts import Turn, get_mode, render_messages

    preset = dataclasses.replace(get_preset(get_family(name).preset), system="You are a careful radiologist.")
    return render_messages(chain[1], mode=get_mode("chain-own"), history=[Turn(chain[0], "B")], conv=conv,
                           preset=preset)


GENERATION = {"llava-1.5": "ASSISTANT:", "gemma3": "<start_of_turn>model\n",
              "mllama": "<|start_header_id|>assistant<|end_header_id|>\n\n", "idefics3": "Assistant:",
              "aya-vision": "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|><|START_RESPONSE|>",
              "qwen2-vl": "<|im_start|>assistant\n", "qwen2.5-vl": "<|im_start|>assistant\n",
              "qwen3-vl": "<|im_start|>assistant\n", "internvl": "<|im_start|>assistant\n", "smolvlm": "Assistant:",
              "glm-4v": "<|assistant|>\n", "mistral3": "[/INST]",
              "llava-onevision": "<|im_start|>assistant\n"}
ASSISTANT_TURN = {"llava-1.5": "ASSISTANT: B", "gemma3": "<start_of_turn>model\nB<end_of_turn>",
                  "mllama": "<|start_header_id|>assistant<|end_header_id|>\n\nB<|eot_id|>",
                  "idefics3": "Assistant: B<end_of_utterance>",
                  "aya-vision": "<|CHATBOT_TOKEN|><|START_RESPONSE|>B<|END_RESPONSE|>",
                  "qwen2-vl": "<|im_start|>assistant\nB<|im_end|>", "qwen2.5-vl": "<|im_start|>assistant\nB<|im_end|>",
                  "qwen3-vl": "<|im_start|>assistant\nB<|im_end|>", "internvl": "<|im_start|>assistant\nB<|im_end|>",
                  "smolvlm": "Assistant: B<end_of_utterance>", "glm-4v": "<|assistant|>\nB<|user|>",
                  "mistral3": "[/INST]B</s>[INST]", "llava-onevision": "<|im_start|>assistant\nB<|im_end|>"}


@pytest.mark.parametrize("name", NAMES)
def test_chat_template_renders_chain_own_with_system_prompt(built, name, tmp_path):
    from transformers import AutoProcessor

    from medr2 import BoxConvention
    from medr2.models.hf import to_hf_conversation

    d = built(name)
    fam = get_family(name)
    proc = AutoProcessor.from_pretrained(d, local_files_only=True)
    chain = _bench(tmp_path)[1]
    msgs = _chain_own(name, chain, BoxConvention(get_preset(fam.preset).box.space))
    assert [m.role for m in msgs] == ["system", "user", "assistant", "user"]
    conv, images = to_hf_conversation(msgs, tmp_path)
    text = proc.apply_chat_template(conv, add_generation_prompt=True, tokenize=False)
    assert len(images) == 1 and text.count(fam.template_image) == 1
    pos_sys = text.index("You are a careful radiologist.")
    pos_img = text.index(fam.template_image)
    pos_q1 = text.index("What is the imaging modality?")
    pos_ans = text.index(ASSISTANT_TURN[name])
    pos_q2 = text.index("Is there an abnormality?")
    assert pos_sys < pos_img < pos_q1 < pos_ans < pos_q2, text  # system, image in the first user turn, roles in order
    assert text.endswith(GENERATION[name])
    enc = proc(text=[text], images=images, return_tensors="pt")  # the processor accepts what the template wrote
    assert int((enc["input_ids"] == proc.tokenizer.convert_tokens_to_ids(fam.image_token)).sum()) >= 1


@pytest.mark.parametrize("name", NAMES)
def test_hf_batch_with_the_preset_settings(built, name, tmp_path):
    from medr2 import ModelConfig
    from medr2.models.registry import load_adapter

    d = built(name)
    preset = get_preset(get_family(name).preset)
    settings = GenSettings(max_new_tokens=4)
    # as `medr2 eval --model hf:DIR --preset P` builds it: the preset gives the adapter its box space
    one = load_adapter(ModelConfig(f"hf:{d}", preset=preset.name, batch_size=1, extra={"device": "cpu"}))
    assert one.box_convention.space == preset.box.space
    reqs = [Request(key=f"r{k}", messages=_chain_own(name, chain, one.box_convention), settings=settings,
                    bench_root=tmp_path, item_id=chain[1].item_id) for k, chain in enumerate(_bench(tmp_path))]
    single = one.generate(reqs)
    batched = load_adapter(ModelConfig(f"hf:{d}", preset=preset.name, batch_size=3,
                                       extra={"device": "cpu"})).generate(reqs)
    assert all(r.status == "ok" for r in single + batched), [r.error for r in single + batched]
    assert all(r.completion_tokens and 0 < r.completion_tokens <= 4 for r in batched)
    assert [r.text for r in single] == [r.text for r in batched]  # left-padded batch == one by one (greedy)
    assert len({r.prompt_tokens for r in single}) >= 1 and all(r.prompt_tokens for r in single)


@pytest.mark.parametrize("name", NAMES)
def test_preset_box_space_matches_the_processor(built, name):
    assert check_box_space(get_family(name).preset, name, built(name)) == []


def test_a_preset_whose_box_space_differs_from_its_processor_fails(built, monkeypatch):
    from medr2 import BoxConvention
    from medr2.models.presets import Preset

    d = built("llava-1.5")
    # the family's documented space differs from the preset's: unit vs pixel
    problems = check_box_space("qwen2.5-vl", "llava-1.5", d)
    assert problems and "declares 'pixel'" in problems[0]
    # a pixel preset must also match the processor's real resize: 336 declared, 32 done -> fails; 32 -> passes
    monkeypatch.setitem(FAMILIES, "llava-1.5", dataclasses.replace(get_family("llava-1.5"), box_space="pixel"))
    for side, ok in ((336, False), (32, True)):
        p = Preset(f"llava-pixel-{side}", "test", (), BoxConvention("pixel", "fixed", (("height", side),
                                                                                       ("width", side))))
        monkeypatch.setitem(PRESETS, p.name, p)
        problems = check_box_space(p.name, "llava-1.5", d)
        assert (problems == []) is ok, problems
        if not ok:
            assert any("processor gives 32x32" in m for m in problems), problems


def test_pixel_boxes_on_a_tiling_processor_fail_the_check(built, monkeypatch):
    """Idefics3 splits an image into tiles plus a global view: there is no one input image whose pixels boxes
    could be in, so a pixel preset cannot be right for it."""
    d = built("idefics3")
    monkeypatch.setitem(FAMILIES, "idefics3", dataclasses.replace(get_family("idefics3"), box_space="pixel"))
    problems = check_box_space("medr2-tiny", "idefics3", d)
    assert any("resize rule cannot be read" in m for m in problems), problems
    assert any("tiles a 40x24 image" in m for m in problems), problems


@pytest.mark.parametrize(("name", "default"), [("qwen2-vl", True), ("qwen2.5-vl", True), ("qwen3-vl", False)])
def test_qwen_default_system_prompt(built, name, default):
    """Qwen2-VL / Qwen2.5-VL templates add "You are a helpful assistant." when there is no system message;
    Qwen3-VL's does not."""
    from transformers import AutoProcessor

    proc = AutoProcessor.from_pretrained(built(name), local_files_only=True)
    conv = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Is the liver visible?"}]}]
    text = proc.apply_chat_template(conv, add_generation_prompt=True, tokenize=False)
    head = "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n"
    assert text.startswith(head) is default, text
    assert text.endswith("Is the liver visible?<|im_end|>\n<|im_start|>assistant\n")


def test_a_qwen_preset_with_another_factor_fails(built, monkeypatch):
    """Qwen2.5-VL's pixel boxes live in its smart-resized input: a preset assuming Qwen3-VL's factor 32 (or other
    pixel limits) names other input sizes than the processor produces, and the check says so."""
    from medr2 import BoxConvention
    from medr2.models.presets import Preset

    d = built("qwen2.5-vl")
    wrong = Preset("qwen2.5-vl-factor32", "test", (), BoxConvention("pixel", "qwen2-vl", (
        ("factor", 32), ("max_pixels", 28 * 28 * 16384), ("min_pixels", 56 * 56))))
    monkeypatch.setitem(PRESETS, wrong.name, wrong)
    problems = check_box_space(wrong.name, "qwen2.5-vl", d)
    assert any("resize 'qwen2-vl'" in m for m in problems) and any("the processor gives" in m for m in problems)


def test_cli_builds_a_family_with_the_same_bytes(built, tmp_path):
    from typer.testing import CliRunner

    from medr2.cli import app

    res = CliRunner().invoke(app, ["tiny-vlm", "--family", "gemma3", "--out", str(tmp_path / "g")])
    assert res.exit_code == 0, res.output
    assert "gemma3" in res.output and "--preset medgemma" in res.output
    ref = built("gemma3")  # built by the library with the same seed 0
    files = sorted(f.name for f in ref.iterdir())
    assert files == sorted(f.name for f in (tmp_path / "g").iterdir()) and "model.safetensors" in files
    for name in files:
        assert (tmp_path / "g" / name).read_bytes() == (ref / name).read_bytes(), name
    main = [sys.executable, "-c", "from medr2.cli import main; main()", "tiny-vlm", "--out", str(tmp_path / "n")]
    proc = subprocess.run([*main, "--family", "nope"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "unknown family 'nope'" in proc.stderr and "Traceback" not in proc.stderr
    if not TV:  # a torchvision family where torchvision does not import: a clear message, exit 2
        proc = subprocess.run([*main, "--family", "qwen2-vl"], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2 and "needs torchvision" in proc.stderr and "setup_vision.sh" in proc.stderr


@pytest.mark.parametrize("name", ["llava-1.5", "llava-onevision", "gemma3"])
def test_vllm_loadable_nests_the_vision_tower_and_keeps_the_model(built, name, tmp_path):
    """The families whose vision tower vLLM keeps under ``vision_tower.vision_model.`` (vLLM refuses the bare
    transformers-5 names): every tower key is nested, no other key changes, and the copy loads in transformers with
    the same weights (the vLLM run itself is in tests/test_models_families_slow.py)."""
    import torch
    from safetensors.torch import load_file
    from transformers import AutoModelForImageTextToText

    from medr2.models.families import vllm_loadable

    src = built(name)
    out = vllm_loadable(src, tmp_path / "vllm")
    before = {k: v for f in sorted(src.glob("*.safetensors")) for k, v in load_file(str(f)).items()}
    after = {k: v for f in sorted(out.glob("*.safetensors")) for k, v in load_file(str(f)).items()}
    tower = [k for k in before if k.startswith("vision_tower.")]
    assert tower and all(not k.startswith("vision_tower.vision_model.") for k in tower)
    assert set(after) == {("vision_tower.vision_model." + k[len("vision_tower."):]) if k in tower else k
                          for k in before}
    a = AutoModelForImageTextToText.from_pretrained(src, local_files_only=True).state_dict()
    b = AutoModelForImageTextToText.from_pretrained(out, local_files_only=True).state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_gemma3_tokenizer_has_gemmas_newline_runs(built):
    """vLLM's Gemma 3 processor looks up runs of 1-4 newlines by their text, as in Gemma's vocabulary."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(built("gemma3"), local_files_only=True)
    vocab = tok.get_vocab()
    runs = [vocab["\n" * k] for k in range(1, 5)]
    assert len(set(runs)) == 4
    assert tok("a\n\nb", add_special_tokens=False)["input_ids"][1] == runs[1]


def _two_image_request(tmp_path, conv):
    """An item showing a prior and the current study (issue 49) as the runner renders it."""
    from medr2.records import ImageRef
    from medr2.run.prompts import get_mode, render_messages

    store = ImageStore(tmp_path)
    refs = []
    for k, (w, h) in enumerate(SIZES[:2]):
        ref = store.put_array(np.random.default_rng(50 + k).integers(0, 255, (h, w, 3), dtype=np.uint8))
        refs.append(ImageRef(path=ref.path, sha256=ref.sha256, width=w, height=h,
                             role="prior" if k == 0 else "current", interval_days=30 if k == 0 else None))
    cur = refs[1]
    d = {"chance": 0.5, "template_id": "t0", "source": "test", "license": "CC0", "image_width": cur.width,
         "image_height": cur.height, "case_id": "c0", "image": cur.path, "image_sha256": cur.sha256,
         "split": "test", "stage": 3, "task": "s3.abnormal", "form": "yesno", "options": [], "answer": "yes",
         "question": "Is there a new abnormality?", "images": [r.model_dump() for r in refs]}
    d["item_id"] = item_content_id(d)
    return render_messages(Item(**d), mode=get_mode("independent"), history=[], conv=conv)


@pytest.mark.parametrize("name", NAMES)
def test_two_images_through_template_processor_and_hf(built, name, tmp_path):
    """Every tiny family checkpoint takes an item of two images (issue 49): the chat template writes two image
    places in order before the roles line, the processor encodes both, and ``hf:`` answers it."""
    from transformers import AutoProcessor

    from medr2 import BoxConvention, ModelConfig
    from medr2.models.hf import to_hf_conversation
    from medr2.models.registry import load_adapter

    d = built(name)
    fam = get_family(name)
    proc = AutoProcessor.from_pretrained(d, local_files_only=True)
    msgs = _two_image_request(tmp_path, BoxConvention(get_preset(fam.preset).box.space))
    conv, images = to_hf_conversation(msgs, tmp_path)
    text = proc.apply_chat_template(conv, add_generation_prompt=True, tokenize=False)
    assert len(images) == 2 and text.count(fam.template_image) == 2, text
    assert text.index(fam.template_image) < text.index("Image 1: prior study, 30 days before the current one.")
    enc = proc(text=[text], images=images, return_tensors="pt")
    assert int((enc["input_ids"] == proc.tokenizer.convert_tokens_to_ids(fam.image_token)).sum()) >= 2
    space = get_preset(fam.preset).box.space
    adapter = load_adapter(ModelConfig(f"hf:{d}", batch_size=1, extra={"device": "cpu", "box_space": space}))
    resp = adapter.generate([Request(key="r", messages=msgs, settings=GenSettings(max_new_tokens=4),
                                     bench_root=tmp_path, item_id="i")])
    assert resp[0].status == "ok", resp[0].error
    assert get_preset(fam.preset).max_images in (None, 1)  # the preset states how many images the family takes
